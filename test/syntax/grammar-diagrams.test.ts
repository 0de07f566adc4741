import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { chevrotainDiagramsDir, cstTypes, cstTypesFile, diagramAssets, diagramsDir, diagramsHtml } from '../../scripts/generate-grammar.js';

describe('grammar/diagrams', () => {
  it('is what `npm run grammar` writes for the current parser (run it if this fails)', () => {
    expect(readFileSync(join(diagramsDir, 'index.html'), 'utf8')).toBe(diagramsHtml());
  });

  it('carries its own copies of the diagram scripts, matching the installed chevrotain', () => {
    for (const asset of diagramAssets) {
      expect(readFileSync(join(diagramsDir, asset), 'utf8'), asset).toBe(
        readFileSync(join(chevrotainDiagramsDir(), asset), 'utf8'),
      );
    }
  });

  it('loads nothing from the network', () => {
    const html = diagramsHtml();
    expect(html).not.toMatch(/https?:\/\//);
    for (const asset of diagramAssets) expect(html).toContain(`'./${asset}'`);
  });
});

describe('src/syntax/cst.generated.d.ts', () => {
  it('is what `npm run grammar` writes for the current parser (run it if this fails)', () => {
    expect(readFileSync(cstTypesFile, 'utf8')).toBe(cstTypes());
  });
});

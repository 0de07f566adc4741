/**
 * `npm run grammar`: draws the parser's rules as railroad diagrams in
 * grammar/diagrams/index.html. The page loads Chevrotain's diagram scripts
 * from copies beside it, not from a CDN, so it works offline and from a
 * packed tarball. `test/syntax/grammar-diagrams.test.ts` fails when the
 * committed page or its assets no longer match what this would write.
 */
import { copyFileSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { createSyntaxDiagramsCode } from 'chevrotain';
import { queryParser } from '../src/syntax/parser.js';

/** Where the page goes. */
export const diagramsDir = fileURLToPath(new URL('../grammar/diagrams/', import.meta.url));

/** The files of chevrotain's `diagrams/` folder the page loads, relative to it and to `diagramsDir`. */
export const diagramAssets = [
  'diagrams.css',
  'vendor/railroad-diagrams.js',
  'src/diagrams_builder.js',
  'src/diagrams_behavior.js',
  'src/main.js',
] as const;

/** The installed chevrotain's `diagrams/` folder. */
export function chevrotainDiagramsDir(): string {
  // The package exports no `./package.json`: start from its entry point and go up to its root.
  let dir = dirname(fileURLToPath(import.meta.resolve('chevrotain')));
  while (!existsSync(join(dir, 'package.json'))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error('cannot find the chevrotain package');
    dir = parent;
  }
  return join(dir, 'diagrams');
}

/** The page's HTML, from the one parser instance's grammar. */
export function diagramsHtml(): string {
  const html = createSyntaxDiagramsCode(queryParser.getSerializedGastProductions(), {
    resourceBase: './',
    css: './diagrams.css',
  });
  return html.replace('<meta charset="utf-8">', '<meta charset="utf-8">\n<title>ckql grammar</title>');
}

/** Writes the page and copies its assets. */
export function writeDiagrams(): void {
  const source = chevrotainDiagramsDir();
  for (const asset of diagramAssets) {
    mkdirSync(dirname(join(diagramsDir, asset)), { recursive: true });
    copyFileSync(join(source, asset), join(diagramsDir, asset));
  }
  writeFileSync(join(diagramsDir, 'index.html'), diagramsHtml());
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  writeDiagrams();
  console.log(`wrote ${join(diagramsDir, 'index.html')}`);
}

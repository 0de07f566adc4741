/**
 * Every example in grammar/README.md is real: a ```ckql block (with
 * parameters as JSON on its info line) followed by a ```json block is
 * compiled and must give exactly that request; followed by an ```error block
 * it must fail and render exactly as shown.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { compile } from '../../src/compile/compile.js';
import { renderError } from '../../src/diagnostics.js';

const readme = readFileSync(new URL('../../grammar/README.md', import.meta.url), 'utf8');

interface Block {
  readonly lang: string;
  readonly info: string;
  readonly body: string;
}

function blocks(markdown: string): Block[] {
  const found: Block[] = [];
  const fence = /^```(\w*)[ \t]*(.*)\n([\s\S]*?)^```[ \t]*$/gm;
  for (const match of markdown.matchAll(fence)) {
    found.push({ lang: match[1]!, info: match[2]!.trim(), body: match[3]!.replace(/\n$/, '') });
  }
  return found;
}

interface Example {
  readonly query: string;
  readonly params: Record<string, string | number | boolean | null> | undefined;
  readonly expect: { readonly request: unknown } | { readonly error: string };
}

function examples(): Example[] {
  const all = blocks(readme);
  const out: Example[] = [];
  all.forEach((block, i) => {
    if (block.lang !== 'ckql') return;
    const next = all[i + 1];
    if (next?.lang !== 'json' && next?.lang !== 'error') {
      throw new Error(`the ckql block ${JSON.stringify(block.body)} is not followed by a json or error block`);
    }
    out.push({
      query: block.body,
      params: block.info === '' ? undefined : JSON.parse(block.info),
      expect: next.lang === 'json' ? { request: JSON.parse(next.body) } : { error: next.body },
    });
  });
  return out;
}

const all = examples();

describe('grammar/README.md examples', () => {
  it('has an example of every construct', () => {
    const text = all.map((e) => e.query.toLowerCase()).join('\n');
    for (const construct of [' in (', 'in ()', ' or ', ' and ', 'search', 'select', 'order by', 'desc', 'limit', 'offset', '$', '--', '`', '"', "'", 'true', 'null', ';']) {
      expect(text, construct).toContain(construct);
    }
    expect(all.length).toBeGreaterThan(25);
  });

  it.each(all.map((e) => [e.query, e] as const))('%s', (_title, example) => {
    if ('request' in example.expect) {
      expect(compile(example.query, example.params)).toStrictEqual(example.expect.request);
      // the keys in the order the language fixes, not just the same set
      expect(JSON.stringify(compile(example.query, example.params))).toBe(JSON.stringify(example.expect.request));
    } else {
      let rendered: string | undefined;
      try {
        compile(example.query, example.params);
      } catch (error) {
        rendered = renderError(error);
      }
      expect(rendered).toBe(example.expect.error);
    }
  });
});

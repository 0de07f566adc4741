/**
 * Every example in grammar/README.md is real: a ```ckql block (with
 * parameters as JSON on its info line) is followed by one or more result
 * blocks. A ```json block (info: a target, default ckan-2.11) is the request
 * `compile` gives for that target; a ```sql block the `sql` target's text; a
 * ```plan block (info: a target) is `{ request, residual }`, the plan whose
 * residual is shown as canonical text; an ```error block the rendered error.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { compile, plan } from '../../src/compile/compile.js';
import { parseTarget, type Target } from '../../src/compile/plan.js';
import { format } from '../../src/format.js';
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

type Expectation =
  | { readonly request: unknown; readonly target: Target }
  | { readonly sql: string }
  | { readonly plan: { request: unknown; residual?: string }; readonly target: Target }
  | { readonly error: string };

interface Example {
  readonly query: string;
  readonly params: Record<string, string | number | boolean | null> | undefined;
  readonly expect: Expectation;
}

const resultLangs = new Set(['json', 'sql', 'plan', 'error']);

function targetOf(info: string): Target {
  if (info === '') return 'ckan-2.11';
  const target = parseTarget(info);
  if (target === undefined) throw new Error(`unknown target ${JSON.stringify(info)}`);
  return target;
}

function examples(): Example[] {
  const all = blocks(readme);
  const out: Example[] = [];
  all.forEach((block, i) => {
    if (block.lang !== 'ckql') return;
    if (!resultLangs.has(all[i + 1]?.lang ?? '')) {
      throw new Error(`the ckql block ${JSON.stringify(block.body)} is not followed by a json, sql, plan or error block`);
    }
    const params = block.info === '' ? undefined : JSON.parse(block.info);
    for (let j = i + 1; j < all.length && resultLangs.has(all[j]!.lang); j++) {
      const next = all[j]!;
      const expect: Expectation =
        next.lang === 'json'
          ? { request: JSON.parse(next.body), target: targetOf(next.info) }
          : next.lang === 'sql'
            ? { sql: next.body }
            : next.lang === 'plan'
              ? { plan: JSON.parse(next.body), target: targetOf(next.info) }
              : { error: next.body };
      out.push({ query: block.body, params, expect });
    }
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

  it.each(all.map((e) => [`${e.query} (${Object.keys(e.expect)[0]}${'target' in e.expect ? ` ${e.expect.target}` : ''})`, e] as const))('%s', (_title, example) => {
    const params = example.params ?? {};
    if ('request' in example.expect) {
      const request = compile(example.query, { target: example.expect.target, params });
      expect(request).toStrictEqual(example.expect.request);
      // the keys in the order the language fixes, not just the same set
      expect(JSON.stringify(request)).toBe(JSON.stringify(example.expect.request));
    } else if ('sql' in example.expect) {
      expect(compile(example.query, { target: 'sql', params }).sql).toBe(example.expect.sql);
    } else if ('plan' in example.expect) {
      const planned = plan(example.query, { target: example.expect.target, params });
      expect(JSON.stringify(planned.request)).toBe(JSON.stringify(example.expect.plan.request));
      expect(planned.residual === undefined ? undefined : format(planned.residual)).toBe(example.expect.plan.residual);
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

/**
 * A query as long as a list pasted from a spreadsheet: a 339k-character
 * `in` list goes through parse, compile for every target, format and
 * completion; each stage grows linearly (checked by the ratio of two sizes,
 * not by a clock limit).
 */
import { describe, expect, it } from 'vitest';
import { compile, plan } from '../../src/compile/compile.js';
import { format } from '../../src/format.js';
import { parse } from '../../src/syntax/parse.js';
import { suggest } from '../../src/syntax/suggest.js';

const listQuery = (count: number) => `from t where a in (${Array.from({ length: count }, (_, i) => `"value ${i}"`).join(', ')})`;

describe('a 339k-character in list', () => {
  const source = listQuery(26_000);

  it('parses, compiles for every target, formats and completes', () => {
    expect(source.length).toBeGreaterThan(339_000);
    const query = parse(source);
    const condition = query.where!.condition;
    expect(condition.kind === 'in' && condition.values.length).toBe(26_000);
    expect(((compile(query).filters as Record<string, unknown>)['a'] as unknown[]).length).toBe(26_000);
    expect(compile(query, { target: 'ckan-2.12' })).toEqual(compile(query));
    expect(compile(query, { target: 'sql' }).sql.length).toBeGreaterThan(339_000);
    expect(parse(format(query))).toBeDefined();
    expect(suggest(`${source} and `).suggestions).toEqual([
      { kind: 'keyword', text: 'not' },
      { kind: 'field', resource: 't' },
      { kind: 'punctuation', text: '(' },
      { kind: 'function' },
    ]);
    expect(suggest(`${source.slice(0, -1)}, `).suggestions).toEqual([{ kind: 'value', field: 'a', resource: 't' }]);
  });

  it('grows linearly in every stage: eight times the values cost far less than sixty-four times as much', () => {
    // CPU time (µs), not wall time: on a busy machine another process's turn on the core lands in a long run more
    // often than in a short one, and made a linear stage measure as if it grew faster.
    const fastest = (fn: () => unknown) => {
      const runs = Array.from({ length: 5 }, () => {
        const start = process.cpuUsage();
        fn();
        const spent = process.cpuUsage(start);
        return spent.user + spent.system;
      });
      return Math.max(Math.min(...runs), 1);
    };
    // Both large enough that a stage's fixed cost (suggest's is a fifth of a millisecond) does not hide quadratic work.
    const small = listQuery(1_000);
    const large = listQuery(8_000);
    const stages: [string, (text: string) => unknown][] = [
      ['parse', (text) => parse(text)],
      ['compile', (text) => compile(text)],
      ['sql', (text) => compile(text, { target: 'sql' })],
      ['format', (text) => format(parse(text))],
      ['suggest', (text) => suggest(`${text} and `)],
    ];
    for (const [name, run] of stages) {
      run(small); // warm up
      // linear is about 8 (less where a fixed cost counts in the small run; up to 20 when a major GC lands in the
      // large runs); quadratic would be about 64. The best of three tries: a GC can only make a ratio larger, and
      // quadratic work can never measure under 30.
      const ratios: number[] = [];
      for (let attempt = 0; attempt < 3 && !ratios.some((r) => r < 30); attempt++) ratios.push(fastest(() => run(large)) / fastest(() => run(small)));
      expect(Math.min(...ratios), `${name}: ${ratios.map((r) => r.toFixed(1)).join(', ')}`).toBeLessThan(30);
    }
  });
});

describe('a 200k-character search word', () => {
  // hasPrefixWord was a regular expression that backtracked over every prefix of a word:
  // 96k characters took 12.8 s, so 200k would run past this test's time limit
  const word = 'a'.repeat(200_000);

  it.each([word, `${word}*`, `${word}* x`, `${'a*'.repeat(100_000)}b`])('compiles for every target and plans, whatever its end (%#)', (text) => {
    const query = parse(`from t search "${text}"`);
    for (const target of ['ckan-2.11', 'ckan-2.12', 'sql'] as const) expect(compile(query, { target })).toBeDefined();
    expect(plan(query, { target: 'ckan-2.11' }).request).toBeDefined();
    expect(parse(`from t search title "${text}"`)).toBeDefined();
  });
});


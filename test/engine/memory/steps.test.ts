/**
 * The memory engine's loops run in slices (engine/pace.ts): answers over
 * more rows than one slice (4096) or one sorted run hold across the slices'
 * boundaries. Judged by the reference walker (`evaluateQuery`, which has no
 * slices) and by the native sort.
 */
import { describe, expect, test } from 'vitest';
import { memoryEngine } from '../../../src/engine/memory/engine.js';
import { evaluateQuery } from '../../../src/engine/memory/evaluate-query.js';
import { Catalog } from '../../../src/engine/memory/catalog.js';
import { tableFromRows } from '../../../src/engine/memory/load.js';
import { sortSteps } from '../../../src/engine/memory/sort-steps.js';
import { runSteps } from '../../../src/engine/pace.js';
import { parse } from '../../../src/syntax/parse.js';

describe('sortSteps', () => {
  test.each([0, 1, 4096, 4097, 10_000, 20_001])('%i items in the native sort’s order, ties by position', (n) => {
    let seed = n + 1;
    const values = Array.from({ length: n }, () => (seed = (seed * 48271) % 2147483647) % 97);
    const compare = (a: number, b: number): number => values[a]! - values[b]! || a - b;
    const native = Array.from({ length: n }, (_, j) => j).sort(compare);
    expect(Array.from(runSteps(sortSteps(n, compare)))).toEqual(native);
  });
});

describe('answers past one slice', () => {
  // 300 rows, `k` with 9 values of uneven counts (13 to 55 rows each; a self-join of 10,280 pairs, two and a half
  // slices), some nulls; `x` distinct, half of it under 300. The reference walker joins by nested loops, so its cost
  // grows with the square of the rows: 600 rows (41,391 pairs) cost it 0.8 s of CPU per join and showed nothing more.
  const rows = Array.from({ length: 300 }, (_, i) => ({ k: i % 13 === 0 ? null : (i * i) % 40, g: `g${i % 7}`, x: (i * 7919) % 600 }));
  const table = tableFromRows(rows, { alias: 'pairs' });
  const engine = memoryEngine([table]);
  const catalog = new Catalog([table]);

  test.each([
    'from pairs a join pairs b on a.k = b.k select a.x, b.x limit 32000 offset 4000',
    'from pairs a left join pairs b on a.k = b.k where b.x < 300 select a.x, b.x limit 32000 offset 1000',
    'from pairs a join pairs b on a.k = b.k group by a.g, b.g select a.g, b.g, count(*) as n, sum(b.x)',
    'from pairs a join pairs b on a.k = b.k select a.x, b.x order by b.x desc, a.x limit 1000 offset 5000',
    'from pairs a join pairs b on a.k = b.k select distinct a.g, b.k limit 32000',
    'from pairs a join pairs b on a.k = b.k facet b.g select a.x limit 3',
    'from pairs group by k select k, count(*) as n order by n desc, k',
    'from pairs order by x desc limit 32000 offset 10',
    'from pairs order by g, x limit 10',
    'from pairs select distinct g, k limit 32000',
  ])('%s', async (text) => {
    const stream = await engine.query(parse(text), { total: true });
    const records = [];
    for await (const batch of stream.batches) records.push(...batch);
    const reference = evaluateQuery(text, catalog);
    expect({ records, total: stream.total, facets: stream.facets }).toEqual({ records: reference.records, total: reference.total, facets: reference.facets });
  });
});

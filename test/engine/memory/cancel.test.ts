/**
 * Cancelling the memory engine's long loops (docs/executor.md, Streaming,
 * stopping, cancelling): a signal aborted by a timer while a query's work
 * runs stops it with `ABORTED` before it gives its stream. A loop that never
 * lets the event loop turn gives the whole answer first (the timer cannot
 * fire until it has finished), so each query here fails when its operator
 * does not pause.
 */
import { describe, expect, test } from 'vitest';
import { memoryEngine } from '../../../src/engine/memory/engine.js';
import { tableFromRows } from '../../../src/engine/memory/load.js';
import { DatastoreError } from '../../../src/errors.js';
import { parse } from '../../../src/syntax/parse.js';

// A many-to-many self-join on `k` (3 values): 3000² / 3 = 3 million joined rows, a second or more of work.
const pairs = tableFromRows(
  Array.from({ length: 3000 }, (_, i) => ({ k: i % 3, g: `g${i % 40}`, x: (i * 7919) % 3000, t: `row ${i} of the pairs` })),
  { alias: 'pairs' },
);
// One table of 200,000 rows: its sort, distinct, grouping and text cache take a while on their own.
const big = tableFromRows(
  Array.from({ length: 200_000 }, (_, i) => ({ n: (i * 7919) % 200_000, s: `s${i % 50_000}`, t: `text number ${i}` })),
  { alias: 'big' },
);
const engine = memoryEngine([pairs, big]);

/** The query's outcome when a timer aborts its signal at the first turn of the event loop. */
async function abortedSoon(text: string): Promise<unknown> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new DatastoreError('ABORTED', 'cancelled by the test')), 0);
  try {
    const stream = await engine.query(parse(text), { signal: controller.signal, all: true });
    // The answer was made before the timer could fire: what the first batch says.
    const first = await stream.batches.next();
    await stream.batches.return();
    return { answered: first.done === true ? 0 : first.value.length, aborted: controller.signal.aborted };
  } catch (error) {
    return error instanceof DatastoreError ? { code: error.code, message: error.message } : error;
  } finally {
    clearTimeout(timer);
  }
}

describe('an aborted signal stops the work where it runs', () => {
  test.each([
    ['the join', 'from pairs a join pairs b on a.k = b.k select a.x, b.x limit 5'],
    ['a left join', 'from pairs a left join pairs b on a.k = b.k select a.x, b.x limit 5'],
    ['a condition on the side a left join may miss', 'from pairs a left join pairs b on a.k = b.k where b.x < 2000 select a.x limit 5'],
    ['the fold of a grouping over a join', 'from pairs a join pairs b on a.k = b.k group by a.g, b.g select a.g, b.g, count(*) as n'],
    ['the sort of a join', 'from pairs a join pairs b on a.k = b.k select a.x, b.x order by b.x, a.x limit 5'],
    ['distinct over a join', 'from pairs a join pairs b on a.k = b.k select distinct a.x, b.g limit 5'],
    ['facets over a join', 'from pairs a join pairs b on a.k = b.k facet b.g select a.x limit 5'],
    ['the fold of a grouping', 'from big group by s select s, count(*) as n, sum(n)'],
    ['the sort of a table', 'from big order by s desc, t'],
    ['distinct over a table', 'from big select distinct s, n limit 5'],
  ])('%s', async (_, text) => {
    expect(await abortedSoon(text)).toEqual({ code: 'ABORTED', message: 'cancelled by the test' });
  });

  test('building the text cache of `q`', async () => {
    // The first search reads the rows as they are; the second builds the cache.
    await engine.query(parse('from big search "number 7"'));
    expect(await abortedSoon('from big search "number 8"')).toEqual({ code: 'ABORTED', message: 'cancelled by the test' });
    // Stopped half-way, the cache is built again, whole, by the next search.
    const stream = await engine.query(parse('from big search "number 199999" select n'), { all: true });
    const rows = [];
    for await (const batch of stream.batches) rows.push(...batch);
    expect(rows).toEqual([{ n: (199_999 * 7919) % 200_000 }]);
  });

  test('a signal aborted before the call stops it before any work', async () => {
    const controller = new AbortController();
    controller.abort(new DatastoreError('ABORTED', 'cancelled before'));
    await expect(engine.query(parse('from pairs a join pairs b on a.k = b.k select a.x'), { signal: controller.signal })).rejects.toMatchObject({ code: 'ABORTED' });
  });
});

/**
 * Cancelling the memory engine's long loops (docs/executor.md, Streaming,
 * stopping, cancelling): a signal aborted by a timer while a query's work
 * runs stops it with `ABORTED` before it gives its stream. A loop that never
 * lets the event loop turn gives the whole answer first (the timer cannot
 * fire until it has finished), so each query here fails when its operator
 * does not pause.
 */
import { describe, expect, test } from 'vitest';
import type { Row } from '../../../src/datastore/types.js';
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
    // Stopped half-way, the chunks built so far are kept, and the next search still answers right.
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

/**
 * A table whose rows count the reads of `n` and abort the signal at the
 * `abortAt`-th: what is read after it is the work done past the abort,
 * which one slice of the loop (a few ten thousand rows) bounds.
 */
function countedTable(rowCount: number) {
  const probe = { reads: 0, after: 0, abortAt: Infinity, controller: new AbortController() };
  // the getter on a class, so every row has one shape (a getter per object literal would give each its own)
  class Counted {
    constructor(readonly _id: number, readonly s: string) {}
    get n(): number {
      probe.reads++;
      if (probe.controller.signal.aborted) probe.after++;
      else if (probe.reads === probe.abortAt) probe.controller.abort(new DatastoreError('ABORTED', 'cancelled by the test'));
      return (this._id - 1) % 1000;
    }
  }
  const rows = Array.from({ length: rowCount }, (_, i) => new Counted(i + 1, `row ${i}`) as unknown as Row);
  const table = { id: 'counted', aliases: ['counted'], fields: [{ id: '_id', type: 'int' as const }, { id: 'n', type: 'int4' as const }, { id: 's', type: 'text' as const }], rows };
  /** Arms the probe: the next read past `reads` more aborts a fresh signal, which it gives. */
  const arm = (reads: number): AbortSignal => {
    probe.controller = new AbortController();
    probe.after = 0;
    probe.abortAt = probe.reads + reads;
    return probe.controller.signal;
  };
  return { table, probe, arm, engine: memoryEngine([table]) };
}

describe('a signal aborted mid-run stops the scan, the index build and engine.search within one slice', () => {
  const ROWS = 140_000;
  // one slice of the scan is 65,536 rows, of an index build 16,384: far fewer than the rows left
  const SLICE_BOUND = 65_536;

  test('engine.search: the generated filter scan', async () => {
    const { probe, arm, engine: counted } = countedTable(ROWS);
    const signal = arm(20_000);
    await expect(counted.search({ resource_id: 'counted', filters: { n: -1 } }, { signal })).rejects.toMatchObject({ code: 'ABORTED' });
    expect(probe.after).toBeLessThanOrEqual(SLICE_BOUND);
    expect(probe.reads).toBeLessThan(ROWS);
  });

  test('engine.search: building an equality index', async () => {
    const { probe, arm, engine: counted } = countedTable(ROWS);
    // the first filter on a field scans; the second builds the field's index, reading every row
    await counted.search({ resource_id: 'counted', filters: { n: 7 } });
    const signal = arm(20_000);
    await expect(counted.search({ resource_id: 'counted', filters: { n: 8 } }, { signal })).rejects.toMatchObject({ code: 'ABORTED' });
    expect(probe.after).toBeLessThanOrEqual(16_384);
    // stopped half-way, the index is built again by the next search, whole, and answers right
    const answer = await counted.search({ resource_id: 'counted', filters: { n: 9 }, limit: 1 });
    expect(answer.total).toBe(ROWS / 1000);
  });

  test('engine.query: a filtered scan (what Ctrl-C cancels in the CLI and the REPL)', async () => {
    const { probe, arm, engine: counted } = countedTable(ROWS);
    const signal = arm(20_000);
    await expect(counted.query(parse('from counted where n > 2000'), { signal, all: true })).rejects.toMatchObject({ code: 'ABORTED' });
    expect(probe.after).toBeLessThanOrEqual(SLICE_BOUND);
  });

  test('engine.search: a signal aborted before the call stops it before any read', async () => {
    const { probe, engine: counted } = countedTable(2000);
    await expect(counted.search({ resource_id: 'counted', filters: { n: 1 } }, { signal: AbortSignal.abort() })).rejects.toMatchObject({ code: 'ABORTED' });
    expect(probe.reads).toBe(0);
  });
});

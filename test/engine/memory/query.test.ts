/**
 * The memory engine's whole query (`Engine.query`): what `limit`, `all`,
 * `total`, batches and the signal do, counted (records built, values read),
 * and its errors beside `search`'s and `evaluateQuery`'s. Its answers are
 * checked against the reference walker in test/property/memory-query.test.ts
 * and in the case suite.
 */
import { describe, expect, test } from 'vitest';
import type { Row } from '../../../src/datastore/types.js';
import { memoryEngine } from '../../../src/engine/memory/engine.js';
import { evaluateQuery } from '../../../src/engine/memory/evaluate-query.js';
import { tableFromRows } from '../../../src/engine/memory/load.js';
import type { EngineQueryOptions, QueryStream } from '../../../src/engine/types.js';
import type { DatastoreError } from '../../../src/errors.js';
import { parse } from '../../../src/syntax/parse.js';
import { datastoreFailure } from '../../helpers/outcome.js';

const many = tableFromRows(
  Array.from({ length: 40_000 }, (_, i) => ({ n: i, status: i % 3 === 0 ? 'withdrawn' : 'active' })),
  { alias: 'many' },
);
const engine = memoryEngine([many]);

async function run(text: string, options?: EngineQueryOptions): Promise<{ stream: QueryStream; batches: Row[][] }> {
  const stream = await engine.query!(parse(text), options);
  const batches: Row[][] = [];
  for await (const batch of stream.batches) batches.push([...batch]);
  return { stream, batches };
}

describe('limit, all and total', () => {
  test('without a limit 100 records, as datastore_search; with `all` every one', async () => {
    expect((await run('from many')).batches.flat()).toHaveLength(100);
    expect((await run('from many', { all: true })).batches.flat()).toHaveLength(40_000);
    // a query's own limit wins over `all`
    expect((await run('from many limit 7', { all: true })).batches.flat()).toHaveLength(7);
  });

  test('limit has no cap (32 000 is a portal rule), offset skips', async () => {
    const { batches } = await run('from many where status != withdrawn limit 35000 offset 2');
    const records = batches.flat();
    expect(records).toHaveLength(26_664);
    expect(records[0]).toEqual({ _id: 5, n: 4, status: 'active' });
  });

  test('total only when asked, counting every match before offset and limit', async () => {
    expect((await run('from many where status = withdrawn limit 1')).stream.total).toBeUndefined();
    expect((await run('from many where status = withdrawn limit 1', { total: true })).stream.total).toBe(13_334);
    expect((await run('from many where status != withdrawn order by n desc limit 1', { total: true })).stream.total).toBe(26_666);
  });

  test('fields are the select list, else every field with _id first', async () => {
    expect((await run('from many select status, n limit 0')).stream.fields).toEqual([{ id: 'status', type: 'text' }, { id: 'n', type: 'int4' }]);
    expect((await run('from many limit 0')).stream.fields.map((f) => f.id)).toEqual(['_id', 'n', 'status']);
  });
});

/** Rows whose `x` counts its reads: how many records were built, or values tested. */
function countingTable(size: number): { table: ReturnType<typeof tableFromRows>; reads: () => number } {
  let reads = 0;
  const rows = Array.from({ length: size }, (_, i) => {
    const row: Record<string, unknown> = { _id: i + 1, k: i % 10 === 9 ? 'b' : 'a' };
    Object.defineProperty(row, 'x', { enumerable: true, get: () => (reads++, i) });
    return row as Row;
  });
  const table = { ...tableFromRows([{ k: 'a', x: 0 }], { alias: 'counting' }), rows };
  return { table, reads: () => reads };
}

describe('records are built as the batches are read', () => {
  test('each batch builds its own records, and no more', async () => {
    const { table, reads } = countingTable(100_000);
    const stream = await memoryEngine([table]).query!(parse('from counting select x'), { all: true, batchSize: 500 });
    expect(reads()).toBe(0);
    const iterator = stream.batches[Symbol.asyncIterator]();
    const first = await iterator.next();
    expect(first.value).toHaveLength(500);
    expect(reads()).toBe(500);
    await iterator.next();
    expect(reads()).toBe(1000);
    await iterator.return?.();
  });

  test('an unsorted page without total stops reading rows once it is full', async () => {
    const { table, reads } = countingTable(100_000);
    // `x != 5` is a residual a portal could not take; here it is tested on rows until 3 pass
    const stream = await memoryEngine([table]).query!(parse('from counting where x != 5 limit 3'));
    const records = [];
    for await (const batch of stream.batches) records.push(...batch);
    expect(records.map((r) => r['_id'])).toEqual([1, 2, 3]);
    // three rows tested, then three records built
    expect(reads()).toBe(6);
  });

  test('with total every row is tested, and still only the page is built', async () => {
    const { table, reads } = countingTable(10_000);
    const stream = await memoryEngine([table]).query!(parse('from counting where x != 5 limit 3'), { total: true });
    expect(stream.total).toBe(9_999);
    for await (const batch of stream.batches) expect(batch).toHaveLength(3);
    expect(reads()).toBe(10_003);
  });
});

describe('cancellation', () => {
  test('an aborted signal stops the stream at the next batch', async () => {
    const controller = new AbortController();
    const stream = await engine.query!(parse('from many'), { all: true, batchSize: 1000, signal: controller.signal });
    const seen: number[] = [];
    const failure = await datastoreFailure((async () => {
      for await (const batch of stream.batches) {
        seen.push(batch.length);
        controller.abort();
      }
    })());
    expect(failure.code).toBe('ABORTED');
    expect(seen).toEqual([1000]);
  });

  test('a signal aborted before the call fails it before any work', async () => {
    const controller = new AbortController();
    controller.abort();
    expect((await datastoreFailure(engine.query!(parse('from many'), { signal: controller.signal }))).code).toBe('ABORTED');
  });
});

describe('errors are those of search and evaluateQuery', () => {
  test('an unknown resource is the Not Found that search gives', async () => {
    const viaQuery = await datastoreFailure(engine.query!(parse('from nope')));
    const viaSearch = await datastoreFailure(engine.search({ resource_id: 'nope' }));
    expect({ status: viaQuery.status, body: viaQuery.body }).toEqual({ status: viaSearch.status, body: viaSearch.body });
    expect(viaQuery.code).toBe('NOT_FOUND');
  });

  test.each([
    'from many select nope',
    'from many where nope = 1',
    'from many where not (n = 1 or nope != 2)',
    'from many search nope "x"',
    'from many order by nope desc',
    'from many where n > "abc"',
    'from many where n like "1%"',
    'from many where status like "a\\\\"',
  ])('%s', async (text) => {
    const walked = (() => {
      try {
        evaluateQuery(text, many);
      } catch (error) {
        return error as DatastoreError;
      }
      throw new Error('evaluateQuery answered');
    })();
    const failure = await datastoreFailure(engine.query!(parse(text)));
    expect({ code: failure.code, status: failure.status, body: failure.body }).toEqual({ code: walked.code, status: walked.status, body: walked.body });
    expect(failure.code).toBe('VALIDATION_ERROR');
  });
});

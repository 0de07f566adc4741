/**
 * A PostgreSQL engine answers a whole query itself (docs/executor.md,
 * Sources): one SELECT read through a cursor. Judged against the reference
 * walker (`evaluateQuery`) on generated queries over a typed table, on
 * PGlite and on the PostgreSQL server; then its streaming: batches as the
 * reader asks, a reader that stops releases the transaction, and a signal
 * stops it between batches.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Field, Query } from '../../src/ast.js';
import type { Row } from '../../src/datastore/types.js';
import { DatastoreError } from '../../src/errors.js';
import { evaluateQuery } from '../../src/engine/memory/evaluate-query.js';
import { parse } from '../../src/syntax/parse.js';
import { engineNames, openTestEngines, typedTable } from '../engine/sql/engines.js';
import type { TestEngines } from '../engine/sql/engines.js';
import { propertyParameters, propertyRuns } from '../helpers/arbitraries.js';
import { asyncOutcomeOf, outcomeOf } from '../helpers/outcome.js';
import { typedQuery, typedTables } from '../helpers/typed.js';

const typed = typedTables[0]!;
const numbers = typedTable('numbers', [['n', 'int'], ['word', 'text']], Array.from({ length: 2_500 }, (_, i) => ({ n: i, word: i % 3 === 0 ? 'fizz' : 'plain' })));
let engines: TestEngines;

beforeAll(async () => {
  engines = await openTestEngines([typed, numbers]);
}, 60_000);

afterAll(async () => {
  await engines?.close();
});

/** Every record of a stream, batch by batch. */
async function read(stream: { batches: AsyncIterable<readonly Row[]> }): Promise<Row[]> {
  const rows: Row[] = [];
  for await (const batch of stream.batches) rows.push(...batch);
  return rows;
}

/** What both sides must agree on: the records and total, or the same kind of refusal. */
function answerOf(outcome: { ok: { records: readonly Row[]; total?: number | undefined } } | { error: unknown }): unknown {
  if ('ok' in outcome) {
    return { records: outcome.ok.records.map((r) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, v ?? null]))), total: outcome.ok.total };
  }
  return outcome.error instanceof DatastoreError ? { status: outcome.error.status } : { thrown: String(outcome.error) };
}

/** A query whose `distinct` orders only by selected fields (PostgreSQL refuses others, and so does the memory engine). */
const queries: fc.Arbitrary<Query> = fc.tuple(typedQuery, fc.boolean()).map(([query, distinct]) => {
  if (!distinct || query.select === undefined) return query;
  const selected = new Set(query.select.items.map((item) => (item.value as Field).name));
  const keys = query.order?.keys.filter((key) => selected.has((key.field as Field).name)) ?? [];
  const { order: _order, ...rest } = query;
  return {
    ...rest,
    select: { ...query.select, distinct: true },
    ...(keys.length === 0 ? {} : { order: { ...query.order!, keys } }),
  } as Query;
});

describe.each(engineNames)('the %s engine', (name) => {
  it('answers a whole query as the reference walker does: records, order, total, refusals', async () => {
    const engine = engines.get(name);
    let distinct = 0;
    let runs = 0;
    await fc.assert(
      fc.asyncProperty(queries, fc.integer({ min: 1, max: 4 }), async (query, batchSize) => {
        runs++;
        if (query.select?.distinct === true) distinct++;
        const reference = answerOf(outcomeOf(() => evaluateQuery(query, typed)));
        const answer = await asyncOutcomeOf(async () => {
          const stream = await engine.query(query, { total: true, batchSize });
          return { records: await read(stream), total: stream.total };
        });
        expect(answerOf(answer)).toEqual(reference);
      }),
      propertyParameters(Math.max(60, Math.floor(propertyRuns / 10))),
    );
    // A share of the runs made (the property's time budget may end it early on a loaded machine): about a third are distinct.
    expect(runs).toBeGreaterThanOrEqual(10);
    expect(distinct / runs).toBeGreaterThan(0.1);
  }, 120_000);

  it('gives every record with `all`, a batch at a time, and its total only when asked', async () => {
    const engine = engines.get(name);
    const stream = await engine.query(parse('from numbers where word != fizz order by n desc'), { all: true, batchSize: 500 });
    expect(stream.total).toBeUndefined();
    expect(stream.resource).toBe(numbers.id);
    const sizes: number[] = [];
    const rows: Row[] = [];
    for await (const batch of stream.batches) {
      sizes.push(batch.length);
      rows.push(...batch);
    }
    expect(rows.map((r) => r['n'])).toEqual(numbers.rows.filter((r) => r['word'] !== 'fizz').map((r) => r['n']).reverse());
    expect(sizes).toEqual([500, 500, 500, 166]);
    const limited = await engine.query(parse('from numbers where word = fizz'), { total: true });
    expect((await read(limited)).length).toBe(100); // datastore_search's default limit
    expect(limited.total).toBe(834);
  });

  it('ends its transaction when the reader stops early, even before the first batch', async () => {
    const engine = engines.get(name);
    for (let i = 0; i < 3; i++) {
      const stream = await engine.query(parse('from numbers'), { all: true, batchSize: 10 });
      for await (const batch of stream.batches) {
        expect(batch).toHaveLength(10);
        break;
      }
      const unread = await engine.query(parse('from numbers'), { all: true, batchSize: 10 });
      await unread.batches.return(undefined);
    }
    // PGlite has one connection and the server's pool three: a transaction left open would make these wait forever.
    const after = await Promise.all([1, 2, 3, 4].map(async () => (await read(await engine.query(parse('from numbers limit 2'), {}))).length));
    expect(after).toEqual([2, 2, 2, 2]);
  });

  it('stops between batches once its signal is aborted', async () => {
    const engine = engines.get(name);
    const controller = new AbortController();
    const stream = await engine.query(parse('from numbers'), { all: true, batchSize: 100, signal: controller.signal });
    let read = 0;
    const error = await (async () => {
      for await (const batch of stream.batches) {
        read += batch.length;
        controller.abort(new DatastoreError('ABORTED', 'interrupted'));
      }
    })().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DatastoreError);
    expect((error as DatastoreError).code).toBe('ABORTED');
    expect(read).toBeLessThanOrEqual(200);
    expect((await read2(engine)).length).toBe(1);
  });

  it('refuses unknown resources and fields as datastore_search does', async () => {
    const engine = engines.get(name);
    const unknown = await engine.query(parse('from nowhere')).catch((e: unknown) => e);
    expect((unknown as DatastoreError).code).toBe('NOT_FOUND');
    const field = await engine.query(parse('from numbers where nope = 1')).catch((e: unknown) => e);
    expect((field as DatastoreError).code).toBe('VALIDATION_ERROR');
    expect((field as DatastoreError).message).toContain('"nope"');
    const value = await engine.query(parse('from numbers where n > abc')).catch((e: unknown) => e);
    expect((value as DatastoreError).code).toBe('VALIDATION_ERROR');
  });
});

async function read2(engine: ReturnType<TestEngines['get']>): Promise<Row[]> {
  return read(await engine.query(parse('from numbers limit 1'), {}));
}

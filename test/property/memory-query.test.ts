/**
 * The memory engine's whole-query path (`Engine.query`, query.ts) against the
 * reference walker `evaluateQuery`: on generated tables and generated queries
 * of the whole grammar (every test, `not`, `or` across fields, per-field and
 * prefix search, `distinct`, `nulls first|last`), the same fields, records
 * and total, or the same error. Tables past 8 192 rows make the scan order
 * an `and` by sampling, past 1 024 build equality indexes, past 16 384 cross
 * search chunks.
 */
import fc from 'fast-check';
import { expect, test } from 'vitest';
import type { Query } from '../../src/ast.js';
import type { Row, Table } from '../../src/datastore/types.js';
import { evaluateQuery } from '../../src/engine/memory/evaluate-query.js';
import { memoryEngine } from '../../src/engine/memory/engine.js';
import { tableFromRows } from '../../src/engine/memory/load.js';
import type { EngineQueryOptions } from '../../src/engine/types.js';
import { cellPool, propertyParameters, propertyRuns, queryOverTable, tableRowsArb } from '../helpers/arbitraries.js';
import { asyncOutcomeOf, outcomeOf } from '../helpers/outcome.js';

const id = '0f0e0d0c-0b0a-4908-8706-050403020100';
const alias = 't';

/** What the engine streams, gathered: its fields, every record, and the total. */
async function gathered(table: Table, query: Query, options: EngineQueryOptions): Promise<{ fields: unknown; records: Row[]; total: unknown }> {
  const stream = await memoryEngine([table]).query!(query, options);
  const records: Row[] = [];
  for await (const batch of stream.batches) records.push(...batch);
  return { fields: stream.fields, records, total: stream.total };
}

/** The walker's answer in the same shape; it caps `limit` at a portal's 32 000, which the engine does not. */
function walked(table: Table, query: Query): ReturnType<typeof outcomeOf<{ fields: unknown; records: Row[]; total: unknown }>> {
  return outcomeOf(() => {
    const result = evaluateQuery(query, table);
    return { fields: result.fields, records: [...result.records], total: result.total };
  });
}

function capped(query: Query): boolean {
  return query.limit !== undefined && query.limit.value.kind === 'number' && query.limit.value.value > 32_000;
}

test('engine.query(q) equals evaluateQuery(q) on generated tables and whole queries', async () => {
  const arb = tableRowsArb.chain(({ names, rows }) =>
    fc.record({
      table: fc.constant(tableFromRows(rows, { id, alias })),
      query: queryOverTable(alias, names, { rows, whole: true }),
      batchSize: fc.integer({ min: 1, max: 5 }),
    }),
  );
  await fc.assert(
    fc.asyncProperty(arb, async ({ table, query, batchSize }) => {
      const reference = walked(table, query);
      const answered = await asyncOutcomeOf(() => gathered(table, query, { total: true, batchSize }));
      expect(answered).toEqual(reference);
    }),
    propertyParameters(),
  );
}, 120_000);

/**
 * Rows with a deterministic mix of pool cells: numbers, their texts, nulls,
 * missing keys, unicode, JSON.
 */
function bigRows(count: number): Row[] {
  let seed = 13;
  const next = () => (seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648);
  return Array.from({ length: count }, () => {
    const row: Record<string, (typeof cellPool)[number]> = {};
    for (const name of ['a', 'b', 'school year']) {
      const pick = next() % (cellPool.length + 2);
      if (pick < cellPool.length) row[name] = cellPool[pick]!;
    }
    return row;
  });
}

test('on a table past the index, sampling and search-chunk sizes too, and with every record asked for', async () => {
  const rows = bigRows(20_000);
  const table = tableFromRows(rows, { id, alias });
  const arb = fc.record({
    query: queryOverTable(alias, ['a', 'b', 'school year'], { unknownFields: false, rows: rows.slice(0, 200), whole: true }),
    all: fc.boolean(),
  });
  await fc.assert(
    fc.asyncProperty(arb, async ({ query, all }) => {
      fc.pre(!capped(query));
      // `all` without a limit: every record; the walker says so with a limit as large as the table
      const asked: Query = all && query.limit === undefined
        ? { ...query, limit: { kind: 'limit', span: query.span, value: { kind: 'number', span: query.span, value: rows.length } } }
        : query;
      const reference = walked(table, asked);
      const answered = await asyncOutcomeOf(() => gathered(table, query, { total: true, all }));
      expect(answered).toEqual(reference);
    }),
    propertyParameters(Math.max(30, Math.floor(propertyRuns / 30))),
  );
}, 120_000);

/**
 * Differential properties (docs/engines.md): generated tables and requests
 * through `memory` and `pglite` (and `postgres` when a server is there)
 * agree outside the README's differences table; every disagreement found
 * with requests that use a listed feature falls in a listed row; `pglite`
 * and `postgres` agree everywhere.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Table } from '../../../src/datastore/types.js';
import { memoryEngine } from '../../../src/engine/memory/engine.js';
import type { Engine } from '../../../src/engine/types.js';
import { propertyParameters } from '../../helpers/arbitraries.js';
import type { TestEngines } from './engines.js';
import { engineNames, openTestEngines, typedTable } from './engines.js';

type ColumnType = 'text' | 'int' | 'bool';
const TEXTS = ['a', 'b', 'B', 'ab', 'a b', 'Z', '_', 'x-y'];
const valueArb = (type: ColumnType): fc.Arbitrary<string | number | boolean | null> =>
  type === 'text' ? fc.oneof(fc.constantFrom(...TEXTS), fc.constant(null)) : type === 'int' ? fc.oneof(fc.integer({ min: -3, max: 3 }), fc.constant(null)) : fc.oneof(fc.boolean(), fc.constant(null));

const tableArb = fc
  .uniqueArray(fc.constantFrom('t1', 't2', 'n1', 'n2', 'b1'), { minLength: 1, maxLength: 4 })
  .chain((names) => {
    const columns = names.map((name): [string, ColumnType] => [name, name.startsWith('t') ? 'text' : name.startsWith('n') ? 'int' : 'bool']);
    const row = fc.record(Object.fromEntries(columns.map(([name, type]) => [name, valueArb(type)])) as Record<string, fc.Arbitrary<unknown>>);
    return fc.record({ columns: fc.constant(columns), rows: fc.array(row, { minLength: 0, maxLength: 12 }) });
  });

// A handful of tables, each loaded once into every engine; the property draws requests over them.
const samples = fc.sample(tableArb, { seed: 10_2026, numRuns: 6 });
const tables: Table[] = samples.map((sample, i) =>
  typedTable(`gen${i}`, sample.columns.map(([name, type]) => [name, type === 'int' ? 'int4' : type]), sample.rows),
);
const memoryTables: Table[] = tables.map((table) => ({ ...table, fields: table.fields.map((f) => (f.type === 'int4' ? { ...f, type: 'int' } : f)) }));

interface Listed {
  readonly q: boolean;
  readonly nullFilter: boolean;
  readonly emptyList: boolean;
}

/** A request over table `index`; `listed` features (q, null filters, empty lists) only when asked. */
function requestArb(index: number, listed: boolean): fc.Arbitrary<Record<string, unknown>> {
  const columns = samples[index]?.columns ?? [];
  const nonNull = (type: ColumnType) => valueArb(type).filter((v) => v !== null || listed);
  const filterArb = fc.oneof(
    ...columns.map(([name, type]) =>
      fc.record({
        [name]: fc.oneof(nonNull(type), fc.array(nonNull(type), { minLength: listed ? 0 : 1, maxLength: 3 })),
      }),
    ),
  );
  const sortArb = fc.constantFrom(...columns.map(([name]) => name)).chain((name) => fc.constantFrom(`${name} asc, _id asc`, `${name} desc, _id desc`, `${name} desc, _id asc`));
  return fc.record(
    {
      resource_id: fc.constant(`gen${index}`),
      filters: columns.length === 0 ? fc.constant(undefined) : filterArb,
      sort: columns.length === 0 ? fc.constant(undefined) : sortArb,
      limit: fc.integer({ min: 0, max: 6 }),
      offset: fc.integer({ min: 0, max: 4 }),
      fields: fc.subarray(['_id', ...columns.map(([name]) => name)], { minLength: 1 }),
      ...(listed ? { q: fc.constantFrom(...TEXTS, 'a b c') } : {}),
    },
    { requiredKeys: ['resource_id', 'limit'] },
  );
}

const anyRequestArb = (listed: boolean) => fc.integer({ min: 0, max: tables.length - 1 }).chain((i) => requestArb(i, listed));

type Outcome = { ok: true; records: unknown; total: unknown } | { ok: false; status: unknown; body: unknown };
async function outcome(engine: Engine, request: Record<string, unknown>): Promise<Outcome> {
  try {
    const result = await engine.search(request);
    return { ok: true, records: result.records, total: result.total };
  } catch (error) {
    return { ok: false, status: (error as { status?: unknown }).status, body: (error as { body?: unknown }).body };
  }
}

function listedFeatures(request: Record<string, unknown>): Listed {
  const filters = Object.values((request['filters'] ?? {}) as Record<string, unknown>);
  return {
    q: typeof request['q'] === 'string' && request['q'] !== '',
    nullFilter: filters.some((v) => v === null || (Array.isArray(v) && v.includes(null))),
    emptyList: filters.some((v) => Array.isArray(v) && v.length === 0),
  };
}

let engines: TestEngines;
let memory: Engine;
beforeAll(async () => {
  engines = await openTestEngines(tables);
  memory = memoryEngine(memoryTables);
});
afterAll(async () => {
  await engines?.close();
});

describe('memory and the PostgreSQL engines', () => {
  it('agree on every request outside the differences table', async () => {
    let withRecords = 0;
    await fc.assert(
      fc.asyncProperty(anyRequestArb(false), async (request) => {
        const expected = await outcome(memory, request);
        if (expected.ok && (expected.records as unknown[]).length > 0) withRecords++;
        for (const name of engineNames) expect(await outcome(engines.get(name), request)).toEqual(expected);
      }),
      propertyParameters(120),
    );
    // Not a vacuous agreement on empty pages.
    expect(withRecords).toBeGreaterThan(10);
  });

  it('disagree only on requests that use a listed row (q, null filters, empty lists)', async () => {
    let disagreements = 0;
    await fc.assert(
      fc.asyncProperty(anyRequestArb(true), async (request) => {
        const a = await outcome(memory, request);
        const b = await outcome(engines.get('pglite'), request);
        if (JSON.stringify(a) === JSON.stringify(b)) return;
        disagreements++;
        const listed = listedFeatures(request);
        expect(listed.q || listed.nullFilter || listed.emptyList, JSON.stringify({ request, memory: a, pglite: b })).toBe(true);
      }),
      propertyParameters(120),
    );
    // The listed rows are real differences: with these requests some answers must differ.
    expect(disagreements).toBeGreaterThan(0);
  });

  // A server is there under CI (and wherever CKQL_TEST_PG_URL names one): it must answer as PGlite does.
  for (const name of engineNames.filter((n) => n !== 'pglite')) {
    it(`pglite and ${name} agree everywhere, q included`, async () => {
      await fc.assert(
        fc.asyncProperty(anyRequestArb(true), async (request) => {
          expect(await outcome(engines.get(name), request)).toEqual(await outcome(engines.get('pglite'), request));
        }),
        propertyParameters(120),
      );
    });
  }
});

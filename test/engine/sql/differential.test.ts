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

type ColumnType = 'text' | 'int' | 'bool' | 'numeric' | 'int8';
const TEXTS = ['a', 'b', 'B', 'ab', 'a b', 'Z', '_', 'x-y'];
// Numbers as a file would hold them. The plain ones are exact as doubles or written in their shortest form;
// the listed ones are the differences table's rows: a scale written with trailing zeros (memory keeps 7.5,
// CKAN 7.50), and a negative integer beyond 2^53 (memory keeps it as text and sorts it after the numbers).
const NUMERICS = [0.1, 7.5, -3, 10, '12345678901234567890.5'];
const LISTED_NUMERICS = ['7.50', '2.0'];
const INT8S = [12, -5, '9007199254740993', '9223372036854775807'];
const LISTED_INT8S = ['-9007199254740993'];
const valueArb = (type: ColumnType, listed = false): fc.Arbitrary<string | number | boolean | null> => {
  switch (type) {
    case 'text':
      return fc.oneof(fc.constantFrom(...TEXTS), fc.constant(null));
    case 'int':
      return fc.oneof(fc.integer({ min: -3, max: 3 }), fc.constant(null));
    case 'bool':
      return fc.oneof(fc.boolean(), fc.constant(null));
    case 'numeric':
      return fc.oneof(fc.constantFrom(...NUMERICS, ...(listed ? LISTED_NUMERICS : [])), fc.constant(null));
    case 'int8':
      return fc.oneof(fc.constantFrom(...INT8S, ...(listed ? LISTED_INT8S : [])), fc.constant(null));
  }
};
const COLUMN_TYPES: Record<string, ColumnType> = { t1: 'text', t2: 'text', n1: 'int', n2: 'int', b1: 'bool', d1: 'numeric', i8: 'int8' };

// Each table's columns are fixed (every type appears, numbers with others); its rows are generated.
const COLUMN_SETS: readonly (readonly string[])[] = [['t1', 'n1'], ['t2', 'b1', 'n2'], ['d1', 'i8', 't1'], ['i8', 'n1'], ['d1', 'b1'], ['t1', 't2', 'd1', 'i8']];
const tableArb = (names: readonly string[], listed: boolean) => {
  const columns = names.map((name): [string, ColumnType] => [name, COLUMN_TYPES[name] as ColumnType]);
  const row = fc.record(Object.fromEntries(columns.map(([name, type]) => [name, valueArb(type, listed)])) as Record<string, fc.Arbitrary<unknown>>);
  return fc.record({ columns: fc.constant(columns), rows: fc.array(row, { minLength: 2, maxLength: 12 }) });
};

/**
 * A number as the memory loader keeps a CSV cell: a double when it has at most 15 significant digits
 * (an integer: when it is safe), else its text (`src/engine/memory/load.ts`).
 */
function memoryNumber(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  const n = Number(value);
  if (/^-?\d+$/.test(value)) return Number.isSafeInteger(n) ? n : value;
  return value.replace(/[-.]/g, '').replace(/^0+/, '').replace(/0+$/, '').length <= 15 ? n : value;
}

// A handful of tables, each loaded once into every engine; the properties draw requests over them.
// `gen` tables hold values outside the differences table; `lis` tables add the listed numbers.
const samples = [false, true].flatMap((listed) => COLUMN_SETS.map((names, i) => fc.sample(tableArb(names, listed), { seed: 10_2026 + i + (listed ? 100 : 0), numRuns: 1 })[0] as { columns: [string, ColumnType][]; rows: Record<string, unknown>[] }));
const tableName = (i: number): string => (i < 6 ? `gen${i}` : `lis${i - 6}`);
const SQL_TYPES: Record<ColumnType, string> = { text: 'text', int: 'int4', bool: 'bool', numeric: 'numeric', int8: 'int8' };
const tables: Table[] = samples.map((sample, i) => typedTable(tableName(i), sample.columns.map(([name, type]) => [name, SQL_TYPES[type]]), sample.rows));
const memoryTables: Table[] = tables.map((table) => ({
  ...table,
  fields: table.fields.map((f) => (f.type === 'int4' ? { ...f, type: 'int' } : f)),
  rows: table.rows.map(
    (row) => Object.fromEntries(Object.entries(row).map(([k, v]) => [k, ['numeric', 'int8'].includes(fieldType(table, k)) ? memoryNumber(v) : v])) as Table['rows'][number],
  ),
}));
function fieldType(table: Table, name: string): string {
  return table.fields.find((f) => f.id === name)?.type ?? '';
}
/** Whether column `name` of table `index` holds one of the listed numbers. */
const holdsListedNumber = (index: number, name: string): boolean =>
  (samples[index]?.rows ?? []).some((row) => [...LISTED_NUMERICS, ...LISTED_INT8S].includes((row as Record<string, unknown>)[name] as string));

interface Listed {
  readonly q: boolean;
  readonly nullFilter: boolean;
  readonly emptyList: boolean;
  /** the request shows, sorts or filters a column holding a listed number (or filters a number column by one) */
  readonly listedNumber: boolean;
}

/** A request over table `index`; `listed` features (q, null filters, empty lists, listed numbers) only when asked. */
function requestArb(index: number, listed: boolean): fc.Arbitrary<Record<string, unknown>> {
  const columns = samples[index]?.columns ?? [];
  const nonNull = (type: ColumnType) => valueArb(type, listed).filter((v) => v !== null || listed);
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
      resource_id: fc.constant(tableName(index)),
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

const anyRequestArb = (listed: boolean) => fc.integer({ min: 0, max: listed ? tables.length - 1 : 5 }).chain((i) => requestArb(i, listed));

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
  const filters = (request['filters'] ?? {}) as Record<string, unknown>;
  const index = tables.findIndex((t) => t.aliases[0] === request['resource_id']);
  const sorted = typeof request['sort'] === 'string' ? [request['sort'].split(' ')[0] as string] : [];
  const shown = (request['fields'] as string[] | undefined) ?? (samples[index]?.columns ?? []).map(([name]) => name);
  const touched = [...shown, ...sorted, ...Object.keys(filters)];
  const listedValue = (v: unknown): boolean => [...LISTED_NUMERICS, ...LISTED_INT8S].includes(v as string);
  return {
    q: typeof request['q'] === 'string' && request['q'] !== '',
    nullFilter: Object.values(filters).some((v) => v === null || (Array.isArray(v) && v.includes(null))),
    emptyList: Object.values(filters).some((v) => Array.isArray(v) && v.length === 0),
    listedNumber:
      touched.some((name) => holdsListedNumber(index, name)) ||
      Object.values(filters).some((v) => listedValue(v) || (Array.isArray(v) && v.some(listedValue))),
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

  it('disagree only on requests that use a listed row (q, null filters, empty lists, numbers written with a scale or beyond -2^53)', async () => {
    let disagreements = 0;
    await fc.assert(
      fc.asyncProperty(anyRequestArb(true), async (request) => {
        const a = await outcome(memory, request);
        const b = await outcome(engines.get('pglite'), request);
        if (JSON.stringify(a) === JSON.stringify(b)) return;
        disagreements++;
        const listed = listedFeatures(request);
        expect(listed.q || listed.nullFilter || listed.emptyList || listed.listedNumber, JSON.stringify({ request, memory: a, pglite: b })).toBe(true);
      }),
      propertyParameters(120),
    );
    // The listed rows are real differences: with these requests some answers must differ, numbers too.
    expect(disagreements).toBeGreaterThan(0);
    // The number rows too: a whole page of each table holding a listed number differs, and only there.
    for (let index = 6; index < tables.length; index++) {
      const request = { resource_id: tableName(index), limit: 20 };
      const same = JSON.stringify(await outcome(memory, request)) === JSON.stringify(await outcome(engines.get('pglite'), request));
      expect(same, tableName(index)).toBe(!listedFeatures(request).listedNumber);
    }
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

/**
 * The memory engine against real PostgreSQL, judged by PostgreSQL's own
 * `SELECT`: generated CSV files (nulls, Unicode text, integers beyond 2^53,
 * decimals beyond a double, one value in several spellings, dates,
 * timestamps, booleans, duplicate keys) loaded by the memory loader and,
 * with the types it inferred, into PostgreSQL by `COPY`; generated shaped
 * queries (joins, group by with count/sum/min/max/avg, having, order by made
 * total, distinct, limit/offset) run on the memory engine and, written by
 * this file as SQL (never through ckql's SQL compiler), on PostgreSQL. The
 * answers must be the same rows, values compared by their canonical text,
 * with the README's differences (Differences from a portal) modelled where
 * they show, each where it is applied.
 *
 * PostgreSQL is the server at `CKQL_TEST_PG_URL` (`.ci/run` starts one; under
 * `CI=true` its absence fails the file, as test/engine/sql/engines.ts does);
 * without one, PGlite, the same PostgreSQL in WebAssembly.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Row, Table } from '../../src/datastore/types.js';
import { memoryEngine } from '../../src/engine/memory/engine.js';
import { loadResources } from '../../src/engine/node/load-resources.js';
import { openPostgres } from '../../src/engine/postgres/db.js';
import type { Db } from '../../src/engine/sql/db.js';
import { parse } from '../../src/syntax/parse.js';
import { ci, serverUrl } from '../engine/sql/engines.js';
import { borrowPgliteDb } from '../helpers/pglite-pool.js';
import { propertyParameters, propertySeed } from '../helpers/arbitraries.js';

// ---------------------------------------------------------------------------
// Tables

type Kind = 'text' | 'number' | 'date' | 'timestamp' | 'bool';
interface Column {
  readonly name: string;
  readonly kind: Kind;
  /** the type the memory loader must infer from the pool (checked before any query) */
  readonly type: string;
  readonly pool: readonly string[];
}

const TEXTS = [' a', 'a ', 'a', 'A', 'b', 'é', 'e\u0301', 'ß', '😀', 'Z', 'a,b', 'say "hi"', '日本', '10', '9', 'ǅ', '\uFF5E'];
const INTS = ['-3', '-1', '0', '1', '2', '3'];
// 2^53 ± 1 and 2^53 (+2: a double holds it), beyond int8, and small ones beside them
const BIGS = ['-0', '9007199254740993', '-9007199254740993', '9007199254740992', '9007199254740994', '12345678901234567890', '18446744073709551616', '1', '-5', '9223372036854775807'];
// one value in several spellings (trailing zeros, exponents, -0), decimals a double cannot hold, small ones a double writes with an
// exponent, a double's own 17 digits
const DECIMALS = ['-0.0', '0', '0.30000000000000004', '1.23e25', '12300000000000000000000000', '-1e21', '7.5', '7.50', '0.1', '0.1000000000000000000001', '0.10000000000000000000010', '1e21', '1000000000000000000000', '-2.25', '12345678901234567890.5', '1.5e-7', '0.00000015', '3'];
const DATES = ['2020-01-01', '2019-12-31', '2024-02-29', '1999-01-01'];
// one moment written several ways (T, a space, a date alone at midnight, a fraction with trailing zeros)
const TIMESTAMPS = ['2020-01-01T10:00:00.5', '2020-01-01T10:00:00.500', '2020-01-01T10:00:00.000', '2020-01-01T10:00:00', '2020-01-01 10:00:00', '2019-06-30T23:59:59', '2020-01-01T00:00:00', '2020-01-01'];
const BOOLS = ['true', 'false', 'TRUE', 'False'];

const LEFT: readonly Column[] = [
  { name: 'k', kind: 'text', type: 'text', pool: TEXTS },
  { name: 'i', kind: 'number', type: 'int4', pool: INTS },
  { name: 'g', kind: 'number', type: 'numeric', pool: BIGS },
  { name: 'd', kind: 'number', type: 'numeric', pool: DECIMALS },
  { name: 'dt', kind: 'date', type: 'date', pool: DATES },
  { name: 'ts', kind: 'timestamp', type: 'timestamp', pool: TIMESTAMPS },
  { name: 'b', kind: 'bool', type: 'bool', pool: BOOLS },
];
const RIGHT: readonly Column[] = [
  { name: 'k', kind: 'text', type: 'text', pool: TEXTS.slice(0, 8) },
  { name: 'i', kind: 'number', type: 'int4', pool: INTS },
  { name: 'g', kind: 'number', type: 'numeric', pool: BIGS },
  { name: 'd', kind: 'number', type: 'numeric', pool: DECIMALS },
  { name: 'dt', kind: 'date', type: 'date', pool: DATES },
  { name: 'w', kind: 'number', type: 'int4', pool: ['0', '1', '2'] },
];
const TABLES = [
  { name: 'lt', columns: LEFT, rows: 40 },
  { name: 'rt', columns: RIGHT, rows: 16 },
] as const;

/** A table's cells: the first row has every column (so each is typed by its pool), the others a null now and then. */
function cellsArb(columns: readonly Column[], rows: number): fc.Arbitrary<(string | null)[][]> {
  const row = (nulls: boolean) => fc.tuple(...columns.map((c) => (nulls ? fc.option(fc.constantFrom(...c.pool), { freq: 6, nil: null }) : fc.constantFrom(...c.pool))));
  return fc.tuple(row(false), fc.array(row(true), { minLength: rows - 1, maxLength: rows - 1 })).map(([first, rest]) => [first, ...rest]);
}

function csvOf(columns: readonly Column[], cells: readonly (readonly (string | null)[])[]): string {
  const field = (cell: string | null): string => (cell === null ? '' : /[",\n]/.test(cell) ? `"${cell.replaceAll('"', '""')}"` : cell);
  return [columns.map((c) => c.name).join(','), ...cells.map((row) => row.map(field).join(','))].join('\n') + '\n';
}

// Sampled once (the seed of CKQL_PROPERTY_SEED replays them), loaded once into each side; the queries are the property.
const seed = propertySeed ?? 29_2026;
const data = TABLES.map((t, i) => ({ ...t, cells: fc.sample(cellsArb(t.columns, t.rows), { seed: seed + i, numRuns: 1 })[0] as (string | null)[][] }));

// ---------------------------------------------------------------------------
// The two sides

let dir: string;
let memory: ReturnType<typeof memoryEngine>;
let tables: Table[];
let db: Db;
let dropDatabase: (() => Promise<void>) | undefined;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ckql-pgdiff-'));
  for (const t of data) await writeFile(join(dir, `${t.name}.csv`), csvOf(t.columns, t.cells));
  tables = await loadResources(data.map((t) => join(dir, `${t.name}.csv`)));
  memory = memoryEngine(tables);
  db = await openOracle();
  for (const [i, t] of data.entries()) {
    const fields = (tables[i] as Table).fields.filter((f) => f.id !== '_id');
    // Text columns are COLLATE "C": the memory engine orders text by code point (README, text order), as "C" does.
    const columns = fields.map((f) => `"${f.id}" ${f.type}${f.type === 'text' ? ' COLLATE "C"' : ''}`).join(', ');
    await db.transaction(async (tx) => {
      await tx.query(`CREATE TABLE "${t.name}" (${columns})`);
      await tx.copyFrom(`COPY "${t.name}" (${fields.map((f) => `"${f.id}"`).join(', ')}) FROM STDIN (FORMAT csv, HEADER true)`, csvOf(t.columns, t.cells));
    });
  }
});
afterAll(async () => {
  await db?.close();
  await dropDatabase?.();
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

/** The server's own database for this file (dropped at the end); PGlite when there is no server, unless under CI. */
async function openOracle(): Promise<Db> {
  if (serverUrl === undefined) {
    if (ci) throw new Error('CI=true but CKQL_TEST_PG_URL is not set: .ci/run starts a PostgreSQL cluster for this test');
    return borrowPgliteDb();
  }
  const name = `ckql_diff_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  dropDatabase = async () => {
    const client = new pg.Client({ connectionString: serverUrl });
    await client.connect();
    await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await client.end();
  };
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return openPostgres({ url: url.toString(), max: 2 });
}

// ---------------------------------------------------------------------------
// Queries: one model written twice, as ckql and as PostgreSQL's SQL

interface Ref {
  readonly side: 'a' | 'b';
  readonly column: Column;
}
interface Output {
  readonly ckql: string;
  readonly sql: string;
  /** how its values compare: a column's kind, `count`, or `avg` (a double here, exact numeric there) */
  readonly kind: Kind | 'count' | 'avg';
}
interface Generated {
  readonly ckql: string;
  readonly sql: string;
  readonly outputs: readonly Output[];
}

const ckqlRef = (r: Ref, joined: boolean): string => (joined ? `${r.side}.${r.column.name}` : r.column.name);
const sqlRef = (r: Ref, joined: boolean): string => (joined ? `${r.side}."${r.column.name}"` : `"${r.column.name}"`);

/**
 * A literal for `r` in both languages. Number literals are quoted in ckql (a literal beyond a double must be, README
 * "Differences in meaning"), and equality is canonical text on the memory engine (README, Differences from a portal:
 * `10` ≠ `"10.0"`), so values are written as the loader keeps them (`memoryNumberText`), a timestamp with its `T`.
 */
function literal(r: Ref, raw: string): { ckql: string; sql: string } {
  switch (r.column.kind) {
    case 'bool':
      return { ckql: raw.toLowerCase(), sql: raw.toLowerCase() };
    case 'number': {
      const text = memoryNumberText(raw);
      return { ckql: `"${text}"`, sql: `'${text}'` };
    }
    case 'timestamp': {
      // as the loader keeps it: `T`, seconds, the fraction less its trailing zeros
      const [time = '', fraction = ''] = (raw.length === 10 ? `${raw}T00:00:00` : raw.replace(' ', 'T')).split('.');
      const text = fraction.replace(/0+$/, '') === '' ? time : `${time}.${fraction.replace(/0+$/, '')}`;
      return { ckql: `"${text}"`, sql: `'${text}'` };
    }
    case 'date':
    case 'text':
      return { ckql: JSON.stringify(raw), sql: `'${raw.replaceAll("'", "''")}'` };
  }
}

/** A value of the column's pool, or one no row holds (of the column's type: PostgreSQL refuses `0.2` for an int4). */
const rawArb = (c: Column): fc.Arbitrary<string> => {
  const absent: Record<string, string[]> = { text: ['c', 'a b'], int4: ['5'], numeric: ['5', '0.2', '9007199254740995'], date: ['2021-06-15'], timestamp: ['2020-01-01T09:59:59'], bool: [] };
  return fc.constantFrom(...c.pool.filter((v) => !v.includes('"')), ...(absent[c.type] ?? []));
};

function conditionArb(refs: readonly Ref[], joined: boolean): fc.Arbitrary<{ ckql: string; sql: string }> {
  const atom = fc.constantFrom(...refs).chain((r) => {
    const field = { ckql: ckqlRef(r, joined), sql: sqlRef(r, joined) };
    const lit = rawArb(r.column).map((raw) => literal(r, raw));
    const options: fc.Arbitrary<{ ckql: string; sql: string }>[] = [
      lit.map((v) => ({ ckql: `${field.ckql} = ${v.ckql}`, sql: `${field.sql} = ${v.sql}` })),
      fc.array(lit, { minLength: 1, maxLength: 3 }).map((vs) => ({
        ckql: `${field.ckql} in (${vs.map((v) => v.ckql).join(', ')})`,
        sql: `${field.sql} IN (${vs.map((v) => v.sql).join(', ')})`,
      })),
      fc.boolean().map((not) => ({ ckql: `${field.ckql} is ${not ? 'not ' : ''}null`, sql: `${field.sql} IS ${not ? 'NOT ' : ''}NULL` })),
    ];
    if (r.column.kind !== 'bool') {
      options.push(
        fc.tuple(fc.constantFrom('<', '<=', '>', '>=', '!='), lit).map(([op, v]) => ({ ckql: `${field.ckql} ${op} ${v.ckql}`, sql: `${field.sql} ${op === '!=' ? '<>' : op} ${v.sql}` })),
        fc.tuple(lit, lit).map(([lo, hi]) => ({ ckql: `${field.ckql} between ${lo.ckql} and ${hi.ckql}`, sql: `${field.sql} BETWEEN ${lo.sql} AND ${hi.sql}` })),
      );
    }
    return fc.oneof(...options);
  });
  return fc.oneof(
    { weight: 3, arbitrary: atom },
    fc.tuple(atom, fc.constantFrom('and', 'or'), atom).map(([x, op, y]) => ({ ckql: `(${x.ckql}) ${op} (${y.ckql})`, sql: `(${x.sql}) ${op.toUpperCase()} (${y.sql})` })),
    atom.map((x) => ({ ckql: `not (${x.ckql})`, sql: `NOT (${x.sql})` })),
  );
}

/** An aggregate of `r`, or count(*). */
function aggregateArb(refs: readonly Ref[], joined: boolean): fc.Arbitrary<{ ckql: string; sql: string; kind: Output['kind'] }> {
  const star = fc.constant({ ckql: 'count(*)', sql: 'count(*)', kind: 'count' as const });
  const of = fc.constantFrom(...refs).chain((r) => {
    const c = ckqlRef(r, joined);
    const s = sqlRef(r, joined);
    const options: { ckql: string; sql: string; kind: Output['kind'] }[] = [
      { ckql: `count(${c})`, sql: `count(${s})`, kind: 'count' },
      { ckql: `count(distinct ${c})`, sql: `count(DISTINCT ${s})`, kind: 'count' as const },
      // PostgreSQL has no min/max of a boolean: bool_and/bool_or are the same (docs/aggregates.md)
      { ckql: `min(${c})`, sql: r.column.kind === 'bool' ? `bool_and(${s})` : `min(${s})`, kind: r.column.kind },
      { ckql: `max(${c})`, sql: r.column.kind === 'bool' ? `bool_or(${s})` : `max(${s})`, kind: r.column.kind },
    ];
    if (r.column.kind === 'number') options.push({ ckql: `sum(${c})`, sql: `sum(${s})`, kind: 'number' }, { ckql: `avg(${c})`, sql: `avg(${s})`, kind: 'avg' });
    // aggregates of expressions (docs/expressions.md), written here as PostgreSQL's SQL of the same text
    if (r.column.kind === 'number') {
      for (const [x, y] of [[`${c} - 1`, `${s} - 1`], [`abs(${c})`, `abs(${s})`], [`coalesce(${c}, 0) * 0.5`, `coalesce(${s}, 0) * 0.5`]]) {
        options.push({ ckql: `sum(${x})`, sql: `sum(${y})`, kind: 'number' }, { ckql: `avg(${x})`, sql: `avg(${y})`, kind: 'avg' }, { ckql: `max(${x})`, sql: `max(${y})`, kind: 'number' });
      }
    }
    if (r.column.kind === 'text') {
      options.push(
        // not lower/upper here: this file's text columns are COLLATE "C", under which PostgreSQL's lower('ǅ') is 'ǅ' (only
        // ASCII letters change), where the memory engine gives 'ǆ' as the database's own locale does
        { ckql: `max(trim(${c}))`, sql: `max(btrim(${s}))`, kind: 'text' },
        { ckql: `min(${c} || 'x')`, sql: `min(${s} || 'x')`, kind: 'text' },
        { ckql: `count(distinct trim(${c}))`, sql: `count(DISTINCT btrim(${s}))`, kind: 'count' },
        { ckql: `sum(length(${c}))`, sql: `sum(length(${s}))`, kind: 'number' },
      );
    }
    return fc.constantFrom(...options);
  });
  return fc.oneof(star, of, of);
}

const orderArb = fc.record({ desc: fc.boolean(), nulls: fc.constantFrom('', 'first', 'last') });
const pageArb = fc.option(fc.record({ limit: fc.integer({ min: 0, max: 12 }), offset: fc.option(fc.integer({ min: 0, max: 6 }), { nil: undefined }) }), { nil: undefined });

/**
 * Every output is ordered by (the keys, or every selected value), so the order is total up to rows that are
 * the same: a tie leaves nothing for either side to choose.
 */
function assemble(parts: {
  from: { ckql: string; sql: string };
  joined: boolean;
  where?: { ckql: string; sql: string } | undefined;
  distinct?: boolean;
  outputs: readonly Output[];
  groupBy?: readonly Ref[];
  having?: { ckql: string; sql: string } | undefined;
  ordered: readonly number[];
  orders: readonly { desc: boolean; nulls: string }[];
  page?: { limit: number; offset?: number | undefined } | undefined;
}): Generated {
  const names = parts.outputs.map((_, i) => `c${i}`);
  const order = parts.ordered.map((o, i) => {
    const { desc, nulls } = parts.orders[i % parts.orders.length] as { desc: boolean; nulls: string };
    return { ckql: `${names[o]}${desc ? ' desc' : ''}${nulls === '' ? '' : ` nulls ${nulls}`}`, sql: `"${names[o]}"${desc ? ' DESC' : ''}${nulls === '' ? '' : ` NULLS ${nulls.toUpperCase()}`}` };
  });
  const ckql = [
    `from ${parts.from.ckql}`,
    parts.where === undefined ? '' : `where ${parts.where.ckql}`,
    parts.groupBy === undefined || parts.groupBy.length === 0 ? '' : `group by ${parts.groupBy.map((r) => ckqlRef(r, parts.joined)).join(', ')}`,
    `select ${parts.distinct === true ? 'distinct ' : ''}${parts.outputs.map((o, i) => `${o.ckql} as ${names[i]}`).join(', ')}`,
    parts.having === undefined ? '' : `having ${parts.having.ckql}`,
    order.length === 0 ? '' : `order by ${order.map((o) => o.ckql).join(', ')}`,
    parts.page === undefined ? '' : `limit ${parts.page.limit}${parts.page.offset === undefined ? '' : ` offset ${parts.page.offset}`}`,
  ].filter((p) => p !== '').join(' ');
  const sql = [
    `SELECT ${parts.distinct === true ? 'DISTINCT ' : ''}${parts.outputs.map((o, i) => `${o.sql} AS "${names[i]}"`).join(', ')}`,
    `FROM ${parts.from.sql}`,
    parts.where === undefined ? '' : `WHERE ${parts.where.sql}`,
    parts.groupBy === undefined || parts.groupBy.length === 0 ? '' : `GROUP BY ${parts.groupBy.map((r) => sqlRef(r, parts.joined)).join(', ')}`,
    parts.having === undefined ? '' : `HAVING ${parts.having.sql}`,
    order.length === 0 ? '' : `ORDER BY ${order.map((o) => o.sql).join(', ')}`,
    parts.page === undefined ? '' : `LIMIT ${parts.page.limit}${parts.page.offset === undefined ? '' : ` OFFSET ${parts.page.offset}`}`,
  ].filter((p) => p !== '').join(' ');
  return { ckql, sql, outputs: parts.outputs };
}

const leftRefs: Ref[] = LEFT.map((column) => ({ side: 'a', column }));
const rightRefs: Ref[] = RIGHT.map((column) => ({ side: 'b', column }));
const asOutput = (r: Ref, joined: boolean): Output => ({ ckql: ckqlRef(r, joined), sql: sqlRef(r, joined), kind: r.column.kind });
const havingArb = fc.option(fc.constantFrom({ ckql: 'count(*) >= 2', sql: 'count(*) >= 2' }, { ckql: 'count(*) = 1', sql: 'count(*) = 1' }), { nil: undefined });

/** A query over one table or a join of the two: rows (distinct or not) or groups. */
function queryArb(joined: boolean): fc.Arbitrary<Generated> {
  const refs = joined ? [...leftRefs, ...rightRefs] : leftRefs;
  const from = joined
    ? fc.tuple(fc.boolean(), fc.constantFrom<[string, string]>(['k', 'k'], ['i', 'i'], ['g', 'g'], ['d', 'd'], ['dt', 'dt'], ['i', 'g'], ['g', 'i'], ['d', 'i'])).map(([left, [x, y]]) => ({
        ckql: `lt a ${left ? 'left ' : ''}join rt b on a.${x} = b.${y}`,
        sql: `"lt" a ${left ? 'LEFT ' : ''}JOIN "rt" b ON a."${x}" = b."${y}"`,
      }))
    : fc.constant({ ckql: 'lt', sql: '"lt"' });
  const where = fc.option(conditionArb(refs, joined), { nil: undefined, freq: 2 });
  const rows = fc
    .record({ from, where, distinct: fc.boolean(), selected: fc.uniqueArray(fc.constantFrom(...refs), { minLength: 1, maxLength: 3 }), orders: fc.array(orderArb, { minLength: 1, maxLength: 3 }), page: pageArb })
    .map(({ from: f, where: w, distinct, selected, orders, page }) => {
      const outputs = selected.map((r) => asOutput(r, joined));
      return assemble({ from: f, joined, where: w, distinct, outputs, ordered: outputs.map((_, i) => i), orders, page });
    });
  const groups = fc
    .record({ from, where, keys: fc.uniqueArray(fc.constantFrom(...refs), { maxLength: 2 }), aggregates: fc.array(aggregateArb(refs, joined), { minLength: 1, maxLength: 3 }), having: havingArb, orders: fc.array(orderArb, { minLength: 1, maxLength: 2 }), page: pageArb })
    .map(({ from: f, where: w, keys, aggregates, having, orders, page }) => {
      const outputs = [...keys.map((r) => asOutput(r, joined)), ...aggregates];
      // the keys are unique per group: ordering by them is total
      return assemble({ from: f, joined, where: w, outputs, groupBy: keys, having, ordered: keys.map((_, i) => i), orders, page: keys.length === 0 ? undefined : page });
    });
  return fc.oneof(rows, groups);
}

// ---------------------------------------------------------------------------
// Comparing answers

/** A decimal's plain text without trailing zeros (`7.50` → `7.5`, `1e-7` → `0.0000001`, `-0` → `0`), by hand. */
function canonicalNumber(text: string): string {
  const m = /^([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/.exec(text.trim());
  if (m === null) return text;
  const digits = `${m[2] ?? ''}${m[3] ?? ''}`;
  let point = (m[2] ?? '').length + Number(m[4] ?? 0);
  const lead = digits.length - digits.replace(/^0+/, '').length;
  const significant = digits.replace(/^0+/, '').replace(/0+$/, '');
  point -= lead;
  if (significant === '') return '0';
  const body = point <= 0 ? `0.${'0'.repeat(-point)}${significant}` : point >= significant.length ? significant + '0'.repeat(point - significant.length) : `${significant.slice(0, point)}.${significant.slice(point)}`;
  return m[1] === '-' ? `-${body}` : body;
}

/**
 * The canonical text of a number as the memory loader keeps it (README, Local data and Differences in meaning): a
 * double where one holds it (at most 15 significant digits, within 2^53), written as JavaScript writes it (`1e-7`);
 * else its plain digits.
 */
function memoryNumberText(raw: string): string {
  const plain = canonicalNumber(raw);
  const significant = plain.replace(/[-.]/g, '').replace(/^0+/, '').replace(/0+$/, '');
  const n = Number(plain);
  return significant.length <= 15 && Math.abs(n) <= Number.MAX_SAFE_INTEGER ? String(n) : plain;
}

/**
 * A value as both sides must agree on it, from the memory engine's record (JSON values) or PostgreSQL's text:
 * - numbers by value: the memory engine writes `7.50` as 7.5 and a small number as a double writes it (`1e-7`)
 *   where PostgreSQL keeps the scale and the digits (README, Differences from a portal: a `numeric` written with
 *   trailing zeros), so both are read as their plain digits without trailing zeros;
 * - booleans: PostgreSQL's text is `t`/`f`;
 * - timestamps: PostgreSQL's text has a space where the memory engine keeps the `T` of its files (README: timestamps);
 * - `avg`: a double on the memory engine, an exact `numeric` in PostgreSQL (README: `avg`): compared apart, to 1e-12.
 */
function canonical(kind: Output['kind'], value: unknown, from: 'memory' | 'postgres'): string | null {
  if (value === null || value === undefined) return null;
  const text = String(value);
  switch (kind) {
    case 'number':
    case 'count':
    case 'avg':
      return canonicalNumber(text);
    case 'bool':
      return from === 'postgres' ? (text === 't' ? 'true' : text === 'f' ? 'false' : text) : text;
    case 'timestamp':
      return from === 'postgres' ? text.replace(' ', 'T') : text;
    case 'date':
    case 'text':
      return text;
  }
}

function sameValue(kind: Output['kind'], a: string | null, b: string | null): boolean {
  if (kind !== 'avg' || a === null || b === null) return a === b;
  const x = Number(a);
  const y = Number(b);
  return Math.abs(x - y) <= 1e-12 * Math.max(1, Math.abs(x), Math.abs(y));
}

async function memoryAnswer(query: Generated): Promise<(string | null)[][]> {
  const stream = await memory.query(parse(query.ckql), { all: true });
  const rows: Row[] = [];
  for await (const batch of stream.batches) rows.push(...batch);
  return rows.map((row) => query.outputs.map((o, i) => canonical(o.kind, row[`c${i}`], 'memory')));
}

async function postgresAnswer(query: Generated): Promise<(string | null)[][]> {
  const { rows } = await db.transaction((tx) => tx.query(query.sql), { readOnly: true });
  return rows.map((row) => query.outputs.map((o, i) => canonical(o.kind, row[`c${i}`], 'postgres')));
}

async function agree(query: Generated): Promise<number> {
  const want = await postgresAnswer(query);
  const got = await memoryAnswer(query);
  const same = got.length === want.length && got.every((row, r) => row.every((v, c) => sameValue(query.outputs[c]?.kind ?? 'text', v, want[r]?.[c] ?? null)));
  expect(same, `${query.ckql}\n${query.sql}\nmemory:     ${JSON.stringify(got)}\npostgresql: ${JSON.stringify(want)}`).toBe(true);
  return want.length;
}

describe('the memory engine answers as PostgreSQL', () => {
  it('loads each column as the type its values call for', () => {
    for (const [i, t] of data.entries()) {
      const types = Object.fromEntries((tables[i] as Table).fields.map((f) => [f.id, f.type]));
      expect(types).toEqual({ _id: 'int', ...Object.fromEntries(t.columns.map((c) => [c.name, c.type])) });
    }
  });

  for (const joined of [false, true]) {
    it(`${joined ? 'joins' : 'one table'}: rows, distinct rows and groups`, async () => {
      let answered = 0;
      let runs = 0;
      await fc.assert(
        fc.asyncProperty(queryArb(joined), async (query) => {
          runs++;
          if ((await agree(query)) > 0) answered++;
        }),
        propertyParameters(200),
      );
      // not a vacuous agreement on empty answers
      expect(answered).toBeGreaterThan(runs / 3);
    });
  }
});

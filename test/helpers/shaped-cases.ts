/**
 * The case suite's shaped mode (`"mode": "shaped"`, test/cases/README.md):
 * a grouped, joined or faceted query is no one request, so a case states
 * each target's plan and every answer instead, and all of them must give
 * the case's `records` (and `total`, `facets`), which are written by hand
 * and checked against PostgreSQL running the case's own `postgres` SQL:
 *
 *   the `sql` target's text (`--target sql`), every column aliased and every
 *   `:` of a literal written `\:`; the 2.11 and 2.12 plans as explain prints
 *   them; the memory engine, PGlite and PostgreSQL (with CKQL_TEST_PG_URL)
 *   engines; the plans run against `ckql serve` as 2.11 and 2.12; and the
 *   sql text through a PGlite `ckql serve`'s `datastore_search_sql`, which
 *   checks CKAN's function allow-list and reads `\:` as CKAN does.
 */
import { expect } from 'vitest';
import { isPlainQuery } from '../../src/ast.js';
import type { Query } from '../../src/ast.js';
import { connect } from '../../src/client/connect.js';
import type { DatastoreClient } from '../../src/client/types.js';
import { bind } from '../../src/compile/bind.js';
import { compile, plan } from '../../src/compile/compile.js';
import type { Plan, Target } from '../../src/compile/plan.js';
import { shapeOf } from '../../src/compile/shape.js';
import { identifier, TOTAL_COLUMN } from '../../src/compile/sql.js';
import type { SqlRequest } from '../../src/compile/sql.js';
import type { FacetResult, Facets, FieldInfo, Row, Table } from '../../src/datastore/types.js';
import { memoryEngine } from '../../src/engine/memory/engine.js';
import { windowStep } from '../../src/compile/window.js';
import { unionFields, unionTable } from '../../src/compile/union.js';
import type { UnionMember, UnionTable } from '../../src/compile/union.js';
import type { Engine } from '../../src/engine/types.js';
import { QueryError } from '../../src/errors.js';
import { readSqlText } from '../../src/datastore/sql-text.js';
import { portalTree } from '../../src/execute/build.js';
import { describeTree } from '../../src/execute/run.js';
import { startServer } from '../../src/server/server.js';
import type { RunningServer } from '../../src/server/server.js';
import { engineNames, openTestEngines } from '../engine/sql/engines.js';
import type { TestEngines } from '../engine/sql/engines.js';
import { expectSameRows } from './aggregate-fixtures.js';
import type { Case } from './cases.js';
import type { CkanSql } from './ckan-sql.js';

/** Every way a shaped case is answered, opened once for the suite. */
export interface ShapedTargets {
  readonly memory: Engine;
  readonly engines: TestEngines;
  /** the plans against `ckql serve` as CKAN 2.11 and 2.12 */
  readonly 'ckan-2.11': DatastoreClient;
  readonly 'ckan-2.12': DatastoreClient;
  /** the sql target against `ckql serve --engine pglite` (datastore_search_sql, CKAN's allow-list) */
  readonly sql: DatastoreClient;
  /** PostgreSQL (PGlite) with the tables in CKAN's layout, for the case's own SQL */
  readonly postgres: CkanSql;
  close(): Promise<void>;
}

/** The datasets shaped cases read: the tables with declared fields (PostgreSQL holds one type per column). */
export async function openShapedTargets(tables: readonly Table[], postgres: CkanSql): Promise<ShapedTargets> {
  const memory = memoryEngine(tables);
  const engines = await openTestEngines(tables);
  // `ckql serve --engine pglite` over the same tables: the test engines' PGlite
  const sqlEngine = engines.get('pglite');
  const servers: RunningServer[] = await Promise.all([
    startServer({ engine: memory, ckan: '2.11', port: 0 }),
    startServer({ engine: memory, ckan: '2.12', port: 0 }),
    startServer({ engine: sqlEngine, ckan: '2.11', port: 0 }),
  ]);
  const clients = {
    'ckan-2.11': connect({ url: servers[0]!.url, target: 'ckan-2.11', retries: 0 }),
    'ckan-2.12': connect({ url: servers[1]!.url, target: 'ckan-2.12', retries: 0 }),
    sql: connect({ url: servers[2]!.url, target: 'sql', retries: 0 }),
  };
  return {
    memory,
    engines,
    ...clients,
    postgres,
    close: async () => {
      for (const client of Object.values(clients)) await client.close();
      for (const server of servers) await server.close();
      await engines.close();
    },
  };
}

interface Answer {
  readonly records: readonly Row[];
  readonly total: number | undefined;
  readonly facets: Facets | undefined;
}

async function engineAnswer(engine: Engine, query: Query): Promise<Answer> {
  const stream = await engine.query(query, { total: true });
  const records: Row[] = [];
  for await (const batch of stream.batches) records.push(...batch);
  return { records, total: stream.total, facets: stream.facets };
}

/** Where the error is thrown, or rejected, it is a QueryError with the case's code. */
async function expectCode(what: string, run: () => Promise<unknown>, code: string): Promise<void> {
  let error: unknown;
  try {
    await run();
  } catch (e) {
    error = e;
  }
  expect(error, `${what}: expected ${code}`).toBeInstanceOf(QueryError);
  expect((error as QueryError).code, what).toBe(code);
}

/** The static tree a plan runs as (what explain prints, without the portal's counts). */
export function planLines(planned: Plan, query: Query): string[] {
  const nowhere = () => Promise.reject(new Error('a plan is described, not run'));
  return describeTree(portalTree(planned, query, { send: nowhere, sendSql: nowhere, origin: 'https://portal' }, { all: false, total: false, pageSize: 32_000 }));
}

/**
 * Every `:` is `\:`, a `::` cast, or in ckql's own `to_char` format (which SQLAlchemy's text() reads as
 * text: a word character before it); and no bind parameter is left for text() to find.
 */
function expectColons(sql: string): void {
  expect(sql.replaceAll('::', '').replaceAll('\\:', '').replaceAll(`'YYYY-MM-DD"T"HH24:MI:SS'`, ''), 'no bare colon').not.toContain(':');
  expect(readSqlText(sql), 'no bind parameter').not.toHaveProperty('bindParameter');
}

/** The SQL passes CKAN's checks ckql is responsible for: every output column named, every `:` of a literal written `\:`. */
function expectCkanSql(sql: string): void {
  expectColons(sql);
  const select = sql.slice('SELECT '.length, sql.indexOf(' FROM '));
  // the columns of the outer SELECT: split at top-level commas
  const columns: string[] = [];
  let depth = 0;
  let quoted: string | undefined;
  let start = 0;
  for (let i = 0; i < select.length; i++) {
    const ch = select[i]!;
    if (quoted !== undefined) {
      if (ch === quoted) quoted = undefined;
    } else if (ch === "'" || ch === '"') quoted = ch;
    else if (ch === '(' || ch === '[') depth += 1;
    else if (ch === ')' || ch === ']') depth -= 1;
    else if (ch === ',' && depth === 0) {
      columns.push(select.slice(start, i).trim());
      start = i + 1;
    }
  }
  columns.push(select.slice(start).trim());
  for (const column of columns) expect(column, 'every column aliased').toMatch(/ AS "(?:[^"]|"")+"$/);
  const names = columns.map((c) => c.slice(c.lastIndexOf(' AS "')));
  expect(new Set(names).size, 'no two columns of one name (CKAN keeps the last)').toBe(names.length);
}

/**
 * A facet as PostgreSQL counts it, from the case's SQL giving every value
 * (null included) with its count, commonest first, ties by value.
 */
function facetOfRows(expected: FacetResult, rows: readonly Row[]): FacetResult {
  const present = rows.filter((r) => r['value'] !== null);
  const nulls = rows.find((r) => r['value'] === null);
  return {
    ...expected,
    values: present.slice(0, expected.values.length).map((r) => ({ value: r['value'] as FacetResult['values'][number]['value'], count: Number(r['count']) })),
    null_count: nulls === undefined ? 0 : Number(nulls['count']),
    more: present.length > expected.values.length,
  };
}

/**
 * The fields of each resource the query names, in its order (what the client reads from a portal before a join),
 * and each union's resources with theirs (compile/union.ts).
 */
function fieldsOf(query: Query, tables: readonly Table[]): { fields: FieldInfo[][]; unions?: (UnionTable | undefined)[] } {
  const tableOf = (resource: string): Table => {
    const table = tables.find((t) => t.aliases.includes(resource) || t.id === resource);
    if (table === undefined) throw new Error(`no table ${resource}`);
    return table;
  };
  // a query with windows reads the resources its inner query reads (compile/window.ts)
  const sources = shapeOf(windowStep(query)?.inner ?? query).sources;
  const unions = sources.map((source) => source.union?.map((resource): UnionMember => ({ resource, fields: [...tableOf(resource.value).fields] })));
  const fields = sources.map((source, side) => (unions[side] === undefined ? [...tableOf(source.resource).fields] : unionFields(unions[side])));
  return unions.some((u) => u !== undefined) ? { fields, unions: unions.map((members) => (members === undefined ? undefined : unionTable(members, identifier))) } : { fields };
}

/** Runs one shaped case: its plans, PostgreSQL's check of its rows, and every answer. */
export async function runShapedCase(c: Case, parsed: Query, targets: ShapedTargets, tables: readonly Table[]): Promise<void> {
  const query = bind(parsed, c.params ?? {});
  if (c.error !== undefined) {
    // Refused alike by every engine and target (the fields tell: AMBIGUOUS_FIELD, AGGREGATE_NEEDS_NUMBER, …).
    const code = c.error.code;
    await expectCode('sql plan with the fields', async () => plan(query, { target: 'sql', ...fieldsOf(query, tables) }), code);
    await expectCode('memory', () => engineAnswer(targets.memory, query), code);
    for (const name of engineNames) await expectCode(name, () => engineAnswer(targets.engines.get(name), query), code);
    for (const target of ['ckan-2.11', 'ckan-2.12', 'sql'] as const) await expectCode(target, () => targets[target].search(query, { total: true }), code);
    return;
  }

  // 0. no single request says it: `compile` alone refuses it on a CKAN target (it gave the request for the
  // records read, which a portal answers ungrouped), and on the sql target when its facets need a second statement
  const refusedOn: Target[] = query.facet === undefined ? ['ckan-2.11', 'ckan-2.12'] : ['ckan-2.11', 'ckan-2.12', 'sql'];
  for (const target of refusedOn) {
    let refused: unknown;
    try {
      compile(query, { target });
    } catch (error) {
      refused = error;
    }
    expect(refused, `compile for ${target} refuses it`).toBeInstanceOf(QueryError);
    expect(['TARGET_CANNOT_EXPRESS', 'OR_ACROSS_FIELDS', 'AND_INSIDE_OR'], `compile for ${target}`).toContain((refused as QueryError).code);
  }

  // 1. each target's plan: the sql text as `ckql compile --target sql` prints it (no fields known: an
  // unqualified field of a join is UNQUALIFIED_FIELD there), and as the client sends it, having read the
  // fields; the 2.11 and 2.12 plans as explain prints them
  let offline: Plan | undefined;
  try {
    offline = plan(query, { target: 'sql' });
  } catch (error) {
    // `select *, …` needs the fields to name every column (sql-shaped.ts)
    const inner = shapeOf(windowStep(query)?.inner ?? query);
    // so does a union, whose statement names each resource's columns (compile/union.ts)
    if (inner.star !== undefined || inner.sources.some((source) => source.union !== undefined)) expect((error as QueryError).code).toBe('TARGET_CANNOT_EXPRESS');
    else {
      expect(shapeOf(windowStep(query)?.inner ?? query).sources.length, 'only a join has fields of unknown resource').toBeGreaterThan(1);
      expect((error as QueryError).code).toBe('UNQUALIFIED_FIELD');
    }
  }
  const sqlPlan = plan(query, { target: 'sql', ...fieldsOf(query, tables) });
  // A facet query's records may be a plain query's SELECT (sql.ts: its columns are the fields, by name).
  const { facet: _facet, ...records } = query;
  const shapedRecords = !isPlainQuery(records);
  for (const planned of offline === undefined ? [sqlPlan] : [offline, sqlPlan]) {
    if (shapedRecords) expectCkanSql((planned.request as SqlRequest).sql);
    else expectColons((planned.request as SqlRequest).sql);
    if (planned.facetRequest !== undefined) expectColons(planned.facetRequest.sql);
  }
  // A union's text is written once its resources' fields are known: the one the client sends.
  const union = shapeOf(windowStep(query)?.inner ?? query).sources.some((source) => source.union !== undefined);
  const shown = union ? sqlPlan : offline;
  if (c.targets?.sql !== undefined) expect(shown === undefined ? undefined : (shown.request as SqlRequest).sql, 'the sql text').toBe(c.targets.sql);
  if (c.facetSql !== undefined) expect(offline?.facetRequest?.sql, 'the facets statement').toBe(c.facetSql);
  for (const target of ['ckan-2.11', 'ckan-2.12'] as const satisfies readonly Target[]) {
    const wanted = c.plans?.[target];
    if (wanted !== undefined) expect(planLines(plan(query, { target }), query), `the ${target} plan`).toEqual(wanted);
  }

  // 2. the case's rows are PostgreSQL's answer to the case's own SQL
  const expected = c.records ?? [];
  if (c.postgres !== undefined) {
    const table = tables.find((t) => t.aliases[0] === c.data)!;
    const { records } = await targets.postgres.run(c.postgres.replaceAll(':', '\\:'), table);
    expectSameRows(records, expected, 'PostgreSQL on the case’s SQL');
  }
  for (const [name, facetSql] of Object.entries(c.postgresFacets ?? {})) {
    const want = c.facets?.[name];
    expect(want, `the case states facet ${name}`).toBeDefined();
    const table = tables.find((t) => t.aliases[0] === c.data)!;
    const { records } = await targets.postgres.run(facetSql.replaceAll(':', '\\:'), table);
    expect(facetOfRows(want!, records), `PostgreSQL counts facet ${name}`).toEqual(want);
  }

  // 3. every answer gives the case's rows
  const answers: [string, () => Promise<Answer>][] = [
    ['memory', () => engineAnswer(targets.memory, query)],
    ...engineNames.map((name): [string, () => Promise<Answer>] => [name, () => engineAnswer(targets.engines.get(name), query)]),
    ...(['ckan-2.11', 'ckan-2.12', 'sql'] as const).map((target): [string, () => Promise<Answer>] => [
      `serve as ${target}`,
      async () => {
        const result = await targets[target].search(query, { total: true });
        return { records: result.records, total: result.total, facets: result.facets };
      },
    ]),
  ];
  if (offline !== undefined) {
    // What `ckql compile --target sql` prints, sent as it is to datastore_search_sql (the client above sent the text it planned with the fields).
    answers.push([
      'the --target sql text through datastore_search_sql',
      async () => {
        const result = (await targets.sql.action('datastore_search_sql', { sql: (offline.request as SqlRequest).sql })) as { records: Row[] };
        const total = result.records[0]?.[TOTAL_COLUMN];
        const records = result.records.map((record) => Object.fromEntries(Object.entries(record).filter(([key]) => key !== TOTAL_COLUMN && key !== '_full_text')));
        return { records, total: total === undefined ? (records.length === 0 ? 0 : undefined) : Number(total), facets: c.facets };
      },
    ]);
  }
  for (const [name, answer] of answers) {
    const got = await answer();
    expectSameRows(got.records, expected, `${name}: ${c.query}`);
    if (c.total !== undefined) expect(got.total, `${name}: total`).toBe(c.total);
    if (c.facets !== undefined) expect(got.facets, `${name}: facets`).toEqual(c.facets);
  }
}

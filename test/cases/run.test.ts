/**
 * The case suite runner (style.md convention 7). Every case in
 * `test/cases/<topic>/<name>.json` goes through
 *
 *   parse → parse(format(q)) equals q (spans aside) → compile (= `request`)
 *   → evaluate(request, table) (= `records`/`count`/`total`/`result`)
 *   → evaluateQuery(q, table, params) (the same) → the local server over HTTP (the same)
 *
 * or stops with the expected `error` (a QueryError whose span covers `token`)
 * or `evalError` (a Validation Error with that status and body). The format
 * of a case is in `README.md` beside this file. The test's title is the query.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Field, Query } from '../../src/ast.js';
import { connect } from '../../src/client/connect.js';
import type { DatastoreClient } from '../../src/client/types.js';
import { compile, plan } from '../../src/compile/compile.js';
import { targets, type Plan, type Target } from '../../src/compile/plan.js';
import type { SqlRequest } from '../../src/compile/sql.js';
import { fromSql } from '../../src/compile/from-sql.js';
import { openCkanSql, type CkanSql } from '../helpers/ckan-sql.js';
import { evaluatePlan } from '../helpers/plan.js';
import { fromRequest } from '../../src/compile/from-request.js';
import type { Row, SearchRequest, SearchResult, Table } from '../../src/datastore/types.js';
import { DatastoreError, QueryError } from '../../src/errors.js';
import type { QueryErrorCode } from '../../src/errors.js';
import { evaluate } from '../../src/engine/memory/evaluate.js';
import { evaluateQuery } from '../../src/engine/memory/evaluate-query.js';
import { memoryEngine } from '../../src/engine/memory/engine.js';
import { bind } from '../../src/compile/bind.js';
import { format } from '../../src/format.js';
import { startServer } from '../../src/server/server.js';
import type { RunningServer } from '../../src/server/server.js';
import { parse } from '../../src/syntax/parse.js';
import { loadCases, loadDatasets, withNulls } from '../helpers/cases.js';
import type { Case, CaseError } from '../helpers/cases.js';
import { tableOf } from '../helpers/tables.js';
import { isDeepFrozen, spanInside, spanProblems, stripSpans } from '../helpers/spans.js';
import { withoutRank } from '../helpers/rank.js';
import { openShapedTargets, runShapedCase } from '../helpers/shaped-cases.js';
import type { ShapedTargets } from '../helpers/shaped-cases.js';

const cases = loadCases();
const datasets = loadDatasets();
const tables: Record<string, Table> = Object.fromEntries(Object.values(datasets).map((d) => [d.name, tableOf(d)]));
const memory = memoryEngine(Object.values(tables));

/** Errors raised while compiling (binding included) rather than while parsing. */
const compileCodes: ReadonlySet<QueryErrorCode> = new Set(['OR_ACROSS_FIELDS', 'AND_INSIDE_OR', 'TARGET_CANNOT_EXPRESS', 'EMPTY_RESOURCE', 'NUL_IN_SQL', 'UNBOUND_PARAMETER', 'INVALID_PARAMETER']);
/** Errors that `evaluateQuery` must raise too: it cannot evaluate a value it does not have. */
const bindCodes: ReadonlySet<QueryErrorCode> = new Set(['UNBOUND_PARAMETER', 'INVALID_PARAMETER']);

let server: RunningServer;
let client: DatastoreClient;
let server212: RunningServer;
let client212: DatastoreClient;
let ckanSql: CkanSql;
let shaped: ShapedTargets;
/** The datasets shaped cases read (typed fields: PostgreSQL holds one type per column). */
const shapedTables = [...new Set(cases.filter((c) => c.mode === 'shaped').flatMap((c) => [c.data!, ...joinedNames(c.query)]))]
  .filter((name) => tables[name] !== undefined)
  .map((name) => tables[name]!);

beforeAll(async () => {
  server = await startServer({ tables: Object.values(tables), port: 0 });
  client = connect({ url: server.url, retries: 0 });
  // The same data answered as CKAN 2.12; the client finds that out itself (status_show).
  server212 = await startServer({ tables: Object.values(tables), port: 0, ckan: '2.12' });
  client212 = connect({ url: server212.url, retries: 0 });
  ckanSql = await openCkanSql(Object.values(tables));
  shaped = await openShapedTargets(shapedTables, ckanSql);
}, 120_000); // PGlite starts here: slow when the machine is busy

afterAll(async () => {
  await client?.close();
  await server?.close();
  await client212?.close();
  await server212?.close();
  await shaped?.close();
  await ckanSql?.close();
});

/** The resources a query joins, by the name after each `join`. */
function joinedNames(query: string): string[] {
  return [...query.matchAll(/\b(?:join|union)\s+(\w+)/g)].map((m) => m[1]!);
}

function title(c: Case): string {
  const text = c.query === '' ? '(empty query)' : c.query.replace(/\r/g, '\\r').replace(/\n/g, '\\n').replace(/\t/g, '\\t');
  return c.params === undefined ? text : `${text}  with ${JSON.stringify(c.params)}`;
}

/** Runs `fn` and returns what it threw; fails the test when it returns normally. */
function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  expect.fail('expected an error, but it returned normally');
}

async function rejected(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  expect.fail('expected an error, but it resolved');
}

/** The error is a QueryError with the case's code, and its span covers the case's token. */
function expectQueryError(error: unknown, expected: CaseError, source: string): void {
  expect(error).toBeInstanceOf(QueryError);
  const e = error as QueryError;
  expect({ code: e.code, message: e.message }).toMatchObject({ code: expected.code });
  expect(e.message.length).toBeGreaterThan(0);
  expect(spanInside(e.span, source.length), `span ${e.span.start}..${e.span.end} inside the source`).toBe(true);
  if (expected.token === '') {
    // The end of the input: nothing but blanks and comments from the span on.
    const rest = source.slice(e.span.start);
    expect(/^(?:\s|--[^\r\n]*)*$/.test(rest), `an error at the end of input points after the last token, not before ${JSON.stringify(rest)}`).toBe(true);
  } else {
    const at = expected.tokenAt ?? source.indexOf(expected.token);
    expect(source.startsWith(expected.token, at), 'the case token occurs in the query').toBe(true);
    const covered = source.slice(e.span.start, e.span.end);
    expect(
      e.span.start <= at && e.span.end >= at + expected.token.length,
      `span ${e.span.start}..${e.span.end} (${JSON.stringify(covered)}) covers ${JSON.stringify(expected.token)} at ${at}`,
    ).toBe(true);
  }
  if (e.code === 'UNEXPECTED_TOKEN' || e.code === 'UNEXPECTED_END_OF_INPUT') {
    expect(e.expected.length, 'says what was expected').toBeGreaterThan(0);
  }
  if (e.code === 'UNEXPECTED_TOKEN') expect(e.found, 'says what was found').toBeTruthy();
  if (expected.hint !== undefined) expect(e.hint ?? '').toContain(expected.hint);
}

/** Records compared field by field, a missing key equal to null (semantics.md, Data model). */
function expectRecords(actual: readonly Row[], expected: readonly Row[], request: SearchRequest): void {
  const keys = (a: Row, b: Row | undefined) => new Set([...Object.keys(a), ...Object.keys(b ?? {})]);
  const pairs = actual.map((record, i) => withNulls(record, keys(record, expected[i])));
  const wanted = expected.map((record, i) => withNulls(record, keys(record, actual[i])));
  expect(pairs).toEqual(wanted);
  if (request.fields !== undefined) {
    for (const record of actual) expect(Object.keys(record), 'projection keeps the order of fields').toEqual(request.fields);
  }
}

function expectResult(result: SearchResult, c: Case, request: SearchRequest): void {
  if (c.records !== undefined) expectRecords(result.records, c.records, request);
  if (c.count !== undefined) expect(result.records.length).toBe(c.count);
  if (c.total !== undefined) expect(result.total).toBe(c.total);
  if (c.result !== undefined) expect(result).toMatchObject(c.result);
}

function expectValidationError(error: unknown, expected: NonNullable<Case['evalError']>): void {
  expect(error).toBeInstanceOf(DatastoreError);
  const e = error as DatastoreError;
  expect({ status: e.status, body: e.body }).toEqual({ status: expected.status, body: expected.body });
}

const byTopic = new Map<string, Case[]>();
for (const c of cases) byTopic.set(c.topic, [...(byTopic.get(c.topic) ?? []), c]);

test('the suite has at least 100 cases', () => {
  expect(cases.length).toBeGreaterThanOrEqual(100);
});

test('the shaped sections cover every aggregate construct, operator and function', () => {
  const shapedCases = cases.filter((c) => c.mode === 'shaped');
  const text = shapedCases.map((c) => c.query).join('\n');
  const constructs = [
    'group by', 'count(*)', 'count(credits)', 'count(distinct', 'sum(', 'avg(', 'min(', 'max(', ' as ', 'having', 'year(', 'month(', 'week(', 'day(',
    'bucket(', 'facet', ' top ', ' by month', ' by 5', 'left join', ' join ', 'r.student',
    // expressions and functions (docs/expressions.md)
    ' * ', ' / ', ' % ', ' - ', '-year', ' || ', 'case when', 'cast(', '::', 'round(', 'abs(', 'floor(', 'ceil(', 'lower(', 'upper(', 'length(',
    'substr(', 'trim(', 'concat(', 'coalesce(', 'nullif(', 'greatest(', 'least(', 'date_part(', 'date_trunc(', 'extract(',
    // windows (docs/expressions.md)
    'row_number() over', 'rank() over', 'dense_rank() over', 'lag(', 'lead(', 'count(*) over', 'sum(credits) over', 'avg(credits) over',
    'min(year) over', 'max(year) over', 'partition by', 'qualify',
    // aggregates of expressions, and `*` beside other items
    'sum(grade * ', 'avg(coalesce(', 'max(lower(', 'count(distinct lower(', 'having sum(grade * ', 'select *, ', ', * ',
    // unions (docs/expressions.md)
    ' union ', '_resource',
  ];
  for (const construct of constructs) expect(text, construct).toContain(construct);
  expect(new Set(shapedCases.map((c) => c.topic))).toEqual(new Set(['group-by', 'aggregate-functions', 'having', 'buckets', 'facets', 'joins', 'expressions', 'functions', 'windows', 'unions']));
  // each section states the sql target's text and a portal's plan somewhere
  for (const topic of new Set(shapedCases.map((c) => c.topic))) {
    const mine = shapedCases.filter((c) => c.topic === topic);
    expect(mine.some((c) => c.targets?.sql !== undefined), `${topic}: an sql text`).toBe(true);
    expect(mine.some((c) => c.plans !== undefined), `${topic}: a plan`).toBe(true);
  }
});

for (const [topic, topicCases] of byTopic) {
  describe(topic, () => {
    for (const c of topicCases) {
      test(title(c), async () => {
        const source = c.query;
        const expected = c.error;

        // 1. parse
        if (expected !== undefined && !compileCodes.has(expected.code) && c.mode !== 'shaped') {
          const error = thrown(() => parse(source));
          expectQueryError(error, expected, source);
          expect((error as QueryError).source, 'a parse error carries its source').toBe(source);
          return;
        }
        const query: Query = parse(source);
        expect(spanProblems(query, source)).toEqual([]);

        // 2. format round trip
        const text = format(query);
        expect(stripSpans(parse(text)), `parse(format(q)) equals q; format gave:\n${text}`).toEqual(stripSpans(query));
        expect(format(parse(text)), 'format is idempotent').toBe(text);
        if (c.format !== undefined) expect(text).toBe(c.format);

        // A grouped, joined or faceted query: every target's plan and answer (helpers/shaped-cases.ts).
        if (c.mode === 'shaped') {
          await runShapedCase(c, query, shaped, shapedTables);
          return;
        }

        // 3. compile, and plan for every target
        if (expected !== undefined) {
          const error = thrown(() => compile(query, c.params));
          expectQueryError(error, expected, source);
          const fromText = thrown(() => compile(source, c.params));
          expectQueryError(fromText, expected, source);
          expect((fromText as QueryError).source, 'an error from compile(text) carries its source').toBe(source);
          if (bindCodes.has(expected.code) && c.data !== undefined) {
            expectQueryError(thrown(() => evaluateQuery(query, tables[c.data!]!, c.params)), expected, source);
          }
          return;
        }
        const plans = Object.fromEntries(targets.map((t) => [t, plan(query, { target: t, params: c.params })])) as Record<Target, Plan>;
        for (const t of targets) {
          const wanted = c.targets?.[t];
          if (wanted === undefined) continue;
          if (typeof wanted === 'string') {
            expect((plans[t].request as SqlRequest).sql, 'the sql text').toBe(wanted);
            continue;
          }
          expect(plans[t].request, `the ${t} request`).toEqual(wanted.request);
          expect(Object.keys(plans[t].request), `${t}: keys in the order of language.md`).toEqual(Object.keys(wanted.request));
          expect(plans[t].residual === undefined ? undefined : format(plans[t].residual!), `the ${t} residual`).toBe(wanted.residual);
        }
        // The sql text reads back (fromSql) into a query that writes the same SQL.
        const sqlText = (plans.sql.request as SqlRequest).sql;
        const readBack = fromSql(sqlText);
        expect(compile(readBack, { target: 'sql' }).sql, 'fromSql(sql) writes the same SQL').toBe(sqlText);
        // A where that 2.11 cannot say; `select distinct` alone is applied locally on 2.11 too, but a request can say it.
        const local = plans['ckan-2.11'].local.where;
        if (local) {
          // compile alone refuses what needs a residual, naming the construct at its span.
          const error = thrown(() => compile(query, c.params)) as QueryError;
          expect(['TARGET_CANNOT_EXPRESS', 'OR_ACROSS_FIELDS', 'AND_INSIDE_OR']).toContain(error.code);
          expect(spanInside(error.span, source.length)).toBe(true);
          expect(c.request, 'a case whose query runs as a plan has no single request').toBeUndefined();
        }
        const request = local ? (plans['ckan-2.11'].request as SearchRequest) : compile(query, c.params);
        if (!local && !plans['ckan-2.11'].local.distinct) {
          expect(request, 'plan and compile agree').toEqual(plans['ckan-2.11'].request);
        }
        if (!local) {
          if (c.request !== undefined) {
            expect(request).toEqual(c.request);
            expect(Object.keys(request), 'keys in the order of language.md').toEqual(Object.keys(c.request));
          }
          expect(isDeepFrozen(request), 'the request is deeply frozen').toBe(true);
          expect(JSON.parse(JSON.stringify(request)), 'the request round-trips through JSON').toEqual(request);
          expect(compile(source, c.params)).toEqual(request);
          expect(compile(fromRequest(request)), 'compile(fromRequest(r)) equals r').toEqual(request);
        }

        if (c.data === undefined) return;
        const dataset = datasets[c.data]!;
        const table = tables[c.data]!;

        // 4. evaluate (the request, or the plan: its request, then the residual locally),
        // 5. evaluateQuery, 6. the server (the client runs the plan), 7. the sql text on PGlite
        if (c.evalError !== undefined) {
          if (!local) expectValidationError(thrown(() => evaluate(request, table)), c.evalError);
          expectValidationError(thrown(() => evaluateQuery(query, table, c.params)), c.evalError);
          expectValidationError(await rejected(memory.query!(bind(query, c.params ?? {}))), c.evalError);
          expectValidationError(await rejected(client.search(local ? source : request, { params: c.params })), c.evalError);
          // CKAN 2.12 words some messages differently; the status is the same.
          expect((await rejected(client212.search(source, { params: c.params })) as DatastoreError).status).toBe(c.evalError.status);
          return;
        }
        if (c.mode === 'rows') {
          if (!local) expectResult(evaluate(request, dataset.rows), c, request);
          expectResult(evaluateQuery(query, dataset.rows, c.params), c, request);
          return;
        }
        const projected = (query.select === undefined ? request : { ...request, fields: query.select.items.map((item) => (item.value as Field).name) }) as SearchRequest;
        if (local) {
          expectResult(evaluatePlan(plans['ckan-2.11'], table), c, projected);
        } else {
          expectResult(evaluate(request, table), c, request);
        }
        const reference = evaluateQuery(query, table, c.params);
        expectResult(reference, c, projected);
        // 4b. the memory engine's whole query, in one pass
        const stream = await memory.query!(bind(query, c.params ?? {}), { total: true });
        const streamed: Row[] = [];
        for await (const batch of stream.batches) streamed.push(...batch);
        expect({ fields: stream.fields, records: streamed, total: stream.total }, 'engine.query').toEqual({ fields: reference.fields, records: reference.records, total: reference.total });
        expect(evaluateQuery(readBack, table).records, 'the query fromSql reads back keeps the same records').toEqual(reference.records);
        if (!local && dataset.fields === undefined) {
          // Plain rows, no field list: the evaluator infers the same fields and gives the same records.
          expectResult(evaluate(request, dataset.rows), c, request);
        }
        // The client plans what 2.11 cannot say (distinct too), counting the total as it goes.
        const served = withoutRank(await client.search(local || plans['ckan-2.11'].local.distinct ? query : request, { params: c.params, total: true }));
        expectResult(served, c, projected);
        // CKAN 2.12: the plan over the evaluator, and the client (which finds out it talks to 2.12) over HTTP.
        const plan212 = plans['ckan-2.12'];
        const projected212 = (query.select === undefined || plan212.residual === undefined
          ? plan212.request
          : { ...(plan212.request as SearchRequest), fields: query.select.items.map((item) => (item.value as Field).name) }) as SearchRequest;
        if (query.search === undefined) expectResult(evaluatePlan(plan212, table), c, projected212);
        expectResult(withoutRank(await client212.search(query, { params: c.params, total: true })), c, projected212);
        if (local) expect(client212.target, 'the client found CKAN 2.12').toBe('ckan-2.12');
        if (c.sqlDiffers === undefined && query.search === undefined && dataset.fields !== undefined) {
          // A table without declared fields may mix types in a column, which PostgreSQL cannot hold.
          const sql = await ckanSql.run((plans.sql.request as SqlRequest).sql, table);
          expect(sql.records.map((r) => withNulls(r, Object.keys(r))), 'the sql text on PGlite').toEqual(
            reference.records.map((r) => withNulls(r, Object.keys(r))),
          );
          // The total rides on the records; an empty page carries none (the client counts separately then).
          if (sql.records.length > 0) expect(sql.total, 'the sql total').toBe(reference.total);
        }
      });
    }
  });
}

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
import type { Query } from '../../src/ast.js';
import { connect } from '../../src/client/connect.js';
import type { DatastoreClient } from '../../src/client/types.js';
import { compile } from '../../src/compile/compile.js';
import { fromRequest } from '../../src/compile/from-request.js';
import type { Row, SearchRequest, SearchResult, Table } from '../../src/datastore/types.js';
import { DatastoreError, QueryError } from '../../src/errors.js';
import type { QueryErrorCode } from '../../src/errors.js';
import { evaluate } from '../../src/engine/memory/evaluate.js';
import { evaluateQuery } from '../../src/engine/memory/evaluate-query.js';
import { format } from '../../src/format.js';
import { startServer } from '../../src/server/server.js';
import type { RunningServer } from '../../src/server/server.js';
import { parse } from '../../src/syntax/parse.js';
import { loadCases, loadDatasets, withNulls } from '../helpers/cases.js';
import type { Case, CaseError } from '../helpers/cases.js';
import { tableOf } from '../helpers/tables.js';
import { isDeepFrozen, spanInside, spanProblems, stripSpans } from '../helpers/spans.js';
import { withoutRank } from '../helpers/rank.js';

const cases = loadCases();
const datasets = loadDatasets();
const tables: Record<string, Table> = Object.fromEntries(Object.values(datasets).map((d) => [d.name, tableOf(d)]));

/** Errors raised while compiling (binding included) rather than while parsing. */
const compileCodes: ReadonlySet<QueryErrorCode> = new Set(['OR_ACROSS_FIELDS', 'AND_INSIDE_OR', 'UNBOUND_PARAMETER', 'INVALID_PARAMETER']);
/** Errors that `evaluateQuery` must raise too: it cannot evaluate a value it does not have. */
const bindCodes: ReadonlySet<QueryErrorCode> = new Set(['UNBOUND_PARAMETER', 'INVALID_PARAMETER']);

let server: RunningServer;
let client: DatastoreClient;

beforeAll(async () => {
  server = await startServer({ tables: Object.values(tables), port: 0 });
  client = connect({ url: server.url, retries: 0 });
});

afterAll(async () => {
  await client?.close();
  await server?.close();
});

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

for (const [topic, topicCases] of byTopic) {
  describe(topic, () => {
    for (const c of topicCases) {
      test(title(c), async () => {
        const source = c.query;
        const expected = c.error;

        // 1. parse
        if (expected !== undefined && !compileCodes.has(expected.code)) {
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

        // 3. compile
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
        const request = compile(query, c.params);
        if (c.request !== undefined) {
          expect(request).toEqual(c.request);
          expect(Object.keys(request), 'keys in the order of language.md').toEqual(Object.keys(c.request));
        }
        expect(isDeepFrozen(request), 'the request is deeply frozen').toBe(true);
        expect(JSON.parse(JSON.stringify(request)), 'the request round-trips through JSON').toEqual(request);
        expect(compile(source, c.params)).toEqual(request);
        expect(compile(fromRequest(request)), 'compile(fromRequest(r)) equals r').toEqual(request);

        if (c.data === undefined) return;
        const dataset = datasets[c.data]!;
        const table = tables[c.data]!;

        // 4. evaluate, 5. evaluateQuery, 6. the server
        if (c.evalError !== undefined) {
          expectValidationError(thrown(() => evaluate(request, table)), c.evalError);
          expectValidationError(thrown(() => evaluateQuery(query, table, c.params)), c.evalError);
          expectValidationError(await rejected(client.search(request)), c.evalError);
          return;
        }
        if (c.mode === 'rows') {
          expectResult(evaluate(request, dataset.rows), c, request);
          expectResult(evaluateQuery(query, dataset.rows, c.params), c, request);
          return;
        }
        const result = evaluate(request, table);
        expectResult(result, c, request);
        expectResult(evaluateQuery(query, table, c.params), c, request);
        if (dataset.fields === undefined) {
          // Plain rows, no field list: the evaluator infers the same fields and gives the same records.
          expectResult(evaluate(request, dataset.rows), c, request);
        }
        const served = withoutRank(await client.search(request));
        expectResult(served, c, request);
      });
    }
  });
}

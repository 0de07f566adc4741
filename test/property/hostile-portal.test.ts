/**
 * Property: a portal that answers anything never crashes ckql. A small
 * `node:http` stub on 127.0.0.1:0 answers `status_show`, `datastore_search`,
 * `datastore_search_sql`, `package_show`, `resource_show`, `package_search`
 * and `datastore_info` with a valid CKAN answer after generated mutations:
 * a field removed, made null, of the wrong type, a huge or non-finite
 * number, nested junk; or the whole body not JSON, cut short, empty, of
 * another content type, under another status. The client and the CLI (in
 * process) are driven through it; every outcome must be an answer or a
 * typed error with a code (`DatastoreError`, `QueryError`, `ToolError`),
 * never a `TypeError` or the CLI's "unexpected error".
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect } from '../../src/client/connect.js';
import { allDatasets, datastoreTables, searchDatasets, showDataset } from '../../src/client/discovery.js';
import { readDictionary } from '../../src/client/dictionary.js';
import { DatastoreError, QueryError, ToolError } from '../../src/errors.js';
import { ckql } from '../cli/run-ckql.js';
import { propertyParameters, scaledRuns } from '../helpers/arbitraries.js';

const RESOURCE = '5b3c9a8e-2f41-4d6b-9c0e-7a1d2e3f4b5c';
const DATASET = 'd0a1b2c3-d4e5-4f60-8a7b-9c0d1e2f3a4b';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

const FIELDS: Json = [
  { id: '_id', type: 'int' },
  { id: 'a', type: 'text' },
  { id: 'n', type: 'numeric' },
];
const RECORDS: Json = [
  { _id: 1, a: 'x', n: 5 },
  { _id: 2, a: 'y', n: 7.5 },
];
const RESOURCE_META: Json = { id: RESOURCE, name: 'res', package_id: DATASET, datastore_active: true, format: 'CSV', url: 'http://stub/res.csv' };
const PACKAGE: Json = {
  id: DATASET,
  name: 'ds',
  title: 'A dataset',
  notes: 'about it',
  organization: { name: 'org', title: 'An organisation' },
  metadata_modified: '2026-01-02T03:04:05',
  resources: [RESOURCE_META],
};

/** The valid `result` of each action, as CKAN 2.11 writes it (docs/ckan-2.11-reference.md). */
function validResult(action: string): Json {
  switch (action) {
    case 'status_show':
      return { ckan_version: '2.11.3', site_title: 'Stub', site_url: 'http://stub', extensions: ['datastore'] };
    case 'datastore_search':
      return {
        include_total: true,
        limit: 100,
        records_format: 'objects',
        resource_id: RESOURCE,
        total_estimation_threshold: null,
        records: RECORDS,
        fields: FIELDS,
        _links: { start: '/api/action/datastore_search', next: '/api/action/datastore_search?offset=100' },
        total: 2,
        total_was_estimated: false,
      };
    case 'datastore_search_sql':
      return {
        sql: 'SELECT …',
        records: [
          { _id: 1, a: 'x', n: 5, _ckql_total: 2 },
          { _id: 2, a: 'y', n: 7.5, _ckql_total: 2 },
        ],
        fields: [...(FIELDS as Json[]), { id: '_ckql_total', type: 'int8' }],
      };
    case 'package_show':
      return PACKAGE;
    case 'resource_show':
      return RESOURCE_META;
    case 'package_search':
      return { count: 1, results: [PACKAGE], sort: 'score desc', facets: {} };
    case 'datastore_info':
      return { meta: { id: RESOURCE, count: 2, aliases: [] }, fields: FIELDS };
    default:
      return null;
  }
}

// ------------------------------------------------------------------ mutations

/** A value in place of a valid one. Numbers written raw (`1e999`, 2^64) go through `RAW` text. */
const RAW = '\u0000raw:';
const junk: fc.Arbitrary<Json> = fc.oneof(
  fc.constant<Json>(null),
  fc.constantFrom<Json>(null, true, false, 0, -1, 1.5, '', 'x', [], {}, [null], { id: null }, [[[]]], `${RAW}1e999`, `${RAW}-1e999`, `${RAW}18446744073709551616`, `${RAW}-0`, 1e300, 2 ** 53 + 2, -(2 ** 31)),
  fc.jsonValue({ maxDepth: 2 }) as fc.Arbitrary<Json>,
);

type Mutation =
  /** where: `result` or one of its own keys (most of what is read); anywhere inside `result`; anywhere in the envelope */
  | { readonly kind: 'remove' | 'replace'; readonly where: 'result' | 'inside' | 'anywhere'; readonly at: number; readonly value: Json }
  | { readonly kind: 'not-json' | 'truncate' | 'empty' | 'html'; readonly at: number }
  | { readonly kind: 'status'; readonly status: number }
  /** CKAN's error envelope in place of the success, with its own parts as generated */
  | { readonly kind: 'ckan-error'; readonly type: string; readonly parts: Record<string, Json> }
  | { readonly kind: 'content-type'; readonly type: string };

const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ kind: fc.constantFrom('remove' as const, 'replace' as const), where: fc.constantFrom('result' as const, 'inside' as const, 'anywhere' as const), at: fc.nat(), value: junk }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constantFrom('not-json' as const, 'truncate' as const, 'empty' as const, 'html' as const), at: fc.nat() }) },
  // no 429/502/503/504: those are retried with backoff, and what is retried is the transport's, tested in test/client/faults.test.ts
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('status' as const), status: fc.constantFrom(200, 201, 204, 301, 400, 403, 404, 409, 500) }) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('ckan-error' as const),
      type: fc.constantFrom('Not Found Error', 'Validation Error', 'Authorization Error', 'Search Query Error', 'Internal Error', ''),
      parts: fc.dictionary(fc.constantFrom('message', 'filters', 'fields', 'sort', 'q', 'info', 'resource_id', '__junk'), fc.oneof(junk, fc.constant<Json>(`Not found: Resource "${RESOURCE}" was not found.`), fc.constant<Json>(['invalid value "a"']))),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('content-type' as const), type: fc.constantFrom('text/html', 'application/octet-stream', 'text/plain; charset=latin1') }) },
);

/** Each action's mutations in one run (an action not named answers validly). */
const ACTIONS = ['status_show', 'datastore_search', 'datastore_search_sql', 'package_show', 'resource_show', 'package_search', 'datastore_info'] as const;
const mutations: fc.Arbitrary<Partial<Record<(typeof ACTIONS)[number], Mutation[]>>> = fc.record(
  Object.fromEntries(ACTIONS.map((action) => [action, fc.array(mutation, { maxLength: 3 })])) as Record<(typeof ACTIONS)[number], fc.Arbitrary<Mutation[]>>,
  { requiredKeys: ['datastore_search'] },
);

/** Every path into a value, parents before children: `[]` is the value itself. */
function paths(value: Json, prefix: (string | number)[] = []): (string | number)[][] {
  const found = [prefix];
  if (Array.isArray(value)) value.forEach((item, i) => found.push(...paths(item, [...prefix, i])));
  else if (value !== null && typeof value === 'object') for (const key of Object.keys(value)) found.push(...paths(value[key]!, [...prefix, key]));
  return found;
}

/** The value with the thing at `path` removed (an array item spliced out) or replaced. */
function edit(value: Json, path: readonly (string | number)[], change: { remove: true } | { value: Json }): Json {
  if (path.length === 0) return 'value' in change ? change.value : null;
  const [head, ...rest] = path;
  if (Array.isArray(value)) {
    const copy = [...value];
    if (rest.length === 0 && 'remove' in change) copy.splice(head as number, 1);
    else copy[head as number] = edit(copy[head as number]!, rest, change);
    return copy;
  }
  const copy = { ...(value as Record<string, Json>) };
  if (rest.length === 0 && 'remove' in change) delete copy[head as string];
  else copy[head as string] = edit(copy[head as string]!, rest, change);
  return copy;
}

interface Answer {
  status: number;
  contentType: string;
  body: string;
}

/** CKAN's envelope around the valid result, then the mutations, in order. */
function answerOf(action: string, changes: readonly Mutation[]): Answer {
  let envelope: Json = { help: `http://stub/api/3/action/help_show?name=${action}`, success: true, result: validResult(action) };
  const answer: Answer = { status: 200, contentType: 'application/json;charset=utf-8', body: '' };
  let text: ((json: string) => string) | undefined;
  for (const change of changes) {
    switch (change.kind) {
      case 'remove':
      case 'replace': {
        const inResult = (path: (string | number)[]): boolean => path[0] === 'result' && (change.where === 'inside' || path.length <= 2);
        const all: (string | number)[][] = change.where === 'anywhere' ? paths(envelope) : paths(envelope).filter(inResult);
        if (all.length === 0) break;
        const path: (string | number)[] = all[change.at % all.length]!;
        envelope = change.kind === 'remove' && path.length > 0 ? edit(envelope, path, { remove: true }) : edit(envelope, path, { value: change.value });
        break;
      }
      case 'not-json':
        text = () => 'Internal Server Error: upstream said no';
        break;
      case 'truncate':
        text = (json) => json.slice(0, change.at % Math.max(1, json.length));
        break;
      case 'empty':
        text = () => '';
        break;
      case 'html':
        text = () => '<!doctype html><html><body><h1>Welcome</h1></body></html>';
        break;
      case 'status':
        answer.status = change.status;
        break;
      case 'ckan-error':
        envelope = { help: 'http://stub/api/3/action/help_show', success: false, error: { ...change.parts, __type: change.type } };
        if (answer.status === 200) answer.status = change.type === 'Not Found Error' ? 404 : change.type === 'Authorization Error' ? 403 : 409;
        break;
      case 'content-type':
        answer.contentType = change.type;
        break;
    }
  }
  const json = JSON.stringify(envelope).replace(/"\\u0000raw:([^"]*)"/g, '$1');
  answer.body = text === undefined ? json : text(json);
  return answer;
}

// ------------------------------------------------------------------ the stub

let current: Partial<Record<string, Mutation[]>> = {};
/** a fixed `result` for an action, in place of the generated answer (the regression tests) */
let fixed: Partial<Record<string, Json>> = {};
let url = '';
/** where the exports write */
const work = mkdtempSync(join(tmpdir(), 'ckql-hostile-'));
const server = createServer((req: IncomingMessage, res: ServerResponse) => {
  req.resume();
  req.on('end', () => {
    const action = /\/api\/(?:3\/)?action\/(\w+)/.exec(req.url ?? '')?.[1] ?? '';
    const given = fixed[action];
    const answer = given === undefined ? answerOf(action, current[action] ?? []) : { status: 200, contentType: 'application/json', body: JSON.stringify({ success: true, result: given }).replace(/"\\u0000raw:([^"]*)"/g, '$1') };
    // A 204 or a 3xx without a Location as a portal behind a bad proxy might send them.
    res.writeHead(answer.status, { 'content-type': answer.contentType });
    res.end(answer.status === 204 ? undefined : answer.body);
  });
});

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  // the CLI's modules loaded before the time budget starts
  await ckql(['query', `from "${RESOURCE}" limit 1`, '--url', url]);
}, 30_000);
afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
  rmSync(work, { recursive: true, force: true });
});

/** A typed error with a code, or no error: anything else is a crash. */
function expectTyped(outcome: unknown, what: string): void {
  if (outcome === undefined) return;
  const typed = outcome instanceof DatastoreError || outcome instanceof QueryError || outcome instanceof ToolError;
  expect(typed, `${what}: ${outcome instanceof Error ? (outcome.stack ?? outcome.message) : String(outcome)}`).toBe(true);
  expect(typeof (outcome as { code?: unknown }).code, what).toBe('string');
}

/** What a search result promises its reader (`SearchResult`): a typed error was due where it does not hold. */
function expectSound(value: unknown, what: string): void {
  if (typeof value !== 'object' || value === null || !('records' in value)) return;
  const result = value as Record<string, unknown>;
  expect(typeof result.resource_id, `${what}: resource_id`).toBe('string');
  expect(Array.isArray(result.records) && result.records.every((r) => typeof r === 'object' && r !== null && !Array.isArray(r)), `${what}: records`).toBe(true);
  expect(Array.isArray(result.fields) && result.fields.every((f: unknown) => typeof (f as { id?: unknown }).id === 'string' && typeof (f as { type?: unknown }).type === 'string'), `${what}: fields`).toBe(true);
  if (result.total !== undefined) expect(Number.isSafeInteger(result.total) && (result.total as number) >= 0, `${what}: total ${String(result.total)}`).toBe(true);
}

async function outcomeOf(run: () => Promise<unknown>, what: string): Promise<unknown> {
  try {
    expectSound(await run(), what);
    return undefined;
  } catch (error) {
    if (error instanceof Error && error.name === 'AssertionError') throw error;
    return error === undefined ? new Error('undefined was thrown') : error;
  }
}

/** What the library is asked: a search CKAN 2.11 says whole, one that asks the target, a plan, a grouping, paging, sql, names. */
const libraryRuns: readonly [string, (client: ReturnType<typeof connect>) => Promise<unknown>][] = [
  ['search, one request', (client) => client.search(`from "${RESOURCE}" where a = x limit 5`)],
  ['search, the target asked', (client) => client.search(`from "${RESOURCE}" where n >= 1 limit 5`)],
  ['search, a plan with total', (client) => client.search(`from "${RESOURCE}" where a != z`, { total: true })],
  ['search, grouped', (client) => client.search(`from "${RESOURCE}" group by a select a, count(*) as c, sum(n)`)],
  ['searchAll', async (client) => { for await (const _row of client.searchAll(`from "${RESOURCE}"`, { pageSize: 1 })) void _row; }],
  ['explain', (client) => client.explain(`from "${RESOURCE}" where n >= 1 and a != z`)],
  ['a dataset/resource name', (client) => client.search('from "ds/res" limit 2')],
  ['the data dictionary', (client) => readDictionary(client, RESOURCE)],
  ['datasets', (client) => searchDatasets(client, { text: 'x' })],
  ['a dataset', (client) => showDataset(client, 'ds')],
  ['the datastore tables', (client) => datastoreTables(client)],
  ['every dataset', async (client) => { for await (const _dataset of allDatasets(client)) void _dataset; }],
];

describe('a portal answer without what it must hold', () => {
  it('a datastore_search result without resource_id is INVALID_RESPONSE in the CLI (it was "unexpected error: Cannot read properties of undefined")', async () => {
    const { resource_id: _dropped, ...rest } = validResult('datastore_search') as Record<string, Json>;
    fixed = { datastore_search: rest };
    try {
      const result = await ckql(['query', `from "${RESOURCE}" where a = x limit 3`, '--url', url]);
      expect(result.stderr).not.toMatch(/unexpected error/);
      expect(result.stderr).toContain('error[INVALID_RESPONSE]');
      expect(result.stderr).toContain('answered a datastore_search result whose resource_id is not a text');
      expect(result.code).toBe(1);
    } finally {
      fixed = {};
    }
  });

  it('an export by datastore_search_sql whose answer is null, or holds a record that is null, is INVALID_RESPONSE (it was a TypeError)', async () => {
    for (const given of [null, { records: [null], fields: FIELDS }]) {
      fixed = { datastore_search_sql: given };
      try {
        const result = await ckql(['export', `from "${RESOURCE}" where n >= 1`, '-o', join(work, 'sql.ndjson'), '--via', 'sql', '--url', url]);
        expect(result.stderr, JSON.stringify(given)).not.toMatch(/unexpected error/);
        expect(result.stderr, JSON.stringify(given)).toContain('error[INVALID_RESPONSE]');
        expect(result.stderr, JSON.stringify(given)).toContain('answered a datastore_search_sql result');
      } finally {
        fixed = {};
      }
    }
  });
});

/** The outcome of a run that must end: a run still going after `ms` is a failure (a loop without end). */
async function ending(run: () => Promise<unknown>, ms = 3_000): Promise<unknown> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_resolve, reject) => (timer = setTimeout(() => reject(new Error(`still running after ${ms} ms`)), ms)));
  try {
    return await Promise.race([outcomeOf(run, 'ending'), late]);
  } finally {
    clearTimeout(timer);
  }
}

describe('paging a portal that does not page', () => {
  it("lists the DataStore's tables of a portal whose pages repeat and say no limit (it asked for the same page without end)", async () => {
    const { limit: _dropped, ...rest } = validResult('datastore_search') as Record<string, Json>;
    const records: Json = [{ _id: 1, name: 'a', alias_of: null }, { _id: 2, name: 'b', alias_of: null }];
    const client = connect({ url, retries: 0 });
    try {
      // no limit said: the page is short of ours, so the last
      fixed = { datastore_search: { ...rest, records } };
      let tables: unknown;
      expect(await ending(async () => (tables = await datastoreTables(client)))).toBeUndefined();
      expect(tables).toEqual([{ id: 'a', aliases: [] }, { id: 'b', aliases: [] }]);
      // a limit of 2 said, and the same page at every offset
      fixed = { datastore_search: { ...rest, limit: 2, records } };
      const error = await ending(() => datastoreTables(client));
      expect(error).toBeInstanceOf(DatastoreError);
      expect((error as DatastoreError).code).toBe('INVALID_RESPONSE');
      expect((error as DatastoreError).message).toContain('the same records');
    } finally {
      fixed = {};
      await client.close();
    }
  });

  it('refuses a package_search count that is no count, and a catalogue that ignores start (each paged without end)', async () => {
    const client = connect({ url, retries: 0 });
    const every = async (): Promise<void> => {
      for await (const _dataset of allDatasets(client)) void _dataset;
    };
    try {
      for (const [count, said] of [[`${RAW}1e999`, 'without a count'], [2 ** 52, 'with datasets it gave before']] as const) {
        fixed = { package_search: { count, results: [PACKAGE] } };
        const error = await ending(every);
        expect(error, String(count)).toBeInstanceOf(DatastoreError);
        expect((error as DatastoreError).code).toBe('INVALID_RESPONSE');
        expect((error as DatastoreError).message).toContain(said);
      }
    } finally {
      fixed = {};
      await client.close();
    }
  });
});

describe('a hostile portal', () => {
  it('never makes the library throw anything but a typed error', { timeout: 60_000 }, async () => {
    const made = (target?: 'sql' | 'ckan-2.12') => connect({ url, retries: 0, timeout: 5_000, ...(target === undefined ? {} : { target }) });
    await fc.assert(
      fc.asyncProperty(mutations, fc.constantFrom(...libraryRuns), fc.constantFrom(undefined, 'sql' as const, 'ckan-2.12' as const), async (changes, [what, run], target) => {
        current = changes;
        // a client per run: what one learnt of the portal (its target, its names) is not carried to the next
        const client = made(target);
        try {
          expectTyped(await outcomeOf(() => run(client), what), `${what} (${target ?? 'detected'})`);
        } finally {
          await client.close();
        }
      }),
      propertyParameters(scaledRuns(600)),
    );
  });

  it('never makes the CLI report an unexpected error', { timeout: 60_000 }, async () => {
    const commands: readonly (readonly string[])[] = [
      ['query', `from "${RESOURCE}" where a = x limit 3`],
      ['query', `from "${RESOURCE}" where n >= 1`, '--format', 'table'],
      ['query', `from "${RESOURCE}" group by a select a, count(*) as c`, '--format', 'csv'],
      ['query', `from "${RESOURCE}" where n >= 1`, '--target', 'sql', '--format', 'markdown'],
      ['query', 'from "ds/res" limit 2'],
      ['query', `from "${RESOURCE}"`, '--all', '--format', 'ndjson'],
      ['explain', `from "${RESOURCE}" where n >= 1`],
      ['fields', RESOURCE],
      ['datasets', 'x'],
      ['datasets', '--all'],
      ['resources'],
      ['export', RESOURCE, '-o', join(work, 'r.csv')],
      ['export', `from "${RESOURCE}" where n >= 1`, '-o', join(work, 'q.ndjson'), '--via', 'sql'],
      ['export', RESOURCE, '-o', join(work, 'o.csv'), '--via', 'offset', '--no-fields-file'],
    ];
    await fc.assert(
      fc.asyncProperty(mutations, fc.constantFrom(...commands), async (changes, command) => {
        current = changes;
        const result = await ckql([...command, '--url', url, '--timeout', '5']);
        const said = `${command.join(' ')}: exit ${String(result.code)}\n${result.stderr}`;
        expect(result.stderr, said).not.toMatch(/unexpected error|this is a bug/);
        expect([0, 1, 2, 3, 4, 5], said).toContain(result.code);
      }),
      propertyParameters(scaledRuns(300)),
    );
  });
});

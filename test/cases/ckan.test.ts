/**
 * The CKAN section of the case suite: each `test/cases/ckan/<name>.json`
 * is one HTTP exchange with `ckql serve` as CKAN 2.11.5 or 2.12, and the
 * exact answer CKAN gives (docs/ckan-2.11-reference.md,
 * docs/ckan-2.12-reference.md). The test's title is the case's title.
 *
 * Case keys: `title`; `ckan` (`"2.11"`, the default, or `"2.12"`);
 * `method` (`GET`, `POST`); `path` (default `/api/3/action/datastore_search`);
 * one of `query` (the query string), `body` (a JSON body, sent as JSON),
 * `form` (a form body), `text` (a body sent as is, with `contentType`);
 * then the answer: `status`, and `response` (the whole JSON body, `{base}`
 * standing for the server's URL), `result` (the exact `result`), `error`
 * (the exact `error`), `records` (only `result.records`), or `raw` (the body
 * text). Unknown keys fail the suite, so a typo cannot skip a check.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { Agent, request } from 'undici';

import { startServer } from '../../src/server/server.js';
import type { RunningServer } from '../../src/server/server.js';
import type { FieldInfo, Row, Table } from '../../src/datastore/types.js';

const DIR = join(import.meta.dirname, 'ckan');
const KEYS = new Set(['title', 'ckan', 'method', 'path', 'query', 'body', 'form', 'text', 'contentType', 'status', 'response', 'result', 'error', 'records', 'raw']);

interface Case {
  readonly file: string;
  readonly title: string;
  readonly ckan?: '2.11' | '2.12';
  readonly method: 'GET' | 'POST';
  readonly path?: string;
  readonly query?: string;
  readonly body?: unknown;
  readonly form?: string;
  readonly text?: string;
  readonly contentType?: string;
  readonly status: number;
  readonly response?: unknown;
  readonly result?: unknown;
  readonly error?: unknown;
  readonly records?: unknown;
  readonly raw?: string;
}

function loadTables(): Table[] {
  return readdirSync(join(DIR, '_data'))
    .filter((name) => name.endsWith('.json'))
    .map((name) => {
      const data = JSON.parse(readFileSync(join(DIR, '_data', name), 'utf8')) as { id: string; fields: FieldInfo[]; rows: Row[] };
      return {
        id: data.id,
        aliases: [name.slice(0, -'.json'.length)],
        fields: [{ id: '_id', type: 'int' }, ...data.fields],
        rows: data.rows.map((row, i) => ({ _id: i + 1, ...row })),
      };
    });
}

const cases: Case[] = readdirSync(DIR)
  .filter((name) => name.endsWith('.json'))
  .sort()
  .map((name) => {
    const c = JSON.parse(readFileSync(join(DIR, name), 'utf8')) as Record<string, unknown>;
    for (const key of Object.keys(c)) if (!KEYS.has(key)) throw new Error(`${name}: unknown key ${JSON.stringify(key)}`);
    return { file: name, ...c } as unknown as Case;
  });

/** `{base}` in expected texts stands for the server's URL. */
function withBase(value: unknown, base: string): unknown {
  return JSON.parse(JSON.stringify(value).replaceAll('{base}', base));
}

const servers = new Map<string, RunningServer>();
let agent: Agent;

beforeAll(async () => {
  const tables = loadTables();
  servers.set('2.11', await startServer({ tables, port: 0 }));
  servers.set('2.12', await startServer({ tables, port: 0, ckan: '2.12' }));
  agent = new Agent({ keepAliveTimeout: 10, keepAliveMaxTimeout: 10 });
});

afterAll(async () => {
  await agent.close();
  for (const server of servers.values()) await server.close();
});

test('the CKAN section has a case for every transport and version', () => {
  expect(cases.length).toBeGreaterThanOrEqual(25);
  expect(new Set(cases.map((c) => c.ckan ?? '2.11'))).toEqual(new Set(['2.11', '2.12']));
});

describe('ckan', () => {
  for (const c of cases) {
    test(`${c.title} (${c.file})`, async () => {
      const server = servers.get(c.ckan ?? '2.11') as RunningServer;
      const path = `${c.path ?? '/api/3/action/datastore_search'}${c.query === undefined ? '' : `?${c.query}`}`;
      let body: string | undefined;
      const headers: Record<string, string> = {};
      if (c.body !== undefined) {
        body = JSON.stringify(c.body);
        headers['content-type'] = 'application/json';
      } else if (c.form !== undefined) {
        body = c.form;
        headers['content-type'] = 'application/x-www-form-urlencoded';
      } else if (c.text !== undefined) {
        body = c.text;
        if (c.contentType !== undefined) headers['content-type'] = c.contentType;
      }
      const response = await request(`${server.url}${path}`, { dispatcher: agent, method: c.method, headers, ...(body === undefined ? {} : { body }) });
      const text = await response.body.text();
      expect(response.statusCode, text.slice(0, 500)).toBe(c.status);
      if (c.raw !== undefined) expect(text).toBe(String(withBase(c.raw, server.url)));
      if (c.response !== undefined) expect(text).toBe(JSON.stringify(withBase(c.response, server.url)));
      const json = c.raw === undefined ? (JSON.parse(text) as { result?: { records?: unknown }; error?: unknown }) : undefined;
      if (c.result !== undefined) expect(JSON.stringify(json?.result)).toBe(JSON.stringify(withBase(c.result, server.url)));
      if (c.error !== undefined) expect(json?.error).toEqual(c.error);
      if (c.records !== undefined) expect(json?.result?.records).toEqual(c.records);
    });
  }
});

/**
 * The local server over real HTTP: request shapes, paths, envelope, `_links`,
 * every error row of semantics.md, auth, hostile bodies, concurrency.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Agent, request } from 'undici';

import { startServer } from '../../src/server/server.js';
import type { RunningServer } from '../../src/server/server.js';
import { evaluate } from '../../src/engine/memory/evaluate.js';
import { normalizeRequest } from '../../src/datastore/validate.js';
import type { SearchResult } from '../../src/datastore/types.js';
import { ToolError } from '../../src/errors.js';
import { COURSES_ID, GRADES_ID, TOKEN, big, courses, grades, odd, texts } from './tables.js';

const ACTION = '/api/action/datastore_search';
const MAX_BODY = 4_096;

let server: RunningServer;
let agent: Agent;
const logLines: string[] = [];

beforeAll(async () => {
  server = await startServer({
    tables: [courses, grades, odd, big, texts],
    port: 0,
    tokens: [TOKEN, 'second-token-value'],
    maxBody: MAX_BODY,
    maxLimit: 1_000,
    log: (line) => logLines.push(line),
  });
  agent = new Agent({ keepAliveTimeout: 10, keepAliveMaxTimeout: 10 });
});

afterAll(async () => {
  await agent.close();
  await server.close();
});

interface Answer {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly text: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  readonly json: any;
}

async function call(
  method: string,
  path: string,
  options: { body?: string; headers?: Record<string, string> } = {},
): Promise<Answer> {
  const response = await request(`${server.url}${path}`, {
    dispatcher: agent,
    method: method as 'GET',
    headers: options.headers,
    body: options.body,
  });
  const text = await response.body.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: response.statusCode, headers: response.headers, text, json };
}

const post = (path: string, body: unknown, headers: Record<string, string> = {}): Promise<Answer> =>
  call('POST', path, { body: JSON.stringify(body), headers: { 'content-type': 'application/json', ...headers } });

function expected(raw: Record<string, unknown>, table = courses): SearchResult {
  return evaluate(normalizeRequest(raw, { maxLimit: 1_000 }), table, { maxLimit: 1_000 });
}

/** What the ranking of a text search writes in the `rank` column (docs/semantics.md: the memory engine does not rank). */
const RANK = 0.0573088;

/**
 * CKAN 2.11's `result` for `raw` (docs/ckan-2.11-reference.md §5): the validated request echoed in
 * alphabetical order (`fields` replaced in place), then records, fields, _links, total, total_was_estimated;
 * a text `q` without `fields` adds the float column `rank`.
 */
function ckanResult(raw: Record<string, unknown>, table: typeof courses, links: Record<string, string>): Record<string, unknown> {
  const result = expected(raw, table);
  const searching = typeof raw.q === 'string' && raw.fields === undefined;
  const fields = searching ? [...result.fields, { id: 'rank', type: 'float' }] : result.fields;
  const records = searching ? result.records.map((r) => ({ ...r, rank: RANK })) : result.records;
  const echo: Record<string, unknown> = {
    ...raw,
    include_total: raw.include_total ?? true,
    limit: result.limit,
    records_format: 'objects',
    resource_id: table.id,
    total_estimation_threshold: null,
  };
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(echo).sort()) out[key] = key === 'fields' ? fields : echo[key];
  out.records = records;
  if (!('fields' in out)) out.fields = fields;
  out._links = links;
  if (result.total !== undefined) {
    out.total = result.total;
    out.total_was_estimated = false;
  }
  return out;
}

describe('the four request shapes of service.md', () => {
  it('POST free text: resource_id, limit, q', async () => {
    const answer = await post(ACTION, { resource_id: COURSES_ID, limit: 2, q: 'algebra' });
    expect(answer.status).toBe(200);
    expect(answer.headers['content-type']).toBe('application/json;charset=utf-8');
    expect(Number(answer.headers['content-length'])).toBe(Buffer.byteLength(answer.text));
    expect(answer.json.success).toBe(true);
    expect(answer.json.help).toBe(`${server.url}/api/3/action/help_show?name=datastore_search`);
    const result = answer.json.result;
    expect(result.records.map((r: { title: string }) => r.title)).toEqual(['Linear Algebra', 'Abstract Algebra']);
    expect(result.total).toBe(3);
    expect(answer.text).toBe(
      JSON.stringify({
        help: `${server.url}/api/3/action/help_show?name=datastore_search`,
        success: true,
        result: ckanResult({ resource_id: COURSES_ID, limit: 2, q: 'algebra' }, courses, { start: ACTION, next: `${ACTION}?offset=2` }),
      }),
    );
  });

  it('POST filtered: a list and a scalar filter, by alias', async () => {
    const body = { resource_id: 'courses', filters: { stage: ['active', 'survey'], subject: 'math' } };
    const answer = await post(ACTION, body);
    expect(answer.status).toBe(200);
    const result = answer.json.result;
    expect(result.resource_id).toBe(COURSES_ID);
    expect(result.records.map((r: { _id: number }) => r._id)).toEqual([1, 2]);
    expect(result.filters).toEqual(body.filters);
    expect(result.records).toEqual(expected(body).records);
  });

  it('GET with limit', async () => {
    const answer = await call('GET', `/en${ACTION}?resource_id=${COURSES_ID}&limit=2`);
    expect(answer.status).toBe(200);
    expect(answer.json.help).toBe(`${server.url}/en/api/3/action/help_show?name=datastore_search`);
    expect(answer.json.result.records.map((r: { _id: number }) => r._id)).toEqual([1, 2]);
    expect(answer.json.result.limit).toBe(2);
    expect(answer.json.result._links).toEqual({
      start: `${ACTION}?resource_id=${COURSES_ID}&limit=2`,
      next: `${ACTION}?resource_id=${COURSES_ID}&limit=2&offset=2`,
    });
  });

  it('GET with q', async () => {
    const answer = await call('GET', `/de${ACTION}?resource_id=courses&q=mechanics`);
    expect(answer.status).toBe(200);
    expect(answer.json.help).toBe(`${server.url}/de/api/3/action/help_show?name=datastore_search`);
    expect(answer.json.result.records.map((r: { title: string }) => r.title)).toEqual(['Mechanics']);
    expect(answer.json.result.q).toBe('mechanics');
  });
});

describe('the envelope text', () => {
  const tables = { courses, odd, texts } as const;
  const cases: [keyof typeof tables, Record<string, unknown>][] = [
    ['courses', { resource_id: 'courses' }],
    ['courses', { resource_id: 'courses', limit: 1 }],
    [
      'courses',
      { resource_id: 'courses', filters: { stage: ['active', 'survey'] }, q: 'algebra', fields: ['title', 'year'], sort: 'year desc', limit: 1, offset: 1, include_total: false },
    ],
    ['odd', { resource_id: 'odd', sort: '"school, year" desc', filters: { constructor: 'a' } }],
    ['odd', { resource_id: 'odd', fields: ['note', 'constructor'] }],
    ['texts', { resource_id: 'texts', q: 'quote' }],
    ['texts', { resource_id: 'texts', q: 'lone \ud800 "quoted" back\\slash\ttab' }],
    ['texts', { resource_id: 'texts', offset: 2, limit: 2 }],
  ];

  it('is CKAN 2.11\'s result, character for character, for every optional key of a result', async () => {
    // A table asked again without `fields` answers with the cached text of its field list.
    for (const [name, body] of cases) {
      const answer = await post(ACTION, body);
      const result = expected(body, tables[name]);
      const offset = result.offset ?? 0;
      const links: Record<string, string> = { start: ACTION, next: `${ACTION}?offset=${offset + result.limit}` };
      if (offset - result.limit > 0) links.prev = `${ACTION}?offset=${offset - result.limit}`;
      const envelope = { help: `${server.url}/api/3/action/help_show?name=datastore_search`, success: true, result: ckanResult(body, tables[name], links) };
      expect(answer.text).toBe(JSON.stringify(envelope));
    }
  });

  it('is the same text by GET, behind a language segment', async () => {
    const answer = await call('GET', `/de${ACTION}?resource_id=odd&q=quoted&limit=1`);
    const links = { start: `${ACTION}?resource_id=odd&q=quoted&limit=1`, next: `${ACTION}?resource_id=odd&q=quoted&limit=1&offset=1` };
    const result = ckanResult({ limit: '1', q: 'quoted', resource_id: 'odd' }, odd, links);
    const envelope = { help: `${server.url}/de/api/3/action/help_show?name=datastore_search`, success: true, result: { ...result, limit: 1 } };
    expect(answer.text).toBe(JSON.stringify(envelope));
  });
});

describe('GET parameters', () => {
  it('reads filters as JSON text, fields and sort comma-separated, include_total as a word', async () => {
    const filters = encodeURIComponent(JSON.stringify({ stage: ['active', 'survey'] }));
    const answer = await call(
      'GET',
      `${ACTION}?resource_id=courses&filters=${filters}&fields=title,year&sort=year%20desc,title&include_total=no&offset=1`,
    );
    expect(answer.status).toBe(200);
    const result = answer.json.result;
    expect(result.total).toBeUndefined();
    expect(result.include_total).toBe(false);
    // year desc puts the null first; offset 1 skips it
    expect(result.records).toEqual([
      { title: 'Abstract Algebra', year: 2022 },
      { title: 'Linear Algebra', year: 2021 },
      { title: 'Mechanics', year: 2021 },
    ]);
    expect(result.records).toEqual(
      expected({ resource_id: 'courses', filters: { stage: ['active', 'survey'] }, fields: 'title,year', sort: 'year desc,title', include_total: false, offset: 1 }).records,
    );
    // CKAN re-encodes the query string with Python's urlencode (`quote_plus`): `,` → %2C, space → +.
    expect(result._links.next).toBe(
      `${ACTION}?resource_id=courses&filters=${filters}&fields=title%2Cyear&sort=year+desc%2Ctitle&include_total=no&offset=101`,
    );
    expect(result._links.start).toBe(`${ACTION}?resource_id=courses&filters=${filters}&fields=title%2Cyear&sort=year+desc%2Ctitle&include_total=no`);
  });

  it('reads a q that is a JSON string as the string it encodes', async () => {
    const answer = await call('GET', `${ACTION}?resource_id=odd&q=${encodeURIComponent('"\\"quoted\\""')}`);
    expect(answer.status).toBe(200);
    expect(answer.json.result.q).toBe('"quoted"');
    expect(answer.json.result.records.map((r: { _id: number }) => r._id)).toEqual([1]);
  });

  it('reads a q that starts with a quote or a brace but is not JSON as the text given', async () => {
    for (const q of ['"quoted', '{x}', ' "spaced']) {
      // (a string q adds CKAN's `rank` column to each record)
      const answer = await call('GET', `${ACTION}?resource_id=texts&q=${encodeURIComponent(q)}`);
      expect(answer.status).toBe(200);
      expect(answer.json.result.q).toBe(q);
      expect(answer.json.result.records).toEqual(expected({ resource_id: 'texts', q }, texts).records.map((r) => ({ ...r, rank: RANK })));
      expect(answer.json.result.records.length).toBe(1);
    }
  });

  it('reads a JSON string in q with a lone surrogate, which plain percent-encoding cannot carry', async () => {
    const answer = await call('GET', `${ACTION}?resource_id=texts&q=${encodeURIComponent(JSON.stringify('\ud800'))}`);
    expect(answer.status).toBe(200);
    expect(answer.json.result.q).toBe('\ud800');
    expect(answer.json.result.records.map((r: { note: string }) => r.note)).toEqual(['a lone \ud800 half']);
  });

  it('reads a q that is a JSON object as a per-field search, as POST reads an object', async () => {
    const byGet = await call('GET', `${ACTION}?resource_id=texts&q=${encodeURIComponent('{"nope": "x"}')}`);
    const byPost = await post(ACTION, { resource_id: 'texts', q: { nope: 'x' } });
    expect(byGet.status).toBe(409);
    expect(byGet.json.error).toEqual(byPost.json.error);
    expect(byGet.json.error).toEqual({ q: ['invalid value "nope"'], __type: 'Validation Error' });
  });

  it('reads fields given as a JSON list, for names that hold a comma', async () => {
    const fields = encodeURIComponent(JSON.stringify(['school, year', 'constructor']));
    const answer = await call('GET', `${ACTION}?resource_id=odd&fields=${fields}`);
    expect(answer.status).toBe(200);
    expect(answer.json.result.records).toEqual([
      { 'school, year': '2020/21', constructor: 'a' },
      { 'school, year': '2021/22', constructor: 'b' },
    ]);
  });

  it('reads a repeated key as a list, as CKAN does (a list limit is an Invalid integer)', async () => {
    const list = await call('GET', `${ACTION}?resource_id=courses&fields=title&fields=year&limit=1`);
    expect(list.json.result.records).toEqual([{ title: 'Linear Algebra', year: 2021 }]);
    const twice = await call('GET', `${ACTION}?resource_id=courses&limit=1&limit=2`);
    expect(twice.status).toBe(409);
    expect(twice.json.error).toEqual({ limit: ['Invalid integer'], __type: 'Validation Error' });
  });

  it('caps a limit above the maximum and says so in the response', async () => {
    const answer = await call('GET', `${ACTION}?resource_id=big&limit=50000&fields=_id`);
    expect(answer.status).toBe(200);
    expect(answer.json.result.limit).toBe(1_000);
    expect(answer.json.result.records).toHaveLength(1_000);
    expect(answer.json.result.total).toBe(2_500);
  });
});

describe('paths', () => {
  it.each([
    ['/api/action/datastore_search', undefined],
    ['/api/3/action/datastore_search', undefined],
    ['/en/api/action/datastore_search', 'en'],
    ['/de/api/3/action/datastore_search', 'de'],
  ])('%s answers, and _links drop the language segment', async (path, language) => {
    const answer = await call('GET', `${path}?resource_id=courses&limit=1`);
    expect(answer.status).toBe(200);
    expect(answer.json.help).toBe(`${server.url}${language === undefined ? '' : `/${language}`}/api/3/action/help_show?name=datastore_search`);
    expect(answer.json.result._links.start).toBe(`${path.replace(/^\/(en|de)/, '')}?resource_id=courses&limit=1`);
  });

  it.each([
    ['/api/action/datastore_delete', 'datastore_delete'],
    ['/api/3/action/datastore_dump', 'datastore_dump'],
  ])('%s is CKAN\'s 400, a bare JSON string naming the action', async (path, name) => {
    const answer = await call('GET', `${path}?resource_id=courses`);
    expect(answer.status).toBe(400);
    expect(answer.json).toBe(`Bad request - Action name not known: ${name}`);
  });

  it.each([
    ['/fr/api/action/datastore_search', /language segment "fr" is not offered/],
    ['/api/2/action/datastore_search', /Not found/],
    ['/', /Not found/],
    ['/api/action/datastore_search/', /Not found/],
  ])('%s is 404 with the Not Found envelope', async (path, message) => {
    const answer = await call('GET', `${path}?resource_id=courses`);
    expect(answer.status).toBe(404);
    expect(answer.json.success).toBe(false);
    expect(answer.json.error.__type).toBe('Not Found Error');
    expect(answer.json.error.message).toMatch(message);
  });
});

describe('error rows of semantics.md', () => {
  it.each([
    [{ resource_id: 'courses', filters: { nope: 1 } }, 'filters', 'invalid value "nope"'],
    [{ resource_id: 'courses', fields: ['title', 'nope'] }, 'fields', 'invalid value "nope"'],
    [{ resource_id: 'courses', sort: 'nope desc' }, 'sort', undefined],
    [{ resource_id: 'courses', limit: -1 }, 'limit', 'Must be a natural number'],
    [{ resource_id: 'courses', offset: 1.5 }, 'offset', undefined],
    [{ resource_id: 'courses', filters: 'stage' }, 'filters', undefined],
    [{ resource_id: 'courses', filters: { stage: { $gt: 1 } } }, 'query', 'Invalid query'],
    [{ resource_id: 'courses', jsonp: 'x' }, '__extras', 'invalid value "jsonp"'],
    [{ limit: 1 }, 'resource_id', 'Missing value'],
  ])('409 Validation Error for %j', async (body, param, message) => {
    const answer = await post(ACTION, body);
    expect(answer.status).toBe(409);
    expect(answer.json.success).toBe(false);
    expect(answer.json.error.__type).toBe('Validation Error');
    expect(Array.isArray(answer.json.error[param])).toBe(true);
    if (message !== undefined) expect(answer.json.error[param]).toEqual([message]);
  });

  it('404 for an unknown resource, naming it', async () => {
    const answer = await post(ACTION, { resource_id: 'nope' });
    expect(answer.status).toBe(404);
    expect(answer.json.error).toEqual({ __type: 'Not Found Error', message: 'Not found: Resource "nope" was not found.' });
  });

  it.each([
    ['not JSON', '{"resource_id": ', /^Bad request - JSON Error: Error decoding JSON data\. /],
    ['an array', '["courses"]', /^Bad request - JSON Error: Request data JSON decoded to \["courses"\] but it needs to be a dictionary\.$/],
    ['a string', '"courses"', /decoded to 'courses' but it needs to be a dictionary/],
    ['null', 'null', /decoded to None but it needs to be a dictionary/],
  ])('400 with CKAN\'s bare JSON string when the body is %s', async (_what, body, message) => {
    const answer = await call('POST', ACTION, { body, headers: { 'content-type': 'application/json' } });
    expect(answer.status).toBe(400);
    expect(typeof answer.json).toBe('string');
    expect(answer.json).toMatch(message);
  });

  it('an empty body is no parameters: 409 Missing value', async () => {
    const answer = await call('POST', ACTION, { body: '', headers: { 'content-type': 'application/json' } });
    expect(answer.status).toBe(409);
    expect(answer.json.error).toEqual({ resource_id: ['Missing value'], __type: 'Validation Error' });
  });

  it('a POST whose URL has a query string takes its parameters from the URL and ignores the body (CKAN)', async () => {
    const answer = await call('POST', `${ACTION}?resource_id=courses&limit=1`, { body: '{"resource_id":"nope"}', headers: { 'content-type': 'application/json' } });
    expect(answer.status).toBe(200);
    expect(answer.json.result.records.map((r: { _id: number }) => r._id)).toEqual([1]);
    expect(answer.json.result._links.next).toBe(`${ACTION}?resource_id=courses&limit=1&offset=1`);
  });

  it('413 Request Too Large for a body over the maximum; the body is read and discarded, so the answer arrives', async () => {
    const body = JSON.stringify({ resource_id: 'courses', filters: { title: Array.from({ length: 1_000 }, (_, i) => `t${i}`) } });
    expect(Buffer.byteLength(body)).toBeGreaterThan(MAX_BODY);
    const answer = await call('POST', ACTION, { body, headers: { 'content-type': 'application/json' } });
    expect(answer.status).toBe(413);
    expect(answer.json.error.__type).toBe('Request Too Large');
    const next = await post(ACTION, { resource_id: 'courses', limit: 1 });
    expect(next.status).toBe(200);
  });

  it.each(['PUT', 'DELETE', 'PATCH'])('405 for %s, with Allow', async (method) => {
    const answer = await call(method, `${ACTION}`);
    expect(answer.status).toBe(405);
    expect(answer.headers.allow).toBe('GET, HEAD, POST, OPTIONS');
    expect(answer.json.error.__type).toBe('Method Not Allowed');
  });

  // CKAN's routes are Flask's: a GET route answers HEAD too (werkzeug adds it), with the GET's status and headers and no body.
  it.each([
    ['a search', `${ACTION}?resource_id=courses&limit=2`, 200],
    ['a missing resource', `${ACTION}?resource_id=nothing`, 404],
    ['a bad parameter', `${ACTION}?resource_id=courses&limit=x`, 409],
    ['status_show', '/api/3/action/status_show', 200],
    ['a dump', '/datastore/dump/courses?limit=3', 200],
  ])('HEAD of %s answers as GET, without the body', async (_, path, status) => {
    const [head, get] = [await call('HEAD', path), await call('GET', path)];
    expect([head.status, get.status]).toEqual([status, status]);
    expect(head.text).toBe('');
    expect(get.text).not.toBe('');
    expect(head.headers['content-type']).toBe(get.headers['content-type']);
    if (get.headers['content-length'] !== undefined) expect(head.headers['content-length']).toBe(get.headers['content-length']);
  });

  it('OPTIONS answers the CORS preflight', async () => {
    const answer = await call('OPTIONS', ACTION, {
      headers: { origin: 'https://example.org', 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization,content-type' },
    });
    expect(answer.status).toBe(204);
    expect(answer.headers['access-control-allow-origin']).toBe('*');
    expect(String(answer.headers['access-control-allow-methods'])).toMatch(/POST/);
    expect(String(answer.headers['access-control-allow-headers']).toLowerCase()).toMatch(/authorization/);
    const get = await call('GET', `${ACTION}?resource_id=courses&limit=0`);
    expect(get.headers['access-control-allow-origin']).toBe('*');
  });
});

describe('private resources', () => {
  it.each([
    ['no token', {}],
    ['a wrong token', { authorization: 'not-the-token' }],
    ['the token with a Bearer scheme', { authorization: `Bearer ${TOKEN}` }],
    ['a prefix of the token', { authorization: TOKEN.slice(0, -1) }],
  ])('403 with %s, and nothing of the table in the answer', async (_what, headers) => {
    const answer = await post(ACTION, { resource_id: 'grades', filters: { student: 'SECRET-ada' } }, headers);
    expect(answer.status).toBe(403);
    expect(answer.json.error.__type).toBe('Authorization Error');
    expect(answer.json.error.message).toMatch(/^Access denied: /);
    expect(answer.text).not.toContain('SECRET');
    expect(answer.text).not.toContain(TOKEN);
    expect(answer.text).not.toContain('not-the-token');
  });

  it('403 comes before field checks, so field names do not leak', async () => {
    const answer = await post(ACTION, { resource_id: GRADES_ID, fields: ['grade', 'nope'] });
    expect(answer.status).toBe(403);
    expect(answer.text).not.toContain('grade"');
  });

  it('200 with either valid token, by id and by alias', async () => {
    for (const [name, token] of [['grades', TOKEN], [GRADES_ID, 'second-token-value']] as const) {
      const answer = await call('GET', `${ACTION}?resource_id=${name}`, { headers: { authorization: token } });
      expect(answer.status).toBe(200);
      expect(answer.json.result.records.map((r: { student: string }) => r.student)).toEqual(['SECRET-ada', 'SECRET-bob']);
    }
  });

  it('a public resource ignores the header, valid or not', async () => {
    for (const authorization of ['garbage', TOKEN, `Bearer ${TOKEN}`]) {
      const answer = await post(ACTION, { resource_id: 'courses', limit: 1 }, { authorization });
      expect(answer.status).toBe(200);
    }
  });

  it('privateResources names resources by id or alias; an unknown name stops the start', async () => {
    const local = await startServer({ tables: [courses, odd], privateResources: ['odd', COURSES_ID], tokens: [TOKEN] });
    try {
      const url = `${local.url}${ACTION}?resource_id=`;
      for (const name of ['odd', 'courses']) {
        const denied = await request(url + name, { dispatcher: agent });
        expect(denied.statusCode).toBe(403);
        await denied.body.dump();
        const allowed = await request(url + name, { dispatcher: agent, headers: { authorization: TOKEN } });
        expect(allowed.statusCode).toBe(200);
        await allowed.body.dump();
      }
    } finally {
      await local.close();
    }
    await expect(startServer({ tables: [courses], privateResources: ['cources'] })).rejects.toThrow(ToolError);
  });

  it('never writes a token into the log', async () => {
    await post(ACTION, { resource_id: 'grades' }, { authorization: TOKEN });
    await post(ACTION, { resource_id: 'grades' }, { authorization: 'wrong-token-xyz' });
    expect(logLines.length).toBeGreaterThan(0);
    expect(logLines.join('\n')).not.toContain(TOKEN);
    expect(logLines.join('\n')).not.toContain('wrong-token-xyz');
    expect(logLines).toContain(`POST ${ACTION} 403`);
  });
});

describe('hostile bodies', () => {
  it('__proto__ and constructor keys are plain keys: rejected or looked up, never prototypes', async () => {
    const extras = await call('POST', ACTION, { body: '{"resource_id":"courses","__proto__":{"limit":1}}' });
    expect(extras.status).toBe(409);
    expect(extras.json.error.__extras).toEqual(['invalid value "__proto__"']);

    const protoFilter = await call('POST', ACTION, { body: '{"resource_id":"courses","filters":{"__proto__":"x"}}' });
    expect(protoFilter.status).toBe(409);
    expect(protoFilter.json.error.filters).toEqual(['invalid value "__proto__"']);

    const ctorFilter = await post(ACTION, { resource_id: 'courses', filters: { constructor: 'x' } });
    expect(ctorFilter.status).toBe(409);

    const field = await post(ACTION, { resource_id: 'odd', filters: { constructor: 'b', toString: 'y' } });
    expect(field.status).toBe(200);
    expect(field.json.result.records.map((r: { _id: number }) => r._id)).toEqual([2]);

    const query = await call('GET', `${ACTION}?resource_id=courses&__proto__=x&constructor=y`);
    expect(query.status).toBe(409);
    expect(({} as Record<string, unknown>).limit).toBeUndefined();
  });

  it('a deeply nested body is 400, not a crash', async () => {
    const deep = `{"resource_id":"courses","filters":{"stage":${'['.repeat(1_500)}${']'.repeat(1_500)}}}`;
    const answer = await call('POST', ACTION, { body: deep });
    expect(answer.status).toBe(400);
    expect(answer.json).toMatch(/nested/);
    // a body that is itself an array 150,000 deep (300 KB): the message about it must not walk it either
    const local = await startServer({ tables: [courses] });
    try {
      for (const body of [`${'['.repeat(150_000)}${']'.repeat(150_000)}`, `${'{"a":'.repeat(60_000)}1${'}'.repeat(60_000)}`]) {
        const refused = await request(`${local.url}${ACTION}`, { dispatcher: agent, method: 'POST', headers: { 'content-type': 'application/json' }, body });
        expect(refused.statusCode).toBe(400);
        expect(await refused.body.json()).toBe('Bad request - JSON Error: Request data is nested more than 64 levels deep');
      }
    } finally {
      await local.close();
    }
  });

  it('nesting just inside the limit gets the Validation Error of a non-scalar filter value', async () => {
    const body = `{"resource_id":"courses","filters":{"stage":${'['.repeat(10)}${']'.repeat(10)}}}`;
    const answer = await call('POST', ACTION, { body });
    expect(answer.status).toBe(409);
  });

  it('a body with invalid UTF-8 or a byte-order mark is read, not fatal', async () => {
    const bom = await call('POST', ACTION, { body: '\ufeff{"resource_id":"courses","limit":1}' });
    expect(bom.status).toBe(200);
    const response = await request(`${server.url}${ACTION}`, {
      dispatcher: agent,
      method: 'POST',
      body: Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x3a, 0x31, 0x7d]),
    });
    expect([400, 409]).toContain(response.statusCode);
    await response.body.dump();
  });

  it('tables are not changed by requests', async () => {
    const before = JSON.stringify(courses);
    await post(ACTION, { resource_id: 'courses', sort: 'title desc', fields: ['title'] });
    await post(ACTION, { resource_id: 'courses', filters: { stage: 'active' }, q: 'a' });
    expect(JSON.stringify(courses)).toBe(before);
  });
});

describe('many clients at once', () => {
  it('answers 200 concurrent mixed requests, each with its own answer', async () => {
    const jobs = Array.from({ length: 200 }, (_, i) => {
      switch (i % 4) {
        case 0:
          return post(ACTION, { resource_id: 'big', filters: { n: i }, fields: ['n'] }).then((a) => {
            expect(a.status).toBe(200);
            expect(a.json.result.records).toEqual([{ n: i }]);
          });
        case 1:
          return call('GET', `${ACTION}?resource_id=big&offset=${i}&limit=1&fields=n`).then((a) => {
            expect(a.json.result.records).toEqual([{ n: i }]);
          });
        case 2:
          return call('POST', ACTION, { body: '{oops' }).then((a) => expect(a.status).toBe(400));
        default:
          return post(ACTION, { resource_id: 'grades' }).then((a) => expect(a.status).toBe(403));
      }
    });
    await Promise.all(jobs);
  });
});

describe('close', () => {
  it('resolves with an idle keep-alive connection open, and refuses new connections after', async () => {
    const local = await startServer({ tables: [courses], keepAliveTimeout: 60_000 });
    const keeper = new Agent({ keepAliveTimeout: 60_000 });
    const first = await request(`${local.url}${ACTION}?resource_id=courses`, { dispatcher: keeper });
    expect(first.statusCode).toBe(200);
    await first.body.dump();
    await local.close();
    await local.close();
    await expect(request(`${local.url}${ACTION}?resource_id=courses`, { dispatcher: new Agent() })).rejects.toThrow();
    await keeper.destroy();
  });
});

/**
 * The client against the real local server on 127.0.0.1:0: request shapes,
 * methods, language segments, auth, every error the server can give, the
 * empty-list filter, and paging with `searchAll`.
 */
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

import { connect } from '../../src/client/connect.js';
import type { ClientOptions, DatastoreClient } from '../../src/client/connect.js';
import { startServer } from '../../src/server/server.js';
import type { RunningServer } from '../../src/server/server.js';
import { evaluate } from '../../src/engine/memory/evaluate.js';
import { compile } from '../../src/compile/compile.js';
import { QueryError } from '../../src/errors.js';
import type { DatastoreError } from '../../src/errors.js';
import type { Row, SearchRequest } from '../../src/datastore/types.js';
import { BIG_ID, COURSES_ID, TOKEN, big, courses, grades, odd, texts } from '../server/tables.js';
import { recordsWithoutRank } from '../helpers/rank.js';
import { datastoreFailure as failure } from '../helpers/outcome.js';
import { startStubPortal } from '../helpers/stub-ckan.js';

const MAX_BODY = 2_048;
let server: RunningServer;
const seen: string[] = [];
const clients: DatastoreClient[] = [];

beforeAll(async () => {
  server = await startServer({
    tables: [courses, grades, odd, big, texts],
    tokens: [TOKEN],
    maxBody: MAX_BODY,
    log: (line) => seen.push(line),
  });
});

afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close()));
});

afterAll(() => server.close());

function open(options: Partial<ClientOptions> = {}): DatastoreClient {
  const client = connect({ url: server.url, retries: 0, ...options });
  clients.push(client);
  return client;
}

function local(request: SearchRequest, table = courses): readonly Row[] {
  return evaluate(request, table).records;
}

describe('request shapes of service.md, by POST and by GET', () => {
  const shapes: [string, string][] = [
    ['POST free text', 'from courses search "algebra" limit 2'],
    ['POST filtered', 'from courses where stage in (active, survey) and subject = math'],
    ['GET limit', `from ${COURSES_ID} limit 3`],
    ['GET q', 'from courses search "mechanics"'],
  ];
  for (const method of ['POST', 'GET'] as const) {
    for (const language of [undefined, 'en', 'de']) {
      it.each(shapes)(`%s over ${method} ${language ?? 'bare'}`, async (_name, query) => {
        const client = open({ method, ...(language === undefined ? {} : { language }) });
        const result = await client.search(query);
        const request = compile(query);
        expect(recordsWithoutRank(result.records)).toEqual(local(request));
        expect(result.records.length).toBeGreaterThan(0);
        expect(result.total).toBe(evaluate(request, courses).total);
        expect(result.resource_id).toBe(COURSES_ID);
        expect(result._links?.start).toMatch(/^\/api\/action\/datastore_search/);
        const line = seen.at(-1);
        expect(line).toBe(`${method} ${language === undefined ? '' : `/${language}`}/api/action/datastore_search 200`);
      });
    }
  }

  it('takes a parsed query with params, query text with params, and a raw request', async () => {
    const client = open();
    const byText = await client.search('from courses where subject = $s limit $n', { params: { s: 'physics', n: 5 } });
    expect(byText.records.map((r) => r.title)).toEqual(['Mechanics', 'Quantum Algebra']);
    const byRequest = await client.search({ resource_id: 'courses', filters: { subject: 'physics' } });
    expect(byRequest.records).toEqual(byText.records);
    const fromAst = await client.search(
      (await import('../../src/syntax/parse.js')).parse('from courses where subject = $s'),
      { params: { s: 'physics' } },
    );
    expect(fromAst.records).toEqual(byText.records);
  });

  it('GET carries awkward values intact: quotes in q, commas in field names, unicode', async () => {
    const client = open({ method: 'GET' });
    const quoted = await client.search({ resource_id: 'odd', q: '"quoted"', fields: ['school, year', 'note'] });
    expect(quoted.records).toEqual([{ 'school, year': '2020/21', note: '"quoted" text' }]);
    const unicode = await client.search({ resource_id: 'odd', filters: { 'school, year': ['2021/22', 'Ünï €'] }, sort: '"school, year" desc' });
    expect(unicode.records.map((r) => r._id)).toEqual([2]);
  });

  it('GET finds what POST finds for a q that looks like JSON or holds a lone surrogate', async () => {
    const byPost = open({ method: 'POST' });
    const byGet = open({ method: 'GET' });
    // (JSON text of an object is no text: CKAN reads it as a per-field search, test/engine/sql/fidelity.test.ts)
    for (const q of ['\ud800', '"quoted"', '"quoted', '{x}', ' "spaced', '\ufffd']) {
      const request: SearchRequest = { resource_id: 'texts', q };
      const posted = await byPost.search(request);
      const got = await byGet.search(request);
      expect(got.q, JSON.stringify(q)).toBe(q);
      expect(got.records, JSON.stringify(q)).toEqual(posted.records);
      expect(recordsWithoutRank(got.records), JSON.stringify(q)).toEqual(evaluate(request, texts).records);
      // each text is in exactly one note; U+FFFD only in its own, not in the lone surrogate's
      expect(got.records.length, JSON.stringify(q)).toBe(1);
    }
  });

  it('a query error is thrown before anything is sent', async () => {
    const client = open();
    const before = seen.length;
    await expect(client.search('from courses where')).rejects.toBeInstanceOf(QueryError);
    await expect(client.search({ resource_id: 'courses', limit: -1 })).rejects.toMatchObject({ code: 'VALIDATION_ERROR' });
    expect(seen.length).toBe(before);
  });

  it('records_format csv or tsv (records as one text, not a list) is refused before it is sent, saying what gives CSV', async () => {
    const client = open();
    const before = seen.length;
    for (const format of ['csv', 'tsv'] as const) {
      const error = await failure(client.search({ resource_id: 'courses', limit: 2, records_format: format }));
      expect(error.code).toBe('VALIDATION_ERROR');
      expect(error.message).toMatch(/^records_format: .*objects or lists.*datastore\/dump/);
      await expect(client.searchAll({ resource_id: 'courses', records_format: format }).next()).rejects.toMatchObject({ code: 'VALIDATION_ERROR' });
    }
    expect(seen.length).toBe(before);
    // lists are read as CKAN sends them
    expect((await client.search({ resource_id: 'courses', limit: 1, fields: ['title'], records_format: 'lists' })).records).toEqual([[local({ resource_id: 'courses', limit: 1 })[0]?.title]]);
  });
});

describe('prepare', () => {
  it('shows the POST request with the token redacted', () => {
    const client = open({ token: TOKEN, language: 'de' });
    const prepared = client.prepare('from courses where subject = $s', { s: 'math' });
    expect(prepared).toEqual({
      method: 'POST',
      url: `${server.url}/de/api/action/datastore_search`,
      headers: { accept: 'application/json', 'user-agent': 'ckql', authorization: '<redacted>', 'content-type': 'application/json' },
      body: '{"resource_id":"courses","filters":{"subject":"math"}}',
      request: { resource_id: 'courses', filters: { subject: 'math' } },
    });
    expect(JSON.stringify(prepared)).not.toContain(TOKEN);
    expect(JSON.stringify(client)).not.toContain(TOKEN);
    expect(client.hasToken).toBe(true);
  });

  it('shows the GET URL as the server reads it', () => {
    const client = open({ method: 'GET' });
    const prepared = client.prepare({ resource_id: 'courses', filters: { stage: ['a', 'b'] }, q: 'x y', fields: ['title'], limit: 5 });
    const url = new URL(prepared.url);
    expect(url.pathname).toBe('/api/action/datastore_search');
    expect(Object.fromEntries(url.searchParams)).toEqual({
      resource_id: 'courses', filters: '{"stage":["a","b"]}', q: 'x y', fields: 'title', limit: '5',
    });
    expect(prepared.body).toBeUndefined();
    expect(prepared.headers.authorization).toBeUndefined();
  });
});

describe('auth', () => {
  it('a public resource needs no token', async () => {
    expect((await open().search('from courses limit 1')).records).toHaveLength(1);
  });

  it('a private resource with the right token answers', async () => {
    for (const method of ['POST', 'GET'] as const) {
      const result = await open({ token: TOKEN, method }).search('from grades');
      expect(result.records.map((r) => r.student)).toEqual(['SECRET-ada', 'SECRET-bob']);
    }
  });

  it('a private resource without a token is FORBIDDEN, and says no token was sent', async () => {
    const error = await failure(open().search('from grades'));
    expect(error.code).toBe('FORBIDDEN');
    expect(error.status).toBe(403);
    expect(error.message).toMatch(/Access denied/);
    expect(error.message).toMatch(/no token was sent/);
    expect(error.body).toMatchObject({ __type: 'Authorization Error' });
  });

  it('a wrong token is FORBIDDEN, and the token is nowhere in the error', async () => {
    const wrong = 'wrong-token-1234567';
    const error = await failure(open({ token: wrong }).search('from grades'));
    expect(error.code).toBe('FORBIDDEN');
    expect(error.message).toMatch(/not accepted/);
    const everything = JSON.stringify({ ...error, message: error.message, stack: error.stack, cause: String(error.cause) });
    expect(everything).not.toContain(wrong);
    expect(Object.keys(error).sort()).toEqual(['body', 'code', 'name', 'status']);
  });

  it('a Bearer token gets a warning that does not contain the token, and is refused as the server takes raw tokens', async () => {
    const warnings: string[] = [];
    const client = open({ token: `Bearer ${TOKEN}`, onWarning: (w) => warnings.push(w) });
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/Bearer/);
    expect(warnings[0]).not.toContain(TOKEN);
    const error = await failure(client.search('from grades'));
    expect(error.code).toBe('FORBIDDEN');
    expect(error.message).not.toContain(TOKEN);
  });

  it('without onWarning, the Bearer warning goes to process.emitWarning', async () => {
    const warned = new Promise<Error>((resolve) => process.once('warning', resolve));
    open({ token: `bearer ${TOKEN}` });
    const warning = await warned;
    expect((warning as Error & { code?: string }).code).toBe('CKQL_BEARER_TOKEN');
    expect(warning.message).not.toContain(TOKEN);
  });
});

describe('errors from the real server', () => {
  it('VALIDATION_ERROR lists each parameter with its message', async () => {
    const error = await failure(open().search('from courses where nope = 1'));
    expect(error.code).toBe('VALIDATION_ERROR');
    expect(error.status).toBe(409);
    expect(error.message).toBe('the server rejected the request: filters: invalid value "nope"');
    expect(error.body).toEqual({ __type: 'Validation Error', filters: ['invalid value "nope"'] });
  });

  it('NOT_FOUND for an unknown resource', async () => {
    const error = await failure(open({ method: 'GET' }).search('from nowhere'));
    expect(error.code).toBe('NOT_FOUND');
    expect(error.status).toBe(404);
    expect(error.message).toBe('Not found: Resource "nowhere" was not found.');
  });

  it('NOT_FOUND for a language segment the server does not offer', async () => {
    const error = await failure(open({ language: 'fr' }).search('from courses'));
    expect(error.code).toBe('NOT_FOUND');
    expect(error.message).toMatch(/"fr" is not offered/);
  });

  it('REQUEST_TOO_LARGE for a body over the server maximum', async () => {
    const values = Array.from({ length: 400 }, (_, i) => `title number ${i}`);
    const error = await failure(open().search({ resource_id: 'courses', filters: { title: values } }));
    expect(error.code).toBe('REQUEST_TOO_LARGE');
    expect(error.status).toBe(413);
    // the connection it closed is not reused by the next search
    expect((await open().search('from courses limit 1')).records).toHaveLength(1);
  });

  it('a URL with the /api path, or not http, is refused at once', () => {
    expect(() => connect({ url: `${server.url}/api/action/datastore_search` })).toThrow(/base URL/);
    expect(() => connect({ url: 'ftp://example.org' })).toThrow(/http/);
    expect(() => connect({ url: 'not a url' })).toThrow(/not a URL/);
  });

  it('a closed client refuses to search', async () => {
    const client = connect({ url: server.url });
    await client.close();
    await expect(client.search('from courses')).rejects.toMatchObject({ code: 'ABORTED' });
  });
});

/** The rows a controlled server answers with, for statuses the real server never gives the client. */
async function cannedServer(status: number, body: string, type = 'application/json'): Promise<{ url: string; server: Server }> {
  const canned = createServer((req, res) => {
    req.resume();
    res.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(body) });
    res.end(body);
  });
  await new Promise<void>((resolve) => canned.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(canned.address() as AddressInfo).port}`, server: canned };
}

describe('errors from envelopes the client cannot provoke from the local server', () => {
  const envelope = (error: object): string => JSON.stringify({ help: 'h', success: false, error });
  it.each([
    [400, envelope({ __type: 'Bad Request', message: 'Bad request: the body is not valid JSON' }), 'BAD_REQUEST', /not valid JSON/],
    [405, envelope({ __type: 'Method Not Allowed', message: 'Method not allowed: "PUT"' }), 'METHOD_NOT_ALLOWED', /PUT/],
    [400, JSON.stringify('Bad request - JSON Error: Invalid request body'), 'BAD_REQUEST', /JSON Error/],
    [500, envelope({ __type: 'Internal Server Error', message: 'Internal Server Error' }), 'HTTP_ERROR', /HTTP 500 \(Internal Server Error\)/],
    [502, '<html><body>Bad Gateway</body></html>', 'HTTP_ERROR', /HTTP 502 without a datastore_search error body: <html>/],
    [200, '<!doctype html><title>Portal</title>', 'INVALID_RESPONSE', /body is not JSON/],
    [200, '{"success": true, "result": {"count": 3}}', 'INVALID_RESPONSE', /no result.records/],
    [409, envelope({ __type: 'Validation Error', query: ['Invalid query'], info: { orig: ['x'] }, limit: ['Invalid integer', 'Please enter an integer value'] }), 'VALIDATION_ERROR', /^the server rejected the request: query: Invalid query; limit: Invalid integer; Please enter an integer value$/],
  ])('HTTP %i %s → %s', async (status, body, code, message) => {
    const canned = await cannedServer(status, body);
    try {
      const error = await failure(open({ url: canned.url }).search('from courses'));
      expect(error.code).toBe(code);
      expect(error.status).toBe(status);
      expect(error.message).toMatch(message);
    } finally {
      canned.server.close();
    }
  });
});

describe('an empty-list filter', () => {
  /** What the server would answer (it answers with `evaluate`), as JSON carries it. */
  function expectedFor(request: SearchRequest, table = courses, maxLimit?: number): unknown {
    return JSON.parse(JSON.stringify(evaluate(request, table, maxLimit === undefined ? {} : { maxLimit })));
  }

  function withoutLinks(result: object): unknown {
    const { _links: _ignored, ...rest } = result as { _links?: unknown };
    return rest;
  }

  it('is answered as the server answers, with one request that asks for no records', async () => {
    for (const method of ['POST', 'GET'] as const) {
      const client = open({ method });
      for (const query of [
        'from courses where stage in () and subject = math select title, year, title',
        'from courses where stage in () search "algebra" order by year desc offset 3',
        'from courses where stage in () limit 0',
        { resource_id: 'courses', filters: { stage: [] }, include_total: false, limit: 7 } as SearchRequest,
      ]) {
        const request = typeof query === 'string' ? compile(query) : query;
        const before = seen.length;
        const result = await client.search(query);
        expect(withoutLinks(result)).toEqual(expectedFor(request));
        expect(result.records).toEqual([]);
        expect(seen.length, 'one probe').toBe(before + 1);
      }
    }
  });

  it('on a 2.12 portal it is sent as it is, beside 2.12 operators, and the portal answers it', async () => {
    const server212 = await startServer({ tables: [courses], ckan: '2.12' });
    const client = connect({ url: server212.url, retries: 0, target: 'ckan-2.12' });
    try {
      const query = 'from courses where stage in () and (year >= 2022 or subject = math)';
      const request = client.prepare(query).request;
      expect(request.filters).toHaveProperty('$or');
      const result = await client.search(query);
      expect([result.records, result.total]).toEqual([[], 0]);
      expect(result.filters).toEqual(request.filters);
    } finally {
      await client.close();
      await server212.close();
    }
  });

  it("shows the server's cap on limit, as the server does", async () => {
    const request = compile('from courses where stage in () limit 50000');
    const result = await open().search(request);
    expect(result.limit).toBe(32_000);
    expect(withoutLinks(result)).toEqual(expectedFor(request));

    // A server capped below the default limit caps the default too.
    const small = await startServer({ tables: [courses], maxLimit: 50 });
    const client = connect({ url: small.url, retries: 0 });
    try {
      for (const query of ['from courses where stage in ()', 'from courses where stage in () limit 20', 'from courses where stage in () limit 80']) {
        const answer = await client.search(query);
        expect(withoutLinks(answer)).toEqual(expectedFor(compile(query), courses, 50));
      }
      expect((await client.search('from courses where stage in ()')).limit).toBe(50);
    } finally {
      await client.close();
      await small.close();
    }
  });

  it('reports the error the server reports, in its order: fields, then filters, then sort', async () => {
    const client = open();
    const queries = [
      'from courses where nope in () order by zzz',
      'from courses where nope in () and zz = 1',
      'from courses where zz = 1 and nope in ()',
      'from courses where stage in () and zz = 1 order by zzz',
      'from courses where nope in () select title, yy order by zzz',
      'from courses where stage in () order by year, zzz desc',
      'from courses where stage in () select nope',
    ];
    for (const query of queries) {
      const request = compile(query);
      let wanted: unknown;
      try {
        evaluate(request, courses);
        expect.fail(`evaluate should refuse ${query}`);
      } catch (error) {
        wanted = error;
      }
      const got = await failure(client.search(query));
      expect({ status: got.status, body: got.body }, query).toEqual({
        status: (wanted as DatastoreError).status,
        body: (wanted as DatastoreError).body,
      });
    }
    await expect(client.search('from courses where nope in ()')).rejects.toMatchObject({
      code: 'VALIDATION_ERROR', body: { __type: 'Validation Error', filters: ['invalid value "nope"'] },
    });
  });

  it('still reports a missing resource and a missing token', async () => {
    const client = open();
    await expect(client.search('from nowhere where stage in ()')).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(client.search('from grades where grade in ()')).rejects.toMatchObject({ code: 'FORBIDDEN' });
    const allowed = await open({ token: TOKEN }).search('from grades where grade in ()');
    expect(allowed.records).toEqual([]);
  });

  it('searchAll yields nothing after one probe, and fails as search fails', async () => {
    const before = seen.length;
    const pages: unknown[] = [];
    const records: Row[] = [];
    for await (const record of open().searchAll('from big where n in ()', { onPage: (p) => pages.push(p) })) records.push(record);
    expect(records).toEqual([]);
    expect(pages).toEqual([{ fetched: 0, total: 0 }]);
    expect(seen.length).toBe(before + 1);

    const failing = open().searchAll('from big where nope in ()');
    await expect(failing.next()).rejects.toMatchObject({ code: 'VALIDATION_ERROR', body: { filters: ['invalid value "nope"'] } });
  });
});

describe('searchAll', () => {
  async function all(client: DatastoreClient, query: string | SearchRequest, pageSize?: number) {
    const records: Row[] = [];
    const pages: { fetched: number; total: number | undefined }[] = [];
    const before = seen.length;
    for await (const record of client.searchAll(query, { ...(pageSize === undefined ? {} : { pageSize }), onPage: (p) => pages.push(p) })) {
      records.push(record);
    }
    return { records, pages, requests: seen.length - before };
  }

  it('pages through a table larger than a page, by POST and by GET', async () => {
    for (const method of ['POST', 'GET'] as const) {
      const { records, pages, requests } = await all(open({ method }), 'from big');
      expect(records).toEqual(evaluate({ resource_id: BIG_ID, limit: 2_500 }, big).records);
      expect(requests).toBe(3);
      expect(pages).toEqual([
        { fetched: 1_000, total: 2_500 },
        { fetched: 2_000, total: 2_500 },
        { fetched: 2_500, total: 2_500 },
      ]);
    }
  });

  it("respects the query's own offset and limit, filters and sort", async () => {
    const query = 'from big where parity = odd order by n desc offset 100 limit 450';
    const { records, pages, requests } = await all(open(), query, 200);
    expect(records).toEqual(evaluate(compile(query), big).records);
    expect(records).toHaveLength(450);
    expect(requests).toBe(3);
    expect(pages.at(-1)).toEqual({ fetched: 450, total: 450 });
  });

  it('stops at a short page when the total is not asked for', async () => {
    const { records, requests } = await all(open(), { resource_id: 'big', filters: { parity: 'even' }, include_total: false }, 500);
    expect(records).toHaveLength(1_250);
    expect(requests).toBe(3);
  });

  it('keeps paging when the server caps the page below the page size', async () => {
    const capped = await startServer({ tables: [big], maxLimit: 300, log: (line) => seen.push(line) });
    try {
      const { records, requests } = await all(open({ url: capped.url }), 'from big select n', 1_000);
      expect(records.map((r) => r.n)).toEqual(Array.from({ length: 2_500 }, (_, i) => i));
      expect(requests).toBe(9);
    } finally {
      await capped.close();
    }
  });

  it("does not stop at a total CKAN 2.11 estimated: every record is read, the last page being short", async () => {
    // A stale pg_class.reltuples says 1,200 of 2,500 records (total_was_estimated: true).
    const records = Array.from({ length: 2_500 }, (_, i) => ({ _id: i + 1, n: i }));
    const portal = await startStubPortal({ resources: [{ id: 'big', fields: [{ id: '_id', type: 'int' }, { id: 'n', type: 'int' }], records }], estimatedTotal: 1_200 });
    try {
      const client = connect({ url: portal.url, retries: 0, target: 'ckan-2.11' });
      const read: Row[] = [];
      for await (const record of client.searchAll({ resource_id: 'big', total_estimation_threshold: 1_000 }, { pageSize: 1_000 })) read.push(record);
      expect(read.map((r) => r.n)).toEqual(records.map((r) => r.n));
      expect(portal.requests.filter((r) => r.action === 'datastore_search')).toHaveLength(3);
      await client.close();
    } finally {
      await portal.close();
    }
  });

  it('stops asking when the consumer stops reading', async () => {
    const client = open();
    const before = seen.length;
    let count = 0;
    for await (const _record of client.searchAll('from big', { pageSize: 100 })) {
      if (++count === 150) break;
    }
    expect(seen.length - before).toBe(2);
  });
});

describe('proxies from the environment', () => {
  it('goes through HTTP_PROXY, and not for hosts in NO_PROXY', async () => {
    const tunnels: string[] = [];
    const { createServer: createHttpServer } = await import('node:http');
    const { connect: connectSocket } = await import('node:net');
    const proxy = createHttpServer((_req, res) => res.writeHead(502).end());
    proxy.on('connect', (req, socket, head) => {
      tunnels.push(req.url ?? '');
      const [host, port] = (req.url ?? '').split(':');
      const upstream = connectSocket(Number(port), host, () => {
        socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
        upstream.write(head);
        upstream.pipe(socket);
        socket.pipe(upstream);
      });
      upstream.on('error', () => socket.destroy());
      socket.on('error', () => upstream.destroy());
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    const proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
    const saved = { ...process.env };
    try {
      for (const key of ['http_proxy', 'https_proxy', 'no_proxy', 'HTTPS_PROXY', 'NO_PROXY']) delete process.env[key];
      process.env.HTTP_PROXY = proxyUrl;
      const proxied = open();
      expect((await proxied.search('from courses limit 1')).records).toHaveLength(1);
      expect(tunnels).toEqual([`127.0.0.1:${server.port}`]);

      process.env.NO_PROXY = '127.0.0.1';
      const direct = open();
      expect((await direct.search('from courses limit 1')).records).toHaveLength(1);
      expect(tunnels).toHaveLength(1);
    } finally {
      process.env = saved;
      proxy.closeAllConnections();
      proxy.close();
    }
  });
});

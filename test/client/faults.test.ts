/**
 * Faults with real sockets the test controls: resets, 503 with Retry-After,
 * a server that never answers, a body cut off or dripping, and cancellation
 * during a request and during a retry wait.
 */
import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer as createNetServer } from 'node:net';
import type { Server as NetServer, Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { renderError } from '../../src/diagnostics.js';
import { afterEach, describe, expect, it } from 'vitest';

import { connect } from '../../src/client/connect.js';
import type { ClientOptions, DatastoreClient } from '../../src/client/connect.js';
import { parseRetryAfter } from '../../src/client/transport.js';
import { networkErrorCodes } from '../../src/errors.js';
import { datastoreFailure as failure } from '../helpers/outcome.js';

const OK = JSON.stringify({
  help: 'h',
  success: true,
  result: {
    resource_id: 'r', fields: [{ id: '_id', type: 'int' }], records: [{ _id: 1 }], total: 1,
    total_was_estimated: false, limit: 100, include_total: true, records_format: 'objects',
  },
});

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** An HTTP server whose n-th request (0-based) is answered by `steps[n]` (the last step repeats). */
async function scripted(steps: ((req: IncomingMessage, res: ServerResponse) => void)[]): Promise<{ url: string; hits: () => number }> {
  let hits = 0;
  const server = createServer((req, res) => {
    const step = steps[Math.min(hits, steps.length - 1)] as (req: IncomingMessage, res: ServerResponse) => void;
    hits++;
    req.resume();
    step(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(() => {
    server.closeAllConnections();
    return new Promise((resolve) => server.close(resolve));
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, hits: () => hits };
}

/** A TCP server for what HTTP servers do not do on purpose. */
async function rawServer(onSocket: (socket: Socket, index: number) => void): Promise<{ url: string; connections: () => number }> {
  let connections = 0;
  const sockets = new Set<Socket>();
  const server: NetServer = createNetServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => undefined);
    socket.on('close', () => sockets.delete(socket));
    onSocket(socket, connections++);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(() => {
    for (const socket of sockets) socket.destroy();
    return new Promise((resolve) => server.close(resolve));
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, connections: () => connections };
}

function open(options: ClientOptions): DatastoreClient {
  const client = connect({ retryDelay: 5, maxRetryDelay: 50, ...options });
  cleanups.push(() => client.close());
  return client;
}

const ok = (_req: IncomingMessage, res: ServerResponse): void => {
  res.writeHead(200, { 'content-type': 'application/json' }).end(OK);
};

const QUERY = { resource_id: 'r' };

describe('connection resets', () => {
  it('retries a reset, and gives CONNECTION_FAILED after the last attempt', async () => {
    const raw = await rawServer((socket) => socket.once('data', () => socket.resetAndDestroy()));
    const retries: string[] = [];
    const error = await failure(open({ url: raw.url, retries: 2, onRetry: (info) => retries.push(info.reason) }).search(QUERY));
    expect(error.code).toBe('CONNECTION_FAILED');
    expect(networkErrorCodes.has(error.code)).toBe(true);
    expect(error.message).toMatch(/gave up after 3 attempts/);
    expect(retries).toHaveLength(2);
    expect(raw.connections()).toBe(3);
  });

  it('succeeds when a retry finds the server answering', async () => {
    const raw = await rawServer((socket, index) => {
      socket.once('data', () => {
        if (index === 0) socket.resetAndDestroy();
        else socket.end(`HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(OK)}\r\nconnection: close\r\n\r\n${OK}`);
      });
    });
    const result = await open({ url: raw.url, retries: 1 }).search(QUERY);
    expect(result.records).toEqual([{ _id: 1 }]);
  });

  it('a refused connection is CONNECTION_FAILED with a hint, tried once, its cause said once', async () => {
    const raw = await rawServer(() => undefined);
    const url = raw.url;
    await cleanups.pop()?.();
    const retries: unknown[] = [];
    const error = await failure(open({ url, retries: 3, onRetry: (info) => retries.push(info) }).search(QUERY));
    expect(error.code).toBe('CONNECTION_FAILED');
    expect(error.message).toMatch(/refused/);
    expect(error.message).not.toMatch(/attempts/);
    expect(retries).toEqual([]);
    const rendered = renderError(error);
    expect(rendered.match(/ECONNREFUSED/g)).toHaveLength(1);
  });
});

describe('retryable statuses', () => {
  it('503 with Retry-After, then 200: waits as told (under the cap) and succeeds', async () => {
    const server = await scripted([
      (_req, res) => res.writeHead(503, { 'retry-after': '0' }).end('busy'),
      (_req, res) => res.writeHead(429, { 'retry-after': '0' }).end('slow down'),
      ok,
    ]);
    const waits: { delay: number; reason: string }[] = [];
    const client = open({ url: server.url, retries: 3, onRetry: ({ delay, reason }) => waits.push({ delay, reason }) });
    const result = await client.search(QUERY);
    expect(result.total).toBe(1);
    expect(server.hits()).toBe(3);
    // Retry-After 0 is honoured exactly
    expect(waits).toEqual([{ delay: 0, reason: 'HTTP 503' }, { delay: 0, reason: 'HTTP 429' }]);
  });

  it('a Retry-After longer than maxRetryDelay is not cut short: no early retry, an error that says when to try again', async () => {
    for (const how of ['search', 'download'] as const) {
      const server = await scripted([(_req, res) => res.writeHead(429, { 'retry-after': '3' }).end('slow down'), ok]);
      const waits: number[] = [];
      const client = open({ url: server.url, retries: 3, onRetry: ({ delay }) => waits.push(delay) });
      const error = await failure(how === 'search' ? client.search(QUERY) : client.download('datastore/dump/r', {}));
      expect(error).toMatchObject({ code: 'HTTP_ERROR', status: 429 });
      expect(error.message).toMatch(/asks for 3 s before another request \(Retry-After\), longer than this client waits \(0\.05 s\); try again after \d\d:\d\d:\d\d/);
      expect(waits).toEqual([]);
      expect(server.hits()).toBe(1);
    }
  });

  it('POST is retried too (a search is read-only)', async () => {
    const bodies: string[] = [];
    const server = await scripted([
      (req, res) => {
        let body = '';
        req.on('data', (c: Buffer) => (body += c.toString())).on('end', () => {
          bodies.push(body);
          res.writeHead(502).end();
        });
      },
      (req, res) => {
        let body = '';
        req.on('data', (c: Buffer) => (body += c.toString())).on('end', () => {
          bodies.push(body);
          ok(req, res);
        });
      },
    ]);
    await open({ url: server.url, method: 'POST' }).search({ resource_id: 'r', q: 'x' });
    expect(bodies).toEqual(['{"resource_id":"r","q":"x"}', '{"resource_id":"r","q":"x"}']);
  });

  it('gives the last answer as an error when retries run out', async () => {
    const server = await scripted([(_req, res) => res.writeHead(504, { 'content-type': 'text/plain' }).end('gateway timeout')]);
    const error = await failure(open({ url: server.url, retries: 2 }).search(QUERY));
    expect(error.code).toBe('HTTP_ERROR');
    expect(error.status).toBe(504);
    expect(error.body).toBe('gateway timeout');
    expect(error.message).toMatch(/gave up after 3 attempts/);
    expect(server.hits()).toBe(3);
    // An answer that is not retried says nothing of attempts, also after a retried one.
    const settled = await scripted([(_req, res) => res.writeHead(503).end(), (_req, res) => res.writeHead(500).end()]);
    const answered = await failure(open({ url: settled.url, retries: 2 }).search(QUERY));
    expect(answered.status).toBe(500);
    expect(answered.message).not.toMatch(/attempts/);
    expect(settled.hits()).toBe(2);
  });

  it('does not retry other statuses', async () => {
    const server = await scripted([(_req, res) => res.writeHead(500).end()]);
    const error = await failure(open({ url: server.url, retries: 3 }).search(QUERY));
    expect(error.status).toBe(500);
    expect(server.hits()).toBe(1);
  });

  it('does not follow a redirect, and says where it points', async () => {
    const server = await scripted([(_req, res) => res.writeHead(301, { location: 'https://new.example.org/api/action/datastore_search' }).end()]);
    const error = await failure(open({ url: server.url }).search(QUERY));
    expect(error.code).toBe('HTTP_ERROR');
    expect(error.status).toBe(301);
    expect(error.message).toMatch(/redirect to https:\/\/new\.example\.org/);
    expect(server.hits()).toBe(1);
  });

  it('a redirect of an action names the base URL to connect to: http to https, a language segment, a relative Location', async () => {
    const cases: [string, (url: string) => string][] = [
      ['https://data.example.org/api/3/action/datastore_search?resource_id=r', () => 'https://data.example.org'],
      ['/fr/api/action/datastore_search', (url) => `${url}/fr`],
      ['https://data.example.org/catalogue/api/action/datastore_search', () => 'https://data.example.org/catalogue'],
    ];
    for (const [location, base] of cases) {
      const server = await scripted([(_req, res) => res.writeHead(302, { location }).end()]);
      const error = await failure(open({ url: server.url, method: 'GET' }).search(QUERY));
      expect(error.code).toBe('HTTP_ERROR');
      expect(error.message).toContain(`connect to ${base(server.url)} instead`);
      expect(server.hits()).toBe(1);
    }
  });

  it('a 404 page that is not CKAN\'s (a wrong base URL) and a portal without the DataStore say what is wrong', async () => {
    const page = await scripted([(_req, res) => res.writeHead(404, { 'content-type': 'text/html' }).end('<html><body><h1>404 Not Found</h1></body></html>')]);
    const wrongUrl = await failure(open({ url: `${page.url}/dataset` }).search(QUERY));
    expect(wrongUrl).toMatchObject({ code: 'HTTP_ERROR', status: 404 });
    expect(wrongUrl.message).toMatch(/is the URL the portal's base URL \(the part before \/api\/\)\? CKAN answers its \/api\/action\/ URLs with JSON, an error too/);
    const noDatastore = await scripted([(_req, res) => res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify('Bad request - Action name not known: datastore_search'))]);
    const refused = await failure(open({ url: noDatastore.url }).search(QUERY));
    expect(refused).toMatchObject({ code: 'BAD_REQUEST', status: 400 });
    expect(refused.message).toMatch(/has no DataStore \(datastore_search is not one of its actions.*ckql datasets/);
    expect(noDatastore.hits()).toBe(1);
  });

  it('reads Retry-After as seconds or as an HTTP date', () => {
    const now = Date.parse('2025-01-01T00:00:00Z');
    expect(parseRetryAfter('7', now)).toBe(7_000);
    expect(parseRetryAfter('Wed, 01 Jan 2025 00:00:05 GMT', now)).toBe(5_000);
    expect(parseRetryAfter('Tue, 31 Dec 2024 23:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter(undefined, now)).toBeUndefined();
  });
});

describe('timeouts', () => {
  it('a server that never answers gives TIMEOUT, without retrying', async () => {
    const raw = await rawServer(() => undefined);
    const error = await failure(open({ url: raw.url, timeout: 150, retries: 3 }).search(QUERY));
    expect(error.code).toBe('TIMEOUT');
    expect(error.message).toMatch(/did not answer within 150 ms/);
    expect(raw.connections()).toBe(1);
  });

  it('a body that drips slower than the timeout allows gives TIMEOUT', async () => {
    const server = await scripted([
      (_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write(' ');
        const drip = setInterval(() => res.write(' '), 40);
        res.on('close', () => clearInterval(drip));
      },
    ]);
    const error = await failure(open({ url: server.url, timeout: 200, retries: 0 }).search(QUERY));
    expect(error.code).toBe('TIMEOUT');
    expect(error.message).toMatch(/did not arrive within 200 ms/);
  });
});

describe('a connection closed mid-body', () => {
  const cutOff = (socket: Socket): void => {
    socket.once('data', () => {
      socket.write(`HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(OK)}\r\n\r\n${OK.slice(0, 40)}`);
      setTimeout(() => socket.destroy(), 20);
    });
  };

  it('is CONNECTION_FAILED saying the response was incomplete', async () => {
    const raw = await rawServer(cutOff);
    const error = await failure(open({ url: raw.url, retries: 0 }).search(QUERY));
    expect(error.code).toBe('CONNECTION_FAILED');
    expect(error.message).toMatch(/broke off before the response was complete/);
  });

  it('is retried, and a complete answer is used', async () => {
    const raw = await rawServer((socket, index) => {
      if (index === 0) cutOff(socket);
      else socket.once('data', () => socket.end(`HTTP/1.1 200 OK\r\ncontent-length: ${Buffer.byteLength(OK)}\r\nconnection: close\r\n\r\n${OK}`));
    });
    expect((await open({ url: raw.url, retries: 1 }).search(QUERY)).records).toHaveLength(1);
  });
});

describe('cancellation', () => {
  it('an abort during a request lands at once', async () => {
    const raw = await rawServer(() => undefined);
    const controller = new AbortController();
    const pending = open({ url: raw.url, timeout: 60_000 }).search(QUERY, { signal: controller.signal });
    setTimeout(() => controller.abort(), 30);
    const error = await failure(pending);
    expect(error.code).toBe('ABORTED');
    expect(networkErrorCodes.has(error.code)).toBe(false);
  });

  it('an abort during a retry wait lands at once', async () => {
    const server = await scripted([(_req, res) => res.writeHead(503, { 'retry-after': '600' }).end()]);
    const controller = new AbortController();
    const client = open({ url: server.url, retries: 5, maxRetryDelay: 600_000, onRetry: () => controller.abort() });
    const error = await failure(client.search(QUERY, { signal: controller.signal }));
    expect(error.code).toBe('ABORTED');
    expect(server.hits()).toBe(1);
  });

  it('an already aborted signal sends nothing', async () => {
    const server = await scripted([ok]);
    const error = await failure(open({ url: server.url }).search(QUERY, { signal: AbortSignal.abort() }));
    expect(error.code).toBe('ABORTED');
    expect(server.hits()).toBe(0);
  });

  it('an abort while searchAll waits for a page ends the iteration with ABORTED', async () => {
    let first = true;
    const server = await scripted([
      (_req, res) => {
        if (!first) return; // the second page never comes
        first = false;
        const page = JSON.parse(OK) as { result: { records: unknown[]; total: number; limit: number } };
        page.result.records = [{ _id: 1 }, { _id: 2 }];
        page.result.total = 10;
        page.result.limit = 2;
        res.writeHead(200).end(JSON.stringify(page));
      },
    ]);
    const controller = new AbortController();
    const seen: unknown[] = [];
    const iterate = async (): Promise<void> => {
      for await (const record of open({ url: server.url }).searchAll(QUERY, { pageSize: 2, signal: controller.signal })) {
        seen.push(record);
        if (seen.length === 2) setTimeout(() => controller.abort(), 20);
      }
    };
    const error = await failure(iterate());
    expect(error.code).toBe('ABORTED');
    expect(seen).toHaveLength(2);
  });
});

describe('the token stays secret', () => {
  it('a server that echoes the Authorization header does not get it into the error', async () => {
    const token = 'echoed-secret-token-99';
    const server = await scripted([
      (req, res) => {
        const body = JSON.stringify({ success: false, error: { __type: 'Authorization Error', message: `bad token ${req.headers.authorization}` } });
        res.writeHead(403, { 'content-type': 'application/json' }).end(body);
      },
      (req, res) => res.writeHead(502).end(`upstream said ${req.headers.authorization}`),
    ]);
    const client = open({ url: server.url, token, retries: 0 });
    for (let i = 0; i < 2; i++) {
      const error = await failure(client.search(QUERY));
      const visible = JSON.stringify({ ...error, message: error.message, stack: error.stack });
      expect(visible).not.toContain(token);
      expect(visible).toContain('<redacted>');
    }
  });
});

describe('hostile servers', () => {
  const page = (records: unknown[], extra: Record<string, unknown> = {}): string =>
    JSON.stringify({ success: true, result: { resource_id: 'r', fields: [{ id: 'n', type: 'int' }], records, limit: 2, ...extra } });

  it('searchAll stops with INVALID_RESPONSE when a server ignores offset and sends no total', async () => {
    const server = await scripted([(_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(page([{ n: 1 }, { n: 2 }]))]);
    const client = open({ url: server.url });
    const seen: unknown[] = [];
    const error = await failure(
      (async () => {
        for await (const row of client.searchAll(QUERY, { pageSize: 2 })) seen.push(row);
      })(),
    );
    expect(error.code).toBe('INVALID_RESPONSE');
    expect(error.message).toContain('it ignores offset');
    expect(seen).toEqual([{ n: 1 }, { n: 2 }]);
    expect(server.hits()).toBe(2);
  });

  it('a body over maxResponseBytes is RESPONSE_TOO_LARGE, with or without a content-length', async () => {
    const junk = 'x'.repeat(64 * 1024);
    const declared = await scripted([(_req, res) => res.writeHead(200, { 'content-length': String(junk.length * 20) }).end(junk.repeat(20))]);
    const first = await failure(open({ url: declared.url, maxResponseBytes: 100_000 }).search(QUERY));
    expect(first.code).toBe('RESPONSE_TOO_LARGE');
    const chunked = await scripted([
      (_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        for (let i = 0; i < 20; i += 1) res.write(junk);
        res.end();
      },
    ]);
    const second = await failure(open({ url: chunked.url, maxResponseBytes: 100_000 }).search(QUERY));
    expect(second.code).toBe('RESPONSE_TOO_LARGE');
    expect(second.message).toContain('larger than 100000 bytes');
  });

  it('error bodies whose fields are objects, or carry their own toString, become typed errors that render', async () => {
    const hostile = JSON.stringify({
      success: false,
      error: { __type: 'Validation Error', filters: { toString: 'boom', valueOf: 1 }, message: { toString: 'x' }, q: [{ a: 1 }, 2] },
    });
    const server = await scripted([(_req, res) => res.writeHead(409, { 'content-type': 'application/json' }).end(hostile)]);
    const error = await failure(open({ url: server.url }).search(QUERY));
    expect(error.code).toBe('VALIDATION_ERROR');
    expect(error.message).toContain('filters: {"toString":"boom","valueOf":1}');
    expect(renderError(error)).toContain('VALIDATION_ERROR');
  });

  it('a result whose records or fields are not what they must be is INVALID_RESPONSE naming the part', async () => {
    const server = await scripted([
      (_req, res) => res.writeHead(200).end(page([1, 2])),
      (_req, res) => res.writeHead(200).end(JSON.stringify({ success: true, result: { records: [], fields: [{ type: 'int' }] } })),
    ]);
    const client = open({ url: server.url });
    expect((await failure(client.search(QUERY))).message).toContain('records[0] is not an object');
    expect((await failure(client.search(QUERY))).message).toContain('fields[0] is not a field');
  });

  it('checks every part of a result it reads: resource_id, field types, counts, flags, the 2.12 cursor (each was a TypeError or a NaN further on)', async () => {
    const valid = JSON.parse(OK) as { result: Record<string, unknown> };
    const answers: [Record<string, unknown>, string][] = [
      [{ resource_id: undefined }, 'a datastore_search result whose resource_id is not a text'],
      [{ resource_id: 7 }, 'resource_id is not a text'],
      [{ fields: [{ id: '_id' }] }, 'fields[0] is not a field'],
      [{ total: '1' }, 'total is not a whole number of 0 or more'],
      [{ total: -1 }, 'total is not a whole number of 0 or more'],
      [{ total: 1.5 }, 'total is not a whole number of 0 or more'],
      [{ limit: 'a hundred' }, 'limit is not a whole number of 0 or more'],
      [{ offset: -5 }, 'offset is not a whole number of 0 or more'],
      [{ total_was_estimated: 'no' }, 'total_was_estimated is not true or false'],
      [{ next_page: { _id: { gt: 'x' } } }, 'next_page is not a cursor'],
      [{ next_page: 5 }, 'next_page is not a cursor'],
      [{ records_format: 'csv' }, 'records_format is "csv", not objects or lists'],
    ];
    const bodies = answers.map(([change]) => JSON.stringify({ success: true, result: { ...valid.result, ...change } }));
    // 1e999 is JSON for a number no double holds: JSON.parse reads Infinity
    bodies.push(OK.replace('"total":1', '"total":1e999'));
    answers.push([{}, 'total is not a whole number of 0 or more']);
    const server = await scripted(bodies.map((body) => (_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(body)));
    const client = open({ url: server.url, retries: 0 });
    for (const [change, said] of answers) {
      const error = await failure(client.search(QUERY));
      expect(error.code, JSON.stringify(change)).toBe('INVALID_RESPONSE');
      expect(error.message, JSON.stringify(change)).toContain(said);
    }
    // a total of null is no total, as include_total: false gives none
    const none = await scripted([(_req, res) => res.writeHead(200).end(JSON.stringify({ success: true, result: { ...valid.result, total: null } }))]);
    expect((await open({ url: none.url }).search(QUERY)).total).toBeUndefined();
  });

  it('reads a datastore_search_sql answer without resource_id, and refuses a count that is no number', async () => {
    const sql = (total: unknown) =>
      JSON.stringify({ success: true, result: { sql: 'SELECT', records: [{ _id: 1, _ckql_total: total }], fields: [{ id: '_id', type: 'int' }, { id: '_ckql_total', type: 'int8' }] } });
    const server = await scripted([(_req, res) => res.writeHead(200).end(sql('3')), (_req, res) => res.writeHead(200).end(sql('many'))]);
    const client = open({ url: server.url, retries: 0, target: 'sql' });
    const result = await client.search('from r where _id >= 1');
    expect([result.records, result.total]).toEqual([[{ _id: 1 }], 3]);
    const error = await failure(client.search('from r where _id >= 1'));
    expect(error.code).toBe('INVALID_RESPONSE');
    expect(error.message).toContain('datastore_search_sql result whose records[0]._ckql_total (the count) is not a whole number');
  });
});

/**
 * What CKAN's own clients send, over real HTTP, answered as a portal
 * answers (docs/ckan-2.11-reference.md §6, docs/ckan-2.12-reference.md):
 * DataTables' two requests per draw, Recline's form-encoded POST, a JSONP
 * GET, `text/plain` bodies, `status_show`, `_table_metadata`, 2.12's
 * `next_page`; and the server under a client that pipelines and never reads.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect as connectSocket } from 'node:net';
import type { Socket } from 'node:net';
import { Agent, request } from 'undici';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

import { startServer } from '../../src/server/server.js';
import type { RunningServer } from '../../src/server/server.js';
import { evaluate } from '../../src/engine/memory/evaluate.js';
import { memoryEngine } from '../../src/engine/memory/engine.js';
import { makeTable, big, courses, COURSES_ID } from './tables.js';

const ACTION = '/api/3/action/datastore_search';

let v211: RunningServer;
let v212: RunningServer;
let agent: Agent;

const stamps = makeTable(
  '9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d',
  ['stamps'],
  [
    { id: 'at', type: 'timestamp' },
    { id: 'big', type: 'int8' },
    { id: 'tags', type: '_text' },
    { id: 'note', type: 'text' },
  ],
  [
    { at: '2023-09-07T00:00:00', big: '9007199254740993', note: 'a, "quoted" one' },
    { at: null, big: 5, note: '' },
  ],
);
const tagged = { ...stamps, rows: stamps.rows.map((row, i) => ({ ...row, tags: i === 0 ? ['x', 'y z'] : null })) };

beforeAll(async () => {
  v211 = await startServer({ tables: [courses, big, tagged, wide], port: 0 });
  v212 = await startServer({ tables: [courses, big, tagged], port: 0, ckan: '2.12' });
  agent = new Agent({ keepAliveTimeout: 10, keepAliveMaxTimeout: 10 });
});

afterAll(async () => {
  await agent.close();
  await v211.close();
  await v212.close();
});

interface Answer {
  readonly status: number;
  readonly type: string;
  readonly text: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  readonly json: any;
}

async function call(server: RunningServer, method: string, path: string, body?: string, headers: Record<string, string> = {}): Promise<Answer> {
  const response = await request(`${server.url}${path}`, { dispatcher: agent, method: method as 'GET', body, headers });
  const text = await response.body.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: response.statusCode, type: String(response.headers['content-type']), text, json };
}

const postJson = (server: RunningServer, body: unknown): Promise<Answer> =>
  call(server, 'POST', ACTION, JSON.stringify(body), { 'content-type': 'application/json' });

describe("DataTables' two requests per draw", () => {
  it('first the count ({limit: 0, filters}), then the page with a prefix search', async () => {
    const filters = { subject: 'math' };
    const count = await postJson(v211, { resource_id: COURSES_ID, limit: 0, filters });
    expect(count.status).toBe(200);
    expect(count.json.result.records).toEqual([]);
    expect(count.json.result.total).toBe(3);

    const page = await postJson(v211, {
      resource_id: COURSES_ID,
      q: 'alg:*',
      plain: false,
      language: 'simple',
      offset: 0,
      limit: 10,
      sort: 'year desc',
      filters,
    });
    expect(page.status).toBe(200);
    const result = page.json.result;
    expect(result.records.map((r: { title: string }) => r.title)).toEqual(['Abstract Algebra', 'Linear Algebra']);
    expect(result.total).toBe(2);
    // echoed as CKAN echoes the validated request
    expect(result).toMatchObject({ q: 'alg:*', plain: false, language: 'simple', offset: 0, sort: 'year desc', filters });
    expect(result.fields.at(-1)).toEqual({ id: 'rank', type: 'float' });
  });
});

describe("Recline's form-encoded POST", () => {
  it('a form whose one key is the JSON text of the request (jQuery without a content type)', async () => {
    const body = JSON.stringify({ resource_id: 'courses', filters: { stage: 'active' }, limit: 5 });
    const answer = await call(v211, 'POST', ACTION, body, { 'content-type': 'application/x-www-form-urlencoded; charset=UTF-8' });
    expect(answer.status).toBe(200);
    expect(answer.json.result.records.map((r: { _id: number }) => r._id)).toEqual([1, 3]);
    expect(answer.json.result.filters).toEqual({ stage: 'active' });
  });

  it('form fields as parameters, filters as JSON text', async () => {
    const form = new URLSearchParams({ resource_id: 'courses', limit: '1', filters: JSON.stringify({ subject: 'physics' }) }).toString();
    const answer = await call(v211, 'POST', ACTION, form, { 'content-type': 'application/x-www-form-urlencoded' });
    expect(answer.status).toBe(200);
    expect(answer.json.result.records.map((r: { title: string }) => r.title)).toEqual(['Mechanics']);
    expect(answer.json.result.limit).toBe(1);
  });
});

describe('JSONP and other bodies', () => {
  it('a GET with callback= is wrapped as CKAN wraps it, with its own content type', async () => {
    const answer = await call(v211, 'GET', `${ACTION}?resource_id=courses&limit=1&callback=handle`);
    expect(answer.status).toBe(200);
    expect(answer.type).toBe('application/javascript;charset=utf-8');
    expect(answer.text.startsWith('handle({"help":')).toBe(true);
    expect(answer.text.endsWith('});')).toBe(true);
    const inner = JSON.parse(answer.text.slice('handle('.length, -2)) as { result: { records: { _id: number }[]; _links: { next: string } } };
    expect(inner.result.records.map((r) => r._id)).toEqual([1]);
    // `callback` is not a parameter (no __extras), but it stays in the links' query string
    expect(inner.result._links.next).toBe(`${ACTION}?resource_id=courses&limit=1&callback=handle&offset=1`);
  });

  it('an error is not wrapped; the callback name is HTML-escaped', async () => {
    const error = await call(v211, 'GET', `${ACTION}?resource_id=nope&callback=cb`);
    expect(error.status).toBe(404);
    expect(error.json.error.__type).toBe('Not Found Error');
    const escaped = await call(v211, 'GET', `${ACTION}?resource_id=courses&limit=0&callback=${encodeURIComponent('a<b>')}`);
    expect(escaped.text.startsWith('a&lt;b&gt;(')).toBe(true);
  });

  it('text/plain is 415, as Flask answers for CKAN', async () => {
    const answer = await call(v211, 'POST', ACTION, '{"resource_id":"courses"}', { 'content-type': 'text/plain' });
    expect(answer.status).toBe(415);
    expect(answer.text).toContain('Unsupported Media Type');
  });

  it('id is the alias of resource_id', async () => {
    const answer = await postJson(v211, { id: 'courses', limit: 1 });
    expect(answer.status).toBe(200);
    expect(answer.json.result.resource_id).toBe(COURSES_ID);
    expect(answer.json.result).not.toHaveProperty('id');
  });
});

describe('the version a client talks to', () => {
  it('status_show names it', async () => {
    for (const [server, version] of [[v211, '2.11.5'], [v212, '2.12.0']] as const) {
      const answer = await call(server, 'GET', '/api/3/action/status_show');
      expect(answer.status).toBe(200);
      expect(answer.json.help).toBe(`${server.url}/api/3/action/help_show?name=status_show`);
      expect(Object.keys(answer.json.result)).toEqual(['site_title', 'site_description', 'site_url', 'error_emails_to', 'locale_default', 'extensions', 'ckan_version']);
      expect(answer.json.result.ckan_version).toBe(version);
    }
  });

  it("the cheap feature probe: _table_metadata with include_next_page (2.12: 200, 2.11: __extras)", async () => {
    const body = { resource_id: '_table_metadata', limit: 0, include_next_page: true };
    const on212 = await postJson(v212, body);
    expect(on212.status).toBe(200);
    expect(on212.json.result.include_next_page).toBe(true);
    expect(on212.json.result.total).toBe(6); // three tables and their aliases
    const on211 = await postJson(v211, body);
    expect(on211.status).toBe(409);
    expect(on211.json.error).toEqual({ __extras: ['invalid value "include_next_page"'], __type: 'Validation Error' });
  });

  it('_table_metadata lists every table and alias, with CKAN\'s columns', async () => {
    const answer = await postJson(v211, { resource_id: '_table_metadata', filters: { name: 'courses' } });
    expect(answer.status).toBe(200);
    // CKAN types every table's `_id` int (`_get_fields_types`), the view's md5 text included.
    expect(answer.json.result.fields).toEqual([
      { id: '_id', type: 'int' },
      { id: 'name', type: 'name' },
      { id: 'oid', type: 'oid' },
      { id: 'alias_of', type: 'name' },
    ]);
    expect(answer.json.result.records).toMatchObject([{ name: 'courses', alias_of: COURSES_ID }]);
  });
});

describe('response shapes of each version', () => {
  it('2.11: echo in alphabetical order, total_estimation_threshold null, _links with prev, total_was_estimated', async () => {
    const answer = await call(v211, 'GET', `${ACTION}?resource_id=big&limit=2&offset=6&fields=n`);
    const result = answer.json.result;
    expect(Object.keys(result)).toEqual([
      'fields', 'include_total', 'limit', 'offset', 'records_format', 'resource_id', 'total_estimation_threshold',
      'records', '_links', 'total', 'total_was_estimated',
    ]);
    expect(result._links).toEqual({
      start: `${ACTION}?resource_id=big&limit=2&fields=n`,
      next: `${ACTION}?resource_id=big&limit=2&offset=8&fields=n`,
      prev: `${ACTION}?resource_id=big&limit=2&offset=4&fields=n`,
    });
    expect(result.total_estimation_threshold).toBeNull();
    const noTotal = await postJson(v211, { resource_id: 'big', limit: 1, include_total: false });
    expect(noTotal.json.result).not.toHaveProperty('total');
    expect(noTotal.json.result).not.toHaveProperty('total_was_estimated');
  });

  it('2.11: total_estimation_threshold estimates an unfiltered total at or above it', async () => {
    const estimated = await postJson(v211, { resource_id: 'big', limit: 0, total_estimation_threshold: 1000 });
    expect(estimated.json.result).toMatchObject({ total: 2500, total_was_estimated: true, total_estimation_threshold: 1000 });
    const filtered = await postJson(v211, { resource_id: 'big', limit: 0, total_estimation_threshold: 1000, filters: { parity: 'odd' } });
    expect(filtered.json.result).toMatchObject({ total: 1250, total_was_estimated: false });
  });

  it('2.12: include_next_page echoed, no _links, no total_was_estimated, next_page as 2.12 computes it', async () => {
    const first = await postJson(v212, { resource_id: 'big', limit: 2, include_next_page: true, fields: ['n'] });
    const result = first.json.result;
    expect(Object.keys(result)).toEqual(['fields', 'include_next_page', 'include_total', 'limit', 'records_format', 'resource_id', 'records', 'total', 'next_page']);
    expect(result.records).toEqual([{ n: 0 }, { n: 1 }]);
    expect(result.next_page).toEqual({ _id: { gt: 2 } });
    const desc = await postJson(v212, { resource_id: 'big', limit: 3, sort: '_id desc', include_next_page: true });
    expect(desc.json.result.next_page).toEqual({ _id: { lt: 2498 } });
    // a sort that is not one `_id` clause, or an empty page: no next_page
    const bySort = await postJson(v212, { resource_id: 'big', limit: 2, sort: 'n', include_next_page: true });
    expect(bySort.json.result).not.toHaveProperty('next_page');
    const past = await postJson(v212, { resource_id: 'big', limit: 2, offset: 5000, include_next_page: true });
    expect(past.json.result.records).toEqual([]);
    expect(past.json.result).not.toHaveProperty('next_page');
    const plain = await postJson(v212, { resource_id: 'big', limit: 1, total_estimation_threshold: 5 });
    expect(plain.json.result.include_next_page).toBe(false);
    expect(plain.json.result).not.toHaveProperty('total_estimation_threshold');
    expect(plain.json.result).not.toHaveProperty('_links');
  });

  it('records_format lists, csv, tsv as CKAN renders them; timestamps and big integers as CKAN writes them', async () => {
    const lists = await postJson(v211, { resource_id: 'stamps', records_format: 'lists' });
    expect(lists.json.result.records).toEqual([
      [1, '2023-09-07T00:00:00', Number('9007199254740993'), ['x', 'y z'], 'a, "quoted" one'],
      [2, null, 5, null, ''],
    ]);
    // exact on the wire: the digits are written as they were loaded
    expect(lists.text).toContain('9007199254740993');
    const csv = await postJson(v211, { resource_id: 'stamps', records_format: 'csv' });
    expect(csv.json.result.records).toBe('1,2023-09-07T00:00:00,9007199254740993,"[""x"",""y z""]","a, ""quoted"" one"\n2,,5,null,""\n');
    const tsv = await postJson(v212, { resource_id: 'stamps', records_format: 'tsv', fields: 'note,at' });
    expect(tsv.json.result.records).toBe('"a, ""quoted"" one"\t2023-09-07T00:00:00.000\n""\t\n');
    const objects = await postJson(v212, { resource_id: 'stamps', limit: 1 });
    expect(objects.json.result.records[0].at).toBe('2023-09-07T00:00:00.000');
  });

  it('sort items with nulls first|last', async () => {
    const answer = await postJson(v211, { resource_id: 'courses', sort: 'year asc nulls first', fields: ['_id'], limit: 2 });
    expect(answer.status).toBe(200);
    expect(answer.json.result.records).toEqual([{ _id: 6 }, { _id: 4 }]);
    expect(answer.json.result.sort).toBe('year asc nulls first');
  });
});

describe('parameters a CKAN client sends, answered with the records the evaluator gives', () => {
  it.each([
    [{ q: { title: 'algebra' } }],
    [{ q: 'mechanics', full_text: 'algebra' }],
    [{ distinct: true, fields: ['subject'], sort: 'subject' }],
    [{ filters: '{"stage": ["active", "survey"]}', sort: ['year desc nulls last', 'title'] }],
  ])('%j', async (extra) => {
    const body = { resource_id: 'courses', ...extra };
    const answer = await postJson(v211, body);
    expect(answer.status).toBe(200);
    const expected = evaluate(body as never, courses);
    const strip = (r: Record<string, unknown>) => Object.fromEntries(Object.entries(r).filter(([k]) => !k.startsWith('rank')));
    expect(answer.json.result.records.map(strip)).toEqual(expected.records);
  });
});

/** 32,000 records of ~1 KB: one answer is ~32 MB, far more than a socket's kernel buffers take. */
const wide = makeTable('2b3c4d5e-6f7a-4b8c-9d0e-1f2a3b4c5d6e', ['wide'], [{ id: 'text', type: 'text' }], Array.from({ length: 32_000 }, () => ({ text: 'x'.repeat(1_000) })));

/** `gc()` without `--expose-gc`: V8 installs it in a context made after the flag is set. */
const collectGarbage = ((): (() => void) => {
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
})();

async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((r) => setTimeout(r, 10));
}

describe('large answers', () => {
  it('are written in pieces as the client reads (chunked), and hold the records the evaluator gives', async () => {
    for (const format of ['objects', 'lists', 'csv'] as const) {
      const large = await request(`${v211.url}${ACTION}?resource_id=wide&limit=400&records_format=${format}`, { dispatcher: agent });
      const text = await large.body.text();
      expect(large.headers['transfer-encoding']).toBe('chunked');
      expect(large.headers['content-length']).toBeUndefined();
      const records = (JSON.parse(text) as { result: { records: unknown } }).result.records;
      const expected = evaluate({ resource_id: 'wide', limit: 400 }, wide).records;
      if (format === 'objects') expect(records).toEqual(expected);
      else if (format === 'lists') expect(records).toEqual(expected.map((r) => [r._id, r.text]));
      else expect(records).toBe(expected.map((r) => `${r._id},${String(r.text)}\n`).join(''));
    }
    // Smaller answers keep their length.
    const small = await request(`${v211.url}${ACTION}?resource_id=courses&limit=2`, { dispatcher: agent });
    await small.body.text();
    expect(small.headers['content-length']).toBeDefined();
  });
});

describe('a client that pipelines and never reads', () => {
  function rawSocket(server: RunningServer): Promise<Socket> {
    return new Promise((resolve, reject) => {
      const socket = connectSocket(server.port, '127.0.0.1', () => resolve(socket));
      socket.once('error', reject);
    });
  }

  it('holds one answer at a time, and its memory comes back when it closes', async () => {
    let searches = 0;
    const memory = memoryEngine([big]);
    const engine = { ...memory, search: (...args: Parameters<typeof memory.search>) => { searches++; return memory.search(...args); } };
    const local = await startServer({ engine, port: 0, maxLimit: 2_500 });
    try {
      const one = `GET ${ACTION}?resource_id=big&limit=2500 HTTP/1.1\r\nHost: x\r\n\r\n`;
      // Live memory, not garbage: what other tests running beside this one leave uncollected is not held here.
      // Each measure is a full collection of this worker's heap, so there are few of them.
      const live = (): number => {
        collectGarbage();
        return process.memoryUsage().heapUsed;
      };
      const before = live();
      const sockets: Socket[] = [];
      for (let c = 0; c < 10; c++) {
        const socket = await rawSocket(local);
        socket.pause(); // never reads
        socket.write(one.repeat(40));
        sockets.push(socket);
      }
      // Measured once searching has stopped: each connection then waits for its client to read (what the
      // kernel's socket buffers on loopback took, a few MB per connection, was answered before that).
      await until(() => searches >= 10);
      for (let seen = -1; seen !== searches; ) {
        seen = searches;
        await new Promise((r) => setTimeout(r, 100));
      }
      // 400 answers of ~100 KB each would be 40 MB if every one were built; one per connection is ~1 MB.
      expect(live() - before).toBeLessThan(25 * 1024 * 1024);
      for (const socket of sockets) socket.destroy();
      await new Promise((r) => setTimeout(r, 100));
      expect(live() - before).toBeLessThan(5 * 1024 * 1024);
      const next = await call(local, 'GET', `${ACTION}?resource_id=big&limit=1`);
      expect(next.status).toBe(200);
    } finally {
      await local.close();
    }
  });

  it('a closed connection\'s queued requests are dropped, not searched', async () => {
    let searches = 0;
    const memory = memoryEngine([wide]);
    const engine = { ...memory, search: (...args: Parameters<typeof memory.search>) => { searches++; return memory.search(...args); } };
    const local = await startServer({ engine, port: 0 });
    try {
      const socket = await rawSocket(local);
      socket.pause();
      socket.write(`GET ${ACTION}?resource_id=wide&limit=32000 HTTP/1.1\r\nHost: x\r\n\r\n`.repeat(10));
      await until(() => searches > 0);
      await new Promise((r) => setTimeout(r, 100));
      expect(searches).toBe(1); // the first answer waits for the client to read
      socket.destroy();
      await new Promise((r) => setTimeout(r, 200));
      expect(searches).toBe(1);
    } finally {
      await local.close();
    }
  });

  it('holds a piece of a large unread answer, not all of it', async () => {
    const answerBytes = 32_000 * 1_000; // its texts alone
    const local = await startServer({ tables: [wide], port: 0 });
    const sockets: Socket[] = [];
    try {
      const held = (): number => {
        collectGarbage();
        const usage = process.memoryUsage();
        return usage.heapUsed + usage.external + usage.arrayBuffers;
      };
      const before = held();
      for (let c = 0; c < 3; c++) {
        const socket = await rawSocket(local);
        socket.pause(); // never reads
        socket.write(`GET ${ACTION}?resource_id=wide&limit=32000 HTTP/1.1\r\nHost: x\r\n\r\n`);
        sockets.push(socket);
      }
      await new Promise((r) => setTimeout(r, 500));
      // Whole answers would be ~3 × 32 MB less what the kernel's socket buffers took (a few MB each).
      expect(held() - before).toBeLessThan(answerBytes / 2);
    } finally {
      for (const socket of sockets) socket.destroy();
      await local.close();
    }
  });

  it('a connection that queues more than the bound is closed', async () => {
    const socket = await rawSocket(v211);
    socket.pause();
    const closed = new Promise<boolean>((resolve) => {
      socket.once('close', () => resolve(true));
      setTimeout(() => resolve(false), 3_000).unref();
    });
    socket.write(`GET ${ACTION}?resource_id=big&limit=2000 HTTP/1.1\r\nHost: x\r\n\r\n`.repeat(200));
    expect(await closed).toBe(true);
  });
});

describe('oversize and malformed requests', () => {
  /** Whether `text` holds a response's head and as many bytes of body as its Content-Length says. */
  function wholeResponse(text: string): boolean {
    const end = text.indexOf('\r\n\r\n');
    const length = end === -1 ? undefined : /\r\ncontent-length: *(\d+)/i.exec(text.slice(0, end))?.[1];
    return length !== undefined && Buffer.byteLength(text.slice(end + 4)) >= Number(length);
  }

  function exchange(server: RunningServer, payload: string | Buffer, idleMs = 1_500): Promise<string> {
    return new Promise((resolve, reject) => {
      const socket = connectSocket(server.port, '127.0.0.1', () => socket.write(payload));
      let text = '';
      let timer = setTimeout(() => finish(), idleMs);
      const finish = (): void => {
        clearTimeout(timer);
        socket.destroy();
        resolve(text);
      };
      socket.on('data', (chunk: Buffer) => {
        text += chunk.toString('utf8');
        clearTimeout(timer);
        // a whole response (its Content-Length read) needs no wait for silence
        if (wholeResponse(text)) finish();
        else timer = setTimeout(() => finish(), idleMs);
      });
      socket.on('close', finish);
      socket.on('error', (error: NodeJS.ErrnoException) => (error.code === 'ECONNRESET' || error.code === 'EPIPE' ? finish() : reject(error)));
    });
  }

  it('a 5 MB POST sent in one write gets its 413, not a reset', async () => {
    const body = JSON.stringify({ resource_id: 'courses', q: 'x'.repeat(5 * 1024 * 1024) });
    for (let i = 0; i < 2; i++) {
      const text = await exchange(v211, `POST ${ACTION} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
      expect(text).toMatch(/^HTTP\/1\.1 413 /);
    }
  });

  it('a 5 MB q over GET gets its 431 before the connection closes, with the help key', async () => {
    const text = await exchange(v211, `GET ${ACTION}?resource_id=courses&q=${'x'.repeat(5 * 1024 * 1024)} HTTP/1.1\r\nHost: x\r\n\r\n`);
    expect(text).toMatch(/^HTTP\/1\.1 431 /);
    const body = JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4)) as { help: string; success: boolean };
    expect(body.help).toBe(`${v211.url}/api/3/action/help_show?name=datastore_search`);
    expect(body.success).toBe(false);
  });

  it('an HTTP/0.9-style request line (no version) is 400', async () => {
    const text = await exchange(v211, `GET ${ACTION}?resource_id=courses\r\n\r\n`);
    expect(text).not.toMatch(/ 200 /);
    expect(text).toMatch(/^HTTP\/1\.1 400 /);
  });
});

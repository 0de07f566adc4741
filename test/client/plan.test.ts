/**
 * The client runs plans against the real local server: what a target cannot
 * say is applied locally, the refusal above `maxScan` comes before any
 * record is fetched, reading stops early, the target is detected once
 * (status_show, else the 2.12 probe), and `searchAll` pages with 2.12's
 * `next_page`.
 */
import { createServer, request as httpRequest } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

import { connect } from '../../src/client/connect.js';
import type { ClientOptions, DatastoreClient } from '../../src/client/connect.js';
import { targetOfVersion } from '../../src/client/target-detect.js';
import { QueryError } from '../../src/errors.js';
import type { Row } from '../../src/datastore/types.js';
import { startServer, type RunningServer } from '../../src/server/server.js';
import { big } from '../server/tables.js';

let server211: RunningServer;
let server212: RunningServer;
const log211: string[] = [];
const log212: string[] = [];
const clients: DatastoreClient[] = [];

beforeAll(async () => {
  server211 = await startServer({ tables: [big], log: (line) => log211.push(line) });
  server212 = await startServer({ tables: [big], ckan: '2.12', log: (line) => log212.push(line) });
});

afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close()));
  log211.length = 0;
  log212.length = 0;
});

afterAll(async () => {
  await server211.close();
  await server212.close();
});

function client(url: string, options: Partial<ClientOptions> = {}): DatastoreClient {
  const made = connect({ url, retries: 0, ...options });
  clients.push(made);
  return made;
}

const searches = (log: readonly string[]) => log.filter((line) => line.includes('datastore_search ')).length;
const ns = (records: readonly Row[]) => records.map((r) => r['n']);

describe('plans over a CKAN 2.11 server', () => {
  it('applies what 2.11 cannot say locally, with the exact total', async () => {
    const result = await client(server211.url, { target: 'ckan-2.11' }).search('from big where n >= 2490 and parity != even select n');
    expect(ns(result.records)).toEqual([2491, 2493, 2495, 2497, 2499]);
    expect(result.total).toBe(5);
    expect(result.fields).toEqual([{ id: 'n', type: 'int' }]);
  });

  it('keeps select distinct when a condition runs locally, on 2.11 and 2.12 alike', async () => {
    // The answer written here: the distinct parities of the rows that pass, in the order the rows come (by _id).
    const kept = big.rows.filter((row) => Number(row['n']) >= 2400 && row['n'] !== 2401).map((row) => row['parity']);
    const expected = [...new Set(kept)].map((parity) => ({ parity }));
    expect(expected).toHaveLength(2);
    for (const [url, target] of [[server211.url, 'ckan-2.11'], [server212.url, 'ckan-2.12']] as const) {
      const result = await client(url, { target }).search('from big where n >= 2400 and n != 2401 select distinct parity');
      expect(result.records, target).toEqual(expected);
      const ordered = await client(url, { target }).search('from big where n >= 2400 and n != 2401 select distinct parity order by parity desc');
      expect(ordered.records, target).toEqual([...expected].reverse());
    }
  });

  it('refuses before fetching any record when a plan that must read everything would read more than maxScan', async () => {
    const c = client(server211.url, { target: 'ckan-2.11', maxScan: 100 });
    const error = await c.search('from big where n > 5', { total: true }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(QueryError);
    expect((error as QueryError).code).toBe('SCAN_TOO_LARGE');
    expect((error as QueryError).message).toContain('2500');
    expect((error as QueryError).message).toContain('100');
    expect((error as QueryError).hint).toContain('"="');
    expect(searches(log211)).toBe(1); // only the count (limit 0)
  });

  it('reads no more than maxScan records for a plan that may stop early, and refuses when that is not enough', async () => {
    const c = client(server211.url, { target: 'ckan-2.11', maxScan: 100 });
    // The first 100 records hold the 10 asked for: no refusal.
    const found = await c.search('from big where n > 5 limit 10 select n');
    expect(ns(found.records)).toEqual([6, 7, 8, 9, 10, 11, 12, 13, 14, 15]);
    log211.length = 0;
    const error = await c.search('from big where n > 2400 select n').catch((e: unknown) => e);
    expect((error as QueryError).code).toBe('SCAN_TOO_LARGE');
    expect((error as QueryError).hint).toContain('read 100 of them');
    expect(log211.filter((line) => line.includes('datastore_search ')).length).toBe(1); // one page of 100, then the refusal
  });

  it('narrowing with what the portal answers itself brings a query under maxScan', async () => {
    const result = await client(server211.url, { target: 'ckan-2.11', maxScan: 1_300 }).search(
      'from big where parity = even and n > 2490 select n',
    );
    expect(ns(result.records)).toEqual([2492, 2494, 2496, 2498]);
  });

  it('stops reading once it has the records a limit asks for', async () => {
    const c = client(server211.url, { target: 'ckan-2.11' });
    const records: Row[] = [];
    for await (const record of c.searchAll('from big where n != 3 limit 5 select n', { pageSize: 10 })) records.push(record);
    expect(ns(records)).toEqual([0, 1, 2, 4, 5]);
    expect(searches(log211)).toBe(1); // one page of ten holds the answer
    const result = await c.search('from big where n != 3 limit 5 select n');
    expect(ns(result.records)).toEqual([0, 1, 2, 4, 5]);
    expect(result.total).toBeUndefined(); // not asked for: counting would read every page
    expect(result.read).toEqual({ requests: 1, records: 1_000, more: true });
    expect(searches(log211)).toBe(2);
  });

  it('applies offset and limit after the residual, in the portal order, and counts the total only when asked', async () => {
    const query = 'from big where n between 10 and 30 and parity = odd order by n desc offset 2 limit 3 select n';
    const result = await client(server211.url, { target: 'ckan-2.11' }).search(query);
    expect(ns(result.records)).toEqual([25, 23, 21]);
    expect(result.total).toBeUndefined();
    expect(result.read?.more).toBe(true);
    const counted = await client(server211.url, { target: 'ckan-2.11' }).search(query, { total: true });
    expect(ns(counted.records)).toEqual([25, 23, 21]);
    expect(counted.total).toBe(10);
    expect(counted.read?.more).toBe(true);
  });
});

describe('targets', () => {
  it('detects CKAN 2.12 from status_show and sends one request with operators', async () => {
    const c = client(server212.url);
    expect(c.target).toBeUndefined();
    const result = await c.search('from big where n >= 2495 or n < 2 select n');
    expect(c.target).toBe('ckan-2.12');
    expect(ns(result.records)).toEqual([0, 1, 2495, 2496, 2497, 2498, 2499]);
    expect(searches(log212)).toBe(1);
    expect(log212.filter((line) => line.includes('status_show'))).toHaveLength(1);
    await c.search('from big where n >= 2499');
    expect(log212.filter((line) => line.includes('status_show'))).toHaveLength(1); // detected once
  });

  it('detects CKAN 2.11 and plans', async () => {
    const c = client(server211.url);
    const result = await c.search('from big where n >= 2498 select n');
    expect(c.target).toBe('ckan-2.11');
    expect(ns(result.records)).toEqual([2498, 2499]);
  });

  it('sends a query 2.11 says whole without asking the version', async () => {
    const c = client(server212.url);
    await c.search('from big where parity = odd limit 1');
    expect(c.target).toBeUndefined();
    expect(log212.some((line) => line.includes('status_show'))).toBe(false);
  });

  it('falls back to the include_next_page probe when status_show is not there', async () => {
    for (const [server, expected] of [[server212, 'ckan-2.12'], [server211, 'ckan-2.11']] as const) {
      const proxy = await withoutStatusShow(server.url);
      try {
        const c = client(proxy.url);
        const result = await c.search('from big where n > 2497 select n');
        expect(c.target).toBe(expected);
        expect(ns(result.records)).toEqual([2498, 2499]);
      } finally {
        await proxy.close();
      }
    }
  });

  it('setTarget overrides the detection', async () => {
    const c = client(server212.url);
    c.setTarget('ckan-2.11');
    const result = await c.search('from big where n >= 2499 select n');
    expect(ns(result.records)).toEqual([2499]);
    expect(log212.some((line) => line.includes('status_show'))).toBe(false);
  });

  it('reads versions', () => {
    expect(targetOfVersion('2.12.0')).toBe('ckan-2.12');
    expect(targetOfVersion('2.13.0a0')).toBe('ckan-2.12');
    expect(targetOfVersion('3.0')).toBe('ckan-2.12');
    expect(targetOfVersion('2.11.5')).toBe('ckan-2.11');
    expect(targetOfVersion('2.9.9')).toBe('ckan-2.11');
    expect(targetOfVersion('unknown')).toBe('ckan-2.11');
  });
});

describe('explain', () => {
  it('detects the portal\'s target as search does, once, and sends no search', async () => {
    const c = client(server212.url);
    const explained = await c.explain('from big where n >= 2495 and parity != even select n');
    expect(explained.chosen).toBe('detected');
    expect(explained.plan?.target).toBe('ckan-2.12');
    // The fields the query selects and the residual tests; an order that ends in `_id`, so pages by offset neither repeat nor drop a record.
    expect(explained.request?.request).toEqual({ resource_id: 'big', filters: { n: { gte: 2495 } }, fields: ['n', 'parity', '_id'], sort: '_id asc' });
    expect(explained.steps).toEqual([
      'limit 100, then stop reading',
      '└─ project n',
      '   └─ filter parity != even',
      "      └─ scan pages by 2.12's next_page, 1000 records a request",
    ]);
    expect(explained.plan?.residual?.where?.condition.kind).toBe('compare');
    expect(searches(log212)).toBe(0);
    expect(log212.filter((line) => line.includes('status_show'))).toHaveLength(1);
    // The detection is kept: the search after it asks no more, and plans the same.
    await c.search('from big where n >= 2495 and parity != even select n');
    await c.explain('from big where n < 3');
    expect(log212.filter((line) => line.includes('status_show'))).toHaveLength(1);
    const on211 = await client(server211.url).explain('from big where n >= 2495');
    expect(on211).toMatchObject({ chosen: 'detected', plan: { target: 'ckan-2.11' }, request: { request: { resource_id: 'big' } } });
  });

  it('asks nothing for a query 2.11 says whole, nor with a target given', async () => {
    const whole = await client(server212.url).explain('from big where parity = odd limit 1');
    expect(whole.chosen).toBe('whole');
    expect(whole.request?.request).toEqual({ resource_id: 'big', filters: { parity: 'odd' }, limit: 1 });
    const given = await client(server212.url, { target: 'ckan-2.11' }).explain('from big where n >= 2495');
    expect(given).toMatchObject({ chosen: 'given', plan: { target: 'ckan-2.11' } });
    const sql = await client(server212.url, { target: 'sql' }).explain('from big where n >= 2495');
    expect(sql.chosen).toBe('given');
    expect(sql.request).toBeUndefined();
    expect(sql.sql?.url).toBe(`${server212.url}/api/action/datastore_search_sql`);
    expect(sql.sql?.text).toContain(`WHERE "n" >= '2495'`);
    expect(log212).toEqual([]);
  });

  it('redacts the token', async () => {
    const explained = await client(server211.url, { token: 'tok-SECRET', target: 'ckan-2.12' }).explain('from big where n >= 2495');
    expect(explained.request?.headers['authorization']).toBe('<redacted>');
    expect(JSON.stringify(explained)).not.toContain('tok-SECRET');
  });
});

describe('searchAll against CKAN 2.12', () => {
  it('pages with next_page: the cursor joins the filters, and the records are those of offset paging', async () => {
    const proxy = await proxyTo(server212.url);
    try {
      const keyset: Row[] = [];
      for await (const record of client(proxy.url, { target: 'ckan-2.12' }).searchAll('from big where parity = odd', { pageSize: 400 })) {
        keyset.push(record);
      }
      expect(keyset).toHaveLength(1_250);
      expect(ns(keyset)).toEqual(Array.from({ length: 1_250 }, (_, i) => 2 * i + 1));
      const bodies = proxy.bodies.map((body) => JSON.parse(body) as Record<string, unknown>);
      // 400 + 400 + 400 + 50: the short page ends it; each page after the first carries the cursor, none an offset
      expect(bodies.map((b) => b['filters'])).toEqual([
        { parity: 'odd' },
        { parity: 'odd', _id: { gt: 800 } },
        { parity: 'odd', _id: { gt: 1600 } },
        { parity: 'odd', _id: { gt: 2400 } },
      ]);
      expect(bodies.every((b) => b['include_next_page'] === true && b['offset'] === undefined)).toBe(true);
    } finally {
      await proxy.close();
    }
  });
});

/** A proxy to `target` that answers 404 for status_show, as a portal without it would. */
function withoutStatusShow(target: string): Promise<{ url: string; close: () => Promise<void> }> {
  return proxyTo(target, { hideStatus: true });
}

/** A proxy to `target` that keeps the request bodies it passes on. */
async function proxyTo(target: string, options: { hideStatus?: boolean } = {}): Promise<{ url: string; bodies: string[]; close: () => Promise<void> }> {
  const to = new URL(target);
  const bodies: string[] = [];
  const proxy: Server = createServer((req, res) => {
    if (options.hideStatus === true && (req.url ?? '').includes('status_show')) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('Not Found');
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      if (chunks.length > 0) bodies.push(Buffer.concat(chunks).toString('utf8'));
    });
    const forward = httpRequest({ host: to.hostname, port: to.port, path: req.url, method: req.method, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    req.pipe(forward);
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  const { port } = proxy.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, bodies, close: () => new Promise((resolve) => proxy.close(() => resolve())) };
}

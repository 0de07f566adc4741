/**
 * The client's politeness toward a portal, against a stub portal that
 * counts: at most 3 requests in flight per host (shared by clients), a
 * `Retry-After` waited as given, a 403 after earlier successes retried as
 * throttling (and CKAN's own 403 not), the token in the header a profile
 * names, and the `User-Agent` it sets.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { connect } from '../../src/client/connect.js';
import type { DatastoreClient, RetryInfo } from '../../src/client/connect.js';
import { hostLimiter } from '../../src/client/politeness.js';
import { DatastoreError } from '../../src/errors.js';
import { startStubPortal } from '../helpers/stub-ckan.js';
import type { StubPortal } from '../helpers/stub-ckan.js';

const resource = { id: 'r1', fields: [{ id: '_id', type: 'int' as const }, { id: 'a', type: 'text' as const }], records: [{ _id: 1, a: 'x' }] };
let portal: StubPortal | undefined;
const clients: DatastoreClient[] = [];

afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close()));
  await portal?.close();
  portal = undefined;
});

function open(url: string, options: Parameters<typeof connect>[0] extends infer O ? Partial<O> : never = {}): DatastoreClient {
  const client = connect({ url, retries: 3, retryDelay: 1, ...options });
  clients.push(client);
  return client;
}

describe('requests in flight', () => {
  it('keeps at most 3 requests in flight to one host, also across two clients of it', async () => {
    portal = await startStubPortal({ resources: [resource], delay: 100 });
    const first = open(portal.url);
    const second = open(portal.url);
    const asked = Array.from({ length: 12 }, (_, i) => (i % 2 === 0 ? first : second).search({ resource_id: 'r1', limit: 1 }));
    await Promise.all(asked);
    expect(portal.requests).toHaveLength(12);
    // Without the limit, undici's pool would have 4 (its connections) or more at once.
    expect(portal.maxInFlight).toBeLessThanOrEqual(3);
    expect(portal.maxInFlight).toBeGreaterThanOrEqual(2);
  });

  it('a profile may allow more (max_in_flight)', async () => {
    portal = await startStubPortal({ resources: [resource], delay: 100 });
    const wide = open(portal.url, { maxInFlight: 6 });
    await Promise.all(Array.from({ length: 12 }, () => wide.search({ resource_id: 'r1', limit: 1 })));
    expect(portal.maxInFlight).toBeLessThanOrEqual(6);
    expect(portal.maxInFlight).toBeGreaterThan(3);
  });

  it('a request waiting for its turn is cancelled at once, and frees no slot it never held', async () => {
    const limiter = hostLimiter('http://limiter.test', 1);
    const release = await limiter.acquire(undefined);
    const controller = new AbortController();
    const waiting = limiter.acquire(controller.signal);
    expect(limiter.waiting).toBe(1);
    controller.abort();
    await expect(waiting).rejects.toMatchObject({ code: 'ABORTED' });
    expect(limiter.waiting).toBe(0);
    release();
    expect(limiter.active).toBe(0);
  });
});

describe('throttling', () => {
  it('waits as long as Retry-After says, then tries again', async () => {
    portal = await startStubPortal({
      resources: [resource],
      intercept: (_, __, seen) => (seen === 1 ? { status: 429, body: '{}', headers: { 'retry-after': '1' } } : undefined),
    });
    const waits: RetryInfo[] = [];
    // The cap on waits is above Retry-After here, so it is honoured as given.
    const client = open(portal.url, { onRetry: (info) => waits.push(info), maxRetryDelay: 5_000 });
    await client.search({ resource_id: 'r1', limit: 1 });
    expect(waits).toEqual([{ attempt: 1, delay: 1_000, reason: 'HTTP 429' }]);
    expect(portal.requests).toHaveLength(2);
  });

  it('takes a 403 after earlier successes for throttling: retried, and said so when it goes on', async () => {
    portal = await startStubPortal({
      resources: [resource],
      intercept: (_, __, seen) => (seen >= 2 ? { status: 403, body: '<html>Forbidden</html>' } : undefined),
    });
    const waits: RetryInfo[] = [];
    const client = open(portal.url, { onRetry: (info) => waits.push(info) });
    await client.search({ resource_id: 'r1', limit: 1 });
    const error = await client.search({ resource_id: 'r1', limit: 1 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DatastoreError);
    expect((error as DatastoreError).status).toBe(403);
    expect((error as DatastoreError).message).toMatch(/after 1 request had succeeded .*limiting the request rate/);
    expect(waits.map((w) => w.reason)).toEqual(['HTTP 403 (rate limited?)', 'HTTP 403 (rate limited?)', 'HTTP 403 (rate limited?)']);
    expect(portal.requests).toHaveLength(5);
  });

  it("a 403 on the first request, or CKAN's own Authorization Error, is an answer: not retried", async () => {
    const denied = JSON.stringify({ success: false, error: { __type: 'Authorization Error', message: 'Access denied' } });
    portal = await startStubPortal({
      resources: [resource],
      intercept: (_, body, seen) => (seen === 1 || body.resource_id === 'private' ? { status: 403, body: seen === 1 ? 'Forbidden' : denied } : undefined),
    });
    const client = open(portal.url);
    await expect(client.search({ resource_id: 'r1', limit: 1 })).rejects.toMatchObject({ status: 403 });
    await client.search({ resource_id: 'r1', limit: 1 });
    await expect(client.search({ resource_id: 'private', limit: 1 })).rejects.toMatchObject({ code: 'FORBIDDEN' });
    expect(portal.requests).toHaveLength(3);
  });
});

describe('headers a profile sets', () => {
  it('sends the token in the header named by the profile (CKAN apitoken_header_name), and the User-Agent', async () => {
    portal = await startStubPortal({ resources: [resource] });
    const client = open(portal.url, { token: 'tok-secret-1', tokenHeader: 'X-CKAN-API-Key', userAgent: 'my-bot/1.0 (+mailto:me@example.org)' });
    await client.search({ resource_id: 'r1', limit: 1 });
    await client.action('package_search', { q: 'x', rows: 1 });
    for (const request of portal.requests) {
      expect(request.headers['x-ckan-api-key']).toBe('tok-secret-1');
      expect(request.headers.authorization).toBeUndefined();
      expect(request.headers['user-agent']).toBe('my-bot/1.0 (+mailto:me@example.org)');
    }
    // Shown redacted, under its own name.
    const prepared = client.prepare({ resource_id: 'r1' });
    expect(prepared.headers['x-ckan-api-key']).toBe('<redacted>');
    expect(prepared.tokenHeader).toBe('x-ckan-api-key');
    expect(JSON.stringify(prepared)).not.toContain('tok-secret-1');
  });

  it('refuses a header name HTTP does not allow', () => {
    expect(() => connect({ url: 'http://127.0.0.1:9', tokenHeader: 'X Bad' })).toThrow(/not an HTTP header name/);
  });
});

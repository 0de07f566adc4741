/**
 * `ckql serve` in this process (startServer on port 0, the playground's
 * actions over its API, as the serve command wires them): the demo's
 * many-to-many join is answered with `JOIN_TOO_LARGE` and its count, and the
 * server answers the next request (the join once took the process down).
 */
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { playgroundActions } from '../../src/cli/playground.js';
import { servedSource } from '../../src/cli/playground-sources.js';
import { memoryEngine } from '../../src/engine/memory/engine.js';
import { loadResources } from '../../src/engine/node/load-resources.js';
import { startServer } from '../../src/server/server.js';
import type { RunningServer } from '../../src/server/server.js';

const root = fileURLToPath(new URL('../..', import.meta.url));

/** One playground query: its status and JSON answer. */
function play(url: string, query: string): Promise<{ status: number; body: { error?: { code: string; message: string; hint?: string }; records?: unknown[] } }> {
  const target = new URL('/-/query', url);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: target.hostname, port: target.port, path: target.pathname, method: 'POST', headers: { 'content-type': 'application/json' } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) }));
    });
    req.on('error', reject);
    req.end(JSON.stringify({ source: 'local', query }));
  });
}

describe('ckql serve and a join past the bound', () => {
  let server: RunningServer;
  let actions: ReturnType<typeof playgroundActions>;

  beforeAll(async () => {
    const engine = memoryEngine(await loadResources([join(root, 'examples', 'data')], { only: ['enrolments'] }));
    let url = '';
    actions = playgroundActions({ sources: [servedSource(engine, { url: () => url, ckan: '2.11', label: 'demo' })], defaultSource: 'local', version: 'test' });
    server = await startServer({ engine, port: 0, playground: { actions } });
    url = server.url;
  });

  afterAll(async () => {
    await server.close();
    await actions.close();
  });

  it('answers the join with JOIN_TOO_LARGE and its count, then answers the next request', async () => {
    const refused = await play(server.url, 'from enrolments a join enrolments b on a.status = b.status select count(*)');
    expect(refused.body.error).toMatchObject({ code: 'JOIN_TOO_LARGE', message: 'this join gives 209581802 rows, more than the 10000000 a join may give' });
    expect(refused.body.error?.hint).toContain('"completed" (14041 × 14041 = 197149681)');
    const next = await play(server.url, 'from enrolments group by status select status, count(*) as n order by n desc limit 1');
    expect(next.status).toBe(200);
    expect(JSON.stringify(next.body)).toContain('14041');
    const api = await fetch(`${server.url}/api/3/action/datastore_search?resource_id=enrolments&limit=0`);
    expect(((await api.json()) as { result: { total: number } }).result.total).toBe(20000);
  });

  it('takes --max-join-rows for the playground’s queries, and answers one under it', async () => {
    // `ckql serve --max-join-rows N`, wired as the serve command wires it: COMP-209's 111 enrolments paired give 12321 rows.
    const engine = memoryEngine(await loadResources([join(root, 'examples', 'data')], { only: ['enrolments'] }));
    let url = '';
    const bounded = playgroundActions({ sources: [servedSource(engine, { url: () => url, ckan: '2.11', label: 'demo', maxJoinRows: 12320 })], defaultSource: 'local', version: 'test' });
    const own = await startServer({ engine, port: 0, playground: { actions: bounded } });
    url = own.url;
    try {
      const query = "from enrolments a join enrolments b on a.course = b.course where a.course = 'COMP-209' and b.course = 'COMP-209' select count(*) as n";
      expect((await play(own.url, query)).body.error?.message).toBe('this join gives 12321 rows, more than the 12320 a join may give');
      expect(JSON.stringify((await play(server.url, query)).body)).toContain('12321');
    } finally {
      await own.close();
      await bounded.close();
    }
  });
});

/**
 * `ckql ui` as a person runs it: on a config file's profile, printing
 * the page's address, offering the other profiles (a portal whose token is
 * read in the server process), and stopping on SIGTERM.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { loadResources } from '../../src/engine/node/load-resources.js';
import { startServer } from '../../src/server/server.js';
import type { RunningServer } from '../../src/server/server.js';
import { repoRoot, startCkql, waitForLine } from './run-ckql.js';

vi.setConfig({ testTimeout: 60_000 });

const token = 'ui-test-token-51c';
let portal: RunningServer;
let dir: string;

beforeAll(async () => {
  portal = await startServer({ tables: await loadResources([join(repoRoot, 'examples', 'data')]), tokens: [token], privateResources: ['courses'], port: 0 });
  dir = await mkdtemp(join(tmpdir(), 'ckql-ui-'));
  await writeFile(
    join(dir, 'ckql.config.yaml'),
    `default: demo\nprofiles:\n  demo: { data: ${JSON.stringify(join(repoRoot, 'examples', 'data'))} }\n  portal: { url: ${JSON.stringify(portal.url)}, token_env: PORTAL_TOKEN }\n`,
  );
});

afterAll(async () => {
  await portal.close();
  await rm(dir, { recursive: true, force: true });
});

describe('ckql ui', () => {
  it('serves the playground on 127.0.0.1 over the profile named, offers the other profiles, and keeps the token in the process', async () => {
    const child = startCkql(['ui', 'portal', '--port', '0'], { cwd: dir, env: { PORTAL_TOKEN: token } });
    const closed = new Promise<number | null>((resolve) => child.on('close', resolve));
    try {
      const [, url] = await waitForLine(child, /^playground at (http:\/\/127\.0\.0\.1:\d+)\/$/);
      const page = await fetch(`${url}/`);
      expect(page.status).toBe(200);
      expect(await page.text()).toContain('<title>ckql playground</title>');
      const post = async (action: string, body: unknown): Promise<{ status: number; text: string }> => {
        const answer = await fetch(`${url}/-/${action}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
        return { status: answer.status, text: await answer.text() };
      };
      const sources = JSON.parse((await post('sources', {})).text) as { defaultSource: string; sources: { name: string; kind: string; hasToken: boolean }[] };
      expect(sources.defaultSource).toBe('portal');
      expect(sources.sources.map((s) => [s.name, s.kind, s.hasToken])).toEqual([['portal', 'url', true], ['demo', 'data', false]]);
      const onPortal = await post('query', { source: 'portal', query: 'from courses where subject = math limit 2' });
      expect(onPortal.status).toBe(200);
      expect(JSON.parse(onPortal.text).records).toHaveLength(2);
      expect(onPortal.text).not.toContain(token);
      const onDemo = await post('query', { source: 'demo', query: 'from schools limit 1' });
      expect(JSON.parse(onDemo.text).records).toHaveLength(1);
    } finally {
      child.kill('SIGTERM');
      expect(await closed).toBe(0);
    }
  });

  it('stopped as soon as it says "playground at", it exits 0 (the signal killed it before its handlers were set)', async () => {
    // SIGTERM here; serve.test.ts sends both signals to the same handler (`untilStopped`)
    const child = startCkql(['ui', '--data', join(repoRoot, 'examples', 'data', 'schools.json'), '--port', '0'], { cwd: dir });
    const closed = new Promise<number | null>((resolve) => child.on('close', resolve));
    await waitForLine(child, /^playground at http:\/\/127\.0\.0\.1:\d+\/$/);
    child.kill('SIGTERM');
    expect(await closed).toBe(0);
  });
});

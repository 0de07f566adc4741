/**
 * `ckql serve` as a person runs it: start on port 0, read the one
 * `listening on` line, query it with `ckql query --url`, compare with
 * `ckql query --data`, then stop it with SIGTERM or SIGINT (exit 0).
 */
import { copyFile, mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ckql, ndjson, startCkql, waitForLine } from './run-ckql.js';
import { makeWorkspace, writeFileMode } from './fixtures.js';

// Each test starts the bin several times; on a busy two-core machine that can take a while.
vi.setConfig({ testTimeout: 120_000 });

let root: string;
let data: string;

beforeAll(async () => {
  root = await makeWorkspace();
  data = join(root, 'data');
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

async function serve(
  args: readonly string[],
): Promise<{ url: string; stderr: () => string; stop: (signal: NodeJS.Signals) => Promise<{ code: number | null; stdout: string }> }> {
  const child = startCkql(['serve', ...args, '--port', '0']);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const closed = new Promise<number | null>((resolve) => child.on('close', resolve));
  const [, url] = await waitForLine(child, /^listening on (http:\/\/127\.0\.0\.1:\d+)$/);
  return {
    url: url ?? '',
    stderr: () => stderr,
    stop: async (signal) => {
      child.kill(signal);
      return { code: await closed, stdout };
    },
  };
}

describe('ckql serve', () => {
  it('prints exactly one line, answers ckql query --url with the records of --data, and stops on SIGTERM', async () => {
    const server = await serve([data]);
    try {
      const query = 'from courses where stage in (active, survey) order by credits desc';
      const overHttp = await ckql(['query', query, '--url', server.url]);
      const local = await ckql(['query', query, '--data', data]);
      expect(overHttp.code).toBe(0);
      expect(local.code).toBe(0);
      expect(ndjson(overHttp.stdout)).toEqual(ndjson(local.stdout));
      expect(ndjson(overHttp.stdout).map((row) => (row as { code: string }).code)).toEqual(['C4', 'C1', 'C5', 'C2']); // nulls first in desc (semantics.md)

      const overGet = await ckql(['query', query, '--url', server.url, '--get', '--lang', 'de']);
      expect(ndjson(overGet.stdout)).toEqual(ndjson(local.stdout));
    } finally {
      const { code, stdout } = await server.stop('SIGTERM');
      expect(code).toBe(0);
      expect(stdout).toBe(`listening on ${server.url}\n`);
    }
  });

  it('--ckan 2.12 answers as CKAN 2.12 (status_show, include_next_page); another version is a usage error', async () => {
    const server = await serve([join(data, 'numbers.json'), '--ckan', '2.12']);
    try {
      const status = (await (await fetch(`${server.url}/api/3/action/status_show`)).json()) as { result: { ckan_version: string } };
      expect(status.result.ckan_version).toBe('2.12.0');
      const page = await fetch(`${server.url}/api/3/action/datastore_search?resource_id=numbers&limit=2&include_next_page=true`);
      expect(((await page.json()) as { result: { next_page: unknown } }).result.next_page).toEqual({ _id: { gt: 2 } });
    } finally {
      expect((await server.stop('SIGTERM')).code).toBe(0);
    }
    const wrong = await ckql(['serve', data, '--ckan', '2.10', '--port', '0']);
    expect(wrong.code).not.toBe(0);
    expect(wrong.stderr).toContain('use 2.11 or 2.12');
  });

  it('serves the files it can read beside one it cannot, reporting each bad file with its line; stops cleanly on SIGINT', async () => {
    const mixed = join(root, 'mixed');
    await mkdir(mixed);
    await copyFile(join(data, 'numbers.json'), join(mixed, 'numbers.json'));
    await writeFile(join(mixed, 'bad.csv'), 'a,b\n1,2\n3,4,5\n');
    await writeFile(join(mixed, 'broken.json'), '[{"a": 1},');
    const server = await serve([mixed]);
    const result = await ckql(['query', 'from numbers where n = 7', '--url', server.url]);
    expect(ndjson(result.stdout)).toEqual([{ _id: 7, n: 7, even: false }]);
    const said = server.stderr();
    expect(said).toMatch(/error\[DATA_INVALID\]: \S*bad\.csv: not valid CSV[^\n]*\n --> \S*bad\.csv:3\n/);
    expect(said).toMatch(/error\[DATA_INVALID\]: \S*broken\.json: not valid JSON/);
    expect(said.match(/= skipped: the other files are served without it/g)).toHaveLength(2);
    expect(said).toContain('serving 1 resource');
    expect((await server.stop('SIGINT')).code).toBe(0);
  });

  it('keeps private resources behind a token from --tokens-file; the client reads it from CKQL_TOKEN or --token-file', async () => {
    const tokens = await writeFileMode(join(root, 'tokens.txt'), '# one per line\ntok-a\n\ntok-b\n');
    const server = await serve([data, '--tokens-file', tokens, '--private', 'courses']);
    try {
      const query = ['query', 'from courses where code = C1 select code', '--url', server.url];
      const anonymous = await ckql(query);
      expect(anonymous.code).toBe(5);
      expect(anonymous.stderr).toContain('FORBIDDEN');

      const withEnv = await ckql(query, { env: { CKQL_TOKEN: 'tok-b' } });
      expect(withEnv.code).toBe(0);
      expect(ndjson(withEnv.stdout)).toEqual([{ code: 'C1' }]);

      const tokenFile = await writeFileMode(join(root, 'my-token'), 'tok-a\n');
      const withFile = await ckql([...query, '--token-file', tokenFile]);
      expect(ndjson(withFile.stdout)).toEqual([{ code: 'C1' }]);

      const wrong = await ckql(query, { env: { CKQL_TOKEN: 'tok-wrong' } });
      expect(wrong.code).toBe(5);
      expect(wrong.stderr).not.toContain('tok-wrong');
    } finally {
      expect((await server.stop('SIGTERM')).code).toBe(0);
    }
  });

  it('stopped as soon as it says "listening on", it exits 0 (the signal handlers came after the line, and the signal killed it)', async () => {
    for (const signal of ['SIGTERM', 'SIGINT'] as const) {
      const server = await serve([join(data, 'numbers.json'), '--no-playground']);
      expect((await server.stop(signal)).code).toBe(0);
    }
  });

  it('--private with no token to open it says so: every request for it would be refused', async () => {
    // one server (each start is a process): two private resources and a tokens file that holds none
    const empty = await writeFileMode(join(root, 'no-tokens.txt'), '# none yet\n');
    const server = await serve([data, '--private', 'courses,numbers', '--tokens-file', empty]);
    try {
      expect((await ckql(['query', 'from courses', '--url', server.url], { env: { CKQL_TOKEN: 'any' } })).code).toBe(5);
      expect(server.stderr()).toContain('warning: no token opens the private resources courses, numbers: nobody can read them; --tokens-file');
    } finally {
      expect((await server.stop('SIGTERM')).code).toBe(0);
    }
  });

  it('applies --max-limit and --languages', async () => {
    const server = await serve([data, '--max-limit', '3', '--languages', 'fr']);
    try {
      const capped = await ckql(['query', 'from numbers limit 10', '--url', server.url, '--lang', 'fr']);
      expect(capped.code).toBe(0);
      expect(ndjson(capped.stdout)).toHaveLength(3);
      const otherLanguage = await ckql(['query', 'from numbers', '--url', server.url, '--lang', 'de']);
      expect(otherLanguage.code).toBe(1);
      expect(otherLanguage.stderr).toContain('NOT_FOUND');
    } finally {
      await server.stop('SIGTERM');
    }
  });

  it('--engine pglite --statement-timeout: a long datastore_search_sql is 409 Query took too long, and a search sent while it runs is answered first', async () => {
    const server = await serve(['examples/data/courses.csv', '--engine', 'pglite', '--statement-timeout', '1500', '--no-playground']);
    try {
      const finished: string[] = [];
      // generate_series is on CKAN's allow-list: one anonymous GET could hold PGlite as long as it liked.
      const sql = new URLSearchParams({ sql: 'SELECT count(*) FROM generate_series(1, 1000000000000)' });
      const long = fetch(`${server.url}/api/3/action/datastore_search_sql?${sql.toString()}`).finally(() => finished.push('long'));
      await new Promise((resolve) => setTimeout(resolve, 300));
      const search = await fetch(`${server.url}/api/3/action/datastore_search?resource_id=courses&limit=1`).finally(() => finished.push('search'));
      expect(search.status).toBe(200);
      const stopped = await long;
      expect(finished).toEqual(['search', 'long']);
      expect(stopped.status).toBe(409);
      expect(((await stopped.json()) as { error: unknown }).error).toEqual({ __type: 'Validation Error', query: ['Query took too long'] });
    } finally {
      await server.stop('SIGTERM');
    }
  });

  it('a file it cannot load is a data error (exit 1) naming the file', async () => {
    const bad = join(root, 'bad.json');
    await writeFile(bad, '{ not json');
    const result = await ckql(['serve', bad, '--port', '0']);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain('bad.json');
    expect(result.stderr).not.toMatch(/\n\s+at .+:\d+:\d+/);
  });
});

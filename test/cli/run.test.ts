/**
 * `ckql run` and config files through the real bin: named queries with
 * defaults and `--param`, the profile a query runs on, discovery order, and
 * config errors with file, line and key.
 */
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ckql, ckqlInProcess, ndjson } from './run-ckql.js';
import { makeWorkspace, writeFileMode } from './fixtures.js';

// Each test starts the bin several times; on a busy two-core machine that can take a while.
vi.setConfig({ testTimeout: 120_000 });

let root: string;
let project: string;

const config = `# a project config
default: local
profiles:
  local:
    data: ./data
  numbers-only:
    data: [./data/numbers.json]
queries:
  by-subject:
    description: courses of one subject
    query: |
      from courses
      -- the subject comes from --param, or the default below
      where subject = $subject
      select code
    params:
      subject: art
  evens:
    profile: numbers-only
    query: from numbers where even = $even limit $n
    params: { even: true }
  plain: from courses where code = C5 select code
`;

beforeAll(async () => {
  root = await makeWorkspace();
  project = join(root, 'project');
  await mkdir(join(project, 'nested', 'deeper'), { recursive: true });
  // The data folder of the profile is relative to the config file's folder.
  await writeFileMode(join(project, 'ckql.config.yaml'), config.replaceAll('./data', '../data'));
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

describe('ckql run', () => {
  it('runs a named query found upward from the working directory, with its default params', async () => {
    const result = await ckql(['run', 'by-subject'], { cwd: join(project, 'nested', 'deeper') });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(ndjson(result.stdout)).toEqual([{ code: 'C2' }]);
  });

  it('--param overrides a default, read as a literal', async () => {
    const result = await ckql(['run', 'by-subject', '--param', 'subject=math', '--format', 'csv'], { cwd: project });
    expect(result.stdout).toBe('code\nC1\nC3\nC4\n');
  });

  it("runs on the query's own profile, and --data overrides it", async () => {
    const onProfile = await ckql(['run', 'evens', '--param', 'n=2'], { cwd: project });
    expect(ndjson(onProfile.stdout)).toEqual([
      { _id: 2, n: 2, even: true },
      { _id: 4, n: 4, even: true },
    ]);
    const overridden = await ckql(['run', 'plain', '--data', join(root, 'data', 'courses.csv')], { cwd: project });
    expect(ndjson(overridden.stdout)).toEqual([{ code: 'C5' }]);
  });

  it('a parameter without a value is a query error (exit 3) that names it', async () => {
    const result = await ckql(['run', 'evens'], { cwd: project });
    expect(result.code).toBe(3);
    expect(result.stderr).toContain('UNBOUND_PARAMETER');
    expect(result.stderr).toContain('$n');
    expect(result.stderr).toContain('--param n=');
  });

  it('an unknown query name exits 2 with a suggestion; without a name, the queries are listed', async () => {
    const unknown = await ckqlInProcess(['run', 'by-subjet'], { cwd: project });
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('no query named "by-subjet"');
    expect(unknown.stderr).toContain('did you mean "by-subject"?');

    const list = await ckqlInProcess(['run', '--format', 'json'], { cwd: project });
    expect(list.code).toBe(0);
    expect(JSON.parse(list.stdout)).toEqual([
      { name: 'by-subject', description: 'courses of one subject', params: 'subject' },
      { name: 'evens', description: null, params: 'even' },
      { name: 'plain', description: null, params: '' },
    ]);
  });
});

describe('config discovery through the CLI', () => {
  it('uses the default profile when no source flag is given', async () => {
    const result = await ckqlInProcess(['resources', '--format', 'csv'], { cwd: project });
    expect(result.stdout).toMatch(/^id,alias,total\n[0-9a-f-]{36},courses,5\n[0-9a-f-]{36},numbers,25\n$/);
  });

  it('--config and CKQL_CONFIG choose the file; --config wins', async () => {
    const other = await writeFileMode(join(root, 'other.json'), JSON.stringify({ queries: { one: 'from numbers where n = 1 select n' } }));
    const third = await writeFileMode(join(root, 'third.toml'), '[queries]\none = "from numbers where n = 3 select n"\n');
    const data = join(root, 'data');
    const viaEnv = await ckqlInProcess(['run', 'one', '--data', data], { cwd: project, env: { CKQL_CONFIG: other } });
    expect(ndjson(viaEnv.stdout)).toEqual([{ n: 1 }]);
    const viaFlag = await ckqlInProcess(['run', 'one', '--data', data, '--config', third], { cwd: project, env: { CKQL_CONFIG: other } });
    expect(ndjson(viaFlag.stdout)).toEqual([{ n: 3 }]);
  });

  it('falls back to $XDG_CONFIG_HOME/ckql/config.yaml', async () => {
    const xdg = join(root, 'xdg');
    await mkdir(join(xdg, 'ckql'), { recursive: true });
    await writeFileMode(join(xdg, 'ckql', 'config.yaml'), 'queries:\n  two: from numbers where n = 2 select n\n');
    const result = await ckqlInProcess(['run', 'two', '--data', join(root, 'data')], { cwd: root, env: { XDG_CONFIG_HOME: xdg } });
    expect(ndjson(result.stdout)).toEqual([{ n: 2 }]);
  });

  it('a bad config file exits 2 naming the file, the line and the key', async () => {
    const bad = await writeFileMode(join(root, 'bad.yaml'), 'profiles:\n  portal:\n    url: https://data.example.org\n    method: PATCH\n');
    const result = await ckql(['run', 'x', '--config', bad]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('CONFIG_INVALID');
    expect(result.stderr).toContain(bad);
    expect(result.stderr).toContain('line 4');
    expect(result.stderr).toContain('profiles.portal.method');
    expect(result.stderr).not.toMatch(/\n\s+at .+:\d+:\d+/);
  });

  it('a plain token in a config others can read is refused (exit 2) and never printed', async () => {
    const file = await writeFileMode(
      join(root, 'token.yaml'),
      'default: p\nprofiles:\n  p:\n    url: https://data.example.org\n    token: plain-secret-123\n',
      0o644,
    );
    const result = await ckqlInProcess(['query', 'from x', '--config', file]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('CONFIG_INSECURE_TOKEN');
    expect(result.stderr).toContain('chmod 600');
    expect(result.stderr).not.toContain('plain-secret-123');
  });

  it('a profile token from token_cmd reaches curl lines only as the command', async () => {
    const file = await writeFileMode(
      join(root, 'cmd.yaml'),
      'default: p\nprofiles:\n  p:\n    url: https://data.example.org\n    token_cmd: echo from-cmd-secret\n',
    );
    const result = await ckqlInProcess(['explain', 'from x', '--config', file]);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('-H "Authorization: $(echo from-cmd-secret)"');
    expect(result.stdout.replace('$(echo from-cmd-secret)', '')).not.toContain('from-cmd-secret');
  });
});

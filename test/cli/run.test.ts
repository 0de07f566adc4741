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
    expect(result.stderr).toContain('hint: give it a value: ckql run evens --param n=…, or a default under params: in the config');
    expect(result.stderr).not.toContain('compile(');
    const query = await ckql(['query', 'from numbers where n = $n', '--data', join(root, 'data')]);
    expect(query.stderr).toContain('hint: give it a value: --param n=…');
    expect(query.stderr).not.toContain('compile(');
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
    const table = await ckqlInProcess(['run', '--format', 'table'], { cwd: project });
    expect(table.stdout).toMatch(/\n3 queries\n$/);
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

describe('config and parameters that must not be silently ignored', () => {
  const data = (): string => join(root, 'data');

  it('a single profile, or one named default, is used without a default: key (not the demo data)', async () => {
    const single = join(root, 'single');
    await mkdir(single, { recursive: true });
    await writeFileMode(join(single, 'ckql.config.yaml'), `profiles:\n  mine:\n    data: ${data()}\n`);
    const one = await ckql(['resources', '--format', 'csv'], { cwd: single });
    expect(one.stdout).toContain(',courses,5');
    expect(one.stdout).not.toContain('schools');
    const named = join(root, 'named-default');
    await mkdir(named, { recursive: true });
    await writeFileMode(
      join(named, 'ckql.config.yaml'),
      `profiles:\n  other:\n    data: ${join(data(), 'numbers.json')}\n  default:\n    data: ${join(data(), 'courses.csv')}\n`,
    );
    const chosen = await ckql(['resources', '--format', 'csv'], { cwd: named });
    expect(chosen.stdout).toMatch(/,courses,5\n$/);
  });

  it('a misspelt --param is an error naming the parameter it may mean (run, query, compile); a repeated one too', async () => {
    const misspelt = await ckql(['run', 'by-subject', '--param', 'subjet=physics'], { cwd: project });
    expect(misspelt.code).toBe(2);
    expect(misspelt.stderr).toContain('--param subjet: the query has no parameter $subjet');
    expect(misspelt.stderr).toContain('did you mean "subject"?');
    expect(misspelt.stdout).toBe('');
    const extra = await ckql(['compile', 'from courses where code = $c', '--param', 'c=1', '--param', 'limit=5']);
    expect(extra.code).toBe(2);
    expect(extra.stderr).toContain('its parameters: $c');
    const twice = await ckql(['run', 'by-subject', '--param', 'subject=math', '--param', 'subject=art'], { cwd: project });
    expect(twice.code).toBe(2);
    expect(twice.stderr).toContain('--param subject is given twice');
  });

  it('an error in a named query points at the config file, the key and the line of the query', async () => {
    const folder = join(root, 'broken-query');
    await mkdir(folder, { recursive: true });
    await writeFileMode(
      join(folder, 'ckql.config.yaml'),
      `profiles:\n  local:\n    data: ${data()}\nqueries:\n  broken:\n    query: |\n      from courses\n      where subject = limit 5\n`,
    );
    const result = await ckql(['run', 'broken'], { cwd: folder });
    expect(result.code).toBe(3);
    expect(result.stderr).toContain(`--> ${join(folder, 'ckql.config.yaml')}:6, queries.broken.query, at 2:17 of the query`);
    expect(result.stderr).toContain('2 | where subject = limit 5');
  });

  it('a field the source does not have is shown at its line of the named query, with the nearest field', async () => {
    const folder = join(root, 'misspelt-field');
    await mkdir(folder, { recursive: true });
    await writeFileMode(
      join(folder, 'ckql.config.yaml'),
      `profiles:\n  local:\n    data: ${data()}\nqueries:\n  big:\n    query: |\n      from courses\n      where credts >= $min\n    params: { min: 3 }\n`,
    );
    const result = await ckql(['run', 'big'], { cwd: folder });
    expect(result.code).toBe(3);
    expect(result.stderr).toContain('error[UNKNOWN_FIELD]: "courses" has no field "credts"');
    expect(result.stderr).toContain(`--> ${join(folder, 'ckql.config.yaml')}:6, queries.big.query, at 2:7 of the query`);
    expect(result.stderr).toContain('did you mean "credits"?');
  });

  it('a named query takes a list parameter (where code in ($codes)) from the config and binds it', async () => {
    const folder = join(root, 'list-param');
    await mkdir(folder, { recursive: true });
    await writeFileMode(
      join(folder, 'ckql.config.yaml'),
      `profiles:\n  local:\n    data: ${data()}\nqueries:\n  some:\n    query: from courses where code in ($codes) select code order by code\n    params: { codes: [C1, C4] }\n`,
    );
    const result = await ckql(['run', 'some'], { cwd: folder });
    expect(result.stderr).toBe('');
    expect(ndjson(result.stdout)).toEqual([{ code: 'C1' }, { code: 'C4' }]);
  });

  it('two config files in one folder are an error naming both; $XDG_CONFIG_HOME/ckql/config.yml is read', async () => {
    const folder = join(root, 'two-configs');
    await mkdir(folder, { recursive: true });
    await writeFileMode(join(folder, 'ckql.config.yaml'), 'queries:\n  a: from x\n');
    await writeFileMode(join(folder, 'ckql.config.json'), '{"queries": {"a": "from y"}}');
    const both = await ckql(['run', 'a'], { cwd: folder });
    expect(both.code).toBe(2);
    expect(both.stderr).toContain('ckql.config.yaml and ckql.config.json are both in');
    const xdg = join(root, 'xdg-yml');
    await mkdir(join(xdg, 'ckql'), { recursive: true });
    await writeFileMode(join(xdg, 'ckql', 'config.yml'), 'queries:\n  three: from numbers where n = 3 select n\n');
    const yml = await ckql(['run', 'three', '--data', data()], { cwd: root, env: { XDG_CONFIG_HOME: xdg } });
    expect(ndjson(yml.stdout)).toEqual([{ n: 3 }]);
  });

  it('an unset token_env is reported as such (exit 2), not as an invalid config', async () => {
    const file = await writeFileMode(
      join(root, 'token-env.yaml'),
      'default: p\nprofiles:\n  p:\n    url: https://data.example.org\n    token_env: CKQL_TEST_UNSET_TOKEN\n',
    );
    const result = await ckql(['query', 'from x', '--config', file]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('error[TOKEN_UNAVAILABLE]: profiles.p.token_env: the environment variable CKQL_TEST_UNSET_TOKEN is not set');
    expect(result.stderr).not.toContain('CONFIG_INVALID');
  });

  it('a token file others can read is refused, from --token-file and from token_file:, without printing it', async () => {
    const tokenFile = await writeFileMode(join(root, 'open-token'), 'open-secret-456\n', 0o644);
    const flag = await ckql(['query', 'from x', '--url', 'http://127.0.0.1:9', '--token-file', tokenFile]);
    expect(flag.code).toBe(2);
    expect(flag.stderr).toContain('TOKEN_FILE_INSECURE');
    expect(flag.stderr).toContain('chmod 600');
    expect(flag.stderr).not.toContain('open-secret-456');
    const config = await writeFileMode(
      join(root, 'token-file.yaml'),
      `default: p\nprofiles:\n  p:\n    url: https://data.example.org\n    token_file: ${tokenFile}\n`,
    );
    const profile = await ckql(['query', 'from x', '--config', config]);
    expect(profile.code).toBe(2);
    expect(profile.stderr).toContain('TOKEN_FILE_INSECURE');
  });
});

import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { findConfigFile, loadConfig, readConfigFile } from '../../src/config/load.js';
import { readToken } from '../../src/config/token.js';
import { ToolError } from '../../src/errors.js';

let root: string;
let home: string;
let env: NodeJS.ProcessEnv;

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'ckql-config-'));
  home = join(root, 'home');
  await mkdir(join(home, 'project', 'sub', 'deeper'), { recursive: true });
  env = { HOME: home };
});

afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

async function write(path: string, text: string, mode = 0o600): Promise<string> {
  await mkdir(join(path, '..'), { recursive: true });
  await writeFile(path, text, { mode });
  await chmod(path, mode);
  return path;
}

async function failure(promise: Promise<unknown>): Promise<ToolError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(ToolError);
  return error as ToolError;
}

const sample = `# profiles and queries
default: local
profiles:
  local:
    data: ./data
  portal:
    url: https://data.example.org
    language: de
    method: get
    token_env: PORTAL_TOKEN
    resources: [courses]
queries:
  plain: from courses limit 3
  active-math: |
    from courses
    -- comments are part of the text
    where subject = $subject and stage = active
  by-stage:
    description: Courses in one stage
    profile: portal
    query: from courses where stage = $stage
    params:
      stage: active
      year: 2020
`;

describe('discovery order', () => {
  it('finds ckql.config.yaml in a parent directory of the working directory', async () => {
    const file = await write(join(home, 'project', 'ckql.config.yaml'), sample);
    expect(await findConfigFile({ cwd: join(home, 'project', 'sub', 'deeper'), env })).toBe(file);
  });

  it('prefers the nearest file; two config files in one directory are an error naming both', async () => {
    await write(join(home, 'project', 'ckql.config.yaml'), sample);
    const nearest = await write(join(home, 'project', 'sub', 'ckql.config.toml'), 'default = "x"\n[profiles.x]\ndata = "d"\n');
    expect(await findConfigFile({ cwd: join(home, 'project', 'sub', 'deeper'), env })).toBe(nearest);
    await write(join(home, 'project', 'sub', '.ckqlrc.json'), '{}');
    const error = await failure(findConfigFile({ cwd: join(home, 'project', 'sub', 'deeper'), env }));
    expect(error.code).toBe('CONFIG_INVALID');
    expect(error.message).toContain('ckql.config.toml and .ckqlrc.json are both in');
  });

  it('reads a .ckqlrc without extension as YAML', async () => {
    const file = await write(join(home, 'project', '.ckqlrc'), 'queries:\n  q: from x\n');
    const config = await loadConfig({ cwd: join(home, 'project'), env });
    expect(config.file).toBe(file);
    expect(config.queries.get('q')?.query).toBe('from x');
  });

  it('falls back to $XDG_CONFIG_HOME/ckql/config.yaml, then ~/.config/ckql/config.yaml', async () => {
    const homeFile = await write(join(home, '.config', 'ckql', 'config.yaml'), 'queries: { a: from a }\n');
    expect(await findConfigFile({ cwd: join(home, 'project'), env })).toBe(homeFile);
    const xdg = await write(join(root, 'xdg', 'ckql', 'config.yaml'), 'queries: { b: from b }\n');
    expect(await findConfigFile({ cwd: join(home, 'project'), env: { ...env, XDG_CONFIG_HOME: join(root, 'xdg') } })).toBe(
      xdg,
    );
  });

  it('lets CKQL_CONFIG win over the search, and --config over CKQL_CONFIG', async () => {
    await write(join(home, 'project', 'ckql.config.yaml'), sample);
    const fromEnv = await write(join(root, 'env.yaml'), '{}');
    const fromFlag = await write(join(root, 'flag.json'), '{}');
    const cwd = join(home, 'project');
    expect(await findConfigFile({ cwd, env: { ...env, CKQL_CONFIG: fromEnv } })).toBe(fromEnv);
    expect(await findConfigFile({ cwd, env: { ...env, CKQL_CONFIG: fromEnv }, configFile: fromFlag })).toBe(fromFlag);
  });

  it('gives an empty config when there is no file anywhere', async () => {
    const config = await loadConfig({ cwd: join(home, 'project'), env });
    expect(config.file).toBeUndefined();
    expect(config.profiles.size).toBe(0);
  });

  it('reports a named file that does not exist, saying who named it', async () => {
    const error = await failure(loadConfig({ cwd: root, env: { ...env, CKQL_CONFIG: 'nope.yaml' } }));
    expect(error.code).toBe('CONFIG_INVALID');
    expect(error.message).toContain(join(root, 'nope.yaml'));
    expect(error.message).toContain('CKQL_CONFIG');
  });
});

describe('contents', () => {
  it('reads profiles, the default, named queries with block scalars, comments and params', async () => {
    const file = await write(join(home, 'project', 'ckql.config.yaml'), sample);
    const config = await readConfigFile(file);
    expect(config.defaultProfile).toBe('local');
    expect(config.profiles.get('local')).toEqual({ kind: 'data', name: 'local', paths: [join(home, 'project', 'data')] });
    expect(config.profiles.get('portal')).toEqual({
      kind: 'url',
      name: 'portal',
      url: 'https://data.example.org',
      language: 'de',
      method: 'GET',
      token: { kind: 'env', name: 'PORTAL_TOKEN' },
      resources: ['courses'],
    });
    expect(config.queries.get('active-math')?.query).toBe(
      'from courses\n-- comments are part of the text\nwhere subject = $subject and stage = active\n',
    );
    expect(config.queries.get('by-stage')).toMatchObject({ profile: 'portal', params: { stage: 'active', year: 2020 } });
  });

  it('reads the same config from TOML and JSON', async () => {
    const toml = await write(
      join(root, 'c.toml'),
      `default = "local"\n[profiles.local]\ndata = ["a", "b"]\n[queries.q]\nquery = """\nfrom x\nwhere a = $a\n"""\nparams = { a = 1 }\n`,
    );
    const json = await write(
      join(root, 'c.json'),
      JSON.stringify({ default: 'local', profiles: { local: { data: ['a', 'b'] } }, queries: { q: { query: 'from x\nwhere a = $a\n', params: { a: 1 } } } }),
    );
    const fromToml = await readConfigFile(toml);
    const fromJson = await readConfigFile(json);
    expect(fromToml.profiles).toEqual(fromJson.profiles);
    const withoutOrigin = (config: typeof fromToml): unknown =>
      [...config.queries.values()].map(({ origin, ...query }) => ({ ...query, key: origin?.key }));
    expect(withoutOrigin(fromToml)).toEqual(withoutOrigin(fromJson));
    expect(fromToml.queries.get('q')?.origin).toEqual({ file: toml, line: 5, key: 'queries.q.query' });
  });
});

describe('errors name the file, the line and the key', () => {
  const cases: { name: string; file: string; text: string; line: number; key: string; message: RegExp }[] = [
    {
      name: 'a bad enum value in YAML',
      file: 'c.yaml',
      text: 'profiles:\n  prod:\n    url: https://x.org\n    method: PUT\n',
      line: 4,
      key: 'profiles.prod.method',
      message: /must be one of "POST", "GET", found "PUT"/,
    },
    {
      name: 'an unknown key',
      file: 'c.yaml',
      text: 'profiles:\n  prod:\n    url: https://x.org\n\n    tokn_env: X\n',
      line: 5,
      key: 'profiles.prod.tokn_env',
      message: /unknown key "tokn_env"/,
    },
    {
      name: 'a missing url',
      file: 'c.yaml',
      text: 'queries: {}\nprofiles:\n  prod:\n    language: en\n',
      line: 3,
      key: 'profiles.prod.url',
      message: /is missing/,
    },
    {
      name: 'a URL that is not http',
      file: 'c.yaml',
      text: 'profiles:\n  prod:\n    url: ftp://x.org\n',
      line: 3,
      key: 'profiles.prod.url',
      message: /http\(s\) URL/,
    },
    {
      name: 'a default naming no profile',
      file: 'c.yaml',
      text: 'profiles:\n  a: { data: d }\ndefault: b\n',
      line: 3,
      key: 'default',
      message: /"b", which is not defined/,
    },
    {
      name: 'a param that is a mapping',
      file: 'c.yaml',
      text: 'queries:\n  q:\n    query: from x\n    params:\n      a: { b: 1 }\n',
      line: 5,
      key: 'queries.q.params.a',
      message: /must be a text, a number, true, false, null, or a list of them/,
    },
    {
      name: 'two token sources',
      file: 'c.yaml',
      text: 'profiles:\n  p:\n    url: https://x.org\n    token_env: A\n    token_cmd: echo b\n',
      line: 2,
      key: 'profiles.p',
      message: /at most one of token_env/,
    },
    {
      name: 'a wrong type in JSON',
      file: 'c.json',
      text: '{\n  "queries": {\n    "q": {\n      "query": 5\n    }\n  }\n}\n',
      line: 4,
      key: 'queries.q.query',
      message: /must be text, found 5/,
    },
    {
      name: 'an unknown top-level key in TOML',
      file: 'c.toml',
      text: 'default = "a"\n[profiles.a]\ndata = "d"\n[querys.q]\nquery = "from x"\n',
      line: 4,
      key: 'querys',
      message: /unknown key "querys"/,
    },
    {
      name: 'a bad value inside a TOML table',
      file: 'c.toml',
      text: '[profiles.a]\nurl = "https://x.org"\nlanguage = 5\n',
      line: 3,
      key: 'profiles.a.language',
      message: /must be text, found 5/,
    },
  ];
  for (const each of cases) {
    it(each.name, async () => {
      const file = await write(join(root, each.file), each.text);
      const error = await failure(readConfigFile(file));
      expect(error.code).toBe('CONFIG_INVALID');
      expect(error.file).toBe(file);
      expect(error.line).toBe(each.line);
      expect(error.key).toBe(each.key);
      expect(error.message).toMatch(each.message);
      expect(error.message).toContain(file);
      expect(error.message).toContain(`line ${each.line}`);
    });
  }

  it('an unknown key near a known one is told with the key meant', async () => {
    for (const [name, text, hint] of [
      ['url.yaml', 'profiles:\n  prod:\n    url: https://x.org\n    tokn_env: X\n', 'did you mean "token_env"?'],
      ['data.yaml', 'profiles:\n  demo:\n    data: d\n    tagret: ckan-2.12\n', 'did you mean "target"?'],
      ['top.yaml', 'profile:\n  a: { data: d }\n', 'did you mean "profiles"?'],
      ['query.yaml', 'queries:\n  q:\n    query: from x\n    parms: { a: 1 }\n', 'did you mean "params"?'],
    ] as const) {
      const error = await failure(readConfigFile(await write(join(root, name), text)));
      expect([error.code, error.hint], name).toEqual(['CONFIG_INVALID', hint]);
    }
    // nothing near: the keys there are
    const far = await failure(readConfigFile(await write(join(root, 'far.yaml'), 'profiles:\n  demo:\n    data: d\n    colour: red\n')));
    expect(far.hint).toMatch(/^a profile has either url \(with language/);
  });

  it('reports YAML, JSON and TOML syntax errors with their line', async () => {
    for (const [name, text, line] of [
      ['bad.yaml', 'queries:\n  a: from x\n  a: from y\n', 3],
      ['bad.json', '{\n  "queries": {},\n}\n', 3],
      ['bad.toml', 'default = "a"\nprofiles = = 1\n', 2],
    ] as const) {
      const file = await write(join(root, name), text);
      const error = await failure(readConfigFile(file));
      expect(error.code).toBe('CONFIG_INVALID');
      expect(error.line, name).toBe(line);
      expect(error.message).toMatch(/not valid (YAML|JSON|TOML)/);
    }
  });
});

describe('tokens', () => {
  const withToken = 'profiles:\n  p:\n    url: https://x.org\n    token: s3cret-value\n';

  it('refuses a plain token in a file that others can read, without printing the token', async () => {
    const file = await write(join(root, 'c.yaml'), withToken, 0o644);
    const error = await failure(readConfigFile(file));
    expect(error.code).toBe('CONFIG_INSECURE_TOKEN');
    expect(error.line).toBe(4);
    expect(error.key).toBe('profiles.p.token');
    expect(error.hint).toContain('chmod 600');
    expect(`${error.message} ${error.hint ?? ''}`).not.toContain('s3cret');
  });

  it('accepts a plain token in a file only its owner can read, and never prints it', async () => {
    const file = await write(join(root, 'c.yaml'), withToken, 0o600);
    const config = await readConfigFile(file);
    const profile = config.profiles.get('p');
    expect(JSON.stringify(profile)).not.toContain('s3cret');
    expect(String(profile?.kind === 'url' ? profile.token?.kind === 'inline' && profile.token.value : '')).not.toContain(
      's3cret',
    );
    if (profile?.kind !== 'url' || profile.token === undefined) throw new Error('expected a url profile with a token');
    expect((await readToken(profile.token, { profile: 'p' })).reveal()).toBe('s3cret-value');
  });

  it('reads token_env, token_file and token_cmd, and names the key when one fails', async () => {
    const tokenFile = await write(join(root, 'token'), '\n  file-token  \n');
    expect((await readToken({ kind: 'env', name: 'T' }, { profile: 'p', env: { T: ' env-token\n' } })).reveal()).toBe(
      'env-token',
    );
    expect((await readToken({ kind: 'file', path: tokenFile }, { profile: 'p' })).reveal()).toBe('file-token');
    expect((await readToken({ kind: 'cmd', command: 'echo cmd-token' }, { profile: 'p' })).reveal()).toBe('cmd-token');

    const unset = await failure(readToken({ kind: 'env', name: 'NOPE' }, { profile: 'p', env: {} }));
    expect(unset.message).toContain('profiles.p.token_env');
    expect(unset.message).toContain('NOPE is not set');
    const failing = await failure(readToken({ kind: 'cmd', command: 'echo leaked; exit 3' }, { profile: 'p' }));
    expect(failing.message).toContain('exit status 3');
    expect(failing.message).not.toContain('leaked');
  });
});

describe('a data profile with a target', () => {
  it('reads target and max_scan, and refuses a target that is none', async () => {
    const file = await write(join(home, 'ckql.config.yaml'), 'profiles:\n  local:\n    data: ./data\n    target: ckan-2.12\n    max_scan: 500\n');
    const config = await readConfigFile(file);
    expect(config.profiles.get('local')).toMatchObject({ kind: 'data', target: 'ckan-2.12', maxScan: 500 });
    const bad = await write(join(home, 'bad.yaml'), 'profiles:\n  local:\n    data: ./data\n    target: ckan-2.13\n');
    const error = await failure(readConfigFile(bad));
    expect(error.message).toContain('profiles.local.target: must be one of "ckan-2.11", "ckan-2.12", "sql"');
  });
});

/**
 * Each source's token goes to that source only (docs/portals.md, tokens):
 * three stub portals on 127.0.0.1:0 record every request they receive with
 * its headers, and a cross-portal join is run from the CLI, the REPL,
 * `ckql ui`'s actions and the library. A profile without a token sends
 * none; `CKQL_TOKEN` is `--url`'s (and `.connect URL`'s) alone; a profile's
 * token reaches its own portal and no other; explain's curl line names the
 * token of the portal it calls.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { connect } from '../../src/client/connect.js';
import { withSources } from '../../src/client/sources.js';
import { loadConfig } from '../../src/config/load.js';
import { profileSources, selectedSource } from '../../src/cli/playground-sources.js';
import { playgroundActions } from '../../src/cli/playground.js';
import type { FieldInfo } from '../../src/datastore/types.js';
import { Session } from '../../src/repl/session.js';
import { sourceSpecFor } from '../../src/repl/commands.js';
import { selectSource } from '../../src/session/select-source.js';
import { openSource } from '../../src/session/source.js';
import type { Source } from '../../src/session/source.js';
import { ckql, ndjson } from '../cli/run-ckql.js';
import { startStubPortal } from '../helpers/stub-ckan.js';
import type { StubPortal } from '../helpers/stub-ckan.js';

const ENV_TOKEN = 'env-token-CKQL-91b2';
const FILE_TOKEN = 'file-token-A-4c7d';
const PRIVATE_TOKEN = 'priv-token-C-e58a';

const courseFields: readonly FieldInfo[] = [
  { id: '_id', type: 'int' },
  { id: 'code', type: 'text' },
  { id: 'subject', type: 'text' },
];
const courses = [
  { _id: 1, code: 'M1', subject: 'math' },
  { _id: 2, code: 'H1', subject: 'history' },
];

let a: StubPortal;
let pub: StubPortal;
let priv: StubPortal;
let dir: string;
let configFile: string;

beforeAll(async () => {
  [a, pub, priv] = await Promise.all([
    startStubPortal({
      resources: [
        {
          id: 'enrolments',
          fields: [{ id: '_id', type: 'int' }, { id: 'course', type: 'text' }, { id: 'grade', type: 'numeric' }],
          records: [
            { _id: 1, course: 'M1', grade: 5 },
            { _id: 2, course: 'H1', grade: 4 },
            { _id: 3, course: 'M1', grade: 6 },
          ],
        },
      ],
    }),
    startStubPortal({ resources: [{ id: 'courses', fields: courseFields, records: courses }] }),
    startStubPortal({ resources: [{ id: 'courses', fields: courseFields, records: courses }] }),
  ]);
  dir = mkdtempSync(join(tmpdir(), 'ckql-tokens-'));
  const tokenFile = join(dir, 'a.token');
  writeFileSync(tokenFile, `${FILE_TOKEN}\n`, { mode: 0o600 });
  configFile = join(dir, 'ckql.config.yaml');
  writeFileSync(
    configFile,
    [
      'profiles:',
      `  a: { url: "${a.url}", token_file: "${tokenFile}" }`,
      `  nokey: { url: "${a.url}" }`,
      `  pub: { url: "${pub.url}" }`,
      `  priv: { url: "${priv.url}", token_env: PRIV_TOKEN }`,
      '',
    ].join('\n'),
  );
});

afterAll(async () => {
  await Promise.all([a.close(), pub.close(), priv.close()]);
  rmSync(dir, { recursive: true, force: true });
});

beforeEach(() => {
  for (const portal of [a, pub, priv]) portal.requests.length = 0;
});

/** The Authorization header of every request a portal received (undefined where none was sent). */
function tokensAt(portal: StubPortal): (string | undefined)[] {
  return portal.requests.map((request) => request.headers.authorization as string | undefined);
}

const join2 = (other: string): string => `from enrolments e join ${other}:courses c on e.course = c.code select e.course, c.subject order by e._id`;
const expected = [
  { course: 'M1', subject: 'math' },
  { course: 'H1', subject: 'history' },
  { course: 'M1', subject: 'math' },
];

describe('the CLI', () => {
  it('--url with CKQL_TOKEN: the token goes to --url only, never to a profile without one', async () => {
    const result = await ckql(['query', join2('pub'), '--url', a.url, '--config', configFile, '--format', 'ndjson'], { env: { CKQL_TOKEN: ENV_TOKEN } });
    expect(result.stderr).toBe('');
    expect(ndjson(result.stdout)).toEqual(expected);
    expect(pub.requests.length).toBeGreaterThan(0);
    expect(tokensAt(pub)).toEqual(pub.requests.map(() => undefined));
    expect(a.requests.length).toBeGreaterThan(0);
    expect(tokensAt(a)).toEqual(a.requests.map(() => ENV_TOKEN));
  });

  it('--profile with its token file, and CKQL_TOKEN set: each portal gets its own token or none', async () => {
    const result = await ckql(['query', join2('pub'), '--profile', 'a', '--config', configFile, '--format', 'ndjson'], { env: { CKQL_TOKEN: ENV_TOKEN } });
    expect(result.stderr).toBe('');
    expect(ndjson(result.stdout)).toEqual(expected);
    expect(tokensAt(a)).toEqual(a.requests.map(() => FILE_TOKEN));
    expect(tokensAt(pub)).toEqual(pub.requests.map(() => undefined));
  });

  it('a profile with its own token_env joined with another: each token reaches its own portal', async () => {
    const result = await ckql(['query', join2('priv'), '--profile', 'a', '--config', configFile, '--format', 'ndjson'], {
      env: { CKQL_TOKEN: ENV_TOKEN, PRIV_TOKEN: PRIVATE_TOKEN },
    });
    expect(result.stderr).toBe('');
    expect(ndjson(result.stdout)).toEqual(expected);
    expect(tokensAt(a)).toEqual(a.requests.map(() => FILE_TOKEN));
    expect(priv.requests.length).toBeGreaterThan(0);
    expect(tokensAt(priv)).toEqual(priv.requests.map(() => PRIVATE_TOKEN));
  });

  it('a profile without a token sends none, CKQL_TOKEN or not', async () => {
    const result = await ckql(['query', 'from enrolments limit 1', '--profile', 'nokey', '--config', configFile, '--format', 'ndjson'], { env: { CKQL_TOKEN: ENV_TOKEN } });
    expect(result.stderr).toBe('');
    expect(a.requests.length).toBeGreaterThan(0);
    expect(tokensAt(a)).toEqual(a.requests.map(() => undefined));
  });

  it("explain's curl line names the token of the portal it calls: none for a profile without one", async () => {
    const withoutToken = await ckql(['explain', 'from enrolments limit 1', '--profile', 'nokey', '--config', configFile], { env: { CKQL_TOKEN: ENV_TOKEN } });
    const curl = withoutToken.stdout.split('\n').find((line) => line.startsWith('curl '));
    expect(curl).toBeDefined();
    expect(curl).not.toContain('Authorization');
    const withFile = await ckql(['explain', 'from enrolments limit 1', '--profile', 'a', '--config', configFile], { env: { CKQL_TOKEN: ENV_TOKEN } });
    expect(withFile.stdout).toContain(`-H "Authorization: $(cat ${join(dir, 'a.token')})"`);
    expect(withFile.stdout + withoutToken.stdout).not.toContain(FILE_TOKEN);
    expect(withFile.stdout + withoutToken.stdout).not.toContain(ENV_TOKEN);
  });
});

/** A REPL session on the source the flags choose, as `ckql repl` opens it (its curl token shell and profile). */
async function replOn(flags: { profile?: string; url?: string }, env: NodeJS.ProcessEnv): Promise<{ session: Session; source: Source }> {
  const config = await loadConfig({ configFile });
  const { spec, tokenShell } = await selectSource(flags, { config: async () => config, env });
  const source = await openSource(spec);
  const session = new Session({
    config,
    settings: { format: 'table', limit: 100, timing: false, explain: false, language: undefined },
    color: false,
    width: () => 100,
    source,
    openSource: (each) => openSource(each),
    tokenShell,
    ...(flags.profile === undefined ? {} : { profile: flags.profile }),
  });
  return { session, source };
}

describe('the REPL', () => {
  it('after .connect URL, requests carry CKQL_TOKEN and the curl line says $CKQL_TOKEN, not the first profile token file', async () => {
    const env = { CKQL_TOKEN: ENV_TOKEN };
    const { session, source } = await replOn({ profile: 'a' }, env);
    try {
      await session.connectTo(sourceSpecFor(pub.url, dir, env));
      pub.requests.length = 0;
      session.settings.explain = true;
      const answer = await session.run('from courses limit 1');
      const curl = answer.split('\n').find((line) => line.startsWith('curl ')) ?? '';
      expect(curl).toContain('-H "Authorization: $CKQL_TOKEN"');
      expect(curl).not.toContain('a.token');
      expect(tokensAt(pub)).toEqual(pub.requests.map(() => ENV_TOKEN));
      expect(tokensAt(pub).length).toBeGreaterThan(0);
    } finally {
      await session.close();
      await source.close();
    }
  });

  it('a cross-portal join from a --url session sends CKQL_TOKEN to the --url portal alone', async () => {
    const { session, source } = await replOn({ url: a.url }, { CKQL_TOKEN: ENV_TOKEN });
    // The REPL reads the other profiles' tokens with the process's environment, as a person's shell sets it.
    process.env.CKQL_TOKEN = ENV_TOKEN;
    try {
      const answer = await session.run(join2('pub'));
      expect(answer).toContain('history');
      expect(pub.requests.length).toBeGreaterThan(0);
      expect(tokensAt(pub)).toEqual(pub.requests.map(() => undefined));
      expect(tokensAt(a)).toEqual(a.requests.map(() => ENV_TOKEN));
    } finally {
      delete process.env.CKQL_TOKEN;
      await session.close();
      await source.close();
    }
  });
});

describe('ckql ui', () => {
  it('a profile the page picks gets its own token, never CKQL_TOKEN of --url', async () => {
    const config = await loadConfig({ configFile });
    const env = { CKQL_TOKEN: ENV_TOKEN, PRIV_TOKEN: PRIVATE_TOKEN };
    const selected = await selectSource({ url: a.url }, { config: async () => config, env });
    const sources = [selectedSource('url', selected, undefined), ...profileSources(config, undefined, env, dir)];
    const actions = playgroundActions({ sources, defaultSource: 'url', version: 'test' });
    const signal = new AbortController().signal;
    try {
      const listed = (await actions.call('sources', {}, signal)).body as { sources: { name: string; hasToken: boolean }[] };
      expect(Object.fromEntries(listed.sources.map((each) => [each.name, each.hasToken]))).toEqual({ url: true, a: true, nokey: false, pub: false, priv: true });
      for (const name of ['url', 'pub', 'priv']) {
        const answer = await actions.call('query', { source: name, query: name === 'url' ? 'from enrolments limit 1' : 'from courses limit 1' }, signal);
        expect(answer.status, JSON.stringify(answer.body)).toBe(200);
      }
      const explained = (await actions.call('explain', { source: 'pub', query: 'from courses limit 1' }, signal)).body as { portal: { curl: string }; taggedTemplate: string };
      expect(explained.portal.curl).not.toContain('Authorization');
      expect(explained.taggedTemplate).not.toContain('token');
      const privately = (await actions.call('explain', { source: 'priv', query: 'from courses limit 1' }, signal)).body as { portal: { curl: string }; taggedTemplate: string };
      expect(privately.portal.curl).toContain('-H "Authorization: $PRIV_TOKEN"');
      expect(privately.taggedTemplate).toContain('token: process.env.PRIV_TOKEN');
      expect(tokensAt(a)).toEqual(a.requests.map(() => ENV_TOKEN));
      expect(pub.requests.length).toBeGreaterThan(0);
      expect(tokensAt(pub)).toEqual(pub.requests.map(() => undefined));
      expect(tokensAt(priv)).toEqual(priv.requests.map(() => PRIVATE_TOKEN));
    } finally {
      await actions.close();
    }
  });
});

describe('the library', () => {
  it('withSources: each client sends its own token, and a client made without one sends none', async () => {
    const home = connect({ url: a.url, token: ENV_TOKEN });
    const open = connect({ url: pub.url });
    const secret = connect({ url: priv.url, token: PRIVATE_TOKEN });
    const client = withSources(home, { pub: open, priv: secret });
    try {
      const result = await client.search(`${join2('pub').replace(' select', ' join priv:courses d on e.course = d.code select')}`);
      expect(result.records).toEqual(expected);
      expect(pub.requests.length).toBeGreaterThan(0);
      expect(priv.requests.length).toBeGreaterThan(0);
      expect(tokensAt(a)).toEqual(a.requests.map(() => ENV_TOKEN));
      expect(tokensAt(pub)).toEqual(pub.requests.map(() => undefined));
      expect(tokensAt(priv)).toEqual(priv.requests.map(() => PRIVATE_TOKEN));
    } finally {
      await Promise.all([client.close(), open.close(), secret.close()]);
    }
  });
});

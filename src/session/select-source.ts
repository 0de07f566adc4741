/**
 * Which source a command runs on, from its flags and the config:
 * `--url` (a portal), `--data` (local files, repeatable) or `--profile NAME`;
 * with none of them, the profile a named query asks for, then the config's
 * `default` profile, then the bundled demo data.
 *
 * A token never comes from a plain argument, and goes to its own portal only:
 * `--url` takes `--token-file FILE`, else `CKQL_TOKEN`; a portal profile takes
 * `--token-file FILE` (when it is the profile chosen), else its own
 * `token_*`, else none. `CKQL_TOKEN` never reaches a profile's portal: a join
 * naming `pub:courses` from a `--url` session would send it there.
 */
import { resolve } from 'node:path';
import type { Config, Profile, TokenSource } from '../config/types.js';
import { readToken, readTokenFile } from '../config/token.js';
import { assertNever } from '../ast.js';
import { INVALID_UTF8_MODES } from '../engine/types.js';
import type { InvalidUtf8 } from '../engine/types.js';
import { toolError } from '../errors.js';
import { didYouMean } from './nearest.js';
import { demoDataDir } from './source.js';
import type { SourceSpec } from './source.js';
import { parseTarget, type Target } from '../compile/plan.js';
import { INFER_MODES } from '../engine/declared.js';
import type { InferMode } from '../engine/declared.js';

/** The source options every source-using command accepts (commander's camel-cased names). */
export interface SourceFlags {
  readonly url?: string;
  readonly lang?: string;
  readonly get?: boolean;
  readonly tokenFile?: string;
  readonly data?: readonly string[];
  readonly profile?: string;
  /** `--engine memory|pglite|postgres` */
  readonly engine?: string;
  /** `--db URL|DIR`: a PostgreSQL server's URL, or the directory of a kept PGlite database */
  readonly db?: string;
  /** `--db-dir DIR`: keep the PGlite database in DIR */
  readonly dbDir?: string;
  /** seconds a request may take (`--timeout`); wins over the profile's `timeout` */
  readonly timeout?: number;
  /** `--target ckan-2.11|ckan-2.12|sql`: the portal's dialect, or the CKAN local data is served as; wins over the profile's `target` */
  readonly target?: string;
  /** `--max-scan N`; wins over the profile's `max_scan` */
  readonly maxScan?: number;
  /** `--max-join-rows N`; wins over the profile's `max_join_rows` */
  readonly maxJoinRows?: number;
  /** `--fields FILE`: the declared types of the one data file (engine/declared.ts) */
  readonly fields?: string;
  /** `--infer ckql|xloader|datapusher`: how undeclared columns of local data are typed; wins over the profile's `infer` */
  readonly infer?: string;
  /** `--invalid-utf8 refuse|replace`: what a data file's bytes that are not UTF-8 become */
  readonly invalidUtf8?: string;
}

export interface SelectSourceOptions {
  /** loads the config only when it is needed (a broken config does not stop `--data`) */
  readonly config: () => Promise<Config>;
  /** the profile a named query asks for, used when no flag chooses */
  readonly preferredProfile?: string;
  readonly env?: NodeJS.ProcessEnv;
  readonly cwd?: string;
}

export interface SelectedSource {
  readonly spec: SourceSpec;
  /** the profile of the config file it comes from, when one (a query may name it as `profile:resource`) */
  readonly profile?: string;
  /**
   * How a shell can produce the token, for curl lines: `$CKQL_TOKEN`,
   * `$PORTAL_TOKEN`, `$(cat '/path')`, `$(pass portal)`. Never the token.
   */
  readonly tokenShell?: string;
}

const LANGUAGE = /^[A-Za-z][A-Za-z0-9_-]*$/;

/**
 * @example
 * await selectSource({ data: ['examples/data'] }, { config: () => loadConfig() })
 * // → { spec: { kind: 'data', paths: ['/…/examples/data'] } }
 */
export async function selectSource(flags: SourceFlags, options: SelectSourceOptions): Promise<SelectedSource> {
  const env = options.env ?? process.env;
  const cwd = options.cwd ?? process.cwd();
  const chosen = [
    flags.url === undefined ? undefined : '--url',
    (flags.data ?? []).length === 0 ? undefined : '--data',
    flags.profile === undefined ? undefined : '--profile',
  ].filter((flag) => flag !== undefined);
  if (chosen.length > 1) {
    throw toolError('USAGE', [`${chosen.join(' and ')} both choose a source; give only one`]);
  }
  if (flags.lang !== undefined && !LANGUAGE.test(flags.lang)) {
    throw toolError('USAGE', [`--lang must be a language segment such as en or de, found ${JSON.stringify(flags.lang)}`]);
  }

  if (flags.url !== undefined) {
    checkUrl(flags.url);
    if (givesTyping(flags)) refuseTypingFlags(flags, '--url');
    refuseEngineFlags(flags, '--url');
    const token = await flagToken(flags, env);
    return {
      spec: {
        kind: 'url',
        url: flags.url,
        ...(token === undefined ? {} : { token: token.value }),
        ...(flags.lang === undefined ? {} : { language: flags.lang }),
        ...(flags.get === true ? { method: 'GET' as const } : {}),
        ...timeoutOf(flags.timeout),
        ...planningOf(flags),
      },
      ...(token === undefined ? {} : { tokenShell: token.shell }),
    };
  }
  const engine = engineFlags(flags, cwd);
  if ((flags.data !== undefined && flags.data.length > 0) || engine.db !== undefined || engine.engine === 'postgres') {
    refusePortalFlags(flags, 'with --data');
    return { spec: { kind: 'data', paths: (flags.data ?? []).map((path) => resolve(cwd, path)), ...engine, ...timeoutOf(flags.timeout), ...planningOf(flags), ...typingOf(flags, cwd) } };
  }

  const config = await options.config();
  const name = flags.profile ?? options.preferredProfile ?? config.defaultProfile;
  if (name === undefined) {
    refusePortalFlags(flags, 'with the demo data');
    return { spec: { kind: 'data', paths: [demoDataDir], demo: true, ...engine, ...timeoutOf(flags.timeout), ...planningOf(flags), ...typingOf(flags, cwd) } };
  }
  const profile = config.profiles.get(name);
  if (profile === undefined) {
    const names = [...config.profiles.keys()];
    throw toolError('UNKNOWN_PROFILE', [name], {
      ...(config.file === undefined ? {} : { file: config.file }),
      hint:
        didYouMean(name, names) ??
        (names.length === 0 ? 'no profiles are defined: add them under profiles: in a config file' : `profiles: ${names.join(', ')}`),
    });
  }
  return { ...(await fromProfile(profile, flags, config, env, cwd)), profile: name };
}

const ENGINES = ['memory', 'pglite', 'postgres'] as const;

/** `--engine`, `--db`, `--db-dir` → the engine and database of a data source (a `postgres://` URL implies `postgres`). */
function engineFlags(flags: SourceFlags, cwd: string): { engine?: (typeof ENGINES)[number]; db?: string } {
  if (flags.engine !== undefined && !(ENGINES as readonly string[]).includes(flags.engine)) {
    throw toolError('USAGE', [`--engine must be one of ${ENGINES.join(', ')}, found ${JSON.stringify(flags.engine)}`]);
  }
  if (flags.db !== undefined && flags.dbDir !== undefined) throw toolError('USAGE', ['--db and --db-dir both name a database; give only one']);
  for (const [flag, value] of [['--db', flags.db], ['--db-dir', flags.dbDir]] as const) {
    // An empty value (an unset variable: --db "$DB") would name the working folder.
    if (value !== undefined && value.trim() === '') throw toolError('USAGE', [`${flag} is empty`], { hint: 'give a postgres:// URL or a folder for a PGlite database (created when missing)' });
  }
  const isUrl = flags.db !== undefined && /^postgres(ql)?:\/\//.test(flags.db);
  const engine = (flags.engine ?? (isUrl ? 'postgres' : flags.db !== undefined || flags.dbDir !== undefined ? 'pglite' : undefined)) as (typeof ENGINES)[number] | undefined;
  const db = flags.dbDir !== undefined ? resolve(cwd, flags.dbDir) : flags.db === undefined ? undefined : isUrl ? flags.db : resolve(cwd, flags.db);
  if (engine === 'memory' && db !== undefined) throw toolError('USAGE', ['--db names a database; the memory engine reads files (--data)'], { hint: 'add --engine pglite or --engine postgres' });
  if (engine === 'postgres' && db !== undefined && !isUrl) throw toolError('USAGE', ['--engine postgres needs --db postgres://…'], { hint: 'or leave --db out: the PG* environment variables say where the server is' });
  return { ...(engine === undefined ? {} : { engine }), ...(db === undefined ? {} : { db }) };
}

async function fromProfile(profile: Profile, flags: SourceFlags, config: Config, env: NodeJS.ProcessEnv, cwd: string): Promise<SelectedSource> {
  if (profile.kind === 'data') {
    refusePortalFlags(flags, `with the data profile ${JSON.stringify(profile.name)}`);
    const engine = profile.engine ?? (profile.db === undefined ? undefined : /^postgres(ql)?:\/\//.test(profile.db) ? 'postgres' : 'pglite');
    const typing = typingOf(flags, cwd, profile.infer);
    return {
      spec: {
        kind: 'data',
        paths: profile.paths,
        ...(engine === undefined ? {} : { engine }),
        ...(profile.db === undefined ? {} : { db: profile.db }),
        ...timeoutOf(flags.timeout),
        ...planningOf(flags, profile),
        ...typing,
      },
    };
  }
  if (givesTyping(flags)) refuseTypingFlags(flags, `the portal profile ${JSON.stringify(profile.name)}`);
  refuseEngineFlags(flags, `the portal profile ${JSON.stringify(profile.name)}`);
  // `--token-file`, else the profile's own token, else none: never `CKQL_TOKEN`, which is `--url`'s.
  let token = await flagToken({ tokenFile: flags.tokenFile }, {});
  if (token === undefined && profile.token !== undefined) {
    const secret = await readToken(profile.token, {
      env,
      profile: profile.name,
      ...(config.file === undefined ? {} : { file: config.file }),
    });
    token = { value: secret.reveal(), shell: tokenShellOf(profile.token) };
  }
  const language = flags.lang ?? profile.language;
  const method = flags.get === true ? 'GET' : profile.method;
  return {
    spec: {
      kind: 'url',
      url: profile.url,
      ...(token === undefined ? {} : { token: token.value }),
      ...(language === undefined ? {} : { language }),
      ...(method === undefined ? {} : { method }),
      ...timeoutOf(flags.timeout ?? profile.timeout),
      resources: profile.resources,
      ...planningOf(flags, profile),
      ...(profile.tokenHeader === undefined ? {} : { tokenHeader: profile.tokenHeader }),
      ...(profile.userAgent === undefined ? {} : { userAgent: profile.userAgent }),
      ...(profile.maxInFlight === undefined ? {} : { maxInFlight: profile.maxInFlight }),
    },
    ...(token === undefined ? {} : { tokenShell: token.shell }),
  };
}

/** `--target`, `--max-scan` and `--max-join-rows`, over the profile's `target`, `max_scan` and `max_join_rows`. */
function planningOf(
  flags: SourceFlags,
  profile?: { readonly target?: Target; readonly maxScan?: number; readonly maxJoinRows?: number },
): { target?: Target; maxScan?: number; maxJoinRows?: number } {
  let target = profile?.target;
  if (flags.target !== undefined) {
    target = parseTarget(flags.target);
    if (target === undefined) throw toolError('USAGE', [`--target must be ckan-2.11, ckan-2.12 or sql, found ${JSON.stringify(flags.target)}`]);
  }
  const maxScan = flags.maxScan ?? profile?.maxScan;
  const maxJoinRows = flags.maxJoinRows ?? profile?.maxJoinRows;
  return { ...(target === undefined ? {} : { target }), ...(maxScan === undefined ? {} : { maxScan }), ...(maxJoinRows === undefined ? {} : { maxJoinRows }) };
}

/** `--fields`, `--infer` (over a data profile's `infer`) and `--invalid-utf8`, for local data. */
function typingOf(flags: SourceFlags, cwd: string, profileInfer?: InferMode): { fields?: string; infer?: InferMode; invalidUtf8?: InvalidUtf8 } {
  let infer = profileInfer;
  if (flags.infer !== undefined) {
    if (!(INFER_MODES as readonly string[]).includes(flags.infer)) {
      throw toolError('USAGE', [`--infer must be one of ${INFER_MODES.join(', ')}, found ${JSON.stringify(flags.infer)}`]);
    }
    infer = flags.infer as InferMode;
  }
  if (flags.invalidUtf8 !== undefined && !(INVALID_UTF8_MODES as readonly string[]).includes(flags.invalidUtf8)) {
    throw toolError('USAGE', [`--invalid-utf8 must be one of ${INVALID_UTF8_MODES.join(', ')}, found ${JSON.stringify(flags.invalidUtf8)}`]);
  }
  return {
    ...(flags.fields === undefined ? {} : { fields: resolve(cwd, flags.fields) }),
    ...(infer === undefined ? {} : { infer }),
    ...(flags.invalidUtf8 === undefined ? {} : { invalidUtf8: flags.invalidUtf8 as InvalidUtf8 }),
  };
}

function givesTyping(flags: SourceFlags): boolean {
  return flags.fields !== undefined || flags.infer !== undefined || flags.invalidUtf8 !== undefined;
}

function refuseTypingFlags(flags: SourceFlags, where: string): void {
  const given = [
    flags.fields === undefined ? undefined : '--fields',
    flags.infer === undefined ? undefined : '--infer',
    flags.invalidUtf8 === undefined ? undefined : '--invalid-utf8',
  ].filter((flag) => flag !== undefined);
  throw toolError('USAGE', [`${given.join(', ')} say how local data files are read, which does not apply to ${where}`], { hint: 'a portal says its own types; use --data or a data profile' });
}

/** `--engine`, `--db`, `--db-dir` with a portal: they choose who answers local data, and a portal answers itself (they were ignored). */
function refuseEngineFlags(flags: SourceFlags, where: string): void {
  const given = [
    flags.engine === undefined ? undefined : '--engine',
    flags.db === undefined ? undefined : '--db',
    flags.dbDir === undefined ? undefined : '--db-dir',
  ].filter((flag) => flag !== undefined);
  if (given.length === 0) return;
  throw toolError('USAGE', [`${given.join(', ')} ${given.length === 1 ? 'chooses' : 'choose'} who answers local data, not ${where}, which answers itself`], {
    hint: 'leave it out for a portal; a PostgreSQL datastore is served with --db alone (no --url)',
  });
}

/** Seconds as the source spec's milliseconds. */
function timeoutOf(seconds: number | undefined): { timeout?: number } {
  // at least a millisecond: a positive number of seconds is never a timeout of 0 ms, which the client refuses
  return seconds === undefined ? {} : { timeout: Math.max(1, Math.round(seconds * 1_000)) };
}

/**
 * How a shell produces a profile's token, for curl lines (never the token).
 * An inline `token:` has no shell spelling: the curl line says `$CKQL_TOKEN`
 * for the reader to set.
 * @example tokenShellOf({ kind: 'env', name: 'PORTAL_TOKEN' }) // → '$PORTAL_TOKEN'
 */
export function tokenShellOf(token: TokenSource): string {
  switch (token.kind) {
    case 'env':
      return `$${token.name}`;
    case 'file':
      return `$(cat ${shellQuote(token.path)})`;
    case 'cmd':
      return `$(${token.command})`;
    case 'inline':
      return '$CKQL_TOKEN';
    default:
      return assertNever(token);
  }
}

/** `--token-file`, else `CKQL_TOKEN`. */
async function flagToken(
  flags: Pick<SourceFlags, 'tokenFile'>,
  env: NodeJS.ProcessEnv,
): Promise<{ value: string; shell: string } | undefined> {
  if (flags.tokenFile !== undefined) {
    return { value: await readTokenFile(flags.tokenFile), shell: `$(cat ${shellQuote(flags.tokenFile)})` };
  }
  const fromEnv = env.CKQL_TOKEN?.trim();
  return fromEnv === undefined || fromEnv === '' ? undefined : { value: fromEnv, shell: '$CKQL_TOKEN' };
}

function refusePortalFlags(flags: SourceFlags, where: string): void {
  const given = [
    flags.lang === undefined ? undefined : '--lang',
    flags.get === true ? '--get' : undefined,
    flags.tokenFile === undefined ? undefined : '--token-file',
  ].filter((flag) => flag !== undefined);
  if (given.length > 0) {
    throw toolError('USAGE', [`${given.join(', ')} only ${given.length === 1 ? 'applies' : 'apply'} to a portal (--url or a url profile), not ${where}`]);
  }
}

function checkUrl(url: string): void {
  let parsed: URL | undefined;
  try {
    parsed = new URL(url);
  } catch {
    parsed = undefined;
  }
  if (parsed === undefined || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')) {
    throw toolError('USAGE', [`--url must be an http(s) URL such as https://data.example.org, found ${JSON.stringify(url)}`]);
  }
}

/** POSIX shell single-quoting. */
export function shellQuote(text: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(text) ? text : `'${text.replaceAll("'", "'\\''")}'`;
}

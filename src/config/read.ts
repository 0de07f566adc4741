/**
 * Reading, parsing and validating one config file: the YAML, TOML and zod
 * code a command needs only when a config file exists, so `load.ts` imports
 * this module on demand.
 */
import { stat } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, extname, join, resolve } from 'node:path';
import { parse as parseToml } from 'smol-toml';
import { LineCounter, parseDocument } from 'yaml';
import type { z } from 'zod';
import { ToolError, toolError } from '../errors.js';
import { readTextFile } from '../engine/node/files.js';
import { didYouMean } from '../text.js';
import { formatKeyPath, lineOfPath } from './locate.js';
import type { ConfigFormat, KeyPath } from './locate.js';
import { configSchema, dataProfileSchema, namedQuerySchema, tokenKeys, urlProfileSchema } from './schema.js';
import { Secret } from './secret.js';
import type { Config, NamedQuery, ParamDefault, Profile, QueryOrigin, TokenSource } from './types.js';

/** Reads, parses and validates one config file. */
export async function readConfigFile(file: string): Promise<Config> {
  let text: string;
  try {
    text = await readTextFile(file);
  } catch (cause) {
    // FILE_UNREADABLE says what the file is (a FIFO, a symlink loop, too large, not UTF-8); a config keeps its own code.
    const detail = cause instanceof ToolError ? cause.message.slice(file.length + 1) : `cannot be read (${(cause as NodeJS.ErrnoException).code ?? 'error'})`;
    throw toolError('CONFIG_INVALID', [file, detail], { file, cause, ...(cause instanceof ToolError && cause.hint !== undefined ? { hint: cause.hint } : {}) });
  }
  const config = configFromText(file, text);
  const format = formatOf(file);
  await refuseReadableTokens(file, config, (path) => lineOfPath(text, format, path));
  return config;
}

/**
 * Parses and validates a config file's text (as an editor holds it, saved
 * or not); `file` names it in errors and resolves its relative paths. The
 * file's permissions are not looked at.
 */
export function configFromText(file: string, text: string): Config {
  const format = formatOf(file);
  const raw = parseText(file, text, format);
  const fail = (path: KeyPath, detail: string, hint?: string): ToolError => {
    const line = lineOfPath(text, format, path);
    const key = path.length > 0 ? formatKeyPath(path) : undefined;
    const where = [line === undefined ? undefined : `line ${line}`, key].filter((part) => part !== undefined);
    return toolError('CONFIG_INVALID', [file, `${where.length > 0 ? `${where.join(', ')}: ` : ''}${detail}`], {
      file,
      ...(line === undefined ? {} : { line }),
      ...(key === undefined ? {} : { key }),
      ...(hint === undefined ? {} : { hint }),
    });
  };
  return validate(raw ?? {}, file, fail, (path) => lineOfPath(text, format, path));
}

/** The format of a config file, by its name: `.json`, `.toml`, else YAML. */
export function formatOf(file: string): ConfigFormat {
  const extension = extname(file).toLowerCase();
  if (extension === '.json') return 'json';
  if (extension === '.toml') return 'toml';
  return 'yaml';
}

function parseText(file: string, text: string, format: ConfigFormat): unknown {
  const invalid = (line: number | undefined, detail: string, cause: unknown): ToolError =>
    toolError('CONFIG_INVALID', [file, `${line === undefined ? '' : `line ${line}: `}${detail}`], {
      file,
      ...(line === undefined ? {} : { line }),
      cause,
    });
  switch (format) {
    case 'json':
      try {
        return JSON.parse(text) as unknown;
      } catch (cause) {
        const message = (cause as Error).message;
        const position = /position (\d+)/.exec(message)?.[1];
        const line = position === undefined ? undefined : text.slice(0, Number(position)).split('\n').length;
        return invalidThrow(invalid(line, `not valid JSON: ${message.replace(/ in JSON at position \d+.*$/, '')}`, cause));
      }
    case 'toml':
      try {
        return parseToml(text) as unknown;
      } catch (cause) {
        const line = (cause as { line?: unknown }).line;
        const detail = ((cause as Error).message.split('\n')[0] ?? '').replace(/^Invalid TOML document: /, '');
        return invalidThrow(invalid(typeof line === 'number' ? line : undefined, `not valid TOML: ${detail}`, cause));
      }
    case 'yaml': {
      const lineCounter = new LineCounter();
      const document = parseDocument(text, { lineCounter, prettyErrors: false });
      const first = document.errors[0];
      if (first !== undefined) {
        const line = lineCounter.linePos(first.pos[0]).line;
        const detail = (first.message.split('\n')[0] ?? '').replace(/ at line \d+, column \d+:?$/, '');
        throw invalid(line, `not valid YAML: ${detail}`, first);
      }
      try {
        return document.toJS({ maxAliasCount: 100 }) as unknown;
      } catch (cause) {
        // yaml's guard against an alias bomb (aliases of aliases that expand to millions of nodes).
        throw invalid(undefined, 'not valid YAML here: its aliases (*name) expand to too many values; write the values out, or use fewer aliases', cause);
      }
    }
  }
}

function invalidThrow(error: ToolError): never {
  throw error;
}

type Fail = (path: KeyPath, detail: string, hint?: string) => ToolError;

function validate(raw: unknown, file: string, fail: Fail, lineOf: (path: KeyPath) => number | undefined): Config {
  const top = check(configSchema, raw, [], fail, 'a config file holds default, profiles and queries');
  const baseDir = dirname(file);
  const profiles = new Map<string, Profile>();
  for (const [name, value] of Object.entries(top.profiles ?? {})) {
    profiles.set(name, validateProfile(name, value, baseDir, fail));
  }
  const queries = new Map<string, NamedQuery>();
  for (const [name, value] of Object.entries(top.queries ?? {})) {
    const query = validateQuery(name, value, fail, file, lineOf);
    if (query.profile !== undefined && !profiles.has(query.profile)) {
      throw fail(['queries', name, 'profile'], `names the profile ${JSON.stringify(query.profile)}, which is not defined`, profileHint(profiles));
    }
    queries.set(name, query);
  }
  if (top.default !== undefined && !profiles.has(top.default)) {
    throw fail(['default'], `names the profile ${JSON.stringify(top.default)}, which is not defined`, profileHint(profiles));
  }
  return { file, defaultProfile: top.default ?? implicitDefault(profiles), profiles, queries };
}

/** Without `default:`, a profile named `default` or the only profile is the one to use, not the demo data. */
function implicitDefault(profiles: ReadonlyMap<string, Profile>): string | undefined {
  if (profiles.has('default')) return 'default';
  return profiles.size === 1 ? [...profiles.keys()][0] : undefined;
}

function profileHint(profiles: ReadonlyMap<string, Profile>): string {
  return profiles.size === 0
    ? 'define it under profiles:'
    : `defined profiles: ${[...profiles.keys()].join(', ')}`;
}

function validateProfile(name: string, value: unknown, baseDir: string, fail: Fail): Profile {
  const path = ['profiles', name];
  const isData = typeof value === 'object' && value !== null && ('data' in value || 'db' in value);
  const hint = 'a profile has either url (with language, method, timeout, token_env, token_file, token_cmd, resources, target, max_scan, max_join_rows, token_header, user_agent, max_in_flight) or data (with engine, db, target, max_scan, max_join_rows, infer)';
  if (isData) {
    const profile = check(dataProfileSchema, value, path, fail, hint);
    const paths = profile.data === undefined ? [] : typeof profile.data === 'string' ? [profile.data] : profile.data;
    const db = profile.db === undefined || /^postgres(ql)?:\/\//.test(profile.db) ? profile.db : resolve(baseDir, expandHome(profile.db));
    return {
      kind: 'data',
      name,
      paths: paths.map((each) => resolve(baseDir, expandHome(each))),
      ...(profile.engine === undefined ? {} : { engine: profile.engine }),
      ...(db === undefined ? {} : { db }),
      ...(profile.target === undefined ? {} : { target: profile.target }),
      ...(profile.max_scan === undefined ? {} : { maxScan: profile.max_scan }),
      ...(profile.max_join_rows === undefined ? {} : { maxJoinRows: profile.max_join_rows }),
      ...(profile.infer === undefined ? {} : { infer: profile.infer }),
    };
  }
  const profile = check(urlProfileSchema, value, path, fail, hint);
  return {
    kind: 'url',
    name,
    url: profile.url,
    ...(profile.language === undefined ? {} : { language: profile.language }),
    ...(profile.method === undefined ? {} : { method: profile.method }),
    ...(profile.timeout === undefined ? {} : { timeout: profile.timeout }),
    ...tokenOf(profile, baseDir),
    resources: profile.resources ?? [],
    ...(profile.target === undefined ? {} : { target: profile.target }),
    ...(profile.max_scan === undefined ? {} : { maxScan: profile.max_scan }),
      ...(profile.max_join_rows === undefined ? {} : { maxJoinRows: profile.max_join_rows }),
    ...(profile.token_header === undefined ? {} : { tokenHeader: profile.token_header }),
    ...(profile.user_agent === undefined ? {} : { userAgent: profile.user_agent }),
    ...(profile.max_in_flight === undefined ? {} : { maxInFlight: profile.max_in_flight }),
  };
}

function tokenOf(
  profile: { token_env?: string; token_file?: string; token_cmd?: string; token?: string },
  baseDir: string,
): { token?: TokenSource } {
  if (profile.token_env !== undefined) return { token: { kind: 'env', name: profile.token_env } };
  if (profile.token_file !== undefined) {
    return { token: { kind: 'file', path: resolve(baseDir, expandHome(profile.token_file)) } };
  }
  if (profile.token_cmd !== undefined) return { token: { kind: 'cmd', command: profile.token_cmd } };
  if (profile.token !== undefined) return { token: { kind: 'inline', value: new Secret(profile.token) } };
  return {};
}

function expandHome(path: string): string {
  return path === '~' || path.startsWith('~/') ? join(homedir(), path.slice(1)) : path;
}

function validateQuery(
  name: string,
  value: unknown,
  fail: Fail,
  file: string,
  lineOf: (path: KeyPath) => number | undefined,
): NamedQuery {
  const origin = (path: KeyPath): QueryOrigin => {
    const line = lineOf(path);
    return { file, key: formatKeyPath(path), ...(line === undefined ? {} : { line }) };
  };
  if (typeof value === 'string') {
    if (value.trim() === '') throw fail(['queries', name], 'the query text is empty');
    return { name, query: value, params: Object.freeze(Object.create(null) as Record<string, ParamDefault>), origin: origin(['queries', name]) };
  }
  const query = check(namedQuerySchema, value, ['queries', name], fail, 'a query is its text, or { query, params, description, profile }');
  const params = Object.create(null) as Record<string, ParamDefault>;
  for (const [key, param] of Object.entries(query.params ?? {})) params[key] = param;
  return {
    name,
    query: query.query,
    params: Object.freeze(params),
    origin: origin(['queries', name, 'query']),
    ...(query.description === undefined ? {} : { description: query.description }),
    ...(query.profile === undefined ? {} : { profile: query.profile }),
  };
}

/** Parses with a zod schema; the first issue becomes a `CONFIG_INVALID` with its line and key. */
function check<T extends z.ZodType>(schema: T, value: unknown, path: KeyPath, fail: Fail, hint: string): z.infer<T> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  if (issue === undefined) throw fail(path, 'is not valid', hint);
  const at = [...path, ...issue.path.map((segment) => (typeof segment === 'symbol' ? String(segment) : segment))];
  if (issue.code === 'unrecognized_keys') {
    const key = issue.keys[0] ?? '';
    // the keys of the object checked (a key of a nested one has a path, and its own check)
    const known = issue.path.length === 0 && 'shape' in schema ? Object.keys((schema as unknown as z.ZodObject).shape).filter((each) => !each.startsWith('$')) : [];
    return invalidThrow(fail([...at, key], `unknown key ${JSON.stringify(key)}`, didYouMean(key, known) ?? hint));
  }
  const actual = valueAt(value, issue.path);
  if (actual === undefined && issue.code === 'invalid_type') return invalidThrow(fail(at, 'is missing', hint));
  if (issue.code === 'invalid_value') {
    const choices = issue.values.map((choice) => JSON.stringify(choice)).join(', ');
    return invalidThrow(fail(at, `must be one of ${choices}, found ${describe(actual)}`));
  }
  if (issue.code === 'invalid_type') {
    const expected = { string: 'text', number: 'a number', object: 'a mapping of keys to values', array: 'a list', record: 'a mapping of keys to values' }[
      issue.expected as string
    ];
    const message = expected === undefined ? issue.message : `must be ${expected}`;
    return invalidThrow(fail(at, `${message.replace(/^Invalid input: /, '')}, found ${describe(actual)}`));
  }
  return invalidThrow(fail(at, issue.message, issue.code === 'custom' ? undefined : hint));
}

function valueAt(value: unknown, path: readonly PropertyKey[]): unknown {
  let current = value;
  for (const segment of path) {
    if (typeof current !== 'object' || current === null) return undefined;
    current = (current as Record<PropertyKey, unknown>)[segment];
  }
  return current;
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a mapping';
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  return String(value);
}

/**
 * A token in plain text is only accepted from a file that nobody else can
 * read (as libpq does for `.pgpass`): mode `& 0o077` must be 0.
 */
async function refuseReadableTokens(
  file: string,
  config: Config,
  lineOf: (path: KeyPath) => number | undefined,
): Promise<void> {
  if (process.platform === 'win32') return;
  const inline = [...config.profiles.values()].find((profile) => profile.kind === 'url' && profile.token?.kind === 'inline');
  if (inline === undefined) return;
  const { mode } = await stat(file);
  if ((mode & 0o077) === 0) return;
  const path = ['profiles', inline.name, 'token'];
  const line = lineOf(path);
  throw toolError('CONFIG_INSECURE_TOKEN', [file], {
    file,
    ...(line === undefined ? {} : { line }),
    key: formatKeyPath(path),
    hint: `the file's mode is ${(mode & 0o777).toString(8)}; run chmod 600 ${JSON.stringify(file)}, or replace token with ${tokenKeys.slice(0, 3).join(', ')}`,
  });
}

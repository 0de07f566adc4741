/**
 * Finding, reading and validating the config file.
 *
 * Search order (the first one found wins, nothing is merged):
 * 1. `--config FILE`
 * 2. `CKQL_CONFIG`
 * 3. `ckql.config.{yaml,yml,json,toml}`, `.ckqlrc`, `.ckqlrc.{yaml,yml,json,toml}`,
 *    searched upward from the working directory (lilconfig; it stops at the
 *    home directory, or at `/` outside it); two of them in one folder is an
 *    error, since which one wins would be a guess
 * 4. `$XDG_CONFIG_HOME/ckql/config.{yaml,yml,json,toml}` (default
 *    `~/.config/ckql/`), with the same rule
 *
 * The default profile is the one `default:` names; without that key, a
 * profile named `default`, or the only profile there is.
 *
 * Config files are data only: JavaScript configs are never executed.
 */
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { basename, dirname, isAbsolute, join, resolve } from 'node:path';
import { lilconfig } from 'lilconfig';
import { toolError } from '../errors.js';
import { emptyConfig } from './types.js';
import type { Config } from './types.js';

export interface LoadConfigOptions {
  /** `--config FILE`: must exist */
  readonly configFile?: string;
  /** where the upward search starts; default `process.cwd()` */
  readonly cwd?: string;
  /** for `CKQL_CONFIG`, `XDG_CONFIG_HOME` and `HOME`; default `process.env` */
  readonly env?: NodeJS.ProcessEnv;
}

/** File names searched upward from the working directory, in this order. */
export const configSearchPlaces = [
  'ckql.config.yaml',
  'ckql.config.yml',
  'ckql.config.json',
  'ckql.config.toml',
  '.ckqlrc',
  '.ckqlrc.yaml',
  '.ckqlrc.yml',
  '.ckqlrc.json',
  '.ckqlrc.toml',
] as const;

/**
 * Finds and loads the config; with no file anywhere, an empty config.
 * Throws `ToolError` `CONFIG_INVALID` (with `file`, `line`, `key`) for a file
 * that cannot be read or does not fit the schema, and `CONFIG_INSECURE_TOKEN`
 * for a plain `token` in a file that others can read.
 * @example
 * const config = await loadConfig({ configFile: 'ckql.config.yaml' });
 * config.queries.get('active-math')?.query // "from courses\nwhere subject = $subject\n"
 */
export async function loadConfig(options: LoadConfigOptions = {}): Promise<Config> {
  const file = await findConfigFile(options);
  return file === undefined ? emptyConfig : readConfigFile(file);
}

/** The config file `loadConfig` would read, or undefined when there is none. */
export async function findConfigFile(options: LoadConfigOptions = {}): Promise<string | undefined> {
  const env = options.env ?? process.env;
  const cwd = options.cwd ?? process.cwd();
  const named = options.configFile ?? (env.CKQL_CONFIG === '' ? undefined : env.CKQL_CONFIG);
  if (named !== undefined) {
    const file = resolve(cwd, named);
    if (!existsSync(file)) {
      const from = options.configFile === undefined ? 'CKQL_CONFIG' : '--config';
      throw toolError('CONFIG_INVALID', [file, `no such file (named by ${from})`], { file });
    }
    return file;
  }
  // lilconfig only finds the file; reading and validating happen here, so
  // every format gets the same line-aware errors.
  const keepPath = (filepath: string): string => filepath;
  const searcher = lilconfig('ckql', {
    searchPlaces: [...configSearchPlaces],
    loaders: { '.yaml': keepPath, '.yml': keepPath, '.json': keepPath, '.toml': keepPath, noExt: keepPath },
    stopDir: env.HOME === undefined || env.HOME === '' ? homedir() : env.HOME,
    cache: false,
  });
  const found = await searcher.search(cwd);
  if (found !== null && found.filepath !== '') return onlyOne(found.filepath, configSearchPlaces);

  const configHome =
    env.XDG_CONFIG_HOME !== undefined && isAbsolute(env.XDG_CONFIG_HOME)
      ? env.XDG_CONFIG_HOME
      : join(env.HOME === undefined || env.HOME === '' ? homedir() : env.HOME, '.config');
  const folder = join(configHome, 'ckql');
  const userFile = userConfigNames.map((name) => join(folder, name)).find((file) => existsSync(file));
  return userFile === undefined ? undefined : onlyOne(userFile, userConfigNames);
}

/** Names of the user-wide config in `$XDG_CONFIG_HOME/ckql/`. */
export const userConfigNames = ['config.yaml', 'config.yml', 'config.json', 'config.toml'] as const;

/** The file found, unless another config file sits beside it. */
function onlyOne(file: string, names: readonly string[]): string {
  const folder = dirname(file);
  const others = names.map((name) => join(folder, name)).filter((other) => other !== file && existsSync(other));
  if (others.length === 0) return file;
  const all = [file, ...others].map((each) => basename(each));
  throw toolError('CONFIG_INVALID', [file, `${all.join(' and ')} are both in ${folder}; ckql reads one config file`], {
    file,
    hint: `keep one of ${all.join(', ')} (or name one with --config)`,
  });
}

/**
 * Reads, parses and validates one config file (the parsers load on the first call).
 * @example (await readConfigFile('ckql.config.yaml')).defaultProfile // "demo"
 */
export async function readConfigFile(file: string): Promise<Config> {
  const { readConfigFile: read } = await import('./read.js');
  return read(file);
}

/**
 * Reading a profile's token when the profile is used (not when the config is
 * loaded, so a broken `token_cmd` only matters to the profile that has it).
 * Errors name the profile and the way the token was given, never the token.
 */
import { execFile } from 'node:child_process';
import { readFile, stat } from 'node:fs/promises';
import { ToolError, toolError } from '../errors.js';
import { Secret } from './secret.js';
import type { TokenSource } from './types.js';

export interface ReadTokenOptions {
  /** for `token_env`; default `process.env` */
  readonly env?: NodeJS.ProcessEnv;
  /** the config file, for messages */
  readonly file?: string;
  /** the profile's name, for messages */
  readonly profile: string;
  /** how long `token_cmd` may run; default 30 s */
  readonly timeoutMs?: number;
}

/**
 * The token a profile names, trimmed; an unset variable, a missing file or a
 * failing command is a `TOKEN_UNAVAILABLE` error naming the profile's key
 * (the config itself is fine: what it points at is missing).
 * @example
 * (await readToken({ kind: 'env', name: 'PORTAL_TOKEN' }, { profile: 'portal' })).reveal()
 */
export async function readToken(source: TokenSource, options: ReadTokenOptions): Promise<Secret> {
  const file = options.file ?? '(config)';
  const fail = (key: string, detail: string, cause?: unknown, hint?: string): Error =>
    toolError('TOKEN_UNAVAILABLE', [`profiles.${options.profile}.${key}`, detail], {
      file,
      key: `profiles.${options.profile}.${key}`,
      ...(cause === undefined ? {} : { cause }),
      ...(hint === undefined ? {} : { hint }),
    });
  switch (source.kind) {
    case 'inline':
      return source.value;
    case 'env': {
      const value = (options.env ?? process.env)[source.name]?.trim();
      if (value === undefined || value === '') {
        const hint = `set ${source.name} in the environment that runs ckql, or use another profile`;
        throw fail('token_env', `the environment variable ${source.name} is not set`, undefined, hint);
      }
      return new Secret(value);
    }
    case 'file':
      return new Secret(await readTokenFile(source.path, (detail, cause) => fail('token_file', detail, cause)));
    case 'cmd':
      return new Promise<Secret>((resolve, reject) => {
        const shell = process.platform === 'win32' ? 'cmd.exe' : '/bin/sh';
        const args = process.platform === 'win32' ? ['/d', '/s', '/c', source.command] : ['-c', source.command];
        execFile(shell, args, { timeout: options.timeoutMs ?? 30_000, windowsHide: true }, (error, stdout) => {
          const token = stdout.trim();
          // Only the exit status is reported: the command's output may be the token.
          if (error !== null) {
            const status = error.killed ? 'was stopped after the timeout' : `failed (exit status ${String(error.code)})`;
            reject(fail('token_cmd', `the command ${status}`));
          } else if (token === '') {
            reject(fail('token_cmd', 'the command printed nothing'));
          } else {
            resolve(new Secret(token));
          }
        });
      });
  }
}

/**
 * A token file holds the token on its first non-empty line (trimmed). Like a
 * plain `token:` in a config file, it is refused when others can read it
 * (libpq's rule for `.pgpass`).
 * @example await readTokenFile('/run/secrets/portal') // "0a1b…"
 */
export async function readTokenFile(path: string, fail?: (detail: string, cause: unknown) => Error): Promise<string> {
  let text: string;
  try {
    const { mode } = await stat(path);
    if (process.platform !== 'win32' && (mode & 0o077) !== 0) {
      throw toolError('TOKEN_FILE_INSECURE', [path, (mode & 0o777).toString(8)], {
        file: path,
        hint: `run chmod 600 ${JSON.stringify(path)}`,
      });
    }
    text = await readFile(path, 'utf8');
  } catch (cause) {
    if (cause instanceof ToolError) throw cause;
    const code = (cause as NodeJS.ErrnoException).code ?? 'error';
    const detail = `cannot read the token file ${path} (${code})`;
    throw fail?.(detail, cause) ?? toolError('USAGE', [detail], { file: path, cause });
  }
  const token = text.split(/\r?\n/).map((line) => line.trim()).find((line) => line !== '');
  if (token === undefined) {
    const detail = `the token file ${path} is empty`;
    throw fail?.(detail, undefined) ?? toolError('USAGE', [detail], { file: path });
  }
  return token;
}

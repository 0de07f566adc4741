/**
 * Runs the CLI for tests: `ckql` in this process over in-memory streams (the
 * same `runCli` as the bin, without a process start per case), and
 * `ckqlProcess` / `startCkql` as the real bin built in `dist/` (built once by
 * `test/global-setup.ts`), for what only a process shows: exit statuses set
 * by the bin, signals, `serve`. Both get a private HOME so no config file of
 * the machine is found.
 */
import { spawn } from 'node:child_process';
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
/** The built bin; `test/global-setup.ts` builds `dist/` before any test file runs. */
export const binFile = join(repoRoot, 'dist', 'bin', 'ckql.js');

/** A home directory with nothing in it, shared by the tests of one file. */
export const emptyHome = mkdtempSync(join(tmpdir(), 'ckql-home-'));

export interface RunOptions {
  readonly cwd?: string;
  /** added to (or, with `undefined`, removed from) the clean environment */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** written to stdin, which is then closed; without it stdin is closed at once */
  readonly input?: string;
  /** in-process only: pretend stdout / stderr are terminals of this many columns */
  readonly tty?: { readonly stdin?: boolean; readonly stdout?: boolean; readonly stderr?: boolean; readonly columns?: number };
}

export interface RunResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

function environment(extra: RunOptions['env'] = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of ['NO_COLOR', 'FORCE_COLOR', 'CKQL_TOKEN', 'CKQL_CONFIG', 'XDG_CONFIG_HOME', 'XDG_STATE_HOME', 'CKQL_DEBUG']) {
    delete env[name];
  }
  env.HOME = emptyHome;
  // PGlite's start-up template stays in the real cache (src/engine/pglite/db.ts): a child with the empty HOME
  // would otherwise run initdb at every start, ~2 s of CPU, where the bin a person runs loads the template.
  env.XDG_CACHE_HOME = process.env['XDG_CACHE_HOME'] ?? join(homedir(), '.cache');
  for (const [name, value] of Object.entries(extra)) {
    if (value === undefined) delete env[name];
    else env[name] = value;
  }
  return env;
}

/** Starts the built bin; the caller reads and ends it. */
export function startCkql(args: readonly string[], options: RunOptions = {}): ChildProcessWithoutNullStreams {
  return spawn(process.execPath, [binFile, ...args], {
    cwd: options.cwd ?? repoRoot,
    env: environment(options.env),
    stdio: 'pipe',
  });
}

/** Runs the built bin to the end, as a child process. */
export function ckqlProcess(args: readonly string[], options: RunOptions = {}): Promise<RunResult> {
  const child = startCkql(args, options);
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  child.stdin.end(options.input ?? '');
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** Resolves with the first line of stdout that matches, or rejects when the process ends first. */
export function waitForLine(child: ChildProcessWithoutNullStreams, pattern: RegExp): Promise<RegExpExecArray> {
  return new Promise((resolve, reject) => {
    let buffered = '';
    let stderr = '';
    const onData = (chunk: Buffer): void => {
      buffered += chunk.toString('utf8');
      for (const line of buffered.split('\n')) {
        const match = pattern.exec(line);
        if (match !== null) {
          child.stdout.off('data', onData);
          resolve(match);
          return;
        }
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.once('close', (code) => reject(new Error(`ckql exited (${String(code)}) before printing ${pattern}: ${stderr}`)));
  });
}

/** Parses ndjson output. */
export function ndjson(text: string): unknown[] {
  return text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as unknown);
}

/**
 * Runs the CLI's `runCli` in this process over in-memory streams: the same
 * code path as the bin minus process start-up.
 */
export async function ckql(args: readonly string[], options: RunOptions = {}): Promise<RunResult> {
  const { runCli } = await import('../../src/cli/program.js');
  const { createContext } = await import('../../src/cli/context.js');
  const { PassThrough, Readable } = await import('node:stream');
  const capture = (isTTY = false): { stream: NodeJS.WriteStream; text: () => string } => {
    const stream = Object.assign(new PassThrough(), { isTTY, columns: options.tty?.columns ?? 80 });
    let text = '';
    stream.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
    return { stream: stream as unknown as NodeJS.WriteStream, text: () => text };
  };
  const stdout = capture(options.tty?.stdout);
  const stderr = capture(options.tty?.stderr);
  const context = createContext({
    stdin: (options.tty?.stdin === true
      ? Object.assign(Readable.from(options.input === undefined ? [] : [options.input]), { isTTY: true, setRawMode: () => undefined })
      : Readable.from(options.input === undefined ? [] : [options.input])) as unknown as NodeJS.ReadStream,
    stdout: stdout.stream,
    stderr: stderr.stream,
    env: environment(options.env),
    cwd: options.cwd ?? repoRoot,
  });
  const code = await runCli(args, context);
  await new Promise((resolve) => setImmediate(resolve));
  return { code, stdout: stdout.text(), stderr: stderr.text() };
}

/** The former name of `ckql`, kept for the tests that spell out that they run in process. */
export const ckqlInProcess = ckql;

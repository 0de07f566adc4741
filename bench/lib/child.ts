/**
 * Child processes for the HTTP and memory sections: the server under load
 * and the load generator must not share one event loop (or one heap, when
 * heap is what is measured).
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import path from 'node:path';
import { benchDir, rootDir } from './data.js';

export interface ChildOptions {
  readonly exposeGc?: boolean;
  readonly env?: Readonly<Record<string, string>>;
  /** node or V8 flags for the child (some, e.g. `--single-threaded-gc`, are refused in NODE_OPTIONS) */
  readonly nodeFlags?: readonly string[];
  /** `runChild`: kill the child after this many ms and fail with a `ChildTimeout` */
  readonly timeoutMs?: number;
}

/** A child `runChild` killed because it ran past its `timeoutMs`. */
export class ChildTimeout extends Error {}

/**
 * A child in TypeScript runs under the tsx loader; one in JavaScript
 * (`.mjs`, for a child whose memory is measured) without it, unless
 * CKQL_BENCH_SOURCE=src makes it import `src/`.
 */
function nodeArgs(script: string, args: readonly string[], options: ChildOptions): string[] {
  const tsx = script.endsWith('.ts') || process.env.CKQL_BENCH_SOURCE === 'src';
  return [...(options.exposeGc ? ['--expose-gc'] : []), ...(options.nodeFlags ?? []), ...(tsx ? ['--import', 'tsx'] : []), path.join(benchDir, 'children', script), ...args];
}

export interface RunningChild {
  /** the value of the child's `READY <value>` line (a URL) */
  readonly ready: string;
  readonly process: ChildProcess;
  stop(): Promise<void>;
}

/** Starts a long-running child and waits for it to print `READY <value>`. */
export function startChild(script: string, args: readonly string[], options: ChildOptions = {}): Promise<RunningChild> {
  const child = spawn(process.execPath, nodeArgs(script, args, options), {
    cwd: rootDir,
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, ...options.env },
  });
  return new Promise((resolve, reject) => {
    let buffered = '';
    const onData = (chunk: Buffer) => {
      buffered += chunk.toString('utf8');
      const match = /^READY (.+)$/m.exec(buffered);
      if (match) {
        child.stdout?.off('data', onData);
        child.stdout?.resume();
        resolve({
          ready: (match[1] as string).trim(),
          process: child,
          stop: () => new Promise<void>((done) => {
            if (child.exitCode !== null || child.signalCode !== null) return done();
            child.once('exit', () => done());
            child.kill('SIGTERM');
          }),
        });
      }
    };
    child.stdout?.on('data', onData);
    child.once('exit', (code, signal) => reject(new Error(`bench child ${script} exited (${code ?? signal}) before it was ready`)));
    child.once('error', reject);
  });
}

/** Runs a child to completion and returns the JSON it printed on its last stdout line. */
export function runChild<T>(script: string, args: readonly string[], options: ChildOptions = {}): Promise<T> {
  const child = spawn(process.execPath, nodeArgs(script, args, options), {
    cwd: rootDir,
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, ...options.env },
  });
  let out = '';
  child.stdout?.on('data', (chunk: Buffer) => { out += chunk.toString('utf8'); });
  let timedOut = false;
  const timer = options.timeoutMs === undefined ? undefined : setTimeout(() => { timedOut = true; child.kill('SIGKILL'); }, options.timeoutMs);
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => {
      clearTimeout(timer);
      if (timedOut) return reject(new ChildTimeout(`bench child ${script} ${args.join(' ')} ran past ${options.timeoutMs} ms and was stopped`));
      if (code !== 0) return reject(new Error(`bench child ${script} ${args.join(' ')} failed with exit code ${code}`));
      const last = out.trim().split('\n').pop() ?? '';
      try {
        resolve(JSON.parse(last) as T);
      } catch {
        reject(new Error(`bench child ${script} printed no JSON result: ${last.slice(0, 200)}`));
      }
    });
  });
}

/**
 * What a command needs from the process, gathered once in the entry point:
 * streams, environment, working directory and the colour decision, so
 * commands never read `process.*` themselves.
 */
import { useColor } from '../output/color.js';

/**
 * Wraps a command's action so that its result becomes the exit status;
 * carries the context every command reads.
 */
export interface CommandRun {
  <A extends unknown[]>(action: (...args: A) => Promise<number>): (...args: A) => Promise<void>;
  readonly context: CliContext;
}

export interface CliContext {
  readonly env: NodeJS.ProcessEnv;
  readonly cwd: string;
  readonly stdin: NodeJS.ReadStream;
  readonly stdout: NodeJS.WriteStream;
  readonly stderr: NodeJS.WriteStream;
  readonly color: { readonly stdout: boolean; readonly stderr: boolean };
  /** terminal columns of stdout; `Infinity` when it is not a terminal (nothing is cut) */
  readonly width: number;
  /** writes to stdout, waiting when the pipe is full */
  out(text: string): Promise<void>;
  /** writes a line (or lines) to stderr */
  err(text: string): void;
}

export interface ContextStreams {
  readonly stdin: NodeJS.ReadStream;
  readonly stdout: NodeJS.WriteStream;
  readonly stderr: NodeJS.WriteStream;
  readonly env: NodeJS.ProcessEnv;
  readonly cwd: string;
}

/**
 * A context over any streams (tests, embedding); colour and width follow the
 * streams and the environment as they would for a real terminal.
 * @example const context = createContext({ ...process, cwd: process.cwd() });
 */
export function createContext({ stdin, stdout, stderr, env, cwd }: ContextStreams): CliContext {
  return {
    env,
    cwd,
    stdin,
    stdout,
    stderr,
    color: { stdout: useColor(stdout, env), stderr: useColor(stderr, env) },
    width: stdout.isTTY === true ? stdout.columns : Infinity,
    out: (text) =>
      new Promise<void>((resolve, reject) => {
        if (text === '') return resolve();
        stdout.write(text, (error) => (error ? reject(error) : resolve()));
      }),
    err: (text) => void stderr.write(text.endsWith('\n') ? text : `${text}\n`),
  };
}

/** The context of this process. */
export function processContext(): CliContext {
  return createContext({ stdin: process.stdin, stdout: process.stdout, stderr: process.stderr, env: process.env, cwd: process.cwd() });
}

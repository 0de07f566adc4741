/**
 * What a command needs from the process, gathered once in the entry point:
 * streams, environment, working directory and the colour decision, so
 * commands never read `process.*` themselves.
 */
import { useColor } from './color.js';

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

/** The context of this process. */
export function processContext(): CliContext {
  const { stdout, stderr, stdin, env } = process;
  return {
    env,
    cwd: process.cwd(),
    stdin,
    stdout,
    stderr,
    color: { stdout: useColor(stdout, env), stderr: useColor(stderr, env) },
    width: stdout.isTTY ? stdout.columns : Infinity,
    out: (text) =>
      new Promise<void>((resolve, reject) => {
        if (text === '') return resolve();
        stdout.write(text, (error) => (error ? reject(error) : resolve()));
      }),
    err: (text) => void stderr.write(text.endsWith('\n') ? text : `${text}\n`),
  };
}

#!/usr/bin/env node
/**
 * The `ckql` bin. Decides colour before anything can load ink (chalk reads
 * `FORCE_COLOR` when it is imported and ignores `NO_COLOR`), runs the
 * command, and sets the exit status.
 */
import { processContext } from './context.js';
import { exitCodes } from './exit-codes.js';
import { runCli } from './program.js';
import { tierWasmLate } from './wasm-tiering.js';

// Before PGlite (or undici's llhttp) compiles: see wasm-tiering.ts.
tierWasmLate();

const context = processContext();
if (!context.color.stdout) process.env.FORCE_COLOR = '0';

// `ckql query … | head` closes the pipe early: that is the reader's choice, not an error.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(exitCodes.ok);
  throw error;
});

// A bug outside a command's own error path still ends with one short line, not a stack.
const crash = (error: unknown): never => {
  process.stderr.write(`ckql: unexpected error: ${error instanceof Error ? error.message : String(error)}\n`);
  if (error instanceof Error && context.env.CKQL_DEBUG) process.stderr.write(`${error.stack ?? ''}\n`);
  process.exit(exitCodes.data);
};
process.on('uncaughtException', crash);
process.on('unhandledRejection', crash);

try {
  process.exitCode = await runCli(process.argv.slice(2), context);
} catch (error) {
  // runCli reports every error itself; this only guards against a bug there.
  process.stderr.write(`ckql: unexpected error: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = exitCodes.data;
}
// Sockets or timers left open by a bug must not keep a finished command alive.
setTimeout(() => process.exit(), 2_000).unref();

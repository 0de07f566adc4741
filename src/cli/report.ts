/**
 * Every error a command ends with goes through here: rendered once on stderr
 * by `renderError` (a caret excerpt for query errors), and turned into the
 * exit status. Expected errors never show a stack trace; anything else is a
 * bug and prints one short line (the stack only with `CKQL_DEBUG=1`).
 */
import { renderError } from '../diagnostics.js';
import { DatastoreError, QueryError, ToolError } from '../errors.js';
import type { QueryOrigin } from '../config/types.js';
import { withParamHint as retellUnbound } from '../session/params.js';
import type { CliContext } from './context.js';
import { exitCodeFor, exitCodes } from './exit-codes.js';

const hints = new WeakMap<object, string>();
const origins = new WeakMap<object, QueryOrigin>();

/**
 * Gives an error one more line of advice for when it is reported (a "did you
 * mean" for an unknown field, found while the source was still open).
 */
export function attachHint<E extends object>(error: E, hint: string | undefined): E {
  if (hint !== undefined) hints.set(error, hint);
  return error;
}

/**
 * Marks an error of a query kept in a config file, so it is reported at the
 * file, the key and the line of the query there, not at a bare `2:7`.
 */
export function attachOrigin<E>(error: E, origin: QueryOrigin | undefined): E {
  if (origin !== undefined && typeof error === 'object' && error !== null) origins.set(error, origin);
  return error;
}

/**
 * `withParamHint` of the session, keeping the error's config-file origin.
 * @example throw withParamHint(error, (name) => `give it a value: --param ${name}=…`)
 */
export function withParamHint(error: unknown, hint: (name: string) => string): unknown {
  const retold = retellUnbound(error, hint);
  const origin = typeof error === 'object' && error !== null ? origins.get(error) : undefined;
  if (retold !== error && origin !== undefined && typeof retold === 'object' && retold !== null) origins.set(retold, origin);
  return retold;
}

/** Writes the error to stderr and returns the exit status. */
export function reportError(error: unknown, context: Pick<CliContext, 'err' | 'color' | 'env'>): number {
  const hint = typeof error === 'object' && error !== null ? hints.get(error) : undefined;
  if (error instanceof DatastoreError && error.code === 'ABORTED') {
    context.err('interrupted');
    return exitCodes.interrupted;
  }
  if (error instanceof QueryError || error instanceof DatastoreError || error instanceof ToolError) {
    const origin = origins.get(error);
    let text = renderError(error, { color: context.color.stderr, ...(origin === undefined ? {} : { origin }) }).replace(/\n+$/, '');
    if (hint !== undefined && !text.includes(hint)) text += `\n  = hint: ${hint}`;
    context.err(text);
    return exitCodeFor(error);
  }
  const message = error instanceof Error ? error.message : String(error);
  if (context.env.CKQL_DEBUG !== undefined && context.env.CKQL_DEBUG !== '' && error instanceof Error) {
    context.err(error.stack ?? message);
  }
  context.err(`ckql: unexpected error: ${message}\n(this is a bug in ckql; CKQL_DEBUG=1 shows where it happened)`);
  return exitCodes.data;
}

/**
 * Reports each data file a command skipped (a file that cannot be read, in a
 * folder of others that can): the error as any other is rendered, with
 * what became of the file. `count` says how many there were, for the exit
 * status of commands whose job is the files themselves.
 * @example
 * const bad = badFileReporter(context, 'the other files are served');
 * await loadResources(dir, { onBadFile: bad.report }); // error[DATA_INVALID]: …/bad.csv: … --> …/bad.csv:2 = skipped: the other files are served
 */
export function badFileReporter(
  context: Pick<CliContext, 'err' | 'color'>,
  outcome: string,
  /** whether a file is the one a one-shot command asks for: its failing is the command's error, not a skip */
  asked?: (file: string) => boolean,
): { report: (error: ToolError) => void; readonly count: number } {
  let count = 0;
  return {
    report: (error) => {
      if (asked !== undefined && error.file !== undefined && asked(error.file)) throw error;
      count += 1;
      context.err(`${renderError(error, { color: context.color.stderr }).replace(/\n+$/, '')}\n  = skipped: ${outcome}`);
    },
    get count() {
      return count;
    },
  };
}

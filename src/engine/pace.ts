/**
 * Long work in the process, interruptible (docs/executor.md, Streaming,
 * stopping, cancelling). A loop that grows with its input (a join, a fold,
 * a sort, a text cache) is written as steps: a generator that does a slice
 * of the work (a few thousand rows) and then yields. Run by `paced`, each
 * yield lets the event loop turn when it has been held for a few
 * milliseconds (a Ctrl-C, a keypress, a timer is seen) and looks at the
 * signal; run by `runSteps`, the same steps go on to their end with no
 * pause (a synchronous caller, such as `evaluate`). One path either way.
 * Nothing here is Node's: it runs in a browser worker as well.
 */
import { DatastoreError } from '../errors.js';

/** Work that yields between its slices and returns `T` at its end. */
export type Steps<T> = Generator<void, T, undefined>;

/** Rows a slice of steps handles between two yields: small enough that a slice takes well under a millisecond. */
export const SLICE = 4096;

/** The steps to their end, with no pause. */
export function runSteps<T>(steps: Steps<T>): T {
  for (;;) {
    const step = steps.next();
    if (step.done === true) return step.value;
  }
}

/**
 * The steps to their end, breathing at each yield (`breathe`): an aborted
 * signal stops them at their next yield with `ABORTED`.
 * @example
 * const rows = await paced(joinSteps(…), signal);
 */
export async function paced<T>(steps: Steps<T>, signal: AbortSignal | undefined): Promise<T> {
  try {
    for (;;) {
      const step = steps.next();
      if (step.done === true) return step.value;
      const turn = due();
      if (turn !== undefined) await turn;
      if (signal?.aborted === true) throw abortedBy(signal);
    }
  } finally {
    // Stopped early: the generator's own `finally` (if any) runs.
    steps.return(undefined as never);
  }
}

/**
 * Lets the event loop run when work has held it for a few milliseconds
 * (batches handed on through async generators only ever wait on promises,
 * so without this a local answer would be read to its end before a SIGINT
 * is even seen), then throws `ABORTED` when the signal was aborted.
 */
export async function breathe(signal: AbortSignal | undefined): Promise<void> {
  const turn = due();
  if (turn !== undefined) await turn;
  if (signal?.aborted === true) throw abortedBy(signal);
}

/** The error of cancelled work: the signal's reason when it is ckql's `ABORTED`, else an `ABORTED` that carries it. */
export function abortedBy(signal: AbortSignal): DatastoreError {
  const reason: unknown = signal.reason;
  if (reason instanceof DatastoreError && reason.code === 'ABORTED') return reason;
  return new DatastoreError('ABORTED', 'the query was cancelled', { cause: reason });
}

/** How long work may hold the event loop between two turns of it. */
const BREATH_MS = 8;
let lastBreath = 0;

/** A turn of the event loop when one is due (the clock is read, nothing more, when not). */
function due(): Promise<void> | undefined {
  const now = performance.now();
  if (now - lastBreath < BREATH_MS) return undefined;
  lastBreath = now;
  return new Promise<void>((resolve) => nextTurn(resolve));
}

/** After the events waiting now (I/O and signals included): `setImmediate` in Node, a timer elsewhere. */
const nextTurn: (run: () => void) => void =
  typeof globalThis.setImmediate === 'function' ? (run) => globalThis.setImmediate(run) : (run) => globalThis.setTimeout(run, 0);

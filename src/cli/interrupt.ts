/**
 * Ctrl-C during a query: the first SIGINT aborts the running request through
 * its AbortSignal (the client lands it at once, even during a retry wait) and
 * the command exits 130; a second SIGINT exits at once, in case something
 * does not listen to the signal.
 */
import { DatastoreError } from '../errors.js';
import { exitCodes } from './exit-codes.js';

/**
 * Runs `work` with a signal that SIGINT aborts. When the signal was aborted,
 * whatever `work` fails with becomes a `DatastoreError` `ABORTED` (exit 130).
 * @example
 * const result = await interruptible((signal) => client.search(request, { signal }));
 */
export async function interruptible<T>(work: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const controller = new AbortController();
  const onSigint = (): void => {
    if (controller.signal.aborted) process.exit(exitCodes.interrupted);
    controller.abort(new DatastoreError('ABORTED', 'interrupted'));
  };
  process.on('SIGINT', onSigint);
  // The work stops at its next look at the signal; the command does not wait for it to look
  // (a write waiting for a full pipe to drain would never look).
  let stop: (reason: unknown) => void = () => undefined;
  const aborted = new Promise<never>((_, reject) => (stop = reject));
  const onAbort = (): void => stop(controller.signal.reason);
  controller.signal.addEventListener('abort', onAbort, { once: true });
  try {
    const running = work(controller.signal);
    // Its own failure after an abort is already answered by the abort.
    running.catch(() => undefined);
    return await Promise.race([running, aborted]);
  } catch (error) {
    if (controller.signal.aborted) {
      throw error instanceof DatastoreError && error.code === 'ABORTED'
        ? error
        : new DatastoreError('ABORTED', 'interrupted', { cause: error });
    }
    throw error;
  } finally {
    process.off('SIGINT', onSigint);
    controller.signal.removeEventListener('abort', onAbort);
  }
}

/**
 * A server command's end: resolves at the first SIGINT or SIGTERM, listening
 * from this call on. Call it before printing the line that says the server
 * is ready, so a script that stops it on that line sees exit 0, not a death
 * by the signal.
 * @example
 * const stopped = untilStopped();
 * await context.out(`listening on ${server.url}\n`);
 * await stopped;
 */
export function untilStopped(): Promise<void> {
  return new Promise<void>((resolve) => {
    const stop = (): void => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
}

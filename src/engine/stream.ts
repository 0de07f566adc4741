/**
 * Streams of record batches are async generators that hold something (a
 * cursor's transaction, a portal's next page) until they end. A generator
 * that was never started skips its `finally` on `return()`, so a reader that
 * gives up before its first batch would leave that held: `closing` makes
 * `return()` release it in that case too.
 */

/**
 * `generator`, whose `return()` calls `release` when it was never started
 * (once started, its own `finally` does the releasing).
 * @example
 * const batches = closing(pages(), () => cursor.close());
 * await batches.return(undefined); // closes the cursor though no page was read
 */
export function closing<T>(generator: AsyncGenerator<T, void, undefined>, release: () => Promise<unknown>): AsyncGenerator<T, void, undefined> {
  let started = false;
  let released = false;
  const wrapped: AsyncGenerator<T, void, undefined> = {
    next: (...args) => {
      started = true;
      return generator.next(...args);
    },
    return: async (value) => {
      if (!started && !released) {
        released = true;
        await release();
      }
      return generator.return(value);
    },
    throw: (error) => generator.throw(error),
    [Symbol.asyncIterator]() {
      return wrapped;
    },
  };
  return wrapped;
}

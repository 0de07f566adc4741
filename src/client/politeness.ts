/**
 * How many requests a client keeps in flight to one host: at most 3 by
 * default, as ckanapi limits its parallel CLI workers for any site that is
 * not the user's own (docs/portals-reference.md §2.2). The
 * limit is per host, shared by every client of this process that talks to
 * it with the same limit (a REPL's language clients, an export beside a
 * completion lookup), and a request waiting for its turn can be cancelled.
 */
import { DatastoreError } from '../errors.js';
import type { Exchanger, StreamExchanger } from './types.js';

/** Requests in flight per host unless a profile says otherwise (`max_in_flight:`). */
export const DEFAULT_MAX_IN_FLIGHT = 3;

/** A counting semaphore: `acquire` resolves when a slot is free and gives the function that frees it. */
export interface HostLimiter {
  readonly max: number;
  /** requests holding a slot now */
  readonly active: number;
  /** requests waiting for a slot */
  readonly waiting: number;
  acquire(signal: AbortSignal | undefined): Promise<() => void>;
}

const limiters = new Map<string, HostLimiter>();

/**
 * The limiter of one host (`https://host:port`) at one limit, made once per process.
 * @example
 * const limiter = hostLimiter('https://data.example.org', 3);
 * const release = await limiter.acquire(undefined);
 * try { … } finally { release(); }
 */
export function hostLimiter(origin: string, max: number): HostLimiter {
  const slots = Math.max(1, Math.floor(max));
  const key = `${origin} ${slots}`;
  let limiter = limiters.get(key);
  if (limiter === undefined) {
    limiter = createLimiter(slots, origin);
    limiters.set(key, limiter);
  }
  return limiter;
}

function createLimiter(max: number, origin: string): HostLimiter {
  let active = 0;
  const queue: { grant: () => void }[] = [];
  const release = (): void => {
    const next = queue.shift();
    if (next === undefined) active--;
    else next.grant();
  };
  const once = (): (() => void) => {
    let done = false;
    return () => {
      if (done) return;
      done = true;
      release();
    };
  };
  return {
    max,
    get active() {
      return active;
    },
    get waiting() {
      return queue.length;
    },
    acquire: (signal) => {
      if (signal?.aborted === true) return Promise.reject(cancelled(origin, signal.reason));
      if (active < max) {
        active++;
        return Promise.resolve(once());
      }
      return new Promise((resolve, reject) => {
        const entry = {
          grant: () => {
            signal?.removeEventListener('abort', onAbort);
            resolve(once());
          },
        };
        const onAbort = (): void => {
          const at = queue.indexOf(entry);
          if (at >= 0) queue.splice(at, 1);
          reject(cancelled(origin, signal?.reason));
        };
        signal?.addEventListener('abort', onAbort, { once: true });
        queue.push(entry);
      });
    },
  };
}

function cancelled(origin: string, reason: unknown): DatastoreError {
  return new DatastoreError('ABORTED', `the request to ${origin} was cancelled`, reason === undefined ? {} : { cause: reason });
}

/** An exchanger that waits for a slot of `limiter` and holds it until the answer is read. */
export function limitExchange(exchange: Exchanger, limiter: HostLimiter): Exchanger {
  return async (wire, signal) => {
    const release = await limiter.acquire(signal);
    try {
      return await exchange(wire, signal);
    } finally {
      release();
    }
  };
}

/** A streaming exchanger that holds its slot until the body has been read to its end, or cancelled. */
export function limitStream(stream: StreamExchanger, limiter: HostLimiter): StreamExchanger {
  return async (wire, signal) => {
    const release = await limiter.acquire(signal);
    let answer;
    try {
      answer = await stream(wire, signal);
    } catch (error) {
      release();
      throw error;
    }
    const { body, cancel } = answer;
    return {
      ...answer,
      body: (async function* () {
        try {
          yield* body;
        } finally {
          release();
        }
      })(),
      cancel: () => {
        release();
        cancel();
      },
    };
  };
}

/**
 * PGlite in a worker thread as a `Db` (`openPglite`). PGlite's PostgreSQL
 * cannot stop a statement once it runs (its WebAssembly neither yields nor
 * sees a timer or a signal), so in the caller's thread one long
 * `datastore_search_sql` would stop a whole `ckql serve`. In its own thread
 * (pglite-worker.ts) a statement stops only that thread, and a statement
 * past its `statementTimeout`, or whose signal aborts, ends the thread: it
 * fails as PostgreSQL's would (SQLSTATE 57014), and the database is opened
 * again for the next transaction.
 *
 * Opened again from where it lives: a kept directory holds every committed
 * transaction; a database in memory is kept as a tar of its data directory,
 * taken before the first statement that may be stopped after anything
 * wrote to it (a load), so the tables loaded are there after a restart.
 */
import { Worker } from 'node:worker_threads';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { toolError } from '../../errors.js';
import { fileURLToPath } from 'node:url';
import type { Db, PgError, SqlRows, SqlSession, TransactionOptions } from '../sql/db.js';
import { SQLSTATE } from '../sql/db.js';
import type { PgliteHome } from './db.js';
import type { ThreadReply, ThreadRequest } from './pglite-worker.js';

/** One started thread: requests answered one at a time. */
interface Thread {
  /** sends one request; rejects with the thread's error, or when the thread ends first */
  call(request: ThreadRequest): Promise<unknown>;
  /** ends the thread at once, whatever it runs */
  stop(): Promise<void>;
  /** false once the thread has ended (stopped, or crashed: out of memory) */
  alive(): boolean;
}

/** PostgreSQL's error for a cancelled statement, as a server sends it. */
function queryCanceled(message: string, cause?: unknown): PgError {
  return Object.assign(new Error(message, cause === undefined ? {} : { cause }), { code: SQLSTATE.queryCanceled, severity: 'ERROR' });
}

const cancelledByUser = (signal: AbortSignal): PgError => queryCanceled('canceling statement due to user request', signal.reason);

/** Options of `openPglite`. */
export interface OpenPgliteOptions {
  /**
   * Threads that answer: one holds the database and runs every transaction
   * that writes; the others answer read-only transactions from a copy of it
   * (so one long statement holds up only the thread it runs on). Default 1.
   */
  readonly threads?: number;
}

/** `openPglite`'s database: a `Db`, and a way to have its threads ready before the first search. */
export interface PgliteThreads extends Db {
  /**
   * Takes the image a stopped statement's thread starts again from, and
   * starts the readers from it, now (after a load) rather than at the
   * first search that needs them.
   */
  settle(): Promise<void>;
}

/** One thread of the pool and what it holds. */
interface Slot {
  readonly primary: boolean;
  thread: Promise<Thread>;
  busy: boolean;
  /** a reader: how many writing transactions its copy holds (-1: none yet) */
  holds: number;
}

/** A transaction waiting for a thread. */
interface Waiting {
  readonly write: boolean;
  /** it may be stopped (a timeout, a signal): in memory, the primary then needs an image to start again from */
  readonly stoppable: boolean;
  readonly run: (slot: Slot) => void;
  readonly give: (error: unknown) => void;
}

/** Set by the tests only (`lendInMemoryPglite`); the bin and the library never set it. */
let lentInMemory: (() => Promise<Db>) | undefined;

/**
 * Test-only: where `openPglite()` without a folder, in one thread, gets its
 * database. The tests' per-worker pool (test/helpers/pglite-pool.ts,
 * installed by test/setup-pglite.ts) lends an emptied instance that holds
 * what a fresh one holds, in the test's own thread, instead of a thread and
 * a start that cost more than half a second of CPU; `undefined` starts
 * fresh ones again. Threads of their own (a statement timeout that stops a
 * statement, `ckql serve`'s two threads) are tested where they are asked for.
 * @example lendInMemoryPglite(borrowPgliteDb);
 */
export function lendInMemoryPglite(lend: (() => Promise<Db>) | undefined): void {
  lentInMemory = lend;
}

/**
 * A folder PGlite would write its database into must be one already (it holds `PG_VERSION`), empty, or
 * missing: a folder of other files (a project's, after `--db ''` or a mistyped path) is refused, or PGlite
 * would scatter a cluster's files among them.
 */
async function refuseForeignFolder(dataDir: string): Promise<void> {
  if (dataDir.trim() === '') throw toolError('USAGE', ['the PGlite database folder is empty text'], { hint: 'name a folder: --db ./ckql-db (created when missing), or a postgres:// URL' });
  let entries: string[];
  try {
    entries = await readdir(dataDir);
  } catch {
    return; // missing (PGlite creates it), or not a folder (PGlite says so)
  }
  if (entries.length === 0 || entries.includes('PG_VERSION')) return;
  throw toolError('USAGE', [`${dataDir} is a folder of other files, not a PGlite database (it has no PG_VERSION)`], {
    hint: `name a new or empty folder for the database, e.g. ${join(dataDir, 'ckql-db')}`,
  });
}

/**
 * Opens PGlite in its own thread (or threads): a fresh database in memory,
 * or the one kept in `dataDir` (created when missing).
 * @example
 * const db = await openPglite();            // in memory, gone at close
 * const kept = await openPglite('./ckql-db'); // kept between runs
 * await db.transaction((tx) => tx.query('SELECT 1 AS n'), { readOnly: true, statementTimeout: 1_000 });
 */
export async function openPglite(dataDir?: string, options: OpenPgliteOptions = {}): Promise<PgliteThreads> {
  if (dataDir !== undefined) await refuseForeignFolder(dataDir);
  if (dataDir === undefined && (options.threads ?? 1) === 1 && lentInMemory !== undefined) {
    return Object.assign(await lentInMemory(), { settle: () => Promise.resolve() });
  }
  const primary: Slot = { primary: true, thread: startThread(dataDir === undefined ? {} : { dataDir }), busy: false, holds: 0 };
  await primary.thread;
  // The readers start from an image when a read first needs them.
  const readers: Slot[] = Array.from({ length: Math.max(1, Math.floor(options.threads ?? 1)) - 1 }, () => {
    const reader: Slot = { primary: false, thread: Promise.reject(new Error('not started')), busy: false, holds: -1 };
    reader.thread.catch(() => undefined);
    return reader;
  });
  // Writing transactions begun, and how many of them the image holds.
  let written = 0;
  let image: { readonly tar: ArrayBuffer; readonly holds: number } | undefined;
  const queue: Waiting[] = [];
  let closed = false;

  const imageIsCurrent = (): boolean => image !== undefined && image.holds === written;
  /** Starts `slot`'s thread again: the primary on its directory (or, in memory, the image), a reader on the image. */
  const restart = (slot: Slot): void => {
    const stopped = slot.thread;
    void stopped.then((thread) => thread.stop(), () => undefined);
    slot.thread = startThread(slot.primary && dataDir !== undefined ? { dataDir } : image === undefined ? {} : { image: image.tar });
    slot.thread.catch(() => undefined);
    if (!slot.primary) slot.holds = image?.holds ?? -1;
  };
  /** Holds `slot` while `work` runs, then hands the threads out again. */
  const hold = (slot: Slot, work: () => Promise<void>): void => {
    slot.busy = true;
    void work().finally(() => {
      slot.busy = false;
      dispatch();
    });
  };

  /** Gives each waiting transaction, in order, a free thread that can answer it. */
  const dispatch = (): void => {
    for (let i = 0; i < queue.length; i++) {
      const job = queue[i] as Waiting;
      // Stopping a statement on the primary of a database in memory starts it again from the image: it must hold every
      // write. The readers answer from the image too.
      const onPrimary = !job.stoppable || dataDir !== undefined || imageIsCurrent();
      if (!imageIsCurrent() && (!onPrimary || (!job.write && readers.length > 0))) {
        // The primary takes the image when it is free.
        if (!primary.busy) {
          hold(primary, async () => {
            const holds = written;
            try {
              image = { tar: (await (await primary.thread).call({ op: 'dump' })) as ArrayBuffer, holds };
            } catch (error) {
              const at = queue.indexOf(job);
              if (at !== -1) queue.splice(at, 1)[0]?.give(error);
            }
          });
        }
        return;
      }
      if (!job.write) {
        for (const stale of readers.filter((r) => !r.busy && r.holds !== written)) {
          hold(stale, async () => {
            restart(stale);
            // A reader that cannot start (out of memory) is left out; the others answer.
            await stale.thread.catch(() => readers.splice(readers.indexOf(stale), 1));
          });
        }
      }
      let slot = job.write ? undefined : readers.find((r) => !r.busy && r.holds === written);
      if (slot === undefined && !primary.busy) slot = primary;
      if (slot === undefined) continue;
      queue.splice(i, 1);
      i--;
      slot.busy = true;
      job.run(slot);
    }
  };

  /** Runs one transaction on `slot`'s thread; a statement past its time, or whose signal aborts, ends the thread. */
  const runOn = async <T>(slot: Slot, work: (tx: SqlSession) => Promise<T>, txOptions: TransactionOptions): Promise<T> => {
    const { signal, statementTimeout } = txOptions;
    // A thread that ended on its own (WebAssembly out of memory) is started again, when what it held can be:
    // a database in memory that changed since its image cannot, and says that its thread ended.
    if (!(await slot.thread).alive() && (!slot.primary || dataDir !== undefined || imageIsCurrent())) restart(slot);
    const thread = await slot.thread;
    await thread.call({ op: 'begin', readOnly: txOptions.readOnly === true });
    const statement = (request: ThreadRequest): Promise<unknown> => {
      if (statementTimeout === undefined && signal === undefined) return thread.call(request);
      if (signal?.aborted === true) return Promise.reject(cancelledByUser(signal));
      return new Promise((resolve, reject) => {
        // Past the timeout the thread is ended. A client that goes away has its answer refused at once, but the
        // statement keeps its thread until it ends or its time is up: ending a thread costs a start, and a client
        // could ask for that as often as it likes.
        const onTimeout = (): void => {
          finish();
          restart(slot);
          reject(queryCanceled('canceling statement due to statement timeout'));
        };
        const onAbort = (): void => {
          signal?.removeEventListener('abort', onAbort);
          if (timer === undefined) {
            finish();
            restart(slot);
          }
          reject(cancelledByUser(signal as AbortSignal));
        };
        const timer = statementTimeout === undefined ? undefined : setTimeout(onTimeout, statementTimeout);
        const finish = (): void => {
          clearTimeout(timer);
          signal?.removeEventListener('abort', onAbort);
        };
        signal?.addEventListener('abort', onAbort, { once: true });
        thread.call(request).then((value) => {
          finish();
          resolve(value);
        }, (error: unknown) => {
          finish();
          reject(error);
        });
      });
    };
    const session: SqlSession = {
      query: async (sql, params = []) => (await statement({ op: 'query', sql, params: [...params] })) as SqlRows,
      copyFrom: async (sql, csv) => {
        await statement({ op: 'copy', sql, csv });
      },
    };
    let value: T;
    try {
      value = await work(session);
    } catch (error) {
      await thread.call({ op: 'end', commit: false }).catch(() => undefined);
      throw error;
    }
    await thread.call({ op: 'end', commit: true });
    return value;
  };

  const transaction = <T>(work: (tx: SqlSession) => Promise<T>, txOptions: TransactionOptions = {}): Promise<T> => {
    const { signal, statementTimeout } = txOptions;
    if (signal?.aborted === true) return Promise.reject(cancelledByUser(signal));
    if (closed) return Promise.reject(new Error('the PGlite database is closed'));
    return new Promise<T>((resolve, reject) => {
      const onAbort = (): void => {
        // A transaction still waiting for a thread is given up at once.
        const at = queue.indexOf(job);
        if (at === -1) return;
        queue.splice(at, 1);
        reject(cancelledByUser(signal as AbortSignal));
      };
      const job: Waiting = {
        write: txOptions.readOnly !== true,
        stoppable: statementTimeout !== undefined || signal !== undefined,
        give: (error) => {
          signal?.removeEventListener('abort', onAbort);
          reject(error);
        },
        run: (slot) => {
          signal?.removeEventListener('abort', onAbort);
          if (job.write) written++;
          runOn(slot, work, txOptions).then(resolve, reject).finally(() => {
            slot.busy = false;
            dispatch();
          });
        },
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      queue.push(job);
      dispatch();
    });
  };

  return {
    kind: 'pglite',
    transaction,
    settle: async () => {
      await transaction(async () => undefined, { readOnly: true, statementTimeout: 2 ** 31 - 1 });
      await Promise.all(readers.map((reader) => reader.thread.catch(() => undefined)));
    },
    close: async () => {
      if (closed) return;
      closed = true;
      for (const job of queue.splice(0)) job.give(new Error('the PGlite database is closed'));
      await Promise.all([primary, ...readers].map(async (slot) => {
        const thread = await slot.thread.catch(() => undefined);
        if (thread === undefined) return;
        await thread.call({ op: 'close' }).catch(() => undefined);
        await thread.stop();
      }));
    },
  };
}

/** Starts pglite-worker.ts on `home`; resolves when its database is open. */
async function startThread(home: PgliteHome): Promise<Thread> {
  const worker = new Worker(await workerScript(), { workerData: home });
  // The thread keeps the process alive only while it has a request to answer.
  worker.unref();
  let pending: { resolve: (value: unknown) => void; reject: (error: unknown) => void } | undefined;
  let ended: Error | undefined;
  const settle = (reply: ThreadReply): void => {
    const waiter = pending;
    pending = undefined;
    worker.unref();
    if (waiter === undefined) return;
    if (reply.ok) waiter.resolve(reply.value);
    else waiter.reject(Object.assign(new Error(reply.error.message), reply.error.fields));
  };
  const end = (error: Error): void => {
    ended ??= error;
    const waiter = pending;
    pending = undefined;
    waiter?.reject(ended);
  };
  worker.on('message', settle);
  worker.on('error', (error) => end(error));
  worker.on('exit', (code) => end(new Error(`PGlite's thread ended (exit code ${code})`)));
  // A request waits for the answer to the one before it (a statement whose client went away still runs).
  let last: Promise<unknown> = Promise.resolve();
  const call = (request: ThreadRequest): Promise<unknown> => {
    const answered = last.catch(() => undefined).then(() => {
      if (ended !== undefined) throw ended;
      return new Promise((resolve, reject) => {
        pending = { resolve, reject };
        worker.ref();
        worker.postMessage(request);
      });
    });
    last = answered;
    return answered;
  };
  const ready = new Promise<unknown>((resolve, reject) => {
    pending = { resolve, reject };
    worker.ref();
  });
  const thread: Thread = {
    call,
    alive: () => ended === undefined,
    stop: async () => {
      end(new Error("PGlite's thread was stopped"));
      await worker.terminate();
    },
  };
  try {
    await ready;
  } catch (error) {
    await worker.terminate();
    throw error;
  }
  return thread;
}

let script: Promise<URL> | undefined;

/**
 * The thread's entry: pglite-worker.js beside this module (the tsc build,
 * and the bundles, where it is an entry point of its own). Run from
 * `src/` through a TypeScript loader (the tests, `tsx`), a worker thread
 * has no loader, so the entry is bundled here once, in memory, with the
 * packages it imports named by their absolute URLs.
 */
function workerScript(): Promise<URL> {
  script ??= (async () => {
    if (!import.meta.url.endsWith('.ts')) return new URL('./pglite-worker.js', import.meta.url);
    const { build } = await import('esbuild');
    const bundled = await build({
      entryPoints: [fileURLToPath(new URL('./pglite-worker.ts', import.meta.url))],
      bundle: true,
      write: false,
      format: 'esm',
      platform: 'node',
      target: 'node20',
      logLevel: 'silent',
      plugins: [{
        name: 'absolute-packages',
        setup(on) {
          // A data: module resolves no package name, neither in an import nor by import.meta.resolve (db.ts's template file).
          on.onResolve({ filter: /^[^./]/ }, (args) => ({ path: args.path.startsWith('node:') ? args.path : import.meta.resolve(args.path), external: true }));
          on.onLoad({ filter: /\.ts$/ }, async (args) => ({
            loader: 'ts',
            contents: (await readFile(args.path, 'utf8')).replace(/import\.meta\.resolve\('([^']+)'\)/g, (_, name: string) => JSON.stringify(import.meta.resolve(name))),
          }));
        },
      }],
    });
    const code = bundled.outputFiles[0]?.text ?? '';
    return new URL(`data:text/javascript;base64,${Buffer.from(code).toString('base64')}`);
  })();
  return script;
}

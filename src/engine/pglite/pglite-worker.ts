/**
 * The thread PGlite runs in (`openPglite`, thread-db.ts): PostgreSQL's
 * WebAssembly runs a statement to its end without yielding, so in the
 * server's thread one long statement would stop every other request. Here
 * it stops only this thread, which the other side may terminate.
 *
 * The protocol is one request at a time, each answered once: `begin`, then
 * the transaction's `query`/`copy` statements, then `end` (commit or roll
 * back); `dump` (the data directory as a tar) and `close` between
 * transactions.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { SqlSession } from '../sql/db.js';
import { assertNever } from '../../ast.js';
import type { PgliteHome } from './db.js';
import { pgliteDb, startTextPgliteAt } from './db.js';

/** What the other side asks. */
export type ThreadRequest =
  | { readonly op: 'begin'; readonly readOnly: boolean }
  | { readonly op: 'query'; readonly sql: string; readonly params: readonly unknown[] }
  | { readonly op: 'copy'; readonly sql: string; readonly csv: string }
  | { readonly op: 'end'; readonly commit: boolean }
  | { readonly op: 'dump' }
  | { readonly op: 'close' };

/** An error's message and its own plain fields (PostgreSQL's `code`, `detail`, `position`…), as they cross the thread. */
export interface ThreadError {
  readonly message: string;
  readonly fields: Readonly<Record<string, string | number | boolean>>;
}

/** The answer to one request, or to the start (`ready`). */
export type ThreadReply = { readonly ok: true; readonly value?: unknown } | { readonly ok: false; readonly error: ThreadError };

/** Options the thread starts with. */
export type ThreadData = PgliteHome;

/** The error as plain data: its message and its own fields that are strings, numbers or booleans. */
function threadError(error: unknown): ThreadError {
  if (!(error instanceof Error)) return { message: String(error), fields: {} };
  const fields: Record<string, string | number | boolean> = {};
  for (const [key, value] of Object.entries(error)) {
    if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') fields[key] = value;
  }
  return { message: error.message, fields };
}

const port = parentPort;
if (port === null) throw new Error('pglite-worker.ts runs as a worker thread (openPglite starts it)');

const inbox: ThreadRequest[] = [];
let waiting: ((request: ThreadRequest) => void) | undefined;
port.on('message', (request: ThreadRequest) => {
  if (waiting === undefined) inbox.push(request);
  else {
    const take = waiting;
    waiting = undefined;
    take(request);
  }
});
const next = (): Promise<ThreadRequest> => {
  const queued = inbox.shift();
  return queued === undefined ? new Promise((resolve) => (waiting = resolve)) : Promise.resolve(queued);
};
const reply = (answer: ThreadReply, transfer: ArrayBuffer[] = []): void => port.postMessage(answer, transfer);
const fail = (error: unknown): void => reply({ ok: false, error: threadError(error) });

/** Thrown out of a transaction the other side ends without committing. */
const ROLL_BACK = Symbol('roll back');

async function serve(): Promise<void> {
  let pg;
  try {
    pg = await startTextPgliteAt(workerData as ThreadData);
  } catch (error) {
    fail(error);
    return;
  }
  const db = pgliteDb(pg);
  reply({ ok: true });
  for (;;) {
    const request = await next();
    switch (request.op) {
      case 'begin': {
        try {
          await db.transaction(async (tx) => {
            reply({ ok: true });
            for (;;) {
              const statement = await next();
              if (statement.op === 'end') {
                if (statement.commit) return;
                throw ROLL_BACK;
              }
              await answer(tx, statement);
            }
          }, { readOnly: request.readOnly });
          reply({ ok: true });
        } catch (error) {
          if (error === ROLL_BACK) reply({ ok: true });
          else fail(error);
        }
        break;
      }
      case 'dump': {
        try {
          const tar = await (await pg.dumpDataDir('none')).arrayBuffer();
          reply({ ok: true, value: tar }, [tar]);
        } catch (error) {
          fail(error);
        }
        break;
      }
      case 'close': {
        await pg.close().catch(() => undefined);
        reply({ ok: true });
        port?.close();
        return;
      }
      case 'query':
      case 'copy':
      case 'end':
        fail(new Error(`pglite-worker: ${request.op} outside a transaction`));
        break;
      default:
        assertNever(request, 'request');
    }
  }
}

/** One statement of a transaction; its error is answered and the transaction goes on (PostgreSQL then refuses what follows). */
async function answer(tx: SqlSession, statement: ThreadRequest): Promise<void> {
  try {
    switch (statement.op) {
      case 'query': {
        const rows = await tx.query(statement.sql, statement.params);
        reply({ ok: true, value: { rows: rows.rows, fields: rows.fields.map((f) => ({ name: f.name, dataTypeID: f.dataTypeID })) } });
        return;
      }
      case 'copy':
        await tx.copyFrom(statement.sql, statement.csv);
        reply({ ok: true });
        return;
      default:
        fail(new Error(`pglite-worker: ${statement.op} inside a transaction`));
    }
  } catch (error) {
    fail(error);
  }
}

void serve();

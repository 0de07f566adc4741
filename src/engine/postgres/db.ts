/**
 * A PostgreSQL server (`pg`) as a `Db`: a pool of connections, values read
 * as PostgreSQL's text, `COPY … FROM STDIN` over the wire protocol, and an
 * aborted signal cancelling the running statement on the server
 * (`pg_cancel_backend` from another connection of the pool).
 *
 * Credentials come from the URL or the `PG*` environment variables (as
 * `libpq` reads them); they are never part of an error message.
 */
import pg from 'pg';
import { DatastoreError } from '../../errors.js';
import type { Db, SqlRows, SqlSession } from '../sql/db.js';

/** Every value as text: the SQL engine converts what it reads, as with PGlite. */
const TEXT_TYPES = { getTypeParser: () => (text: string) => text };

/**
 * Options of `openPostgres`.
 * @example
 * await openPostgres({ url: 'postgres://ckan:…@db.example.org/datastore', max: 4 });
 */
export interface PostgresOptions {
  /** `postgres://user:password@host:port/database?sslmode=…`; unset parts come from `PG*` variables */
  readonly url?: string;
  /** connections in the pool; default 10 */
  readonly max?: number;
  /** ms to wait for a connection; default 10 000 */
  readonly connectTimeout?: number;
}

/**
 * A URL with its password masked, for messages and `.engine`.
 * @example redactUrl('postgres://ckan:secret@db/ds') // → 'postgres://ckan:***@db/ds'
 */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password !== '') parsed.password = '***';
    for (const key of [...parsed.searchParams.keys()]) if (/pass/i.test(key)) parsed.searchParams.set(key, '***');
    return parsed.toString();
  } catch {
    return '(a connection string that is not a URL)';
  }
}

/**
 * A connection failure as the CLI shows it, where and why, without credentials: the server refusing the
 * credentials (a wrong password, a role that may not log in) is `FORBIDDEN` (exit 5, the fix is a credential),
 * anything else `CONNECTION_FAILED` (exit 4).
 */
function connectionFailed(where: string, error: unknown): DatastoreError {
  const code = typeof (error as { code?: unknown }).code === 'string' ? (error as { code: string }).code : '';
  if (code === '28P01' || code === '28000') {
    const why = code === '28P01' ? 'the password was refused (PGPASSWORD, or the password in the URL)' : 'the role may not connect (it lacks LOGIN, or pg_hba.conf refuses it)';
    return new DatastoreError('FORBIDDEN', `PostgreSQL at ${where} refused the connection: ${why}`, { status: undefined, cause: error });
  }
  const reason = code === '3D000' ? 'the database does not exist'
    : code === 'ECONNREFUSED' ? 'nothing listens there'
    : code === 'ENOTFOUND' ? 'the host name is not known'
    : code === 'ETIMEDOUT' || /timeout/i.test(String((error as Error).message)) ? 'it did not answer in time'
    : (error instanceof Error ? error.message : String(error)).replace(/postgres(ql)?:\/\/\S+/g, '(url)');
  return new DatastoreError('CONNECTION_FAILED', `cannot connect to PostgreSQL at ${where}: ${reason}`, { cause: error });
}

/**
 * Opens a pool and checks that one connection works.
 * @example
 * const db = await openPostgres({ url: process.env.CKQL_TEST_PG_URL });
 */
export async function openPostgres(options: PostgresOptions = {}): Promise<Db & { readonly where: string }> {
  const where = options.url === undefined
    ? `${process.env['PGHOST'] ?? 'localhost'}:${process.env['PGPORT'] ?? '5432'}/${process.env['PGDATABASE'] ?? process.env['PGUSER'] ?? ''}`
    : redactUrl(options.url);
  const pool = new pg.Pool({
    ...(options.url === undefined ? {} : { connectionString: options.url }),
    max: options.max ?? 10,
    connectionTimeoutMillis: options.connectTimeout ?? 10_000,
    types: TEXT_TYPES,
    application_name: 'ckql',
  });
  // An idle connection the server drops must not crash the process.
  pool.on('error', () => undefined);
  try {
    const client = await pool.connect();
    client.release();
  } catch (error) {
    await pool.end().catch(() => undefined);
    throw connectionFailed(where, error);
  }
  return {
    kind: 'postgres',
    where,
    transaction: async (work, txOptions = {}) => {
      const signal = txOptions.signal;
      if (signal?.aborted === true) throw new DatastoreError('ABORTED', 'the search was cancelled');
      let client: pg.PoolClient;
      try {
        client = await pool.connect();
      } catch (error) {
        throw connectionFailed(where, error);
      }
      const pid = (client as unknown as { processID?: number }).processID;
      const cancel = (): void => {
        if (pid !== undefined) pool.query('SELECT pg_cancel_backend($1)', [pid]).catch(() => undefined);
      };
      signal?.addEventListener('abort', cancel, { once: true });
      let broken = false;
      try {
        await client.query(txOptions.readOnly === true ? 'BEGIN READ ONLY' : 'BEGIN');
        if (txOptions.statementTimeout !== undefined) await client.query(`SET LOCAL statement_timeout = ${Math.max(1, Math.floor(txOptions.statementTimeout))}`);
        const session: SqlSession = {
          query: async (sql, params = []) => {
            const result = await client.query({ text: sql, values: params as unknown[] });
            return { rows: result.rows as Record<string, unknown>[], fields: result.fields.map((f) => ({ name: f.name, dataTypeID: f.dataTypeID })) } satisfies SqlRows;
          },
          copyFrom: (sql, csv) => copyIn(client, sql, csv),
        };
        const value = await work(session);
        await client.query('COMMIT');
        return value;
      } catch (error) {
        await client.query('ROLLBACK').catch(() => {
          broken = true;
        });
        if (isConnectionError(error)) {
          broken = true;
          throw connectionFailed(where, error);
        }
        throw error;
      } finally {
        signal?.removeEventListener('abort', cancel);
        client.release(broken);
      }
    },
    close: () => pool.end(),
  };
}

function isConnectionError(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' && (code.startsWith('E') || code.startsWith('08'));
}

/**
 * `COPY … FROM STDIN` with `pg` alone: a submittable query that answers the
 * server's CopyInResponse with the data, then CopyDone.
 */
function copyIn(client: pg.PoolClient, sql: string, data: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const submittable = {
      submit(connection: { query(text: string): void }) {
        connection.query(sql);
      },
      handleCopyInResponse(connection: { sendCopyFromChunk(chunk: Buffer): void; endCopyFrom(): void }) {
        connection.sendCopyFromChunk(Buffer.from(data, 'utf8'));
        connection.endCopyFrom();
      },
      handleCommandComplete() {},
      handleReadyForQuery() {
        resolve();
      },
      handleError(error: Error) {
        // pg lets go of a query at its error (the ReadyForQuery after it is not ours to see): it ends here.
        reject(error);
      },
      handleRowDescription() {},
      handleDataRow() {},
      handleEmptyQuery() {},
      handleCopyData() {},
      handlePortalSuspended() {},
    };
    (client as unknown as { query(q: unknown): void }).query(submittable);
  });
}

/**
 * The little of a PostgreSQL connection that CKAN's SQL needs, so one SQL
 * engine runs on PGlite (in the process) and on a server (`pg`): bound
 * queries, a transaction on one connection, `COPY … FROM` a CSV text, and
 * cancelling the statement that runs.
 */

/** One column of a result, as the wire protocol describes it. */
export interface SqlColumn {
  readonly name: string;
  /** the type's oid (`pg_type.oid`) */
  readonly dataTypeID: number;
}

/** Rows of one statement; values are as the driver parses them (text for types it does not know). */
export interface SqlRows {
  readonly rows: readonly Record<string, unknown>[];
  readonly fields: readonly SqlColumn[];
}

/** Statements on one connection (a transaction, or the whole database for PGlite). */
export interface SqlSession {
  /** one statement; `$1…$n` are bound to `params` (never spliced into the text) */
  query(sql: string, params?: readonly unknown[]): Promise<SqlRows>;
  /** `COPY "t" (…) FROM STDIN (FORMAT csv)` fed with `csv` */
  copyFrom(sql: string, csv: string): Promise<void>;
}

/** Options of `Db.transaction`. */
export interface TransactionOptions {
  readonly readOnly?: boolean;
  readonly signal?: AbortSignal;
  /** PostgreSQL's `statement_timeout` for the transaction's statements, ms */
  readonly statementTimeout?: number;
}

/**
 * A database: sessions inside transactions, each cancellable.
 * @example
 * await db.transaction(async (tx) => (await tx.query('SELECT $1::int AS n', [1])).rows[0]); // → { n: 1 }
 */
export interface Db {
  readonly kind: 'pglite' | 'postgres';
  /**
   * Runs `work` in one transaction on one connection; commits when it
   * resolves, rolls back when it throws. `readOnly` starts it `READ ONLY`.
   * A statement that runs past `statementTimeout` ms, or while `signal` is
   * aborted, fails with SQLSTATE 57014 (`query_canceled`), the transaction
   * rolls back, and its answer is dropped. A server stops the statement
   * itself; PGlite runs a statement to its end inside the process, so there
   * the timeout and the signal are checked when it ends (and a transaction
   * still waiting for PGlite's one connection is given up at once).
   */
  transaction<T>(work: (tx: SqlSession) => Promise<T>, options?: TransactionOptions): Promise<T>;
  close(): Promise<void>;
}

/** A PostgreSQL error as both drivers report it: the SQLSTATE `code` and the server's message. */
export interface PgError extends Error {
  readonly code?: string;
}

/** True for an error raised by the database server (it has a five-character SQLSTATE). */
export function isPgError(error: unknown): error is PgError & { code: string } {
  return error instanceof Error && typeof (error as PgError).code === 'string' && /^[0-9A-Z]{5}$/.test((error as PgError).code as string);
}

/** SQLSTATEs the engines answer for. */
export const SQLSTATE = {
  queryCanceled: '57014',
  permissionDenied: '42501',
  readOnlyTransaction: '25006',
  undefinedTable: '42P01',
} as const;

/**
 * A name as a quoted SQL identifier (`"` doubled), the only way a name
 * enters SQL text.
 * @example quoteIdentifier('say "hi"') // → '"say ""hi"""'
 */
export function quoteIdentifier(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

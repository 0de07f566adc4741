/**
 * Loading resources into a PostgreSQL datastore: each table is created in
 * CKAN's layout and filled with `COPY … FROM STDIN (FORMAT csv)` in batches,
 * all in one transaction per resource, so an interrupted load leaves no
 * half-made table (the previous one, with `replace`, stays until the commit).
 * Types come from the memory loader's inference (`loadResources`), so the
 * engines agree on them.
 */
import type { FieldDictionary, FieldInfo, FieldType, ResourceMeta, Table } from '../../datastore/types.js';
import { DatastoreError, toolError } from '../../errors.js';
import type { Db, SqlSession } from './db.js';
import { quoteIdentifier } from './db.js';
import {
  columnCommentSql, createAliasSql, createTableSql, DATASTORE_SETUP_CHECK_SQL, DATASTORE_SETUP_MARK_SQL, DATASTORE_SETUP_SQL, fullTextIndexSql, primaryKeySql,
  sqlTypeOf, tableNoteSql,
} from './layout.js';

/** How far a load is, for a progress bar. */
export interface LoadProgress {
  readonly resource: string;
  readonly rows: number;
  readonly totalRows: number;
  /** set while a CSV file's types are read (before its rows are copied): how much of it is read */
  readonly reading?: { readonly bytes: number; readonly totalBytes: number };
  /**
   * set once the rows are in, while CKAN's full-text indexes are built (each
   * one a statement that reports nothing until it ends): `done` of `total`
   */
  readonly indexing?: { readonly done: number; readonly total: number };
}

/**
 * Options of `loadTables`.
 * @example
 * await loadTables(db, tables, { replace: true, onProgress: (p) => bar.update(p.rows) });
 */
export interface LoadTablesOptions {
  /** drop a table of the same id first (in the same transaction); otherwise an existing id is an error */
  readonly replace?: boolean;
  /** create CKAN's full-text indexes (answers are the same without them, only slower on large tables); default true */
  readonly indexes?: boolean;
  /** rows per `COPY` batch; default 10 000 */
  readonly batchRows?: number;
  readonly onProgress?: (progress: LoadProgress) => void;
  /** stops between batches; the resource's transaction rolls back */
  readonly signal?: AbortSignal;
}

/** Runs CKAN's set-up statements (type, trigger function, `_table_metadata`); idempotent. */
export async function setUpDatastore(db: Db): Promise<void> {
  await db.transaction(async (tx) => {
    // Values come back as PostgreSQL's text (db.ts): a boolean is `t`.
    if (String((await tx.query(DATASTORE_SETUP_CHECK_SQL)).rows[0]?.['ready']) === 't') return;
    for (const sql of [...DATASTORE_SETUP_SQL, DATASTORE_SETUP_MARK_SQL]) await tx.query(sql);
  });
}

/**
 * Creates one table per resource in CKAN's layout and copies its rows in
 * (with their `_id`s), its data dictionary as CKAN 2.11's column comments.
 * Each resource is one transaction.
 * @example
 * const db = await openPglite();
 * await loadTables(db, await loadResources('examples/data'));
 */
export async function loadTables(db: Db, tables: readonly Table[], options: LoadTablesOptions = {}): Promise<void> {
  await setUpDatastore(db);
  for (const table of tables) {
    await db.transaction((tx) => loadTable(tx, table, options));
  }
}

/** A resource's table as it is created: its name, aliases, note and data columns. */
export interface TableShape {
  readonly id: string;
  readonly aliases: readonly string[];
  readonly private?: boolean;
  readonly source?: string;
  readonly columns: readonly Column[];
  /** the rows bring their own `_id` (the first cell of each COPY line); the sequence goes on after the largest */
  readonly keepIds?: boolean;
  /** the resource's name, dataset and primary key (kept in ckql's note; the key as CKAN's unique index) */
  readonly meta?: ResourceMeta;
}

/** A data column: its CKAN type, the PostgreSQL type it is created with, and its data dictionary. */
export interface Column {
  readonly id: string;
  readonly type: FieldType;
  readonly sqlType: string;
  readonly info?: FieldDictionary;
}

async function loadTable(tx: SqlSession, table: Table, options: LoadTablesOptions): Promise<void> {
  const columns = table.fields
    .filter((f) => f.id !== '_id')
    .map((f) => ({ id: f.id, type: f.type, sqlType: sqlTypeOf(f.type, valuesOf(table, f)), ...(f.info === undefined ? {} : { info: f.info }) }));
  const shape: TableShape = { ...table, columns, keepIds: true };
  const copy = await createTable(tx, shape, options);
  const batch = Math.max(1, options.batchRows ?? 10_000);
  const total = table.rows.length;
  for (let start = 0; start < total; start += batch) {
    const end = Math.min(total, start + batch);
    let csv = '';
    for (let r = start; r < end; r++) {
      const row = table.rows[r] as Readonly<Record<string, unknown>>;
      let line = csvCell(row['_id'] ?? r + 1, 'int4');
      for (let k = 0; k < columns.length; k++) {
        const column = columns[k] as (typeof columns)[number];
        line += ',';
        line += csvCell(row[column.id], column.sqlType);
      }
      csv += line + '\n';
    }
    await copy(csv, end - start);
    options.onProgress?.({ resource: table.aliases[0] ?? table.id, rows: end, totalRows: total });
  }
  if (total === 0) options.onProgress?.({ resource: table.aliases[0] ?? table.id, rows: 0, totalRows: 0 });
  await finishTable(tx, shape, options, total);
}

/**
 * Creates a resource's table in CKAN's layout inside `tx` (dropping one of
 * the same id with `replace`) and gives the function that copies a batch
 * of CSV lines (one cell per column, `csvCell`) into it; it stops when the
 * signal was aborted, so the transaction rolls back.
 */
export async function createTable(tx: SqlSession, table: TableShape, options: LoadTablesOptions): Promise<(csv: string, rows: number) => Promise<void>> {
  const { columns } = table;
  const where = table.source ?? table.id;
  for (const column of columns) {
    // PostgreSQL cuts longer names (CKAN refuses them for the same reason).
    if (Buffer.byteLength(column.id) > 63) {
      throw toolError('DATA_INVALID', [where, `the column name ${JSON.stringify(column.id)} is longer than PostgreSQL's 63 bytes`]);
    }
    if (column.id.includes('\u0000')) {
      throw toolError('DATA_INVALID', [where, `the column name ${JSON.stringify(column.id)} holds a NUL byte (U+0000), which a PostgreSQL name cannot hold`]);
    }
    if (column.id.startsWith('_')) {
      throw toolError('DATA_INVALID', [where, `the column name ${JSON.stringify(column.id)} starts with "_", which CKAN keeps for its own columns`]);
    }
  }
  const exists = await tx.query(`SELECT c.relkind FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'public' AND c.relname = $1`, [table.id]);
  if (exists.rows.length > 0) {
    if (options.replace !== true) {
      throw toolError('USAGE', [`the datastore already holds a resource ${JSON.stringify(table.id)}${table.aliases[0] === undefined ? '' : ` (${table.aliases[0]})`}; add --replace to replace it`]);
    }
    await tx.query(`DROP TABLE ${quoteIdentifier(table.id)} CASCADE`);
  }
  for (const sql of createTableSql(table.id, columns)) await tx.query(sql);
  const names = [...(table.keepIds === true ? ['"_id"'] : []), ...columns.map((c) => quoteIdentifier(c.id))].join(', ');
  const copy = `COPY ${quoteIdentifier(table.id)} (${names}) FROM STDIN (FORMAT csv)`;
  return async (csv, rows) => {
    if (options.signal?.aborted === true) throw new DatastoreError('ABORTED', `loading ${table.aliases[0] ?? table.id} was interrupted; nothing of it was kept`);
    if (columns.length > 0 || table.keepIds === true) await tx.copyFrom(copy, csv);
    // A table with no columns but `_id`: COPY needs a column, so the rows are inserted.
    else for (let r = 0; r < rows; r++) await tx.query(`INSERT INTO ${quoteIdentifier(table.id)} DEFAULT VALUES`);
  };
}

/** After the rows: CKAN's indexes, the aliases (views), the table's note and its statistics. */
export async function finishTable(tx: SqlSession, table: TableShape, options: LoadTablesOptions, rows: number): Promise<void> {
  const resource = table.aliases[0] ?? table.id;
  const interrupted = (): DatastoreError => new DatastoreError('ABORTED', `loading ${resource} was interrupted; nothing of it was kept`);
  const stopped = (): boolean => options.signal?.aborted === true;
  // Interrupted after the last batch: still nothing is kept.
  if (stopped()) throw interrupted();
  if (options.indexes !== false) {
    // On a large table these take longer than the copy: each is announced, so a bar says what is going on.
    const statements = fullTextIndexSql(table.id, table.columns);
    for (const [done, sql] of statements.entries()) {
      options.onProgress?.({ resource, rows, totalRows: rows, indexing: { done, total: statements.length } });
      await tx.query(sql);
      if (stopped()) throw interrupted();
    }
    options.onProgress?.({ resource, rows, totalRows: rows, indexing: { done: statements.length, total: statements.length } });
  }
  if (table.meta?.primaryKey !== undefined && table.meta.primaryKey.length > 0) await tx.query(primaryKeySql(table.id, table.meta.primaryKey));
  for (const column of table.columns) if (column.info !== undefined) await tx.query(columnCommentSql(table.id, column.id, column.info));
  // Rows that brought their `_id`s: new rows (a datastore_upsert) go on after the largest.
  if (table.keepIds === true) {
    await tx.query(`SELECT setval(pg_get_serial_sequence($1, '_id'), GREATEST(COALESCE(max("_id"), 0), 1), max("_id") IS NOT NULL) FROM ${quoteIdentifier(table.id)}`, [quoteIdentifier(table.id)]);
  }
  for (const alias of table.aliases) {
    if (alias === table.id) continue;
    const other = await tx.query(`SELECT c.relkind FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'public' AND c.relname = $1`, [alias]);
    if (other.rows.length > 0) {
      if (other.rows[0]?.['relkind'] !== 'v' || options.replace !== true) {
        throw toolError('USAGE', [`the name ${JSON.stringify(alias)} is already taken in the datastore; choose another --alias${other.rows[0]?.['relkind'] === 'v' ? ' or add --replace' : ''}`]);
      }
      await tx.query(`DROP VIEW ${quoteIdentifier(alias)}`);
    }
    await tx.query(createAliasSql(alias, table.id));
  }
  const note = {
    ...(table.private === true ? { private: true } : {}),
    ...(table.source === undefined ? {} : { source: table.source }),
    ...(table.meta === undefined ? {} : { meta: table.meta }),
  };
  await tx.query(tableNoteSql(table.id, note));
  // Statistics, as a portal's loader leaves them: the planner's estimates and 2.11's total_estimation_threshold read them.
  await tx.query(`ANALYZE ${quoteIdentifier(table.id)}`);
}

function* valuesOf(table: Table, field: FieldInfo): Iterable<unknown> {
  for (const row of table.rows) yield row[field.id];
}

/**
 * One value as a CSV cell of `COPY … (FORMAT csv)`: null is an empty
 * unquoted cell, anything else is quoted (so an empty text stays a text).
 */
export function csvCell(value: unknown, sqlType: string): string {
  if (value === null || value === undefined) return '';
  let text: string;
  // a bigint is an integer the loader read exactly (memory/load.ts `withExactIntegers`): its digits are its JSON
  if (sqlType === 'nested') text = compositeOf(typeof value === 'bigint' ? String(value) : JSON.stringify(value));
  else if (sqlType.endsWith('[]')) text = Array.isArray(value) ? arrayLiteral(value) : String(value);
  else if (typeof value === 'boolean') text = value ? 't' : 'f';
  else if (typeof value === 'object') text = JSON.stringify(value);
  else text = String(value);
  return `"${text.replaceAll('"', '""')}"`;
}

/** `nested`'s text form: the composite `(json,extra)` with the JSON quoted. */
function compositeOf(json: string): string {
  return `("${json.replaceAll('\\', '\\\\').replaceAll('"', '\\"')}",)`;
}

/**
 * A PostgreSQL array literal of JS values (`{"a","b c",NULL}`), the form an
 * untyped parameter or COPY takes for an array column.
 * @example arrayLiteral(['a', null, 'say "hi"']) // → '{"a",NULL,"say \\"hi\\""}'
 */
export function arrayLiteral(values: readonly unknown[]): string {
  const items = values.map((v) => {
    if (v === null || v === undefined) return 'NULL';
    if (Array.isArray(v)) return arrayLiteral(v);
    const text = typeof v === 'object' ? JSON.stringify(v) : typeof v === 'boolean' ? (v ? 't' : 'f') : String(v);
    return `"${text.replaceAll('\\', '\\\\').replaceAll('"', '\\"')}"`;
  });
  return `{${items.join(',')}}`;
}

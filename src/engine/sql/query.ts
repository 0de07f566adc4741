/**
 * A whole query on a PostgreSQL engine (docs/executor.md, Sources): one
 * `SELECT` with the sql target's meaning (docs/beyond-the-request.md: the
 * condition, search and order it writes for datastore_search_sql), its
 * values bound as parameters, read through a cursor a batch at a time, so
 * that a reader who stops early stops the statement's work too.
 */
import type { Query, Value } from '../../ast.js';
import type { FieldInfo, Row } from '../../datastore/types.js';
import { whereSql, sortKeySql } from '../../compile/sql.js';
import { quoteIdentifier as id } from './db.js';
import type { Db, SqlSession } from './db.js';
import type { CatalogEntry } from './layout.js';
import { parseRecords } from './records.js';
import type { EngineQueryOptions, QueryStream } from '../types.js';
import { checkQuery } from '../memory/evaluate-query.js';
import { DatastoreError, validationError } from '../../errors.js';
import { closing } from '../stream.js';

const DEFAULT_LIMIT = 100;
const DEFAULT_BATCH = 1_000;

/** The statements of one query: its records (one JSON text per row), and its count when asked. */
export interface QuerySql {
  /** the table's resource id */
  readonly resource: string;
  readonly records: string;
  readonly count: string | undefined;
  readonly params: readonly unknown[];
  readonly fields: readonly FieldInfo[];
}

/**
 * The SQL of a query over a resource table. Names are checked first, as
 * the memory engine checks them (an unknown field is the same Validation
 * Error), so PostgreSQL never sees an unknown column.
 * @example
 * querySql(parse('from courses where credits >= 7 order by title limit 2'), entry, {})
 * // records: SELECT row_to_json(r)::text AS r FROM (SELECT "_id", … FROM "…" WHERE "credits" >= $1 ORDER BY "title" ASC, "_id" LIMIT 2) AS r
 */
export function querySql(query: Query, entry: CatalogEntry, options: Pick<EngineQueryOptions, 'all' | 'total'>): QuerySql {
  checkQuery(query, entry.fields);
  const params: unknown[] = [];
  const bind = (text: string): string => {
    params.push(text);
    return `$${params.length}`;
  };
  const where = whereSql(query, bind);
  const whereText = where === undefined ? '' : ` WHERE ${where}`;
  const table = id(entry.id);
  const types = new Map(entry.fields.map((f) => [f.id, f.type as string]));
  const selected = query.select === undefined ? entry.fields.map((f) => f.id) : [...new Set(query.select.fields.map((f) => f.name))];
  const fields = selected.map((name) => entry.fields.find((f) => f.id === name)!);
  const columns = selected.map((name) => `${valueExpr(name, types.get(name) ?? 'text')} AS ${id(name)}`).join(', ');
  const keys = query.order?.keys ?? [];
  const limit = count(query.limit?.value, options.all === true ? undefined : DEFAULT_LIMIT);
  const offset = count(query.offset?.value, 0) ?? 0;
  const page = `${limit === undefined ? '' : ` LIMIT ${limit}`}${offset > 0 ? ` OFFSET ${offset}` : ''}`;
  let rows: string;
  let counted: string;
  if (query.select?.distinct === true) {
    for (const key of keys) {
      if (!selected.includes(key.field.name)) {
        throw validationError('sort', `for SELECT DISTINCT, ORDER BY expressions must appear in select list: ${JSON.stringify(key.field.name)}`);
      }
    }
    // The first record of each distinct projection (by `_id`), ordered by the keys and then by that record:
    // the language's meaning of `select distinct` (docs/semantics.md), which a bare SELECT DISTINCT leaves unordered.
    const same = selected.map((name) => (types.get(name) === 'json' ? `((${id(name)}).json)::jsonb` : id(name))).join(', ');
    const first = `SELECT DISTINCT ON (${same}) ${selected.map(id).join(', ')}, "_id" AS "_ckql_first" FROM ${table}${whereText} ORDER BY ${same}, "_id"`;
    const order = [...keys.map(sortKeySql), '"_ckql_first"'].join(', ');
    rows = `SELECT ${selected.map((name) => `${valueExpr(name, types.get(name) ?? 'text', 'd')} AS ${id(name)}`).join(', ')} FROM (${first}) AS d ORDER BY ${order}${page}`;
    counted = `SELECT count(*) AS n FROM (${first}) AS d`;
  } else {
    rows = `SELECT ${columns} FROM ${table}${whereText} ORDER BY ${[...keys.map(sortKeySql), '"_id"'].join(', ')}${page}`;
    counted = `SELECT count(*) AS n FROM ${table}${whereText}`;
  }
  return {
    resource: entry.id,
    records: `SELECT row_to_json(r)::text AS r FROM (${rows}) AS r`,
    count: options.total === true ? counted : undefined,
    params,
    fields,
  };
}

/** A column as datastore_search writes its value (docs/ckan-2.11-reference.md §4, Value formatting). */
function valueExpr(name: string, type: string, from?: string): string {
  const column = from === undefined ? id(name) : `${from}.${id(name)}`;
  // CKAN keeps a json column as its `nested` type, whose `json` member is the value.
  if (type === 'json') return `coalesce((${column}).json, 'null')`;
  if (type === 'timestamp') return `to_char(${column}, 'YYYY-MM-DD"T"HH24:MI:SS')`;
  if (type.startsWith('_')) return `coalesce(array_to_json(${column}), 'null')`;
  return column;
}

function count(value: Value | undefined, fallback: number | undefined): number | undefined {
  if (value === undefined || value.kind !== 'number') return fallback;
  return value.value;
}

/**
 * Runs a query's statements in one read-only transaction: the count first
 * (when asked), then the records through a cursor, `batchSize` rows a fetch,
 * each fetch only when the reader asks for the next batch. The transaction
 * stays open while the reader reads, and ends when it stops.
 */
export async function runQuery(db: Db, statements: QuerySql, options: EngineQueryOptions & { readonly statementTimeout: number }, fail: (error: unknown, statement: string) => unknown): Promise<QueryStream> {
  const batchSize = Math.max(1, Math.floor(options.batchSize ?? DEFAULT_BATCH));
  const channel = new Channel<readonly Row[]>();
  let total: number | undefined;
  let opened!: () => void;
  const ready = new Promise<void>((resolve) => (opened = resolve));
  let statement = statements.count ?? statements.records;
  const work = db
    .transaction(
      async (tx: SqlSession) => {
        if (statements.count !== undefined) total = Number((await tx.query(statements.count, statements.params)).rows[0]?.['n']);
        statement = statements.records;
        await tx.query(`DECLARE ckql_query NO SCROLL CURSOR FOR ${statements.records}`, statements.params);
        opened();
        for (;;) {
          options.signal?.throwIfAborted();
          const fetched = await tx.query(`FETCH ${batchSize} FROM ckql_query`);
          const texts = fetched.rows.map((row) => row['r'] as string);
          const batch = texts.length === 0 ? [] : (parseRecords(`[${texts.join(',')}]`, statements.fields, 'objects') as Row[]);
          if (batch.length > 0 && !(await channel.put(batch))) break;
          if (texts.length < batchSize) break;
        }
        await tx.query('CLOSE ckql_query');
      },
      { readOnly: true, statementTimeout: options.statementTimeout, ...(options.signal === undefined ? {} : { signal: options.signal }) },
    )
    .then(
      () => channel.end(),
      (error: unknown) => channel.fail(fail(error, statement)),
    );
  // The count and the cursor come first, so that their errors are the caller's, not the reader's.
  await Promise.race([ready, work]);
  await channel.failure();
  const stop = async (): Promise<void> => {
    channel.stop();
    await work;
  };
  async function* batches(): AsyncGenerator<readonly Row[], void, undefined> {
    try {
      for (;;) {
        const next = await channel.take();
        if (next === undefined) return;
        // The reader learns of a cancel at its next batch, whatever the fetch under way does.
        if (options.signal?.aborted === true) throw new DatastoreError('ABORTED', 'the query was cancelled', { cause: options.signal.reason });
        yield next;
      }
    } finally {
      await stop();
    }
  }
  return { resource: statements.resource, fields: statements.fields, batches: closing(batches(), stop), ...(total === undefined ? {} : { total }) };
}

/**
 * A hand-over of one item at a time between the transaction (which puts)
 * and the reader (who takes): `put` waits until the item is taken, so the
 * cursor is fetched no faster than the reader reads.
 */
class Channel<T> {
  #item: { value: T; taken: (more: boolean) => void } | undefined;
  #waiting: ((item: T | undefined) => void) | undefined;
  #done = false;
  #stopped = false;
  #error: unknown;
  #failed = false;

  /** Resolves true when the item was taken, false when the reader stopped. */
  put(value: T): Promise<boolean> {
    if (this.#stopped) return Promise.resolve(false);
    return new Promise((taken) => {
      if (this.#waiting !== undefined) {
        const waiting = this.#waiting;
        this.#waiting = undefined;
        waiting(value);
        taken(true);
      } else {
        this.#item = { value, taken };
      }
    });
  }

  /** The next item, or undefined at the end; throws what the writer failed with. */
  async take(): Promise<T | undefined> {
    if (this.#item !== undefined) {
      const { value, taken } = this.#item;
      this.#item = undefined;
      taken(true);
      return value;
    }
    if (this.#failed) throw this.#error;
    if (this.#done) return undefined;
    const value = await new Promise<T | undefined>((resolve) => (this.#waiting = resolve));
    if (value === undefined && this.#failed) throw this.#error;
    return value;
  }

  end(): void {
    this.#done = true;
    this.#wake();
  }

  fail(error: unknown): void {
    this.#failed = true;
    this.#error = error;
    this.#wake();
  }

  /** Throws now if the writer has already failed. */
  async failure(): Promise<void> {
    if (this.#failed) throw this.#error;
  }

  /** The reader is gone: a waiting `put` resolves false, and later ones at once. */
  stop(): void {
    this.#stopped = true;
    const item = this.#item;
    this.#item = undefined;
    item?.taken(false);
  }

  #wake(): void {
    const waiting = this.#waiting;
    this.#waiting = undefined;
    waiting?.(undefined);
  }
}

/**
 * A whole query on a PostgreSQL engine (docs/executor.md, Sources): one
 * `SELECT` with the sql target's meaning (docs/beyond-the-request.md: the
 * condition, search and order it writes for datastore_search_sql), its
 * values bound as parameters, read through a cursor a batch at a time, so
 * that a reader who stops early stops the statement's work too.
 */
import type { Field, PlainQuery, Query, Value } from '../../ast.js';
import { isPlainQuery, selectedNames } from '../../ast.js';
import { bindShape, shapeOf } from '../../compile/shape.js';
import type { BoundShape, Shape } from '../../compile/shape.js';
import { facetsFromRows, facetStatement, JOIN_COUNT_COLUMNS, joinCountSql, shapedSql } from '../../compile/sql-shaped.js';
import type { Facets } from '../../datastore/types.js';
import type { FieldInfo, Row } from '../../datastore/types.js';
import { whereSql, sortKeySql } from '../../compile/sql.js';
import { quoteIdentifier as id } from './db.js';
import type { Db, SqlSession } from './db.js';
import type { CatalogEntry } from './layout.js';
import { parseRecords } from './records.js';
import type { EngineQueryOptions, QueryStream } from '../types.js';
import { checkQuery } from '../memory/evaluate-query.js';
import { DatastoreError, queryError, validationError } from '../../errors.js';
import { DEFAULT_MAX_JOIN_ROWS } from '../../compile/plan.js';
import { windowFields, windowSql, windowStep } from '../../compile/window.js';
import type { WindowStep } from '../../compile/window.js';
import { joinHint } from '../memory/shaped.js';
import { closing } from '../stream.js';
import { unionFields, unionTable } from '../../compile/union.js';
import type { UnionMember, UnionTable } from '../../compile/union.js';

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
  /** a query with `facet`: the facets' statement, run before the records, and how its rows are read */
  readonly facets?: { readonly sql: string; readonly params: readonly unknown[]; read(rows: readonly Readonly<Record<string, unknown>>[]): Facets };
}

/**
 * The SQL of a grouped, joined, renamed or faceted query over its
 * resources' tables (`entries`, in the order of its sources): the sql
 * target's statement (compile/sql-shaped.ts) with its values bound, its
 * names checked first as the memory engine checks them.
 * @example
 * shapedQuerySql(parse('from courses group by subject select subject, count(*) as n'), [entry], {}).records
 * // SELECT row_to_json(_ckql_row)::text AS r FROM (SELECT "courses"."subject" AS "subject", count(*) AS "n" FROM "…" AS "courses" GROUP BY … LIMIT 100) AS _ckql_row
 */
export function shapedQuerySql(query: Query, entries: SourceEntries, options: Pick<EngineQueryOptions, 'all' | 'total'>): QuerySql {
  const step = windowStep(query);
  if (step !== undefined) return windowQuerySql(step, entries, options);
  const shape = shapeOf(query);
  const tables = tablesOf(shape, entries);
  const bound = bindShape(shape, tables.fields);
  const records = withoutFacetQuery(query);
  const binder = (params: unknown[]) => (text: string): string => {
    params.push(text);
    return `$${params.length}`;
  };
  let facets: QuerySql['facets'];
  if (shape.facets.length > 0) {
    const params: unknown[] = [];
    const sql = facetStatement(shape, { literal: binder(params), table: tables.table, unions: tables.unions, bound, total: false });
    facets = { sql, params, read: (rows) => readFacetRows(shape, bound, rows) };
  }
  if (isPlainQuery(records)) {
    return { ...querySql(records, entries[0]![0]!, options), ...(facets === undefined ? {} : { facets }) };
  }
  const params: unknown[] = [];
  const body = recordsSql(records, entries, params);
  const limit = shape.limit ?? (options.all === true ? undefined : DEFAULT_LIMIT);
  const page = `${limit === undefined ? '' : ` LIMIT ${limit}`}${shape.offset > 0 ? ` OFFSET ${shape.offset}` : ''}`;
  return {
    resource: entries[0]![0]!.id,
    records: `SELECT row_to_json(_ckql_row)::text AS r FROM (${body}${page}) AS _ckql_row`,
    count: options.total === true ? `SELECT count(*) AS n FROM (${body}) AS c` : undefined,
    params,
    fields: bound.columns.map((c) => ({ id: c.name, type: c.type })),
    ...(facets === undefined ? {} : { facets }),
  };
}

/**
 * The statement of a query's records (no facet) without its page, its
 * values bound into `params`: the sql target's, each value as
 * datastore_search writes it (a json column's value, a timestamp without
 * its fraction).
 */
function recordsSql(records: Query, entries: SourceEntries, params: unknown[]): string {
  const shape = shapeOf(records);
  const tables = tablesOf(shape, entries);
  const bound = bindShape(shape, tables.fields);
  const types = (field: Field | undefined): string | undefined => (field === undefined ? undefined : bound.ref(field).info.type);
  return shapedSql(shape, {
    literal: (text) => {
      params.push(text);
      return `$${params.length}`;
    },
    table: tables.table,
    unions: tables.unions,
    bound,
    total: false,
    page: false,
    column: (sql, field) => {
      const type = types(field);
      if (type === 'json') return `coalesce((${sql}).json, 'null')`;
      if (type === 'timestamp') return `to_char(${sql}, 'YYYY-MM-DD"T"HH24:MI:SS')`;
      if (type?.startsWith('_')) return `coalesce(array_to_json(${sql}), 'null')`;
      return sql;
    },
  });
}

/**
 * A query with windows (compile/window.ts): the statement of its inner
 * query, and the windows, qualify, order and page over it, as the sql
 * target writes them.
 */
function windowQuerySql(step: WindowStep, entries: SourceEntries, options: Pick<EngineQueryOptions, 'all' | 'total'>): QuerySql {
  const params: unknown[] = [];
  const inner = recordsSql(step.inner, entries, params);
  const literal = (text: string): string => {
    params.push(text);
    return `$${params.length}`;
  };
  const body = windowSql(step, inner, literal, { total: false, page: '' });
  const limit = step.limit ?? (options.all === true ? undefined : DEFAULT_LIMIT);
  const page = `${limit === undefined ? '' : ` LIMIT ${limit}`}${step.offset > 0 ? ` OFFSET ${step.offset}` : ''}`;
  const innerShape = shapeOf(step.inner);
  const innerFields = bindShape(innerShape, tablesOf(innerShape, entries).fields).columns.map((c) => ({ id: c.name, type: c.type }));
  return {
    resource: entries[0]![0]!.id,
    records: `SELECT row_to_json(_ckql_row)::text AS r FROM (${body}${page}) AS _ckql_row`,
    count: options.total === true ? `SELECT count(*) AS n FROM (${body}) AS c` : undefined,
    params,
    fields: windowFields(step, innerFields),
  };
}

/**
 * Refuses a query whose joins would give more than `maxJoinRows` rows
 * (`JOIN_TOO_LARGE`) before it runs, as the memory engine does: each join
 * counted in order (`joinCountSql`), the first past the bound refused with
 * its count, the keys that multiply the most and what to write instead.
 * The statements run in `session`, under its statement timeout.
 */
export async function checkJoinBound(
  session: SqlSession,
  query: Query,
  entries: SourceEntries,
  maxJoinRows: number | undefined,
  running: (statement: string, params: readonly unknown[]) => void,
): Promise<void> {
  // a query with windows joins as its inner query does
  const shape = shapeOf(windowStep(query)?.inner ?? query);
  if (shape.joins.length === 0) return;
  const max = maxJoinRows ?? DEFAULT_MAX_JOIN_ROWS;
  const tables = tablesOf(shape, entries);
  const bound = bindShape(shape, tables.fields);
  const c = JOIN_COUNT_COLUMNS;
  for (const [j, join] of shape.joins.entries()) {
    const statement = (top: boolean): { sql: string; params: unknown[] } => {
      const params: unknown[] = [];
      const literal = (text: string): string => {
        params.push(text);
        return `$${params.length}`;
      };
      return { sql: joinCountSql(shape, j, { literal, table: tables.table, unions: tables.unions, bound, total: false }, top), params };
    };
    const counted = statement(false);
    running(counted.sql, counted.params);
    const row = (await session.query(counted.sql, counted.params)).rows[0]!;
    const rows = Number(row[c.rows]);
    if (rows <= max) continue;
    const top = statement(true);
    running(top.sql, top.params);
    const keys = (await session.query(top.sql, top.params)).rows;
    // The memory engine lists each key's rows probing first: the earlier rows, unless the joined side has fewer (an inner join).
    const earlierFirst = join.left || Number(row[c.joined]) <= Number(row[c.earlier]);
    const multiplying = keys.map((key) => {
      const texts = join.on.map((_, i) => String(key[`k${i}`]));
      const [earlier, joined] = [Number(key[c.earlier]), Number(key[c.joined])];
      return { key: texts.length === 1 ? texts[0]! : JSON.stringify(texts), left: earlierFirst ? earlier : joined, right: earlierFirst ? joined : earlier };
    });
    const source = shape.sources[j + 1]!;
    const pair = join.on[0]!;
    const mine = bound.ref(pair.left).side === j + 1 ? pair.left : pair.right;
    const example = { resource: source.resource, key: bound.ref(mine).info.id, qualifier: source.qualifier };
    throw queryError('JOIN_TOO_LARGE', join.span, [rows, max, true], { hint: joinHint(join, example, multiplying) });
  }
}

/** The tables of a query's sources on an engine: each source's catalogue entries (a union's, in its order; else one). */
export type SourceEntries = readonly (readonly CatalogEntry[])[];

/**
 * What the SQL writer needs of a query's tables: each source's fields (a
 * union's as compile/union.ts makes them), the table of a resource as
 * written, and each union's resources with their fields.
 */
function tablesOf(shape: Shape, entries: SourceEntries): { fields: FieldInfo[][]; table: (resource: string) => string; unions: (UnionTable | undefined)[] } {
  const ids = new Map<string, string>();
  const unions = shape.sources.map((source, side): UnionMember[] | undefined => {
    const own = entries[side]!;
    if (source.union === undefined) {
      ids.set(source.resource, own[0]!.id);
      return undefined;
    }
    return source.union.map((resource, i) => {
      ids.set(resource.value, own[i]!.id);
      return { resource, fields: own[i]!.fields };
    });
  });
  const fields = shape.sources.map((_, side) => {
    const members = unions[side];
    return members === undefined ? [...entries[side]![0]!.fields] : unionFields(members);
  });
  const table = (resource: string): string => id(ids.get(resource)!);
  return { fields, table, unions: unions.map((members) => (members === undefined ? undefined : unionTable(members, table))) };
}

function withoutFacetQuery(query: Query): Query {
  const { facet: _facet, ...rest } = query;
  return rest;
}

/** The facets statement's rows as facets: per facet its values (given back their type), nulls, and whether more exist. */
function readFacetRows(shape: Shape, bound: BoundShape, rows: readonly Readonly<Record<string, unknown>>[]): Facets {
  return facetsFromRows(shape.facets, rows, (facet) => (facet.by === undefined ? bound.ref(facet.field).info.type : 'unit' in facet.by ? 'timestamp' : 'numeric'));
}

/**
 * The SQL of a query over a resource table. Names are checked first, as
 * the memory engine checks them (an unknown field is the same Validation
 * Error), so PostgreSQL never sees an unknown column.
 * @example
 * querySql(parse('from courses where credits >= 7 order by title limit 2'), entry, {})
 * // records: SELECT row_to_json(_ckql_row)::text AS r FROM (SELECT "_id", … FROM "…" WHERE "credits" >= $1 ORDER BY "title" ASC, "_id" LIMIT 2) AS _ckql_row
 */
export function querySql(query: PlainQuery, entry: CatalogEntry, options: Pick<EngineQueryOptions, 'all' | 'total'>): QuerySql {
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
  const selected = selectedNames(query.select) ?? entry.fields.map((f) => f.id);
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
    records: `SELECT row_to_json(_ckql_row)::text AS r FROM (${rows}) AS _ckql_row`,
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
  let facets: Facets | undefined;
  let opened!: () => void;
  const ready = new Promise<void>((resolve) => (opened = resolve));
  let statement = statements.count ?? statements.records;
  const work = db
    .transaction(
      async (tx: SqlSession) => {
        if (statements.facets !== undefined) {
          statement = statements.facets.sql;
          facets = statements.facets.read((await tx.query(statements.facets.sql, statements.facets.params)).rows);
          statement = statements.count ?? statements.records;
        }
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
  return {
    resource: statements.resource,
    fields: statements.fields,
    batches: closing(batches(), stop),
    ...(total === undefined ? {} : { total }),
    ...(facets === undefined ? {} : { facets }),
  };
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

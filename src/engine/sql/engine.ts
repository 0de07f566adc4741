/**
 * The SQL engine both PostgreSQL engines are: CKAN's catalogue read from the
 * database, `datastore_search` answered with the SQL CKAN builds, and
 * `datastore_search_sql` with CKAN's safety rules. `pglite` and `postgres`
 * differ only in the `Db` under it.
 */
import type { FieldInfo, SearchResult } from '../../datastore/types.js';
import { QueryError, resourceNotFound } from '../../errors.js';
import type { Query } from '../../ast.js';
import { isPlainQuery, querySources, unionMembers } from '../../ast.js';
import type { Engine, EngineKind, EngineQueryOptions, EngineSearchOptions, QueryStream, ResourceInfo, SqlResult } from '../types.js';
import { checkJoinBound, querySql, runQuery, shapedQuerySql } from './query.js';
import type { QuerySql } from './query.js';
import type { Db } from './db.js';
import { checkAgainstTable, validateSearch } from '../../datastore/validate.js';
import type { CatalogEntry } from './layout.js';
import { readCatalog } from './layout.js';
import { sqlSearchRequest } from './request.js';
import { buildSearch, copyCsv } from './search.js';
import { databaseError, invalidQuery } from './errors.js';
import { runSearchSql } from './search-sql.js';
import { parseRecords } from './records.js';
import { datastoreInfo } from './info.js';

/** Options of `sqlEngine`. */
export interface SqlEngineOptions {
  readonly kind: Exclude<EngineKind, 'memory'>;
  readonly label: string;
  /** CKAN's `statement_timeout` for a search, in ms; default 60 000 */
  readonly statementTimeout?: number;
  /**
   * the functions `datastore_search_sql` may call, as the lines of CKAN's
   * `ckan.datastore.sqlsearch.allowed_functions_file` (e.g. with `crosstab`
   * added on a database with `tablefunc`); default CKAN's own list
   */
  readonly allowedSqlFunctions?: Iterable<string>;
}

/** `sqlEngine`'s extra: re-reading the catalogue after tables changed (a load). */
export interface SqlEngine extends Engine {
  query(query: Query, options?: EngineQueryOptions): Promise<QueryStream>;
  /** reads the catalogue again (after `loadTables` on the same database) */
  refresh(): Promise<void>;
  readonly db: Db;
}

const TABLE_METADATA = '_table_metadata';

/**
 * An engine over a database laid out as CKAN's datastore.
 * @example
 * const db = await openPglite();
 * await loadTables(db, await loadResources('examples/data'));
 * const engine = sqlEngine(db, { kind: 'pglite', label: 'pglite (in memory)' });
 * (await engine.search({ resource_id: 'courses', q: 'algebra' })).total; // → PostgreSQL's full-text count
 */
export function sqlEngine(db: Db, options: SqlEngineOptions): SqlEngine {
  const timeout = Math.max(1, Math.floor(options.statementTimeout ?? 60_000));
  const allowedFunctions = options.allowedSqlFunctions === undefined ? undefined : allowedFunctionSet(options.allowedSqlFunctions);
  let catalog: Promise<CatalogEntry[]> | undefined;
  const entries = (): Promise<CatalogEntry[]> => {
    catalog ??= db.transaction((tx) => readCatalog(tx), { readOnly: true });
    catalog.catch(() => {
      catalog = undefined;
    });
    return catalog;
  };
  const find = async (idOrAlias: string): Promise<CatalogEntry | undefined> => {
    const all = await entries();
    return all.find((e) => e.id === idOrAlias) ?? all.find((e) => e.aliases.includes(idOrAlias));
  };
  const describe = (entry: CatalogEntry): ResourceInfo => ({
    id: entry.id,
    aliases: entry.aliases,
    fields: entry.fields,
    private: entry.note.private === true,
    ...(entry.note.source === undefined ? {} : { source: entry.note.source }),
    ...(entry.note.meta === undefined ? {} : { meta: entry.note.meta }),
  });

  const search = async (raw: unknown, searchOptions: EngineSearchOptions = {}): Promise<SearchResult> => {
    const ckan = searchOptions.ckan ?? '2.11';
    // CKAN's schema stage, then the resource, then its backend checks against the table (datastore/validate.ts).
    const validated = validateSearch(raw, { maxLimit: searchOptions.maxLimit ?? 32_000, ckan });
    let entry = await find(validated.request.resource_id);
    if (entry === undefined && validated.request.resource_id === TABLE_METADATA) entry = await tableMetadataEntry(db);
    if (entry === undefined) throw resourceNotFound(validated.request.resource_id);
    const fields = entry.fields;
    const tree = checkAgainstTable(validated, fields);
    const request = sqlSearchRequest(validated);
    const built = buildSearch(entry.id, fields, request, tree, ckan);
    const signal = searchOptions.signal;
    let statement = built.records;
    try {
      return await db.transaction(async (tx) => {
        const rows = await tx.query(statement.sql, statement.params);
        let records: unknown;
        if (request.records_format === 'csv' || request.records_format === 'tsv') {
          const cells = rows.rows.map((row) => built.fields.map((_, i) => row[`c${i}`] as string | null));
          records = copyCsv(cells, request.records_format === 'csv' ? ',' : '\t');
        } else {
          const text = rows.rows[0]?.['records'];
          records = typeof text === 'string' && text !== '[]' ? parseRecords(text, built.fields, request.records_format === 'lists' ? 'lists' : 'objects') : [];
        }
        const result: Record<string, unknown> = { ...request.echo, resource_id: entry.id, records, fields: built.fields };
        if (built.keyset !== undefined && request.include_next_page) {
          const last = await nextPage(tx, built);
          if (last !== undefined) result['next_page'] = { _id: { [built.keyset === 'desc' ? 'lt' : 'gt']: last } };
        }
        if (built.count !== undefined) {
          let total: number | undefined;
          let estimated = false;
          if (built.mayEstimate) {
            const estimate = await tx.query(`SELECT reltuples::BIGINT AS n FROM pg_class WHERE relname = $1`, [entry.id]);
            const n = Number(estimate.rows[0]?.['n']);
            if (Number.isFinite(n) && n >= (request.total_estimation_threshold as number)) [total, estimated] = [n, true];
          }
          if (total === undefined) {
            statement = built.count;
            total = Number((await tx.query(built.count.sql, built.count.params)).rows[0]?.['total']);
          }
          result['total'] = total;
          if (ckan === '2.11') result['total_was_estimated'] = estimated;
        }
        return result as unknown as SearchResult;
      }, { readOnly: true, statementTimeout: timeout, ...(signal === undefined ? {} : { signal }) });
    } catch (error) {
      throw databaseError(error, signal, () => invalidQuery(pgMessage(error), statement.sql, statement.params), 'Search took too long');
    }
  };

  const query = async (bound: Query, queryOptions: EngineQueryOptions = {}): Promise<QueryStream> => {
    const resource = bound.from.resource.kind === 'param' ? '' : bound.from.resource.value;
    const entry = await find(resource);
    if (entry === undefined) throw resourceNotFound(resource);
    let statements: QuerySql;
    if (isPlainQuery(bound)) {
      statements = querySql(bound, entry, queryOptions);
    } else {
      const sources = querySources(bound);
      const found = await Promise.all(sources.map((source) => Promise.all(unionMembers(source).map(async (member) => {
        const name = member.kind === 'param' ? '' : member.value;
        const each = await find(name);
        if (each === undefined) throw resourceNotFound(name);
        return each;
      }))));
      statements = shapedQuerySql(bound, found, queryOptions);
      // A join is counted first and refused past the bound, as on the memory engine (engine/memory/shaped.ts).
      let counting: { sql: string; params: readonly unknown[] } = { sql: '', params: [] };
      try {
        await db.transaction((tx) => checkJoinBound(tx, bound, found, queryOptions.maxJoinRows, (sql, params) => (counting = { sql, params })), {
          readOnly: true,
          statementTimeout: timeout,
          ...(queryOptions.signal === undefined ? {} : { signal: queryOptions.signal }),
        });
      } catch (error) {
        if (error instanceof QueryError) throw error;
        throw databaseError(error, queryOptions.signal, () => invalidQuery(pgMessage(error), counting.sql, counting.params), 'Query took too long');
      }
    }
    const signal = queryOptions.signal;
    return runQuery(db, statements, { ...queryOptions, statementTimeout: timeout }, (error, statement) =>
      databaseError(error, signal, () => invalidQuery(pgMessage(error), statement, statements.params), 'Query took too long'));
  };

  return {
    kind: options.kind,
    label: options.label,
    db,
    query,
    resources: async () => (await entries()).map(describe),
    resource: async (idOrAlias) => {
      const entry = await find(idOrAlias);
      return entry === undefined ? undefined : describe(entry);
    },
    search,
    info: async (idOrAlias, infoOptions = {}) => {
      const entry = await find(idOrAlias);
      if (entry === undefined) return undefined;
      const signal = infoOptions.signal;
      return db.transaction((tx) => datastoreInfo(tx, entry.id, entry.fields), { readOnly: true, statementTimeout: timeout, ...(signal === undefined ? {} : { signal }) });
    },
    searchSql: async (sql, sqlOptions = {}): Promise<SqlResult> => {
      const all = await entries();
      return runSearchSql(db, sql, {
        timeout,
        maxRows: sqlOptions.maxLimit ?? 32_000,
        ...(allowedFunctions === undefined ? {} : { allowedFunctions }),
        ...(sqlOptions.signal === undefined ? {} : { signal: sqlOptions.signal }),
        // Every table the statement reads must be a resource; private ones need a token.
        readable: (name) => {
          if (name === TABLE_METADATA) return true;
          const entry = all.find((e) => e.id === name || e.aliases.includes(name));
          const hidden = entry !== undefined && (entry.note.private === true || sqlOptions.privateIds?.has(entry.id) === true);
          return entry !== undefined && (!hidden || sqlOptions.token === true);
        },
      });
    },
    refresh: async () => {
      catalog = undefined;
      await entries();
    },
    close: () => db.close(),
  };
}

/** `_table_metadata` as a resource: CKAN lets anyone search it. */
async function tableMetadataEntry(db: Db): Promise<CatalogEntry | undefined> {
  const exists = await db.transaction((tx) => tx.query(`SELECT 1 FROM pg_class WHERE relname = $1 AND relkind = 'v'`, [TABLE_METADATA]), { readOnly: true });
  if (exists.rows.length === 0) return undefined;
  const fields: FieldInfo[] = [
    { id: '_id', type: 'int' },
    { id: 'name', type: 'name' as FieldInfo['type'] },
    { id: 'oid', type: 'oid' as FieldInfo['type'] },
    { id: 'alias_of', type: 'name' as FieldInfo['type'] },
  ];
  return { id: TABLE_METADATA, aliases: [], fields, note: {} };
}

async function nextPage(
  tx: { query(sql: string, params?: readonly unknown[]): Promise<{ readonly rows: readonly Record<string, unknown>[] }> },
  built: ReturnType<typeof buildSearch>,
): Promise<number | undefined> {
  // CKAN reads max/min(_id) of the page from a CTE over `*`, so it works when `fields` lacks `_id`.
  const ids = await tx.query(`SELECT ${built.keyset === 'desc' ? 'min' : 'max'}(_id) AS n FROM (${built.page}) AS p`, built.records.params);
  const n = ids.rows[0]?.['n'];
  return n === null || n === undefined ? undefined : Number(n);
}

/** CKAN's reading of its allowed-functions file: each line stripped, lower-cased unless written in double quotes. */
function allowedFunctionSet(lines: Iterable<string>): ReadonlySet<string> {
  const set = new Set<string>();
  for (const line of lines) {
    const name = line.trim();
    if (name !== '') set.add(name.startsWith('"') ? name : name.toLowerCase());
  }
  return set;
}

function pgMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}


/**
 * The engine interface: who answers a `datastore_search` request. The
 * server, the session (CLI and REPL) and embedders talk to an `Engine` and
 * never know which one is behind it (docs/engines.md): `memory` (rows in the
 * process, the evaluator), `pglite` (PostgreSQL in the process) or `postgres`
 * (a server by URL).
 */
import type { Query } from '../ast.js';
import type { CkanVersion, Facets, FieldInfo, ResourceMeta, Row, SearchResult } from '../datastore/types.js';

export type EngineKind = 'memory' | 'pglite' | 'postgres';

/**
 * How a data file's bytes that are not UTF-8 are read: refused with their
 * line and offset (the default), or each replaced by U+FFFD on purpose
 * (`--invalid-utf8 replace`). Here, not in node/files.ts, so the library's
 * declarations that name it need no Node types.
 */
export type InvalidUtf8 = 'refuse' | 'replace';
export const INVALID_UTF8_MODES: readonly InvalidUtf8[] = ['refuse', 'replace'];

/** The CKAN version whose request and response surface an engine answers with. */
export type { CkanVersion } from '../datastore/types.js';

/** A resource as an engine lists it: its id, aliases and CKAN field info. */
export interface ResourceInfo {
  readonly id: string;
  readonly aliases: readonly string[];
  /** starts with `_id`, as `datastore_search` returns them */
  readonly fields: readonly FieldInfo[];
  /** private resources need a valid token on the server */
  readonly private: boolean;
  /** the number of records, when the engine knows it without counting */
  readonly total?: number;
  /** where it was loaded from, for messages */
  readonly source?: string;
  /** its name, description and dataset, for a catalogue (`package_show`) */
  readonly meta?: ResourceMeta;
}

/**
 * `datastore_info`'s result for one resource (CKAN 2.11's
 * `resource_fields`): `meta` and the fields other than `_id`, each with its
 * `info` and its column's `schema`.
 */
export interface DatastoreInfo {
  readonly meta: {
    readonly id: string;
    readonly count: number;
    readonly table_type: string;
    readonly size: number;
    readonly db_size: number;
    readonly idx_size: number;
    readonly aliases: readonly string[];
  };
  readonly fields: readonly (FieldInfo & { readonly schema: ColumnSchema })[];
}

/** A column as `datastore_info` describes it (PostgreSQL's catalogue). */
export interface ColumnSchema {
  readonly native_type: string;
  readonly notnull: boolean;
  readonly index_name: string | null;
  readonly is_index: boolean;
  readonly uniquekey: boolean;
}

export interface EngineSearchOptions {
  /** aborts the running search (a PostgreSQL engine cancels the statement) */
  readonly signal?: AbortSignal;
  /** the cap on `limit`; default 32 000 (CKAN's `ckan.datastore.search.rows_max`) */
  readonly maxLimit?: number;
  /** which CKAN's parameters and answers to give; default `2.11` */
  readonly ckan?: CkanVersion;
}

/** Options of `searchSql`: who asks. */
export interface SearchSqlOptions extends EngineSearchOptions {
  /** the caller sent a valid token: private resources may be read */
  readonly token?: boolean;
  /** more resource ids that need a token (a server's `privateResources`), beside the engine's own private ones */
  readonly privateIds?: ReadonlySet<string>;
}

/** `datastore_search_sql`'s result: the records and the fields of one SELECT. */
export interface SqlResult {
  readonly sql: string;
  readonly fields: readonly FieldInfo[];
  readonly records: readonly Readonly<Record<string, unknown>>[];
  readonly records_truncated?: boolean;
}

/** Options of `Engine.query`. */
export interface EngineQueryOptions {
  /** stops the work: a PostgreSQL engine cancels the statement, the memory engine stops between batches */
  readonly signal?: AbortSignal;
  /** count every record the query matches (`QueryStream.total`); default false */
  readonly total?: boolean;
  /** every record unless the query says `limit` (`--all`); default: the query's limit, else 100 as datastore_search */
  readonly all?: boolean;
  /** records per batch; default 1000 */
  readonly batchSize?: number;
  /** the most rows a join may give: one that would give more is refused before it runs (`JOIN_TOO_LARGE`); default 10 000 000 */
  readonly maxJoinRows?: number;
}

/** A whole query's answer (docs/executor.md): its fields, then its records in batches, read as they are wanted. */
export interface QueryStream {
  /** the resource's id (an alias resolved) */
  readonly resource?: string;
  /** the fields of the records, in order (the `select` list, else every field with `_id` first) */
  readonly fields: readonly FieldInfo[];
  /** how many records the query matches before `offset` and `limit`; only when `total` was asked for */
  readonly total?: number;
  /** the records in the query's order; a reader that stops early releases what the engine holds */
  readonly batches: AsyncGenerator<readonly Row[], void, undefined>;
  /** the value counts of a query with `facet` (docs/aggregates.md) */
  readonly facets?: Facets;
}

/**
 * One interface for every engine. `search` takes the request as a client
 * sends it (parameters not yet validated) and either resolves with the
 * `result` of the response or rejects with a `DatastoreError` carrying the
 * status and error body CKAN would answer with.
 *
 * @example
 * const engine = await openEngine({ engine: 'memory', data: ['examples/data'] });
 * const result = await engine.search({ resource_id: 'courses', filters: { subject: 'math' }, limit: 2 });
 * result.records.length; // → 2
 * await engine.close();
 */
export interface Engine {
  readonly kind: EngineKind;
  /** one line for banners and `.engine`: what answers, and from where */
  readonly label: string;
  /** every resource, in load order */
  resources(): Promise<readonly ResourceInfo[]>;
  /** the resource with this id, else with this alias */
  resource(idOrAlias: string): Promise<ResourceInfo | undefined>;
  search(request: unknown, options?: EngineSearchOptions): Promise<SearchResult>;
  /**
   * A whole query (bound: no parameters left), answered by the engine itself in one pass or one
   * statement, with the meaning of docs/semantics.md and docs/beyond-the-request.md; not paged through
   * `search`. Unknown resources and fields fail as `search` fails for them.
   */
  query(query: Query, options?: EngineQueryOptions): Promise<QueryStream>;
  /**
   * `datastore_info` from the database's own catalogue (sizes, indexes); absent where there is none
   * (the server then describes the resource from `resource`)
   */
  info?(idOrAlias: string, options?: { readonly signal?: AbortSignal }): Promise<DatastoreInfo | undefined>;
  /** `datastore_search_sql`; absent where the engine cannot run SQL (a portal with it disabled) */
  searchSql?(sql: string, options?: SearchSqlOptions): Promise<SqlResult>;
  close(): Promise<void>;
}

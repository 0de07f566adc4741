/**
 * The client's public shape, fixed first so the CLI and the REPL can be
 * written against it while the implementation (connect.ts) grows.
 */
import type { Query } from '../ast.js';
import type { Params } from '../compile/bind.js';
import type { Plan, Target } from '../compile/plan.js';
import type { Facets, FieldInfo, ReadSummary, Row, SearchRequest, SearchResult } from '../datastore/types.js';

/** One request as it goes over the wire. */
export interface WireRequest {
  readonly method: 'GET' | 'POST';
  /** full URL, with the query string for a GET */
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body?: string;
}

/** What came back for one request. */
export interface Exchange {
  readonly status: number;
  readonly text: string;
  /** ms, from a `Retry-After` header */
  readonly retryAfter: number | undefined;
  /** where a redirect points (redirects are not followed: a POST must not turn into a GET) */
  readonly location: string | undefined;
}

/**
 * Sends one request and reads its answer whole; throws on a failure to get
 * one (an error with undici's or the system's `code`, which `classify` reads).
 */
export type Exchanger = (wire: WireRequest, signal: AbortSignal | undefined) => Promise<Exchange>;

/** An answer whose body is read as it arrives (a dump of a whole table). */
export interface StreamExchange {
  readonly status: number;
  /** header names in lower case, the first value of each */
  readonly headers: Readonly<Record<string, string>>;
  /** ms, from a `Retry-After` header */
  readonly retryAfter: number | undefined;
  /** the body in pieces; reading it to its end (or `cancel`) frees the connection */
  readonly body: AsyncIterable<Uint8Array | string>;
  /** gives the body up unread */
  cancel(): void;
}

/** Sends one request and gives its answer as soon as the headers are in. */
export type StreamExchanger = (wire: WireRequest, signal: AbortSignal | undefined) => Promise<StreamExchange>;

/** A file the portal streams (`/datastore/dump/<id>`), once its status said yes. */
export interface Download {
  /** `content-type` as sent, e.g. `text/csv; charset=utf-8` */
  readonly contentType: string | undefined;
  /** the file name of `content-disposition`, when it names one */
  readonly filename: string | undefined;
  readonly body: AsyncIterable<Uint8Array | string>;
  /** gives the body up unread */
  cancel(): void;
}

/** Options of `action` and `download`. */
export interface ActionOptions {
  readonly signal?: AbortSignal;
  /** default: the client's method (a GET sends each parameter in the query string, objects as JSON text) */
  readonly method?: 'GET' | 'POST';
}

/** What `search` accepts: a parsed query, query text, or a request. */
export type SearchInput = Query | string | SearchRequest;

export interface ClientOptions {
  /** portal base URL, e.g. `https://data.example.org` (no `/api/…`) */
  readonly url: string;
  /** sent raw in `Authorization`; never printed, logged or put in an error */
  readonly token?: string;
  /** language segment before `/api`, e.g. `en` or `de`; none by default */
  readonly language?: string;
  readonly method?: 'POST' | 'GET';
  /** milliseconds for headers and for the body, each; default 30 000 */
  readonly timeout?: number;
  /**
   * bytes of one response body the client reads before giving up with
   * `RESPONSE_TOO_LARGE`; default 256 MiB (32,000 wide records fit well
   * under it; a server sending junk without end does not)
   */
  readonly maxResponseBytes?: number;
  /** retries for 429/502/503/504 and connection failures; default 3 */
  readonly retries?: number;
  /** the `User-Agent` header; default `ckql` */
  readonly userAgent?: string;
  /**
   * the header the token is sent in: CKAN's `apitoken_header_name`,
   * `Authorization` unless the portal set another (`X-CKAN-API-Key`)
   */
  readonly tokenHeader?: string;
  /** requests in flight to the portal's host at once, across this process's clients; default 3 */
  readonly maxInFlight?: number;
  /** ms: the first retry waits up to this (full jitter), doubling per attempt; default 500 */
  readonly retryDelay?: number;
  /** ms: the longest wait between attempts; a longer `Retry-After` ends the retries with an error that says when to try again; default 30 000 */
  readonly maxRetryDelay?: number;
  /** called before each retry wait, e.g. for a "rate-limited, retrying in 4 s" line */
  readonly onRetry?: (info: RetryInfo) => void;
  /**
   * the portal's dialect (docs/beyond-the-request.md, Targets); detected once when not given
   * (status_show's ckan_version, else the 2.12 probe), and only for a query that CKAN 2.11 cannot
   * say whole. Such a query runs as a plan: the rest is applied to the fetched records locally;
   * with `sql`, `search` sends one datastore_search_sql SELECT, and `searchAll` one per page (LIMIT/OFFSET)
   */
  readonly target?: Target;
  /** the most records a plan may fetch to finish a query locally; default 100 000 */
  readonly maxScan?: number;
  /** the most rows a join may give (a plan's, or a local engine's): one past it is refused before it runs (`JOIN_TOO_LARGE`); default 10 000 000 */
  readonly maxJoinRows?: number;
  /** receives warnings about the options (a `Bearer ` token); default `process.emitWarning` */
  readonly onWarning?: (message: string) => void;
  /**
   * Answers each request in this process instead of over HTTP (e.g. the
   * local server's API, `openApi`): `url` then only names the server in
   * URLs the client shows, and no socket is opened.
   */
  readonly inProcess?: Exchanger;
  /** the same, for answers read as they arrive (`download`); without it, local data has no dump to download */
  readonly inProcessStream?: StreamExchanger;
  /**
   * Other sources a query may name, as `name:resource` (docs/aggregates.md,
   * joins across sources): `from enrolments e join other:courses c on …`
   * reads `enrolments` here and `courses` from `other`, and joins them.
   */
  readonly sources?: SourceDirectory;
}

/**
 * The sources a query may name as `name:resource`: a client each, or a
 * function that opens one when a query first names it (it is opened once).
 * @example
 * { local: connect({ url: 'http://127.0.0.1:8080' }), archive: async () => connect({ url: 'https://archive.example.org' }) }
 */
export type SourceDirectory = Readonly<Record<string, DatastoreClient | (() => Promise<DatastoreClient>)>>;

/** What a retry wait is about. */
export interface RetryInfo {
  /** 1 for the first retry */
  readonly attempt: number;
  /** ms until the next attempt */
  readonly delay: number;
  /** `HTTP 503`, `ECONNRESET`, … */
  readonly reason: string;
}

export interface SearchOptions {
  readonly params?: Params;
  /** aborts the search: a request under way, the wait before a retry, and a plan between pages */
  readonly signal?: AbortSignal;
  /**
   * count every record a plan matches (`total`), reading past its limit to do so; by default a plan
   * stops at its limit and says in `read.more` whether more exist (a portal's own answer to one
   * request always has the portal's `total`)
   */
  readonly total?: boolean;
}

export interface SearchAllOptions extends SearchOptions {
  /** records per request; default 1000 */
  readonly pageSize?: number;
  /** called after each page, for progress lines */
  readonly onPage?: (progress: { readonly fetched: number; readonly total: number | undefined }) => void;
}

/** Options of `stream`. */
export interface StreamOptions extends SearchAllOptions {
  /** every record unless the query says `limit` (as `searchAll`); default: the query's limit, else 100 (as `search`) */
  readonly all?: boolean;
  /** count every record the query matches (`total()`), as `SearchOptions.total` */
  readonly total?: boolean;
}

/**
 * A query under way (docs/executor.md): its fields before any record, then
 * its records as they are read; reading stops the run where the reader stops.
 */
export interface RecordStream {
  readonly fields: readonly FieldInfo[];
  readonly records: AsyncGenerator<Row, void, undefined>;
  /** once the records have been read: every match's count, when it was counted or given */
  total(): number | undefined;
  /** once the records have been read: what was read to give them */
  read(): ReadSummary;
  /** a query with `facet`: its value counts (docs/aggregates.md) */
  readonly facets?: Facets | undefined;
}

/** A request as it would go over the wire, for `explain` and curl lines; the token is redacted. */
export interface PreparedRequest {
  readonly method: 'POST' | 'GET';
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  /** JSON text for POST */
  readonly body?: string;
  readonly request: SearchRequest;
  /** the header the token goes in, when not `Authorization` (for curl lines) */
  readonly tokenHeader?: string;
}

/**
 * What `explain` shows of a query: the plan the client runs for it (for the
 * target given, else detected when CKAN 2.11's request cannot say the
 * query whole), and its first request as it would go over the wire.
 */
export interface Explanation {
  /** the plan; absent for a request given as such, which is sent as it is */
  readonly plan?: Plan;
  /**
   * how the plan's target was chosen: `given` (an option, `setTarget`),
   * `detected` (status_show or the 2.12 probe, once per client), or `whole`
   * (CKAN 2.11's request says the whole query, which every portal answers), or `local` (local data
   * with no target asked for: its engine answers the whole query in the process; `steps` says how),
   * or `sources` (a join across sources: each side's target is its own source's, in `sides`)
   */
  readonly chosen: 'given' | 'detected' | 'whole' | 'local' | 'sources';
  /**
   * a join across sources (`chosen: 'sources'`): each resource's source as the
   * query names it, the target its request is written for, and its first
   * request as it would go over the wire (the token redacted)
   */
  readonly sides?: readonly { readonly source: string; readonly target: Target; readonly request: PreparedRequest }[];
  /** the datastore_search request (a plan's pushed-down part, which is paged through); absent for the sql target */
  readonly request?: PreparedRequest;
  /** the sql target's SELECT and the datastore_search_sql URL it is posted to */
  readonly sql?: { readonly url: string; readonly text: string };
  /** the operator tree that runs, one line per step, the root first (docs/executor.md); absent for a request given as such */
  readonly steps?: readonly string[];
}

export interface DatastoreClient {
  /** the target set by the options or `setTarget`, else the one detected; undefined before any detection */
  readonly target: Target | undefined;
  /** sets the target (undefined: detect it again on the next query that needs it) */
  setTarget(target: Target | undefined): void;
  /** the most records a plan may read (`ClientOptions.maxScan`; default 100 000) */
  readonly maxScan: number;
  /** sets it (undefined: the default) for the queries from now on */
  setMaxScan(max: number | undefined): void;
  /** the most rows a join may give (`ClientOptions.maxJoinRows`; default 10 000 000) */
  readonly maxJoinRows: number;
  /** sets it (undefined: the default) for the queries from now on */
  setMaxJoinRows(max: number | undefined): void;
  /** the portal's target, detected once (status_show, else the 2.12 probe on this resource) unless one is set */
  detectTarget(resourceId: string, signal?: AbortSignal): Promise<Target>;
  readonly url: string;
  readonly language: string | undefined;
  readonly method: 'POST' | 'GET';
  /** whether a token is configured (the token itself is never exposed) */
  readonly hasToken: boolean;
  search(input: SearchInput, options?: SearchOptions): Promise<SearchResult>;
  /**
   * every matching record, in constant memory: paging with `offset` until `total` (with 2.12's
   * `next_page` where it can), or with one LIMIT/OFFSET SELECT per page for the sql target
   */
  searchAll(input: SearchInput, options?: SearchAllOptions): AsyncIterableIterator<Row>;
  /**
   * A query's fields, then its records as they are read (what `search` and `searchAll` read through):
   * a writer that needs the columns before the first record starts here.
   * @example
   * const run = await client.stream('from enrolments where status != withdrawn', { all: true });
   * writeHeader(run.fields);
   * for await (const record of run.records) writeRow(record);
   * run.read(); // → { requests: 21, records: 20000, more: false }
   */
  stream(input: SearchInput, options?: StreamOptions): Promise<RecordStream>;
  /** the request `search` would send, with `Authorization` redacted */
  prepare(input: SearchInput, params?: Params): PreparedRequest;
  /**
   * The plan `search` runs for a query and its first request, detecting the
   * portal's target (and keeping it) when no target is set and CKAN 2.11's
   * request cannot say the query whole. Nothing else is sent.
   * @example
   * const { plan, chosen, request } = await client.explain('from enrolments where grade >= 5 and status != withdrawn');
   * // on a CKAN 2.12 portal: chosen 'detected', plan.target 'ckan-2.12',
   * // request.request { resource_id: 'enrolments', filters: { grade: { gte: 5 } } },
   * // plan.residual: from enrolments where status != withdrawn
   */
  explain(input: SearchInput, options?: SearchOptions): Promise<Explanation>;
  /**
   * A client for the same portal (same token, method and options) under
   * another language segment (`/de/api/…`; undefined for none). It has its
   * own connections: close it too.
   */
  withLanguage(language: string | undefined): DatastoreClient;
  /**
   * Any other CKAN action (`package_search`, `package_show`, `datastore_info`, …):
   * its `result`, or the typed error of its answer, with the same token,
   * retries and politeness as a search.
   * @example
   * await client.action('package_show', { id: 'air-quality' })
   * // POST https://data.example.org/api/action/package_show {"id":"air-quality"} → { name: "air-quality", resources: [ … ], … }
   */
  action(name: string, body: Readonly<Record<string, unknown>>, options?: ActionOptions): Promise<unknown>;
  /**
   * A file below the portal's root, streamed (`datastore/dump/<id>` with its
   * parameters): resolves once the portal said 200, and fails as an action does.
   */
  download(path: string, params: Readonly<Record<string, string>>, options?: { readonly signal?: AbortSignal }): Promise<Download>;
  close(): Promise<void>;
}

/**
 * The client for `datastore_search`: plans, paging and target detection over
 * one exchanger, undici's HTTP (http.ts, loaded on the first request) or a
 * server in the same process (`ClientOptions.inProcess`).
 */

import type { Query } from '../ast.js';
import { compile, plan } from '../compile/compile.js';
import { DEFAULT_MAX_JOIN_ROWS, DEFAULT_MAX_SCAN } from '../compile/plan.js';
import { saysWhole, splitSource, type Plan, type Target } from '../compile/plan.js';
import { portalTree } from '../execute/build.js';
import type { Portal } from '../execute/build.js';
import { describeTree, execute, readAll } from '../execute/run.js';
import { planResult, recordStream } from './results.js';
import { withSources } from './sources.js';
import { bind } from '../compile/bind.js';
import { parse } from '../syntax/parse.js';
import type { SqlRequest } from '../compile/sql.js';
import { identifier, TOTAL_COLUMN } from '../compile/sql.js';
import { fetchCkanVersion, probeNextPage, targetOfVersion } from './target-detect.js';
import { unionFields, unionTable } from '../compile/union.js';
import type { UnionMember, UnionTable } from '../compile/union.js';
import type { Params } from '../compile/bind.js';
import { DatastoreError, toolError, validationError } from '../errors.js';
import type { FieldInfo, Row, SearchRequest, SearchResult } from '../datastore/types.js';
import { normalizeRequest } from '../datastore/validate.js';
import { answerEmpty, hasEmptyListFilter } from './empty.js';
import { actionUrl, queryStringFor } from './encode.js';
import { sendRequest, sendSearch } from './transport.js';
import { readSqlResponse } from './response.js';
import type { Exchanger, TransportOptions, WireRequest } from './transport.js';
import type { Http } from './http.js';
import { callAction, downloadFile } from './action.js';
import { withResourceNames } from './resource-names.js';
import type { ActionContext } from './action.js';
import { DEFAULT_MAX_IN_FLIGHT, hostLimiter, limitExchange, limitStream } from './politeness.js';
import type {
  ClientOptions, DatastoreClient, Explanation, PreparedRequest, RecordStream, SearchAllOptions, SearchInput, SearchOptions, StreamOptions,
} from './types.js';

export { recordStream } from './results.js';
export type {
  ClientOptions, DatastoreClient, Explanation, PreparedRequest, RecordStream, RetryInfo, SearchAllOptions, SearchInput, SearchOptions, StreamOptions,
} from './types.js';

const DEFAULTS = {
  method: 'POST',
  timeout: 30_000,
  retries: 3,
  retryDelay: 500,
  maxRetryDelay: 30_000,
  pageSize: 1_000,
  userAgent: 'ckql',
  maxResponseBytes: 256 * 1024 * 1024,
} as const;

/**
 * Connects to a portal (or `ckql serve`). Nothing is sent until the first
 * search; `close()` releases the sockets.
 *
 * @example
 * const client = connect({ url: 'http://127.0.0.1:8080', language: 'en' });
 * const result = await client.search('from courses where stage in (active, survey) limit 10');
 * // POST http://127.0.0.1:8080/en/api/action/datastore_search
 * // {"resource_id":"courses","filters":{"stage":["active","survey"]},"limit":10}
 * for await (const record of client.searchAll('from courses where subject = math', { pageSize: 500 })) {
 *   console.log(record.title);
 * }
 * await client.close();
 */
export function connect(options: ClientOptions): DatastoreClient {
  const base = portalUrl(options.url);
  const language = options.language === '' ? undefined : options.language;
  const method = options.method ?? DEFAULTS.method;
  const endpoint = actionUrl(base, language);
  const timeout = positive(options.timeout, DEFAULTS.timeout, 'timeout');
  // Kept in this closure only: not a property of the client, not in `prepare`, not in an error.
  const token = options.token === undefined || options.token === '' ? undefined : options.token;
  if (token !== undefined && /^bearer\s/i.test(token)) {
    const warning =
      'the token starts with "Bearer ": datastore_search takes the raw token in the Authorization header, with no scheme word; it is sent as given';
    if (options.onWarning !== undefined) options.onWarning(warning);
    else process.emitWarning(warning, { code: 'CKQL_BEARER_TOKEN' });
  }

  // HTTP (undici) is loaded on the first request, and not at all for a server in the process.
  const maxResponseBytes = positive(options.maxResponseBytes, DEFAULTS.maxResponseBytes, 'maxResponseBytes');
  let http: Promise<Http> | undefined;
  // Politeness (politeness.ts): at most `maxInFlight` requests to the portal's host at once.
  const maxInFlight = positive(options.maxInFlight, DEFAULT_MAX_IN_FLIGHT, 'maxInFlight');
  const limiter = hostLimiter(base.origin, maxInFlight);
  const openedHttp = (): Promise<Http> =>
    (http ??= import('./http.js').then(({ openHttp }) => openHttp({ timeout, maxResponseBytes, origin: base.origin, maxInFlight })));
  const exchange: Exchanger = options.inProcess ?? limitExchange(async (wire, signal) => (await openedHttp()).exchange(wire, signal), limiter);
  const streamer = options.inProcess === undefined
    ? limitStream(async (wire, signal) => (await openedHttp()).stream(wire, signal), limiter)
    : options.inProcessStream;
  const transport: TransportOptions = {
    exchange,
    timeout,
    retries: Math.max(0, Math.floor(options.retries ?? DEFAULTS.retries)),
    retryDelay: Math.max(0, options.retryDelay ?? DEFAULTS.retryDelay),
    maxRetryDelay: Math.max(0, options.maxRetryDelay ?? DEFAULTS.maxRetryDelay),
    origin: base.origin,
    token,
    onRetry: options.onRetry,
    history: { succeeded: 0 },
  };
  const headers: Record<string, string> = { accept: 'application/json', 'user-agent': options.userAgent ?? DEFAULTS.userAgent };
  const tokenHeader = tokenHeaderOf(options.tokenHeader);
  if (token !== undefined) headers[tokenHeader] = token;
  const postHeaders = { ...headers, 'content-type': 'application/json' };
  let closed = false;

  const wireFor = (request: SearchRequest): WireRequest =>
    method === 'GET'
      ? { method, url: `${endpoint}?${queryStringFor(request)}`, headers }
      : { method, url: endpoint, headers: postHeaders, body: JSON.stringify(request) };

  const actions: ActionContext = { base, language, method, headers, transport, stream: streamer, closed: () => closed };

  const send = (request: SearchRequest, signal: AbortSignal | undefined): Promise<SearchResult> => {
    if (closed) throw new DatastoreError('ABORTED', 'this client is closed; connect() again to send more requests');
    return sendSearch(wireFor(request), transport, signal);
  };

  // The portal's dialect: the option, else detected once (status_show, else the 2.12 probe) and kept.
  let target: Target | undefined = options.target;
  let detected: Promise<Target> | undefined;
  let found: Target | undefined;
  let maxScan = options.maxScan;
  let maxJoinRows = options.maxJoinRows;
  const statusUrl = endpoint.replace(/datastore_search$/, 'status_show');
  const sqlUrl = endpoint.replace(/datastore_search$/, 'datastore_search_sql');
  const targetFor = (resourceId: string, signal: AbortSignal | undefined): Promise<Target> => {
    if (target !== undefined) return Promise.resolve(target);
    return (detected ??= (async () => {
      const version = await fetchCkanVersion(statusUrl, { exchange, headers, ...(signal === undefined ? {} : { signal }) });
      // The probe goes as POST, whatever the client's method: it is about the version, not the query.
      found = version !== undefined
        ? targetOfVersion(version)
        : await probeNextPage(resourceId, (request) =>
            sendSearch({ method: 'POST', url: endpoint, headers: postHeaders, body: JSON.stringify(request) }, transport, signal));
      return found;
    })());
  };

  /**
   * How a query runs: as CKAN 2.11's request when that says it whole (no
   * detection needed), else planned for the portal's target; a request
   * given as such is sent as it is (undefined).
   */
  const planOf = async (input: SearchInput, params: Params | undefined, signal: AbortSignal | undefined): Promise<Plan | undefined> => {
    if (typeof input !== 'string' && !isQuery(input)) return undefined;
    const withMax = { ...(maxScan === undefined ? {} : { maxScan }), ...(maxJoinRows === undefined ? {} : { maxJoinRows }) };
    const basic = plan(input, { target: 'ckan-2.11', params, ...withMax });
    if (saysWhole(basic)) return basic;
    const portal = await targetFor((basic.request as SearchRequest).resource_id, signal);
    if (portal === 'ckan-2.11') return basic;
    return plan(input, { target: portal, params, ...withMax, ...(portal === 'sql' ? await joinFields(basic, signal) : {}) });
  };

  /**
   * The sql target names each field's table; in a join, which resource has
   * an unqualified field is the portal's to say, so each resource's fields
   * are read first (a `limit: 0` request each, as a plan counts each side).
   * `select *, …` names every field (docs/expressions.md): its fields are read first too.
   */
  const joinFields = async (basic: Plan, signal: AbortSignal | undefined): Promise<{ fields?: FieldInfo[][]; unions?: (UnionTable | undefined)[] }> => {
    const sides = basic.shaped?.sides ?? [];
    const star = basic.shaped?.query.select?.items.some((item) => item.value.kind === 'star') === true;
    const union = sides.some((side) => side.union !== undefined);
    // Across sources the sql target refuses the join itself.
    if ((sides.length < 2 && !star && !union) || sides.some((side) => splitSource(side.resource).source !== undefined)) return {};
    const fieldsOf = async (resource: string): Promise<FieldInfo[]> => [...((await send({ resource_id: resource, limit: 0 }, signal)).fields ?? [])];
    const fields: FieldInfo[][] = [];
    const unions: (UnionTable | undefined)[] = [];
    for (const side of sides) {
      if (side.union === undefined) {
        fields.push(await fieldsOf(side.resource));
        unions.push(undefined);
        continue;
      }
      // A union's SQL names each of its resources' columns (compile/union.ts).
      const members: UnionMember[] = [];
      for (const resource of side.union.members) members.push({ resource, fields: await fieldsOf(resource.value) });
      fields.push(unionFields(members));
      unions.push(unionTable(members, identifier));
    }
    return union ? { fields, unions } : { fields };
  };

  /** `datastore_search_sql` with the sql target's text, read back as a search result. */
  const sendSql = async (sql: string, signal: AbortSignal | undefined): Promise<SearchResult> => {
    if (closed) throw new DatastoreError('ABORTED', 'this client is closed; connect() again to send more requests');
    let answer: SearchResult;
    try {
      answer = await sendRequest({ method: 'POST', url: sqlUrl, headers: postHeaders, body: JSON.stringify({ sql }) }, transport, signal, readSqlResponse);
    } catch (error) {
      // CKAN without the action (`ckan.datastore.sqlsearch.enabled` off, its default): the target is wrong, not the query.
      if (error instanceof DatastoreError && error.code === 'BAD_REQUEST' && /Action name not known: datastore_search_sql/.test(error.message)) {
        throw toolError('USAGE', [`${base.origin} does not answer datastore_search_sql (most portals leave it disabled), so the sql target cannot be used there`], {
          hint: 'use the ckan-2.11 or ckan-2.12 target (--target, a profile\'s target:, or leave it out to detect it)',
          cause: error,
        });
      }
      throw error;
    }
    return sqlResult(answer, base.origin);
  };

  const portal: Portal = { send, sendSql, origin: base.origin };

  /**
   * A plan as the tree that runs it (docs/executor.md). A request given as
   * such, or a query CKAN 2.11 says whole, is one request (`search`) or its
   * pages (`searchAll`).
   */
  const treeFor = (planned: Plan | undefined, input: SearchInput, params: Params | undefined, all: boolean, total: boolean, pageSize: number, counts?: ReadonlyMap<string, number>) => {
    const known: Target = (target ?? found) === 'ckan-2.12' ? 'ckan-2.12' : 'ckan-2.11';
    // A request 2.11 says whole is also 2.12's: on a portal known to be 2.12 its pages may follow next_page.
    const paged = planned !== undefined && saysWhole(planned) && planned.target === 'ckan-2.11' ? { ...planned, target: known } : planned;
    const whole: Plan = paged ?? {
      target: known,
      request: requestOf(input, params, target),
      local: { where: false, select: false, distinct: false, limit: false, order: false },
      maxScan: maxScan ?? DEFAULT_MAX_SCAN,
    };
    return portalTree(whole, boundQuery(input, params), portal, { all, total, pageSize, counts });
  };

  const search = async (input: SearchInput, searchOptions: SearchOptions = {}): Promise<SearchResult> => {
    const planned = await planOf(input, searchOptions.params, searchOptions.signal);
    if (planned === undefined || (saysWhole(planned) && planned.target !== 'sql')) {
      // One request says the whole query: the portal's own answer, as it is.
      const request = planned === undefined ? requestOf(input, searchOptions.params, target) : (planned.request as SearchRequest);
      if (answersEmptyItself(request, planned)) return answerEmpty(request, (probe) => send(probe, searchOptions.signal));
      return send(request, searchOptions.signal);
    }
    const tree = treeFor(planned, input, searchOptions.params, false, searchOptions.total === true, DEFAULTS.pageSize);
    const run = await execute(tree, { signal: searchOptions.signal });
    const records = await readAll(run);
    return planResult(planned, boundQuery(input, searchOptions.params), run, records);
  };

  // CKAN 2.11 answers an empty-list filter with an SQL error, so the client answers it itself (empty.ts);
  // 2.12 reads it as no record and takes the request as it is (with its 2.12 operators, which the
  // client's own 2.11 reading would refuse).
  const answersEmptyItself = (request: SearchRequest, planned: Plan | undefined): boolean =>
    (planned?.target ?? target ?? found) !== 'ckan-2.12' && hasEmptyListFilter(request);

  const stream = async (input: SearchInput, streamOptions: StreamOptions = {}): Promise<RecordStream> => {
    const all = streamOptions.all === true;
    const pageSize = Math.max(1, Math.floor(streamOptions.pageSize ?? DEFAULTS.pageSize));
    const planned = await planOf(input, streamOptions.params, streamOptions.signal);
    if (planned === undefined || (saysWhole(planned) && planned.target !== 'sql')) {
      const request = planned === undefined ? requestOf(input, streamOptions.params, target) : (planned.request as SearchRequest);
      if (answersEmptyItself(request, planned)) {
        // Nothing to read, but the same errors as `search` (an unknown field, resource or token).
        const empty = await answerEmpty(request, (probe) => send(probe, streamOptions.signal));
        streamOptions.onPage?.({ fetched: 0, total: 0 });
        return recordStream({ fields: empty.fields, total: () => 0, summary: () => ({ requests: 1, records: 0, more: false }), batches: (async function* () {})(), resource: request.resource_id });
      }
    }
    const tree = treeFor(planned, input, streamOptions.params, all, streamOptions.total === true, pageSize);
    return recordStream(await execute(tree, { signal: streamOptions.signal, ...(streamOptions.onPage === undefined ? {} : { onPage: streamOptions.onPage }) }));
  };

  async function* searchAll(input: SearchInput, allOptions: SearchAllOptions = {}): AsyncGenerator<Row, void, undefined> {
    yield* (await stream(input, { ...allOptions, all: true })).records;
  }

  const prepare = (input: SearchInput, params?: Params): PreparedRequest => {
    // A query that runs as a plan shows the request it starts with (for the target given or found, else 2.11's).
    const planned = typeof input === 'string' || isQuery(input)
      ? plan(input, { target: (target ?? found) === 'ckan-2.12' ? 'ckan-2.12' : 'ckan-2.11', ...(params === undefined ? {} : { params }) })
      : undefined;
    const request = planned === undefined ? requestOf(input, params) : (planned.request as SearchRequest);
    return redacted(wireFor(request), request, tokenHeader);
  };

  /**
   * The portal's count of each request a grouped, joined or faceted plan
   * reads whole (a `limit: 0` request each), so explain can say how many
   * pages they take; a count the portal refuses is left out.
   */
  const sideCounts = async (planned: Plan, signal: AbortSignal | undefined): Promise<Map<string, number>> => {
    const counts = new Map<string, number>();
    for (const side of [...(planned.shaped?.sides ?? []), ...(planned.facets?.sides ?? [])]) {
      try {
        const answer = await send({ ...side.request, limit: 0 }, signal);
        if (answer.total !== undefined) counts.set(JSON.stringify(side.request), answer.total);
      } catch {
        // explain still shows the plan; the run will report the portal's error
      }
    }
    return counts;
  };

  const explain = async (input: SearchInput, explainOptions: SearchOptions = {}): Promise<Explanation> => {
    const planned = await planOf(input, explainOptions.params, explainOptions.signal);
    if (planned === undefined) return { chosen: target === undefined ? 'whole' : 'given', request: prepare(input, explainOptions.params) };
    const chosen = planned.target === 'ckan-2.11' && saysWhole(planned) ? 'whole' : target === undefined ? 'detected' : 'given';
    const steps = describeTree(treeFor(planned, input, explainOptions.params, false, false, DEFAULTS.pageSize, await sideCounts(planned, explainOptions.signal)));
    if (planned.target === 'sql') return { plan: planned, chosen, steps, sql: { url: sqlUrl, text: (planned.request as SqlRequest).sql } };
    const request = planned.request as SearchRequest;
    return { plan: planned, chosen, steps, request: redacted(wireFor(request), request, tokenHeader) };
  };

  // `dataset/resource` names are resolved to ids before anything else sees them (resource-names.ts);
  // a query naming other sources (`name:resource`) reads each resource from its own (sources.ts).
  const own = withResourceNames({
    get target() {
      return target ?? found;
    },
    get maxScan() {
      return maxScan ?? DEFAULT_MAX_SCAN;
    },
    setMaxScan: (next: number | undefined) => {
      if (next !== undefined && (!Number.isSafeInteger(next) || next < 1)) throw toolError('USAGE', [`maxScan must be a whole number of records, 1 or more, not ${String(next)}`]);
      maxScan = next;
    },
    get maxJoinRows() {
      return maxJoinRows ?? DEFAULT_MAX_JOIN_ROWS;
    },
    setMaxJoinRows: (next: number | undefined) => {
      if (next !== undefined && (!Number.isSafeInteger(next) || next < 1)) throw toolError('USAGE', [`maxJoinRows must be a whole number of rows, 1 or more, not ${String(next)}`]);
      maxJoinRows = next;
    },
    setTarget: (next: Target | undefined) => {
      target = next;
      detected = undefined;
      found = undefined;
    },
    detectTarget: (resourceId: string, signal?: AbortSignal) => targetFor(resourceId, signal),
    url: base.href.replace(/\/$/, ''),
    language,
    method,
    hasToken: token !== undefined,
    search,
    searchAll,
    stream,
    prepare,
    explain,
    withLanguage: (next) => connect({ ...options, ...(maxScan === undefined ? {} : { maxScan }), ...(maxJoinRows === undefined ? {} : { maxJoinRows }), ...(next === undefined ? { language: '' } : { language: next }) }),
    action: (name, body, actionOptions) => callAction(actions, name, body, actionOptions),
    download: (path, params, downloadOptions) => downloadFile(actions, path, params, downloadOptions),
    close: async () => {
      if (closed) return;
      closed = true;
      if (http !== undefined) await (await http).close();
    },
  });
  return options.sources === undefined ? own : withSources(own, options.sources);
}

/** A request as it goes over the wire, with the token's header shown as `<redacted>`. */
function redacted(wire: WireRequest, request: SearchRequest, tokenHeader: string): PreparedRequest {
  const shown = { ...wire.headers };
  if (shown[tokenHeader] !== undefined) shown[tokenHeader] = '<redacted>';
  return {
    method: wire.method,
    url: wire.url,
    headers: shown,
    ...(wire.body === undefined ? {} : { body: wire.body }),
    request,
    ...(tokenHeader === 'authorization' ? {} : { tokenHeader }),
  };
}

/** The token's header name in lower case (CKAN's `apitoken_header_name`); `authorization` by default. */
function tokenHeaderOf(name: string | undefined): string {
  if (name === undefined || name === '') return 'authorization';
  if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name)) throw toolError('USAGE', [`${JSON.stringify(name)} is not an HTTP header name`]);
  return name.toLowerCase();
}

function portalUrl(text: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw toolError('USAGE', [`${JSON.stringify(text)} is not a URL; give the portal's base URL, e.g. https://data.example.org`]);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw toolError('USAGE', [`${JSON.stringify(url.protocol)} URLs are not supported; give an http:// or https:// URL`]);
  }
  if (/\/api(\/\d+)?\/action(\/|$)/.test(url.pathname)) {
    throw toolError('USAGE', [
      `give the portal's base URL without the /api/… path (found ${JSON.stringify(url.pathname)}); ckql adds /api/action/datastore_search itself`,
    ]);
  }
  url.search = '';
  url.hash = '';
  return url;
}

function positive(value: number | undefined, fallback: number, name: string): number {
  if (value === undefined) return fallback;
  if (!Number.isFinite(value) || value <= 0) throw toolError('USAGE', [`${name} must be a positive number, not ${String(value)}`]);
  return value;
}

/**
 * A request given as such, checked as the portal's version reads it: 2.12's
 * filter operators unless the target is known to be 2.11.
 */
function requestOf(input: SearchInput, params: Params | undefined, target?: Target): SearchRequest {
  if (typeof input === 'string') return compile(input, params);
  if (isQuery(input)) return compile(input, params);
  const request = normalizeRequest(input, target === 'ckan-2.11' ? {} : { ckan: '2.12' });
  if (request.records_format === 'csv' || request.records_format === 'tsv') {
    // CKAN answers these with `records` as one text (docs/ckan-2.11-reference.md §5), not the records a result holds.
    throw validationError(
      'records_format',
      `${request.records_format} gives the records as one text, which a search result does not hold; ask for objects or lists, or download ${request.records_format} from the portal's /datastore/dump/<id> (ckql export)`,
    );
  }
  return request;
}

function isQuery(input: Query | SearchRequest): input is Query {
  return (input as { kind?: unknown }).kind === 'query';
}

/**
 * A `datastore_search_sql` answer as a search result: CKAN's `_full_text`
 * and ckql's total column left out, the total read from that column (a page
 * with no records has none to carry it).
 */
function sqlResult(answer: SearchResult, origin: string): SearchResult {
  const first = answer.records[0];
  // The column is PostgreSQL's count(*) OVER () (a bigint, which CKAN writes as a number or as its digits), where the SELECT counts.
  const counted = first?.[TOTAL_COLUMN];
  const total = counted === undefined ? undefined : Number(counted);
  if (total !== undefined && !(Number.isSafeInteger(total) && total >= 0)) {
    throw new DatastoreError('INVALID_RESPONSE', `${origin} answered a datastore_search_sql result whose records[0].${TOTAL_COLUMN} (the count) is not a whole number of 0 or more`);
  }
  const hidden = (name: string) => name === TOTAL_COLUMN || name === '_full_text';
  const records = answer.records.map((record) => Object.fromEntries(Object.entries(record).filter(([name]) => !hidden(name))) as Row);
  const result: Record<string, unknown> = {
    ...answer,
    fields: answer.fields.filter((f) => !hidden(f.id)),
    records,
    total_was_estimated: false,
    include_total: true,
    records_format: 'objects',
  };
  if (total === undefined) delete result.total;
  else result.total = total;
  delete result.sql;
  return result as unknown as SearchResult;
}

/** A query (text or AST), bound; a request given as such is read back as one (only the sql target's paging needs it). */
function boundQuery(input: SearchInput, params: Params | undefined): Query {
  if (typeof input === 'string') return params === undefined ? parse(input) : bind(parse(input), params);
  if (isQuery(input)) return params === undefined ? input : bind(input, params);
  return { kind: 'query', span: { start: 0, end: 0 }, from: { kind: 'from', span: { start: 0, end: 0 }, resource: { kind: 'string', span: { start: 0, end: 0 }, value: input.resource_id } } };
}

/**
 * The undici client for `datastore_search`: one dispatcher per client (an
 * `Agent` with keep-alive, or an `EnvHttpProxyAgent` when proxy variables are
 * set), never the global dispatcher, never the global fetch.
 */
import { Agent, EnvHttpProxyAgent } from 'undici';
import type { Dispatcher } from 'undici';

import type { Query } from '../ast.js';
import { compile, plan } from '../compile/compile.js';
import type { Plan, Target } from '../compile/plan.js';
import { runPlan } from './plan-run.js';
import type { Params } from '../compile/bind.js';
import { DatastoreError, toolError } from '../errors.js';
import type { Row, SearchRequest, SearchResult } from '../datastore/types.js';
import { normalizeRequest } from '../datastore/validate.js';
import { answerEmpty, hasEmptyListFilter } from './empty.js';
import { actionUrl, queryStringFor } from './encode.js';
import { sendSearch } from './transport.js';
import type { TransportOptions, WireRequest } from './transport.js';
import type {
  ClientOptions, DatastoreClient, PreparedRequest, SearchAllOptions, SearchInput, SearchOptions,
} from './types.js';

export type {
  ClientOptions, DatastoreClient, PreparedRequest, RetryInfo, SearchAllOptions, SearchInput, SearchOptions,
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

/** Two to four sockets per origin is polite to an open-data portal. */
const CONNECTIONS = 4;

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
/** The first and last record of a page as text, to notice a page sent twice; undefined for an empty or unprintable page. */
function pageSignature(records: readonly Row[]): string | undefined {
  if (records.length === 0) return undefined;
  try {
    return JSON.stringify([records.length, records[0], records[records.length - 1]]);
  } catch {
    return undefined;
  }
}

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

  const dispatcher = createDispatcher(timeout);
  const transport: TransportOptions = {
    dispatcher,
    timeout,
    retries: Math.max(0, Math.floor(options.retries ?? DEFAULTS.retries)),
    retryDelay: Math.max(0, options.retryDelay ?? DEFAULTS.retryDelay),
    maxRetryDelay: Math.max(0, options.maxRetryDelay ?? DEFAULTS.maxRetryDelay),
    origin: base.origin,
    token,
    maxResponseBytes: positive(options.maxResponseBytes, DEFAULTS.maxResponseBytes, 'maxResponseBytes'),
    onRetry: options.onRetry,
  };
  const headers: Record<string, string> = { accept: 'application/json', 'user-agent': options.userAgent ?? DEFAULTS.userAgent };
  if (token !== undefined) headers.authorization = token;
  const postHeaders = { ...headers, 'content-type': 'application/json' };
  let closed = false;

  const wireFor = (request: SearchRequest): WireRequest =>
    method === 'GET'
      ? { method, url: `${endpoint}?${queryStringFor(request)}`, headers }
      : { method, url: endpoint, headers: postHeaders, body: JSON.stringify(request) };

  const send = (request: SearchRequest, signal: AbortSignal | undefined): Promise<SearchResult> => {
    if (closed) throw new DatastoreError('ABORTED', 'this client is closed; connect() again to send more requests');
    return sendSearch(wireFor(request), transport, signal);
  };

  const target: Target = options.target ?? 'ckan-2.11';
  const maxScan = options.maxScan;
  /** A query that needs local work, as a plan; undefined for a request or a query the target says whole. */
  const planOf = (input: SearchInput, params: Params | undefined): Plan | undefined => {
    if (typeof input !== 'string' && !isQuery(input)) return undefined;
    if (target === 'sql') throw toolError('USAGE', ['the client sends datastore_search requests; run the sql target with ckql compile --target sql']);
    const planned = plan(input, { target, params, ...(maxScan === undefined ? {} : { maxScan }) });
    return planned.residual === undefined ? undefined : planned;
  };

  const search = async (input: SearchInput, searchOptions: SearchOptions = {}): Promise<SearchResult> => {
    const planned = planOf(input, searchOptions.params);
    if (planned !== undefined) {
      const run = await runPlan(planned, (r) => send(r, searchOptions.signal), { pageSize: DEFAULTS.pageSize, all: false, count: true });
      const records = [];
      for await (const record of run.records) records.push(record);
      const residual = planned.residual!;
      const result: Record<string, unknown> = {
        resource_id: (planned.request as SearchRequest).resource_id,
        fields: run.fields,
        records,
        total: run.matched(),
        total_was_estimated: false,
        limit: residual.limit?.value.kind === 'number' ? residual.limit.value.value : 100,
      };
      if (residual.offset?.value.kind === 'number') result.offset = residual.offset.value.value;
      result.include_total = true;
      result.records_format = 'objects';
      return result as unknown as SearchResult;
    }
    const request = requestOf(input, searchOptions.params);
    if (hasEmptyListFilter(request)) return answerEmpty(request, (probe) => send(probe, searchOptions.signal));
    return send(request, searchOptions.signal);
  };

  async function* searchAll(input: SearchInput, allOptions: SearchAllOptions = {}): AsyncGenerator<Row, void, undefined> {
    const pageSize = Math.max(1, Math.floor(allOptions.pageSize ?? DEFAULTS.pageSize));
    const planned = planOf(input, allOptions.params);
    if (planned !== undefined) {
      const run = await runPlan(planned, (r) => send(r, allOptions.signal), { pageSize, all: true, count: false });
      let fetched = 0;
      for await (const record of run.records) {
        fetched++;
        yield record;
      }
      allOptions.onPage?.({ fetched, total: run.matched() });
      return;
    }
    const request = requestOf(input, allOptions.params);
    if (hasEmptyListFilter(request)) {
      // Nothing to page through, but the same errors as `search` (an unknown field, resource or token).
      await answerEmpty(request, (probe) => send(probe, allOptions.signal));
      allOptions.onPage?.({ fetched: 0, total: 0 });
      return;
    }
    const start = request.offset ?? 0;
    const wanted = request.limit ?? Number.POSITIVE_INFINITY;
    const countTotal = request.include_total !== false;
    let fetched = 0;
    let total: number | undefined;
    let previous: string | undefined;
    while (fetched < wanted) {
      const limit = Math.min(pageSize, wanted - fetched);
      // Only the first page asks for the total: counting is the expensive part of a CKAN search.
      const page = await send(
        { ...request, limit, offset: start + fetched, ...(fetched === 0 && countTotal ? {} : { include_total: false }) },
        allOptions.signal,
      );
      if (fetched === 0 && typeof page.total === 'number') total = page.total;
      // A server that ignores `offset` sends the same page again and again; without a total nothing else would stop it.
      const seen = pageSignature(page.records);
      if (seen !== undefined && seen === previous) {
        throw new DatastoreError(
          'INVALID_RESPONSE',
          `${base.origin} answered offset ${start + fetched} with the same records as offset ${start + fetched - page.records.length}: it ignores offset, so paging cannot go on (${fetched} records read)`,
        );
      }
      previous = seen;
      fetched += page.records.length;
      allOptions.onPage?.({ fetched, total: total === undefined ? undefined : Math.min(Math.max(0, total - start), wanted) });
      for (const record of page.records) yield record;
      // A short page is the end; compare with the server's `limit`, which may be capped below ours.
      const served = typeof page.limit === 'number' ? Math.min(page.limit, limit) : limit;
      if (page.records.length === 0 || page.records.length < served) return;
      if (total !== undefined && start + fetched >= total) return;
    }
  }

  const prepare = (input: SearchInput, params?: Params): PreparedRequest => {
    // A query that runs as a plan shows the request it starts with.
    const planned = planOf(input, params);
    const request = planned === undefined ? requestOf(input, params) : (planned.request as SearchRequest);
    const wire = wireFor(request);
    const shown = { ...wire.headers };
    if (shown.authorization !== undefined) shown.authorization = '<redacted>';
    return {
      method: wire.method,
      url: wire.url,
      headers: shown,
      ...(wire.body === undefined ? {} : { body: wire.body }),
      request,
    };
  };

  return {
    url: base.href.replace(/\/$/, ''),
    language,
    method,
    hasToken: token !== undefined,
    search,
    searchAll,
    prepare,
    close: async () => {
      if (closed) return;
      closed = true;
      await dispatcher.destroy();
    },
  };
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

/** Proxy variables are read when the client is made; lower-case names win, as undici reads them. */
function createDispatcher(timeout: number): Dispatcher {
  const agentOptions = {
    connections: CONNECTIONS,
    keepAliveTimeout: 10_000,
    headersTimeout: timeout,
    bodyTimeout: timeout,
    connect: { timeout },
  };
  const env = process.env;
  const proxied = [env.http_proxy, env.HTTP_PROXY, env.https_proxy, env.HTTPS_PROXY].some((v) => v !== undefined && v !== '');
  return proxied ? new EnvHttpProxyAgent(agentOptions) : new Agent(agentOptions);
}

function requestOf(input: SearchInput, params: Params | undefined): SearchRequest {
  if (typeof input === 'string') return compile(input, params);
  if (isQuery(input)) return compile(input, params);
  return normalizeRequest(input);
}

function isQuery(input: Query | SearchRequest): input is Query {
  return (input as { kind?: unknown }).kind === 'query';
}

/**
 * The CKAN action API the local server speaks, apart from the socket: a
 * request (method, path and query, the headers that matter, the body as
 * text) in, an answer (status, type, text) out. `server.ts` puts it on
 * `node:http`; a client in the same process can call it directly (the
 * REPL and the CLI on local data), so both paths answer alike. The wire
 * rules (paths, methods, envelope, errors) are CKAN's (docs/semantics.md);
 * this module never imports the AST.
 */
import { DatastoreError, resourceNotFound, toolError, validationError } from '../errors.js';
import type { CkanVersion, ErrorBody, FieldInfo, RecordsFormat, SearchRequest, SearchResult, Table } from '../datastore/types.js';
import { checkAgainstTable, rankColumns, validateSearch, withFields } from '../datastore/validate.js';
import type { ValidatedSearch } from '../datastore/validate.js';
import { keysetDirection, linksFor, nextPageOf, resultPieces } from '../datastore/response.js';
import type { ResultParts } from '../datastore/response.js';
import { memoryEngine } from '../engine/memory/engine.js';
import type { TableLookup } from '../engine/memory/engine.js';
import type { Engine, ResourceInfo } from '../engine/types.js';
import { tokenCheck } from './auth.js';
import { buildEnvelopes } from './envelope.js';
import type { Envelopes } from './envelope.js';
import { accessDenied, excerpt, serviceError } from './errors.js';
import { TABLE_METADATA, TABLE_METADATA_FIELDS, statusResult, tableMetadata } from './metadata.js';
import { bodyKind, requestFromForm, requestFromJson, requestFromQueryString } from './params.js';
import { SQL_ACTION, sqlResultJson } from './search-sql.js';
import { buildRoutes, pathOf, unknownAction, unknownPath } from './routes.js';
import { datastoreInfoResult, packageSearch, packageShow, resourceShow } from './catalog.js';
import type { CatalogAccess } from './catalog.js';
import { answerDump, dumpResourceOf } from './dump.js';
import type { Route } from './routes.js';

/** What the API answers from: an engine, or tables to serve with the memory engine. */
export type ServedData =
  | { readonly engine: Engine; readonly tables?: undefined }
  | { readonly tables: readonly Table[] | TableLookup; readonly engine?: undefined };

/** How the API answers, whatever carries it. */
export interface ApiSettings {
  /** language segments accepted before `/api`; default `['en', 'de']` */
  readonly languages?: readonly string[];
  /** the cap on `limit`; default 32 000 */
  readonly maxLimit?: number;
  /** API tokens that open private resources */
  readonly tokens?: readonly string[];
  /** ids or aliases of private resources, besides tables marked `private` */
  readonly privateResources?: readonly string[];
  /** whose `datastore_search` to speak: parameters, errors, response keys, `status_show`; default `2.11` */
  readonly ckan?: CkanVersion;
}

/** One request, as the API reads it. */
export interface ApiRequest {
  readonly method: string;
  /** the path and query string, e.g. `/api/action/datastore_search?resource_id=courses` */
  readonly url: string;
  readonly authorization?: string | undefined;
  readonly contentType?: string | undefined;
  /** a POST's body as text */
  readonly body?: string;
}

/** One answer: what goes in the status line, `content-type` and the body. */
export interface ApiAnswer {
  readonly status: number;
  readonly type: string;
  /** the body, or its beginning when `more` follows */
  readonly text: string;
  /**
   * The rest of a large body, made piece by piece as it is taken, so that a
   * server writes it as its client reads (a client that stops reading holds
   * one piece in the server, not the whole answer).
   */
  readonly more?: Iterator<string>;
  /** headers besides type, length and CORS origin */
  readonly headers?: Readonly<Record<string, string>>;
  /**
   * The rest of a body made page by page from the engine (a dump): written
   * after `text` as the client reads it; a server stops asking for pages
   * when its client goes away.
   */
  readonly stream?: AsyncIterable<string>;
  /** the error behind a 500, for the server's log; never sent */
  readonly internal?: unknown;
}

export interface Api {
  /** Answers a request; `signal` aborts when the asker goes away (a PostgreSQL engine cancels its statement). */
  answer(request: ApiRequest, signal?: AbortSignal): Promise<ApiAnswer>;
  /**
   * Whether a `signal` can stop anything: false over the memory engine, which
   * answers a search within the call, and whose dump a server stops by no
   * longer asking for pages. A server then makes no `AbortController` per
   * request: making one and its signal was about a tenth of the memory
   * server's JavaScript per request (`bench/profile/server.ts`).
   */
  readonly cancellable: boolean;
  /**
   * The error answer for a request refused before it could be read (its
   * action's envelope when `url` names one), e.g. a body that is too large.
   */
  refuse(url: string | undefined, error: unknown): ApiAnswer;
}

export const JSON_TYPE = 'application/json;charset=utf-8';
const JAVASCRIPT_TYPE = 'application/javascript;charset=utf-8';
const HTML_TYPE = 'text/html;charset=utf-8';

export const CORS_HEADERS = {
  'access-control-allow-origin': '*',
  'access-control-allow-methods': 'GET, POST, OPTIONS',
  'access-control-allow-headers': 'Authorization, Content-Type',
  'access-control-max-age': '600',
} as const;

const DEFAULTS = { languages: ['en', 'de'], maxLimit: 32_000 } as const;

/**
 * The API over `data`; `publicUrl` is the base of the `help` links. Fails
 * (USAGE) when a name in `privateResources` matches no resource, so a typo
 * never serves a table that was meant to be private.
 * @example
 * const api = await openApi({ tables: await loadResources(['examples/data']) }, 'http://127.0.0.1:8080');
 * await api.answer({ method: 'GET', url: '/api/action/datastore_search?resource_id=courses&limit=1' });
 * // → { status: 200, type: "application/json;charset=utf-8", text: "{\"help\": …, \"success\": true, …}" }
 */
export async function openApi(data: ServedData & ApiSettings, publicUrl: string): Promise<Api> {
  const engine = engineOf(data);
  const privateIds = await privateResourceIds(engine, data.privateResources ?? []);
  return apiFor(engine, privateIds, data, publicUrl);
}

/**
 * The API over an engine whose private resources are known (see
 * `privateResourceIds`); `openApi` does both.
 */
export function apiFor(engine: Engine, privateIds: ReadonlySet<string>, options: ApiSettings, publicUrl: string): Api {
  const languages = options.languages ?? DEFAULTS.languages;
  const maxLimit = options.maxLimit ?? DEFAULTS.maxLimit;
  const ckan: CkanVersion = options.ckan ?? '2.11';
  const routes = buildRoutes(languages);
  const envelopes = buildEnvelopes(publicUrl, languages);
  const authorized = tokenCheck(options.tokens ?? []);
  const limits = { maxLimit, ckan };

  // each route's envelopes, found by the route itself (no key text made per request)
  const byRoute = new Map<Route, Envelopes>();
  const envelopesOf = (route: Route): Envelopes => {
    let found = byRoute.get(route);
    if (found === undefined) byRoute.set(route, (found = envelopes(route.language, route.action)));
    return found;
  };

  const failure = (route: Route | undefined, error: unknown): ApiAnswer => {
    if (error instanceof DatastoreError && error.status !== undefined && error.body !== undefined) {
      // A body CKAN writes as a bare JSON string (a 400 for unreadable data) has no envelope.
      const text = typeof error.body === 'string' ? JSON.stringify(error.body) : envelopes(route?.language, route?.action).error(error.body);
      return { status: error.status, type: JSON_TYPE, text, ...(error.status === 405 ? { headers: { allow: 'GET, HEAD, POST, OPTIONS' } } : {}) };
    }
    // Not an error a request can legitimately cause: answer 500 and keep serving.
    const body: ErrorBody = { __type: 'Internal Server Error', message: 'Internal Server Error' };
    return { status: 500, type: JSON_TYPE, text: envelopes(route?.language, route?.action).error(body), internal: error };
  };

  // CKAN's order: the schema, then the resource and access, then the backend's checks against the
  // table, then the search; so a private table's field names never show in an error.
  const search = async (authorization: string | undefined, route: Route, raw: Record<string, unknown>, query: string, signal: AbortSignal | undefined): Promise<Iterator<string>> => {
    const validated = validateSearch(raw, limits);
    const request = validated.request;
    let answering = engine;
    let info: ResourceInfo | undefined;
    if (request.resource_id === TABLE_METADATA) {
      // Anyone may search it; it lists names, never data. A PostgreSQL engine searches CKAN's view;
      // over the memory engine it is a table of the resource list.
      if (engine.kind === 'memory') {
        answering = memoryEngine([tableMetadata(await engine.resources())]);
        info = await answering.resource(TABLE_METADATA);
      } else info = { id: TABLE_METADATA, aliases: [], fields: TABLE_METADATA_FIELDS, private: false };
    } else {
      info = await engine.resource(request.resource_id);
      if (info === undefined) throw resourceNotFound(request.resource_id);
      const hidden = info.private || privateIds.has(info.id);
      if (hidden && !authorized(authorization)) throw accessDenied(request.resource_id);
    }
    if (info === undefined) throw resourceNotFound(request.resource_id);
    checkAgainstTable(validated, info.fields);
    const plan = searchPlan(request, info.fields, ckan, answering.kind !== 'memory');
    const result = await answering.search(plan.engineRequest, signal === undefined ? limits : { ...limits, signal });
    return resultPieces(responseParts(validated, plan, result, info, route, query), plan.sharedFields ? sharedFieldsJson(result.fields) : undefined);
  };

  // datastore_search_sql: the engine checks the statement; the token decides whether private tables may be read.
  const searchSql = async (authorization: string | undefined, raw: Record<string, unknown>, signal: AbortSignal | undefined): Promise<string> => {
    if (engine.searchSql === undefined) {
      // A portal with the action disabled does not know it.
      const text = `${ckan === '2.11' ? 'Bad request - ' : 'Bad request: '}Action name not known: ${SQL_ACTION}`;
      throw new DatastoreError('BAD_REQUEST', text, { body: text });
    }
    const sql = raw.sql;
    if (typeof sql !== 'string' || sql === '') throw validationError('sql', 'Missing value');
    const token = authorized(authorization);
    // An asker that goes away cancels the statement, as for a search.
    return sqlResultJson(await engine.searchSql(sql, { maxLimit, token, privateIds, ...(signal === undefined ? {} : { signal }) }), raw);
  };

  const run = async (
    request: ApiRequest, route: Route, raw: Record<string, unknown>, query: string, callback: string | undefined, signal: AbortSignal | undefined,
  ): Promise<ApiAnswer> => {
    let authorization = request.authorization;
    if ('callback' in raw) {
      // CKAN drops `callback` from the parameters (JSONP) and answers anonymously.
      delete raw.callback;
      authorization = undefined;
    }
    const pieces =
      route.action === 'status_show'
        ? [JSON.stringify(statusResult(ckan, publicUrl))].values()
        : route.action === SQL_ACTION
          ? [await searchSql(authorization, raw, signal)].values()
          : route.action === 'datastore_search'
            ? await search(authorization, route, raw, query, signal)
            : [JSON.stringify(await catalogAction(route.action, raw, { authorized: authorized(authorization), privateIds }, signal))].values();
    const [head, tail] = envelopesOf(route).successAround;
    return callback !== undefined && request.method === 'GET'
      ? { status: 200, type: JAVASCRIPT_TYPE, text: `${escapeHtml(callback)}(${head}`, more: followedBy(pieces, `${tail});`) }
      : { status: 200, type: JSON_TYPE, text: head, more: followedBy(pieces, tail) };
  };

  // What CKAN keeps beside the datastore, for the resources served (catalog.ts).
  const catalogAction = (action: Route['action'], raw: Record<string, unknown>, access: CatalogAccess, signal: AbortSignal | undefined): Promise<unknown> => {
    switch (action) {
      case 'package_search':
        return packageSearch(engine, raw, access, publicUrl);
      case 'package_show':
        return packageShow(engine, raw, access, publicUrl);
      case 'resource_show':
        return resourceShow(engine, raw, access, publicUrl);
      default:
        return datastoreInfoResult(engine, raw, access, ckan, signal);
    }
  };

  // `/datastore/dump/<id>`: the whole resource as a file (dump.ts).
  const dump = async (request: ApiRequest, id: string, query: string, signal: AbortSignal | undefined): Promise<ApiAnswer> => {
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      return { status: 405, type: HTML_TYPE, text: 'Method not allowed: the dump is read with GET\n', headers: { allow: 'GET, HEAD' } };
    }
    // A private resource the token does not open is as missing as one that is not there (CKAN answers 404 for both).
    const info = await engine.resource(id);
    const allowed = info !== undefined && (!(info.private || privateIds.has(info.id)) || authorized(request.authorization));
    return answerDump(engine, id, new URLSearchParams(query), { ckan, maxLimit, readable: () => allowed }, signal);
  };

  /** The error for a path that is no route (and no dump). */
  const notARoute = (path: string): DatastoreError => {
    const action = unknownAction(path, languages);
    if (action === undefined) return unknownPath(path, languages);
    const text = `${ckan === '2.11' ? 'Bad request - ' : 'Bad request: '}Action name not known: ${excerpt(action.name)}`;
    return new DatastoreError('BAD_REQUEST', text, { body: text });
  };

  const answer = async (request: ApiRequest, signal?: AbortSignal): Promise<ApiAnswer> => {
    let route: Route | undefined;
    try {
      const url = request.url;
      const mark = url.indexOf('?');
      const path = mark === -1 ? url : url.slice(0, mark);
      const query = mark === -1 ? '' : url.slice(mark + 1);
      // the action paths first: one `Map.get`; a dump's path is never one of them
      route = routes.get(path);
      if (route === undefined) {
        const dumped = dumpResourceOf(path, languages);
        if (dumped !== undefined) return await dump(request, dumped, query, signal);
        throw notARoute(path);
      }
      const callback = query === '' ? undefined : callbackOf(query);
      switch (request.method) {
        // HEAD as GET, as CKAN's Flask routes answer it; node:http leaves the body out
        case 'GET':
        case 'HEAD':
          return await run(request, route, requestFromQueryString(query), query, callback, signal);
        case 'POST': {
          const text = request.body ?? '';
          const kind = bodyKind(request.contentType);
          // CKAN reads a POST's parameters from its URL when it has any, and then ignores the body.
          if (kind === 'form' && text !== '') return await run(request, route, requestFromForm(text, ckan), query, callback, signal);
          if (query !== '') return await run(request, route, requestFromQueryString(query), query, callback, signal);
          if (kind === 'unsupported' && text !== '') return { status: 415, type: HTML_TYPE, text: UNSUPPORTED_MEDIA_TYPE };
          return await run(request, route, requestFromJson(text, ckan), '', callback, signal);
        }
        case 'OPTIONS':
          return { status: 204, type: '', text: '', headers: CORS_HEADERS };
        default:
          throw serviceError('METHOD_NOT_ALLOWED', `Method not allowed: ${JSON.stringify(request.method)}; use GET (query string) or POST (JSON body)`);
      }
    } catch (error) {
      return failure(route, error);
    }
  };

  const refuse = (url: string | undefined, error: unknown): ApiAnswer => {
    return failure(url === undefined ? undefined : routes.get(pathOf(url)), error);
  };

  return { answer, refuse, cancellable: engine.kind !== 'memory' };
}

/** `pieces`, then `tail`. */
function* followedBy(pieces: Iterator<string>, tail: string): Generator<string, void, undefined> {
  for (let next = pieces.next(); next.done !== true; next = pieces.next()) yield next.value;
  yield tail;
}

/**
 * An answer as a client reads a streamed one (the in-process stand-in for
 * HTTP): its status, headers, and body piece by piece.
 * @example
 * const stream = streamOf(await api.answer({ method: 'GET', url: '/datastore/dump/courses' }));
 * for await (const piece of stream.body) process.stdout.write(piece);
 */
export function streamOf(answer: ApiAnswer): {
  status: number;
  headers: Record<string, string>;
  retryAfter: undefined;
  body: AsyncIterable<string>;
  cancel: () => void;
} {
  let cancelled = false;
  const headers: Record<string, string> = { 'content-type': answer.type };
  for (const [name, value] of Object.entries(answer.headers ?? {})) headers[name.toLowerCase()] = value;
  return {
    status: answer.status,
    headers,
    retryAfter: undefined,
    body: (async function* () {
      if (answer.text !== '') yield answer.text;
      if (answer.stream !== undefined) {
        for await (const piece of answer.stream) {
          if (cancelled) return;
          yield piece;
        }
      }
      if (answer.more === undefined) return;
      for (let next = answer.more.next(); next.done !== true && !cancelled; next = answer.more.next()) yield next.value;
    })(),
    cancel: () => {
      cancelled = true;
    },
  };
}

/**
 * An answer's whole body (`text`, then every piece of `more`).
 * @example
 * wholeText({ status: 200, type: JSON_TYPE, text: '{"a":', more: ['1', '}'].values() }) // '{"a":1}'
 */
export function wholeText(answer: ApiAnswer): string {
  if (answer.more === undefined) return answer.text;
  let text = answer.text;
  for (let next = answer.more.next(); next.done !== true; next = answer.more.next()) text += next.value;
  return text;
}

/** The JSONP `callback` of a query string, if any (CKAN wraps only a GET's 200 answer). */
function callbackOf(query: string): string | undefined {
  if (!query.includes('callback=')) return undefined;
  const value = new URLSearchParams(query).get('callback');
  return value === null ? undefined : value;
}

/** Python's `html.escape`, which CKAN applies to a JSONP callback name. */
function escapeHtml(text: string): string {
  return text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;').replaceAll('"', '&quot;').replaceAll("'", '&#x27;');
}

/** Flask's answer to a body that is not JSON where JSON is read (CKAN renders it in its error page). */
const UNSUPPORTED_MEDIA_TYPE =
  "<!doctype html>\n<html lang=en>\n<title>415 Unsupported Media Type</title>\n<h1>Unsupported Media Type</h1>\n<p>Did not attempt to load JSON data because the request Content-Type was not &#39;application/json&#39;.</p>\n";

/**
 * How the server answers a request: which request the engine runs (rank
 * columns are the server's; `_id` is added when `next_page` needs it) and
 * what the response shows.
 */
interface SearchPlan {
  readonly engineRequest: SearchRequest;
  readonly rank: readonly string[];
  /** `_id` was added to `fields` for `next_page` and is not shown */
  readonly hiddenId: boolean;
  /** the response's fields are the table's own list (cache its JSON) */
  readonly sharedFields: boolean;
}

function searchPlan(request: SearchRequest, fields: readonly FieldInfo[], ckan: CkanVersion, engineRanks: boolean): SearchPlan {
  const rank = rankColumns(request, fields);
  let engineFields = request.fields;
  // An engine that ranks (PostgreSQL's ts_rank) answers the rank columns itself; the memory engine does not.
  if (engineFields !== undefined && rank.length > 0 && !engineRanks) engineFields = engineFields.filter((name) => !rank.includes(name));
  let hiddenId = false;
  if (ckan === '2.12' && request.include_next_page === true && engineFields !== undefined && !engineFields.includes('_id') && keysetDirection(request) !== undefined) {
    engineFields = [...engineFields, '_id'];
    hiddenId = true;
  }
  // The server writes `records_format` itself: every engine answers with objects.
  const engineRequest =
    engineFields === request.fields && request.records_format === undefined ? request : withFields(request, engineFields, ['records_format']);
  return { engineRequest, rank, hiddenId, sharedFields: request.fields === undefined && rank.length === 0 };
}

function responseParts(
  validated: ValidatedSearch,
  plan: SearchPlan,
  result: SearchResult,
  info: ResourceInfo,
  route: Route,
  query: string,
): ResultParts {
  const { request, ckan } = validated;
  let outputFields: readonly FieldInfo[] = result.fields;
  // Rank columns the engine did not give (the memory engine does not rank) are written as `RANK`.
  const missingRank = plan.rank.filter((name) => !result.fields.some((f) => f.id === name));
  if (missingRank.length > 0) {
    const rankField = (id: string): FieldInfo => ({ id, type: 'float' });
    outputFields =
      request.fields === undefined
        ? [...result.fields, ...missingRank.map(rankField)]
        : [...new Set(request.fields)].map((name) => (plan.rank.includes(name) ? rankField(name) : (result.fields.find((f) => f.id === name) ?? { id: name, type: 'text' })));
  }
  if (plan.hiddenId) outputFields = outputFields.filter((f) => f.id !== '_id' || request.fields?.includes('_id') === true);
  const recordsFormat: RecordsFormat = request.records_format ?? 'objects';
  const limit = result.limit;
  const offset = request.offset ?? 0;
  const total = request.include_total === false ? undefined : result.total;
  const searching = request.q !== undefined || request.full_text !== undefined;
  const unfiltered = request.filters === undefined && !searching && request.distinct !== true;
  const threshold = request.total_estimation_threshold;
  let nextPage: ResultParts['nextPage'];
  if (ckan === '2.12' && request.include_next_page === true) {
    const ids: number[] = [];
    for (const record of result.records) if (typeof record._id === 'number') ids.push(record._id);
    nextPage = nextPageOf(request, ids);
  }
  // optional keys set one by one rather than spread in: this runs for every search a server answers
  const parts: { -readonly [K in keyof ResultParts]: ResultParts[K] } = {
    ckan,
    echo: validated.echo,
    resourceId: info.id,
    outputFields,
    records: result.records,
    recordsFormat,
  };
  if (total !== undefined) {
    parts.total = total;
    if (ckan === '2.11') parts.totalWasEstimated = threshold !== undefined && threshold !== null && unfiltered && total >= threshold;
  }
  if (ckan === '2.11') parts.links = linksFor(route.linkPath, query, offset, limit);
  if (nextPage !== undefined) parts.nextPage = nextPage;
  return parts;
}

/** JSON texts of tables' field lists, by the list: a served table's fields do not change (`Table` is read-only). */
const fieldsJsonByList = new WeakMap<readonly FieldInfo[], string>();

function sharedFieldsJson(fields: readonly FieldInfo[]): string {
  let json = fieldsJsonByList.get(fields);
  if (json === undefined) {
    json = JSON.stringify(fields);
    fieldsJsonByList.set(fields, json);
  }
  return json;
}

export function engineOf(data: ServedData): Engine {
  // A list of tables goes through `Catalog` (in the memory engine), so ids win over aliases and duplicates are refused.
  return data.engine ?? memoryEngine(data.tables);
}

/** The ids of the resources named in `names`; a name that matches no resource is an error. */
export async function privateResourceIds(engine: Engine, names: readonly string[]): Promise<ReadonlySet<string>> {
  const ids = new Set<string>();
  for (const name of names) {
    const info = await engine.resource(name);
    if (info === undefined) {
      const known = (await engine.resources()).map((r) => r.aliases[0] ?? r.id).join(', ');
      throw toolError('USAGE', [`cannot make ${JSON.stringify(name)} private: no resource has that id or alias (loaded: ${known || 'none'})`]);
    }
    ids.add(info.id);
  }
  return ids;
}

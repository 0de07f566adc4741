/**
 * The local `datastore_search` server: plain `node:http` over any `Engine`
 * (docs/engines.md). The wire rules (paths, methods, envelope, errors) are
 * CKAN's (docs/semantics.md); this module never imports the AST.
 */
import { STATUS_CODES, createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';

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
import { buildEnvelopes, helpUrl } from './envelope.js';
import { accessDenied, excerpt, serviceError } from './errors.js';
import { TABLE_METADATA, statusResult, tableMetadata } from './metadata.js';
import { bodyKind, requestFromForm, requestFromJson, requestFromQueryString } from './params.js';
import { SQL_ACTION, sqlResult } from './search-sql.js';
import { buildRoutes, unknownAction, unknownPath } from './routes.js';
import type { Route } from './routes.js';

export type { TableLookup } from '../engine/memory/engine.js';

/** What the server answers from: an engine, or tables to serve with the memory engine. */
export type ServedData =
  | { readonly engine: Engine; readonly tables?: undefined }
  | { readonly tables: readonly Table[] | TableLookup; readonly engine?: undefined };

interface ServerSettings {
  /** default `127.0.0.1` */
  readonly host?: string;
  /** default 0: a free port, see `RunningServer.port` */
  readonly port?: number;
  /** language segments accepted before `/api`; default `['en', 'de']` */
  readonly languages?: readonly string[];
  /** the cap on `limit`; default 32 000 */
  readonly maxLimit?: number;
  /** the largest POST body in bytes; default 1 MiB */
  readonly maxBody?: number;
  /** API tokens that open private resources */
  readonly tokens?: readonly string[];
  /** ids or aliases of private resources, besides tables marked `private` */
  readonly privateResources?: readonly string[];
  /** one line per request (method, path, status); never headers, never tokens */
  readonly log?: (line: string) => void;
  /** ms to receive a request's headers; default 10 000 */
  readonly headersTimeout?: number;
  /** ms to receive a whole request, body included; default 30 000 */
  readonly requestTimeout?: number;
  /** ms an idle keep-alive connection stays open; default 5 000 */
  readonly keepAliveTimeout?: number;
  /** bytes of request line and headers (a GET's query string counts); default 32 KiB */
  readonly maxHeaderSize?: number;
  /** whose `datastore_search` to speak: parameters, errors, response keys, `status_show`; default `2.11` */
  readonly ckan?: CkanVersion;
}

/** `engine` (any engine), or `tables` (loaded once with `loadResources`, or a `Catalog`) for the memory engine. */
export type ServerOptions = ServedData & ServerSettings;

export interface RunningServer {
  /** e.g. `http://127.0.0.1:8080`: the base URL a client connects to */
  readonly url: string;
  readonly port: number;
  readonly host: string;
  /** stops accepting, closes idle keep-alive connections, and resolves when every connection is gone */
  close(): Promise<void>;
}

/** What `createRequestHandler` needs: the server options plus the URL the `help` links use. */
export type HandlerOptions = ServedData &
  Pick<ServerSettings, 'languages' | 'maxLimit' | 'maxBody' | 'tokens' | 'privateResources' | 'log' | 'ckan'> & {
    /** base of the `help` links, e.g. `http://127.0.0.1:8080` */
    readonly publicUrl: string;
  };

const DEFAULTS = {
  host: '127.0.0.1',
  languages: ['en', 'de'],
  maxLimit: 32_000,
  maxBody: 1024 * 1024,
  headersTimeout: 10_000,
  requestTimeout: 30_000,
  keepAliveTimeout: 5_000,
  maxHeaderSize: 32 * 1024,
} as const;

/** Characters of an answer sent whole, with its length; a longer answer is written piece by piece as the client reads. */
const WHOLE_ANSWER_CHARS = 256 * 1024;
/** How long a connection being closed may still drain what the client sends, so it reads our answer. */
const LINGER_MS = 500;
/** How long `close()` waits for requests in flight before it closes their connections. */
const CLOSE_GRACE_MS = 1_000;

const JSON_TYPE = 'application/json;charset=utf-8';
const JAVASCRIPT_TYPE = 'application/javascript;charset=utf-8';
const HTML_TYPE = 'text/html;charset=utf-8';
/** The headers of every answer, in the order they are written; `content-length` differs per answer. */
function answerHeaders(length: number, type: string): (string | number)[] {
  return ['content-type', type, 'content-length', length, 'access-control-allow-origin', '*'];
}

const CORS_HEADERS = {
  'access-control-allow-origin': '*',
  'access-control-allow-methods': 'GET, POST, OPTIONS',
  'access-control-allow-headers': 'Authorization, Content-Type',
  'access-control-max-age': '600',
} as const;

/**
 * Starts a server and resolves once it listens.
 *
 * @example
 * const server = await startServer({ tables: await loadResources(['examples/data']), port: 0 });
 * // POST {server.url}/api/action/datastore_search {"resource_id": "courses", "limit": 1}
 * // → {"help": "…", "success": true, "result": {"records": [ … ], "total": …, "_links": { … }, …}}
 * await server.close();
 */
export async function startServer(options: ServerOptions): Promise<RunningServer> {
  const host = options.host ?? DEFAULTS.host;
  const headersTimeout = options.headersTimeout ?? DEFAULTS.headersTimeout;
  const requestTimeout = Math.max(options.requestTimeout ?? DEFAULTS.requestTimeout, headersTimeout);
  const maxBody = options.maxBody ?? DEFAULTS.maxBody;
  const server = createServer({
    headersTimeout,
    requestTimeout,
    keepAliveTimeout: options.keepAliveTimeout ?? DEFAULTS.keepAliveTimeout,
    maxHeaderSize: options.maxHeaderSize ?? DEFAULTS.maxHeaderSize,
    // Timeouts are only noticed at this interval (Node's default is 30 s).
    connectionsCheckingInterval: Math.max(50, Math.min(1_000, Math.floor(headersTimeout / 4))),
  });
  server.maxHeadersCount = 100;
  // A client that stops reading our answer (or sending anything) is dropped rather than holding its buffers.
  server.setTimeout(requestTimeout);
  // Validate the options before listening, so a typo in `privateResources` never serves a table.
  const engine = engineOf(options);
  const privateIds = await privateResourceIds(engine, options.privateResources ?? []);

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const url = `http://${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}`;
  const handle = handlerFor(engine, privateIds, { ...options, publicUrl: url });
  server.on('request', handle);
  server.on('checkContinue', (req: IncomingMessage, res: ServerResponse) => {
    // Refuse an announced oversize body before the client sends it.
    if (Number(req.headers['content-length']) > maxBody) handle(req, res);
    else {
      res.writeContinue();
      handle(req, res);
    }
  });
  server.on('clientError', clientErrorAnswer(url));

  let closing: Promise<void> | undefined;
  return {
    url,
    port: address.port,
    host,
    close: () => (closing ??= closeServer(server)),
  };
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve, reject) => {
    server.close((error) => (error ? reject(error) : resolve()));
    server.closeIdleConnections();
    setTimeout(() => server.closeAllConnections(), CLOSE_GRACE_MS).unref();
  });
}

function handlerFor(
  engine: Engine,
  privateIds: ReadonlySet<string> | Promise<ReadonlySet<string>>,
  options: Omit<HandlerOptions, 'engine' | 'tables'>,
): (req: IncomingMessage, res: ServerResponse) => void {
  const languages = options.languages ?? DEFAULTS.languages;
  const maxLimit = options.maxLimit ?? DEFAULTS.maxLimit;
  const maxBody = options.maxBody ?? DEFAULTS.maxBody;
  const ckan: CkanVersion = options.ckan ?? '2.11';
  const routes = buildRoutes(languages);
  const envelopes = buildEnvelopes(options.publicUrl, languages);
  const authorized = tokenCheck(options.tokens ?? []);
  const log = options.log;
  const limits = { maxLimit, ckan };

  const send = (req: IncomingMessage, res: ServerResponse, status: number, text: string, type = JSON_TYPE): void => {
    // `res.end(text)` with a string lets node:http join head and body into one string and encode it
    // once as it writes: no Buffer is made for the body (no copy, no pool slice); the length is counted,
    // not encoded. Header lists are flat arrays: `writeHead` walks them without the `for…in` an object needs.
    const length = Buffer.byteLength(text);
    const headers = answerHeaders(length, type);
    res.writeHead(status, status === 405 ? [...headers, 'allow', 'GET, POST, OPTIONS'] : headers);
    res.end(text);
    if (log !== undefined) log(`${req.method ?? '?'} ${pathOf(req.url)} ${status}`);
  };

  const sendError = (req: IncomingMessage, res: ServerResponse, route: Route | undefined, error: unknown): void => {
    if (error instanceof DatastoreError && error.status !== undefined && error.body !== undefined) {
      // A body CKAN writes as a bare JSON string (a 400 for unreadable data) has no envelope.
      const text = typeof error.body === 'string' ? JSON.stringify(error.body) : envelopes(route?.language, route?.action).error(error.body);
      send(req, res, error.status, text);
      return;
    }
    // Not an error a request can legitimately cause: answer 500 and keep serving.
    if (log !== undefined) log(`internal error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    const body: ErrorBody = { __type: 'Internal Server Error', message: 'Internal Server Error' };
    send(req, res, 500, envelopes(route?.language, route?.action).error(body));
  };

  // CKAN's order: the schema, then the resource and access, then the backend's checks against the
  // table, then the search; so a private table's field names never show in an error.
  const search = async (req: IncomingMessage, res: ServerResponse, route: Route, raw: Record<string, unknown>, query: string): Promise<Iterator<string>> => {
    const validated = validateSearch(raw, limits);
    const request = validated.request;
    let answering = engine;
    let info: ResourceInfo | undefined;
    if (request.resource_id === TABLE_METADATA) {
      // Anyone may search it; it lists names, never data.
      answering = memoryEngine([tableMetadata(await engine.resources())]);
      info = await answering.resource(TABLE_METADATA);
    } else {
      info = await engine.resource(request.resource_id);
      if (info === undefined) throw resourceNotFound(request.resource_id);
      const hidden = info.private || (await privateIds).has(info.id);
      if (hidden && !authorized(req.headers.authorization)) throw accessDenied(request.resource_id);
    }
    if (info === undefined) throw resourceNotFound(request.resource_id);
    checkAgainstTable(validated, info.fields);
    const plan = searchPlan(request, info.fields, ckan, answering.kind !== 'memory');
    // A client that goes away cancels the statement on a PostgreSQL engine (Ctrl-C in the REPL reaches the server).
    const gone = new AbortController();
    const onClose = (): void => {
      if (!res.writableFinished) gone.abort();
    };
    res.once('close', onClose);
    const result = await answering.search(plan.engineRequest, { ...limits, signal: gone.signal }).finally(() => res.off('close', onClose));
    return resultPieces(responseParts(validated, plan, result, info, route, query), plan.sharedFields ? sharedFieldsJson(result.fields) : undefined);
  };

  // datastore_search_sql: the engine checks the statement; the token decides whether private tables may be read.
  const searchSql = async (req: IncomingMessage, raw: Record<string, unknown>): Promise<string> => {
    if (engine.searchSql === undefined) {
      // A portal with the action disabled does not know it.
      const text = `${ckan === '2.11' ? 'Bad request - ' : 'Bad request: '}Action name not known: ${SQL_ACTION}`;
      throw new DatastoreError('BAD_REQUEST', text, { body: text });
    }
    const sql = raw.sql;
    if (typeof sql !== 'string' || sql === '') throw validationError('sql', 'Missing value');
    const token = authorized(req.headers.authorization);
    return JSON.stringify(sqlResult(await engine.searchSql(sql, { maxLimit, token, privateIds: await privateIds }), raw));
  };

  const answer = async (req: IncomingMessage, res: ServerResponse, route: Route, raw: Record<string, unknown>, query: string, callback: string | undefined): Promise<void> => {
    if ('callback' in raw) {
      // CKAN drops `callback` from the parameters (JSONP) and answers anonymously.
      delete raw.callback;
      if (req.headers.authorization !== undefined) delete req.headers.authorization;
    }
    const pieces =
      route.action === 'status_show'
        ? [JSON.stringify(statusResult(ckan, options.publicUrl))].values()
        : route.action === SQL_ACTION
          ? [await searchSql(req, raw)].values()
          : await search(req, res, route, raw, query);
    const [head, tail] = envelopes(route.language, route.action).successAround;
    if (callback !== undefined && req.method === 'GET') {
      sendPieces(req, res, `${escapeHtml(callback)}(${head}`, pieces, `${tail});`, JAVASCRIPT_TYPE);
    } else sendPieces(req, res, head, pieces, tail, JSON_TYPE);
  };

  // A small answer goes out whole with its length; a large one as its client reads it (chunked),
  // so a client that stops reading holds one piece of its answer in the server, not all of it.
  const sendPieces = (req: IncomingMessage, res: ServerResponse, head: string, pieces: Iterator<string>, tail: string, type: string): void => {
    let text = head;
    for (let next = pieces.next(); ; next = pieces.next()) {
      if (next.done === true) {
        send(req, res, 200, text + tail, type);
        return;
      }
      text += next.value;
      if (text.length >= WHOLE_ANSWER_CHARS) break;
    }
    res.writeHead(200, ['content-type', type, 'access-control-allow-origin', '*']);
    const pump = (): void => {
      try {
        while (!res.destroyed) {
          const written = res.write(text);
          const next = pieces.next();
          if (next.done === true) {
            res.end(tail);
            if (log !== undefined) log(`${req.method ?? '?'} ${pathOf(req.url)} 200`);
            return;
          }
          text = next.value;
          if (!written) {
            res.once('drain', pump);
            return;
          }
        }
      } catch (error) {
        // The status is sent: cut the answer short, so the client sees it broken rather than whole.
        if (log !== undefined) log(`internal error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
        res.destroy();
      }
    };
    pump();
  };
  const answerOrFail = (req: IncomingMessage, res: ServerResponse, route: Route, raw: () => Record<string, unknown>, query: string, callback: string | undefined): void => {
    let params: Record<string, unknown>;
    try {
      params = raw();
    } catch (error) {
      sendError(req, res, route, error);
      return;
    }
    answer(req, res, route, params, query, callback).catch((error: unknown) => sendError(req, res, route, error));
  };

  const handle = (req: IncomingMessage, res: ServerResponse): void => {
    let route: Route | undefined;
    try {
      if (req.httpVersionMajor < 1) {
        // HTTP/0.9 has no headers and no status line: nothing we could answer would be read right.
        throw serviceError('BAD_REQUEST', 'Bad request: the request line has no HTTP version; send HTTP/1.1');
      }
      const url = req.url ?? '/';
      const mark = url.indexOf('?');
      const path = mark === -1 ? url : url.slice(0, mark);
      const query = mark === -1 ? '' : url.slice(mark + 1);
      route = routes.get(path);
      if (route === undefined) {
        const action = unknownAction(path, languages);
        if (action !== undefined) {
          const text = `${ckan === '2.11' ? 'Bad request - ' : 'Bad request: '}Action name not known: ${excerpt(action.name)}`;
          throw new DatastoreError('BAD_REQUEST', text, { body: text });
        }
        throw unknownPath(path, languages);
      }
      const callback = query === '' ? undefined : callbackOf(query);
      switch (req.method) {
        case 'GET':
          answerOrFail(req, res, route, () => requestFromQueryString(query), query, callback);
          return;
        case 'POST': {
          const postRoute = route;
          const kind = bodyKind(req.headers['content-type']);
          readBody(req, maxBody, {
            onText: (text) => {
              if (kind === 'form' && text !== '') {
                answerOrFail(req, res, postRoute, () => requestFromForm(text, ckan), query, callback);
              } else if (query !== '') {
                // CKAN reads a POST's parameters from its URL when it has any, and then ignores the body.
                answerOrFail(req, res, postRoute, () => requestFromQueryString(query), query, callback);
              } else if (kind === 'unsupported' && text !== '') {
                send(req, res, 415, UNSUPPORTED_MEDIA_TYPE, HTML_TYPE);
              } else {
                answerOrFail(req, res, postRoute, () => requestFromJson(text, ckan), '', callback);
              }
            },
            onTooLarge: () => {
              const error = serviceError(
                'REQUEST_TOO_LARGE',
                `Request too large: the body is larger than ${maxBody} bytes; send fewer or shorter filter values`,
              );
              sendError(req, res, postRoute, error);
            },
          });
          return;
        }
        case 'OPTIONS':
          res.writeHead(204, { ...CORS_HEADERS, 'content-length': 0 });
          res.end();
          return;
        default:
          throw serviceError(
            'METHOD_NOT_ALLOWED',
            `Method not allowed: ${JSON.stringify(req.method)}; use GET (query string) or POST (JSON body)`,
          );
      }
    } catch (error) {
      sendError(req, res, route, error);
    }
  };

  // One answer at a time per connection: a client that pipelines requests and never reads its
  // answers holds at most one answer in memory, and a connection queues a bounded number of requests.
  return (req, res) => {
    const queue = queueOf(req.socket);
    if (queue === undefined) {
      handle(req, res);
      return;
    }
    queue.push(() => handle(req, res), res);
  };
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
  return {
    ckan,
    echo: validated.echo,
    resourceId: info.id,
    outputFields,
    records: result.records,
    recordsFormat,
    ...(total === undefined ? {} : { total }),
    ...(ckan === '2.11' && total !== undefined ? { totalWasEstimated: threshold !== undefined && threshold !== null && unfiltered && total >= threshold } : {}),
    ...(ckan === '2.11' ? { links: linksFor(route.linkPath, query, offset, limit) } : {}),
    ...(nextPage === undefined ? {} : { nextPage }),
    plain: recordsFormat === 'objects' && missingRank.length === 0 && !plan.hiddenId && !needsCare(outputFields, ckan),
  };
}

/** Types whose values CKAN writes other than `JSON.stringify` would: exact big numbers, timestamps. */
function needsCare(fields: readonly FieldInfo[], ckan: CkanVersion): boolean {
  const key = ckan === '2.11' ? careByFields211 : careByFields212;
  let care = key.get(fields);
  if (care === undefined) {
    care = fields.some((f) => f.type === 'int8' || f.type === 'numeric' || f.type === 'timestamp');
    key.set(fields, care);
  }
  return care;
}
const careByFields211 = new WeakMap<readonly FieldInfo[], boolean>();
const careByFields212 = new WeakMap<readonly FieldInfo[], boolean>();

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

/** Requests queued on one connection beyond which it is closed: no client pipelines that deep. */
const MAX_PIPELINED = 64;

/**
 * The requests of one connection, answered one after another: the next
 * starts when the previous answer is written and the socket has drained.
 */
class ConnectionQueue {
  private readonly jobs: (() => void)[] = [];
  private busy = false;

  constructor(private readonly socket: Socket) {
    socket.once('close', () => {
      this.jobs.length = 0;
    });
  }

  push(job: () => void, res: ServerResponse): void {
    if (this.jobs.length >= MAX_PIPELINED) {
      this.socket.destroy();
      return;
    }
    const run = (): void => {
      let done = false;
      const next = (): void => {
        if (done) return;
        done = true;
        this.afterAnswer();
      };
      res.once('finish', next);
      res.once('close', next);
      job();
    };
    if (this.busy) this.jobs.push(run);
    else {
      this.busy = true;
      run();
    }
  }

  private afterAnswer(): void {
    const resume = (): void => {
      // A closed connection's queued requests are dropped unanswered: nobody could read them.
      if (this.socket.destroyed) this.jobs.length = 0;
      const job = this.jobs.shift();
      if (job === undefined) this.busy = false;
      else job();
    };
    if (this.socket.destroyed || !this.socket.writableNeedDrain) resume();
    else {
      let resumed = false;
      const once = (): void => {
        if (resumed) return;
        resumed = true;
        this.socket.off('drain', once);
        this.socket.off('close', once);
        resume();
      };
      this.socket.on('drain', once);
      this.socket.on('close', once);
    }
  }
}

const QUEUE = Symbol('ckql.queue');

function queueOf(socket: Socket | null): ConnectionQueue | undefined {
  if (socket === null) return undefined;
  const holder = socket as Socket & { [QUEUE]?: ConnectionQueue };
  let queue = holder[QUEUE];
  if (queue === undefined) {
    queue = new ConnectionQueue(socket);
    holder[QUEUE] = queue;
  }
  return queue;
}

/**
 * Collects a body up to `max` bytes. Past that it stops collecting (what
 * still arrives is read and discarded, never buffered, so the client can
 * finish sending and read the refusal) and reports once.
 */
function readBody(
  req: IncomingMessage,
  max: number,
  on: { onText: (text: string) => void; onTooLarge: () => void },
): void {
  if (Number(req.headers['content-length']) > max) {
    discardRest(req);
    on.onTooLarge();
    return;
  }
  const chunks: Buffer[] = [];
  let size = 0;
  let over = false;
  req.on('data', (chunk: Buffer) => {
    if (over) return;
    size += chunk.length;
    if (size > max) {
      over = true;
      chunks.length = 0;
      discardRest(req);
      on.onTooLarge();
    } else chunks.push(chunk);
  });
  req.on('end', () => {
    if (over) return;
    // A small body arrives in one chunk: decode it as it is, without copying it into a new Buffer first.
    const only = chunks.length === 1 ? chunks[0] : undefined;
    on.onText(only !== undefined ? only.toString('utf8') : Buffer.concat(chunks, size).toString('utf8'));
  });
  // The client went away mid-body: there is nobody to answer.
  req.on('error', () => undefined);
}

/**
 * Reads what remains of a refused body and throws it away, so that the
 * client can finish sending and read the refusal (closing a socket with
 * unread input makes the kernel reset it, and the answer is lost). A
 * client that goes quiet mid-body, or sends more than `DRAIN_LIMIT`, is
 * disconnected.
 */
function discardRest(req: IncomingMessage): void {
  const socket = req.socket;
  (socket as Socket & { [REFUSED]?: boolean })[REFUSED] = true;
  let read = 0;
  let timer = setTimeout(() => socket.destroy(), DRAIN_IDLE_MS).unref();
  req.on('data', (chunk: Buffer) => {
    read += chunk.length;
    clearTimeout(timer);
    if (read > DRAIN_LIMIT) socket.destroy();
    else timer = setTimeout(() => socket.destroy(), DRAIN_IDLE_MS).unref();
  });
  req.on('end', () => clearTimeout(timer));
  req.on('close', () => clearTimeout(timer));
  req.resume();
}

/** Marks a socket whose request was answered with a refusal while its body still arrives. */
const REFUSED = Symbol('ckql.refused');

/** How much of a refused request the server still reads (and discards) so that the client reads the refusal. */
const DRAIN_LIMIT = 64 * 1024 * 1024;
/** How long a refused connection may stay silent before it is closed. */
const DRAIN_IDLE_MS = 1_000;

/**
 * Malformed HTTP, oversize headers, timeouts: answer in the error envelope
 * if the socket still allows it, then close; what the client is still
 * sending is read and discarded first, so that closing does not make the
 * kernel reset the connection before the client reads the answer.
 */
function clientErrorAnswer(publicUrl: string): (error: NodeJS.ErrnoException, socket: Duplex) => void {
  const help = helpUrl(publicUrl.replace(/\/+$/, ''), undefined, 'datastore_search');
  return (error, socket) => {
    const inFlight = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
    const refused = (socket as Duplex & { [REFUSED]?: boolean })[REFUSED] === true;
    if (error.code === 'ECONNRESET' || !socket.writable || inFlight?.headersSent === true || refused) {
      socket.destroy();
      return;
    }
    const [status, body]: [number, ErrorBody] =
      error.code === 'HPE_HEADER_OVERFLOW'
        ? [431, { __type: 'Request Too Large', message: 'Request too large: the request line and headers are too long; use POST for long requests' }]
        : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
          ? [408, { __type: 'Bad Request', message: 'Bad request: the request did not arrive in time' }]
          : [400, { __type: 'Bad Request', message: 'Bad request: this is not a valid HTTP/1.1 request' }];
    const text = JSON.stringify({ help, success: false, error: body });
    socket.end(
      `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}\r\ncontent-type: ${JSON_TYPE}\r\ncontent-length: ${Buffer.byteLength(text)}\r\nconnection: close\r\n\r\n${text}`,
    );
    if (status === 408) {
      setTimeout(() => socket.destroy(), LINGER_MS).unref();
      return;
    }
    drainThenDestroy(socket);
  };
}

function drainThenDestroy(socket: Duplex): void {
  let read = 0;
  let timer = setTimeout(() => socket.destroy(), DRAIN_IDLE_MS).unref();
  socket.on('data', (chunk: Buffer) => {
    read += chunk.length;
    if (read > DRAIN_LIMIT) {
      socket.destroy();
      return;
    }
    clearTimeout(timer);
    timer = setTimeout(() => socket.destroy(), DRAIN_IDLE_MS).unref();
  });
  socket.on('end', () => socket.destroy());
  socket.on('error', () => socket.destroy());
  socket.resume();
}

function pathOf(url: string | undefined): string {
  if (url === undefined) return '?';
  const mark = url.indexOf('?');
  return mark === -1 ? url : url.slice(0, mark);
}

function engineOf(data: ServedData): Engine {
  // A list of tables goes through `Catalog` (in the memory engine), so ids win over aliases and duplicates are refused.
  return data.engine ?? memoryEngine(data.tables);
}

/** The ids of the resources named in `names`; a name that matches no resource is an error. */
async function privateResourceIds(engine: Engine, names: readonly string[]): Promise<ReadonlySet<string>> {
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

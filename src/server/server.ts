/**
 * The local `datastore_search` server: plain `node:http` over any `Engine`
 * (docs/engines.md). The wire rules (paths, methods, envelope, errors) are
 * CKAN's (docs/semantics.md); this module never imports the AST.
 */
import { STATUS_CODES, createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';

import { DatastoreError, resourceNotFound, toolError, validationError } from '../errors.js';
import type { ErrorBody, Table } from '../datastore/types.js';
import { normalizeRequest } from '../datastore/validate.js';
import { memoryEngine } from '../engine/memory/engine.js';
import type { TableLookup } from '../engine/memory/engine.js';
import type { Engine } from '../engine/types.js';
import { readSearchRequest } from '../engine/sql/request.js';
import { tokenCheck } from './auth.js';
import { buildEnvelopes, linksFor } from './envelope.js';
import type { Envelopes } from './envelope.js';
import { accessDenied, serviceError } from './errors.js';
import { requestFromBody, requestFromQueryString } from './params.js';
import { SQL_ACTION, sqlResult, sqlRoutes } from './search-sql.js';
import { buildRoutes, unknownPath } from './routes.js';
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
  Pick<ServerSettings, 'languages' | 'maxLimit' | 'maxBody' | 'tokens' | 'privateResources' | 'log'> & {
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

/** How long a connection being closed may still drain what the client sends, so it reads our answer. */
const LINGER_MS = 500;
/** How long `close()` waits for requests in flight before it closes their connections. */
const CLOSE_GRACE_MS = 1_000;

const JSON_TYPE = 'application/json;charset=utf-8';
/** The headers of every JSON answer, in the order they are written; `content-length` differs per answer. */
function answerHeaders(length: number): (string | number)[] {
  return ['content-type', JSON_TYPE, 'content-length', length, 'access-control-allow-origin', '*'];
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
  server.on('clientError', answerClientError);

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
  const routes = buildRoutes(languages);
  const sqlPaths = sqlRoutes(languages);
  const envelopes = buildEnvelopes(options.publicUrl, languages);
  const authorized = tokenCheck(options.tokens ?? []);
  const log = options.log;
  const limits = { maxLimit };

  const send = (req: IncomingMessage, res: ServerResponse, status: number, text: string, close = false): void => {
    // `res.end(text)` with a string lets node:http join head and body into one string and encode it
    // once as it writes: no Buffer is made for the body (no copy, no pool slice); the length is counted,
    // not encoded. Header lists are flat arrays: `writeHead` walks them without the `for…in` an object needs.
    const length = Buffer.byteLength(text);
    const headers = status === 405 ? [...answerHeaders(length), 'allow', 'GET, POST, OPTIONS'] : answerHeaders(length);
    res.writeHead(status, close ? [...headers, 'connection', 'close'] : headers);
    res.end(text);
    if (log !== undefined) log(`${req.method ?? '?'} ${pathOf(req.url)} ${status}`);
  };

  const sendError = (req: IncomingMessage, res: ServerResponse, route: Route | undefined, error: unknown, close = false): void => {
    const envelope = envelopes(route?.language);
    if (error instanceof DatastoreError && error.status !== undefined && typeof error.body === 'object') {
      send(req, res, error.status, envelope.error(error.body), close);
      return;
    }
    // Not an error a request can legitimately cause: answer 500 and keep serving.
    if (log !== undefined) log(`internal error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    const body: ErrorBody = { __type: 'Internal Server Error', message: 'Internal Server Error' };
    send(req, res, 500, envelope.error(body), close);
  };

  // The parameters are checked first, then the resource and access, then the engine searches (as CKAN:
  // schema, check_access, backend), so a private table's field names never show in an error.
  const answer = async (
    req: IncomingMessage,
    res: ServerResponse,
    route: Route,
    raw: Record<string, unknown>,
    query: string,
  ): Promise<void> => {
    const envelope: Envelopes = envelopes(route.language);
    // A PostgreSQL engine reads every parameter CKAN has (its own schema check); the memory engine its own set.
    const request = engine.kind === 'memory' ? normalizeRequest(raw, limits) : readSearchRequest(raw, { maxLimit, ckan: '2.11' });
    const info = await engine.resource(request.resource_id);
    // `_table_metadata` is no resource but anyone may search it (CKAN's whitelist).
    if (info === undefined && !(engine.kind !== 'memory' && request.resource_id === '_table_metadata')) throw resourceNotFound(request.resource_id);
    const hidden = info !== undefined && (info.private || (await privateIds).has(info.id));
    if (hidden && !authorized(req.headers.authorization)) throw accessDenied(request.resource_id);
    // A client that goes away cancels the statement on a PostgreSQL engine (Ctrl-C in the REPL reaches the server).
    const gone = new AbortController();
    const onClose = (): void => {
      if (!res.writableFinished) gone.abort();
    };
    res.once('close', onClose);
    const result = await engine
      .search(engine.kind === 'memory' ? request : raw, engine.kind === 'memory' ? limits : { ...limits, signal: gone.signal })
      .finally(() => res.off('close', onClose));
    const links = linksFor(route.linkPath, query, (result.offset ?? 0) + result.limit);
    send(req, res, 200, envelope.success(result, links, request.fields === undefined));
  };
  // datastore_search_sql: the engine checks the statement; the token decides whether private tables may be read.
  const answerSql = async (req: IncomingMessage, res: ServerResponse, route: Route, raw: Record<string, unknown>): Promise<void> => {
    if (engine.searchSql === undefined) throw serviceError('BAD_REQUEST', `Bad request - Action name not known: ${SQL_ACTION}`);
    if (typeof raw['sql'] !== 'string' || raw['sql'] === '') throw validationError('sql', 'Missing value');
    const token = authorized(req.headers.authorization);
    const result = await engine.searchSql(raw['sql'], { maxLimit, token });
    send(req, res, 200, envelopes(route.language).raw(sqlResult(result, raw)));
  };
  const answerSqlOrFail = (req: IncomingMessage, res: ServerResponse, route: Route, raw: () => Record<string, unknown>): void => {
    Promise.resolve()
      .then(() => answerSql(req, res, route, raw()))
      .catch((error: unknown) => sendError(req, res, route, error));
  };

  const answerOrFail = (req: IncomingMessage, res: ServerResponse, route: Route, raw: Record<string, unknown>, query: string): void => {
    answer(req, res, route, raw, query).catch((error: unknown) => sendError(req, res, route, error));
  };

  return (req, res) => {
    let route: Route | undefined;
    try {
      const url = req.url ?? '/';
      const mark = url.indexOf('?');
      const path = mark === -1 ? url : url.slice(0, mark);
      const query = mark === -1 ? '' : url.slice(mark + 1);
      route = routes.get(path);
      const sqlRoute = route === undefined ? sqlPaths.get(path) : undefined;
      if (sqlRoute !== undefined && (req.method === 'GET' || req.method === 'POST')) {
        if (req.method === 'GET') answerSqlOrFail(req, res, sqlRoute, () => requestFromQueryString(query));
        else readBody(req, maxBody, { onText: (text) => answerSqlOrFail(req, res, sqlRoute, () => requestFromBody(text)), onTooLarge: () => sendError(req, res, sqlRoute, serviceError('REQUEST_TOO_LARGE', `Request too large: the body is larger than ${maxBody} bytes`), true) });
        return;
      }
      if (route === undefined) throw unknownPath(path, languages);
      switch (req.method) {
        case 'GET':
          answerOrFail(req, res, route, requestFromQueryString(query), query);
          return;
        case 'POST': {
          if (query !== '') {
            throw serviceError(
              'BAD_REQUEST',
              'Bad request: a POST takes its parameters from the JSON body only; move the query string parameters into the body',
            );
          }
          const postRoute = route;
          readBody(req, maxBody, {
            onText: (text) => {
              try {
                answerOrFail(req, res, postRoute, requestFromBody(text), '');
              } catch (error) {
                sendError(req, res, postRoute, error);
              }
            },
            onTooLarge: () => {
              const error = serviceError(
                'REQUEST_TOO_LARGE',
                `Request too large: the body is larger than ${maxBody} bytes; send fewer or shorter filter values`,
              );
              sendError(req, res, postRoute, error, true);
              lingerThenDestroy(res);
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
}

/**
 * Collects a body up to `max` bytes. Past that it stops collecting (what
 * still arrives is discarded, never buffered) and reports once.
 */
function readBody(
  req: IncomingMessage,
  max: number,
  on: { onText: (text: string) => void; onTooLarge: () => void },
): void {
  if (Number(req.headers['content-length']) > max) {
    req.resume();
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
 * After answering a request whose body we refuse, close the connection but
 * let it drain briefly: closing a socket with unread input makes the kernel
 * send a reset, which can destroy our answer before the client reads it.
 */
function lingerThenDestroy(res: ServerResponse): void {
  const socket = res.socket;
  if (socket === null) return;
  res.on('finish', () => {
    setTimeout(() => socket.destroy(), LINGER_MS).unref();
  });
}

/** Malformed HTTP, oversize headers, timeouts: answer in the error envelope if the socket still allows it, then close. */
function answerClientError(error: NodeJS.ErrnoException, socket: Duplex): void {
  const inFlight = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (error.code === 'ECONNRESET' || !socket.writable || inFlight?.headersSent === true) {
    socket.destroy();
    return;
  }
  const [status, body]: [number, ErrorBody] =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? [431, { __type: 'Request Too Large', message: 'Request too large: the request line and headers are too long; use POST for long requests' }]
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, { __type: 'Bad Request', message: 'Bad request: the request did not arrive in time' }]
        : [400, { __type: 'Bad Request', message: 'Bad request: this is not a valid HTTP/1.1 request' }];
  const text = JSON.stringify({ success: false, error: body });
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}\r\ncontent-type: ${JSON_TYPE}\r\ncontent-length: ${Buffer.byteLength(text)}\r\nconnection: close\r\n\r\n${text}`,
  );
  setTimeout(() => socket.destroy(), LINGER_MS).unref();
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

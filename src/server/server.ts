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

import type { ErrorBody } from '../datastore/types.js';
import { apiFor, engineOf, JSON_TYPE, privateResourceIds } from './api.js';
import type { Api, ApiAnswer, ApiRequest, ApiSettings, ServedData } from './api.js';
import { helpUrl } from './envelope.js';
import { serviceError } from './errors.js';
import { pathOf } from './routes.js';
import { openPlayground } from './playground.js';
import type { Playground } from './playground.js';
import type { PlaygroundOptions } from './playground-types.js';

export type { TableLookup } from '../engine/memory/engine.js';
export type { ServedData } from './api.js';

interface ServerSettings extends ApiSettings {
  /** default `127.0.0.1` */
  readonly host?: string;
  /** default 0: a free port, see `RunningServer.port` */
  readonly port?: number;
  /** the largest POST body in bytes; default 1 MiB */
  readonly maxBody?: number;
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
  /** the playground page at `/` and `/-/play`, and its endpoints under `/-/` (src/server/playground.ts) */
  readonly playground?: PlaygroundOptions;
}

/**
 * `engine` (any engine), or `tables` (loaded once with `loadResources`, or a
 * `Catalog`) for the memory engine; or neither, for a server of the
 * playground alone (`ckql ui` over a portal), which serves no CKAN API.
 */
export type ServerOptions = (ServedData | { readonly engine?: undefined; readonly tables?: undefined; readonly playground: PlaygroundOptions }) & ServerSettings;

export interface RunningServer {
  /** e.g. `http://127.0.0.1:8080`: the base URL a client connects to */
  readonly url: string;
  readonly port: number;
  readonly host: string;
  /** stops accepting, closes idle keep-alive connections, and resolves when every connection is gone */
  close(): Promise<void>;
}

const DEFAULTS = {
  host: '127.0.0.1',
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

/** The headers of every answer, in the order they are written; `content-length` differs per answer. */
function answerHeaders(length: number, type: string): (string | number)[] {
  return ['content-type', type, 'content-length', length, 'access-control-allow-origin', '*'];
}

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
  const served = options.engine !== undefined || options.tables !== undefined ? (options as ServedData & ServerSettings) : undefined;
  const engine = served === undefined ? undefined : engineOf(served);
  const privateIds = engine === undefined ? new Set<string>() : await privateResourceIds(engine, options.privateResources ?? []);
  const playground = options.playground === undefined ? undefined : openPlayground(options.playground, options.log);

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const url = `http://${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}`;
  const api = engine === undefined ? playgroundOnly(url) : apiFor(engine, privateIds, options, url);
  const handle = handlerFor(api, { maxBody, log: options.log, playground });
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

/** Resolves when `res` can take more, or when it closed. */
function drained(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.once('drain', done);
    res.once('close', done);
  });
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve, reject) => {
    server.close((error) => (error ? reject(error) : resolve()));
    server.closeIdleConnections();
    setTimeout(() => server.closeAllConnections(), CLOSE_GRACE_MS).unref();
  });
}

/** The API of a server that serves the playground alone: every API path is not found. */
function playgroundOnly(url: string): Api {
  const error = serviceError('NOT_FOUND', `Not found: this server serves the playground only (${url}/), not the datastore API`);
  const body = (): ApiAnswer => ({ status: 404, type: JSON_TYPE, text: JSON.stringify({ success: false, error: error.body }) });
  return { answer: async () => body(), refuse: () => body(), cancellable: false };
}

function handlerFor(
  api: Api,
  options: { readonly maxBody: number; readonly log: ((line: string) => void) | undefined; readonly playground: Playground | undefined },
): (req: IncomingMessage, res: ServerResponse) => void {
  const { maxBody, log, playground } = options;

  const send = (req: IncomingMessage, res: ServerResponse, answer: ApiAnswer): void => {
    if (answer.internal !== undefined) logError(answer.internal);
    if (answer.status === 204) {
      res.writeHead(204, { ...answer.headers, 'content-length': 0 });
      res.end();
      if (log !== undefined) log(`${req.method ?? '?'} ${pathOf(req.url)} 204`);
      return;
    }
    if (answer.stream !== undefined) {
      sendStream(req, res, answer, answer.stream);
      return;
    }
    // A small answer goes out whole with its length; a large one as its client reads it (chunked),
    // so a client that stops reading holds one piece of its answer in the server, not all of it.
    let text = answer.text;
    const more = answer.more;
    if (more !== undefined) {
      for (let next = more.next(); ; next = more.next()) {
        if (next.done === true) break;
        text += next.value;
        if (text.length >= WHOLE_ANSWER_CHARS) {
          sendPieces(req, res, answer, text, more);
          return;
        }
      }
    }
    // `res.end(text)` with a string lets node:http join head and body into one string and encode it
    // once as it writes: no Buffer is made for the body (no copy, no pool slice); the length is counted,
    // not encoded. Header lists are flat arrays: `writeHead` walks them without the `for…in` an object needs.
    const headers = answerHeaders(Buffer.byteLength(text), answer.type);
    if (answer.headers !== undefined) for (const [name, value] of Object.entries(answer.headers)) headers.push(name, value);
    res.writeHead(answer.status, headers);
    res.end(text);
    if (log !== undefined) log(`${req.method ?? '?'} ${pathOf(req.url)} ${answer.status}`);
  };

  /**
   * A body made page by page (a dump): each piece written when the client
   * has taken the last one, and no page asked for once the client is gone.
   */
  const sendStream = (req: IncomingMessage, res: ServerResponse, answer: ApiAnswer, stream: AsyncIterable<string>): void => {
    res.writeHead(answer.status, ['content-type', answer.type, 'access-control-allow-origin', '*', ...Object.entries(answer.headers ?? {}).flat()]);
    void (async () => {
      try {
        if (answer.text !== '' && !res.write(answer.text)) await drained(res);
        for await (const piece of stream) {
          if (res.destroyed) return;
          if (!res.write(piece)) await drained(res);
        }
        res.end();
        if (log !== undefined) log(`${req.method ?? '?'} ${pathOf(req.url)} ${answer.status}`);
      } catch (error) {
        // The status is sent: cut the answer short, so the client sees it broken rather than whole.
        logError(error);
        res.destroy();
      }
    })();
  };

  const sendPieces = (req: IncomingMessage, res: ServerResponse, answer: ApiAnswer, first: string, more: Iterator<string>): void => {
    res.writeHead(answer.status, ['content-type', answer.type, 'access-control-allow-origin', '*', ...Object.entries(answer.headers ?? {}).flat()]);
    let text = first;
    const pump = (): void => {
      try {
        while (!res.destroyed) {
          const written = res.write(text);
          const next = more.next();
          if (next.done === true) {
            res.end();
            if (log !== undefined) log(`${req.method ?? '?'} ${pathOf(req.url)} ${answer.status}`);
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
        logError(error);
        res.destroy();
      }
    };
    pump();
  };

  const logError = (error: unknown): void => {
    if (log !== undefined) log(`internal error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  };

  const answer = (req: IncomingMessage, res: ServerResponse, body: string | undefined): void => {
    const headers = req.headers;
    const method = req.method ?? '';
    const url = req.url ?? '/';
    // one object literal per case, not a spread of an optional part: this runs for every request
    const request: ApiRequest =
      body === undefined
        ? { method, url, authorization: headers.authorization, contentType: headers['content-type'] }
        : { method, url, authorization: headers.authorization, contentType: headers['content-type'], body };
    if (!api.cancellable) {
      void api.answer(request).then((answered) => send(req, res, answered));
      return;
    }
    // A client that goes away cancels the statement on a PostgreSQL engine (Ctrl-C in the REPL reaches the server).
    const gone = new AbortController();
    const onClose = (): void => {
      if (!res.writableFinished) gone.abort();
    };
    res.once('close', onClose);
    void api.answer(request, gone.signal).then((answered) => {
      res.off('close', onClose);
      send(req, res, answered);
    });
  };

  const handle = (req: IncomingMessage, res: ServerResponse): void => {
    if (req.httpVersionMajor < 1) {
      // HTTP/0.9 has no headers and no status line: nothing we could answer would be read right.
      send(req, res, api.refuse(undefined, serviceError('BAD_REQUEST', 'Bad request: the request line has no HTTP version; send HTTP/1.1')));
      return;
    }
    const forPlayground = playground !== undefined && playground.owns(pathOf(req.url));
    if (req.method !== 'POST') {
      if (forPlayground) playground.answer(req, res, undefined);
      else answer(req, res, undefined);
      return;
    }
    readBody(req, maxBody, {
      onText: (text) => (forPlayground ? playground.answer(req, res, text) : answer(req, res, text)),
      onTooLarge: () => {
        if (forPlayground) {
          playground.tooLarge(req, res, maxBody);
          return;
        }
        const error = serviceError('REQUEST_TOO_LARGE', `Request too large: the body is larger than ${maxBody} bytes; send fewer or shorter filter values`);
        send(req, res, api.refuse(req.url, error));
      },
    });
  };

  // One answer at a time per connection: a client that pipelines requests and never reads its
  // answers holds at most one answer in memory, and a connection queues a bounded number of requests.
  return (req, res) => {
    const queue = queueOf(req.socket, handle);
    if (queue === undefined) handle(req, res);
    else queue.push(res);
  };
}

/** Requests queued on one connection beyond which it is closed: no client pipelines that deep. */
const MAX_PIPELINED = 64;

/**
 * The requests of one connection, answered one after another: the next
 * starts when the previous answer is written and the socket has drained.
 * An answer is over at its response's `close`, which node:http emits after
 * `finish` and also when the connection drops first: one listener per
 * request, and no closure made per request.
 */
class ConnectionQueue {
  /** the responses waiting their turn; each knows its request (`res.req`) */
  private readonly waiting: ServerResponse[] = [];
  private busy = false;

  constructor(
    private readonly socket: Socket,
    private readonly handle: (req: IncomingMessage, res: ServerResponse) => void,
  ) {
    socket.once('close', () => {
      this.waiting.length = 0;
    });
  }

  push(res: ServerResponse): void {
    if (this.waiting.length >= MAX_PIPELINED) {
      this.socket.destroy();
      return;
    }
    if (this.busy) this.waiting.push(res);
    else {
      this.busy = true;
      this.run(res);
    }
  }

  private run(res: ServerResponse): void {
    res.once('close', this.afterAnswer);
    this.handle(res.req, res);
  }

  private readonly afterAnswer = (): void => {
    const resume = (): void => {
      // A closed connection's queued requests are dropped unanswered: nobody could read them.
      if (this.socket.destroyed) this.waiting.length = 0;
      const next = this.waiting.shift();
      if (next === undefined) this.busy = false;
      else this.run(next);
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
  };
}

const QUEUE = Symbol('ckql.queue');

function queueOf(socket: Socket | null, handle: (req: IncomingMessage, res: ServerResponse) => void): ConnectionQueue | undefined {
  if (socket === null) return undefined;
  const holder = socket as Socket & { [QUEUE]?: ConnectionQueue };
  let queue = holder[QUEUE];
  if (queue === undefined) {
    queue = new ConnectionQueue(socket, handle);
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
  req.on('error', ignore);
}

function ignore(): void {}

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




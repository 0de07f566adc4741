/**
 * The client's HTTP: undici `request` on the client's own dispatcher (an
 * `Agent` with keep-alive, or an `EnvHttpProxyAgent` when proxy variables
 * are set; never the global dispatcher, never the global fetch), with
 * timeouts for the headers and for the whole body and a cap on the body's
 * size. Loaded only when a client first talks to a portal: local data is
 * answered in the process, and undici is most of a one-shot command's
 * start-up (BENCHMARKS.md, Start-up).
 */
import { Agent, EnvHttpProxyAgent, request } from 'undici';
import type { Dispatcher } from 'undici';

import { parseRetryAfter, tooLarge } from './transport.js';
import type { Exchange, StreamExchange, WireRequest } from './transport.js';

/** Connections per client unless more requests may be in flight: the politeness limit (3), plus a cancelled one draining. */
const CONNECTIONS = 4;

export interface HttpOptions {
  /** ms for the headers, and again for the whole body */
  readonly timeout: number;
  /** bytes of a response body read before `RESPONSE_TOO_LARGE` */
  readonly maxResponseBytes: number;
  /** `https://host[:port]`, for messages */
  readonly origin: string;
  /** requests the client may have in flight at once (politeness.ts); the pool holds one more */
  readonly maxInFlight?: number;
}

export interface Http {
  exchange(wire: WireRequest, signal: AbortSignal | undefined): Promise<Exchange>;
  /**
   * The answer as soon as its headers are in, its body read as it arrives:
   * `timeout` bounds the headers and each pause in the body, not the whole
   * body (a dump of a large table takes as long as it takes).
   */
  stream(wire: WireRequest, signal: AbortSignal | undefined): Promise<StreamExchange>;
  /** closes the connections; requests in flight fail */
  close(): Promise<void>;
}

/**
 * An HTTP exchanger with its own connections.
 * @example
 * const http = openHttp({ timeout: 30_000, maxResponseBytes: 64 << 20, origin: 'https://data.example.org' });
 * await http.exchange({ method: 'GET', url: 'https://data.example.org/api/action/status_show', headers: {} }, undefined);
 * // → { status: 200, text: "{\"help\": …}", retryAfter: undefined, location: undefined }
 * await http.close();
 */
export function openHttp(options: HttpOptions): Http {
  const dispatcher = createDispatcher(options.timeout, Math.max(CONNECTIONS, (options.maxInFlight ?? 0) + 1));
  return {
    exchange: (wire, signal) => exchange(dispatcher, wire, options, signal),
    stream: (wire, signal) => stream(dispatcher, wire, options, signal),
    close: () => dispatcher.destroy(),
  };
}

/** Proxy variables are read when the client is made; lower-case names win, as undici reads them. */
function createDispatcher(timeout: number, connections: number): Dispatcher {
  const agentOptions = {
    connections,
    keepAliveTimeout: 10_000,
    headersTimeout: timeout,
    bodyTimeout: timeout,
    connect: { timeout },
  };
  const env = process.env;
  const proxied = [env.http_proxy, env.HTTP_PROXY, env.https_proxy, env.HTTPS_PROXY].some((v) => v !== undefined && v !== '');
  return proxied ? new EnvHttpProxyAgent(agentOptions) : new Agent(agentOptions);
}

async function exchange(dispatcher: Dispatcher, wire: WireRequest, options: HttpOptions, signal: AbortSignal | undefined): Promise<Exchange> {
  const response = await request(wire.url, {
    dispatcher,
    method: wire.method,
    headers: wire.headers,
    body: wire.body,
    signal,
    headersTimeout: options.timeout,
    bodyTimeout: options.timeout,
  });
  // `bodyTimeout` is the longest pause between chunks; this bounds the whole body.
  const deadline = setTimeout(() => {
    const error = Object.assign(new Error(`the body did not arrive within ${options.timeout} ms`), { code: 'CKQL_BODY_DEADLINE' });
    response.body.destroy(error);
  }, options.timeout);
  try {
    if (Number(response.headers['content-length']) > options.maxResponseBytes) {
      response.body.destroy();
      throw tooLarge(options.origin, options.maxResponseBytes);
    }
    const text = await readCapped(response.body, options);
    const location = response.headers.location;
    return {
      status: response.statusCode,
      text,
      retryAfter: parseRetryAfter(response.headers['retry-after']),
      location: Array.isArray(location) ? location[0] : location,
    };
  } finally {
    clearTimeout(deadline);
  }
}

async function stream(dispatcher: Dispatcher, wire: WireRequest, options: HttpOptions, signal: AbortSignal | undefined): Promise<StreamExchange> {
  const response = await request(wire.url, {
    dispatcher,
    method: wire.method,
    headers: wire.headers,
    body: wire.body,
    signal,
    headersTimeout: options.timeout,
    bodyTimeout: options.timeout,
  });
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(response.headers)) {
    const first = Array.isArray(value) ? value[0] : value;
    if (first !== undefined) headers[name.toLowerCase()] = first;
  }
  return {
    status: response.statusCode,
    headers,
    retryAfter: parseRetryAfter(response.headers['retry-after']),
    body: response.body as AsyncIterable<Uint8Array>,
    cancel: () => response.body.destroy(),
  };
}

/**
 * The body as text, refusing to hold more than `maxResponseBytes`: the server
 * decides how much it sends, the client how much it keeps.
 */
async function readCapped(body: Dispatcher.ResponseData['body'], options: HttpOptions): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    const buffer = chunk as Buffer;
    size += buffer.length;
    if (size > options.maxResponseBytes) {
      body.destroy();
      throw tooLarge(options.origin, options.maxResponseBytes);
    }
    chunks.push(buffer);
  }
  return Buffer.concat(chunks, size).toString('utf8');
}

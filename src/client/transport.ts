/**
 * One search over the wire (an `Exchanger`: HTTP in http.ts, or a server in
 * the same process), with cancellation that lands at once (also while
 * waiting to retry), and retries for 429/502/503/504 and broken
 * connections. A search is read-only, so a POST is retried too.
 *
 * Retries are done here rather than with undici's retry interceptor: that
 * one does not retry POST by default, has no jitter, and does not abort
 * during its wait (docs/ecosystem-and-ux-reference.md §3).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { DatastoreError } from '../errors.js';
import type { SearchResult } from '../datastore/types.js';
import { hasCkanError, readResponse } from './response.js';
import type { ResponseContext } from './response.js';
import type { Download, Exchanger, RetryInfo, StreamExchange, StreamExchanger, WireRequest } from './types.js';

export type { Exchange, Exchanger, StreamExchange, StreamExchanger, WireRequest } from './types.js';

export interface TransportOptions {
  readonly exchange: Exchanger;
  /** ms for the headers, and again for the whole body */
  readonly timeout: number;
  readonly retries: number;
  /** ms: the first backoff step before jitter; it doubles per attempt */
  readonly retryDelay: number;
  /** ms: no wait is longer, whatever `Retry-After` says */
  readonly maxRetryDelay: number;
  /** `https://host[:port]`, for messages */
  readonly origin: string;
  /** the raw token, only to scrub it from anything a server echoes */
  readonly token: string | undefined;
  readonly onRetry?: ((info: RetryInfo) => void) | undefined;
  /** in [0, 1): the jitter source, replaceable in tests */
  readonly random?: () => number;
  /**
   * answers that succeeded so far on this client: after one, a 403 that is
   * not CKAN's own Authorization Error is taken for throttling (a front end
   * limiting the rate; see docs/portals-reference.md §2.2) and
   * retried like a 429
   */
  readonly history?: { succeeded: number };
}

/** Reads a complete answer into a result, or throws its typed error. */
export type ReadAnswer<T> = (status: number, text: string, context: ResponseContext) => T;

const RETRY_STATUSES: ReadonlySet<number> = new Set([429, 502, 503, 504]);

/**
 * Connection failures worth another try. A name that does not resolve
 * (ENOTFOUND) is not, nor a refused connection: nothing listens there, and
 * retrying would only turn one clear answer into "gave up after 4 attempts".
 */
const RETRY_ERRORS: ReadonlySet<string> = new Set([
  'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EAI_AGAIN', 'ENETDOWN', 'ENETUNREACH',
  'EHOSTDOWN', 'EHOSTUNREACH', 'UND_ERR_SOCKET', 'UND_ERR_CLOSED', 'UND_ERR_CONNECT_TIMEOUT',
]);

const TIMEOUT_ERRORS: ReadonlySet<string> = new Set([
  'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'UND_ERR_CONNECT_TIMEOUT', 'CKQL_BODY_DEADLINE',
]);

/**
 * Sends `wire` until it gets an answer that is not worth retrying, and reads it.
 * @example
 * await sendSearch({ method: 'GET', url: 'http://127.0.0.1:8080/api/action/datastore_search?resource_id=courses', headers: {} },
 *   { exchange: http.exchange, timeout: 30_000, retries: 3, retryDelay: 500, maxRetryDelay: 30_000, origin: 'http://127.0.0.1:8080', token: undefined });
 * // → { resource_id: "…", fields: [ … ], records: [ … ], total: 320, … }
 */
export function sendSearch(wire: WireRequest, options: TransportOptions, signal?: AbortSignal): Promise<SearchResult> {
  return sendRequest(wire, options, signal, readResponse);
}

/**
 * Sends `wire` as `sendSearch` does (retries, backoff, cancellation) and
 * reads the answer with `read`: any action's envelope, not only a search's.
 * @example
 * await sendRequest({ method: 'GET', url: 'http://127.0.0.1:8080/api/action/package_show?id=demo', headers: {} }, transport, undefined, readActionResponse)
 * // → { name: "demo", resources: [ … ], … }
 */
export async function sendRequest<T>(wire: WireRequest, options: TransportOptions, signal: AbortSignal | undefined, read: ReadAnswer<T>): Promise<T> {
  const random = options.random ?? Math.random;
  for (let attempt = 0; ; attempt++) {
    if (signal?.aborted === true) throw aborted(options.origin, signal.reason);
    let status: number;
    let text: string;
    let retryAfter: number | undefined;
    let location: string | undefined;
    try {
      ({ status, text, retryAfter, location } = await options.exchange(wire, signal));
    } catch (error) {
      const failure = classify(error, options, signal);
      if (failure.retry && attempt < options.retries) {
        await wait(backoff(attempt, undefined, options, random), attempt, failure.reason, options, signal);
        continue;
      }
      throw attempt === 0 ? failure.error : withAttempts(failure.error, attempt + 1);
    }
    const throttled = isThrottling(status, text, options);
    if ((RETRY_STATUSES.has(status) || throttled) && attempt < options.retries) {
      if (retryAfter !== undefined && retryAfter > options.maxRetryDelay) throw waitTooLong(status, retryAfter, options);
      await wait(backoff(attempt, retryAfter, options, random), attempt, throttled ? 'HTTP 403 (rate limited?)' : `HTTP ${status}`, options, signal);
      continue;
    }
    if (throttled) throw throttledError(options, attempt + 1);
    if (status >= 200 && status < 300 && options.history !== undefined) options.history.succeeded++;
    const context = {
      origin: options.origin,
      sentToken: options.token !== undefined,
      ...(location === undefined ? {} : { location: scrub(resolved(location, wire.url), options.token) }),
    };
    try {
      return read(status, scrub(text, options.token), context);
    } catch (error) {
      // The retries ran out on a 429/502/503/504: said, as for a connection that kept failing.
      throw error instanceof DatastoreError && RETRY_STATUSES.has(status) && attempt > 0 ? withAttempts(error, attempt + 1) : error;
    }
  }
}

/**
 * A 403 after earlier successes that is not CKAN's own Authorization Error:
 * a front end limiting the rate answers so (ckan/ckanext-harvest#371), and a
 * portal that answered a moment ago has not changed its mind about the token.
 */
export function isThrottling(status: number, text: string, options: Pick<TransportOptions, 'history'>): boolean {
  return status === 403 && (options.history?.succeeded ?? 0) > 0 && !hasCkanError(text);
}

/** The error for a 403 that went on after the retries: most likely a rate limit, said with what to do. */
export function throttledError(options: Pick<TransportOptions, 'origin' | 'history'>, attempts: number): DatastoreError {
  const earlier = options.history?.succeeded ?? 0;
  return new DatastoreError(
    'HTTP_ERROR',
    `${options.origin} answered HTTP 403 without CKAN's error body after ${earlier} request${earlier === 1 ? '' : 's'} had succeeded (${attempts} attempt${attempts === 1 ? '' : 's'}): ` +
      'a front end is most likely limiting the request rate; wait a while and try again (an export goes on with --resume), or ask fewer requests at once (a profile\'s max_in_flight:)',
    { status: 403 },
  );
}

/** The most of an error page a download reads for its message. */
const ERROR_BODY_BYTES = 64 * 1024;

/**
 * A streamed download (`/datastore/dump/<id>`): retried as a search is while
 * no byte of the body has been taken (429/502/503/504, a throttling 403,
 * broken connections), then handed over as it arrives. A 404 is the dump's
 * answer both for a missing resource and for one the token does not open.
 */
export async function sendDownload(wire: WireRequest, options: TransportOptions, stream: StreamExchanger, signal?: AbortSignal): Promise<Download> {
  const random = options.random ?? Math.random;
  for (let attempt = 0; ; attempt++) {
    if (signal?.aborted === true) throw aborted(options.origin, signal.reason);
    let answer: StreamExchange;
    try {
      answer = await stream(wire, signal);
    } catch (error) {
      const failure = classify(error, options, signal);
      if (failure.retry && attempt < options.retries) {
        await wait(backoff(attempt, undefined, options, random), attempt, failure.reason, options, signal);
        continue;
      }
      throw attempt === 0 ? failure.error : withAttempts(failure.error, attempt + 1);
    }
    if (answer.status >= 200 && answer.status < 300) {
      if (options.history !== undefined) options.history.succeeded++;
      const disposition = answer.headers['content-disposition'];
      const filename = disposition === undefined ? undefined : /filename="?([^";]+)"?/i.exec(disposition)?.[1];
      return { contentType: answer.headers['content-type'], filename, body: answer.body, cancel: () => answer.cancel() };
    }
    const text = scrub(await bodyText(answer), options.token);
    const throttled = isThrottling(answer.status, text, options);
    if ((RETRY_STATUSES.has(answer.status) || throttled) && attempt < options.retries) {
      if (answer.retryAfter !== undefined && answer.retryAfter > options.maxRetryDelay) throw waitTooLong(answer.status, answer.retryAfter, options);
      await wait(backoff(attempt, answer.retryAfter, options, random), attempt, throttled ? 'HTTP 403 (rate limited?)' : `HTTP ${answer.status}`, options, signal);
      continue;
    }
    if (throttled) throw throttledError(options, attempt + 1);
    const path = new URL(wire.url).pathname;
    if (answer.status === 404) {
      throw new DatastoreError(
        'NOT_FOUND',
        `${options.origin} has nothing at ${path} (404): the resource is missing, or it is private and ${options.token === undefined ? 'no token was sent' : 'the token does not open it'} (the dump answers 404 for both)`,
        { status: 404, body: excerptOf(text) },
      );
    }
    const error = new DatastoreError('HTTP_ERROR', `${options.origin} answered HTTP ${answer.status} for ${path}${text.trim() === '' ? '' : `: ${excerptOf(text, 200)}`}`, {
      status: answer.status,
      body: excerptOf(text),
    });
    throw RETRY_STATUSES.has(answer.status) && attempt > 0 ? withAttempts(error, attempt + 1) : error;
  }
}

/** The start of an error answer's body as text; the rest is given up. */
async function bodyText(answer: StreamExchange): Promise<string> {
  let text = '';
  let bytes = 0;
  try {
    for await (const piece of answer.body) {
      const chunk = typeof piece === 'string' ? piece : Buffer.from(piece).toString('utf8');
      text += chunk;
      bytes += chunk.length;
      if (bytes >= ERROR_BODY_BYTES) break;
    }
  } catch {
    // What came is enough for a message.
  } finally {
    answer.cancel();
  }
  return text;
}

function excerptOf(text: string, max = 2_000): string {
  const folded = text.replace(/\s+/g, ' ').trim();
  return folded.length > max ? `${folded.slice(0, max)}…` : folded;
}

/**
 * The error for an answer larger than the client reads.
 * @example
 * tooLarge('https://data.example.org', 64 * 1024 * 1024).code // 'RESPONSE_TOO_LARGE'
 */
export function tooLarge(origin: string, maxResponseBytes: number): DatastoreError {
  return new DatastoreError(
    'RESPONSE_TOO_LARGE',
    `the response from ${origin} is larger than ${maxResponseBytes} bytes, the most this client reads (the maxResponseBytes option); ask for fewer records per request`,
  );
}

/**
 * `Retry-After` as ms: delay-seconds or an HTTP date. Anything else is
 * ignored (the backoff applies).
 * @example
 * parseRetryAfter('120') // → 120000
 */
export function parseRetryAfter(header: string | string[] | undefined, now: number = Date.now()): number | undefined {
  const value = Array.isArray(header) ? header[0] : header;
  if (value === undefined) return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1_000;
  const date = Date.parse(text);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/**
 * A server's `Retry-After` longer than the client waits: asking sooner would
 * be refused again (and a rate limiter may count it), so the retries end
 * here, with the time the server named.
 */
function waitTooLong(status: number, retryAfter: number, options: TransportOptions): DatastoreError {
  const seconds = (ms: number): string => `${Number((ms / 1_000).toFixed(2))} s`;
  const at = new Date(Date.now() + retryAfter).toTimeString().slice(0, 8);
  return new DatastoreError(
    'HTTP_ERROR',
    `${options.origin} answered HTTP ${status} and asks for ${seconds(retryAfter)} before another request (Retry-After), longer than this client waits (${seconds(options.maxRetryDelay)}); try again after ${at} (an export goes on with --resume)`,
    { status },
  );
}

/**
 * Full jitter: a random wait up to `retryDelay · 2^attempt`, capped. A
 * server's `Retry-After` is honoured as given (one over the cap ends the
 * retries before this: `waitTooLong`).
 */
function backoff(attempt: number, retryAfter: number | undefined, options: TransportOptions, random: () => number): number {
  if (retryAfter !== undefined) return retryAfter;
  const ceiling = Math.min(options.maxRetryDelay, options.retryDelay * 2 ** attempt);
  return Math.round(random() * ceiling);
}

async function wait(
  delay: number,
  attempt: number,
  reason: string,
  options: TransportOptions,
  signal: AbortSignal | undefined,
): Promise<void> {
  options.onRetry?.({ attempt: attempt + 1, delay, reason });
  try {
    await sleep(delay, undefined, { signal });
  } catch {
    throw aborted(options.origin, signal?.reason);
  }
}

interface Failure {
  readonly error: DatastoreError;
  readonly retry: boolean;
  readonly reason: string;
}

function classify(error: unknown, options: TransportOptions, signal: AbortSignal | undefined): Failure {
  if (error instanceof DatastoreError) return { error, retry: false, reason: error.code };
  if (signal?.aborted === true) return { error: aborted(options.origin, signal.reason), retry: false, reason: 'aborted' };
  const code = errorCode(error);
  const detail = scrub(error instanceof Error ? error.message : String(error), options.token);
  if (TIMEOUT_ERRORS.has(code)) {
    const what =
      code === 'UND_ERR_CONNECT_TIMEOUT'
        ? `could not connect to ${options.origin} within ${options.timeout} ms`
        : code === 'UND_ERR_HEADERS_TIMEOUT'
          ? `${options.origin} did not answer within ${options.timeout} ms`
          : `the response from ${options.origin} did not arrive within ${options.timeout} ms`;
    return {
      error: new DatastoreError('TIMEOUT', `${what}; try again, or allow more time (ckql's --timeout SECONDS, a profile's timeout:, the client's timeout option)`, { cause: error }),
      retry: code === 'UND_ERR_CONNECT_TIMEOUT',
      reason: code,
    };
  }
  const message =
    code === 'UND_ERR_SOCKET' || code === 'UND_ERR_CLOSED'
      ? `the connection to ${options.origin} broke off before the response was complete (${detail})`
      : `could not reach ${options.origin}: ${describeCode(code)}`;
  // The cause carries the system's own words ("connect ECONNREFUSED 127.0.0.1:9"), shown once by the renderer.
  return {
    error: new DatastoreError('CONNECTION_FAILED', message, { cause: error }),
    retry: RETRY_ERRORS.has(code),
    reason: code || 'connection failed',
  };
}

function describeCode(code: string): string {
  switch (code) {
    case 'ECONNREFUSED':
      return 'the connection was refused (is the server running, and is the port right?)';
    case 'ECONNRESET':
      return 'the connection was reset';
    case 'ENOTFOUND':
      return 'the host name does not resolve';
    case 'EAI_AGAIN':
      return 'the host name could not be resolved right now';
    default:
      return code === '' ? 'the connection failed' : code;
  }
}

/** Node reports a failed dual-stack connect as an AggregateError; its parts carry the code. */
function errorCode(error: unknown): string {
  if (typeof error !== 'object' || error === null) return '';
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string') return code;
  if (error instanceof AggregateError) return errorCode(error.errors[0]);
  const cause = (error as { cause?: unknown }).cause;
  return cause === undefined ? '' : errorCode(cause);
}

function aborted(origin: string, reason: unknown): DatastoreError {
  return new DatastoreError('ABORTED', `the request to ${origin} was cancelled`, reason === undefined ? {} : { cause: reason });
}

function withAttempts(error: DatastoreError, attempts: number): DatastoreError {
  return new DatastoreError(error.code, `${error.message} (gave up after ${attempts} attempts)`, {
    ...(error.status === undefined ? {} : { status: error.status }),
    ...(error.body === undefined ? {} : { body: error.body }),
    cause: error.cause,
  });
}

/** A `Location` as the URL it names: a relative one (`/fr/api/…`) read against the request's. */
function resolved(location: string, url: string): string {
  try {
    return new URL(location, url).href;
  } catch {
    return location;
  }
}

/** A server that echoes the token (it should not) must not get it into an error or a log. */
function scrub(text: string, token: string | undefined): string {
  return token !== undefined && token.length >= 4 && text.includes(token) ? text.split(token).join('<redacted>') : text;
}

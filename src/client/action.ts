/**
 * Actions besides `datastore_search` (`package_search`, `package_show`,
 * `resource_show`, `datastore_info`, …) and streamed downloads below the
 * portal's root (`/datastore/dump/<id>`), over the client's transport: the
 * same token, retries, cancellation and politeness as a search.
 */
import { DatastoreError, toolError } from '../errors.js';
import { actionUrl } from './encode.js';
import { readActionResponse } from './response.js';
import { sendDownload, sendRequest } from './transport.js';
import type { TransportOptions } from './transport.js';
import type { ActionOptions, Download, StreamExchanger, WireRequest } from './types.js';

/** What `action` and `download` need of a client. */
export interface ActionContext {
  /** the portal's base URL (it may carry a path) */
  readonly base: URL;
  readonly language: string | undefined;
  readonly method: 'GET' | 'POST';
  /** accept, user agent and the token's header */
  readonly headers: Readonly<Record<string, string>>;
  readonly transport: TransportOptions;
  /** undefined when the client cannot stream (local data without a dump) */
  readonly stream: StreamExchanger | undefined;
  readonly closed: () => boolean;
}

const ACTION_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * The request of one action: a JSON body for POST, or each parameter in the
 * query string for GET (a text as it is, a number or a boolean as its text,
 * anything else as JSON text, as CKAN reads its query string).
 * @example
 * actionWire(context, 'package_search', { q: 'air', rows: 1000 }, 'GET').url
 * // → "https://data.example.org/api/action/package_search?q=air&rows=1000"
 */
export function actionWire(context: ActionContext, name: string, body: Readonly<Record<string, unknown>>, method: 'GET' | 'POST'): WireRequest {
  if (!ACTION_NAME.test(name)) throw toolError('USAGE', [`${JSON.stringify(name)} is not a CKAN action name (letters, digits and _ only)`]);
  const url = actionUrl(context.base, context.language).replace(/datastore_search$/, name);
  if (method === 'POST') {
    return { method, url, headers: { ...context.headers, 'content-type': 'application/json' }, body: JSON.stringify(body) };
  }
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(body)) {
    if (value === undefined) continue;
    params.append(key, typeof value === 'string' ? value : typeof value === 'number' || typeof value === 'boolean' ? String(value) : JSON.stringify(value));
  }
  const query = params.toString();
  return { method, url: query === '' ? url : `${url}?${query}`, headers: context.headers };
}

/** Calls one action and gives its `result`. */
export function callAction(context: ActionContext, name: string, body: Readonly<Record<string, unknown>>, options: ActionOptions = {}): Promise<unknown> {
  if (context.closed()) return Promise.reject(closedError());
  const wire = actionWire(context, name, body, options.method ?? context.method);
  return sendRequest(wire, context.transport, options.signal, readActionResponse);
}

/**
 * Streams a file below the portal's root (no language segment: CKAN serves
 * `/datastore/dump/<id>` there).
 * @example
 * const dump = await downloadFile(context, 'datastore/dump/5f1e…', { format: 'csv' });
 * for await (const piece of dump.body) process.stdout.write(piece);
 */
export function downloadFile(
  context: ActionContext,
  path: string,
  params: Readonly<Record<string, string>>,
  options: { readonly signal?: AbortSignal } = {},
): Promise<Download> {
  if (context.closed()) return Promise.reject(closedError());
  if (context.stream === undefined) {
    return Promise.reject(new DatastoreError('BAD_REQUEST', `this source has no ${path.split('/').slice(0, 2).join('/')} to download from`));
  }
  const root = `${context.base.origin}${context.base.pathname.replace(/\/+$/, '')}`;
  const query = new URLSearchParams(params).toString();
  const url = `${root}/${path.split('/').map(encodeURIComponent).join('/')}${query === '' ? '' : `?${query}`}`;
  const headers = { ...context.headers, accept: '*/*' };
  return sendDownload({ method: 'GET', url, headers }, context.transport, context.stream, options.signal);
}

function closedError(): DatastoreError {
  return new DatastoreError('ABORTED', 'this client is closed; connect() again to send more requests');
}

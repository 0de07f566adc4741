/**
 * The playground's side of the server: the page and its assets at `/` and
 * `/-/play`, and the JSON endpoints under `/-/` that the page calls. What an
 * endpoint does (run a query, explain it, list sources) is given by the layer
 * that owns sources (`PlaygroundActions`); this module owns the rules a
 * server that may hold a portal's token must keep:
 *
 * - the `Host` header must name this server (an IP address, `localhost`, or a
 *   name allowed by the operator), so a DNS-rebinding page cannot reach it;
 * - endpoints refuse requests another origin sent (`Origin`,
 *   `Sec-Fetch-Site`), and take JSON only, so a cross-origin page needs a
 *   CORS preflight, which is never granted;
 * - every answer carries a strict Content-Security-Policy and `nosniff`; the
 *   page's script is a file of this server, never inline; its styles are
 *   files, and CodeMirror's injected style carries the page's nonce;
 * - JSON answers escape `<`, `>` and `&`, so echoed text is inert even if read
 *   as HTML.
 *
 * The CKAN API beside it keeps CKAN's open CORS: it serves what any page may
 * read, and a token reaches it only from its caller.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { isIP } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

import type { PlayAction, PlayDownload, PlaygroundOptions } from './playground-types.js';
import { PLAY_ACTIONS } from './playground-types.js';
import { pathOf } from './routes.js';

export { PLAY_ACTIONS };
export type { PlayAction, PlayDownload, PlaygroundActions, PlaygroundOptions, PlayResult } from './playground-types.js';

/** The built page, found from this file so it works from `src/` (tests, after a build) and from `dist/`. */
export const defaultAssetsDir: string = fileURLToPath(new URL('../../dist/web', import.meta.url));

interface Asset {
  readonly type: string;
  readonly body: Buffer;
  readonly gzip: Buffer;
}

const JSON_TYPE = 'application/json;charset=utf-8';
const TEXT_TYPE = 'text/plain;charset=utf-8';
const NONCE_MARK = '__CKQL_NONCE__';

/** Headers on every playground answer: nothing may frame, sniff, refer or load it from elsewhere. */
const SAFE_HEADERS = {
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
} as const;

/**
 * The page's Content-Security-Policy: its own script and styles only (the
 * editor's generated style carries `nonce`), requests to this server only,
 * no plugins, frames, forms elsewhere or base URL.
 */
export function contentSecurityPolicy(nonce: string): string {
  return [
    "default-src 'none'",
    "script-src 'self'",
    `style-src 'self' 'nonce-${nonce}'`,
    "img-src 'self' data:",
    "connect-src 'self'",
    "form-action 'none'",
    "base-uri 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/**
 * Whether a `Host` header names this server: an IP address (a page whose
 * origin is an address is that address: no rebinding), `localhost` and its
 * subdomains (browsers resolve them to loopback without DNS), or a name the
 * operator allowed. Any other name may be an attacker's domain resolving to
 * this machine.
 * @example hostAllowed('127.0.0.1:8080', []) // true
 * @example hostAllowed('evil.example:8080', []) // false
 */
export function hostAllowed(host: string | undefined, allowed: readonly string[]): boolean {
  if (host === undefined || host === '') return false;
  const name = hostName(host);
  if (name === undefined) return false;
  if (isIP(name) !== 0) return true;
  const lower = name.toLowerCase().replace(/\.$/, '');
  if (lower === 'localhost' || lower.endsWith('.localhost')) return true;
  return allowed.some((each) => each.toLowerCase() === lower);
}

/** The name of a `Host` header without its port; undefined when it is not a host. */
function hostName(host: string): string | undefined {
  const match = /^(?:\[([0-9a-fA-F:.]+)\]|([^:[\]/@\s]+))(?::(\d{1,5}))?$/.exec(host);
  if (match === null) return undefined;
  return match[1] ?? match[2];
}

/**
 * Why a request must be refused as sent by another origin, or undefined:
 * `Sec-Fetch-Site` other than `same-origin`, or an `Origin` that is not this
 * server's. A request with neither header is not from a browser's page.
 * (The page itself may be opened from anywhere, e.g. a share link in a mail:
 * reading it does nothing, and nothing may frame it.)
 */
export function foreignOrigin(headers: IncomingMessage['headers']): string | undefined {
  const site = headers['sec-fetch-site'];
  if (site !== undefined && site !== 'same-origin') {
    return `the request came from another site (Sec-Fetch-Site: ${site})`;
  }
  const origin = headers.origin;
  if (origin !== undefined && origin !== `http://${headers.host ?? ''}`) {
    return 'the request came from another origin';
  }
  return undefined;
}

export interface Playground {
  /** whether a path is the playground's (the page, its assets, its endpoints) */
  owns(path: string): boolean;
  /** answers a request for one of its paths; `body` is a POST's text */
  answer(req: IncomingMessage, res: ServerResponse, body: string | undefined): void;
  /** refuses a body larger than `max` bytes */
  tooLarge(req: IncomingMessage, res: ServerResponse, max: number): void;
}

/**
 * The playground over `actions`. The page is read once here; when it was
 * not built, `/` says how to build it.
 */
export function openPlayground(options: PlaygroundOptions, log: ((line: string) => void) | undefined): Playground {
  const assets = readAssets(options.assets ?? defaultAssetsDir);
  const allowed = options.allowedHosts ?? [];

  const owns = (path: string): boolean => path === '/' || path === '/-/play' || path.startsWith('/-/');

  const finish = (req: IncomingMessage, res: ServerResponse, status: number, headers: Record<string, string | number>, body?: Buffer | string): void => {
    res.writeHead(status, { ...SAFE_HEADERS, ...headers });
    res.end(body);
    if (log !== undefined) log(`${req.method ?? '?'} ${pathOf(req.url)} ${status}`);
  };

  const json = (req: IncomingMessage, res: ServerResponse, status: number, body: unknown): void => {
    const text = safeJson(body);
    finish(req, res, status, { 'content-type': JSON_TYPE, 'content-length': Buffer.byteLength(text), 'cache-control': 'no-store' }, text);
  };

  const refuse = (req: IncomingMessage, res: ServerResponse, status: number, code: string, message: string, hint?: string): void =>
    json(req, res, status, { error: { code, message, ...(hint === undefined ? {} : { hint }) } });

  const page = (req: IncomingMessage, res: ServerResponse): void => {
    const html = assets.get('index.html');
    const nonce = randomBytes(16).toString('base64');
    const headers = { 'content-security-policy': contentSecurityPolicy(nonce), 'cache-control': 'no-store' };
    if (html === undefined) {
      const text = 'The playground page is not built. Run `npm run build` in the ckql folder, then start the server again.\n';
      finish(req, res, 503, { ...headers, 'content-type': TEXT_TYPE, 'content-length': Buffer.byteLength(text) }, text);
      return;
    }
    const text = html.body.toString('utf8').replaceAll(NONCE_MARK, nonce);
    finish(req, res, 200, { ...headers, 'content-type': html.type, 'content-length': Buffer.byteLength(text) }, req.method === 'HEAD' ? undefined : text);
  };

  const asset = (req: IncomingMessage, res: ServerResponse, name: string): void => {
    const found = assets.get(name);
    if (found === undefined || name === 'index.html') {
      refuse(req, res, 404, 'NOT_FOUND', `the playground has no file ${JSON.stringify(name)}`);
      return;
    }
    const gzip = /\bgzip\b/.test(String(req.headers['accept-encoding'] ?? ''));
    const body = gzip ? found.gzip : found.body;
    finish(
      req,
      res,
      200,
      {
        'content-type': found.type,
        'content-length': body.length,
        'cache-control': 'no-cache',
        vary: 'accept-encoding',
        ...(gzip ? { 'content-encoding': 'gzip' } : {}),
      },
      req.method === 'HEAD' ? undefined : body,
    );
  };

  const act = (req: IncomingMessage, res: ServerResponse, action: string, body: string | undefined): void => {
    if (req.method !== 'POST') {
      res.setHeader('allow', 'POST');
      refuse(req, res, 405, 'METHOD_NOT_ALLOWED', `${pathOf(req.url)} takes POST with a JSON object`);
      return;
    }
    if (!/^application\/json\s*(;|$)/i.test(String(req.headers['content-type'] ?? ''))) {
      refuse(req, res, 415, 'UNSUPPORTED_MEDIA_TYPE', `${pathOf(req.url)} takes a JSON body (content-type: application/json)`);
      return;
    }
    let input: unknown;
    try {
      input = JSON.parse(body ?? '');
    } catch {
      input = undefined;
    }
    if (typeof input !== 'object' || input === null || Array.isArray(input)) {
      refuse(req, res, 400, 'BAD_REQUEST', 'the body must be a JSON object');
      return;
    }
    const known = action === 'download' || (PLAY_ACTIONS as readonly string[]).includes(action);
    if (!known) {
      refuse(req, res, 404, 'NOT_FOUND', `no playground endpoint ${JSON.stringify(pathOf(req.url))}`);
      return;
    }
    const gone = new AbortController();
    const onClose = (): void => {
      if (!res.writableFinished) gone.abort();
    };
    res.once('close', onClose);
    const fields = input as Record<string, unknown>;
    const running = action === 'download' ? options.actions.download(fields, gone.signal) : options.actions.call(action as PlayAction, fields, gone.signal);
    running
      .then(async (answer) => {
        if ('status' in answer) {
          json(req, res, answer.status, answer.body);
          return;
        }
        await sendDownload(req, res, answer, gone.signal);
      })
      .catch((error: unknown) => {
        if (log !== undefined) log(`internal error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
        if (!res.headersSent) refuse(req, res, 500, 'INTERNAL', 'the server failed to answer; see its log');
        else res.destroy();
      })
      .finally(() => res.off('close', onClose));
  };

  const sendDownload = async (req: IncomingMessage, res: ServerResponse, download: PlayDownload, signal: AbortSignal): Promise<void> => {
    res.writeHead(200, {
      ...SAFE_HEADERS,
      'content-type': download.type,
      'content-disposition': `attachment; filename="${download.filename.replace(/[^A-Za-z0-9._-]/g, '_')}"`,
      'cache-control': 'no-store',
    });
    for await (const chunk of download.chunks) {
      if (signal.aborted || res.destroyed) return;
      if (!res.write(chunk)) await new Promise((resolve) => (res.once('drain', resolve), res.once('close', resolve)));
    }
    res.end();
    if (log !== undefined) log(`${req.method ?? '?'} ${pathOf(req.url)} 200`);
  };

  const answer = (req: IncomingMessage, res: ServerResponse, body: string | undefined): void => {
    const path = pathOf(req.url);
    if (!hostAllowed(req.headers.host, allowed)) {
      refuse(
        req,
        res,
        421,
        'HOST_NOT_ALLOWED',
        'this server does not answer to that host name',
        'open it at its address (http://127.0.0.1:PORT), at localhost, or allow the name when starting it (--allow-host NAME)',
      );
      return;
    }
    const isPage = path === '/' || path === '/-/play';
    const foreign = isPage ? undefined : foreignOrigin(req.headers);
    if (foreign !== undefined) {
      refuse(req, res, 403, 'FOREIGN_ORIGIN', `refused: ${foreign}`, 'use the playground from its own page');
      return;
    }
    if (isPage) {
      if (req.method !== 'GET' && req.method !== 'HEAD') {
        res.setHeader('allow', 'GET, HEAD');
        refuse(req, res, 405, 'METHOD_NOT_ALLOWED', 'the page is read with GET');
        return;
      }
      page(req, res);
      return;
    }
    const rest = path.slice('/-/'.length);
    if (rest.startsWith('assets/')) {
      if (req.method !== 'GET' && req.method !== 'HEAD') {
        res.setHeader('allow', 'GET, HEAD');
        refuse(req, res, 405, 'METHOD_NOT_ALLOWED', 'files are read with GET');
        return;
      }
      asset(req, res, rest.slice('assets/'.length));
      return;
    }
    act(req, res, rest, body);
  };

  const tooLarge = (req: IncomingMessage, res: ServerResponse, max: number): void =>
    refuse(req, res, 413, 'REQUEST_TOO_LARGE', `the body is larger than ${max} bytes`, 'a query of the playground is at most 100 000 characters');

  return { owns, answer, tooLarge };
}

/** The page's files, each also gzipped once (the script is most of the page's weight). */
function readAssets(dir: string): ReadonlyMap<string, Asset> {
  const assets = new Map<string, Asset>();
  const types: Record<string, string> = {
    'index.html': 'text/html;charset=utf-8',
    'play.js': 'text/javascript;charset=utf-8',
    'play.css': 'text/css;charset=utf-8',
  };
  for (const [name, type] of Object.entries(types)) {
    let body: Buffer;
    try {
      body = readFileSync(join(dir, name));
    } catch {
      continue;
    }
    assets.set(name, { type, body, gzip: gzipSync(body) });
  }
  return assets;
}

/**
 * JSON with `<`, `>`, `&` and the line separators written as `\u` escapes: the
 * same value to a JSON reader, and never markup to anything else.
 * @example safeJson({ q: '<script>' }) // '{"q":"\\u003cscript\\u003e"}'
 */
export function safeJson(value: unknown): string {
  return (JSON.stringify(value) ?? 'null').replace(/[<>&\u2028\u2029]/g, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
}


/**
 * Servers for bisecting section 3's gap (bench/profile/server-bisect.ts),
 * each in its own process like `serve.ts`'s:
 *
 *   serve-bisect.ts ckql <file>  startServer over the resource file, as serve.ts does
 *   serve-bisect.ts floor-with <body-file> <headers-json> [features]
 *                                the floor (serve.ts floor: the same handler when no
 *                                feature is given) plus some of what ckql's process does,
 *                                a comma list:
 *                                  heap     the 200k-row enrolments loaded (loadTable) and kept
 *                                  import   ckql's server module imported, not used
 *                                  options  ckql's createServer options, maxHeadersCount,
 *                                           server.setTimeout(requestTimeout), a clientError listener
 *                                  abort    an AbortController and a res 'close' listener per request
 *                                  queue    requests run through a per-connection queue like ckql's
 *                                  read     the body collected and decoded as ckql's readBody does
 *                                  async    the answer sent from a resolved promise's then
 *                                  text     a string body (`res.end(text)`, length counted per request)
 *                                           and a flat header array, as ckql's send writes them
 *                                  spin<N>  a busy wait of N µs before each answer
 *                                  alloc<N> about N KiB of short-lived small objects made before each answer
 *                                  api      the 200k enrolments' API (openApi) answers each request and
 *                                           its text is made whole; the fixed bytes are sent
 *                                  api-text the same, the API's text sent as ckql's send does (its help
 *                                           link names port 8080, so it is not the floor's answer)
 *                                  api-buffer the same, the text sent as `Buffer.from(text)`
 *                                  batch    the answers of one event-loop turn written together after it
 *                                           (each socket corked when answered, uncorked in setImmediate)
 *   serve-bisect.ts ckql-fixed <body-file> [heap]
 *                                ckql's server.ts (the built one) over a stand-in API that answers
 *                                every request with the body file's text: what server.ts alone costs
 *   serve-bisect.ts ckql-patched <file> <patches>
 *                                `ckql` from a copy of the built server.js with some of its parts
 *                                taken out or changed (a comma list of PATCHES' names)
 *   serve-bisect.ts ckql-timed <file>
 *                                `ckql` with each API answer timed (wall time from the call to its
 *                                promise's settling)
 *
 * The copies of the built `server/` live in bench/.cache/dist/server-<kind>-<pid>
 * (so that their imports of the rest of the build resolve) and are removed on exit.
 *
 * With CKQL_SERVE_GC=<file>, the process counts its garbage collections and
 * their time by kind (a PerformanceObserver) and writes them, with the new
 * space's size, to that file as JSON every 250 ms; with CKQL_SERVE_TIMES=<file>,
 * the `api` features and `ckql-timed` write the median, quartiles and mean
 * of their last 20,000 answer times (µs) there.
 * Prints `READY <url>` once listening; exits on SIGTERM.
 */
import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { cpSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type * as ApiModule from '../../src/server/api.js';
import type { Api, ApiAnswer } from '../../src/server/api.js';
import { ckqlModules, distDir } from '../lib/ckql.js';
import { enrolmentsFile } from '../lib/data.js';
import { loadTable } from '../lib/tables.js';

const [kind, ...rest] = process.argv.slice(2);

/** Writes a file the bench reads while this process runs: never seen half written. */
function writeAtomically(file: string, text: string): void {
  writeFileSync(`${file}.tmp`, text);
  renameSync(`${file}.tmp`, file);
}

/** A copy of the built `server/` beside it, removed when this process exits. */
function copyOfServer(name: string): string {
  const dir = path.join(distDir, `server-${name}-${process.pid}`);
  cpSync(path.join(distDir, 'server'), dir, { recursive: true });
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

const gcFile = process.env.CKQL_SERVE_GC;
if (gcFile !== undefined && gcFile !== '') {
  const { PerformanceObserver, constants } = await import('node:perf_hooks');
  const names: Record<number, string> = {
    [constants.NODE_PERFORMANCE_GC_MINOR]: 'minor',
    [constants.NODE_PERFORMANCE_GC_MAJOR]: 'major',
    [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental',
    [constants.NODE_PERFORMANCE_GC_WEAKCB]: 'weakcb',
  };
  const totals: Record<string, { count: number; ms: number }> = {};
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      const name = names[(entry as unknown as { detail: { kind: number } }).detail.kind] ?? 'other';
      const t = (totals[name] ??= { count: 0, ms: 0 });
      t.count++;
      t.ms += entry.duration;
    }
  }).observe({ entryTypes: ['gc'] });
  const v8 = await import('node:v8');
  setInterval(() => {
    const space = v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space');
    writeAtomically(gcFile, JSON.stringify({ ...totals, newSpace: { count: 0, ms: 0, bytes: space?.space_size ?? 0 } }));
  }, 250).unref();
}


async function serveCkql(files: readonly string[]): Promise<void> {
  const { startServer } = await ckqlModules.server();
  const tables = await Promise.all(files.map((file) => loadTable(file)));
  const server = await startServer({ tables, port: 0 });
  process.once('SIGTERM', () => { void Promise.resolve(server.close()).then(() => process.exit(0)); });
  process.stdout.write(`READY ${server.url}\n`);
}

/** Kept alive for the `heap` feature. */
const held: unknown[] = [];

/** The last 20,000 API answer times of `floor-with api`, written as `ckql-timed` writes them. */
const times = new Float64Array(20_000);
let timed = 0;
const timesFile = process.env.CKQL_SERVE_TIMES;
if (timesFile !== undefined && timesFile !== '') {
  setInterval(() => {
    const k = Math.min(timed, times.length);
    if (k === 0) return;
    const sorted = times.slice(0, k).sort();
    let sum = 0;
    for (const x of sorted) sum += x;
    const at = (q: number) => (sorted[Math.floor(q * k)] as number) * 1000;
    writeAtomically(timesFile, JSON.stringify({ count: timed, p25: at(0.25), median: at(0.5), p75: at(0.75), mean: (sum / k) * 1000 }));
  }, 250).unref();
}

async function serveFloorWith(bodyFile: string, headersJson: string, features: ReadonlySet<string>): Promise<void> {
  for (const feature of features) {
    if (!['heap', 'import', 'options', 'abort', 'queue', 'read', 'async', 'text', 'api', 'api-text', 'api-buffer', 'batch'].includes(feature) && !/^(spin|alloc)\d+$/.test(feature)) throw new Error(`serve-bisect.ts floor-with: unknown feature ${feature}`);
  }
  if (features.has('heap')) held.push(await loadTable(enrolmentsFile(200_000)));
  if (features.has('import')) held.push(await ckqlModules.server());
  let api: Api | undefined;
  let wholeText: (answer: ApiAnswer) => string = (answer) => answer.text;
  if (features.has('api') || features.has('api-text') || features.has('api-buffer')) {
    const apiModule = (await import(pathToFileURL(path.join(distDir, 'server', 'api.js')).href)) as typeof ApiModule;
    wholeText = apiModule.wholeText;
    api = await apiModule.openApi({ tables: [await loadTable(enrolmentsFile(200_000))] }, 'http://127.0.0.1:8080');
  }
  const bytes = readFileSync(bodyFile);
  const text = bytes.toString('utf8');
  const givenHeaders = JSON.parse(headersJson) as Record<string, string>;
  const objectHeaders = { ...givenHeaders, 'content-length': String(bytes.length) };
  const type = givenHeaders['content-type'] as string;
  const spin = [...features].find((f) => f.startsWith('spin'));
  const spinMicros = spin === undefined ? 0 : Number(spin.slice('spin'.length));
  const alloc = [...features].find((f) => f.startsWith('alloc'));
  // objects of two fields: 40 bytes each on a 64-bit heap without pointer compression
  const allocObjects = alloc === undefined ? 0 : Math.round((Number(alloc.slice('alloc'.length)) * 1024) / 40);

  // `batch`: the answers of one event-loop turn held (socket corked) and written together after it
  const corked: Socket[] = [];
  const uncorkAll = (): void => {
    for (const socket of corked) socket.uncork();
    corked.length = 0;
  };
  const send = (res: ServerResponse): void => {
    if (features.has('batch')) {
      const socket = res.socket as Socket;
      if (corked.length === 0) setImmediate(uncorkAll);
      socket.cork();
      corked.push(socket);
    }
    if (spinMicros > 0) for (const until = performance.now() + spinMicros / 1000; performance.now() < until; );
    if (allocObjects > 0) {
      const garbage: { a: number; b: number }[] = [];
      for (let i = 0; i < allocObjects; i++) garbage.push({ a: i, b: i + 1 });
      held[1] = garbage;
    }
    if (features.has('text')) {
      res.writeHead(200, ['content-type', type, 'content-length', Buffer.byteLength(text), 'access-control-allow-origin', '*']);
      res.end(text);
    } else {
      res.writeHead(200, objectHeaders);
      res.end(bytes);
    }
  };
  const answer = (res: ServerResponse): void => {
    if (features.has('abort')) {
      const gone = new AbortController();
      const onClose = (): void => {
        if (!res.writableFinished) gone.abort();
      };
      res.once('close', onClose);
      const sent = (): void => {
        res.off('close', onClose);
        send(res);
      };
      if (features.has('async')) void Promise.resolve(gone.signal).then(sent);
      else sent();
      return;
    }
    if (features.has('async')) void Promise.resolve().then(() => send(res));
    else send(res);
  };
  const handle = (req: IncomingMessage, res: ServerResponse): void => {
    if (api !== undefined) {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const request = { method: 'POST', url: req.url ?? '/', contentType: req.headers['content-type'], body: Buffer.concat(chunks).toString('utf8') };
        const t0 = performance.now();
        void api.answer(request).then((answered) => {
          // the answer's text made whole (its page follows the envelope's beginning), as server.ts's send does
          const text = wholeText(answered);
          times[timed++ % times.length] = performance.now() - t0;
          if (features.has('api-buffer')) {
            const bytes = Buffer.from(text);
            res.writeHead(200, ['content-type', type, 'content-length', bytes.length, 'access-control-allow-origin', '*']);
            res.end(bytes);
            return;
          }
          if (!features.has('api-text')) {
            held[0] = text;
            return send(res);
          }
          res.writeHead(200, ['content-type', type, 'content-length', Buffer.byteLength(text), 'access-control-allow-origin', '*']);
          res.end(text);
        });
      });
      return;
    }
    if (!features.has('read')) {
      req.on('data', () => {});
      req.on('end', () => answer(res));
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      chunks.push(chunk);
    });
    req.on('end', () => {
      const only = chunks.length === 1 ? chunks[0] : undefined;
      held[0] = only !== undefined ? only.toString('utf8') : Buffer.concat(chunks, size).toString('utf8');
      answer(res);
    });
    req.on('error', () => {});
  };

  const server = features.has('options')
    ? createServer({ headersTimeout: 10_000, requestTimeout: 30_000, keepAliveTimeout: 5_000, maxHeaderSize: 32 * 1024, connectionsCheckingInterval: 1_000 })
    : createServer();
  if (features.has('options')) {
    server.maxHeadersCount = 100;
    server.setTimeout(30_000);
    server.on('clientError', (_error, socket) => socket.destroy());
  }
  server.on('request', features.has('queue') ? queued(handle) : handle);
  server.listen(0, '127.0.0.1', () => {
    const { port } = server.address() as AddressInfo;
    process.stdout.write(`READY http://127.0.0.1:${port}\n`);
  });
  process.once('SIGTERM', () => server.close(() => process.exit(0)));
}

/** A copy of the shape of ckql's per-connection queue (src/server/server.ts, ConnectionQueue), for the `queue` feature. */
function queued(handle: (req: IncomingMessage, res: ServerResponse) => void): (req: IncomingMessage, res: ServerResponse) => void {
  const QUEUE = Symbol('queue');
  class Queue {
    private readonly waiting: ServerResponse[] = [];
    private busy = false;
    constructor(private readonly socket: NonNullable<IncomingMessage['socket']>) {
      socket.once('close', () => {
        this.waiting.length = 0;
      });
    }
    push(res: ServerResponse): void {
      if (this.busy) this.waiting.push(res);
      else {
        this.busy = true;
        this.run(res);
      }
    }
    private run(res: ServerResponse): void {
      res.once('close', this.after);
      handle(res.req, res);
    }
    private readonly after = (): void => {
      if (this.socket.destroyed) this.waiting.length = 0;
      const next = this.waiting.shift();
      if (next === undefined) this.busy = false;
      else this.run(next);
    };
  }
  return (req, res) => {
    const holder = req.socket as typeof req.socket & { [QUEUE]?: Queue };
    let queue = holder[QUEUE];
    if (queue === undefined) {
      queue = new Queue(req.socket);
      holder[QUEUE] = queue;
    }
    queue.push(res);
  };
}

/** A stand-in for `server/api.js` in a copy of the built server: every request gets the same text. */
const FIXED_API = `
export const JSON_TYPE = 'application/json;charset=utf-8';
export function engineOf() { return {}; }
export async function privateResourceIds() { return new Set(); }
export function apiFor() {
  const text = process.env.CKQL_FIXED_TEXT;
  const answer = { status: 200, type: JSON_TYPE, text };
  return { cancellable: false, answer: async () => answer, refuse: () => answer };
}
`;

async function serveCkqlFixed(bodyFile: string, heap: boolean): Promise<void> {
  if (heap) held.push(await loadTable(enrolmentsFile(200_000)));
  const dir = copyOfServer('fixed');
  writeFileSync(path.join(dir, 'api.js'), FIXED_API);
  process.env.CKQL_FIXED_TEXT = readFileSync(bodyFile, 'utf8');
  const { startServer } = (await import(pathToFileURL(path.join(dir, 'server.js')).href)) as Awaited<ReturnType<typeof ckqlModules.server>>;
  const server = await startServer({ tables: [], port: 0 });
  process.once('SIGTERM', () => { void Promise.resolve(server.close()).then(() => process.exit(0)); });
  process.stdout.write(`READY ${server.url}\n`);
}

/** A wrapper of `server/api.js` in a copy of the built server: each answer's time kept in a ring. */
const TIMED_API = `
export * from '../server/api.js';
import { apiFor as realApiFor } from '../server/api.js';
import { renameSync, writeFileSync } from 'node:fs';
const ring = new Float64Array(20000);
let n = 0;
const file = process.env.CKQL_SERVE_TIMES;
if (file) setInterval(() => {
  const k = Math.min(n, ring.length);
  if (k === 0) return;
  const sorted = ring.slice(0, k).sort();
  let sum = 0;
  for (const x of sorted) sum += x;
  writeFileSync(file + '.tmp', JSON.stringify({ count: n, p25: sorted[Math.floor(k / 4)] * 1000, median: sorted[Math.floor(k / 2)] * 1000, p75: sorted[Math.floor((3 * k) / 4)] * 1000, mean: (sum / k) * 1000 }));
  renameSync(file + '.tmp', file);
}, 250).unref();
export function apiFor(...args) {
  const api = realApiFor(...args);
  return {
    cancellable: api.cancellable,
    refuse: api.refuse,
    answer: (request, signal) => {
      const t0 = performance.now();
      return api.answer(request, signal).then((answer) => {
        ring[n++ % ring.length] = performance.now() - t0;
        return answer;
      });
    },
  };
}
`;

/** Text replacements in the built `server/server.js`, by name (bench/profile/server-bisect.ts). */
const PATCHES: Record<string, [string, string]> = {
  noqueue: ['const queue = queueOf(req.socket, handle);', 'const queue = undefined;'],
  notimeout: ['server.setTimeout(requestTimeout);', ''],
  defaultserver: ['const server = createServer({', 'const server = createServer() || createServer({'],
  noclienterror: ["server.on('clientError', clientErrorAnswer(url));", ''],
  // the answers of one event-loop turn written together after it (as floor-with's `batch`)
  batch: [
    '        res.writeHead(answer.status, headers);\n        res.end(text);',
    '        { const socket = res.socket; const c = (globalThis.__corked ??= []); if (socket !== null) { if (c.length === 0) setImmediate(() => { for (const s of c) s.uncork(); c.length = 0; }); socket.cork(); c.push(socket); } }\n' +
      '        res.writeHead(answer.status, headers);\n        res.end(text);',
  ],
};

async function serveCkqlPatched(file: string, patches: readonly string[]): Promise<void> {
  const dir = copyOfServer('patched');
  let code = readFileSync(path.join(dir, 'server.js'), 'utf8');
  for (const name of patches) {
    const patch = PATCHES[name];
    if (patch === undefined || !code.includes(patch[0])) throw new Error(`serve-bisect.ts ckql-patched: no patch ${name} for this build`);
    code = code.replace(patch[0], patch[1]);
  }
  writeFileSync(path.join(dir, 'server.js'), code);
  const { startServer } = (await import(pathToFileURL(path.join(dir, 'server.js')).href)) as Awaited<ReturnType<typeof ckqlModules.server>>;
  const server = await startServer({ tables: [await loadTable(file)], port: 0 });
  process.once('SIGTERM', () => { void Promise.resolve(server.close()).then(() => process.exit(0)); });
  process.stdout.write(`READY ${server.url}\n`);
}

async function serveCkqlTimed(files: readonly string[]): Promise<void> {
  const dir = copyOfServer('timed');
  writeFileSync(path.join(dir, 'api.js'), TIMED_API);
  const { startServer } = (await import(pathToFileURL(path.join(dir, 'server.js')).href)) as Awaited<ReturnType<typeof ckqlModules.server>>;
  const tables = await Promise.all(files.map((file) => loadTable(file)));
  const server = await startServer({ tables, port: 0 });
  process.once('SIGTERM', () => { void Promise.resolve(server.close()).then(() => process.exit(0)); });
  process.stdout.write(`READY ${server.url}\n`);
}

if (kind === 'ckql') await serveCkql(rest);
else if (kind === 'floor-with') await serveFloorWith(rest[0] as string, rest[1] as string, new Set((rest[2] ?? '').split(',').filter((x) => x !== '')));
else if (kind === 'ckql-fixed') await serveCkqlFixed(rest[0] as string, rest[1] === 'heap');
else if (kind === 'ckql-patched') await serveCkqlPatched(rest[0] as string, (rest[1] ?? '').split(',').filter((x) => x !== ''));
else if (kind === 'ckql-timed') await serveCkqlTimed(rest);
else throw new Error(`serve-bisect.ts: first argument must be ckql, floor-with, ckql-fixed, ckql-patched or ckql-timed, got ${kind}`);

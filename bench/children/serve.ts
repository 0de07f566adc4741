/**
 * A server in its own process, for the load and client benchmarks.
 *
 *   serve.ts ckql <file>…        startServer over the resource files
 *   serve.ts pglite <file>…      startServer over PGlite loaded with the files, as
 *                                `ckql serve --engine pglite` opens it (two threads)
 *   serve.ts db <postgres-url>   startServer over a PostgreSQL datastore, as
 *                                `ckql serve --db postgres://…` serves it
 *   serve.ts floor <body-file> <headers-json>
 *                                plain node:http answering every request with
 *                                the same precomputed headers and bytes (the floor)
 *
 *   serve.ts floor-json <body-file> <headers-json>
 *                                the floor plus the JSON work no server can skip:
 *                                JSON.parse of the request body and JSON.stringify
 *                                of the same response object, per request
 *                                (used by bench/profile/server-floors.ts)
 *
 *   serve.ts floor-spin <body-file> <headers-json> <µs>
 *                                the floor after a busy wait of that many µs per
 *                                request: what a server doing that much work
 *                                reaches (used by bench/profile/server-cpu.ts)
 *
 * A table is a resource file, loaded with `loadResources` as `ckql serve`
 * does (alias: the file name without extension).
 * Prints `READY <url>` once listening; exits on SIGTERM.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFileSync } from 'node:fs';
import { ckqlModules } from '../lib/ckql.js';
import { loadTable } from '../lib/tables.js';

const [kind, ...rest] = process.argv.slice(2);

async function serveCkql(files: readonly string[]): Promise<void> {
  const { startServer } = await ckqlModules.server();
  const tables = await Promise.all(files.map((file) => loadTable(file)));
  const server = await startServer({ tables, port: 0 });
  process.once('SIGTERM', () => { void Promise.resolve(server.close()).then(() => process.exit(0)); });
  process.stdout.write(`READY ${server.url}\n`);
}

async function serveDb(url: string): Promise<void> {
  const [{ startServer }, { openEngine }] = await Promise.all([ckqlModules.server(), ckqlModules.open()]);
  const engine = await openEngine({ db: url });
  const server = await startServer({ engine, port: 0 });
  process.once('SIGTERM', () => {
    void Promise.resolve(server.close()).then(() => engine.close()).then(() => process.exit(0));
  });
  process.stdout.write(`READY ${server.url}\n`);
}

async function servePglite(files: readonly string[]): Promise<void> {
  const [{ startServer }, { openEngine }] = await Promise.all([ckqlModules.server(), ckqlModules.open()]);
  const engine = await openEngine({ engine: 'pglite', data: files, threads: 2 });
  const server = await startServer({ engine, port: 0 });
  process.once('SIGTERM', () => {
    void Promise.resolve(server.close()).then(() => engine.close()).then(() => process.exit(0));
  });
  process.stdout.write(`READY ${server.url}\n`);
}

function serveFloor(bodyFile: string, headersJson: string, withJson: boolean, spinMicros = 0): void {
  const body = readFileSync(bodyFile);
  const headers = { ...(JSON.parse(headersJson) as Record<string, string>), 'content-length': String(body.length) };
  const answer: unknown = JSON.parse(body.toString('utf8'));
  const server = createServer((req, res) => {
    // read the request body as any real handler must, then answer with the fixed bytes
    if (!withJson) {
      req.on('data', () => {});
      req.on('end', () => {
        if (spinMicros > 0) for (const until = performance.now() + spinMicros / 1000; performance.now() < until; );
        res.writeHead(200, headers);
        res.end(body);
      });
      return;
    }
    let text = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => { text += chunk; });
    req.on('end', () => {
      JSON.parse(text);
      res.writeHead(200, headers);
      res.end(JSON.stringify(answer));
    });
  });
  server.listen(0, '127.0.0.1', () => {
    const { port } = server.address() as AddressInfo;
    process.stdout.write(`READY http://127.0.0.1:${port}\n`);
  });
  process.once('SIGTERM', () => server.close(() => process.exit(0)));
}

if (kind === 'ckql') await serveCkql(rest);
else if (kind === 'pglite') await servePglite(rest);
else if (kind === 'db') await serveDb(rest[0] as string);
else if (kind === 'floor' || kind === 'floor-json') serveFloor(rest[0] as string, rest[1] as string, kind === 'floor-json');
else if (kind === 'floor-spin') serveFloor(rest[0] as string, rest[1] as string, false, Number(rest[2]));
else throw new Error(`serve.ts: first argument must be ckql, db or floor, got ${kind}`);

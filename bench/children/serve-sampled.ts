/**
 * A ckql server in its own process whose memory the parent can read.
 *
 *   serve-sampled.ts <file>…     startServer over the resource files
 *
 * Speaks over the IPC channel: sends `{ ready: url }` once listening; to
 * `'sample'` it answers with its memory and the number of answers written so
 * far, to `'gc'` the same after full garbage collections (start it with
 * `--expose-gc`). Exits when the parent disconnects.
 */
import { ckqlModules } from '../lib/ckql.js';
import { loadTable } from '../lib/tables.js';

export interface ServerSample {
  readonly rss: number;
  readonly heapUsed: number;
  readonly external: number;
  readonly arrayBuffers: number;
  /** answers written to the end (any status) since the server started */
  readonly answered: number;
  /** searches the engine was asked for since the server started */
  readonly searched: number;
}

const files = process.argv.slice(2);
const { startServer } = await ckqlModules.server();
const { memoryEngine } = await ckqlModules.memoryEngine();
const tables = await Promise.all(files.map((file) => loadTable(file)));
let answered = 0;
let searched = 0;
const memory = memoryEngine(tables);
const engine = { ...memory, search: (...args: Parameters<typeof memory.search>) => { searched++; return memory.search(...args); } };
const server = await startServer({ engine, port: 0, log: () => { answered++; } });
const gc = (globalThis as { gc?: () => void }).gc;

function sample(): ServerSample {
  const usage = process.memoryUsage();
  return { rss: usage.rss, heapUsed: usage.heapUsed, external: usage.external, arrayBuffers: usage.arrayBuffers, answered, searched };
}

process.on('message', (message) => {
  if (message === 'gc') {
    if (gc === undefined) throw new Error('serve-sampled.ts needs --expose-gc for "gc"');
    for (let i = 0; i < 4; i++) gc();
  }
  process.send?.(sample());
});
process.once('disconnect', () => { void Promise.resolve(server.close()).then(() => process.exit(0)); });
process.send?.({ ready: server.url });

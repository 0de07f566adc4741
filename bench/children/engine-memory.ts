/**
 * Memory of a process answering with one engine: loads the file, runs one
 * search, prints `{rss, heap, external}` in bytes as one JSON line.
 *
 *   engine-memory.ts memory|pglite|postgres <file>   (postgres: CKQL_BENCH_PG_URL)
 */
import { openEngine } from '../../src/engine/open.js';

const [kind, file] = process.argv.slice(2) as ['memory' | 'pglite' | 'postgres', string];
const url = process.env['CKQL_BENCH_PG_URL'];
const engine = await openEngine(
  kind === 'postgres' ? { engine: 'postgres', ...(url === undefined ? {} : { db: url }) } : { engine: kind, data: [file] },
);
const [first] = await engine.resources();
if (first !== undefined) await engine.search({ resource_id: first.id, filters: {}, limit: 100 });
(globalThis as { gc?: () => void }).gc?.();
const usage = process.memoryUsage();
process.stdout.write(JSON.stringify({ rss: usage.rss, heap: usage.heapUsed, external: usage.external + usage.arrayBuffers }) + '\n');
await engine.close();

/**
 * Section 12: the server under load on PGlite beside the memory engine.
 *
 * - 200 keep-alive clients (autocannon, its own process) for
 *   `CKQL_BENCH_UNDERLOAD_SECONDS` (default 30; 5 with `--quick`), each
 *   sending the section's search again as soon as its answer is read, with
 *   autocannon's 20 s timeout: requests/s, p99 and timeouts per engine.
 * - 400 raw connections that each ask for 32,000 records and never read
 *   (as section 8's), then one normal request (a filtered search, limit 10)
 *   on a new connection: how long it waits.
 *
 * Both servers are `startServer` (the tsc build) in their own process over
 * the same generated enrolments; the PGlite one is opened as `ckql serve
 * --engine pglite` opens it (two threads).
 */
import { connect } from 'node:net';
import type { Socket } from 'node:net';
import type { RunConfig } from './lib/config.js';
import { runChild, startChild } from './lib/child.js';
import type { RunningChild } from './lib/child.js';
import { enrolmentsFile } from './lib/data.js';
import { formatCount } from './lib/harness.js';
import { code } from './lib/report.js';
import type { SectionResult } from './lib/report.js';
import type { LoadSummary } from './children/load.js';

/** The table the figures were taken on: the demo data's size. */
const ROWS = 20_000;
const CLIENTS = 200;
const SLOW_READERS = 400;
const BIG_LIMIT = 32_000;
const SEARCH = '/api/3/action/datastore_search';
const NORMAL = `${SEARCH}?resource_id=enrolments&filters=${encodeURIComponent(JSON.stringify({ course: 'PHYS-303' }))}&limit=10`;

function openSocket(url: string): Promise<Socket> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => resolve(socket));
    socket.once('error', reject);
  });
}

/** Opens the slow readers, then times one normal request; every socket is closed after. */
async function normalBesideSlowReaders(base: string): Promise<{ waitMs: number; status: string }> {
  const sockets: Socket[] = [];
  try {
    for (let c = 0; c < SLOW_READERS; c++) {
      const socket = await openSocket(base);
      socket.pause(); // never reads
      socket.on('error', () => undefined);
      socket.write(`GET ${SEARCH}?resource_id=enrolments&limit=${BIG_LIMIT} HTTP/1.1\r\nHost: bench\r\n\r\n`);
      sockets.push(socket);
    }
    // The requests are on their way; the normal one follows on a connection of its own.
    await new Promise((resolve) => setTimeout(resolve, 200));
    const started = performance.now();
    try {
      const response = await fetch(base + NORMAL);
      await response.arrayBuffer();
      return { waitMs: performance.now() - started, status: String(response.status) };
    } catch (error) {
      // The server's request timeout (30 s) closes a request that waited that long: a figure, not a failed run.
      const cause = (error as { cause?: { message?: string } }).cause;
      return { waitMs: performance.now() - started, status: `no answer: ${cause?.message ?? String(error)}` };
    }
  } finally {
    for (const socket of sockets) socket.destroy();
  }
}

export async function benchUnderLoad(config: RunConfig, log: (line: string) => void): Promise<SectionResult> {
  const seconds = Number(process.env.CKQL_BENCH_UNDERLOAD_SECONDS ?? (config.quick ? 5 : 30));
  const file = enrolmentsFile(ROWS);
  log(`underload: memory and pglite servers over ${formatCount(ROWS)} enrolments`);
  const children: RunningChild[] = [];
  try {
    children.push(await startChild('serve.ts', ['ckql', file]), await startChild('serve.ts', ['pglite', file]));
    const servers = { memory: (children[0] as RunningChild).ready, pglite: (children[1] as RunningChild).ready } as const;
    const rows: string[][] = [];
    const waits: string[][] = [];
    const measured: Record<'memory' | 'pglite', { load: LoadSummary; wait: { waitMs: number; status: string } }> = {} as never;
    for (const engine of ['memory', 'pglite'] as const) {
      const base = servers[engine];
      const first = await fetch(base + NORMAL);
      if (first.status !== 200) throw new Error(`underload: the ${engine} server answered ${first.status}`);
      log(`  ${engine}: ${CLIENTS} clients for ${seconds} s`);
      const load = await runChild<LoadSummary>('load.ts', [JSON.stringify({ url: base + NORMAL, connections: CLIENTS, duration: seconds, timeout: 20, warmupSeconds: 1 })], { timeoutMs: (seconds + 60) * 1000 });
      log(`  ${engine}: one request beside ${SLOW_READERS} slow readers`);
      const wait = await normalBesideSlowReaders(base);
      measured[engine] = { load, wait };
      rows.push([engine, formatCount(Math.round(load.rps)), `${load.p50} ms`, `${load.p99} ms`, formatCount(load.requests), formatCount(load.timeouts), formatCount(load.errors + load.non2xx)]);
      waits.push([engine, `${Math.round(wait.waitMs)} ms`, wait.status]);
    }
    const lite = measured.pglite;
    return {
      id: 'underload',
      title: '12. Under load: PGlite beside the memory engine',
      tables: [
        {
          title: `${CLIENTS} keep-alive clients for ${seconds} s, GET ${code(NORMAL)}, ${formatCount(ROWS)} enrolments`,
          headers: ['engine', 'requests/s', 'p50', 'p99', 'requests', 'timeouts (20 s)', 'errors, non-2xx'],
          rows,
        },
        {
          title: `One normal request while ${SLOW_READERS} connections each hold an unread answer of ${formatCount(BIG_LIMIT)} records`,
          headers: ['engine', 'answered after', 'status'],
          rows: waits,
        },
      ],
      targets: [
        { section: 'underload', what: `PGlite, ${CLIENTS} keep-alive clients, ${seconds} s`, goal: '0 timeouts', measured: `${lite.load.timeouts} timeouts; p99 ${lite.load.p99} ms (memory: ${measured.memory.load.p99} ms)`, met: lite.load.timeouts === 0 },
        { section: 'underload', what: `PGlite, a normal request beside ${SLOW_READERS} slow readers`, goal: '≤ 1 s', measured: `${Math.round(lite.wait.waitMs)} ms (memory: ${Math.round(measured.memory.wait.waitMs)} ms)`, met: lite.wait.status === '200' && lite.wait.waitMs <= 1000 },
      ],
      notes: [
        `Run as \`CKQL_BENCH_UNDERLOAD_SECONDS=${seconds} npm run bench -- --only underload\`. Each server is \`startServer\` (the tsc build) in its own process; the PGlite one over \`openEngine({ engine: 'pglite', threads: 2 })\`, as \`ckql serve --engine pglite\` opens it (without the bin's wasm tiering budget). autocannon runs in a third process with a 20 s timeout per request. The slow readers are raw sockets that write one request for ${formatCount(BIG_LIMIT)} records and never read; the normal request is sent 200 ms later on a new connection and timed to its last byte.`,
      ],
    };
  } finally {
    await Promise.all(children.map((c) => c.stop()));
  }
}

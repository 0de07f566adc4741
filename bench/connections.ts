/**
 * Section 8: the server's memory under clients that pipeline requests for
 * the largest answers (32,000 records) and never read them, and after they
 * close. The server runs in its own process over the generated enrolments;
 * this process opens raw sockets, writes the pipelined requests, never
 * reads, samples the server's RSS, closes the sockets, and samples again.
 *
 * Scenarios, each from a settled server (full GC before):
 * - 100 connections × 1 request: what one unread answer per connection costs
 *   (the floor the others are held to);
 * - 100 connections × 5 pipelined requests;
 * - 1 connection × 200 pipelined requests in one write (past the 64-request
 *   queue bound: the server closes it).
 *
 * Peak RSS is the kernel's high-water mark (`VmHWM` in `/proc/PID/status`,
 * reset through `/proc/PID/clear_refs` before each scenario); without
 * `/proc` it is the highest of the 100 ms samples.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import type { Socket } from 'node:net';
import path from 'node:path';
import type { RunConfig } from './lib/config.js';
import { benchDir, enrolmentsFile, rootDir } from './lib/data.js';
import { formatBytes, formatCount, formatTime } from './lib/harness.js';
import type { SectionResult } from './lib/report.js';
import type { ServerSample } from './children/serve-sampled.js';

const SEARCH_PATH = '/api/3/action/datastore_search';
const LIMIT = 32_000;
/** The server lets a connection idle for its request timeout (30 s); scenarios stay well inside it. */
const MAX_HOLD_MS = 20_000;
/** A scenario is over when no answer was written for this long. */
const QUIET_MS = 1_500;
/** The measure: memory "still held 3 s after they close". */
const AFTER_CLOSE_MS = 3_000;
/** "Comes back": the heap after a full GC within this of the heap before the scenario. */
const HEAP_BACK_LIMIT = 16 * 1024 * 1024;

interface Scenario {
  readonly name: string;
  readonly connections: number;
  readonly requests: number;
}

/** The scenarios; a `--quick` run opens 20 connections where a full one opens 100. */
function scenarios(quick: boolean): readonly Scenario[] {
  const many = quick ? 20 : 100;
  return [
    { name: `${many} connections × 1 request (floor)`, connections: many, requests: 1 },
    { name: `${many} connections × 5 pipelined`, connections: many, requests: 5 },
    { name: '1 connection × 200 pipelined, one write', connections: 1, requests: 200 },
  ];
}

interface Measured {
  readonly scenario: Scenario;
  readonly before: ServerSample;
  readonly peakRss: number;
  readonly answered: number;
  readonly searched: number;
  readonly closedByServer: number;
  readonly heldMs: number;
  readonly rssAfterClose: number;
  readonly afterGc: ServerSample;
}

/** The server child and its IPC channel: one question at a time. */
class SampledServer {
  private waiting: ((sample: ServerSample) => void)[] = [];

  private constructor(readonly child: ChildProcess, readonly url: string) {
    child.on('message', (message) => this.waiting.shift()?.(message as ServerSample));
  }

  static start(file: string): Promise<SampledServer> {
    const child = spawn(process.execPath, ['--expose-gc', '--import', 'tsx', path.join(benchDir, 'children', 'serve-sampled.ts'), file], {
      cwd: rootDir,
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    return new Promise((resolve, reject) => {
      child.once('message', (message) => resolve(new SampledServer(child, (message as { ready: string }).ready)));
      child.once('exit', (code, signal) => reject(new Error(`serve-sampled.ts exited (${code ?? signal}) before it was ready`)));
      child.once('error', reject);
    });
  }

  ask(what: 'sample' | 'gc'): Promise<ServerSample> {
    return new Promise((resolve) => {
      this.waiting.push(resolve);
      this.child.send(what);
    });
  }

  /** Current and peak RSS from the kernel, when `/proc` has them. */
  rss(): { now: number; peak: number } | undefined {
    const file = `/proc/${this.child.pid}/status`;
    if (!existsSync(file)) return undefined;
    const status = readFileSync(file, 'utf8');
    const kib = (key: string): number => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN) * 1024;
    return { now: kib('VmRSS'), peak: kib('VmHWM') };
  }

  resetPeak(): void {
    try {
      writeFileSync(`/proc/${this.child.pid}/clear_refs`, '5');
    } catch {
      // no /proc: the sampled maximum stands in
    }
  }

  stop(): Promise<void> {
    return new Promise((done) => {
      if (this.child.exitCode !== null || this.child.signalCode !== null) return done();
      this.child.once('exit', () => done());
      this.child.disconnect();
    });
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** `CKQL_BENCH_DEBUG=1`: every sample on stderr as it is taken (MiB), to see when memory grows and when it comes back. */
const TRACE = process.env.CKQL_BENCH_DEBUG === '1';
function trace(when: string, sample: ServerSample): void {
  if (!TRACE) return;
  const mib = (bytes: number) => Math.round(bytes / 2 ** 20);
  console.error(`connections: ${when}: rss ${mib(sample.rss)}, heap ${mib(sample.heapUsed)}, array buffers ${mib(sample.arrayBuffers)} MiB; searched ${sample.searched}, answered ${sample.answered}`);
}

function openSocket(url: string): Promise<Socket> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => resolve(socket));
    socket.once('error', reject);
  });
}

async function runScenario(server: SampledServer, scenario: Scenario): Promise<Measured> {
  await server.ask('gc');
  const before = await server.ask('gc');
  server.resetPeak();
  let peakSampled = before.rss;
  const request = `GET ${SEARCH_PATH}?resource_id=enrolments&limit=${LIMIT} HTTP/1.1\r\nHost: bench\r\n\r\n`;
  const sockets: Socket[] = [];
  let closedByServer = 0;
  for (let c = 0; c < scenario.connections; c++) {
    const socket = await openSocket(server.url);
    socket.pause(); // never reads
    socket.on('error', () => undefined);
    socket.once('close', () => { closedByServer++; });
    socket.write(request.repeat(scenario.requests));
    sockets.push(socket);
  }
  const started = performance.now();
  let [answered, searched, lastChange] = [before.answered, before.searched, started];
  // Held until every connection's first request was searched and then nothing moved for a while.
  const waiting = () => searched - before.searched < scenario.connections || performance.now() - lastChange < QUIET_MS;
  while (performance.now() - started < MAX_HOLD_MS && waiting()) {
    await sleep(100);
    const sample = await server.ask('sample');
    peakSampled = Math.max(peakSampled, server.rss()?.now ?? sample.rss);
    if (sample.answered !== answered || sample.searched !== searched) [answered, searched, lastChange] = [sample.answered, sample.searched, performance.now()];
    trace(`held ${Math.round(performance.now() - started)} ms`, sample);
  }
  const heldMs = performance.now() - started;
  const peakRss = Math.max(peakSampled, server.rss()?.peak ?? 0);
  const closedBefore = closedByServer;
  for (const socket of sockets) socket.destroy();
  for (let t = 250; t <= AFTER_CLOSE_MS; t += 250) {
    await sleep(250);
    if (TRACE) trace(`closed ${t} ms`, await server.ask('sample'));
  }
  const rssAfterClose = server.rss()?.now ?? (await server.ask('sample')).rss;
  const afterGc = await server.ask('gc');
  return { scenario, before, peakRss, answered: answered - before.answered, searched: searched - before.searched, closedByServer: closedBefore, heldMs, rssAfterClose, afterGc };
}

export async function benchConnections(config: RunConfig, log: (line: string) => void): Promise<SectionResult> {
  const file = enrolmentsFile(config.serverRows);
  log(`connections: server over ${formatCount(config.serverRows)} enrolments in its own process`);
  const server = await SampledServer.start(file);
  const results: Measured[] = [];
  let answerBytes = 0;
  try {
    // Warm up: one answer read to the end, so JIT and lazy caches are not charged to the first scenario.
    const response = await fetch(`${server.url}${SEARCH_PATH}?resource_id=enrolments&limit=${LIMIT}`);
    answerBytes = (await response.arrayBuffer()).byteLength;
    for (const scenario of scenarios(config.quick)) {
      log(`connections: ${scenario.name}`);
      results.push(await runScenario(server, scenario));
    }
  } finally {
    await server.stop();
  }

  const growth = (m: Measured) => m.peakRss - m.before.rss;
  const floor = results[0] as Measured;
  const perConnection = (m: Measured) => growth(m) / m.scenario.connections;
  const heapBack = (m: Measured) => m.afterGc.heapUsed - m.before.heapUsed;
  const pipelined = results.slice(1);
  return {
    id: 'connections',
    title: '8. Connections',
    tables: [
      {
        title: `Server memory under clients that never read (answers of ${formatCount(LIMIT)} records, ${formatBytes(answerBytes)} each; ${formatCount(config.serverRows)}-row table)`,
        headers: ['scenario', 'held', 'requests searched', 'answers finished', 'closed by server', 'RSS before', 'peak RSS', 'peak − before', 'per connection', `RSS ${AFTER_CLOSE_MS / 1000} s after close`, 'RSS after GC', 'heap after GC − before'],
        rows: results.map((m) => [
          m.scenario.name,
          formatTime(m.heldMs),
          formatCount(m.searched),
          formatCount(m.answered),
          formatCount(m.closedByServer),
          formatBytes(m.before.rss),
          formatBytes(m.peakRss),
          formatBytes(growth(m)),
          formatBytes(perConnection(m)),
          formatBytes(m.rssAfterClose),
          formatBytes(m.afterGc.rss),
          formatBytes(heapBack(m)),
        ]),
      },
    ],
    targets: [
      ...pipelined.map((m) => {
        // Many connections: no more than one request each costs; one connection: a few answers' worth, not 200.
        const bound = m.scenario.connections > 1 ? 1.5 * growth(floor) : 4 * answerBytes;
        return {
          section: 'connections',
          what: `${m.scenario.name}: peak growth bounded`,
          goal: m.scenario.connections > 1 ? `≤ 1.5× the floor's (${formatBytes(growth(floor))})` : `≤ 4 answers (${formatBytes(4 * answerBytes)})`,
          measured: `${formatBytes(growth(m))} (${formatBytes(perConnection(m))} per connection)`,
          // At --quick's 20 connections, garbage not yet collected at the peak outweighs the answers held.
          met: config.quick ? null : growth(m) <= bound,
        };
      }),
      ...results.map((m) => ({
        section: 'connections',
        what: `${m.scenario.name}: memory comes back after close`,
        goal: `heap after GC within ${formatBytes(HEAP_BACK_LIMIT)} of before`,
        measured: `heap ${formatBytes(heapBack(m))}; RSS ${formatBytes(m.rssAfterClose - m.before.rss)} over before ${AFTER_CLOSE_MS / 1000} s after close, ${formatBytes(m.afterGc.rss - m.before.rss)} after GC`,
        met: Math.abs(heapBack(m)) <= HEAP_BACK_LIMIT,
      })),
    ],
    notes: [
      `The server (\`startServer\` over the tsc build, as \`ckql serve\` runs it) is a child process with \`--expose-gc\`, answering on the IPC channel with \`process.memoryUsage()\` and a count of answers written. This process opens raw TCP connections, writes \`GET ${SEARCH_PATH}?resource_id=enrolments&limit=${LIMIT}\` the given number of times in one write per connection, and never reads. A scenario holds until every connection's first request was searched and then neither searches nor finished answers moved for ${QUIET_MS / 1000} s (at most ${MAX_HOLD_MS / 1000} s, inside the server's 30 s idle timeout), then closes every socket. "Requests searched" counts the engine's searches; "answers finished" the answers handed to the socket to their end (the kernel's socket buffers on loopback take a few MB per connection before backpressure stops the server). Peak RSS is the kernel's high-water mark, reset before each scenario. An idle server keeps its RSS until V8 next collects (garbage is collected when allocation asks for room), so "RSS 3 s after close" can stay near the peak; "after GC" and the heap column show what is still held.`,
    ],
  };
}

/**
 * Section 3: requests per second and p99 latency of the ckql server on a
 * 200k-row table (a selective filter, limit 10), against a plain node:http
 * server that answers with the very same bytes, precomputed (the floor).
 * Server and load generator (autocannon) each run in their own process;
 * the two servers are loaded in alternating rounds with the same settings.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { request } from 'undici';
import type { RunConfig } from './lib/config.js';
import { runChild, startChild } from './lib/child.js';
import { ckqlModules } from './lib/ckql.js';
import { enrolmentsFile } from './lib/data.js';
import { formatBytes, formatCount, formatRatio } from './lib/harness.js';
import type { SectionResult } from './lib/report.js';

/** the query the whole section uses: ~0.05 % of the rows match, 10 come back */
export const SELECTIVE_QUERY = 'from enrolments where course = PHYS-303 and status = withdrawn limit 10';

interface LoadSummary {
  readonly requests: number;
  readonly duration: number;
  readonly rps: number;
  readonly p50: number;
  readonly p99: number;
  readonly bytesPerSecond: number;
  readonly errors: number;
  readonly timeouts: number;
  readonly non2xx: number;
  readonly mismatches: number;
}

export const SEARCH_PATH = '/api/3/action/datastore_search';

export async function benchServer(config: RunConfig, log: (line: string) => void): Promise<SectionResult> {
  const { compile } = await ckqlModules.compile();
  const body = JSON.stringify(compile(SELECTIVE_QUERY));
  const file = enrolmentsFile(config.serverRows);
  log(`server: starting ckql server over ${formatCount(config.serverRows)} enrolments`);
  const ckql = await startChild('serve.ts', ['ckql', file]);
  const temp = mkdtempSync(path.join(tmpdir(), 'ckql-bench-'));
  let floor: Awaited<ReturnType<typeof startChild>> | undefined;
  try {
    const url = ckql.ready + SEARCH_PATH;
    const first = await request(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    const bytes = Buffer.from(await first.body.arrayBuffer());
    const parsed = JSON.parse(bytes.toString('utf8')) as { success: boolean; result?: { total?: number; records: unknown[] } };
    if (first.statusCode !== 200 || !parsed.success || parsed.result === undefined) {
      throw new Error(`server bench: the ckql server answered ${first.statusCode}: ${bytes.toString('utf8').slice(0, 300)}`);
    }
    const contentType = String(first.headers['content-type'] ?? 'application/json');
    const bodyFile = path.join(temp, 'response.json');
    writeFileSync(bodyFile, bytes);
    floor = await startChild('serve.ts', ['floor', bodyFile, contentType]);

    const load = (target: string) =>
      runChild<LoadSummary>('load.ts', [JSON.stringify({
        url: target + SEARCH_PATH,
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
        connections: config.connections,
        duration: config.loadSeconds,
        warmupSeconds: config.quick ? 0.5 : 1,
        // every answer must be byte-identical to the first: the ckql server's answer does not vary
        expectBody: bytes.toString('utf8'),
      })]);
    const results: Record<'ckql' | 'floor', LoadSummary[]> = { ckql: [], floor: [] };
    for (let round = 0; round < config.loadRounds; round++) {
      for (const which of round % 2 === 0 ? (['ckql', 'floor'] as const) : (['floor', 'ckql'] as const)) {
        log(`  autocannon round ${round + 1}/${config.loadRounds}: ${which}`);
        results[which].push(await load(which === 'ckql' ? ckql.ready : floor.ready));
      }
    }
    const pool = (list: LoadSummary[]) => {
      const requests = list.reduce((a, r) => a + r.requests, 0);
      const duration = list.reduce((a, r) => a + r.duration, 0);
      return {
        rps: requests / duration,
        p50: Math.max(...list.map((r) => r.p50)),
        p99: Math.max(...list.map((r) => r.p99)),
        bad: list.reduce((a, r) => a + r.errors + r.timeouts + r.non2xx + r.mismatches, 0),
        requests,
      };
    };
    const ours = pool(results.ckql);
    const base = pool(results.floor);
    if (ours.bad > 0 || base.bad > 0) {
      throw new Error(`server bench: bad answers under load (ckql ${ours.bad}, floor ${base.bad}: errors, timeouts, non-2xx or bodies that differ)`);
    }
    const share = ours.rps / base.rps;
    return {
      id: 'server',
      title: '3. Server',
      tables: [{
        title: `Server: ${config.connections} connections, ${config.loadRounds} × ${config.loadSeconds} s per server, POST \`${SELECTIVE_QUERY}\` (${formatCount(parsed.result.total ?? 0)} matches, ${formatBytes(bytes.length)} response)`,
        headers: ['server', 'requests/s', 'p50 latency', 'p99 latency', 'requests', 'share of floor'],
        rows: [
          [`ckql startServer (enrolments, ${formatCount(config.serverRows)} rows)`, formatCount(Math.round(ours.rps)), `${ours.p50} ms`, `${ours.p99} ms`, formatCount(ours.requests), `${(share * 100).toFixed(1)} %`],
          ['floor: node:http, precomputed identical bytes', formatCount(Math.round(base.rps)), `${base.p50} ms`, `${base.p99} ms`, formatCount(base.requests), '100 %'],
        ],
      }],
      targets: [{
        section: 'server', what: 'requests/s vs node:http floor', goal: '≥ 50 % of the floor',
        measured: `${(share * 100).toFixed(1)} % (${formatRatio(base.rps / ours.rps)} slower; p99 ${ours.p99} ms vs ${base.p99} ms)`, met: share >= 0.5,
      }],
      notes: [
        `Each server runs in its own process, autocannon in a third (\`bench/children/load.ts\`), so on this 2-core machine the server gets one core and the load generator the other. Each round starts with a short autocannon warm-up. The floor reads the request body and answers with the ckql server's own response bytes and content-type, so both send the same bytes; every response under load is compared with them (\`expectBody\`), and errors, non-2xx or differing bodies stop the run. Latencies are the worst p50/p99 over the rounds.`,
      ],
    };
  } finally {
    await floor?.stop();
    await ckql.stop();
    rmSync(temp, { recursive: true, force: true });
  }
}

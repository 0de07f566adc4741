/**
 * Section 5: what the client adds to a request. `client.search` against a
 * raw `undici.request` of the very same request (URL, headers, body, taken
 * from `client.prepare`) on the same server, in a separate process.
 */
import { request as undiciRequest } from 'undici';
import type { SearchRequest } from '../src/datastore/types.js';
import type { RunConfig } from './lib/config.js';
import { startChild } from './lib/child.js';
import { ckqlModules } from './lib/ckql.js';
import { enrolmentsFile, vegaPath } from './lib/data.js';
import { formatRatio, formatTime, measureAsync } from './lib/harness.js';
import type { Measured } from './lib/harness.js';
import type { SectionResult, Table } from './lib/report.js';
import { SELECTIVE_QUERY } from './server.js';

interface ClientCase {
  readonly name: string;
  readonly source: string;
}

const CASES: readonly ClientCase[] = [
  { name: 'movies, limit 10 (small answer, cheap server work)', source: 'from movies limit 10' },
  { name: 'movies, limit 1000 (≈ 0.5 MB answer)', source: 'from movies limit 1000' },
  { name: 'enrolments 200k, selective filter, limit 10 (the server section\'s request)', source: SELECTIVE_QUERY },
];

export async function benchClient(config: RunConfig, log: (line: string) => void): Promise<SectionResult> {
  const [{ connect }, { compile }] = await Promise.all([ckqlModules.client(), ckqlModules.compile()]);
  log('client: starting ckql server (movies + enrolments) in a child process');
  const server = await startChild('serve.ts', ['ckql', vegaPath('movies.json'), enrolmentsFile(config.serverRows)]);
  const client = connect({ url: server.ready });
  try {
    const rows: string[][] = [];
    let worst = 0;
    let worstCase = '';
    for (const c of CASES) {
      const req: SearchRequest = compile(c.source);
      const prepared = client.prepare(req);
      if (prepared.body !== JSON.stringify(req)) throw new Error('client bench: client.prepare sends another body than JSON.stringify(request)');
      const raw = async () => {
        // serialized per call, as the client must: a raw caller also turns its request into JSON each time
        const res = await undiciRequest(prepared.url, { method: prepared.method, headers: prepared.headers, body: JSON.stringify(req) });
        const parsed = (await res.body.json()) as { success: boolean; result: { records: unknown[] } };
        if (res.statusCode !== 200 || !parsed.success) throw new Error(`client bench: raw request got ${res.statusCode}`);
        return parsed.result;
      };
      const viaClient = () => client.search(req);
      const a = await raw();
      const b = await viaClient();
      if (a.records.length !== b.records.length) throw new Error(`client bench: client.search returned ${b.records.length} records, raw undici ${a.records.length}`);
      log(`  client: ${c.name}`);
      // Both sides and the server need ~0.5 s of requests to reach steady state (JIT on each side):
      // without this, whichever contender runs first pays for warming the server.
      for (const fn of [viaClient, raw, viaClient, raw]) {
        const until = performance.now() + (config.quick ? 150 : 400);
        while (performance.now() < until) await fn();
      }
      const m = await measureAsync(
        [{ name: 'client', fn: viaClient }, { name: 'raw', fn: raw }],
        config.quick ? { timeMs: 300, minSamples: 20, rounds: 1 } : { timeMs: 2000, minSamples: 100, rounds: 4, warmupMs: 200 },
      );
      const ours = (m.get('client') as Measured).median;
      const base = (m.get('raw') as Measured).median;
      const ratio = ours / base;
      if (ratio > worst) { worst = ratio; worstCase = c.name; }
      rows.push([c.name, formatTime(ours), formatTime(base), formatRatio(ratio), formatTime(ours - base)]);
    }
    const table: Table = {
      title: 'Client: median time per request, one request at a time, same server',
      headers: ['request', 'client.search', 'raw undici.request', 'ratio', 'added'],
      rows,
    };
    return {
      id: 'client',
      title: '5. Client overhead',
      tables: [table],
      targets: [{ section: 'client', what: 'client.search vs raw undici.request', goal: '≤ 1.1×', measured: `max ${formatRatio(worst)} (${worstCase})`, met: worst <= 1.1 }],
      notes: [
        'The raw side sends exactly what `client.prepare(request)` says the client sends (method, URL, headers; the body is `JSON.stringify(request)`, checked equal to the client\'s, and serialized on every call as the client does) with `undici.request` on undici\'s global dispatcher and parses the body with `body.json()`; the client side calls `client.search(request)` with the same request object. Requests run one at a time against a ckql server in another process; before timing, each side sends requests for a while (the client, the undici paths and the server all take ≈ 0.5 s of traffic to reach steady state), then rounds alternate the two contenders.',
      ],
    };
  } finally {
    await client.close();
    await server.stop();
  }
}

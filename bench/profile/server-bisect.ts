/**
 * Bisects the server gap (section 3) by CPU time per request: ckql's server
 * over the 200k enrolments, ckql's server.ts over a stand-in API that sends
 * the same bytes (`ckql-fixed`), the bare floor, and floors with some of what
 * ckql's process does (`with:<features>`, see bench/children/serve-bisect.ts),
 * each in its own process, loaded in turns with the section's settings (the
 * order rotates each round). Prints requests/s, share of the floor, the
 * server's CPU per request (from /proc/<pid>/stat, as server-cpu.ts) and its
 * garbage collections per 1,000 requests and GC time per request.
 *
 *   tsx bench/profile/server-bisect.ts [seconds] [rounds] [targets, ';'-separated]
 *   e.g. tsx bench/profile/server-bisect.ts 4 4 'floor;with:heap;with:options;ckql-fixed;ckql'
 *
 * A target `<name>@<flags>` runs its process with those node flags,
 * e.g. `ckql@--max-semi-space-size=1`.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { request } from 'undici';
import { runChild, startChild } from '../lib/child.js';
import type { RunningChild } from '../lib/child.js';
import { ckqlModules } from '../lib/ckql.js';
import { enrolmentsFile } from '../lib/data.js';
import { SEARCH_PATH, SELECTIVE_QUERY } from '../server.js';

const seconds = Number(process.argv[2] ?? 4);
const rounds = Number(process.argv[3] ?? 3);
const names = (process.argv[4] ?? 'floor;ckql-fixed;ckql').split(';').filter((x) => x !== '');
/** Linux reports CPU time in clock ticks of 1/100 s (`getconf CLK_TCK`). */
const TICK_US = 10_000;

function cpuOf(pid: number): { user: number; system: number; main: number } {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // the main thread (its id is the process's): the rest is V8's helper threads (GC, compiler) and libuv's
  const own = readFileSync(`/proc/${pid}/task/${pid}/stat`, 'utf8');
  const ownFields = own.slice(own.lastIndexOf(')') + 2).split(' ');
  return { user: Number(fields[11]) * TICK_US, system: Number(fields[12]) * TICK_US, main: (Number(ownFields[11]) + Number(ownFields[12])) * TICK_US };
}

type GcTotals = Record<string, { count: number; ms: number }>;
function gcOf(file: string): GcTotals {
  // the child rewrites the file every 250 ms: a read may meet it half written
  for (let attempt = 0; ; attempt++) {
    try {
      return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as GcTotals) : {};
    } catch (error) {
      if (attempt === 5) throw error;
    }
  }
}
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const { compile } = await ckqlModules.compile();
const body = JSON.stringify(compile(SELECTIVE_QUERY));
const temp = mkdtempSync(path.join(tmpdir(), 'ckql-bisect-'));
const children: RunningChild[] = [];
const start = async (name: string, script: string, args: string[]): Promise<{ child: RunningChild; gc: string }> => {
  const gc = path.join(temp, `gc-${children.length}.json`);
  // `<target>@<node flags>`: that target's process runs with those node/V8 flags (space-separated)
  const nodeFlags = name.includes('@') ? name.slice(name.indexOf('@') + 1).split(' ').filter((x) => x !== '') : [];
  const child = await startChild(script, args, { env: { CKQL_SERVE_GC: gc, CKQL_SERVE_TIMES: `${gc}.times` }, nodeFlags });
  children.push(child);
  return { child, gc };
};
try {
  const ckql = await start('ckql', 'serve-bisect.ts', ['ckql', enrolmentsFile(200_000)]);
  const first = await request(ckql.child.ready + SEARCH_PATH, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  const bytes = Buffer.from(await first.body.arrayBuffer());
  const answer = path.join(temp, 'body.json');
  writeFileSync(answer, bytes);
  const headers = JSON.stringify({ 'content-type': first.headers['content-type'], 'access-control-allow-origin': '*' });
  const targets: { name: string; child: RunningChild; gc: string; expectBody: string }[] = [];
  for (const name of names) {
    const kind = name.split('@')[0] as string;
    const started =
      name === 'ckql' ? ckql
      : kind === 'ckql' ? await start(name, 'serve-bisect.ts', ['ckql', enrolmentsFile(200_000)])
      : kind.startsWith('ckql-patched:') ? await start(name, 'serve-bisect.ts', ['ckql-patched', enrolmentsFile(200_000), kind.slice('ckql-patched:'.length)])
      : kind === 'ckql-timed' ? await start(name, 'serve-bisect.ts', ['ckql-timed', enrolmentsFile(200_000)])
      : kind === 'ckql-fixed' ? await start(name, 'serve-bisect.ts', ['ckql-fixed', answer])
      : kind === 'ckql-fixed:heap' ? await start(name, 'serve-bisect.ts', ['ckql-fixed', answer, 'heap'])
      : kind === 'floor' ? await start(name, 'serve-bisect.ts', ['floor-with', answer, headers])
      : kind.startsWith('with:') ? await start(name, 'serve-bisect.ts', ['floor-with', answer, headers, kind.slice('with:'.length)])
      : undefined;
    if (started === undefined) throw new Error(`server-bisect: unknown target ${name}`);
    // each server's answer under load must stay its own first answer (the help link names its port)
    const own = await request(started.child.ready + SEARCH_PATH, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    targets.push({ name, ...started, expectBody: Buffer.from(await own.body.arrayBuffer()).toString('utf8') });
  }
  const total = new Map<string, { requests: number; duration: number; cpu: number; user: number; main: number; gcCount: number; gcMs: number; rounds: number[] }>();
  for (let round = 0; round < rounds; round++) {
    for (let k = 0; k < targets.length; k++) {
      const { name, child, gc, expectBody } = targets[(k + round) % targets.length] as (typeof targets)[number];
      const pid = child.process.pid as number;
      const options = { url: child.ready + SEARCH_PATH, method: 'POST', headers: { 'content-type': 'application/json' }, body, connections: 10, duration: seconds, expectBody };
      await runChild('load.ts', [JSON.stringify({ ...options, duration: 1 })]);
      await pause(300);
      const gcBefore = gcOf(gc);
      const before = cpuOf(pid);
      const result = await runChild<{ requests: number; duration: number; errors: number; non2xx: number; mismatches: number }>('load.ts', [JSON.stringify(options)]);
      const after = cpuOf(pid);
      await pause(300);
      const gcAfter = gcOf(gc);
      if (existsSync(`${gc}.times`) && process.env.CKQL_BISECT_VERBOSE === '1') console.log(`${name}: API answer wall µs (last 20,000) ${readFileSync(`${gc}.times`, 'utf8')}`);
      if (result.errors + result.non2xx + result.mismatches > 0) throw new Error(`${name}: bad answers under load`);
      let gcCount = 0;
      let gcMs = 0;
      const kinds: string[] = [];
      for (const [kind, t] of Object.entries(gcAfter)) {
        const count = t.count - (gcBefore[kind]?.count ?? 0);
        const ms = t.ms - (gcBefore[kind]?.ms ?? 0);
        gcCount += count;
        gcMs += ms;
        if (count > 0) kinds.push(`${kind} ${count} (${ms.toFixed(1)} ms)`);
      }
      const newSpace = (gcAfter.newSpace as { bytes?: number } | undefined)?.bytes ?? 0;
      if (process.env.CKQL_BISECT_VERBOSE === '1') console.log(`${name}: ${result.requests} requests; GC ${kinds.join(', ')}; new space ${(newSpace / 2 ** 20).toFixed(1)} MiB`);
      const cpu = after.user + after.system - before.user - before.system;
      const t = total.get(name) ?? { requests: 0, duration: 0, cpu: 0, user: 0, main: 0, gcCount: 0, gcMs: 0, rounds: [] };
      total.set(name, {
        requests: t.requests + result.requests, duration: t.duration + result.duration, cpu: t.cpu + cpu, user: t.user + after.user - before.user,
        main: t.main + after.main - before.main,
        gcCount: t.gcCount + gcCount, gcMs: t.gcMs + gcMs, rounds: [...t.rounds, cpu / result.requests],
      });
    }
  }
  const floor = total.get('floor');
  const floorRps = floor === undefined ? NaN : floor.requests / floor.duration;
  const floorCpu = floor === undefined ? NaN : floor.cpu / floor.requests;
  for (const { name } of targets) {
    const t = total.get(name);
    if (t === undefined) continue;
    const rps = t.requests / t.duration;
    const cpu = t.cpu / t.requests;
    console.log(
      `${name.padEnd(34)} ${Math.round(rps).toString().padStart(6)} req/s ${((rps / floorRps) * 100).toFixed(1).padStart(5)} % of floor;` +
        ` CPU/request ${cpu.toFixed(1).padStart(5)} µs (${(cpu - floorCpu >= 0 ? '+' : '') + (cpu - floorCpu).toFixed(1)}; user ${(t.user / t.requests).toFixed(1)}, main thread ${(t.main / t.requests).toFixed(1)});` +
        ` GC ${((t.gcCount / t.requests) * 1000).toFixed(2)}/1k req, ${((t.gcMs * 1000) / t.requests).toFixed(2)} µs/req;` +
        ` rounds ${t.rounds.map((x) => x.toFixed(1)).join(' ')}`,
    );
  }
} finally {
  await Promise.all(children.map((c) => c.stop()));
  rmSync(temp, { recursive: true, force: true });
}

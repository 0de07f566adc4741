/**
 * CPU time per request of each server in section 3 under the same load: the
 * server process's user and system time (from /proc/<pid>/stat, Linux) over
 * an autocannon run, divided by the requests it answered. Throughput at
 * saturation is bounded by this figure, and on a shared machine it moves
 * less than requests/s does, because time spent waiting for a core is not
 * counted (cache misses and frequency changes still are).
 *
 * The floor with a busy wait of N µs per request (`floor-spin`, one per
 * value of the fourth argument) calibrates the scale: what a server that
 * adds N µs of work per request reaches on this machine at this moment.
 * Both servers and autocannon must then share the same cores, and a server
 * slower than autocannon also pays for waking it on every answer, so
 * N µs of work costs more than N µs of throughput.
 *
 *   tsx bench/profile/server-cpu.ts [seconds] [rounds] [connections] [spins, e.g. 10,30]
 */
import { readFileSync } from 'node:fs';
import { runChild } from '../lib/child.js';
import type { RunningChild } from '../lib/child.js';
import { startServerTrio } from '../lib/server-trio.js';
import { SEARCH_PATH } from '../server.js';

const seconds = Number(process.argv[2] ?? 5);
const rounds = Number(process.argv[3] ?? 2);
const connections = Number(process.argv[4] ?? 10);
const spins = (process.argv[5] ?? '').split(',').filter((x) => x !== '').map(Number);
/** Linux reports CPU time in clock ticks of 1/100 s (`getconf CLK_TCK`). */
const TICK_US = 10_000;

/** User and system CPU time of a process so far, in µs. */
function cpuOf(pid: number): { user: number; system: number } {
  // the command name (field 2) may hold spaces; the fields after its closing parenthesis do not
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { user: Number(fields[11]) * TICK_US, system: Number(fields[12]) * TICK_US };
}

const { body, ckql, floor, floorJson, startFloor, stop } = await startServerTrio();
try {
  const targets: [string, RunningChild][] = [['floor', floor], ['floor + JSON', floorJson], ['ckql', ckql]];
  for (const spin of spins) {
    const spinning = await startFloor('floor-spin', String(spin));
    targets.push([`floor + ${spin} µs`, spinning]);
  }
  const total: Record<string, { requests: number; duration: number; user: number; system: number }> = {};
  for (let r = 0; r < rounds; r++) {
    for (const [name, child] of targets) {
      const pid = child.process.pid as number;
      const options = { url: child.ready + SEARCH_PATH, method: 'POST', headers: { 'content-type': 'application/json' }, body, connections, duration: seconds };
      await runChild('load.ts', [JSON.stringify({ ...options, duration: 1 })]);
      const before = cpuOf(pid);
      const result = await runChild<{ requests: number; duration: number }>('load.ts', [JSON.stringify(options)]);
      const after = cpuOf(pid);
      const t = (total[name] ??= { requests: 0, duration: 0, user: 0, system: 0 });
      t.requests += result.requests;
      t.duration += result.duration;
      t.user += after.user - before.user;
      t.system += after.system - before.system;
    }
  }
  const floorRps = (total.floor?.requests ?? 0) / (total.floor?.duration ?? 1);
  for (const [name, t] of Object.entries(total)) {
    const rps = t.requests / t.duration;
    const perRequest = (us: number) => (us / t.requests).toFixed(1).padStart(5);
    console.log(
      `${name.padEnd(16)} ${Math.round(rps).toString().padStart(7)} req/s ${((rps / floorRps) * 100).toFixed(1).padStart(5)} % of floor;` +
        ` server CPU per request ${perRequest(t.user + t.system)} µs (user ${perRequest(t.user)}, system ${perRequest(t.system)});` +
        ` server busy ${(((t.user + t.system) / (t.duration * 1e6)) * 100).toFixed(0)} %`,
    );
  }
} finally {
  await stop();
}

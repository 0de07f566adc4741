/**
 * A/B of two builds of the server under section 3's load: this tree's and
 * another tree's (e.g. `git archive <commit> | tar -x -C /tmp/old`, with
 * `node_modules` linked and `src/` built by tsc into its
 * `bench/.cache/dist`), each serving the 200k enrolments from its own
 * `bench/children/serve.ts`, loaded alternately with the bench's settings,
 * the floor beside them. Prints requests/s and the server's CPU time per
 * request (bench/profile/server-cpu.ts explains why the latter).
 *
 *   tsx bench/profile/server-ab.ts <other-tree> [seconds] [rounds]
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { request } from 'undici';
import { runChild } from '../lib/child.js';
import { ckqlModules } from '../lib/ckql.js';
import { enrolmentsFile, rootDir } from '../lib/data.js';
import { SEARCH_PATH, SELECTIVE_QUERY } from '../server.js';

const [otherTree, secondsText, roundsText] = process.argv.slice(2);
if (otherTree === undefined) throw new Error('usage: server-ab.ts <other-tree> [seconds] [rounds]');
const seconds = Number(secondsText ?? 4);
const rounds = Number(roundsText ?? 3);
/** Linux reports CPU time in clock ticks of 1/100 s. */
const TICK_US = 10_000;

interface Served { readonly url: string; readonly pid: number; stop(): void }

/** Starts `serve.ts` of a tree (its own tsx loader and build) and waits for its READY line. */
function serve(tree: string, args: readonly string[]): Promise<Served> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(tree, 'bench', 'children', 'serve.ts'), ...args], {
    cwd: rootDir, stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    let buffered = '';
    child.stdout.on('data', (chunk: Buffer) => {
      buffered += chunk.toString('utf8');
      const match = /^READY (.+)$/m.exec(buffered);
      if (match) resolve({ url: (match[1] as string).trim(), pid: child.pid as number, stop: () => child.kill('SIGTERM') });
    });
    child.once('exit', (code) => reject(new Error(`serve.ts of ${tree} exited (${code}) before it was ready`)));
  });
}

function cpuOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * TICK_US;
}

async function firstAnswer(url: string, body: string): Promise<{ bytes: Buffer; type: string }> {
  const answer = await request(url + SEARCH_PATH, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  return { bytes: Buffer.from(await answer.body.arrayBuffer()), type: String(answer.headers['content-type']) };
}

const { compile } = await ckqlModules.compile();
const body = JSON.stringify(compile(SELECTIVE_QUERY));
const file = enrolmentsFile(200_000);
const temp = mkdtempSync(path.join(tmpdir(), 'ckql-ab-'));
const servers: Served[] = [];
try {
  const other = await serve(path.resolve(otherTree), ['ckql', file]);
  servers.push(other);
  const here = await serve(rootDir, ['ckql', file]);
  servers.push(here);
  const hereFirst = await firstAnswer(here.url, body);
  const otherFirst = await firstAnswer(other.url, body);
  writeFileSync(path.join(temp, 'body.json'), hereFirst.bytes);
  const floor = await serve(rootDir, ['floor', path.join(temp, 'body.json'), JSON.stringify({ 'content-type': hereFirst.type, 'access-control-allow-origin': '*' })]);
  servers.push(floor);
  // each server's answer under load must stay its own first answer (the help link names its port)
  const targets = [['floor', floor, hereFirst], ['other', other, otherFirst], ['this', here, hereFirst]] as const;
  const total = new Map<string, { requests: number; duration: number; cpu: number; rounds: number[] }>();
  for (let round = 0; round < rounds; round++) {
    for (let k = 0; k < targets.length; k++) {
      const [name, server, first] = targets[(k + round) % targets.length] as (typeof targets)[number];
      const options = { url: server.url + SEARCH_PATH, method: 'POST', headers: { 'content-type': 'application/json' }, body, connections: 10, duration: seconds, expectBody: first.bytes.toString('utf8') };
      await runChild('load.ts', [JSON.stringify({ ...options, duration: 1 })]);
      const before = cpuOf(server.pid);
      const result = await runChild<{ requests: number; duration: number; errors: number; non2xx: number; mismatches: number }>('load.ts', [JSON.stringify(options)]);
      const after = cpuOf(server.pid);
      if (result.errors + result.non2xx + result.mismatches > 0) throw new Error(`${name}: bad answers under load`);
      const t = total.get(name) ?? { requests: 0, duration: 0, cpu: 0, rounds: [] };
      total.set(name, { requests: t.requests + result.requests, duration: t.duration + result.duration, cpu: t.cpu + after - before, rounds: [...t.rounds, Math.round(result.requests / result.duration)] });
    }
  }
  const floorTotal = total.get('floor') as { requests: number; duration: number };
  const floorRps = floorTotal.requests / floorTotal.duration;
  console.log(`answer bytes: this tree ${hereFirst.bytes.length}, the other ${otherFirst.bytes.length}`);
  for (const [name, t] of total) {
    const rps = t.requests / t.duration;
    console.log(`${name.padEnd(6)} ${Math.round(rps).toString().padStart(7)} req/s ${((rps / floorRps) * 100).toFixed(1).padStart(5)} % of floor; server CPU per request ${(t.cpu / t.requests).toFixed(1).padStart(5)} µs; rounds ${t.rounds.join(' ')}`);
  }
} finally {
  for (const server of servers) server.stop();
  rmSync(temp, { recursive: true, force: true });
}

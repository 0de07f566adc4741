/**
 * Splits the server gap (section 3): the bare floor, the floor plus the JSON
 * parse and stringify every answer needs, and the ckql server over 200k rows,
 * loaded alternately with the same autocannon settings.
 *
 *   tsx bench/profile/server-floors.ts [seconds] [rounds]
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { request } from 'undici';
import { runChild, startChild } from '../lib/child.js';
import type { RunningChild } from '../lib/child.js';
import { ckqlModules } from '../lib/ckql.js';
import { enrolmentsFile } from '../lib/data.js';
import { SEARCH_PATH, SELECTIVE_QUERY } from '../server.js';

const seconds = Number(process.argv[2] ?? 5);
const rounds = Number(process.argv[3] ?? 2);
const { compile } = await ckqlModules.compile();
const body = JSON.stringify(compile(SELECTIVE_QUERY));
const temp = mkdtempSync(path.join(tmpdir(), 'ckql-floors-'));
const children: RunningChild[] = [];
try {
  const ckql = await startChild('serve.ts', ['ckql', enrolmentsFile(200_000)]);
  children.push(ckql);
  const first = await request(ckql.ready + SEARCH_PATH, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  const bytes = Buffer.from(await first.body.arrayBuffer());
  writeFileSync(path.join(temp, 'body.json'), bytes);
  const headers = JSON.stringify({ 'content-type': first.headers['content-type'], 'access-control-allow-origin': '*' });
  const floor = await startChild('serve.ts', ['floor', path.join(temp, 'body.json'), headers]);
  const floorJson = await startChild('serve.ts', ['floor-json', path.join(temp, 'body.json'), headers]);
  children.push(floor, floorJson);
  const targets = { floor: floor.ready, 'floor + JSON': floorJson.ready, ckql: ckql.ready };
  const total: Record<string, { requests: number; duration: number }> = {};
  for (let r = 0; r < rounds; r++) {
    for (const [name, url] of Object.entries(targets)) {
      const result = await runChild<{ requests: number; duration: number }>('load.ts', [JSON.stringify({
        url: url + SEARCH_PATH, method: 'POST', headers: { 'content-type': 'application/json' }, body, connections: 10, duration: seconds, warmupSeconds: 1,
      })]);
      const t = (total[name] ??= { requests: 0, duration: 0 });
      t.requests += result.requests;
      t.duration += result.duration;
    }
  }
  const floorRps = (total.floor?.requests ?? 0) / (total.floor?.duration ?? 1);
  for (const [name, t] of Object.entries(total)) {
    const rps = t.requests / t.duration;
    console.log(`${name.padEnd(14)} ${Math.round(rps).toString().padStart(7)} req/s  ${((rps / floorRps) * 100).toFixed(1).padStart(5)} % of floor  ${(1e6 / rps).toFixed(1)} µs/request`);
  }
} finally {
  await Promise.all(children.map((c) => c.stop()));
  rmSync(temp, { recursive: true, force: true });
}

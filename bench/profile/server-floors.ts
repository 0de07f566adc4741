/**
 * Splits the server gap (section 3): the bare floor, the floor plus the JSON
 * parse and stringify every answer needs, and the ckql server over 200k rows,
 * loaded alternately with the same autocannon settings.
 *
 *   tsx bench/profile/server-floors.ts [seconds] [rounds]
 */
import { runChild } from '../lib/child.js';
import { startServerTrio } from '../lib/server-trio.js';
import { SEARCH_PATH } from '../server.js';

const seconds = Number(process.argv[2] ?? 5);
const rounds = Number(process.argv[3] ?? 2);
const { body, ckql, floor, floorJson, stop } = await startServerTrio();
try {
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
  await stop();
}

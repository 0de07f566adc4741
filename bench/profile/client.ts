/**
 * Profiling load for section 5: `client.search` (or the raw undici request
 * with `raw`) in a loop against a ckql server in a child process.
 *
 *   node --cpu-prof --cpu-prof-dir=/tmp/prof --import tsx bench/profile/client.ts [seconds] [client|raw]
 */
import { request } from 'undici';
import { startChild } from '../lib/child.js';
import { ckqlModules } from '../lib/ckql.js';
import { vegaPath } from '../lib/data.js';

const seconds = Number(process.argv[2] ?? 5);
const mode = process.argv[3] ?? 'client';
const server = await startChild('serve.ts', ['ckql', vegaPath('movies.json')]);
const [{ connect }, { compile }] = await Promise.all([ckqlModules.client(), ckqlModules.compile()]);
const client = connect({ url: server.ready });
const req = compile('from movies limit 10');
const prepared = client.prepare(req);
const raw = async () => {
  const res = await request(prepared.url, { method: prepared.method, headers: prepared.headers, body: JSON.stringify(req) });
  return res.body.json();
};
const end = performance.now() + seconds * 1000;
let n = 0;
while (performance.now() < end) {
  await (mode === 'raw' ? raw() : client.search(req));
  n++;
}
console.log(`${mode}: ${n} requests, ${((seconds * 1e6) / n).toFixed(1)} µs/request`);
await client.close();
await server.stop();

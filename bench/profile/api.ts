/**
 * Profiling load for section 3 without the socket: the server's API
 * (`openApi`, what `startServer` puts on node:http) answering the section's
 * selective request in a loop, over the generated enrolments, from the tsc
 * build. Prints µs per answer (its text made whole, as the server sends it).
 *
 *   node --cpu-prof --cpu-prof-dir=/tmp/prof --import tsx bench/profile/api.ts [seconds] [rows]
 */
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type * as ApiModule from '../../src/server/api.js';
import { ckqlModules, distDir } from '../lib/ckql.js';
import { enrolmentsFile } from '../lib/data.js';
import { loadTable } from '../lib/tables.js';
import { SEARCH_PATH, SELECTIVE_QUERY } from '../server.js';

const seconds = Number(process.argv[2] ?? 5);
const rows = Number(process.argv[3] ?? 200_000);
const { openApi, wholeText } = (await import(pathToFileURL(path.join(distDir, 'server', 'api.js')).href)) as typeof ApiModule;
const { compile } = await ckqlModules.compile();
const api = await openApi({ tables: [await loadTable(enrolmentsFile(rows))] }, 'http://127.0.0.1:8080');
const request = { method: 'POST', url: SEARCH_PATH, contentType: 'application/json', body: JSON.stringify(compile(SELECTIVE_QUERY)) };
let bytes = 0;
const start = performance.now();
const cpuStart = process.cpuUsage();
const end = start + seconds * 1000;
let best = Infinity;
let answers = 0;
while (performance.now() < end) {
  const t0 = performance.now();
  for (let i = 0; i < 200; i++) bytes += Buffer.byteLength(wholeText(await api.answer(request)));
  best = Math.min(best, (performance.now() - t0) / 200);
  answers += 200;
}
// the mean counts every batch, GC pauses and the machine's other work included; the best batch leaves them out
const mean = (performance.now() - start) / answers;
// CPU time leaves out the time this process waited for a core (comparable to bench/profile/server-cpu.ts)
const cpu = process.cpuUsage(cpuStart);
console.log(
  `${answers} answers, best batch ${(best * 1000).toFixed(2)} µs per answer, mean ${(mean * 1000).toFixed(2)} µs, CPU ${((cpu.user + cpu.system) / answers).toFixed(2)} µs`,
  bytes > 0,
);

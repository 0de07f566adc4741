/**
 * Profiling load for section 2: one evaluate request over generated
 * enrolments, ckql only (or the hand loop), without the peers' garbage.
 *
 *   node --cpu-prof --cpu-prof-dir=/tmp/prof --import tsx bench/profile/evaluate.ts <rows> '<query>' [seconds] [cold]
 *
 * `cold`: every call gets a table object ckql has not seen (its first request on that table).
 */
import { ckqlModules } from '../lib/ckql.js';
import { enrolmentsFile } from '../lib/data.js';
import { loadTable } from '../lib/tables.js';

const [rowsText, query, secondsText, mode] = process.argv.slice(2);
const table = await loadTable(enrolmentsFile(Number(rowsText ?? 200_000)));
const [{ compile }, { evaluate }] = await Promise.all([ckqlModules.compile(), ckqlModules.evaluate()]);
const request = compile(query ?? 'from enrolments where status in (failed, withdrawn)');
const end = performance.now() + Number(secondsText ?? 5) * 1000;
const times: number[] = [];
let total = 0;
while (performance.now() < end) {
  const t0 = performance.now();
  total += evaluate(request, mode === 'cold' ? { ...table } : table).total ?? 0;
  times.push(performance.now() - t0);
}
times.sort((a, b) => a - b);
console.log(`${times.length} runs, median ${(times[times.length >> 1] ?? 0).toFixed(3)} ms, min ${(times[0] ?? 0).toFixed(3)} ms`, total > 0);

/**
 * Profiling load for section 2's first call on a plain array: a fresh array
 * of the same plain records for every call, in a warm process, ckql or the
 * hand loop (the bench's `hand` for the three-filter case).
 *
 *   node --cpu-prof --cpu-prof-dir=/tmp/prof --import tsx bench/profile/plain-first.ts <rows> [seconds] [ckql|declared|hand|forin] ['<query>']
 *
 * Below 10,000 rows, the first rows of the 10k file (a call's fixed cost shows).
 * `forin`: only what any exact field list of plain records needs, every
 * record's keys counted with `for…in` (no filter, no answer): the floor of a
 * first call under the inferred-fields contract (docs/semantics.md).
 * `declared`: ckql with the table's fields declared (`{ fields }`), so no
 * record's keys are read to find them.
 */
import type { Row } from '../../src/datastore/types.js';
import { ckqlModules } from '../lib/ckql.js';
import { enrolmentsFile } from '../lib/data.js';
import { countKeys, handThreeFilters } from '../lib/plain-loops.js';
import { loadTable } from '../lib/tables.js';

const [rowsText, secondsText, who, query] = process.argv.slice(2);
const size = Number(rowsText ?? 10_000);
const table = await loadTable(enrolmentsFile(size < 10_000 ? 10_000 : size));
// fewer rows than a generated file holds: its first ones (to see the fixed cost of a call)
const plain = JSON.parse(JSON.stringify(table.rows.slice(0, size))) as Row[];
const [{ compile }, { evaluate }] = await Promise.all([ckqlModules.compile(), ckqlModules.evaluate()]);
const request = compile(query ?? 'from enrolments where status = completed and term in ("2023-autumn", "2024-spring") and grade = 5');
const hand = handThreeFilters;
const forin = countKeys;
const end = performance.now() + Number(secondsText ?? 5) * 1000;
const times: number[] = [];
let total = 0;
while (performance.now() < end) {
  const rows = plain.slice();
  const t0 = performance.now();
  total += who === 'hand' ? hand(rows) : who === 'forin' ? forin(rows) : who === 'declared' ? (evaluate(request, rows, { fields: table.fields }).total ?? 0) : (evaluate(request, rows).total ?? 0);
  times.push(performance.now() - t0);
}
times.sort((a, b) => a - b);
const mean = times.reduce((a, b) => a + b, 0) / times.length;
console.log(`${who ?? 'ckql'}: ${times.length} runs, mean ${(mean * 1000).toFixed(1)} µs, median ${((times[times.length >> 1] ?? 0) * 1000).toFixed(1)} µs, min ${((times[0] ?? 0) * 1000).toFixed(1)} µs`, total > 0);

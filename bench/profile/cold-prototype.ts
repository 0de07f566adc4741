/**
 * Prototype for the cold-filter gap (section 2): the first request on a
 * table builds a column array (and a string dictionary) for every filtered
 * field before it filters, while a hand loop reads each row once. This
 * compares, over the same loaded table:
 *
 *   ckql cold   evaluate() on a table object it has not seen
 *   generated   what a first request could do instead: one pass over the
 *               rows with a predicate generated for the request (literal
 *               property names, so V8 sees named, monomorphic loads), the
 *               page kept and the matches counted; columns built later,
 *               when a field is filtered on again
 *   hand        the hand-written loop of the bench
 *
 *   tsx bench/profile/cold-prototype.ts [rows]
 */
import type { Filters, Row, Scalar } from '../../src/datastore/types.js';
import { ckqlModules } from '../lib/ckql.js';
import { enrolmentsFile } from '../lib/data.js';
import { measureSync } from '../lib/harness.js';
import { loadTable } from '../lib/tables.js';

const size = Number(process.argv[2] ?? 200_000);
const table = await loadTable(enrolmentsFile(size));
const [{ compile }, { evaluate }] = await Promise.all([ckqlModules.compile(), ckqlModules.evaluate()]);

/** A row predicate for `filters` on columns of one known type each (strings or numbers here). */
function generatePredicate(filters: Filters): (row: Row) => boolean {
  const terms = Object.entries(filters).map(([field, value]) => {
    const access = `r[${JSON.stringify(field)}]`;
    const list: readonly Scalar[] = Array.isArray(value) ? value : [value as Scalar];
    return '(' + list.map((v) => `${access} === ${JSON.stringify(v)}`).join(' || ') + ')';
  });
  return new Function('r', `return ${terms.join(' && ') || 'true'};`) as (row: Row) => boolean;
}

function firstRequest(filters: Filters, rows: readonly Row[], limit: number): { total: number; records: Row[] } {
  const keep = generatePredicate(filters);
  const records: Row[] = [];
  let total = 0;
  for (let i = 0; i < rows.length; i++) {
    const r = rows[i] as Row;
    if (keep(r)) {
      if (total < limit) records.push(r);
      total++;
    }
  }
  return { total, records };
}

const cases = [
  { query: 'from enrolments where course = PHYS-303', hand: (r: Row) => r.course === 'PHYS-303' },
  { query: 'from enrolments where status in (failed, withdrawn)', hand: (r: Row) => r.status === 'failed' || r.status === 'withdrawn' },
  {
    query: 'from enrolments where status = completed and term in ("2023-autumn", "2024-spring") and grade = 5',
    hand: (r: Row) => r.grade === 5 && r.status === 'completed' && (r.term === '2023-autumn' || r.term === '2024-spring'),
  },
];
const rows = table.rows;
for (const c of cases) {
  const request = compile(c.query);
  const filters = request.filters as Filters;
  const handRun = () => { let t = 0; for (let i = 0; i < rows.length; i++) if (c.hand(rows[i] as Row)) t++; return t; };
  const a = evaluate(request, { ...table }).total;
  const b = firstRequest(filters, rows, 100).total;
  if (a !== b || a !== handRun()) throw new Error(`counts differ for ${c.query}: ${a} ${b}`);
  let cold = { ...table };
  const m = measureSync([
    { name: 'ckql cold', fn: () => evaluate(request, cold), beforeEach: () => { cold = { ...table }; } },
    { name: 'generated', fn: () => firstRequest(filters, rows, 100) },
    { name: 'hand', fn: handRun },
  ], { timeMs: 1500, minSamples: 10, rounds: 3, warmupMs: 200 });
  console.log(c.query);
  for (const x of m.values()) console.log(`  ${x.name.padEnd(10)} ${x.median.toFixed(3)} ms`);
}

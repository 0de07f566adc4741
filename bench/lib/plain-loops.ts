/**
 * The hand-written loops the profiles of section 2's first call on a plain
 * array measure ckql against (bench/profile/plain-first.ts,
 * bench/profile/plain-passes.ts): section 2's three filters, and a bare
 * `for…in` that only counts each record's keys.
 */
import type { Row } from '../../src/datastore/types.js';

/** `status = completed and term in ("2023-autumn", "2024-spring") and grade = 5`, the first 100 kept: the total. */
export function handThreeFilters(rows: readonly Row[]): number {
  const records: Row[] = [];
  let total = 0;
  for (let i = 0; i < rows.length; i++) {
    const r = rows[i] as Row;
    if (r.grade !== 5 || r.status !== 'completed') continue;
    const t = r.term;
    if (t === '2023-autumn' || t === '2024-spring') {
      if (total < 100) records.push(r);
      total++;
    }
  }
  return total;
}

/** Every record's keys counted with `for…in`: what any exact field list of plain records needs. */
export function countKeys(rows: readonly Row[]): number {
  let count = 0;
  // eslint-disable-next-line @typescript-eslint/no-unused-vars -- counting the keys is the point
  for (let i = 0; i < rows.length; i++) for (const key in rows[i] as Row) count++;
  return count;
}

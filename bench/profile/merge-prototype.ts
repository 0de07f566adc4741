/**
 * Prototype for the warm `in` regression (section 2): `lookupRows` joins the
 * equality index's per-value row lists and then sorts the result
 * (`Int32Array#sort`, O(n log n)). The lists are each ascending already, so
 * a merge gives the same array in O(n). Measured on the row lists of
 * `status in (failed, withdrawn)` over 1M generated enrolments.
 *
 *   tsx bench/profile/merge-prototype.ts [rows]
 */
import type { Row } from '../../src/datastore/types.js';
import { enrolmentsFile } from '../lib/data.js';
import { measureSync } from '../lib/harness.js';
import { loadTable } from '../lib/tables.js';

const table = await loadTable(enrolmentsFile(Number(process.argv[2] ?? 1_000_000)));
const listOf = (value: string) => {
  const out: number[] = [];
  table.rows.forEach((r: Row, i) => { if (r.status === value) out.push(i); });
  return Int32Array.from(out);
};
const lists = [listOf('failed'), listOf('withdrawn')];

function concatSort(parts: readonly Int32Array[]): Int32Array {
  const out = new Int32Array(parts.reduce((a, p) => a + p.length, 0));
  let at = 0;
  for (const p of parts) { out.set(p, at); at += p.length; }
  return out.sort();
}

/** k-way merge of ascending lists (k is the number of values in the `in` list: small). */
function merge(parts: readonly Int32Array[]): Int32Array {
  if (parts.length === 2) {
    const [a, b] = parts as [Int32Array, Int32Array];
    const out = new Int32Array(a.length + b.length);
    let i = 0, j = 0, k = 0;
    while (i < a.length && j < b.length) out[k++] = (a[i] as number) < (b[j] as number) ? (a[i++] as number) : (b[j++] as number);
    while (i < a.length) out[k++] = a[i++] as number;
    while (j < b.length) out[k++] = b[j++] as number;
    return out;
  }
  return parts.reduce((acc, p) => merge([acc, p]));
}

const merged = merge(lists);
const same = concatSort(lists).every((v, i) => v === merged[i]);
if (!same) throw new Error('merge differs from sort');
const m = measureSync([
  { name: 'concat + sort', fn: () => concatSort(lists) },
  { name: 'merge', fn: () => merge(lists) },
], { timeMs: 1500, minSamples: 10, rounds: 3, warmupMs: 200 });
console.log(`${lists[0]?.length} + ${lists[1]?.length} positions`);
for (const x of m.values()) console.log(`  ${x.name.padEnd(14)} ${x.median.toFixed(3)} ms`);

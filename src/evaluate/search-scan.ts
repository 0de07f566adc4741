/**
 * The first `q` on a table: a scan of the field values, without building the
 * search text.
 *
 * Why: the search text (source.ts, `searchChunks`) makes every later `q` a
 * few `indexOf` sweeps, but building it writes out and lower-cases the text
 * of every field of every row, which costs more than answering one `q` by
 * testing the values (issue 5: the first `q` took as long as sift's regex
 * scan). So the first `q` tests values here and the second builds the text,
 * the policy columns and equality indexes follow.
 *
 * Values repeat: a loaded table shares one string per distinct text of a
 * column, and numbers, dates and codes come back again and again. Each
 * field's values are tested once per distinct value and the answer kept in
 * a map for the rest of the scan, so most rows cost one map lookup per field
 * instead of normalizing text. The test is the definition of semantics.md
 * (the canonical text, NFKC, lower case, contains `q`), with the NFKC step
 * skipped for ASCII text, which it leaves unchanged.
 */
import type { Row } from '../datastore/types.js';
import { canonicalText, normalizeText } from './values.js';
import { fieldReader } from './row-scan.js';
import { grow, rowList } from './row-list.js';

// Anything but printable ASCII, \t, \n and \r: text that NFKC may change.
const NON_ASCII = /[^\t\n\r -~]/;

/** Distinct values remembered per field; past this a field's values are tested without the map. */
const MEMO_LIMIT = 1 << 14;
/**
 * After this many values of a field, the map is dropped if more than a
 * quarter of them were new: a field of mostly unique values (ids, titles)
 * gains nothing from it and pays for a large map.
 */
const MEMO_TRIAL = 2048;

/**
 * Whether `value` contains `q` as text search sees it: its canonical text,
 * NFKC, lower case (`q` already normalized). Null and missing contain nothing.
 * @example
 * valueContains('Ｃｈｅｍ-203', 'chem-2') // true
 * valueContains(2.5, '2.5')              // true
 */
export function valueContains(value: unknown, q: string): boolean {
  const text = canonicalText(value);
  if (text === null) return false;
  if (!NON_ASCII.test(text)) return text.length >= q.length && text.toLowerCase().includes(q);
  return normalizeText(text).includes(q);
}

/**
 * The rows among `candidates` (every row when null) where some field in
 * `fields` contains `q` (normalized), ascending.
 * @example
 * searchRows(rows, ['title', 'subject'], 'math', null) // Int32Array [0, 2, …]
 */
export function searchRows(rows: readonly Row[], fields: readonly string[], q: string, candidates: ArrayLike<number> | null): Int32Array {
  const n = candidates === null ? rows.length : candidates.length;
  const readers = fields.map(fieldReader);
  const memos: (Map<unknown, boolean> | undefined)[] = fields.map(() => new Map<unknown, boolean>());
  const seen = new Int32Array(fields.length);
  let out = rowList(n);
  let k = 0;
  // Row by row, field by field: each row object is read once (a table of a million rows does not
  // fit in the CPU caches, so a pass per field would fetch every row again), and a row stops at
  // its first matching field.
  for (let j = 0; j < n; j++) {
    const i = candidates === null ? j : (candidates[j] as number);
    const row = rows[i] as Row;
    for (let f = 0; f < readers.length; f++) {
      const v = (readers[f] as (row: Row, position: number) => unknown)(row, i);
      if (v === null || v === undefined) continue;
      const memo = memos[f];
      let hit: boolean | undefined;
      if (memo === undefined) hit = valueContains(v, q);
      else {
        hit = memo.get(v);
        if (hit === undefined) {
          hit = valueContains(v, q);
          // objects are keyed by identity and rarely repeat: not remembered
          if (typeof v !== 'object' && memo.size < MEMO_LIMIT) memo.set(v, hit);
        }
        if (++(seen[f] as number) === MEMO_TRIAL && memo.size * 4 > MEMO_TRIAL) memos[f] = undefined;
      }
      if (hit) {
        if (k === out.length) out = grow(out, n);
        out[k++] = i;
        break;
      }
    }
  }
  return out.subarray(0, k);
}

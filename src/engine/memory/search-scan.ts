/**
 * The first `q` on a table: a scan of the field values, without building the
 * search text.
 *
 * Why: the search text (source.ts, `searchChunks`) makes every later `q` a
 * few `indexOf` sweeps, but building it writes out and lower-cases the text
 * of every field of every row, which costs more than answering one `q` by
 * testing the values (BENCHMARKS.md: the first `q` took as long as sift's regex
 * scan). So the first `q` tests values here and the second builds the text,
 * the policy columns and equality indexes follow.
 *
 * Values repeat: a loaded table shares one string per distinct text of a
 * column, and numbers, dates and codes come back again and again. Each
 * field's values are tested once per distinct value and the answer kept in
 * a map for the rest of the scan, so most rows cost one map lookup per field
 * instead of normalizing text. The test is the definition of docs/semantics.md
 * (the canonical text, NFKC, lower case, contains `q`), with the NFKC step
 * skipped for ASCII text, which it leaves unchanged.
 */
import type { Row } from '../../datastore/types.js';
import { canonicalText, normalizeText } from '../../datastore/values.js';
import { fieldReader } from './row-scan.js';
import { grow, rowList } from './row-list.js';

// Anything but printable ASCII, \t, \n and \r: text that NFKC may change.
const NON_ASCII = /[^\t\n\r -~]/;

/** Every character the lower-cased text of a number can hold. */
const NUMBER_CHARS = /^[-+.0-9aefinty]*$/;

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
  // A number's text (`String(n)`: digits, . - + e, Infinity, NaN) holds nothing else: a q with
  // any other character (most words) cannot be in one, so numbers need no text at all.
  if (typeof value === 'number' && !NUMBER_CHARS.test(q)) return false;
  const text = canonicalText(value);
  if (text === null) return false;
  if (!NON_ASCII.test(text)) return text.length >= q.length && text.toLowerCase().includes(q);
  return normalizeText(text).includes(q);
}

/** A text column as codes per row and text → code (a loader's encoded column). */
export interface EncodedField {
  readonly codes: Int32Array;
  readonly dictionary: ReadonlyMap<string, number>;
}

/**
 * The rows among `candidates` (every row when null) where some field in
 * `fields` contains `q` (normalized), ascending. `encoded(field)` gives a
 * field's codes where they exist: then each distinct text is tested once
 * and the rows are found by their codes, without reading the row objects.
 * @example
 * searchRows(rows, ['title', 'subject'], 'math', null, () => undefined) // Int32Array [0, 2, …]
 */
export function searchRows(
  rows: readonly Row[],
  fields: readonly string[],
  q: string,
  candidates: ArrayLike<number> | null,
  encoded: (field: string) => EncodedField | undefined,
): Int32Array {
  const byCode: { readonly codes: Int32Array; readonly hits: Uint8Array }[] = [];
  const others: string[] = [];
  for (const field of fields) {
    const column = encoded(field);
    if (column === undefined) {
      others.push(field);
      continue;
    }
    const hits = new Uint8Array(column.dictionary.size);
    let any = false;
    for (const [text, code] of column.dictionary) {
      if (valueContains(text, q)) {
        hits[code] = 1;
        any = true;
      }
    }
    if (any) byCode.push({ codes: column.codes, hits });
  }
  if (byCode.length === 0) return scanValues(rows, others, q, candidates);
  const n = candidates === null ? rows.length : candidates.length;
  let found = rowList(n);
  let k = 0;
  let rest: Int32Array | undefined = others.length === 0 ? undefined : rowList(n);
  let r = 0;
  for (let j = 0; j < n; j++) {
    const i = candidates === null ? j : (candidates[j] as number);
    let hit = false;
    for (let f = 0; f < byCode.length && !hit; f++) {
      const { codes, hits } = byCode[f] as { codes: Int32Array; hits: Uint8Array };
      const c = codes[i] as number;
      hit = c >= 0 && hits[c] === 1;
    }
    if (hit) {
      if (k === found.length) found = grow(found, n);
      found[k++] = i;
    } else if (rest !== undefined) {
      if (r === rest.length) rest = grow(rest, n);
      rest[r++] = i;
    }
  }
  if (rest === undefined || r === 0) return found.subarray(0, k);
  return mergeDisjoint(found.subarray(0, k), scanValues(rows, others, q, rest.subarray(0, r)));
}

/** Two ascending lists without common rows as one ascending list. */
function mergeDisjoint(a: Int32Array, b: Int32Array): Int32Array {
  const out = new Int32Array(a.length + b.length);
  let i = 0;
  let j = 0;
  let k = 0;
  while (i < a.length && j < b.length) out[k++] = (a[i] as number) < (b[j] as number) ? (a[i++] as number) : (b[j++] as number);
  while (i < a.length) out[k++] = a[i++] as number;
  while (j < b.length) out[k++] = b[j++] as number;
  return out;
}

/** `searchRows` for fields without codes: the values read from the rows. */
function scanValues(rows: readonly Row[], fields: readonly string[], q: string, candidates: ArrayLike<number> | null): Int32Array {
  const n = candidates === null ? rows.length : candidates.length;
  if (fields.length === 0) return new Int32Array(0);
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

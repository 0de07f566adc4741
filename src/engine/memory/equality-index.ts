/**
 * Equality indexes, built lazily: for one array of column values (a column's
 * raw values, its dictionary codes or its canonical texts), the ascending row
 * positions of each distinct value. A server answering the same kind of
 * selective filter again and again then touches only the matching rows
 * instead of scanning every row (BENCHMARKS.md: the server's throughput target).
 *
 * An index is built on the second time a large array leads a query (a
 * one-off query never pays for it), and only for arrays with a bounded
 * number of distinct values (an index of unique values costs much memory for
 * little gain over a scan). Keys compare as `Map` keys do (SameValueZero),
 * which is the plans' `===` plus NaN equal to itself, as their Set has it.
 */

/** Below this many rows a scan is as quick as a lookup: no index. */
export const INDEX_MIN_ROWS = 4096;

export type EqualityIndex = ReadonlyMap<unknown, Int32Array>;

/**
 * By owner (a table's column): `null` means decided against an index (too
 * many distinct values). Kept per owner, not per values array: a loader's
 * codes array is shared by every table object over the same rows, and a
 * table another caller never used must not find (or count towards) an index.
 */
const indexes = new WeakMap<object, EqualityIndex | null>();
const leads = new WeakMap<object, number>();

/**
 * The index of `values` (the array `owner` filters on) if it exists or is
 * worth building now; undefined when a scan should be used.
 *
 * @example
 * equalityIndex(column, codes)             // undefined: first time, scan
 * equalityIndex(column, codes)?.get(3)     // Int32Array of the rows whose code is 3
 */
export function equalityIndex(owner: object, values: ArrayLike<unknown>): EqualityIndex | undefined {
  const key = owner;
  const known = indexes.get(key);
  if (known !== undefined) return known ?? undefined;
  if (values.length < INDEX_MIN_ROWS) return undefined;
  const count = (leads.get(key) ?? 0) + 1;
  leads.set(key, count);
  if (count < 2) return undefined;
  const built = buildIndex(values);
  indexes.set(key, built);
  return built ?? undefined;
}

function buildIndex(values: ArrayLike<unknown>): EqualityIndex | null {
  const n = values.length;
  const limit = Math.max(1024, n >>> 2);
  const counts = new Map<unknown, number>();
  for (let i = 0; i < n; i++) {
    const v = values[i];
    const c = counts.get(v);
    if (c !== undefined) counts.set(v, c + 1);
    else if (counts.size >= limit) return null;
    else counts.set(v, 1);
  }
  const slots = new Map<unknown, { readonly rows: Int32Array; at: number }>();
  for (const [v, c] of counts) slots.set(v, { rows: new Int32Array(c), at: 0 });
  for (let i = 0; i < n; i++) {
    const slot = slots.get(values[i]) as { rows: Int32Array; at: number };
    slot.rows[slot.at++] = i;
  }
  const index = new Map<unknown, Int32Array>();
  for (const [v, slot] of slots) index.set(v, slot.rows);
  return index;
}

/**
 * The index of `owner` if one has been built, without counting this as a
 * use (for comparing candidate plans).
 * @example
 * peekIndex(column) // undefined until `equalityIndex(column, codes)` built one
 */
export function peekIndex(owner: object): EqualityIndex | undefined {
  return indexes.get(owner) ?? undefined;
}

/**
 * How many rows hold any of `wanted`, from an index.
 * @example
 * countRows(index, ['math', 'arts']) // 1234
 */
export function countRows(index: EqualityIndex, wanted: readonly unknown[]): number {
  let total = 0;
  for (const v of unique(wanted)) total += index.get(v)?.length ?? 0;
  return total;
}

/**
 * The ascending row positions holding any of `wanted`, from an index: the
 * first `max` of them when `max` is given (the page of an unsorted request
 * needs no more). The index's lists are ascending already, so they are
 * merged, not joined and sorted (O(n log k) for k lists instead of
 * O(n log n)). The result may be the index's own array or a view of it:
 * read it, never change it.
 * @example
 * lookupRows(index, ['math', 'arts'])      // Int32Array [0, 2, 7, …]
 * lookupRows(index, ['math', 'arts'], 100) // the first 100 of those
 */
export function lookupRows(index: EqualityIndex, wanted: readonly unknown[], max = Infinity): Int32Array {
  let lists: Int32Array[] = [];
  for (const v of unique(wanted)) {
    const rows = index.get(v);
    if (rows === undefined) continue;
    // a list's rows after its first `max` cannot be among the first `max` of the union
    lists.push(rows.length > max ? rows.subarray(0, max) : rows);
  }
  if (lists.length === 0) return new Int32Array(0);
  // balanced pairwise merges: log2(k) passes over the rows
  while (lists.length > 1) {
    const next: Int32Array[] = [];
    for (let k = 0; k + 1 < lists.length; k += 2) next.push(mergeTwo(lists[k] as Int32Array, lists[k + 1] as Int32Array, max));
    if (lists.length % 2 === 1) next.push(lists[lists.length - 1] as Int32Array);
    lists = next;
  }
  return lists[0] as Int32Array;
}

/** The first `max` positions of two ascending lists of distinct rows, ascending (the lists never share a row). */
function mergeTwo(a: Int32Array, b: Int32Array, max: number): Int32Array {
  const n = Math.min(a.length + b.length, max);
  const out = new Int32Array(n);
  let i = 0;
  let j = 0;
  let k = 0;
  const an = a.length;
  const bn = b.length;
  while (k < n && i < an && j < bn) {
    const x = a[i] as number;
    const y = b[j] as number;
    if (x < y) {
      out[k++] = x;
      i++;
    } else {
      out[k++] = y;
      j++;
    }
  }
  if (k < n) out.set(i < an ? a.subarray(i, i + n - k) : b.subarray(j, j + n - k), k);
  return out;
}

/**
 * How many of `wanted` have rows in the index (the lists a lookup merges).
 * @example
 * listCount(index, ['math', 'arts', 'nope']) // 2
 */
export function listCount(index: EqualityIndex, wanted: readonly unknown[]): number {
  let lists = 0;
  for (const v of unique(wanted)) if (index.has(v)) lists++;
  return lists;
}

function unique(values: readonly unknown[]): readonly unknown[] {
  return values.length < 2 ? values : [...new Set(values)];
}

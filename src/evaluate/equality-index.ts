/**
 * Equality indexes, built lazily: for one array of column values (a column's
 * raw values, its dictionary codes or its canonical texts), the ascending row
 * positions of each distinct value. A server answering the same kind of
 * selective filter again and again then touches only the matching rows
 * instead of scanning every row (issue 5: the server's throughput target).
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

/** `null`: decided against an index for this array (too many distinct values). */
const indexes = new WeakMap<object, EqualityIndex | null>();
const leads = new WeakMap<object, number>();

/**
 * The index of `values` if it exists or is worth building now; undefined
 * when a scan should be used.
 *
 * @example
 * equalityIndex(codes)             // undefined: first time, scan
 * equalityIndex(codes)?.get(3)     // Int32Array of the rows whose code is 3
 */
export function equalityIndex(values: ArrayLike<unknown>): EqualityIndex | undefined {
  const key = values as object;
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
 * The index of `values` if one has been built, without counting this as a
 * use (for comparing candidate plans).
 * @example
 * peekIndex(codes) // undefined until `equalityIndex(codes)` built one
 */
export function peekIndex(values: ArrayLike<unknown>): EqualityIndex | undefined {
  return indexes.get(values as object) ?? undefined;
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
 * The ascending row positions holding any of `wanted`, from an index. The
 * result may be the index's own array: read it, never change it.
 * @example
 * lookupRows(index, ['math', 'arts']) // Int32Array [0, 2, 7, …]
 */
export function lookupRows(index: EqualityIndex, wanted: readonly unknown[]): Int32Array {
  const lists: Int32Array[] = [];
  let total = 0;
  for (const v of unique(wanted)) {
    const rows = index.get(v);
    if (rows === undefined) continue;
    lists.push(rows);
    total += rows.length;
  }
  if (lists.length === 0) return new Int32Array(0);
  if (lists.length === 1) return lists[0] as Int32Array;
  const out = new Int32Array(total);
  let at = 0;
  for (const rows of lists) {
    out.set(rows, at);
    at += rows.length;
  }
  return out.sort();
}

function unique(values: readonly unknown[]): readonly unknown[] {
  return values.length < 2 ? values : [...new Set(values)];
}

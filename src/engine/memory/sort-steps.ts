/**
 * The memory engine's one sort of many items, as steps (engine/pace.ts): a
 * native sort cannot be interrupted, so runs of `RUN` items are sorted
 * natively and then merged pairwise, yielding every `SLICE` items placed.
 * Up to `RUN` items it is the native sort alone.
 */
import { SLICE } from '../pace.js';
import type { Steps } from '../pace.js';

/** Items sorted natively in one go: a few milliseconds of comparisons at most. */
const RUN = 4096;

/**
 * The positions 0 … n − 1 in `compare` order. `compare` must be a total
 * order (ties broken by position, as every caller's is), which makes the
 * merge's result the native sort's.
 * @example
 * runSteps(sortSteps(3, (a, b) => values[a] - values[b] || a - b)) // Int32Array [2, 0, 1] for values [5, 7, 1]
 */
export function* sortSteps(n: number, compare: (a: number, b: number) => number): Steps<Int32Array> {
  let from = new Int32Array(n);
  for (let j = 0; j < n; j++) from[j] = j;
  if (n <= RUN) return from.sort(compare);
  for (let lo = 0; lo < n; lo += RUN) {
    from.subarray(lo, Math.min(n, lo + RUN)).sort(compare);
    yield;
  }
  let to = new Int32Array(n);
  for (let width = RUN; width < n; width *= 2) {
    for (let lo = 0; lo < n; lo += 2 * width) {
      const mid = Math.min(n, lo + width);
      const hi = Math.min(n, lo + 2 * width);
      const at = { left: lo, right: mid, out: lo };
      while (at.out < hi) {
        mergeSlice(from, to, at, mid, hi, Math.min(hi, at.out + SLICE), compare);
        yield;
      }
    }
    [from, to] = [to, from];
  }
  return from;
}

/** Merges `from[left…mid)` and `from[right…hi)` into `to` from `out` up to `stop` (the left first on a tie). */
function mergeSlice(
  from: Int32Array,
  to: Int32Array,
  at: { left: number; right: number; out: number },
  mid: number,
  hi: number,
  stop: number,
  compare: (a: number, b: number) => number,
): void {
  let { left, right, out } = at;
  while (out < stop) {
    if (right >= hi || (left < mid && compare(from[left]!, from[right]!) <= 0)) to[out++] = from[left++]!;
    else to[out++] = from[right++]!;
  }
  at.left = left;
  at.right = right;
  at.out = out;
}

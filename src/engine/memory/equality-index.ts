/**
 * Equality indexes: for one field of a table, the ascending row positions of
 * each canonical text (null for null or missing). A request whose filter
 * holds `field = v` or `field in (…)` then reads the matching rows instead of
 * scanning every row; the other conditions are tested on those rows only.
 *
 * Built the second time a request filters a field by equality (a one-off
 * request never pays for it), only on tables of at least `INDEX_MIN_ROWS`,
 * and given up for fields with more distinct texts than a quarter of the
 * rows (ids, titles: much memory for little gain over a scan).
 */
import type { JsonValue, Row } from '../../datastore/types.js';
import { canonicalText } from '../../datastore/values.js';
import type { EqualityIndex, TableView } from './table-view.js';

export type { EqualityIndex } from './table-view.js';
import { fieldReader } from './predicate.js';
import type { Steps } from '../pace.js';

/** Below this many rows a scan is as quick as a lookup: no index. */
export const INDEX_MIN_ROWS = 1024;


/**
 * The index of `field` if it exists or is worth building now (counting this
 * request as a use; `mayBuild` false when the request built one already, so
 * no request pays for more than one); undefined when a scan should be used.
 * @example
 * runSteps(equalityIndex(view, 'status'))           // undefined: first use, scan
 * runSteps(equalityIndex(view, 'status'))?.get('failed') // Int32Array of the rows whose status is "failed"
 */
export function* equalityIndex(view: TableView, field: string, mayBuild = true): Steps<EqualityIndex | undefined> {
  const known = view.indexes.get(field);
  if (known !== undefined) return known ?? undefined;
  if (view.rows.length < INDEX_MIN_ROWS) return undefined;
  const uses = (view.equalityUses.get(field) ?? 0) + 1;
  view.equalityUses.set(field, uses);
  if (uses < 2 || !mayBuild) return undefined;
  // set only once whole: an index stopped half-way by a cancelled query is built again by the next
  const built = yield* buildIndex(view.rows, field);
  view.indexes.set(field, built);
  return built ?? undefined;
}

/** Rows read between two yields while an index is built. */
const BUILD_SLICE = 16_384;

function* buildIndex(rows: readonly Row[], field: string): Steps<EqualityIndex | null> {
  const n = rows.length;
  const limit = Math.max(1024, n >>> 2);
  const read = fieldReader(field);
  const texts = new Array<string | null>(n);
  const counts = new Map<string | null, number>();
  for (let i = 0; i < n; i++) {
    if (i % BUILD_SLICE === BUILD_SLICE - 1) yield;
    const v = read(rows[i] as Row, i);
    const text = typeof v === 'string' ? v : canonicalText(v);
    texts[i] = text;
    const c = counts.get(text);
    if (c !== undefined) counts.set(text, c + 1);
    else if (counts.size >= limit) return null;
    else counts.set(text, 1);
  }
  const slots = new Map<string | null, { readonly rows: Int32Array; at: number }>();
  for (const [text, c] of counts) slots.set(text, { rows: new Int32Array(c), at: 0 });
  for (let i = 0; i < n; i++) {
    const slot = slots.get(texts[i] as string | null) as { rows: Int32Array; at: number };
    slot.rows[slot.at++] = i;
  }
  const index = new Map<string | null, Int32Array>();
  for (const [text, slot] of slots) index.set(text, slot.rows);
  return index;
}

/**
 * The canonical texts an `eq`/`in` wants (null for null), each once.
 * @example
 * wantedTexts([2020, '2020', null]) // ['2020', null]
 */
export function wantedTexts(values: readonly JsonValue[]): (string | null)[] {
  return [...new Set(values.map((v) => canonicalText(v)))];
}

/**
 * How many rows hold any of `wanted`, from an index.
 * @example
 * countRows(index, ['math', 'arts']) // 1234
 */
export function countRows(index: EqualityIndex, wanted: readonly (string | null)[]): number {
  let total = 0;
  for (const v of wanted) total += index.get(v)?.length ?? 0;
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
export function lookupRows(index: EqualityIndex, wanted: readonly (string | null)[], max: number = Infinity): Int32Array {
  let lists: Int32Array[] = [];
  for (const v of wanted) {
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


/** Each row's value in an index as a small number, and the number of each value. */
interface Codes {
  readonly codes: Uint16Array | Int32Array;
  readonly codeOf: ReadonlyMap<string | null, number>;
}

/** The codes of each index, made on first use by `keepEqual` (and as long-lived as the index). */
const codesByIndex = new WeakMap<EqualityIndex, Codes>();

function codesOf(index: EqualityIndex, rowCount: number): Codes {
  const known = codesByIndex.get(index);
  if (known !== undefined) return known;
  const codes = index.size <= 0xffff ? new Uint16Array(rowCount) : new Int32Array(rowCount);
  const codeOf = new Map<string | null, number>();
  for (const [text, rows] of index) {
    const code = codeOf.size;
    codeOf.set(text, code);
    for (let j = 0; j < rows.length; j++) codes[rows[j] as number] = code;
  }
  const made = { codes, codeOf };
  codesByIndex.set(index, made);
  return made;
}

/**
 * The rows among `rows` (ascending positions) whose value in the index is
 * one of `wanted`, as a new list. Reads the index's codes, one small number
 * per row made once per index, not the row objects: a row object is a
 * cache miss where a code column is not, which on a selective request was
 * most of the request's work (BENCHMARKS.md, Server).
 * @example
 * keepEqual(statusIndex, 200_000, Int32Array.of(3, 17, 40), ['withdrawn']) // [17]
 *
 * `along`, when given, holds the codes of `rows` in their order
 * (`codesAlong`), read instead of the code column.
 */
export function keepEqual(
  index: EqualityIndex,
  rowCount: number,
  rows: ArrayLike<number>,
  wanted: readonly (string | null)[],
  along?: Uint16Array | Int32Array,
): number[] {
  const { codes, codeOf } = codesOf(index, rowCount);
  // a list filled by `push`: a typed array of the candidates' length had its memory allocated outside
  // the heap (and freed by the GC) on every request, for the few rows that are kept
  const out: number[] = [];
  if (wanted.length === 1) {
    const only = codeOf.get(wanted[0] as string | null);
    if (only === undefined) return out;
    if (along !== undefined) {
      for (let j = 0; j < rows.length; j++) if (along[j] === only) out.push(rows[j] as number);
      return out;
    }
    for (let j = 0; j < rows.length; j++) {
      const i = rows[j] as number;
      if (codes[i] === only) out.push(i);
    }
    return out;
  }
  const want = new Set<number>();
  for (const text of wanted) {
    const code = codeOf.get(text);
    if (code !== undefined) want.add(code);
  }
  if (want.size === 0) return out;
  for (let j = 0; j < rows.length; j++) {
    const i = rows[j] as number;
    if (want.has((along === undefined ? codes[i] : along[j]) as number)) out.push(i);
  }
  return out;
}

/** Another index's codes along each of an index's lists, one column for all the lists, and where each list starts in it. */
interface Along {
  readonly codes: Uint16Array | Int32Array;
  readonly start: ReadonlyMap<string | null, number>;
}

/** `Along` of each pair of indexes, made on first use (and as long-lived as the indexes). */
const alongByIndex = new WeakMap<EqualityIndex, WeakMap<EqualityIndex, Along>>();

/**
 * The codes of `other`'s values for the rows of `index`'s list of `text`,
 * in that list's order: what `keepEqual` reads for those rows. A list's rows
 * are scattered over the table, so their codes in the code column are a
 * cache miss each; along the list they are read in a row (on the server's
 * selective request, with two `=` conditions, that read was the largest
 * part of the engine's work: BENCHMARKS.md, Server). Made for every list of
 * `index` at once, a column as long as the table, the first time the pair
 * is used.
 * @example
 * keepEqual(status, n, course.get('PHYS-303'), ['withdrawn'], codesAlong(course, 'PHYS-303', status, n))
 */
export function codesAlong(index: EqualityIndex, text: string | null, other: EqualityIndex, rowCount: number): Uint16Array | Int32Array | undefined {
  let byOther = alongByIndex.get(index);
  if (byOther === undefined) alongByIndex.set(index, (byOther = new WeakMap()));
  let along = byOther.get(other);
  if (along === undefined) {
    const { codes } = codesOf(other, rowCount);
    const column = codes instanceof Uint16Array ? new Uint16Array(rowCount) : new Int32Array(rowCount);
    const start = new Map<string | null, number>();
    let at = 0;
    for (const [value, rows] of index) {
      start.set(value, at);
      for (let j = 0; j < rows.length; j++) column[at++] = codes[rows[j] as number] as number;
    }
    along = { codes: column, start };
    byOther.set(other, along);
  }
  const from = along.start.get(text);
  const rows = index.get(text);
  return from === undefined || rows === undefined ? undefined : along.codes.subarray(from, from + rows.length);
}

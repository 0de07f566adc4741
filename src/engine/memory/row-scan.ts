/**
 * The first request on a table: filters and sort keys read straight from the
 * row objects, without building columns.
 *
 * Why: a column (one array of values per field, dictionary-encoded for text)
 * pays off from the second request that uses the field, but building it
 * costs more than answering the first request: for `ckql query --data` (one
 * query per process) and for the first request after loading, the evaluator
 * spent 4–28× a hand-written loop building columns for every touched field
 * before filtering at all (BENCHMARKS.md §2). Here the whole filter
 * runs in one pass over the rows, as the hand-written loop does; `source.ts`
 * builds a field's column the second time a request uses it.
 *
 * The pass is generated code, one function per field list: a property read
 * with a literal name (`r["status"]`) is a named load that V8 caches per row
 * shape (all rows of a loaded table share one), where `r[field]` with a
 * changing name is a keyed load that goes megamorphic once several fields
 * pass through it. Field names enter the code only as JSON string literals
 * inside brackets (`r[${JSON.stringify(name)}]`): JSON string syntax is a
 * subset of JavaScript string literal syntax (since ES2019 also for U+2028
 * and U+2029), so no name, whatever it holds, can end the literal and add
 * code. The wanted values never enter the code: they are passed in as
 * arguments, so NaN, -0, Infinity and odd strings need no literal form, and
 * one function serves every query with the same field list and list sizes.
 *
 * Equality is the canonical-text rule of `values.ts`, split into a fast
 * test and an exact one: for a field whose declared type holds one kind of
 * JavaScript value (numbers for int/numeric, strings for text/timestamp,
 * booleans for bool), the wanted texts are converted to that kind once and
 * compared with `===`; a value of that kind that is not among them cannot
 * match (its canonical text is not wanted), and a value of any other kind
 * (null, a number in a text field, JSON) goes to the exact test
 * `canonicalText(v)` against the wanted texts.
 */
import type { FieldInfo, FieldType, Row, Scalar } from '../../datastore/types.js';
import { canonicalText, compareNumbers, compareText, compareValues, wantedValues } from '../../datastore/values.js';
import { generate } from './row-shape.js';
import { grow, rowList } from './row-list.js';

/** A filter's exact test: the canonical-text rule for one value. */
type ExactTest = (value: unknown) => boolean;

type FastKind = 'string' | 'number' | 'boolean';

interface RowFilter {
  readonly field: string;
  /** the typeof the fast test handles, if any */
  readonly kind: FastKind | undefined;
  /** wanted values of that kind (`===`, or a Set when there are many or NaN is among them) */
  readonly fast: readonly unknown[];
  readonly useSet: boolean;
  /** null (or a missing key) passes */
  readonly matchesNull: boolean;
  readonly exact: ExactTest;
}

/** Above this many fast values a Set lookup beats a chain of `===`. */
const MAX_CHAIN = 4;
/** Rows sampled to put the most selective filter first. */
const SAMPLE = 64;

/** The rows that pass: the first `capacity` positions (ascending) and how many pass in all. */
export interface RowScan {
  readonly rows: Int32Array;
  readonly total: number;
}

/**
 * Runs `filters` (field and wanted value or list) over the rows in one pass,
 * or over the rows at `candidates` (ascending positions) when given: the
 * positions of the first `needed` matching rows, ascending, and the count of
 * all; `undefined` when a filter can match nothing (`[]`).
 *
 * @example
 * scanRows(rows, fields, [['status', ['failed', 'withdrawn']], ['grade', 5]], 100, null)
 * // → { rows: Int32Array [3, 17, …] (at most 100), total: 4211 }
 */
export function scanRows(
  rows: readonly Row[],
  fieldById: ReadonlyMap<string, FieldInfo>,
  filters: readonly (readonly [string, Scalar | readonly Scalar[]])[],
  needed: number,
  candidates: ArrayLike<number> | null,
): RowScan | undefined {
  const list: RowFilter[] = [];
  for (const [field, value] of filters) {
    const filter = rowFilter(field, fieldById.get(field)?.type, value);
    if (filter === undefined) return undefined;
    list.push(filter);
  }
  const n = candidates === null ? rows.length : candidates.length;
  orderBySelectivity(list, rows);
  const max = Math.min(n, needed);
  const kept: Kept = { out: rowList(max), max };
  const total = scanner(list)(rows, candidates, n, kept);
  return { rows: kept.out.subarray(0, Math.min(total, max)), total };
}

function rowFilter(field: string, type: FieldType | undefined, value: Scalar | readonly Scalar[]): RowFilter | undefined {
  const wanted = wantedValues(value);
  if (wanted === undefined) return undefined;
  const { texts, matchesNull } = wanted;
  const exact: ExactTest = (v) => {
    const text = canonicalText(v);
    return text === null ? matchesNull : texts.has(text);
  };
  const kind = fastKindOf(type);
  const fast: unknown[] = [];
  let useSet = false;
  for (const t of texts) {
    if (kind === 'string') fast.push(internalized(t));
    else if (kind === 'number') {
      const n = Number(t);
      if (canonicalText(n) !== t) continue; // "2.50", "007": no number has this text
      if (n !== n) useSet = true; // NaN: only a Set (SameValueZero) finds it
      fast.push(n);
    } else if (kind === 'boolean' && (t === 'true' || t === 'false')) fast.push(t === 'true');
  }
  return { field, kind, fast, useSet: useSet || fast.length > MAX_CHAIN, matchesNull, exact };
}

/**
 * The same text as V8's internalized (unique) copy. V8 compares two
 * internalized strings by address alone; JSON.parse internalizes short
 * values, so against those rows a wanted text that is internalized too
 * fails `===` without reading characters (movies: 41 → 23 µs for 3,201
 * rows). A property key is always internalized, so `Object.keys` hands the
 * copy back.
 */
function internalized(text: string): string {
  return Object.keys({ [text]: 0 })[0] ?? text;
}

function fastKindOf(type: FieldType | undefined): FastKind | undefined {
  switch (type) {
    case 'int':
    case 'int4':
    case 'float8':
    case 'numeric':
      return 'number';
    case 'text':
    case 'date':
    case 'timestamp':
      return 'string';
    case 'bool':
      return 'boolean';
    default:
      return undefined;
  }
}

/**
 * Puts the tests in the order that costs least per row: by cost ÷ share of
 * rows failing it (the best order for independent tests), the share
 * estimated from evenly spaced sample rows. Comparing two strings of equal
 * length reads their characters, so a string `===` costs a few number
 * `===`s: `grade = 5` (14 % pass) runs before `term in (…)` (20 % pass,
 * two string compares), as a hand-written loop would order them.
 */
function orderBySelectivity(list: RowFilter[], rows: readonly Row[]): void {
  if (list.length < 2) return;
  const n = rows.length;
  const step = Math.max(1, Math.floor(n / SAMPLE));
  const rank = new Map<RowFilter, number>();
  for (const filter of list) {
    const read = fieldReader(filter.field);
    let samples = 0;
    let failing = 0;
    for (let i = 0; i < n; i += step, samples++) if (!passes(filter, read(rows[i] as Row, i))) failing++;
    const cost = filter.useSet ? 8 : Math.max(1, filter.fast.length) * (filter.kind === 'string' ? 4 : 1);
    // +1: a test no sample fails still ranks by its cost
    rank.set(filter, cost / ((failing + 1) / (samples + 1)));
  }
  list.sort((a, b) => (rank.get(a) as number) - (rank.get(b) as number));
}

/** One filter's test on one value, as the generated scan does it. */
function passes(filter: RowFilter, v: unknown): boolean {
  if (filter.fast.includes(v)) return true;
  if (v === null || v === undefined) return filter.matchesNull;
  return typeof v !== filter.kind && filter.exact(v);
}

/** Where a scan keeps positions: `out` (replaced by a larger copy when full), at most `max` of them. */
interface Kept {
  out: Int32Array;
  readonly max: number;
}

type Scanner = (rows: readonly Row[], candidates: ArrayLike<number> | null, n: number, kept: Kept) => number;

/** A generated scan: the filters' values come in as arguments, so one function serves every call. */
type GeneratedScan = (
  rows: readonly Row[],
  candidates: ArrayLike<number> | null,
  n: number,
  kept: Kept,
  fast: readonly (readonly unknown[])[],
  exact: readonly ExactTest[],
  more: typeof grow,
) => number;

/** The one-pass scan for these filters, generated (see the module comment), else built from closures. */
function scanner(list: readonly RowFilter[]): Scanner {
  // One function per source, called again and again: V8 optimizes it as a whole after a few
  // calls. A closure made per call would start cold in the interpreter each time.
  const made = generate<GeneratedScan>(['rows', 'C', 'n', 'K', 'F', 'E', 'grow'], scannerSource(list));
  if (made !== undefined) {
    const fastValues = list.map((f) => (f.useSet ? [new Set(f.fast)] : f.fast));
    const exact = list.map((f) => f.exact);
    return (rows, candidates, n, kept) => made(rows, candidates, n, kept, fastValues, exact, grow);
  }
  const tests = list.map((f) => {
    const read = fieldReader(f.field);
    const set = f.useSet ? new Set(f.fast) : undefined;
    return (row: Row, i: number): boolean => {
      const v = read(row, i);
      if (set !== undefined && set.has(v)) return true;
      return passes(f, v);
    };
  });
  return (rows, candidates, n, kept) => {
    let total = 0;
    next: for (let j = 0; j < n; j++) {
      const i = candidates === null ? j : (candidates[j] as number);
      const row = rows[i] as Row;
      for (const test of tests) if (!test(row, i)) continue next;
      if (total < kept.max) {
        if (total === kept.out.length) kept.out = grow(kept.out, kept.max);
        kept.out[total] = i;
      }
      total++;
    }
    return total;
  };
}

/**
 * Body of `(rows, C, n, K, F, E, grow) => count`: the rows at positions
 * `C[0..n)` (or `0..n` when `C` is null) are tested; `F[k]` holds filter k's
 * fast values (or `[set]`), `E[k]` its exact test; the positions go to
 * `K.out` (grown as needed, at most `K.max`). Depends only on the field
 * names, the kinds and the number of fast values, never on the values.
 */
function scannerSource(list: readonly RowFilter[]): string {
  const setup: string[] = [];
  const tests: string[] = [];
  list.forEach((f, k) => {
    setup.push(`const e${k} = E[${k}];`);
    const alternatives: string[] = [];
    if (f.useSet) {
      setup.push(`const s${k} = F[${k}][0];`);
      alternatives.push(`s${k}.has(v)`);
    } else {
      f.fast.forEach((_, j) => {
        setup.push(`const w${k}_${j} = F[${k}][${j}];`);
        alternatives.push(`v === w${k}_${j}`);
      });
    }
    // null and missing are decided here, without a call (empty cells are common)
    if (f.matchesNull) alternatives.push('v == null');
    const other = f.matchesNull ? [] : ['v != null'];
    // the kind is one of three fixed words, never data
    if (f.kind !== undefined) other.unshift(`typeof v !== "${f.kind}"`);
    alternatives.push(`(${[...other, `e${k}(v)`].join(' && ')})`);
    tests.push(`v = ${readExpression(f.field)};\n  if (!(${alternatives.join(' || ')})) continue;`);
  });
  return `${setup.join('\n')}
let out = K.out;
const max = K.max;
let total = 0;
for (let j = 0; j < n; j++) {
  const i = C === null ? j : C[j];
  const r = rows[i];
  let v;
  ${tests.join('\n  ')}
  if (total < max) {
    if (total === out.length) out = grow(out, max);
    out[total] = i;
  }
  total++;
}
K.out = out;
return total;`;
}

/**
 * JavaScript that reads `field` of row `r` at position `i` as the evaluator
 * sees it (`readField` in source.ts): own keys only for names that
 * Object.prototype also has, `_id` defaulting to the 1-based position. The
 * name is embedded as a JSON string literal (see the module comment).
 */
function readExpression(field: string): string {
  const name = JSON.stringify(field);
  if (field === '_id') return `(r["_id"] ?? i + 1)`;
  if (field in Object.prototype) return `(Object.hasOwn(r, ${name}) ? r[${name}] : undefined)`;
  return `r[${name}]`;
}

/** Reads one field of a row as `readExpression` does (`undefined` for missing). */
export type FieldReader = (row: Row, position: number) => unknown;

/**
 * A reader of `field` (see `readExpression`), generated so the load is a
 * named one.
 * @example
 * fieldReader('year')({ year: 2020 }, 0) // 2020
 * fieldReader('_id')({}, 4)             // 5
 */
export function fieldReader(field: string): FieldReader {
  let reader = readers.get(field);
  if (reader === undefined) {
    reader = generate<FieldReader>(['r', 'i'], `return ${readExpression(field)};`);
    if (reader === undefined) {
      reader = field === '_id' ? (row, i) => row._id ?? i + 1 : (row) => (Object.hasOwn(row, field) ? row[field] : undefined);
    }
    if (readers.size >= 1024) readers.clear();
    readers.set(field, reader);
  }
  return reader;
}

/** Readers by field name (bounded), so a request does not rebuild their source. */
const readers = new Map<string, FieldReader>();

/** Compares two row positions on one field. */
export type PositionComparator = (a: number, b: number) => number;

/**
 * Compares rows on `field` read from the row objects (`compareValues`:
 * numbers numerically, text by code point, nulls last), for a sort on a
 * field that has no column yet.
 * @example
 * rowKeyComparator(rows, 'year')(0, 1) // < 0 when rows[0].year < rows[1].year
 */
export function rowKeyComparator(rows: readonly Row[], field: string): PositionComparator {
  const read = fieldReader(field);
  return (a, b) => {
    const x = read(rows[a] as Row, a);
    const y = read(rows[b] as Row, b);
    if (typeof x === 'number' && typeof y === 'number') return compareNumbers(x, y);
    if (typeof x === 'string' && typeof y === 'string') return compareText(x, y);
    return compareValues(x, y);
  };
}


/**
 * The window step over rows (compile/window.ts, docs/expressions.md): the
 * rows of a query's inner query in, the answer's rows out. Each window
 * hashes the rows into its partitions (nulls one partition, as PostgreSQL
 * does), sorts each partition by its order keys (stable: ties keep the
 * rows' order), then computes in one pass over it; `qualify` keeps rows,
 * `order by` sorts them (ties in the inner order), then the page and the
 * answer's columns. PostgreSQL's meaning: `rank` skips after ties,
 * `dense_rank` does not, `lag`/`lead` give null past the partition's ends,
 * an aggregate with an order is the running aggregate up to the row and
 * its peers (RANGE UNBOUNDED PRECEDING), without one the partition's.
 *
 * As steps (engine/pace.ts): a slice of rows at a time, so a long window
 * breathes and stops when the run is cancelled. The memory engine and the
 * executor's `window` operator both run it.
 */
import type { Aggregate } from '../../ast.js';
import { assertNever } from '../../ast.js';
import type { ColumnKey, WindowSpec, WindowStep } from '../../compile/window.js';
import { windowedFields } from '../../compile/window.js';
import type { FieldInfo, FieldType, JsonValue, Row } from '../../datastore/types.js';
import { canonicalText } from '../../datastore/values.js';
import { SLICE } from '../pace.js';
import type { Steps } from '../pace.js';
import { havingTest, runningAggregate, sortRows, valueOrder } from './aggregate.js';
import { sortSteps } from './sort-steps.js';

/** The answer of the step: the rows qualify keeps (`total`), and the page of them with the answer's columns. */
export interface WindowAnswer {
  readonly fields: readonly FieldInfo[];
  readonly rows: readonly Row[];
  /** the rows qualify keeps, before offset and limit */
  readonly total: number;
}

/**
 * Runs the step over the inner query's rows (`fields` their columns);
 * `limit`: the page's size when the step says none.
 * @example
 * runSteps(windowAnswer(rows, fields, windowStep(parse('from g select s, row_number() over (partition by s order by x desc) as r qualify r <= 3'))!, 100))
 * // → { rows: the top 3 of each s, fields: [s, r], total: … }
 */
export function* windowAnswer(rows: readonly Row[], fields: readonly FieldInfo[], step: WindowStep, limit: number): Steps<WindowAnswer> {
  const all = yield* computeWindows(rows, fields, step);
  const typeOf = (column: string): FieldType | undefined => all.find((f) => f.id === column)?.type;
  const work = rows as Row[];
  let kept: Row[] = work;
  if (step.qualify !== undefined) {
    const test = havingTest(step.qualify, all);
    kept = [];
    for (let from = 0; from < work.length; from += SLICE) {
      for (let i = from; i < Math.min(work.length, from + SLICE); i++) if (test(work[i]!)) kept.push(work[i]!);
      yield;
    }
  }
  const sorted = step.order.length === 0 ? kept : yield* sortRows(kept, step.order.map((key) => ({ slot: key.column, direction: key.direction, nulls: key.nulls, type: typeOf(key.column) })));
  const size = step.limit ?? limit;
  const page = sorted.slice(step.offset, step.offset + size);
  const answer = page.map((row) => {
    const out: Record<string, JsonValue> = {};
    for (const column of step.columns) Object.defineProperty(out, column, { value: row[column] ?? null, enumerable: true, writable: true, configurable: true });
    return out as Row;
  });
  return { fields: step.columns.map((c) => all.find((f) => f.id === c)!), rows: answer, total: kept.length };
}

/**
 * Each window's column on every row (the rows are the inner query's own,
 * made for this answer: they are written in place); the fields of the rows
 * with their windows.
 */
export function* computeWindows(rows: readonly Row[], fields: readonly FieldInfo[], step: WindowStep): Steps<FieldInfo[]> {
  const all = windowedFields(step, fields);
  const typeOf = (column: string): FieldType | undefined => all.find((f) => f.id === column)?.type;
  for (const spec of step.windows) yield* computeWindow(rows as Row[], spec, typeOf);
  return all;
}

/** A comparison of rows by keys, each by its type's order, nulls last ascending and first descending unless told. */
function rowOrder(keys: readonly ColumnKey[], typeOf: (column: string) => FieldType | undefined): (a: Row, b: Row) => number {
  const parts = keys.map((key) => {
    const order = valueOrder(typeOf(key.column));
    const desc = key.direction === 'desc';
    const nullSign = (key.nulls ?? (desc ? 'first' : 'last')) === 'first' ? -1 : 1;
    const column = key.column;
    return (a: Row, b: Row): number => {
      const x = a[column] ?? null;
      const y = b[column] ?? null;
      if (x === null || y === null) return x === y ? 0 : x === null ? nullSign : -nullSign;
      return desc ? order(y, x) : order(x, y);
    };
  });
  if (parts.length === 1) return parts[0]!;
  return (a, b) => {
    for (const part of parts) {
      const c = part(a, b);
      if (c !== 0) return c;
    }
    return 0;
  };
}

/** The partitions of the rows, each its rows' positions in order; a column's values are of one type, so one key is its value. */
function* partitions(rows: readonly Row[], columns: readonly string[]): Steps<number[][]> {
  if (columns.length === 0) return [Array.from({ length: rows.length }, (_, i) => i)];
  const byKey = new Map<unknown, number[]>();
  const one = columns.length === 1 ? columns[0]! : undefined;
  for (let from = 0; from < rows.length; from += SLICE) {
    const to = Math.min(rows.length, from + SLICE);
    for (let i = from; i < to; i++) {
      const row = rows[i]!;
      // one column: its value itself (an object value, json, by its text); several: their texts together
      let key: unknown;
      if (one !== undefined) {
        const value = row[one] ?? null;
        key = value !== null && typeof value === 'object' ? `\u0000${canonicalText(value)}` : value;
      } else {
        key = JSON.stringify(columns.map((c) => canonicalText(row[c] ?? null) ?? null));
      }
      const list = byKey.get(key);
      if (list === undefined) byKey.set(key, [i]);
      else list.push(i);
    }
    yield;
  }
  return [...byKey.values()];
}

/** One window's column over every row. */
function* computeWindow(rows: Row[], spec: WindowSpec, typeOf: (column: string) => FieldType | undefined): Steps<void> {
  const compare = spec.order.length === 0 ? undefined : rowOrder(spec.order, typeOf);
  const parts = yield* partitions(rows, spec.partition);
  let done = 0;
  for (const part of parts) {
    let sorted: ArrayLike<number> = part;
    if (compare !== undefined) {
      if (part.length <= SLICE) {
        part.sort((a, b) => compare(rows[a]!, rows[b]!) || a - b);
      } else {
        const order = yield* sortSteps(part.length, (a, b) => compare(rows[part[a]!]!, rows[part[b]!]!) || a - b);
        sorted = Array.from(order, (j) => part[j]!);
      }
    }
    fill(rows, sorted, spec, compare, typeOf);
    done += part.length;
    if (done >= SLICE) {
      done = 0;
      yield;
    }
  }
}

/** The window's values over one partition, its rows in the window's order. */
function fill(rows: Row[], at: ArrayLike<number>, spec: WindowSpec, compare: ((a: Row, b: Row) => number) | undefined, typeOf: (column: string) => FieldType | undefined): void {
  const column = spec.column;
  const n = at.length;
  const set = (i: number, value: JsonValue): void => {
    (rows[at[i]!] as Record<string, JsonValue>)[column] = value;
  };
  // whether row i is a peer of row i - 1: equal by the order keys (every row is, without an order)
  const peer = (i: number): boolean => i > 0 && (compare === undefined || compare(rows[at[i - 1]!]!, rows[at[i]!]!) === 0);
  const call = spec.window.call;
  if (call.kind === 'aggregate') {
    fillAggregate(rows, at, spec, call, typeOf(spec.argument ?? ''), peer, set);
    return;
  }
  switch (call.fn) {
    case 'row_number':
      for (let i = 0; i < n; i++) set(i, i + 1);
      return;
    case 'rank': {
      let rank = 0;
      for (let i = 0; i < n; i++) {
        if (!peer(i)) rank = i + 1;
        set(i, rank);
      }
      return;
    }
    case 'dense_rank': {
      let rank = 0;
      for (let i = 0; i < n; i++) {
        if (!peer(i)) rank++;
        set(i, rank);
      }
      return;
    }
    case 'lag':
    case 'lead': {
      const argument = spec.argument!;
      const shift = call.fn === 'lag' ? -spec.offset : spec.offset;
      for (let i = 0; i < n; i++) {
        const j = i + shift;
        set(i, j < 0 || j >= n ? null : (rows[at[j]!]![argument] ?? null));
      }
      return;
    }
    default:
      assertNever(call, 'window function');
  }
}

/** An aggregate over the partition: the whole partition's without an order; with one, the running value up to each row's last peer. */
function fillAggregate(
  rows: readonly Row[],
  at: ArrayLike<number>,
  spec: WindowSpec,
  aggregate: Aggregate,
  type: FieldType | undefined,
  peer: (i: number) => boolean,
  set: (i: number, value: JsonValue) => void,
): void {
  const state = runningAggregate(aggregate, type);
  const argument = spec.argument;
  const n = at.length;
  let i = 0;
  while (i < n) {
    // the peers of row i: every row of the partition when the window has no order
    let end = i + 1;
    while (end < n && (spec.order.length === 0 || peer(end))) end++;
    for (let j = i; j < end; j++) state.add(argument === undefined ? 1 : (rows[at[j]!]![argument] ?? null));
    const value = state.result();
    for (let j = i; j < end; j++) set(j, value);
    i = end;
  }
}

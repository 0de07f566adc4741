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
import type { Aggregate, Condition } from '../../ast.js';
import { assertNever } from '../../ast.js';
import type { ColumnKey, WindowSpec, WindowStep } from '../../compile/window.js';
import { windowedFields } from '../../compile/window.js';
import type { FieldInfo, FieldType, JsonValue, Row } from '../../datastore/types.js';
import { canonicalText, isNumberType } from '../../datastore/values.js';
import { SLICE } from '../pace.js';
import type { Steps } from '../pace.js';
import { havingTest, runningAggregate, valueOrder } from './aggregate.js';
import { conditionReader } from './computed.js';
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
 * `limit`: the page's size when the step says none. The windows' values
 * are kept in columns by the rows' positions, and only the rows of the page
 * are made again, with the answer's columns.
 * @example
 * runSteps(windowAnswer(rows, fields, windowStep(parse('from g select s, row_number() over (partition by s order by x desc) as r qualify r <= 3'))!, 100))
 * // → { rows: the top 3 of each s, fields: [s, r], total: … }
 */
export function* windowAnswer(rows: readonly Row[], fields: readonly FieldInfo[], step: WindowStep, limit: number): Steps<WindowAnswer> {
  const all = windowedFields(step, fields);
  const typeOf = (column: string): FieldType | undefined => all.find((f) => f.id === column)?.type;
  const columns = new Map<string, JsonValue[]>();
  for (const spec of step.windows) columns.set(spec.column, yield* computeWindow(rows, spec, typeOf));
  // a column's value at a row's position: a window's from its column, else the row's own
  const at = (column: string): ((p: number) => JsonValue | null) => {
    const values = columns.get(column);
    return values !== undefined ? (p) => values[p]! : (p) => rows[p]![column] ?? null;
  };
  let kept: number[] = [];
  if (step.qualify === undefined) {
    kept = Array.from({ length: rows.length }, (_, p) => p);
  } else {
    // checked as having is (a value its column's type cannot read is refused), then tested by position
    havingTest(step.qualify, all);
    const test = conditionReader<number>(step.qualify, (field) => ({ read: at(field.name), type: typeOf(field.name) ?? 'text' }));
    const quick = numberTest(step.qualify, at, typeOf);
    for (let from = 0; from < rows.length; from += SLICE) {
      for (let p = from; p < Math.min(rows.length, from + SLICE); p++) {
        const holds = quick === undefined ? test(p) : quick(p);
        if (holds === true || (holds === null && test(p) === true)) kept.push(p);
      }
      yield;
    }
  }
  if (step.order.length > 0) {
    const compare = positionOrder(step.order, typeOf, at);
    const order = yield* sortSteps(kept.length, (a, b) => compare(kept[a]!, kept[b]!) || a - b);
    kept = Array.from(order, (j) => kept[j]!);
  }
  const size = step.limit ?? limit;
  const page = kept.slice(step.offset, step.offset + size);
  const readers = step.columns.map((column) => [column, at(column)] as const);
  const answer = page.map((p) => {
    const out: Record<string, JsonValue> = {};
    for (const [column, read] of readers) Object.defineProperty(out, column, { value: read(p), enumerable: true, writable: true, configurable: true });
    return out as Row;
  });
  return { fields: step.columns.map((c) => all.find((f) => f.id === c)!), rows: answer, total: kept.length };
}

/**
 * A test of numbers against number literals (`r <= 3`, and `and`, `or`,
 * `not` of them) that reads a row's JSON numbers as they are; null where a
 * value is no JSON number (a decimal beyond a double's digits), which the
 * general test then decides. Undefined for any other condition.
 */
function numberTest(condition: Condition, at: (column: string) => (p: number) => JsonValue | null, typeOf: (column: string) => FieldType | undefined): ((p: number) => boolean | undefined | null) | undefined {
  switch (condition.kind) {
    case 'eq':
    case 'compare': {
      const type = typeOf(condition.field.name);
      if (condition.value.kind !== 'number' || type === undefined || !isNumberType(type)) return undefined;
      const read = at(condition.field.name);
      const n = condition.value.value;
      const op = condition.kind === 'eq' ? 'eq' : condition.op;
      return (p) => {
        const x = read(p);
        if (x === null) return undefined;
        if (typeof x !== 'number') return null;
        switch (op) {
          case 'eq':
            return x === n;
          case 'ne':
            return x !== n;
          case 'lt':
            return x < n;
          case 'lte':
            return x <= n;
          case 'gt':
            return x > n;
          case 'gte':
            return x >= n;
          default:
            return assertNever(op, 'comparison');
        }
      };
    }
    case 'not': {
      const inner = numberTest(condition.condition, at, typeOf);
      if (inner === undefined) return undefined;
      return (p) => {
        const t = inner(p);
        return t === null || t === undefined ? t : !t;
      };
    }
    case 'and':
    case 'or': {
      const parts = condition.conditions.map((c) => numberTest(c, at, typeOf));
      if (parts.some((part) => part === undefined)) return undefined;
      const tests = parts as ((p: number) => boolean | undefined | null)[];
      const and = condition.kind === 'and';
      return (p) => {
        let result: boolean | undefined = and;
        for (const test of tests) {
          const t = test(p);
          if (t === null) return null;
          if (t === !and) return !and;
          if (t === undefined) result = undefined;
        }
        return result;
      };
    }
    default:
      return undefined;
  }
}

/**
 * Each window's column written on every row (the executor's rows, made for
 * this step: they are written in place); the fields of the rows with their
 * windows.
 */
export function* computeWindows(rows: readonly Row[], fields: readonly FieldInfo[], step: WindowStep): Steps<FieldInfo[]> {
  const all = windowedFields(step, fields);
  const typeOf = (column: string): FieldType | undefined => all.find((f) => f.id === column)?.type;
  for (const spec of step.windows) {
    const values = yield* computeWindow(rows, spec, typeOf);
    for (let p = 0; p < rows.length; p++) (rows[p] as Record<string, JsonValue>)[spec.column] = values[p]!;
  }
  return all;
}

/** A comparison by keys, each by its type's order, nulls last ascending and first descending unless told; `read` gives a key's value. */
function keyOrder<T>(keys: readonly ColumnKey[], read: (key: ColumnKey, index: number) => { readonly value: (item: T) => JsonValue | null; readonly numbers: boolean }, typeOf: (column: string) => FieldType | undefined): (a: T, b: T) => number {
  const parts = keys.map((key, index) => {
    const { value, numbers } = read(key, index);
    const desc = key.direction === 'desc';
    const nullSign = (key.nulls ?? (desc ? 'first' : 'last')) === 'first' ? -1 : 1;
    if (numbers) {
      // numbers (the common case) compare as numbers
      const sign = desc ? -1 : 1;
      return (a: T, b: T): number => {
        const x = value(a) as number | null;
        const y = value(b) as number | null;
        if (x === null || y === null) return x === y ? 0 : x === null ? nullSign : -nullSign;
        return x < y ? -sign : x > y ? sign : 0;
      };
    }
    const order = valueOrder(typeOf(key.column));
    return (a: T, b: T): number => {
      const x = value(a);
      const y = value(b);
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

/** A comparison of rows' positions by `order by`'s keys. */
function positionOrder(keys: readonly ColumnKey[], typeOf: (column: string) => FieldType | undefined, at: (column: string) => (p: number) => JsonValue | null): (a: number, b: number) => number {
  return keyOrder<number>(keys, (key) => ({ value: at(key.column), numbers: false }), typeOf);
}

/**
 * A comparison of a partition's members (by their index in `part`) that
 * reads their keys once, before the sort: its rows' values of each order key.
 */
function memberOrder(rows: readonly Row[], part: readonly number[], keys: readonly ColumnKey[], typeOf: (column: string) => FieldType | undefined): (a: number, b: number) => number {
  return keyOrder<number>(keys, (key) => {
    const values = new Array<JsonValue | null>(part.length);
    let numbers = true;
    for (let j = 0; j < part.length; j++) {
      const v = rows[part[j]!]![key.column] ?? null;
      values[j] = v;
      if (v !== null && typeof v !== 'number') numbers = false;
    }
    return { value: (j) => values[j]!, numbers };
  }, typeOf);
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


/**
 * The keys of one order key over a partition's rows as a typed array that
 * sorts ascending in the key's order (negated for `desc`; a null at the end
 * its `nulls` says, as an infinity), or undefined when a value is no number.
 */
function numberKeys(rows: readonly Row[], part: readonly number[], key: ColumnKey): Float64Array | undefined {
  const keys = new Float64Array(part.length);
  const desc = key.direction === 'desc';
  const nullsFirst = (key.nulls ?? (desc ? 'first' : 'last')) === 'first';
  const columnName = key.column;
  for (let j = 0; j < part.length; j++) {
    const v = rows[part[j]!]![columnName] ?? null;
    if (v === null) keys[j] = nullsFirst ? -Infinity : Infinity;
    else if (typeof v === 'number') keys[j] = desc ? (v === 0 ? 0 : -v) : v;
    else return undefined;
  }
  return keys;
}

/** 0, 1, …, n − 1. */
function identity(n: number): Int32Array {
  const out = new Int32Array(n);
  for (let j = 0; j < n; j++) out[j] = j;
  return out;
}

/** The positions of a partition's members in an order of them. */
function gather(part: readonly number[], order: Int32Array): Int32Array {
  const out = new Int32Array(order.length);
  for (let j = 0; j < order.length; j++) out[j] = part[order[j]!]!;
  return out;
}

/** One window's column over every row, by the rows' positions. */
function* computeWindow(rows: readonly Row[], spec: WindowSpec, typeOf: (column: string) => FieldType | undefined): Steps<JsonValue[]> {
  const values = new Array<JsonValue>(rows.length);
  const parts = yield* partitions(rows, spec.partition);
  let done = 0;
  for (const part of parts) {
    // the partition's rows in the window's order (ties keep the rows' order), and a comparison of the i-th and j-th of them
    let sorted: ArrayLike<number> = part;
    let peers: ((i: number, j: number) => number) | undefined;
    const keys = spec.order.length === 1 ? numberKeys(rows, part, spec.order[0]!) : undefined;
    if (keys !== undefined) {
      // one key of numbers (the common case): sorted by a typed array of them
      let order = identity(part.length);
      if (part.length <= SLICE) order.sort((a, b) => keys[a]! - keys[b]! || a - b);
      else order = yield* sortSteps(part.length, (a, b) => keys[a]! - keys[b]! || a - b);
      sorted = gather(part, order);
      const members = order;
      peers = (i, j) => (keys[members[i]!] === keys[members[j]!] ? 0 : 1);
    } else if (spec.order.length > 0) {
      const compare = memberOrder(rows, part, spec.order, typeOf);
      const tie = (a: number, b: number): number => compare(a, b) || a - b;
      const order = part.length <= SLICE ? identity(part.length).sort(tie) : yield* sortSteps(part.length, tie);
      sorted = gather(part, order);
      peers = (i, j) => compare(order[i]!, order[j]!);
    }
    fill(rows, sorted, spec, peers, typeOf, values);
    done += part.length;
    if (done >= SLICE) {
      done = 0;
      yield;
    }
  }
  return values;
}

/**
 * The window's values over one partition, its rows (`at`, positions) in
 * the window's order; `compare` compares the i-th and j-th of them by the
 * order keys.
 */
function fill(
  rows: readonly Row[],
  at: ArrayLike<number>,
  spec: WindowSpec,
  compare: ((i: number, j: number) => number) | undefined,
  typeOf: (column: string) => FieldType | undefined,
  values: JsonValue[],
): void {
  const n = at.length;
  const set = (i: number, value: JsonValue): void => {
    values[at[i]!] = value;
  };
  // whether row i is a peer of row i - 1: equal by the order keys (every row is, without an order)
  const peer = (i: number): boolean => i > 0 && (compare === undefined || compare(i - 1, i) === 0);
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

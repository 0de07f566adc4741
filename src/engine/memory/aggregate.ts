/**
 * The hash aggregate (docs/aggregates.md, Meaning): items are folded into
 * one group per distinct key as they come, each group holding only its
 * accumulators, so memory grows with the groups and not with the items.
 * The memory engine folds table rows (or joined rows) into it; a plan's
 * `aggregate` operator folds a portal's pages as they arrive
 * (execute/aggregate.ts). Both then finish the groups here: `having`, the
 * order (the keys last, so ties and an absent `order by` are the same on
 * every engine), and the slots of each group.
 *
 * PostgreSQL's meaning: nulls form one group; keys compare as `=` does (by
 * canonical text, so 2020 and "2020" are one group, which keeps the value
 * seen first); `count(*)` counts rows, `count(f)` values, `count(distinct f)`
 * distinct values; `sum`, `avg`, `min`, `max` ignore nulls and are null over
 * no value. `sum` is exact over integers and decimals (scaled integers,
 * see `ExactSum`); over `float8` it is a double's, as PostgreSQL's.
 */
import { withComputedSlots } from './computed.js';
import type { Aggregate, Condition } from '../../ast.js';
import { assertNever } from '../../ast.js';
import type { FacetResult, FieldInfo, FieldType, JsonValue, Row } from '../../datastore/types.js';
import { bucketFunction } from '../../datastore/buckets.js';
import { decimalOf } from '../../datastore/decimal.js';
import { floatValue, scaledValue } from '../../datastore/number-text.js';
import { divideDecimal, divisionScale } from './expression.js';
import { canonicalText, compareNumberColumn, compareValues, isNumberType, typeReading } from '../../datastore/values.js';
import { validationError } from '../../errors.js';
import type { BoundShape, FacetSpec, Shape } from '../../compile/shape.js';
import { aggregateSlot, keySlot } from '../../compile/shape.js';
import { residualTest } from './evaluate-query.js';
import { generate } from '../../datastore/generate.js';
import { fieldReadName, readExpression } from './row-shape.js';
import { SLICE } from '../pace.js';
import type { Steps } from '../pace.js';
import { sortSteps } from './sort-steps.js';

/** Reads a value of an item (a table row by its position, a fetched record, a joined pair). */
export type Read<T> = (item: T) => JsonValue | null | undefined;

/** What to aggregate: the key of each item, and each aggregate's function, value and type. */
export interface AggregateSpec<T> {
  readonly keys: readonly Read<T>[];
  readonly aggregates: readonly { readonly aggregate: Aggregate; readonly read?: Read<T>; readonly type: FieldType | undefined }[];
}

/** One aggregate's running state over a group; `sum` and `avg` of one value share one. */
interface Accumulator {
  add(value: JsonValue | null | undefined): void;
  merge(other: Accumulator): void;
  /** the aggregate's value; `average`: `avg` rather than `sum` (other states ignore it) */
  result(average: boolean): JsonValue;
}

/** One group: its key values (as first seen), the rows it counted, its accumulators. */
interface Group {
  readonly keys: (JsonValue | null)[];
  rows: number;
  readonly states: Accumulator[];
}

/** Folds items into groups; `groups()` once they are all in. */
export interface Aggregator<T> {
  /** adds `items[positions[j]]` for each j, or every item in order without `positions` */
  addAll(items: readonly T[], positions?: Int32Array): void;
  /** `addAll` as steps (engine/pace.ts), a slice of items at a time */
  addSteps(items: readonly T[], positions?: Int32Array): Steps<void>;
  /** adds the numbers 0 … count − 1 as items (joined rows by their position), as steps */
  countSteps(this: Aggregator<number>, count: number): Steps<void>;
  /** the slot rows of the groups (`k0…`, `a0…`), in no particular order */
  groups(): Row[];
  /** how many groups so far */
  readonly size: number;
}

/** What the fold works on: the groups so far, how to make one (`newGroup(keys, specs)`), the reads. */
interface FoldState<T> {
  readonly groups: Map<unknown, Group>;
  readonly specs: readonly StateSpec[];
  readonly newGroup: typeof newGroup;
  readonly keys: readonly Read<T>[];
  readonly inputs: readonly Read<T>[];
  readonly canonical: typeof canonicalText;
}

/**
 * Folds `items[positions[j]]` (each item without `positions`; without
 * items, the numbers themselves) for `from` ≤ j < `to` into the state's groups.
 */
type Fold<T> = (state: FoldState<T>, items: readonly T[] | undefined, positions: Int32Array | undefined, from: number, to: number) => void;

/**
 * An aggregator for a spec. Each distinct value is read once per item, and
 * aggregates that need the same state of the same value (`sum` and `avg`,
 * a repeated `min`) share one accumulator. With one key, groups are found
 * by the key's own value (no text is made per item); keys of different
 * types with one canonical text are merged at the end. With several, by
 * their texts. The fold is generated code (see `fieldRead`); without code
 * generation the same steps run as closures.
 * @example
 * const agg = makeAggregator({ keys: [fieldRead('subject')], aggregates: [{ aggregate: count, type: undefined }] });
 * agg.addAll(rows);
 * agg.groups() // [{ k0: 'math', a0: 6 }, { k0: 'history', a0: 1 }]
 */
export function makeAggregator<T>(spec: AggregateSpec<T>): Aggregator<T> {
  // The distinct values read, the distinct states over them, and where each aggregate finds its result.
  const inputs: Read<T>[] = [];
  const states: (StateSpec & { readonly input: number })[] = [];
  const slots = spec.aggregates.map(({ aggregate, read, type }) => {
    if (read === undefined) return { state: -1, average: false };
    let input = inputs.indexOf(read);
    if (input < 0) input = inputs.push(read) - 1;
    const family = familyOf(aggregate, type);
    let state = states.findIndex((s) => s.input === input && s.family === family);
    if (state < 0) state = states.push({ input, family, type }) - 1;
    return { state, average: aggregate.fn === 'avg' };
  });
  const groups = new Map<unknown, Group>();
  if (spec.keys.length === 0) groups.set(null, newGroup([], states));
  const stateInputs = states.map((s) => s.input);
  const state: FoldState<T> = { groups, specs: states, newGroup, keys: spec.keys, inputs, canonical: canonicalText };
  const fold = generatedFold(spec.keys, inputs, stateInputs) ?? closureFold(spec.keys.length, stateInputs);
  function* slices(items: readonly T[] | undefined, positions: Int32Array | undefined, count: number): Steps<void> {
    for (let from = 0; from < count; from += SLICE) {
      fold(state, items, positions, from, Math.min(count, from + SLICE));
      yield;
    }
  }
  return {
    addAll: (items, positions) => fold(state, items, positions, 0, positions === undefined ? items.length : positions.length),
    addSteps: (items, positions) => slices(items, positions, positions === undefined ? items.length : positions.length),
    countSteps(count) {
      // Only an Aggregator<number> has countSteps (its `this`): its items are the numbers themselves.
      return slices(undefined, undefined, count);
    },
    get size() {
      return groups.size;
    },
    groups: () => {
      let list = [...groups.values()];
      if (spec.keys.length === 1) list = mergeByText(list);
      return list.map((group) => {
        const row: Record<string, JsonValue> = {};
        group.keys.forEach((value, i) => (row[keySlot(i)] = value));
        slots.forEach(({ state, average }, i) => (row[aggregateSlot(i)] = state < 0 ? group.rows : group.states[state]!.result(average)));
        return row as Row;
      });
    },
  };
}

/**
 * The fold as one generated function: each value read once into a local
 * (a `fieldRead` (row-shape.ts) as a literal property load, any other read
 * called), the group found, each state given its value. It is one function
 * per source, shared by every aggregator with the same keys and values, so
 * V8 optimizes it once for every query: it takes everything per query as
 * arguments, and calls no function made per query where it can help it (a
 * closure made per aggregator, or one that made each group's states, was
 * optimized with the previous query's functions inlined, and deoptimized
 * on the next: "wrong call target"). Names enter the
 * code only as JSON string literals, so no name can add code (as in
 * row-shape.ts).
 */
function generatedFold<T>(keys: readonly Read<T>[], inputs: readonly Read<T>[], stateInputs: readonly number[]): Fold<T> | undefined {
  const value = (read: Read<T>, call: string): string => {
    const name = fieldReadName(read);
    return name === undefined ? `${call}(r)` : `(${readExpression('r', name)} ?? null)`;
  };
  const lines: string[] = [];
  keys.forEach((read, i) => lines.push(`let k${i} = ${value(read, `keys[${i}]`)}; if (k${i} === undefined) k${i} = null;`));
  inputs.forEach((read, i) => lines.push(`const v${i} = ${value(read, `inputs[${i}]`)};`));
  if (keys.length === 0) lines.push('const key = null;');
  // A JSON value groups by its text; every other value by itself (merged by text at the end).
  else if (keys.length === 1) lines.push(`let key = k0; if (typeof key === 'object' && key !== null) key = canonical(key);`);
  else lines.push(`const key = JSON.stringify([${keys.map((_, i) => `canonical(k${i})`).join(', ')}]);`);
  lines.push(
    'let g = groups.get(key);',
    `if (g === undefined) { g = newGroup([${keys.map((_, i) => `k${i}`).join(', ')}], specs); groups.set(key, g); }`,
    'g.rows++;',
  );
  if (stateInputs.length > 0) lines.push('const s = g.states;');
  stateInputs.forEach((input, i) => lines.push(`s[${i}].add(v${input});`));
  const body = [
    'const { groups, specs, newGroup, keys, inputs, canonical } = state;',
    'for (let j = from; j < to; j++) {',
    'const r = items === undefined ? j : positions === undefined ? items[j] : items[positions[j]];',
    ...lines,
    '}',
  ].join('\n');
  return generate<Fold<T>>(['state', 'items', 'positions', 'from', 'to'], body);
}

/** The fold of `generatedFold` as closures, where code generation is disabled. */
function closureFold<T>(keyCount: number, stateInputs: readonly number[]): Fold<T> {
  return (state, items, positions, from, to) => {
    const { groups, specs, keys, inputs } = state;
    for (let j = from; j < to; j++) {
      const item = (items === undefined ? j : positions === undefined ? items[j] : items[positions[j]!]) as T;
      const ks = keys.map((read) => (read(item) ?? null) as JsonValue | null);
      const vs = inputs.map((read) => read(item));
      let key: unknown = keyCount === 0 ? null : keyCount === 1 ? ks[0] : JSON.stringify(ks.map((k) => canonicalText(k)));
      if (keyCount === 1 && typeof key === 'object' && key !== null) key = canonicalText(key);
      let group = groups.get(key);
      if (group === undefined) {
        group = newGroup(ks, specs);
        groups.set(key, group);
      }
      group.rows++;
      stateInputs.forEach((input, i) => group.states[i]!.add(vs[input]));
    }
  };
}

/** Groups whose one key has the same canonical text (2020 and "2020", true and "true") are one group. */
function mergeByText(groups: Group[]): Group[] {
  const byText = new Map<string | null, Group>();
  let merged = false;
  for (const group of groups) {
    const text = canonicalText(group.keys[0]);
    const known = byText.get(text);
    if (known === undefined) {
      byText.set(text, group);
      continue;
    }
    merged = true;
    known.rows += group.rows;
    known.states.forEach((acc, i) => acc.merge(group.states[i]!));
  }
  return merged ? [...byText.values()] : groups;
}

// ---------------------------------------------------------------- accumulators

/** The kind of state an aggregate needs: aggregates of one value and one family share one state. */
type Family = 'count' | 'distinct' | 'float' | 'exact' | 'min' | 'max';

/** A state each group keeps: its family, and the value's type (`min`/`max` order by it). */
interface StateSpec {
  readonly family: Family;
  readonly type: FieldType | undefined;
}

function familyOf(aggregate: Aggregate, type: FieldType | undefined): Family {
  switch (aggregate.fn) {
    case 'count':
      return aggregate.distinct ? 'distinct' : 'count';
    case 'sum':
    case 'avg':
      return type === 'float8' || type === 'float' ? 'float' : 'exact';
    case 'min':
    case 'max':
      return aggregate.fn;
    default:
      throw new Error(`unknown aggregate ${String(aggregate.fn)}`);
  }
}

/** A new group with these key values and a fresh state per spec (one function for every aggregator: see `generatedFold`). */
function newGroup(keys: (JsonValue | null)[], specs: readonly StateSpec[]): Group {
  const states = new Array<Accumulator>(specs.length);
  for (let i = 0; i < specs.length; i++) states[i] = newState(specs[i]!);
  return { keys, rows: 0, states };
}

function newState(spec: StateSpec): Accumulator {
  switch (spec.family) {
    case 'count':
      return new ValueCount();
    case 'distinct':
      return new DistinctCount();
    case 'float':
      return new FloatSum();
    case 'exact':
      return new ExactSum();
    case 'min':
    case 'max':
      return new Extreme(spec.family === 'max', spec.type);
    default:
      return assertNever(spec.family);
  }
}

class ValueCount implements Accumulator {
  n = 0;
  add(value: JsonValue | null | undefined): void {
    if (value !== null && value !== undefined) this.n++;
  }
  merge(other: Accumulator): void {
    this.n += (other as ValueCount).n;
  }
  result(): JsonValue {
    return this.n;
  }
}

class DistinctCount implements Accumulator {
  readonly seen = new Set<string>();
  add(value: JsonValue | null | undefined): void {
    if (value === null || value === undefined) return;
    this.seen.add(typeof value === 'string' ? value : canonicalText(value)!);
  }
  merge(other: Accumulator): void {
    for (const text of (other as DistinctCount).seen) this.seen.add(text);
  }
  result(): JsonValue {
    return this.seen.size;
  }
}

/** `sum`/`avg` of `float8`: a double's sum, in the order the values come (as PostgreSQL's). */
class FloatSum implements Accumulator {
  n = 0;
  sum = 0;
  add(value: JsonValue | null | undefined): void {
    if (value === null || value === undefined) return;
    this.n++;
    this.sum += typeof value === 'number' ? value : Number(value);
  }
  merge(other: Accumulator): void {
    this.n += (other as FloatSum).n;
    this.sum += (other as FloatSum).sum;
  }
  result(average: boolean): JsonValue {
    if (this.n === 0) return null;
    return floatValue(average ? this.sum / this.n : this.sum);
  }
}

const SAFE = Number.MAX_SAFE_INTEGER;

/** 10^0 … 10^22: the powers of ten a double holds exactly. */
const POWERS = Array.from({ length: 23 }, (_, i) => 10 ** i);

/**
 * Below this a scaled integer has at most 15 digits, and two decimals of at
 * most 15 significant digits are never one double: a decimal of that size
 * that reads back as the double is the double's shortest text.
 */
const DIGITS_15 = 1e15;

/** 1.5 × 2^52: a double of that size has no fraction, so adding it rounds away a smaller one's. */
const ROUNDING = 6755399441055744;

/**
 * `x` rounded to an integer (to even on a tie) while |x| < 2^51, two
 * additions where `Math.round` costs more; past that a large number or NaN,
 * which the callers' `< DIGITS_15` test turns away.
 */
function roundedUnits(x: number): number {
  return x + ROUNDING - ROUNDING;
}

/**
 * `sum`/`avg` of integers and `numeric`, exact as PostgreSQL's. A double is
 * the decimal its shortest text says (docs/semantics.md). The sum is an
 * integer count of 10^-scale, the scale the most decimal places a value
 * had: a double's part (exact while below 2^53, moved into the BigInt part
 * before it would pass it) and a BigInt part. A value's places are found by
 * a round trip: `m / 10^p` reads back as the value with m of at most 15
 * digits, tried first at the scale so far (one multiply, one divide per
 * value), else for the fewest places. A value that has none (17 significant
 * digits, text, an integer past 2^53) is added as its exact decimal.
 */
class ExactSum implements Accumulator {
  n = 0;
  scale = 0;
  /** 10^scale, NaN past what a double holds exactly (then no value takes the fast path) */
  unit = 1;
  /** the double's part of the sum, in units of 10^-scale: an integer of at most 2^53 − 1 */
  small = 0;
  /** the rest of the sum, in units of 10^-scale */
  big = 0n;

  add(value: JsonValue | null | undefined): void {
    if (value === null || value === undefined) return;
    this.n++;
    if (typeof value === 'number') {
      const m = roundedUnits(value * this.unit);
      if (Math.abs(m) < DIGITS_15 && m / this.unit === value) this.addUnits(m);
      else this.addNumber(value);
      return;
    }
    this.addDecimal(value);
  }

  /** A number that is not a decimal of at most 15 digits at the scale so far. */
  private addNumber(value: number): void {
    if (Number.isSafeInteger(value)) return this.addScaled(value, 0);
    for (let places = 1; places < POWERS.length; places++) {
      const m = roundedUnits(value * POWERS[places]!);
      if (!(Math.abs(m) < DIGITS_15)) break;
      if (m / POWERS[places]! === value) return this.addScaled(m, places);
    }
    this.addDecimal(value);
  }

  private addDecimal(value: JsonValue): void {
    const d = decimalOf(value);
    if (d === undefined) throw validationError('query', `invalid input syntax for type numeric: ${JSON.stringify(canonicalText(value))}`);
    this.rescale(d.scale);
    this.big += d.int * 10n ** BigInt(this.scale - d.scale);
  }

  /** Adds `m / 10^places` (m an integer of at most 2^53 − 1). */
  private addScaled(m: number, places: number): void {
    this.rescale(places);
    const shift = this.scale - places;
    const units = shift < POWERS.length ? m * POWERS[shift]! : Infinity;
    if (Math.abs(units) <= SAFE) this.addUnits(units);
    else this.big += BigInt(m) * 10n ** BigInt(shift);
  }

  /** Adds an integer count of units (at most 2^53 − 1): to the double's part while it stays exact. */
  private addUnits(units: number): void {
    const t = this.small + units;
    if (t > SAFE || t < -SAFE) {
      this.big += BigInt(this.small);
      this.small = units;
    } else {
      this.small = t;
    }
  }

  /** Counts in units of 10^-scale from now on, if that is more places than so far. */
  private rescale(scale: number): void {
    if (scale <= this.scale) return;
    const shift = scale - this.scale;
    const small = shift < POWERS.length ? this.small * POWERS[shift]! : Infinity;
    if (Math.abs(small) <= SAFE) {
      this.big *= 10n ** BigInt(shift);
      this.small = small;
    } else {
      this.big = (this.big + BigInt(this.small)) * 10n ** BigInt(shift);
      this.small = 0;
    }
    this.scale = scale;
    this.unit = POWERS[scale] ?? NaN;
  }

  merge(other: Accumulator): void {
    const o = other as ExactSum;
    this.n += o.n;
    this.rescale(o.scale);
    this.big += o.big * 10n ** BigInt(this.scale - o.scale);
    this.addScaled(o.small, o.scale);
  }

  result(average: boolean): JsonValue {
    if (this.n === 0) return null;
    // Without a BigInt part, a sum of at most 15 digits and no trailing zero is the double small / 10^scale, unless
    // JavaScript would write that with an exponent (below 1e-6): as `scaledValue` would say.
    if (!average && this.big === 0n && Math.abs(this.small) < DIGITS_15 && this.scale < POWERS.length && (this.scale === 0 || this.small % 10 !== 0)) {
      const n = this.small === 0 ? 0 : this.small / this.unit;
      if (n === 0 || this.scale === 0 || Math.abs(n) >= 1e-6) return n;
    }
    // PostgreSQL's numeric keeps its scale (`14866.0`); `avg` is the sum ÷ the count as numeric `/` divides.
    const sum = { int: this.big + BigInt(this.small), scale: this.scale };
    if (!average) return scaledValue(sum);
    const count = { int: BigInt(this.n), scale: 0 };
    return scaledValue(divideDecimal(sum, count, divisionScale(sum, count)));
  }
}

/** `min`/`max` in the field's order (numbers by value, text by code point, dates in time); the value as it is. */
class Extreme implements Accumulator {
  best: JsonValue | undefined;
  private readonly order: (a: JsonValue, b: JsonValue) => number;
  constructor(
    private readonly max: boolean,
    type: FieldType | undefined,
  ) {
    this.order = valueOrder(type);
  }
  add(value: JsonValue | null | undefined): void {
    if (value === null || value === undefined) return;
    if (this.best === undefined) {
      this.best = value;
      return;
    }
    const c = typeof value === 'number' && typeof this.best === 'number' ? value - this.best : this.order(value, this.best);
    if (this.max ? c > 0 : c < 0) this.best = value;
  }
  merge(other: Accumulator): void {
    const best = (other as Extreme).best;
    if (best !== undefined) this.add(best);
  }
  result(): JsonValue {
    return this.best ?? null;
  }
}

/**
 * One accumulator of each class, kept for the life of the module, its
 * fields holding the most general kind of value each takes (a double, a
 * BigInt, any JSON value). V8 keeps an object layout (a map) only while an
 * object has it: without these, a full GC between two queries drops the
 * layouts of the last query's accumulators, and the fold and the
 * accumulators' methods, optimized for them, are deoptimized and the next
 * query runs them cold (bench/analysis.md, "Exact sums").
 */
export const keptLayouts: readonly Accumulator[] = (() => {
  const float = new FloatSum();
  float.sum = 0.5;
  const exact = new ExactSum();
  exact.unit = NaN;
  exact.small = 0.5;
  exact.big = 1n;
  const extreme = new Extreme(false, undefined);
  extreme.best = 0.5;
  extreme.best = 'text';
  return [new ValueCount(), new DistinctCount(), float, exact, extreme];
})();

/** Two values of a field in its type's order (`typeReading`), else `compareValues`'. */
export function valueOrder(type: FieldType | undefined): (a: JsonValue, b: JsonValue) => number {
  if (type === undefined) return compareValues;
  if (isNumberType(type)) return compareNumberColumn;
  const reading = typeReading(type);
  if (reading === undefined || type === 'text') return compareValues;
  return (a, b) => {
    const x = reading.read(a);
    const y = reading.read(b);
    return x === undefined || y === undefined ? compareValues(a, b) : reading.compare(x, y);
  };
}

// ---------------------------------------------------------------- finishing the groups

/**
 * The groups a grouped shape answers with, in its order: those `having`
 * keeps, sorted by the order keys and then the group keys (ascending, nulls
 * last), so groups come in key order without `order by`. As steps: a query
 * may have as many groups as rows.
 */
export function* finishGroups(bound: BoundShape, groups: readonly Row[]): Steps<Row[]> {
  const shape = bound.shape;
  const slotFields: FieldInfo[] = [...bound.slotTypes].map(([id, type]) => ({ id, type }));
  // the computed slots (docs/expressions.md), read over the keys and aggregates before having and the order
  const compute = withComputedSlots(bound);
  const rows = compute === undefined ? groups : groups.map(compute);
  const kept = shape.having === undefined ? rows : rows.filter(havingTest(shape.having, slotFields));
  const keys = [
    ...shape.order.map((key) => ({ slot: (key.by as { slot: string }).slot, direction: key.direction, nulls: key.nulls })),
    ...shape.keys.map((_, i) => ({ slot: keySlot(i), direction: 'asc' as const, nulls: undefined })),
  ];
  return yield* sortRows(kept, keys.map((key) => ({ ...key, type: bound.slotTypes.get(key.slot) })));
}

/** `having` as a test of slot rows, checked as `where` is (a value that cannot be read as its slot's type is refused). */
export function havingTest(having: Condition, slotFields: readonly FieldInfo[]): (row: Row) => boolean {
  const test = residualTest({ kind: 'query', span: having.span, from: { kind: 'from', span: having.span, resource: { kind: 'string', span: having.span, value: '' } }, where: { kind: 'where', span: having.span, condition: having } }, slotFields);
  return (row) => test(row, 0);
}

/** A stable sort of rows by keys, as steps (`sortSteps`): each by its type's order, nulls last ascending and first descending unless told. */
export function* sortRows<R extends Readonly<Record<string, JsonValue | undefined>>>(
  rows: readonly R[],
  keys: readonly { readonly slot: string; readonly direction: 'asc' | 'desc'; readonly nulls?: 'first' | 'last' | undefined; readonly type: FieldType | undefined }[],
): Steps<R[]> {
  if (keys.length === 0) return [...rows];
  const parts = keys.map((key) => {
    const order = valueOrder(key.type);
    const desc = key.direction === 'desc';
    const nullSign = (key.nulls ?? (desc ? 'first' : 'last')) === 'first' ? -1 : 1;
    return (a: R, b: R): number => {
      const x = a[key.slot] ?? null;
      const y = b[key.slot] ?? null;
      if (x === null || y === null) return x === y ? 0 : x === null ? nullSign : -nullSign;
      return desc ? order(y, x) : order(x, y);
    };
  });
  const order = yield* sortSteps(rows.length, (a, b) => {
    for (const part of parts) {
      const c = part(rows[a]!, rows[b]!);
      if (c !== 0) return c;
    }
    return a - b;
  });
  const sorted = new Array<R>(order.length);
  for (let j = 0; j < order.length; j++) sorted[j] = rows[order[j]!]!;
  return sorted;
}

/** The slot rows of a shape's groups as records, its columns named. */
export function namedColumns(bound: BoundShape): (row: Row) => Row {
  const columns = bound.columns.map((c) => [c.name, c.slot!] as const);
  return (row) => {
    const out: Record<string, JsonValue> = {};
    for (const [name, slot] of columns) Object.defineProperty(out, name, { value: row[slot] ?? null, enumerable: true, writable: true, configurable: true });
    return out as Row;
  };
}

export type { Shape };

// ---------------------------------------------------------------- facets

/**
 * One facet's counts as the kept records go by (values by canonical text,
 * nulls apart), and its answer: by count, then value in the field's order
 * (a bucket's values are timestamps or numbers). The memory engine and the
 * executor's plans count facets with it.
 */
export class FacetCounter {
  private readonly counts = new Map<unknown, { value: JsonValue; count: number }>();
  private nulls = 0;
  private readonly bucket: ((value: unknown) => string | number | null) | undefined;

  constructor(readonly facet: FacetSpec) {
    this.bucket = facet.by === undefined ? undefined : bucketFunction(facet.by);
  }

  see(raw: JsonValue | undefined): void {
    const value = this.bucket === undefined ? (raw ?? null) : this.bucket(raw ?? null);
    if (value === null) {
      this.nulls++;
      return;
    }
    const key = typeof value === 'string' ? value : canonicalText(value);
    const known = this.counts.get(key);
    if (known === undefined) this.counts.set(key, { value, count: 1 });
    else known.count++;
  }

  /** The facet's answer; `fieldType` is the faceted field's type. */
  result(fieldType: FieldType | undefined): FacetResult {
    const { facet } = this;
    const order = valueOrder(facet.by === undefined ? fieldType : 'unit' in facet.by ? 'timestamp' : 'numeric');
    const values = [...this.counts.values()].sort((a, b) => b.count - a.count || order(a.value, b.value));
    return {
      field: facet.field.name,
      ...(facet.by === undefined ? {} : { by: 'unit' in facet.by ? facet.by.unit : String(facet.by.width) }),
      values: values.slice(0, facet.top),
      null_count: this.nulls,
      more: values.length > facet.top,
    };
  }
}

// ---------------------------------------------------------------- windows

/** An aggregate's state over rows added one by one, read at any point: a window's (engine/memory/window.ts). */
export interface RunningAggregate {
  add(value: JsonValue | null | undefined): void;
  result(): JsonValue;
}

/**
 * A running state of an aggregate of values of `type`, the fold's own
 * (so a window's `sum`, `avg`, `min`, `max` and `count` are the grouped
 * ones'); `count(*)` counts every value added, null included.
 */
export function runningAggregate(aggregate: Aggregate, type: FieldType | undefined): RunningAggregate {
  if (aggregate.field === undefined) {
    let n = 0;
    return { add: () => void n++, result: () => n };
  }
  const state = newState({ family: familyOf(aggregate, type), type });
  const average = aggregate.fn === 'avg';
  return { add: (value) => state.add(value), result: () => state.result(average) };
}

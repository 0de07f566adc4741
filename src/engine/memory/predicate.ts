/**
 * Filters: the filter tree (`FilterNode`) turned into one test per leaf and
 * run over the row objects in one pass.
 *
 * Why generated code: the pass is the evaluator's one way to filter, and its
 * cost is the property reads. A read with a literal name (`r["status"]`) is a
 * named load that V8 caches per row shape; `r[field]` with a changing name is
 * a keyed load that goes megamorphic once a few fields pass through it, which
 * made a first request 4–5× a hand-written loop (BENCHMARKS.md, Evaluate).
 * Field names enter the code only as JSON string literals (a subset of
 * JavaScript's string literals since ES2019), so no name can add code; the
 * tests and wanted values are closures passed in, never written into the
 * source. Without code generation the same tree runs as closures.
 *
 * Meaning (docs/semantics.md, docs/beyond-the-request.md): `eq` and `in` by
 * canonical text (null equals null or missing); `gt`/`gte`/`lt`/`lte` by the
 * field's type, the value read as PostgreSQL reads an untyped literal; a
 * comparison with null or missing is unknown, and the tree has no `not`, so
 * unknown behaves as false.
 */
import type { FilterNode } from '../../datastore/filters.js';
import type { CkanVersion, FieldInfo, JsonValue, Row } from '../../datastore/types.js';
import { canonicalText, typeReading } from '../../datastore/values.js';
import { DatastoreError, validationError } from '../../errors.js';
import { generate } from '../../datastore/generate.js';
import { readExpression } from './row-shape.js';

/** A test of one field's value (`undefined` for a missing key). */
export type ValueTest = (value: JsonValue | null | undefined) => boolean;

/** The filter tree with its leaves made into tests: what a scan runs. */
export type Condition =
  | { readonly op: 'and' | 'or'; readonly of: readonly Condition[] }
  | {
      readonly op: 'test';
      readonly field: string;
      readonly test: ValueTest;
      /** for equality: the wanted strings and numbers, which the scan compares inline (the test decides other values) */
      readonly equals?: { readonly strings: readonly string[]; readonly numbers: readonly number[] };
      /** with `equals`: the test holds for a string or number that is none of them (`notEqualsCondition`) */
      readonly negated?: true;
    };

/**
 * The condition of a filter tree over these fields: unknown fields and values
 * a comparison cannot read are Validation Errors on `filters` (as CKAN words
 * them for `version`).
 * @example
 * conditionOf({ op: 'gte', field: 'year', value: '2020' }, fieldById)
 * // → { op: 'test', field: 'year', test: (v) => v >= 2020 }
 */
export function conditionOf(node: FilterNode, fieldById: ReadonlyMap<string, FieldInfo>, version: CkanVersion = '2.11'): Condition {
  // a leaf (most filters) names one field: no list of names to make
  const unknown = 'field' in node ? (fieldById.has(node.field) ? [] : [node.field]) : [...new Set(fieldsOf(node))].filter((f) => !fieldById.has(f));
  if (unknown.length > 0) {
    if (version === '2.12') {
      // 2.12 reports every unknown field together (docs/ckan-2.12-reference.md §1.6, F6)
      const messages = unknown.map((f) => `Unknown field: ${f}`);
      throw new DatastoreError('VALIDATION_ERROR', `filters: ${messages.join(', ')}`, { body: { filters: messages, __type: 'Validation Error' } });
    }
    throw validationError('filters', `invalid value ${JSON.stringify(unknown[0])}`);
  }
  const build = (n: FilterNode): Condition => {
    switch (n.op) {
      case 'and':
      case 'or':
        return { op: n.op, of: n.of.map(build) };
      case 'eq':
      case 'in': {
        const values = n.op === 'in' ? n.values : [n.value];
        return { op: 'test', field: n.field, test: equalsTest(values), equals: wantedKinds(values) };
      }
      case 'gt':
      case 'gte':
      case 'lt':
      case 'lte':
        return { op: 'test', field: n.field, test: compareTest(fieldById.get(n.field) as FieldInfo, n.op, n.value) };
    }
  };
  return build(node);
}

function fieldsOf(node: FilterNode): string[] {
  return 'of' in node ? node.of.flatMap(fieldsOf) : [node.field];
}

// ---------------------------------------------------------------------------
// Equality

/**
 * Equality with any of `values` by canonical text: a string compares with
 * `===`, a number with the numbers whose text is wanted, anything else by
 * its text; null and missing match only a wanted null. `[]` matches nothing.
 * @example
 * equalsTest([2020, null])('2020') // true
 * equalsTest([2020, null])(undefined) // true
 */
export function equalsTest(values: readonly JsonValue[]): ValueTest {
  const texts = new Set<string>();
  let matchesNull = false;
  for (const v of values) {
    const text = canonicalText(v);
    if (text === null) matchesNull = true;
    else texts.add(text);
  }
  // the numbers whose canonical text is wanted (`1e21` is no number's text: String(1e21) is "1e+21")
  const numbers = new Set<number>();
  for (const t of texts) if (canonicalText(Number(t)) === t) numbers.add(Number(t));
  const other = (v: unknown): boolean => (v === null || v === undefined ? matchesNull : texts.has(canonicalText(v) as string));
  if (texts.size === 1 && !matchesNull) {
    const [text] = texts as Set<string>;
    return (v) => (typeof v === 'string' ? v === text : typeof v === 'number' ? numbers.has(v) : other(v));
  }
  return (v) => (typeof v === 'string' ? texts.has(v) : typeof v === 'number' ? numbers.has(v) : other(v));
}

/**
 * The test "equal to none of `values`" of a field, for a value that is not
 * null: `f != v`, and the falsity of `f = v` and `f in (…)` under SQL's
 * three-valued logic (a null is neither, except that nothing is in `()`).
 * Strings and numbers are compared inline by the scan, as for equality.
 * @example
 * notEqualsCondition('status', ['withdrawn']) // status != withdrawn: true for "active", false for null
 */
export function notEqualsCondition(field: string, values: readonly JsonValue[]): Condition {
  const equal = equalsTest(values);
  const empty = values.length === 0;
  return {
    op: 'test',
    field,
    test: (v) => (v === null || v === undefined ? empty : !equal(v)),
    equals: wantedKinds(values.filter((v) => v !== null)),
    negated: true,
  };
}

/** The strings and numbers whose canonical texts `values` want: what a string or number value must be to match. */
function wantedKinds(values: readonly JsonValue[]): { strings: string[]; numbers: number[] } {
  if (values.length === 1) {
    // `field = value`, the common case, without the lists and the set below
    const text = canonicalText(values[0] as JsonValue);
    if (text === null) return { strings: [], numbers: [] };
    return { strings: [text], numbers: canonicalText(Number(text)) === text ? [Number(text)] : [] };
  }
  const strings = [...new Set(values.map((v) => canonicalText(v)).filter((t): t is string => t !== null))];
  const numbers = strings.filter((t) => canonicalText(Number(t)) === t).map(Number);
  return { strings, numbers };
}

/**
 * The engine's own copy of a string, as property names are kept: a string
 * sliced from the query text compares slowly with `===` on every row, an
 * internalized one as fast as a literal in a hand-written loop.
 */
function internalize(text: string): string {
  return Object.keys({ [text]: 0 })[0] ?? text;
}

// ---------------------------------------------------------------------------
// Comparisons

type Order = 'gt' | 'gte' | 'lt' | 'lte';

/**
 * A comparison of the field's value with `value`, both read as the field's
 * type (`typeReading`); null on either side is unknown (false). A value that
 * cannot be read as the type (`year > "abc"`), or a type without an order
 * (json, arrays), is a Validation Error naming the field and the value
 * (`refuse` words it otherwise).
 * @example
 * compareTest({ id: 'on', type: 'date' }, 'gte', '2020-01-01')('2020-01-01T00:00:00') // true
 */
export function compareTest(field: FieldInfo, op: Order, value: JsonValue, refuse: (field: FieldInfo, value: JsonValue, ordered: boolean) => Error = refuseComparison): ValueTest {
  if (value === null) return () => false;
  const reading = typeReading(field.type);
  const bound = reading === undefined || typeof value === 'object' ? undefined : reading.read(value);
  if (reading === undefined || bound === undefined) throw refuse(field, value, reading !== undefined);
  const compare = reading.compare;
  const read = reading.read;
  const holds = { gt: (c: number) => c > 0, gte: (c: number) => c >= 0, lt: (c: number) => c < 0, lte: (c: number) => c <= 0 }[op];
  return (v) => {
    if (v === null || v === undefined) return false;
    const x = read(v);
    return x !== undefined && holds(compare(x, bound));
  };
}

/** The Validation Error of a comparison whose value the field cannot hold, as a request's filters word it. */
function refuseComparison(field: FieldInfo, value: JsonValue, ordered: boolean): Error {
  const why = ordered ? `it is not a valid ${field.type}` : `a ${field.type} field has no order`;
  return validationError('filters', `invalid value ${JSON.stringify(value)} for field ${JSON.stringify(field.id)}: ${why}`);
}

// ---------------------------------------------------------------------------
// The scan

/**
 * The rows that pass among `candidates` (ascending positions) or all rows
 * when null: the positions of the first `keep` (ascending), and how many
 * pass in all. An unsorted page needs only its own rows: keeping no more
 * spares the allocations (and the garbage collections they bring) of a
 * list of every match. With `stop` the scan ends at the `keep`th match
 * (the total is then that count): a page that needs no total reads no
 * further.
 */
/**
 * Tests the rows (or the `candidates`, positions into them) from position
 * `from` to `to` of that list (the whole list by default), keeping the
 * first `keep` that pass and counting all of them; with `stop`, it ends
 * once it has kept `keep`.
 */
export type Scan = (rows: readonly Row[], candidates: ArrayLike<number> | null, keep?: number, stop?: boolean, from?: number, to?: number) => ScanResult;

export interface ScanResult {
  readonly rows: Int32Array;
  readonly total: number;
}

/**
 * A scan for `condition`: generated code reading each field by its literal
 * name, or closures when code generation is disabled.
 * @example
 * scanFor(conditionOf(dictFilterTree({ status: 'failed' }), fieldById))(rows, null) // Int32Array [3, 17, …]
 */
export function scanFor(condition: Condition): Scan {
  // Wanted values are passed in (`w`), never written into the source: one function serves every
  // query with the same fields and list sizes, and NaN or odd strings need no literal form.
  const tests: ValueTest[] = [];
  const wanted: unknown[] = [];
  const anyOf = (list: readonly unknown[]): string => {
    if (list.length === 0) return 'false';
    // up to four `===` beat hashing; NaN is found only by a Set (SameValueZero)
    if (list.length > 4 || list.some((x) => x !== x)) {
      wanted.push(new Set(list));
      return `w${wanted.length - 1}.has(v)`;
    }
    // a wanted string is internalized here, where a scan will compare it, not for every condition made
    return `(${list.map((x) => `v === w${wanted.push(typeof x === 'string' ? internalize(x) : x) - 1}`).join(' || ')})`;
  };
  const expression = (c: Condition): string => {
    if (c.op === 'test') {
      const k = tests.push(c.test) - 1;
      if (c.equals === undefined) return `t${k}(${readExpression('r', c.field, 'i')})`;
      // a string or number is decided inline; null, booleans and JSON by the test
      const { strings, numbers } = c.equals;
      const not = c.negated === true ? '!' : '';
      return `(typeof (v = ${readExpression('r', c.field, 'i')}) === "string" ? ${not}${anyOf(strings)} : typeof v === "number" ? ${not}${anyOf(numbers)} : t${k}(v))`;
    }
    if (c.of.length === 0) return c.op === 'and' ? 'true' : 'false';
    return `(${c.of.map(expression).join(c.op === 'and' ? ' && ' : ' || ')})`;
  };
  const test = expression(condition);
  const locals = [...tests.map((_, k) => `t${k} = t[${k}]`), ...wanted.map((_, k) => `w${k} = w[${k}]`)].join(', ');
  // One function per source, not a closure per call: V8 keeps its optimized code for the next
  // request (a fresh closure per request ran each first pass unoptimized until on-stack replacement).
  const body = `${locals === '' ? '' : `const ${locals};`}
const n = to - from;
const max = n < keep ? n : keep;
let out = new Int32Array(max < 1024 ? max : 1024);
let k = 0;
let v;
for (let j = from; j < to; j++) {
  const i = c === null ? j : c[j];
  const r = rows[i];
  if (!${test}) continue;
  if (k < max) {
    if (k === out.length) out = grow(out, max);
    out[k] = i;
  }
  k++;
  if (stop && k >= max) break;
}
return { rows: out.subarray(0, k < max ? k : max), total: k };`;
  type Generated = (
    rows: readonly Row[], c: ArrayLike<number> | null, keep: number, stop: boolean, from: number, to: number,
    t: readonly ValueTest[], w: readonly unknown[], grow: typeof growList,
  ) => ScanResult;
  const scan = generate<Generated>(['rows', 'c', 'keep', 'stop', 'from', 'to', 't', 'w', 'grow'], body);
  if (scan !== undefined) {
    return (rows, c, keep = Infinity, stop = false, from = 0, to = c === null ? rows.length : c.length) => scan(rows, c, keep, stop, from, to, tests, wanted, growList);
  }
  const holds = closureTest(condition);
  return (rows, c, keep = Infinity, stop = false, from = 0, to = c === null ? rows.length : c.length) => {
    const n = to - from;
    const max = Math.min(n, keep);
    let out: Int32Array = new Int32Array(Math.min(max, 1024));
    let k = 0;
    for (let j = from; j < to; j++) {
      const i = c === null ? j : (c[j] as number);
      if (!holds(rows[i] as Row, i)) continue;
      if (k < max) {
        if (k === out.length) out = growList(out, max);
        out[k] = i;
      }
      k++;
      if (stop && k >= max) break;
    }
    return { rows: out.subarray(0, Math.min(k, max)), total: k };
  };
}

/** Rows sampled to order the conditions of an `and`, on tables of at least `SAMPLE_MIN_ROWS`. */
const SAMPLE = 64;
const SAMPLE_MIN_ROWS = 8192;

/**
 * The conditions of an `and` in the order that rejects a row soonest for
 * the least work: by the cost of a test over the share of rows it rejects
 * (the classic order of independent filters), the share judged on evenly
 * spaced sample rows (on small tables, where the sample would cost more
 * than it saves, by cost alone); ties keep their order. A test's cost is a
 * read of the value plus a comparison per wanted value (`in` of two strings
 * compares each: when they are longer than V8 keeps as one copy, by their
 * characters), so a selective `in` of long texts does not go before a
 * nearly as selective `=` of a number (BENCHMARKS.md, Evaluate, plain arrays).
 * @example
 * bySelectivity([status = completed, term in (a, b), grade = 5], rows) // [grade = 5, term in (a, b), status = completed]
 */
export function bySelectivity(conditions: readonly Condition[], rows: readonly Row[], scanOf: (c: Condition) => Scan = scanFor): readonly Condition[] {
  const costs = conditions.map(costOf);
  let rejects: readonly number[] = conditions.map(() => 1);
  if (rows.length >= SAMPLE_MIN_ROWS) {
    // each condition's own scan over the sample rows (`scanOf` may give one made before)
    const step = Math.max(1, Math.floor(rows.length / SAMPLE));
    const sample = new Int32Array(Math.ceil(rows.length / step));
    for (let k = 0; k < sample.length; k++) sample[k] = k * step;
    rejects = conditions.map((c) => 1 - scanOf(c)(rows, sample, 0).total / sample.length);
  }
  const rank = (k: number): number => ((rejects[k] as number) === 0 ? Infinity : (costs[k] as number) / (rejects[k] as number));
  return conditions.map((c, k) => ({ c, k, r: rank(k) })).sort((a, b) => a.r - b.r || a.k - b.k).map(({ c }) => c);
}

/** The relative cost of testing a row: one read, and a comparison per wanted value (a set lookup beyond four); a closure's test counts as four. */
function costOf(c: Condition): number {
  if (c.op !== 'test') return c.of.reduce((sum, inner) => sum + costOf(inner), 0);
  if (c.equals === undefined) return 4;
  return 1 + Math.min(4, Math.max(c.equals.strings.length, c.equals.numbers.length, 1));
}

/**
 * A function reading one field of a row as the scan does (own keys only,
 * `_id` falling back to the position; `undefined` for a missing key), with
 * the name as a literal where code can be generated.
 * @example
 * fieldReader('title')({ title: 'Algebra' }, 0) // "Algebra"
 */
export function fieldReader(field: string): (row: Row, i: number) => JsonValue | null | undefined {
  const made = generate<(row: Row, i: number) => JsonValue | null | undefined>(['r', 'i'], `return ${readExpression('r', field, 'i')};`);
  if (made !== undefined) return made;
  if (field === '_id') return (row, i) => row._id ?? i + 1;
  return (row) => (Object.hasOwn(row, field) ? row[field] : undefined);
}

function closureTest(c: Condition): (row: Row, i: number) => boolean {
  if (c.op === 'test') {
    const { field, test } = c;
    if (field === '_id') return (row, i) => test(row._id ?? i + 1);
    return (row) => test(Object.hasOwn(row, field) ? row[field] : undefined);
  }
  const parts = c.of.map(closureTest);
  return c.op === 'and' ? (row, i) => parts.every((p) => p(row, i)) : (row, i) => parts.some((p) => p(row, i));
}

/**
 * A larger copy of a full list of positions (at most `max`): lists start
 * small and grow fourfold, so a selective scan never allocates for every row.
 * @example
 * growList(new Int32Array(1024), 1e6).length // 4096
 */
export function growList(list: Int32Array, max: number): Int32Array {
  const bigger = new Int32Array(Math.min(max, Math.max(1024, list.length * 4)));
  bigger.set(list);
  return bigger;
}

/**
 * fast-check arbitraries for ckql: ASTs (to be printed with `format`),
 * query texts and their mutations, datastore_search requests, and tables
 * with mixed types, nulls, unicode, field names that need quoting and values
 * spelled like keywords. Shared by the properties, the HTTP tests and the
 * benchmarks.
 *
 * Generated ASTs have the shape the parser gives: zero-width spans (compare
 * them with `stripSpans`), no `-0` (the parser reads it as `0`), `and`/`or`
 * groups of two or more conditions (a group of one is that condition).
 */
import fc from 'fast-check';
import type {
  Aggregate, Between, Compare, CompareOperator, Condition, Equals, Expression, Field, FieldSearch, FunctionName, In, IsNull, Like, Limit,
  Literal, Offset, Or, Order, Parameter, Query, Qualify, Search, Select, SelectItem, SortKey, StringValue, Value, Where, Window, WindowCall,
} from '../../src/ast.js';
import { plainSelect } from '../../src/ast.js';
import type { Params } from '../../src/compile/bind.js';
import type { JsonValue, Row, Scalar } from '../../src/datastore/types.js';

const span = { start: 0, end: 0 } as const;

/**
 * How many runs a property makes: `CKQL_PROPERTY_RUNS` (default 400; raise it for a deep run,
 * e.g. 5000). The suite's 60 s on two cores leaves the default run a smoke run.
 */
export const propertyRuns = positiveEnv('CKQL_PROPERTY_RUNS', 400);

/** A property's own run count `n` (what it makes at `CKQL_PROPERTY_RUNS=1000`), scaled with `propertyRuns`. */
export function scaledRuns(n: number): number {
  return Math.max(20, Math.round((n * propertyRuns) / 1000));
}
/**
 * Time budget of one property in ms: `CKQL_PROPERTY_TIME_MS` (default 2 000); it stops there and passes.
 * The whole suite has 60 s on two cores, so the default run is a smoke run and a deep run is asked for.
 */
export const propertyTimeMs = positiveEnv('CKQL_PROPERTY_TIME_MS', 2_000);
/** A fixed seed from `CKQL_PROPERTY_SEED` to replay a failure; otherwise fast-check picks one and prints it. */
export const propertySeed = process.env['CKQL_PROPERTY_SEED'] === undefined ? undefined : Number(process.env['CKQL_PROPERTY_SEED']);

function positiveEnv(name: string, fallback: number): number {
  const value = Number(process.env[name]);
  return Number.isFinite(value) && value > 0 ? Math.floor(value) : fallback;
}

/**
 * `fc.assert` parameters with the run count and the time budget: a property
 * interrupted by the budget still passes if no run failed (so CI stays
 * bounded on two shared cores), and a failure prints its seed and
 * counterexample.
 */
export function propertyParameters<T>(runs = propertyRuns): fc.Parameters<T> {
  return {
    numRuns: runs,
    maxSkipsPerRun: 20,
    ...(propertySeed === undefined ? {} : { seed: propertySeed }),
    // The plugin is typed for `unknown` runs; it never looks at the values, so it fits any property.
    plugins: [fc.interruptAfterTimeLimit(propertyTimeMs) as unknown as NonNullable<fc.Parameters<T>['plugins']>[number]],
  };
}

// ---------------------------------------------------------------------------
// Names and values

/** Every keyword of the language (docs/language.md, docs/beyond-the-request.md), soft ones included. */
export const keywords = [
  'from', 'where', 'and', 'or', 'in', 'search', 'select', 'order', 'by', 'asc', 'desc', 'limit', 'offset',
  'true', 'false', 'null', 'not', 'is', 'between', 'like', 'ilike', 'distinct', 'nulls', 'first', 'last', 'language',
] as const;

const mixedCase = (word: string): fc.Arbitrary<string> =>
  fc.array(fc.boolean(), { minLength: word.length, maxLength: word.length })
    .map((upper) => [...word].map((ch, i) => (upper[i] ? ch.toUpperCase() : ch)).join(''));

/** A keyword in any letter case (`from`, `FROM`, `fRoM`). */
export const keywordText: fc.Arbitrary<string> = fc.constantFrom(...keywords).chain(mixedCase);

/** A plain identifier such as a bare field name: ASCII letter or `_`, then letters, digits, `_`. */
export const identifier: fc.Arbitrary<string> = fc.stringMatching(/^[A-Za-z_][A-Za-z0-9_]{0,7}$/);

/** A bareword value: starts with a letter or `_`, then letters, digits, `_ - . :`. */
export const bareword: fc.Arbitrary<string> = fc.stringMatching(/^[A-Za-z_][A-Za-z0-9_.:-]{0,9}$/);

/** Awkward characters for quoting and escaping. */
const awkwardChar = fc.constantFrom(
  '"', "'", '\\', '`', '$', '-', '(', ')', ',', '=', ' ', '\n', '\t', '\r', '\u0000', '\u2028', 'é', 'e\u0301',
  'ﬁ', 'Ｆ', '数', '🎉', '\u{1F600}', 'ß', 'İ', 'a', 'Z', '0', '_', '.', ':', '#', '--', '\ud800', '\udfff',
);

/** Text built from awkward characters, possibly empty. */
export const awkwardText: fc.Arbitrary<string> = fc.array(awkwardChar, { maxLength: 8 }).map((parts) => parts.join(''));

/**
 * Any Unicode scalar value (every code point but the surrogate halves), as
 * fast-check's `unit: 'binary'` draws them, made here. fast-check's own unit,
 * when a string arbitrary is made, maps back every one of its 1,112,064
 * characters to find its usual suspects (`__proto__`, `constructor`, …) in
 * them: about a second of CPU in each test worker. This unit reads a
 * character back by its code point, so the same suspects are found at once.
 */
const SURROGATES = 0xe000 - 0xd800;
export const anyCodePoint: fc.Arbitrary<string> = fc.nat({ max: 0x10ffff - SURROGATES }).map(
  (n) => String.fromCodePoint(n < 0xd800 ? n : n + SURROGATES),
  (value) => {
    const codePoint = typeof value === 'string' ? value.codePointAt(0) : undefined;
    if (codePoint === undefined || String.fromCodePoint(codePoint) !== value || (codePoint >= 0xd800 && codePoint < 0xe000)) throw new Error('not one scalar value');
    return codePoint < 0xd800 ? codePoint : codePoint - SURROGATES;
  },
);

/** Text that looks like something else: numbers, keywords, `null`, UUIDs, padding. */
const lookalikeText: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom('2020', '-3', '2.50', '1e3', '0', '-0', '', ' ', 'null', 'NULL', 'true', 'True', '$x', '--', '`'),
  keywordText,
  fc.uuid(),
  fc.uuid().map((u) => u.toUpperCase()),
);

/** Any text a string value may hold. */
export const textValue: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: bareword },
  { weight: 2, arbitrary: lookalikeText },
  { weight: 2, arbitrary: awkwardText },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 6 }) },
  { weight: 1, arbitrary: fc.string({ unit: anyCodePoint, maxLength: 6 }) },
);

/** A field name: plain, keyword-spelled, or one that needs backticks. Never empty. */
export const fieldName: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: identifier },
  { weight: 1, arbitrary: keywordText },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      '_id', 'school year', 'a`b', '``', 'bük', '数学', '2020', 'x-y', 'a.b', 'a:b', 'say "hi"', "it's", '$p',
      '--x', ' lead', 'trail ', 'a,b', '(x)', '__proto__', 'constructor', 'toString', 'Ω',
    ),
  },
  { weight: 1, arbitrary: awkwardText.filter((s) => s !== '') },
  { weight: 1, arbitrary: fc.string({ unit: anyCodePoint, minLength: 1, maxLength: 5 }) },
);

/** A finite JSON number as the parser could read it (never `-0`). */
export const numberValue: fc.Arbitrary<number> = fc.oneof(
  fc.integer({ min: -1000, max: 3000 }),
  fc.constantFrom(0, 2.5, 2020, 1e21, 1e-7, 0.1, 5e-324, Number.MAX_SAFE_INTEGER, 1.7976931348623157e308, -1.5),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
).map((n) => (n === 0 ? 0 : n));

/** A parameter name (`$name` without the `$`). */
export const parameterName: fc.Arbitrary<string> = fc.stringMatching(/^[A-Za-z_][A-Za-z0-9_]{0,6}$/);

// ---------------------------------------------------------------------------
// AST nodes

const field = (name: string): Field => ({ kind: 'field', span, name });
const text = (value: string): StringValue => ({ kind: 'string', span, value });
const param = (name: string): Parameter => ({ kind: 'param', span, name });

/** A literal node: text, number, boolean or null. */
export function literalOf(value: Scalar): Literal {
  if (value === null) return { kind: 'null', span };
  switch (typeof value) {
    case 'string':
      return text(value);
    case 'number':
      return { kind: 'number', span, value: value === 0 ? 0 : value };
    default:
      return { kind: 'boolean', span, value };
  }
}

/** A scalar that a filter or a literal holds. */
export const scalarValue: fc.Arbitrary<Scalar> = fc.oneof(
  { weight: 4, arbitrary: textValue },
  { weight: 2, arbitrary: numberValue },
  { weight: 1, arbitrary: fc.boolean() },
  { weight: 1, arbitrary: fc.constant(null) },
);

export const literal: fc.Arbitrary<Literal> = scalarValue.map(literalOf);

/** Options of the query generator. */
export interface QueryShape {
  /** field names to use; default: any `fieldName` */
  readonly fields?: fc.Arbitrary<string>;
  /** values to compare with; default: any `scalarValue` */
  readonly values?: fc.Arbitrary<Scalar>;
  /** the resource; default: UUIDs, names and awkward texts */
  readonly resource?: fc.Arbitrary<string>;
  /** whether `$parameters` may appear (default true) */
  readonly parameters?: boolean;
  /** `limit` values; default 0…40 000 */
  readonly limits?: fc.Arbitrary<number>;
  /** whether every condition must be expressible as a request (same-field `or`, no `and` in `or`) */
  readonly compilable?: boolean;
  /** search texts; default: any `textValue` */
  readonly texts?: fc.Arbitrary<string>;
  /** `offset` values; default 0…20 */
  readonly offsets?: fc.Arbitrary<number>;
  /** the whole grammar: every test and `not` in where, per-field search, `language`, `distinct`, `nulls first|last` */
  readonly whole?: boolean;
  /** every test and `not` in where, the rest as `compilable` makes it (what a 2.11 portal plus a residual answers) */
  readonly wholeWhere?: boolean;
  /** select items that are windows (`rank() over (partition by … order by …) as r`), and `qualify` over their names */
  readonly windows?: boolean;
  /**
   * select items that compute (docs/expressions.md): `*` beside other items,
   * expressions, and aggregates whose argument is an expression
   * (`sum(price * qty)`), with `group by` keys that may be expressions
   */
  readonly computed?: boolean;
}

/** A window (docs/expressions.md): a window function or an aggregate, over a partition and an order of fields. */
export function windowArb(names: fc.Arbitrary<string>): fc.Arbitrary<Window> {
  const offset = fc.integer({ min: 0, max: 5 }).map((n) => ({ kind: 'number' as const, span, value: n, text: String(n) }));
  const ranking = fc.constantFrom('row_number' as const, 'rank' as const, 'dense_rank' as const).map((fn): WindowCall => ({ kind: 'window-call', span, fn, args: [] }));
  const shifted = fc.tuple(fc.constantFrom('lag' as const, 'lead' as const), names, optional(offset))
    .map(([fn, f, n]): WindowCall => ({ kind: 'window-call', span, fn, args: n === undefined ? [field(f)] : [field(f), n] }));
  const aggregate = fc.oneof(
    fc.constant<Aggregate>({ kind: 'aggregate', span, fn: 'count' }),
    fc.tuple(fc.constantFrom('count' as const, 'sum' as const, 'avg' as const, 'min' as const, 'max' as const), names).map(([fn, f]): Aggregate => ({ kind: 'aggregate', span, fn, field: field(f) })),
  );
  const key = fc.tuple(names, fc.constantFrom('asc' as const, 'desc' as const), optional(fc.constantFrom('first' as const, 'last' as const)))
    .map(([f, direction, nulls]): SortKey => ({ kind: 'sort-key', span, field: field(f), direction, ...(nulls === undefined ? {} : { nulls }) }));
  return fc.record({
    call: fc.oneof(ranking, shifted, aggregate),
    partition: fc.array(names.map(field), { maxLength: 2 }),
    order: fc.array(key, { maxLength: 2 }),
  }).map(({ call, partition, order }): Window => ({ kind: 'window', span, call, partition, order }));
}

/** A number of an expression: its text kept, as the parser keeps it. */
function expressionNumber(value: number): Literal {
  return { kind: 'number', span, value, text: String(value) };
}

/** An expression that reads at least one field (an aggregate's argument must: AGGREGATE_OF_CONSTANT). */
function expressionArb(names: fc.Arbitrary<string>, depth: number): fc.Arbitrary<Expression> {
  const leaf: fc.Arbitrary<Expression> = names.map(field);
  if (depth <= 0) return leaf;
  const any: fc.Arbitrary<Expression> = fc.oneof(
    { weight: 2, arbitrary: leaf },
    { weight: 1, arbitrary: fc.constantFrom(0, 1, 2, 7, 100, 0.5, 2.25).map(expressionNumber) },
  );
  const sub = expressionArb(names, depth - 1);
  return fc.oneof(
    { weight: 3, arbitrary: leaf },
    {
      weight: 2,
      arbitrary: fc.tuple(sub, fc.constantFrom('+' as const, '-' as const, '*' as const, '/' as const, '%' as const, '||' as const), any)
        .map(([left, op, right]): Expression => ({ kind: 'binary', span, op, left, right })),
    },
    {
      weight: 2,
      arbitrary: fc.tuple(fc.constantFrom<FunctionName>('lower', 'upper', 'abs', 'round', 'coalesce', 'length'), sub, any).map(([fn, first, second]): Expression => ({
        kind: 'call', span, fn, args: fn === 'coalesce' || fn === 'round' ? [first, second] : [first],
      })),
    },
  );
}

/** An aggregate: `count(*)`, or of an expression (a field the common case), `count(distinct …)` too. */
function aggregateArb(names: fc.Arbitrary<string>): fc.Arbitrary<Aggregate> {
  return fc.oneof(
    { weight: 1, arbitrary: fc.constant<Aggregate>({ kind: 'aggregate', span, fn: 'count' }) },
    {
      weight: 4,
      arbitrary: fc.tuple(fc.constantFrom('count' as const, 'sum' as const, 'avg' as const, 'min' as const, 'max' as const), expressionArb(names, 2), fc.boolean())
        .map(([fn, argument, distinct]): Aggregate => (fn === 'count' && distinct ? { kind: 'aggregate', span, fn, field: argument, distinct: true } : { kind: 'aggregate', span, fn, field: argument })),
    },
  );
}

/** Computed select items (and group keys): `*` beside expressions, or group keys beside aggregates of expressions. */
function computedArb(names: fc.Arbitrary<string>): fc.Arbitrary<{ readonly items: SelectItem[]; readonly keys?: Expression[] }> {
  const item = (value: Expression | { readonly kind: 'star'; readonly span: typeof span }): SelectItem => ({ kind: 'select-item', span, value });
  const ungrouped = fc.tuple(fc.array(expressionArb(names, 2), { minLength: 1, maxLength: 3 }), fc.nat({ max: 3 }))
    .map(([values, at]) => {
      const items = values.map(item);
      items.splice(Math.min(at, items.length), 0, item({ kind: 'star', span }));
      return { items };
    });
  const grouped = fc.tuple(fc.array(expressionArb(names, 1), { minLength: 1, maxLength: 2 }), fc.array(aggregateArb(names), { minLength: 1, maxLength: 3 }))
    .map(([keys, aggregates]) => ({ items: [...keys, ...aggregates].map(item), keys }));
  return fc.oneof(ungrouped, grouped);
}

function valueNode(shape: QueryShape): fc.Arbitrary<Value> {
  const lit = (shape.values ?? scalarValue).map(literalOf);
  return shape.parameters === false ? lit : fc.oneof({ weight: 5, arbitrary: lit }, { weight: 1, arbitrary: parameterName.map(param) });
}

function eqOn(name: fc.Arbitrary<string>, shape: QueryShape): fc.Arbitrary<Equals> {
  return fc.tuple(name, valueNode(shape)).map(([f, value]): Equals => ({ kind: 'eq', span, field: field(f), value }));
}

function inOn(name: fc.Arbitrary<string>, shape: QueryShape): fc.Arbitrary<In> {
  return fc.tuple(name, fc.array(valueNode(shape), { maxLength: 4 }))
    .map(([f, values]): In => ({ kind: 'in', span, field: field(f), values }));
}

/** An `or` group over one field, as a request can say it (branches `=`, `in` or nested `or`). */
function sameFieldOr(name: string, shape: QueryShape, depth: number): fc.Arbitrary<Or> {
  const one = fc.constant(name);
  const branch: fc.Arbitrary<Condition> =
    depth <= 0
      ? fc.oneof(eqOn(one, shape), inOn(one, shape))
      : fc.oneof({ weight: 3, arbitrary: eqOn(one, shape) }, { weight: 2, arbitrary: inOn(one, shape) }, { weight: 1, arbitrary: sameFieldOr(name, shape, depth - 1) });
  return fc.array(branch, { minLength: 2, maxLength: 3 }).map((conditions): Or => ({ kind: 'or', span, conditions }));
}

const compareOperators: readonly CompareOperator[] = ['ne', 'lt', 'lte', 'gt', 'gte'];

function compareOn(name: fc.Arbitrary<string>, shape: QueryShape): fc.Arbitrary<Compare> {
  return fc.tuple(name, fc.constantFrom(...compareOperators), valueNode(shape))
    .map(([f, op, value]): Compare => ({ kind: 'compare', span, op, field: field(f), value }));
}

function betweenOn(name: fc.Arbitrary<string>, shape: QueryShape): fc.Arbitrary<Between> {
  return fc.tuple(name, valueNode(shape), valueNode(shape))
    .map(([f, low, high]): Between => ({ kind: 'between', span, field: field(f), low, high }));
}

/**
 * Like patterns: pieces of the pool's texts with `%`, `_` and escapes, the
 * characters a regular expression reads as syntax, astral characters and
 * letters whose case folds in context (`Σ`, `İ`).
 */
export const likePattern: fc.Arbitrary<string> = fc
  .array(
    fc.constantFrom(
      '%', '_', '\\%', '\\_', '\\\\', '\\a', 'a', 'A', 'b', 'é', 'ß', '2', '0', ' ', 'true', '数', '-', 'MATH-1', '.', '*', '+', '?',
      '(', ')', '[', ']', '{', '}', '|', '^', '$', '/', '\\-', '🎉', 'Σ', 'σ', 'ς', 'İ', 'i', '"',
    ),
    { maxLength: 5 },
  )
  .map((parts) => parts.join(''));

function likeOn(name: fc.Arbitrary<string>, shape: QueryShape): fc.Arbitrary<Like> {
  const pattern = shape.parameters === false
    ? likePattern.map(text)
    : fc.oneof({ weight: 5, arbitrary: likePattern.map(text) }, { weight: 1, arbitrary: parameterName.map(param) });
  return fc.tuple(name, pattern, fc.boolean())
    .map(([f, p, ignoreCase]): Like => ({ kind: 'like', span, field: field(f), pattern: p, ignoreCase }));
}

function isNullOn(name: fc.Arbitrary<string>): fc.Arbitrary<IsNull> {
  return name.map((f): IsNull => ({ kind: 'is-null', span, field: field(f) }));
}

/**
 * A condition of the whole grammar: every test, `not`, and `and`/`or`
 * groups of two or three members across fields.
 */
export function wholeConditionArb(shape: QueryShape = {}): fc.Arbitrary<Condition> {
  const names = shape.fields ?? fieldName;
  const { condition } = fc.letrec<{ condition: Condition; group: Condition; negated: Condition }>((tie) => ({
    condition: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      eqOn(names, shape),
      inOn(names, shape),
      compareOn(names, shape),
      betweenOn(names, shape),
      likeOn(names, shape),
      isNullOn(names),
      tie('negated'),
      tie('group'),
    ),
    negated: tie('condition').map((inner): Condition => ({ kind: 'not', span, condition: inner })),
    group: fc.tuple(fc.constantFrom('and' as const, 'or' as const), fc.array(tie('condition'), { minLength: 2, maxLength: 3 }))
      .map(([kind, conditions]): Condition => ({ kind, span, conditions })),
  }));
  return condition;
}

/** A condition; with `compilable`, only what a request can express. */
export function conditionArb(shape: QueryShape = {}): fc.Arbitrary<Condition> {
  const names = shape.fields ?? fieldName;
  if (shape.compilable) {
    const leaf = (depth: number): fc.Arbitrary<Condition> =>
      fc.oneof(
        { weight: 4, arbitrary: eqOn(names, shape) },
        { weight: 3, arbitrary: inOn(names, shape) },
        { weight: 2, arbitrary: names.chain((f) => sameFieldOr(f, shape, 1)) },
        ...(depth > 0
          ? [{ weight: 1, arbitrary: fc.array(leaf(depth - 1), { minLength: 2, maxLength: 3 }).map((conditions): Condition => ({ kind: 'and', span, conditions })) }]
          : []),
      );
    return leaf(2);
  }
  const { condition } = fc.letrec<{ condition: Condition; group: Condition }>((tie) => ({
    condition: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      eqOn(names, shape),
      inOn(names, shape),
      tie('group'),
    ),
    group: fc.tuple(fc.constantFrom('and' as const, 'or' as const), fc.array(tie('condition'), { minLength: 2, maxLength: 3 }))
      .map(([kind, conditions]): Condition => ({ kind, span, conditions })),
  }));
  return condition;
}

/** A resource name: a UUID, an alias, or any text (which `format` quotes). */
export const resourceName: fc.Arbitrary<string> = fc.oneof(
  { weight: 2, arbitrary: fc.uuid() },
  { weight: 2, arbitrary: identifier },
  { weight: 1, arbitrary: bareword },
  { weight: 1, arbitrary: textValue.filter((s) => s !== '') },
);

function optional<T>(arb: fc.Arbitrary<T>, freq = 2): fc.Arbitrary<T | undefined> {
  return fc.option(arb, { nil: undefined, freq });
}

/** A query AST. Clause order does not exist in the AST; `format` prints the canonical order. */
export function queryArb(shape: QueryShape = {}): fc.Arbitrary<Query> {
  const names = shape.fields ?? fieldName;
  const withParams = shape.parameters !== false;
  const orParam = <T extends Value>(arb: fc.Arbitrary<T>): fc.Arbitrary<T | Parameter> =>
    withParams ? fc.oneof({ weight: 5, arbitrary: arb }, { weight: 1, arbitrary: parameterName.map(param) }) : arb;
  const count = (arb: fc.Arbitrary<number>) => orParam(arb.map((value) => ({ kind: 'number' as const, span, value })));
  const whole = shape.whole === true;
  const searchText = orParam((shape.texts ?? textValue).map(text));
  const fieldSearches = fc.array(fc.tuple(names, searchText), { minLength: 1, maxLength: 2 })
    .map((pairs) => pairs.map(([f, t]): FieldSearch => ({ kind: 'field-search', span, field: field(f), text: t })));
  const search: fc.Arbitrary<Search> = whole
    ? fc.tuple(fc.oneof(searchText, fieldSearches), optional(fc.constantFrom('english', 'german', 'simple', 'language', 'x y'), 3))
        .map(([what, language]): Search => ({
          kind: 'search',
          span,
          ...(Array.isArray(what) ? { fields: what } : { text: what }),
          ...(language === undefined ? {} : { language: text(language) }),
        }))
    : searchText.map((t): Search => ({ kind: 'search', span, text: t }));
  const nulls = whole ? optional(fc.constantFrom('first' as const, 'last' as const)) : fc.constant(undefined);
  return fc
    .record({
      resource: orParam((shape.resource ?? resourceName).map(text)),
      where: optional(whole || shape.wholeWhere ? wholeConditionArb(shape) : conditionArb(shape)),
      search: optional(search),
      select: optional(fc.array(names, { minLength: 1, maxLength: 3 })),
      computed: shape.computed === true ? optional(computedArb(names), 5) : fc.constant(undefined),
      distinct: whole ? fc.boolean() : fc.constant(false),
      order: optional(fc.array(fc.tuple(names, fc.constantFrom('asc' as const, 'desc' as const), nulls), { minLength: 1, maxLength: 3 })),
      limit: optional(count(shape.limits ?? fc.integer({ min: 0, max: 40_000 }))),
      offset: optional(count(shape.offsets ?? fc.integer({ min: 0, max: 20 }))),
      windows: shape.windows === true ? fc.array(fc.tuple(windowArb(names), names), { minLength: 1, maxLength: 2 }) : fc.constant(undefined),
      qualify: shape.windows === true ? optional(fc.tuple(fc.constantFrom(...compareOperators), fc.integer({ min: 0, max: 9 })), 1) : fc.constant(undefined),
    })
    .map((parts) => {
      const query: { -readonly [K in keyof Query]: Query[K] } = {
        kind: 'query',
        span,
        from: { kind: 'from', span, resource: parts.resource },
      };
      if (parts.where) query.where = { kind: 'where', span, condition: parts.where } satisfies Where;
      if (parts.search) query.search = parts.search;
      if (parts.select) {
        query.select = plainSelect(parts.select.map(field), span, parts.distinct === true) satisfies Select;
      }
      if (parts.windows !== undefined) {
        const items = parts.windows.map(([value, name]): SelectItem => ({ kind: 'select-item', span, value, as: { kind: 'name', span, name } }));
        query.select = { kind: 'select', span, items: [...(query.select?.items ?? []), ...items], ...(query.select?.distinct === true ? { distinct: true as const } : {}) };
        if (parts.qualify !== undefined) {
          const [op, n] = parts.qualify;
          query.qualify = { kind: 'qualify', span, condition: { kind: 'compare', span, op, field: field(parts.windows[0]![1]), value: { kind: 'number', span, value: n } } } satisfies Qualify;
        }
      }
      if (parts.computed) {
        query.select = { kind: 'select', span, items: parts.computed.items } satisfies Select;
        if (parts.computed.keys !== undefined) query.group = { kind: 'group', span, keys: parts.computed.keys };
      }
      if (parts.order) {
        // Distinct records are ordered only by what they show (DISTINCT_ORDER_NOT_SELECTED): a key not selected is left out.
        const distinct = parts.select !== undefined && parts.distinct === true;
        const order = distinct ? parts.order.filter(([f]) => parts.select!.includes(f)) : parts.order;
        if (order.length > 0) query.order = { kind: 'order', span, keys: order.map(([f, direction, n]): SortKey => ({
          kind: 'sort-key', span, field: field(f), direction, ...(n === undefined ? {} : { nulls: n }),
        })) } satisfies Order;
      }
      if (parts.limit) query.limit = { kind: 'limit', span, value: parts.limit } satisfies Limit;
      if (parts.offset) query.offset = { kind: 'offset', span, value: parts.offset } satisfies Offset;
      return query as Query;
    });
}

/** Every parameter name used in a query AST. */
export function parameterNames(node: unknown, out = new Set<string>()): Set<string> {
  if (Array.isArray(node)) node.forEach((n) => parameterNames(n, out));
  else if (node !== null && typeof node === 'object') {
    if ((node as { kind?: string }).kind === 'param') out.add((node as Parameter).name);
    else Object.values(node).forEach((n) => parameterNames(n, out));
  }
  return out;
}

// ---------------------------------------------------------------------------
// Query texts and their mutations

/** A fragment of query text; joined with spaces they make a "token soup". */
const fragment = fc.oneof(
  keywordText,
  fc.constantFrom('=', '(', ')', ',', '"a b"', "'c'", '`d e`', '$p', '1', '-2.5e3', '1e400', 'x', 'subject', 'math',
    '--c\n', '\n', '5b3f1c0a-9d2e-4f6b-8a1c-2e7d9b0c4f11', '``', '"\\q"', '"\\u12"', '`', '"', "'", '$', '#', ';', 'wher'),
  bareword,
);

/** A mutation of a text: delete a range, insert a character, or cut it short. */
type Mutation =
  | { readonly op: 'delete'; readonly at: number; readonly length: number }
  | { readonly op: 'insert'; readonly at: number; readonly text: string }
  | { readonly op: 'truncate'; readonly at: number };

const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ op: fc.constant('delete' as const), at: fc.nat(), length: fc.integer({ min: 1, max: 6 }) }),
  fc.record({
    op: fc.constant('insert' as const),
    at: fc.nat(),
    text: fc.oneof(fc.constantFrom('"', '(', '`', '$', "'", ')', ',', '\\', '--', '\n', '=', ' or ', ' and ', '-', '\u0301'), fragment),
  }),
  fc.record({ op: fc.constant('truncate' as const), at: fc.nat() }),
);

function mutate(source: string, mutations: readonly Mutation[]): string {
  let out = source;
  for (const m of mutations) {
    const at = out.length === 0 ? 0 : m.at % (out.length + 1);
    if (m.op === 'delete') out = out.slice(0, at) + out.slice(at + m.length);
    else if (m.op === 'insert') out = out.slice(0, at) + m.text + out.slice(at);
    else out = out.slice(0, at);
  }
  return out;
}

/** Valid query texts mutated by one to three deletions, insertions or truncations. */
export function mutatedText(valid: fc.Arbitrary<string>): fc.Arbitrary<string> {
  return fc.tuple(valid, fc.array(mutation, { minLength: 1, maxLength: 3 })).map(([source, ms]) => mutate(source, ms));
}

/** Any text worth throwing at the parser: arbitrary unicode, token soups, deep nesting. */
export const anyText: fc.Arbitrary<string> = fc.oneof(
  fc.string({ unit: anyCodePoint, maxLength: 40 }),
  fc.string({ unit: 'grapheme-ascii', maxLength: 40 }),
  fc.array(fragment, { maxLength: 14 }).map((parts) => parts.join(' ')),
  fc.array(fragment, { maxLength: 12 }).map((parts) => `from x ${parts.join(' ')}`),
  fc.integer({ min: 1, max: 400 }).map((n) => `from x where ${'('.repeat(n)}a = 1${')'.repeat(n)}`),
  fc.integer({ min: 1, max: 400 }).map((n) => `from x where ${'('.repeat(n)}`),
);

// ---------------------------------------------------------------------------
// Requests

/** A filter value: a scalar or a list of scalars (`-0` and duplicates included). */
const filterValue: fc.Arbitrary<Scalar | Scalar[]> = fc.oneof(
  scalarValue,
  fc.constant(-0),
  fc.array(scalarValue, { maxLength: 4 }),
);

function sortItem(name: string, direction: 'asc' | 'desc' | undefined): string {
  const quoted = /^[A-Za-z_][A-Za-z0-9_]*$/.test(name) ? name : `"${name.replaceAll('"', '""')}"`;
  return direction === undefined ? quoted : `${quoted} ${direction}`;
}

/**
 * A valid `datastore_search` request, in the shapes clients send: fields as a
 * list or a comma-separated string, sort as text or a list of items, with or
 * without directions; limit and offset as numbers or decimal strings.
 * Field names are never empty and a comma-separated form only holds names it
 * can carry; `include_total` is left out (a query always asks for the total).
 */
export const requestArb: fc.Arbitrary<Record<string, unknown>> = fc
  .record(
    {
      resource_id: resourceName,
      filters: fc.dictionary(fieldName, filterValue, { maxKeys: 4 }),
      q: textValue,
      fields: fc.uniqueArray(fieldName, { minLength: 1, maxLength: 3 }),
      sort: fc.array(fc.tuple(fieldName, fc.constantFrom('asc' as const, 'desc' as const, undefined)), { minLength: 1, maxLength: 3 }),
      limit: fc.integer({ min: 0, max: 40_000 }),
      offset: fc.integer({ min: 0, max: 500 }),
      shapes: fc.record({ fieldsText: fc.boolean(), sortList: fc.boolean(), countText: fc.boolean() }),
    },
    { requiredKeys: ['resource_id', 'shapes'] },
  )
  .map(({ shapes, ...r }) => {
    const out: Record<string, unknown> = { resource_id: r.resource_id };
    if (r.filters !== undefined) out['filters'] = r.filters;
    if (r.q !== undefined) out['q'] = r.q;
    if (r.fields !== undefined) {
      const plain = r.fields.every((n) => n.trim() === n && !/[,"]/.test(n));
      out['fields'] = shapes.fieldsText && plain ? r.fields.join(', ') : r.fields;
    }
    if (r.sort !== undefined) {
      const items = r.sort.map(([n, d]) => sortItem(n, d));
      out['sort'] = shapes.sortList ? items : items.join(', ');
    }
    if (r.limit !== undefined) out['limit'] = shapes.countText ? String(r.limit) : r.limit;
    if (r.offset !== undefined) out['offset'] = shapes.countText ? String(r.offset) : r.offset;
    return out;
  });

// ---------------------------------------------------------------------------
// Tables

/**
 * Cell values drawn from a small pool, so that generated filters find
 * matches: numbers and their texts, booleans and `"true"`, null and `"null"`,
 * case variants, composed and combining accents, keyword-spelled text, JSON.
 */
export const cellPool: readonly JsonValue[] = [
  0, 1, 2, 3, 2020, '2020', 2.5, '2.5', '2.50', -3, 1e21, true, false, 'true', 'false', null, 'null', '', ' ',
  'a', 'A', 'ab', 'b a', 'b  a', 'B\tA', 'é', 'e\u0301', 'É', 'ﬁ', 'fi', 'Ｆ', '数学', '🎉', 'ß', 'ẞ', 'İ', 'ΑΣ', 'b-c\nd',
  'limit', 'from', 'x" or 1=1', 'a\ud800',
  '5b3f1c0a-9d2e-4f6b-8a1c-2e7d9b0c4f11', { a: 1 }, [1, 'a'], [],
];

/** The scalars of the pool: values a filter can compare with. */
export const poolScalar: fc.Arbitrary<Scalar> = fc.constantFrom(
  ...(cellPool.filter((v) => v === null || typeof v !== 'object') as Scalar[]),
  '{"a":1}', '[1,"a"]',
);

/** A cell: mostly from the pool, sometimes anything. */
export const cellValue: fc.Arbitrary<JsonValue> = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...cellPool) },
  { weight: 1, arbitrary: textValue },
  { weight: 1, arbitrary: numberValue },
);

/** Plain rows over `names`; a key may be missing (it means null). */
export function rowsArb(names: readonly string[], maxRows = 12): fc.Arbitrary<Row[]> {
  const row = fc.array(fc.option(cellValue, { nil: undefined, freq: 6 }), { minLength: names.length, maxLength: names.length })
    .map((cells) => Object.fromEntries(names.flatMap((n, i) => (cells[i] === undefined ? [] : [[n, cells[i]]]))) as Row);
  // Mostly a few rows; sometimes none at all.
  return fc.oneof({ weight: 9, arbitrary: fc.array(row, { minLength: 1, maxLength: maxRows }) }, { weight: 1, arbitrary: fc.constant<Row[]>([]) });
}

/** Field names for a table: unique, never `_id` (every table has it already). */
export const tableFieldNames: fc.Arbitrary<string[]> = fc.uniqueArray(
  fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom('a', 'b', 'c', 'title', 'year', 'school year', 'a`b', 'from', 'bük', '__proto__', 'constructor', 'toString') },
    { weight: 1, arbitrary: fieldName },
  ).filter((n) => n !== '_id'),
  { minLength: 1, maxLength: 4 },
);

/**
 * A table's rows and the field names they use (a name no row has is left
 * out, as a table inferred from the rows would not know it): use with
 * `tableFromRows(rows, { id, alias })`.
 */
export const tableRowsArb: fc.Arbitrary<{ readonly names: string[]; readonly rows: Row[] }> = tableFieldNames.chain((names) =>
  rowsArb(names).map((rows) => ({ names: names.filter((n) => rows.some((r) => Object.hasOwn(r, n))), rows })),
);

/**
 * Search texts likely to match pool cells: pieces of them in other letter
 * cases, compositions and widths, blanks and white space runs — and any text.
 */
export const searchText: fc.Arbitrary<string> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      'a', 'A', 'b a', 'B  A', ' a ', 'é', 'E\u0301', 'É', 'fi', 'FI', 'ﬁ', 'f', 'Ｆ', 'F', '数', '数学', '🎉', 'ss', 'ß',
      'SS', '2.5', '2.50', '2020', '20', '0', 'true', 'TRUE', 'false', 'null', 'limit', 'x" or', '"a":1', '[1,', 'b-c', '',
      '   ', '\n\t', '5b3f1c0a', '\ud800',
    ),
  },
  { weight: 1, arbitrary: textValue },
);

/**
 * A compilable query over a table with these field names: fields mostly from
 * the table (sometimes `_id` or an unknown one), values and search texts from
 * the table's own cells (so filters and search find something) and the pool,
 * no parameters.
 */
export function queryOverTable(
  resource: string,
  names: readonly string[],
  options: { readonly unknownFields?: boolean; readonly rows?: readonly Row[]; readonly wholeWhere?: boolean; readonly whole?: boolean } = {},
): fc.Arbitrary<Query> {
  const known = fc.constantFrom(...names, '_id');
  const fields = options.unknownFields === false ? known : fc.oneof({ weight: 30, arbitrary: known }, { weight: 1, arbitrary: fc.constant('no such field') });
  const cells = (options.rows ?? []).flatMap((row) => Object.values(row)).filter((v) => v !== undefined);
  const scalars = cells.filter((v): v is Scalar => v === null || typeof v !== 'object');
  const texts = cells.map((v) => (typeof v === 'string' ? v : JSON.stringify(v))).filter((t) => t.trim() !== '');
  const values = scalars.length === 0 ? poolScalar : fc.oneof({ weight: 2, arbitrary: fc.constantFrom(...scalars) }, { weight: 1, arbitrary: poolScalar });
  const pieces = texts.length === 0
    ? searchText
    : fc.oneof(
        {
          weight: 2,
          arbitrary: fc.tuple(fc.constantFrom(...texts), fc.nat(), fc.nat(), fc.boolean())
            .map(([t, a, b, upper]) => {
              const piece = t.slice(Math.min(a, b) % (t.length + 1), (Math.max(a, b) % t.length) + 1);
              return upper ? piece.toUpperCase() : piece;
            }),
        },
        { weight: 1, arbitrary: searchText },
      );
  return queryArb({
    fields,
    values,
    resource: fc.constant(resource),
    parameters: false,
    compilable: true,
    ...(options.wholeWhere ? { wholeWhere: true } : {}),
    ...(options.whole ? { whole: true } : {}),
    texts: pieces,
    limits: fc.oneof({ weight: 4, arbitrary: fc.integer({ min: 1, max: 5 }) }, fc.constantFrom(0, 32_000, 40_000)),
    offsets: fc.oneof({ weight: 4, arbitrary: fc.integer({ min: 0, max: 3 }) }, fc.integer({ min: 4, max: 20 })),
  });
}

/** Params that bind every parameter of `query` to a generated value. */
export function paramsFor(query: Query): fc.Arbitrary<Params> {
  const names = [...parameterNames(query)];
  return fc.tuple(...names.map(() => scalarValue)).map((values) => Object.fromEntries(names.map((n, i) => [n, values[i]!])) as Params);
}

// ---------------------------------------------------------------- expressions (docs/expressions.md)

/** A number literal as the lexer reads one in an expression: its text kept (`100` an integer, `100.0` a numeric). */
const numberLiteral: fc.Arbitrary<Expression> = fc
  .constantFrom('0', '1', '2', '3', '7', '100', '-3', '0.5', '2.50', '100.0', '-1.25', '12345678901234567890.5')
  .map((text): Expression => ({ kind: 'number', span, value: Number(text), text }));

/**
 * An expression over `fields` (a field, a literal, arithmetic, `||`, a
 * negation, a cast, `case`, and the functions), as the parser gives it;
 * with `aggregates`, aggregates of fields may stand for fields.
 */
export function computedExpressionArb(fields: readonly string[], options: { readonly aggregates?: boolean } = {}): fc.Arbitrary<Expression> {
  const fieldArb = fc.constantFrom(...fields).map((name): Field => ({ kind: 'field', span, name }));
  const aggregate = fc.oneof(
    fc.constant<Expression>({ kind: 'aggregate', span, fn: 'count' }),
    fc.tuple(fc.constantFrom('sum' as const, 'avg' as const, 'min' as const, 'max' as const, 'count' as const), fieldArb, fc.boolean())
      .map(([fn, f, distinct]): Expression => ({ kind: 'aggregate', span, fn, field: f, ...(fn === 'count' && distinct ? { distinct: true as const } : {}) })),
  );
  const leaf: fc.Arbitrary<Expression> = fc.oneof(
    { weight: 4, arbitrary: options.aggregates === true ? aggregate : fieldArb },
    { weight: 2, arbitrary: numberLiteral },
    { weight: 1, arbitrary: fc.constantFrom('x', 'a b', "it's", 'é:1').map((value): Expression => ({ kind: 'string', span, value })) },
  );
  const { expression } = fc.letrec<{ expression: Expression; computed: Expression }>((tie) => ({
    expression: fc.oneof({ depthSize: 'small', withCrossShrink: true }, leaf, tie('computed')),
    computed: fc.oneof(
      fc.tuple(fc.constantFrom('+' as const, '-' as const, '*' as const, '/' as const, '%' as const, '||' as const), tie('expression'), tie('expression'))
        .map(([op, left, right]): Expression => ({ kind: 'binary', span, op, left, right })),
      tie('expression').map((operand): Expression => ({ kind: 'negate', span, operand })),
      fc.tuple(tie('expression'), fc.constantFrom('numeric' as const, 'int' as const, 'int8' as const, 'float8' as const, 'text' as const), fc.boolean())
        .map(([operand, type, shorthand]): Expression => ({ kind: 'cast', span, operand, type, ...(shorthand ? { shorthand: true as const } : {}) })),
      fc.tuple(fieldArb, fc.constantFrom('gt' as const, 'eq' as const, 'lte' as const), tie('expression'), tie('expression'), fc.option(tie('expression'), { nil: undefined }))
        .map(([f, op, bound, result, otherwise]): Expression => ({
          kind: 'case',
          span,
          whens: [{ kind: 'when', span, condition: { kind: 'comparison', span, op, left: f, right: { kind: 'binary', span, op: '+', left: bound, right: { kind: 'number', span, value: 0, text: '0' } } }, result }],
          ...(otherwise === undefined ? {} : { else: otherwise }),
        })),
      fc.tuple(fc.constantFrom('abs' as const, 'floor' as const, 'ceil' as const, 'lower' as const, 'upper' as const, 'length' as const, 'trim' as const), tie('expression'))
        .map(([fn, arg]): Expression => ({ kind: 'call', span, fn, args: [arg] })),
      fc.tuple(tie('expression'), fc.option(fc.constantFrom('0', '1', '2'), { nil: undefined }))
        .map(([arg, places]): Expression => ({ kind: 'call', span, fn: 'round', args: places === undefined ? [arg] : [arg, { kind: 'number', span, value: Number(places), text: places }] })),
      fc.tuple(fc.constantFrom('coalesce' as const, 'greatest' as const, 'least' as const, 'concat' as const), fc.array(tie('expression'), { minLength: 2, maxLength: 3 }))
        .map(([fn, args]): Expression => ({ kind: 'call', span, fn, args })),
      fc.tuple(tie('expression'), tie('expression')).map(([a, b]): Expression => ({ kind: 'call', span, fn: 'nullif', args: [a, b] })),
      fc.tuple(tie('expression'), fc.constantFrom('1', '2'), fc.option(fc.constantFrom('0', '3'), { nil: undefined }))
        .map(([s, from, count]): Expression => ({ kind: 'call', span, fn: 'substr', args: [s, { kind: 'number', span, value: Number(from), text: from }, ...(count === undefined ? [] : [{ kind: 'number' as const, span, value: Number(count), text: count }])] })),
      fc.tuple(fc.constantFrom('year', 'month', 'day'), fieldArb).map(([unit, d]): Expression => ({ kind: 'call', span, fn: 'date_part', args: [{ kind: 'string', span, value: unit }, d] })),
    ),
  }));
  return expression;
}

/**
 * A query that computes over resource `resource` with `fields`: expressions
 * in select (each named), in where (compared with an expression) and in
 * order by; or grouped by fields, with aggregates in its expressions and a
 * `having`.
 */
export function expressionQueryArb(resource: string, fields: readonly string[]): fc.Arbitrary<Query> {
  const from = { kind: 'from' as const, span, resource: text(resource) };
  const named = (values: readonly Expression[]): Select => ({
    kind: 'select',
    span,
    items: values.map((value, i) => ({ kind: 'select-item' as const, span, value, as: { kind: 'name' as const, span, name: `e${i}` } })),
  });
  const direction = fc.constantFrom('asc' as const, 'desc' as const);
  const limit = fc.integer({ min: 1, max: 20 }).map((value): Limit => ({ kind: 'limit', span, value: { kind: 'number', span, value } }));
  const plain = fc
    .record({
      select: fc.array(computedExpressionArb(fields), { minLength: 1, maxLength: 3 }),
      where: fc.option(fc.tuple(fc.constantFrom('eq' as const, 'ne' as const, 'lt' as const, 'gte' as const), computedExpressionArb(fields), computedExpressionArb(fields)), { nil: undefined }),
      order: fc.option(fc.tuple(computedExpressionArb(fields), direction), { nil: undefined }),
      limit,
    })
    .map(({ select, where, order, limit: l }): Query => ({
      kind: 'query',
      span,
      from,
      select: named(select),
      ...(where === undefined
        ? {}
        : { where: { kind: 'where' as const, span, condition: { kind: 'comparison' as const, span, op: where[0], left: { kind: 'binary' as const, span, op: '+' as const, left: where[1], right: { kind: 'number' as const, span, value: 0, text: '0' } }, right: where[2] } } }),
      ...(order === undefined ? {} : { order: { kind: 'order' as const, span, keys: [{ kind: 'sort-key' as const, span, field: order[0], direction: order[1] }] } }),
      limit: l,
    }));
  const grouped = fc
    .record({
      keys: fc.uniqueArray(fc.constantFrom(...fields), { minLength: 1, maxLength: 2 }),
      values: fc.array(computedExpressionArb(fields, { aggregates: true }), { minLength: 1, maxLength: 2 }),
      having: fc.option(fc.tuple(fc.constantFrom('gt' as const, 'lte' as const), fc.constantFrom(0, 1, 2.5)), { nil: undefined }),
      limit,
    })
    .map(({ keys, values, having, limit: l }): Query => ({
      kind: 'query',
      span,
      from,
      select: named([...keys.map((name): Expression => ({ kind: 'field', span, name })), ...values]),
      group: { kind: 'group', span, keys: keys.map((name): Expression => ({ kind: 'field', span, name })) },
      ...(having === undefined
        ? {}
        : { having: { kind: 'having' as const, span, condition: { kind: 'compare' as const, span, op: having[0], field: { kind: 'aggregate' as const, span, fn: 'count' as const }, value: { kind: 'number' as const, span, value: having[1] } } } }),
      limit: l,
    }));
  return fc.oneof({ weight: 2, arbitrary: plain }, { weight: 1, arbitrary: grouped });
}

/**
 * The typed AST of a ckql query. Readonly data: a discriminated union on
 * `kind`, a half-open span on every node, no methods, never mutated after
 * parsing. Every pass switches on `kind` and ends in `assertNever`.
 *
 * Clause order in the source is not kept: a query has at most one clause of
 * each kind, so `format` prints them in the canonical order and
 * `parse(format(q))` equals `q` up to spans.
 */
import type { Span } from './span.js';

/** A quoted string, a bareword or a UUID: all three are text values. */
export interface StringValue {
  readonly kind: 'string';
  readonly span: Span;
  readonly value: string;
  /** a resource of a union whose `value` the client replaced by its id (a `dataset/resource` name): the name as written, `_resource`'s value */
  readonly written?: string;
}

/** A JSON number. `-0` is read as `0`, so equal queries give equal ASTs. */
export interface NumberValue {
  readonly kind: 'number';
  readonly span: Span;
  readonly value: number;
  /**
   * The literal as written, inside an expression only (docs/expressions.md):
   * its text is its type, as PostgreSQL reads it (`100` an integer, `100.0`
   * a numeric), and a numeric's digits beyond a double's are kept.
   */
  readonly text?: string;
}

export interface BooleanValue {
  readonly kind: 'boolean';
  readonly span: Span;
  readonly value: boolean;
}

export interface NullValue {
  readonly kind: 'null';
  readonly span: Span;
}

/** `$name`: bound by the caller before compiling; a bound value is always data. */
export interface Parameter {
  readonly kind: 'param';
  readonly span: Span;
  readonly name: string;
}

export type Literal = StringValue | NumberValue | BooleanValue | NullValue;
export type Value = Literal | Parameter;

/**
 * A field name, bare (`subject`) or backtick-quoted (`` `school year` ``),
 * and in a query that names more than one resource, qualified by the alias
 * (or name) of the resource it belongs to: `c.subject`, `` c.`school year` ``.
 * A dotted bareword is qualified only when the part before its first `.` is
 * declared in `from` or `join`; otherwise the dot is part of the name.
 */
export interface Field {
  readonly kind: 'field';
  readonly span: Span;
  readonly name: string;
  /** the alias or resource name before the dot, when the field is qualified */
  readonly qualifier?: string;
}

/** A name the query gives: an `as` name of a select item, or the alias of a resource. */
export interface Name {
  readonly kind: 'name';
  readonly span: Span;
  readonly name: string;
}

export type AggregateFunction = 'count' | 'sum' | 'avg' | 'min' | 'max';

/**
 * `count(*)`, `count(f)`, `count(distinct f)`, `sum(f)`, `avg(f)`,
 * `min(f)`, `max(f)`: PostgreSQL's meaning (docs/aggregates.md). The
 * argument may be an expression of the record (`sum(price * qty)`,
 * docs/expressions.md); a field is the common case, which the engines read
 * directly.
 */
export interface Aggregate {
  readonly kind: 'aggregate';
  readonly span: Span;
  readonly fn: AggregateFunction;
  /** the argument: a field, or an expression without aggregates; absent for `count(*)` */
  readonly field?: Expression;
  /** `count(distinct f)` */
  readonly distinct?: true;
}

export type BucketFunction = 'year' | 'month' | 'week' | 'day' | 'bucket';

/**
 * `year(f)`, `month(f)`, `week(f)`, `day(f)`: the start of the period a date
 * or timestamp falls in (`date_trunc`); `bucket(f, w)`: `floor(f / w) * w`.
 */
export interface Bucket {
  readonly kind: 'bucket';
  readonly span: Span;
  readonly fn: BucketFunction;
  readonly field: Field;
  /** the width of `bucket(f, w)`; absent for the date buckets */
  readonly width?: NumberValue;
}

/** What a `having` or `order by` may test or sort by: a field (or an output name), or an aggregate. */
export type Operand = Field | Aggregate;

/**
 * `field = value`. `f = null` means `f is null`: `=` keeps the canonical-text
 * equality of docs/semantics.md, where null equals only null.
 */
export interface Equals<F extends Operand = Field> {
  readonly kind: 'eq';
  readonly span: Span;
  readonly field: F;
  readonly value: Value;
}

/** `field in (v1, v2, …)`; `in ()` is the empty set and matches nothing. */
export interface In<F extends Operand = Field> {
  readonly kind: 'in';
  readonly span: Span;
  readonly field: F;
  readonly values: readonly Value[];
}

/** The ordering comparisons and `!=` (also written `<>`). */
export type CompareOperator = 'ne' | 'lt' | 'lte' | 'gt' | 'gte';

/**
 * `field != value`, `field < value`, …: by the field's type (docs/beyond-the-request.md).
 * A null on either side makes the test unknown, except that `f != null` means `f is not null`.
 */
export interface Compare<F extends Operand = Field> {
  readonly kind: 'compare';
  readonly span: Span;
  readonly op: CompareOperator;
  readonly field: F;
  readonly value: Value;
}

/** `field between low and high`, inclusive; `between 5 and 1` is allowed and matches nothing. */
export interface Between<F extends Operand = Field> {
  readonly kind: 'between';
  readonly span: Span;
  readonly field: F;
  readonly low: Value;
  readonly high: Value;
}

/** `field like "a%"` / `field ilike "a%"`: `%` any run, `_` one character, `\` escapes. */
export interface Like<F extends Operand = Field> {
  readonly kind: 'like';
  readonly span: Span;
  readonly field: F;
  readonly pattern: StringValue | Parameter;
  /** `ilike`: case is ignored (Unicode lower case) */
  readonly ignoreCase: boolean;
}

/** `field is null`; `is not null` is a `Not` around it. */
export interface IsNull<F extends Operand = Field> {
  readonly kind: 'is-null';
  readonly span: Span;
  readonly field: F;
}

/**
 * `not c`. The negated forms `f not in (…)`, `f not like …` and
 * `f is not null` are a `Not` around the positive test, so each has one AST.
 */
export interface Not<F extends Operand = Field> {
  readonly kind: 'not';
  readonly span: Span;
  readonly condition: Condition<F>;
}

/**
 * A parenthesised group of two or more conditions joined by `and`, or the
 * top-level `where a and b`. A group of one condition is that condition.
 */
export interface And<F extends Operand = Field> {
  readonly kind: 'and';
  readonly span: Span;
  readonly conditions: readonly Condition<F>[];
}

/** Two or more conditions joined by `or`: a group, or the whole `where`. */
export interface Or<F extends Operand = Field> {
  readonly kind: 'or';
  readonly span: Span;
  readonly conditions: readonly Condition<F>[];
}

/**
 * A test of records (`where`, whose operands are fields) or of groups
 * (`having`, whose operands are output names, group keys and aggregates).
 */
export type Condition<F extends Operand = Field> =
  | Equals<F> | In<F> | Compare<F> | Between<F> | Like<F> | IsNull<F> | Not<F> | And<F> | Or<F> | Comparison;

/**
 * `from R [as a]`: a UUID, a name (alias), a quoted string or a parameter,
 * and the alias that qualifies its fields in a join. A resource of another
 * source is named `source:resource` (the session resolves it; docs/aggregates.md).
 */
export interface From {
  readonly kind: 'from';
  readonly span: Span;
  readonly resource: StringValue | Parameter;
  /**
   * `from a union b union c`: the resources after the first, read with it
   * as one table (SQL's `UNION ALL`, fields matched by name, `_resource`
   * naming each record's; docs/expressions.md, Unions); absent without union
   */
  readonly union?: readonly (StringValue | Parameter)[];
  readonly alias?: Name;
}

/**
 * The resources a source reads: its resource, then those of its `union`.
 * @example unionMembers(parse('from a union b').from) // → [a, b]
 */
export function unionMembers(from: From): readonly (StringValue | Parameter)[] {
  return from.union === undefined ? [from.resource] : [from.resource, ...from.union];
}

/** Whether any source of a query is a union. */
export function hasUnion(query: Query): boolean {
  return query.from.union !== undefined || (query.joins?.some((join) => join.source.union !== undefined) ?? false);
}

/** `l.f = r.g`: one pair of join keys. */
export interface KeyPair {
  readonly kind: 'key-pair';
  readonly span: Span;
  readonly left: Field;
  readonly right: Field;
}

/** `[left] join R [as] a on a.k = b.k and …`: SQL's inner or left equality join. */
export interface Join {
  readonly kind: 'join';
  readonly span: Span;
  /** `left join`: every record of the left side, with nulls where nothing matches */
  readonly left: boolean;
  readonly source: From;
  readonly on: readonly KeyPair[];
}

/** `where c1 and c2 …`: `condition` is an `And` when there are several. */
export interface Where {
  readonly kind: 'where';
  readonly span: Span;
  readonly condition: Condition;
}

/** `title "linear"` in `search title "linear", code "math"`. */
export interface FieldSearch {
  readonly kind: 'field-search';
  readonly span: Span;
  readonly field: Field;
  readonly text: StringValue | Parameter;
}

/**
 * `search "text"` (any field), or `search title "…", code "…"` (each named
 * field contains its text), with an optional `language german`. A word
 * ending in `*` asks for a prefix match.
 */
export interface Search {
  readonly kind: 'search';
  readonly span: Span;
  /** the text searched in every field; absent when `fields` is given */
  readonly text?: StringValue | Parameter;
  /** per-field search (one or more); absent for a whole-record search */
  readonly fields?: readonly FieldSearch[];
  /** CKAN's text search configuration (`language german`) */
  readonly language?: StringValue;
}

/** One item of `select`: a field, an aggregate, a bucket, an expression or `*`, and the name it is given (`as n`). */
export interface SelectItem {
  readonly kind: 'select-item';
  readonly span: Span;
  readonly value: Expression | Star;
  readonly as?: Name;
}

/** `select a, b`, `select distinct a, b`, `select subject, count(*) as n` */
export interface Select {
  readonly kind: 'select';
  readonly span: Span;
  readonly items: readonly SelectItem[];
  /** present (true) only for `select distinct` */
  readonly distinct?: true;
}

/** `group by a, month(d), n`: a name that is a select item's `as` name stands for that item. */
export interface Group {
  readonly kind: 'group';
  readonly span: Span;
  readonly keys: readonly Expression[];
}

/** `having c1 and c2 …`: tests of the groups, over output names, group keys and aggregates. */
export interface Having {
  readonly kind: 'having';
  readonly span: Span;
  readonly condition: Condition<Operand>;
}

/** A facet's buckets: `by month` (a date unit) or `by 2.5` (a width). */
export interface FacetUnit {
  readonly kind: 'unit';
  readonly span: Span;
  readonly unit: 'year' | 'month' | 'week' | 'day';
}

/** `subject top 20`, `start_date by month`, `credits by 2.5`. */
export interface FacetItem {
  readonly kind: 'facet-item';
  readonly span: Span;
  readonly field: Field;
  readonly by?: FacetUnit | NumberValue;
  /** how many values to give, 1 to 1000; default 30 */
  readonly top?: NumberValue;
}

/** `facet subject top 20, start_date by month`: value counts of the records the query keeps. */
export interface Facet {
  readonly kind: 'facet';
  readonly span: Span;
  readonly items: readonly FacetItem[];
}

export type SortDirection = 'asc' | 'desc';

export interface SortKey {
  readonly kind: 'sort-key';
  readonly span: Span;
  /** a field (or an output name), an aggregate in a grouped query, or an expression */
  readonly field: Expression;
  readonly direction: SortDirection;
  /** `nulls first|last`; absent: nulls last ascending, first descending */
  readonly nulls?: 'first' | 'last';
}

/** `order by a desc, b` */
export interface Order {
  readonly kind: 'order';
  readonly span: Span;
  readonly keys: readonly SortKey[];
}

/** `limit n`: a non-negative integer or a parameter. */
export interface Limit {
  readonly kind: 'limit';
  readonly span: Span;
  readonly value: NumberValue | Parameter;
}

/**
 * `qualify c1 and c2 …`: tests of the rows after the windows are computed
 * (docs/expressions.md), over output names, window expressions and the
 * values a row of the answer has.
 */
export interface Qualify {
  readonly kind: 'qualify';
  readonly span: Span;
  readonly condition: Condition<Operand>;
}

/** `offset n`: a non-negative integer or a parameter. */
export interface Offset {
  readonly kind: 'offset';
  readonly span: Span;
  readonly value: NumberValue | Parameter;
}

export type Clause = Where | Search | Select | Group | Having | Qualify | Facet | Order | Limit | Offset;

export interface Query {
  readonly kind: 'query';
  readonly span: Span;
  readonly from: From;
  /** the joined resources, in order; absent when there are none */
  readonly joins?: readonly Join[];
  readonly where?: Where;
  readonly search?: Search;
  readonly select?: Select;
  readonly group?: Group;
  readonly having?: Having;
  /** filters the rows after the windows (docs/expressions.md) */
  readonly qualify?: Qualify;
  readonly facet?: Facet;
  readonly order?: Order;
  readonly limit?: Limit;
  readonly offset?: Offset;
}

export type Node =
  | Query | Clause | From | Join | KeyPair | Condition<Operand> | Value | Field | Name | Aggregate | Bucket | SelectItem
  | SortKey | FieldSearch | FacetItem | FacetUnit | Computed | When | Star | Window | WindowCall;

/** A select item that is a field as it stands: no aggregate, no bucket, no new name. */
export interface PlainItem extends SelectItem {
  readonly value: Field;
  readonly as?: undefined;
}

export interface PlainSortKey extends SortKey {
  readonly field: Field;
}

export interface PlainSelect extends Select {
  readonly items: readonly PlainItem[];
}

export interface PlainOrder extends Order {
  readonly keys: readonly PlainSortKey[];
}

/**
 * A query of one resource whose `select` lists fields as they stand and
 * whose `order by` names fields (a qualifier can only name that resource):
 * what one `datastore_search` request (and a
 * plan with a residual `where`) says. Anything else (a join, a group, a
 * facet, a new name) is answered by the aggregate path (docs/aggregates.md).
 */
export interface PlainQuery extends Query {
  readonly joins?: undefined;
  readonly select?: PlainSelect;
  readonly group?: undefined;
  readonly having?: undefined;
  readonly qualify?: undefined;
  readonly facet?: undefined;
  readonly order?: PlainOrder;
}

/** Whether a query is a `PlainQuery`. */
export function isPlainQuery(query: Query): query is PlainQuery {
  return (
    query.joins === undefined &&
    query.from.union === undefined &&
    query.group === undefined &&
    query.having === undefined &&
    query.qualify === undefined &&
    query.facet === undefined &&
    (query.select === undefined || query.select.items.every((item) => item.value.kind === 'field' && item.as === undefined)) &&
    (query.order === undefined || query.order.keys.every((key) => key.field.kind === 'field')) &&
    !hasComparison(query.where?.condition)
  );
}

/** Whether a condition compares expressions anywhere (a test no filter says). */
export function hasComparison(condition: Condition<Operand> | undefined): boolean {
  if (condition === undefined) return false;
  switch (condition.kind) {
    case 'comparison':
      return true;
    case 'not':
      return hasComparison(condition.condition);
    case 'and':
    case 'or':
      return condition.conditions.some(hasComparison);
    default:
      return false;
  }
}

/**
 * The field names a plain `select` lists, each once, in order.
 * @example selectedNames(parse('from t select a, b, a').select) // → ['a', 'b']
 */
export function selectedNames(select: PlainQuery['select']): string[] | undefined {
  return select === undefined ? undefined : [...new Set(select.items.map((item) => item.value.name))];
}

/**
 * A `select` of fields as they stand (what a request's `fields` says).
 * @example plainSelect([field], span) // select a
 */
export function plainSelect(fields: readonly Field[], span: Span, distinct = false): PlainSelect {
  const items = fields.map((value): PlainItem => ({ kind: 'select-item', span: value.span, value }));
  return distinct ? { kind: 'select', span, items, distinct: true } : { kind: 'select', span, items };
}

/** A query's sources in order: `from`'s, then each join's. */
export function querySources(query: Query): From[] {
  return [query.from, ...(query.joins ?? []).map((join) => join.source)];
}

/**
 * The resources a query reads, as written: `from`'s, then each join's (a parameter not yet bound is left out).
 * @example queryResources(parse('from enrolments e join courses c on e.course = c.code')) // → ['enrolments', 'courses']
 */
export function queryResources(query: Query): string[] {
  return [...new Set(querySources(query).flatMap((source) => unionMembers(source).flatMap((resource) => (resource.kind === 'string' ? [resource.value] : []))))];
}

// ---------------------------------------------------------------- expressions (docs/expressions.md)

/** `+ - * / %` and `||` (text). */
export type BinaryOperator = '+' | '-' | '*' | '/' | '%' | '||';

/** `a + b`, `price * qty`, `name || ' ' || code`: PostgreSQL's meaning and types. */
export interface Binary {
  readonly kind: 'binary';
  readonly span: Span;
  readonly op: BinaryOperator;
  readonly left: Expression;
  readonly right: Expression;
}

/** `-x` (a number literal's own sign is part of the literal: `-3`). */
export interface Negate {
  readonly kind: 'negate';
  readonly span: Span;
  readonly operand: Expression;
}

/** The closed list of functions (docs/expressions.md), each on CKAN's default `datastore_search_sql` allow-list. */
export type FunctionName =
  | 'round' | 'abs' | 'floor' | 'ceil' | 'lower' | 'upper' | 'length' | 'trim' | 'substr' | 'concat' | 'coalesce' | 'nullif'
  | 'greatest' | 'least' | 'date_part' | 'date_trunc';

/** `round(avg(grade), 1)`, `coalesce(a, b)`; `extract(year from d)` is `date_part('year', d)`. */
export interface Call {
  readonly kind: 'call';
  readonly span: Span;
  readonly fn: FunctionName;
  readonly args: readonly Expression[];
}

/** `when c then r` of a `case`. */
export interface When {
  readonly kind: 'when';
  readonly span: Span;
  readonly condition: Condition<Operand>;
  readonly result: Expression;
}

/** `case when c then r … [else e] end`: the first `when` that holds; else `e`, or null. */
export interface Case {
  readonly kind: 'case';
  readonly span: Span;
  readonly whens: readonly When[];
  readonly else?: Expression;
}

/** The types a value may be cast to: PostgreSQL's names (`int` is `int4`). */
export type CastType = 'text' | 'int' | 'int4' | 'int8' | 'numeric' | 'float8' | 'bool' | 'date' | 'timestamp';

/** `cast(x as numeric)`, or `x::numeric` (`shorthand`). */
export interface Cast {
  readonly kind: 'cast';
  readonly span: Span;
  readonly operand: Expression;
  readonly type: CastType;
  /** written `x::type` */
  readonly shorthand?: true;
}

/** What an expression computes beyond a field, an aggregate, a bucket or a value. */
export type Computed = Binary | Negate | Call | Case | Cast;

/** The window functions that are no aggregate (docs/expressions.md): each is called with `over`. */
export type WindowFunctionName = 'row_number' | 'rank' | 'dense_rank' | 'lag' | 'lead';

/** `row_number()`, `lag(x [, n])`: the call of a window function, only ever inside a `Window`. */
export interface WindowCall {
  readonly kind: 'window-call';
  readonly span: Span;
  readonly fn: WindowFunctionName;
  readonly args: readonly Expression[];
}

/**
 * `row_number() over (partition by s order by g desc)`, `sum(x) over (…)`:
 * a value of each row computed over the rows of its partition, in the
 * window's order (PostgreSQL's meaning: an aggregate with `order by` is the
 * running aggregate up to the row and its ties). Computed after `where`,
 * `group by` and `having`, before `qualify`, `order by` and `limit`. The
 * aggregate is the `Aggregate` node as it stands.
 */
export interface Window {
  readonly kind: 'window';
  readonly span: Span;
  readonly call: WindowCall | Aggregate;
  readonly partition: readonly Expression[];
  readonly order: readonly SortKey[];
}

/** A value of a record (or of a group): a field, a literal, a parameter, an aggregate, a bucket, a window, or a computation of them. */
export type Expression = Field | Literal | Parameter | Aggregate | Bucket | Window | Computed;

/** The comparison operators between expressions. */
export type ComparisonOperator = 'eq' | CompareOperator;

/**
 * `price * qty > 100`, `lower(name) = 'math'`: a comparison of two
 * expressions, PostgreSQL's (a null on either side makes it unknown). A
 * comparison of a field with a value keeps its own node (`Equals`, `Compare`).
 */
export interface Comparison {
  readonly kind: 'comparison';
  readonly span: Span;
  readonly op: ComparisonOperator;
  readonly left: Expression;
  readonly right: Expression;
}

/** `*` of `select *, price * qty as total`: every field of the source, in its order. */
export interface Star {
  readonly kind: 'star';
  readonly span: Span;
}

/** Whether an expression is a computation (not a field, value, aggregate or bucket as they stand). */
export function isComputed(expression: Expression | Star): expression is Computed {
  switch (expression.kind) {
    case 'binary':
    case 'negate':
    case 'call':
    case 'case':
    case 'cast':
      return true;
    default:
      return false;
  }
}

/** Ends every switch over a union: a new kind breaks the build until handled. */
export function assertNever(value: never, what = 'node'): never {
  throw new Error(`unhandled ${what}: ${JSON.stringify(value)}`);
}

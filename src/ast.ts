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
}

/** A JSON number. `-0` is read as `0`, so equal queries give equal ASTs. */
export interface NumberValue {
  readonly kind: 'number';
  readonly span: Span;
  readonly value: number;
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

/** A field name, bare (`subject`) or backtick-quoted (`` `school year` ``). */
export interface Field {
  readonly kind: 'field';
  readonly span: Span;
  readonly name: string;
}

/**
 * `field = value`. `f = null` means `f is null`: `=` keeps the canonical-text
 * equality of docs/semantics.md, where null equals only null.
 */
export interface Equals {
  readonly kind: 'eq';
  readonly span: Span;
  readonly field: Field;
  readonly value: Value;
}

/** `field in (v1, v2, …)`; `in ()` is the empty set and matches nothing. */
export interface In {
  readonly kind: 'in';
  readonly span: Span;
  readonly field: Field;
  readonly values: readonly Value[];
}

/** The ordering comparisons and `!=` (also written `<>`). */
export type CompareOperator = 'ne' | 'lt' | 'lte' | 'gt' | 'gte';

/**
 * `field != value`, `field < value`, …: by the field's type (docs/beyond-the-request.md).
 * A null on either side makes the test unknown, except that `f != null` means `f is not null`.
 */
export interface Compare {
  readonly kind: 'compare';
  readonly span: Span;
  readonly op: CompareOperator;
  readonly field: Field;
  readonly value: Value;
}

/** `field between low and high`, inclusive; `between 5 and 1` is allowed and matches nothing. */
export interface Between {
  readonly kind: 'between';
  readonly span: Span;
  readonly field: Field;
  readonly low: Value;
  readonly high: Value;
}

/** `field like "a%"` / `field ilike "a%"`: `%` any run, `_` one character, `\` escapes. */
export interface Like {
  readonly kind: 'like';
  readonly span: Span;
  readonly field: Field;
  readonly pattern: StringValue | Parameter;
  /** `ilike`: case is ignored (Unicode lower case) */
  readonly ignoreCase: boolean;
}

/** `field is null`; `is not null` is a `Not` around it. */
export interface IsNull {
  readonly kind: 'is-null';
  readonly span: Span;
  readonly field: Field;
}

/**
 * `not c`. The negated forms `f not in (…)`, `f not like …` and
 * `f is not null` are a `Not` around the positive test, so each has one AST.
 */
export interface Not {
  readonly kind: 'not';
  readonly span: Span;
  readonly condition: Condition;
}

/**
 * A parenthesised group of two or more conditions joined by `and`, or the
 * top-level `where a and b`. A group of one condition is that condition.
 */
export interface And {
  readonly kind: 'and';
  readonly span: Span;
  readonly conditions: readonly Condition[];
}

/** Two or more conditions joined by `or`: a group, or the whole `where`. */
export interface Or {
  readonly kind: 'or';
  readonly span: Span;
  readonly conditions: readonly Condition[];
}

export type Condition = Equals | In | Compare | Between | Like | IsNull | Not | And | Or;

/** `from R`: a UUID, a name (alias), a quoted string or a parameter. */
export interface From {
  readonly kind: 'from';
  readonly span: Span;
  readonly resource: StringValue | Parameter;
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

/** `select a, b`, `select distinct a, b` */
export interface Select {
  readonly kind: 'select';
  readonly span: Span;
  readonly fields: readonly Field[];
  /** present (true) only for `select distinct` */
  readonly distinct?: true;
}

export type SortDirection = 'asc' | 'desc';

export interface SortKey {
  readonly kind: 'sort-key';
  readonly span: Span;
  readonly field: Field;
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

/** `offset n`: a non-negative integer or a parameter. */
export interface Offset {
  readonly kind: 'offset';
  readonly span: Span;
  readonly value: NumberValue | Parameter;
}

export type Clause = Where | Search | Select | Order | Limit | Offset;

export interface Query {
  readonly kind: 'query';
  readonly span: Span;
  readonly from: From;
  readonly where?: Where;
  readonly search?: Search;
  readonly select?: Select;
  readonly order?: Order;
  readonly limit?: Limit;
  readonly offset?: Offset;
}

export type Node = Query | Clause | From | Condition | Value | Field | SortKey | FieldSearch;

/** Ends every switch over a union: a new kind breaks the build until handled. */
export function assertNever(value: never, what = 'node'): never {
  throw new Error(`unhandled ${what}: ${JSON.stringify(value)}`);
}

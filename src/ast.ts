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

/** `field = value` */
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

/**
 * A parenthesised group of two or more conditions joined by `and`, or the
 * top-level `where a and b`. A group of one condition is that condition.
 */
export interface And {
  readonly kind: 'and';
  readonly span: Span;
  readonly conditions: readonly Condition[];
}

/** A parenthesised group of two or more conditions joined by `or`. */
export interface Or {
  readonly kind: 'or';
  readonly span: Span;
  readonly conditions: readonly Condition[];
}

export type Condition = Equals | In | And | Or;

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

/** `search "text"` */
export interface Search {
  readonly kind: 'search';
  readonly span: Span;
  readonly text: StringValue | Parameter;
}

/** `select a, b` */
export interface Select {
  readonly kind: 'select';
  readonly span: Span;
  readonly fields: readonly Field[];
}

export type SortDirection = 'asc' | 'desc';

export interface SortKey {
  readonly kind: 'sort-key';
  readonly span: Span;
  readonly field: Field;
  readonly direction: SortDirection;
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

export type Node = Query | Clause | From | Condition | Value | Field | SortKey;

/** Ends every switch over a union: a new kind breaks the build until handled. */
export function assertNever(value: never, what = 'node'): never {
  throw new Error(`unhandled ${what}: ${JSON.stringify(value)}`);
}

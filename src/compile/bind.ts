/**
 * Binding: replaces `$name` parameters by literal values before compiling.
 *
 * A bound value only ever becomes a literal node of the AST; it never goes
 * back through the lexer, so no value can change the shape of the query.
 */
import { mapConditionLeaves, mapLeaves, type Leaf } from '../syntax/expressions.js';
import type {
  Condition, Expression, From, In, Limit, Literal, NumberValue, Offset, Parameter, Query, Search, StringValue, Value, Where,
} from '../ast.js';
import { assertNever } from '../ast.js';
import { queryError } from '../errors.js';
import type { QueryError } from '../errors.js';
import { describeValue } from './parameters.js';
import { formatField } from '../format.js';

/** One scalar, or a list of scalars that spreads into `in (…)`. */
export type ParamValue = string | number | boolean | null | readonly (string | number | boolean | null)[];

/** Parameter values by name, without the `$`. */
export type Params = Readonly<Record<string, ParamValue>>;

type ScalarParam = string | number | boolean | null;

const SCALAR = 'a single string, number, boolean or null';

/**
 * Replaces each `$name` parameter that `params` binds by a literal node with
 * the parameter's span, wherever it stands: a value, `from`, `search`,
 * `limit` or `offset`. The value is always data, never syntax: binding
 * `x" or 1=1` to `$s` compares with exactly that text.
 *
 * - A list (array) bound to a parameter inside `in (…)` spreads into the list:
 *   `f in ($xs)` with `xs: [1, 2]` is `f in (1, 2)`, and `xs: []` is `f in ()`.
 *   Anywhere else a list is an `INVALID_PARAMETER` error.
 * - `from` and `search` take a string (`from` a non-empty one); `limit` and
 *   `offset` a whole number of 0 or more. A value of another type is an
 *   `INVALID_PARAMETER` error naming the parameter and what it must be.
 * - Numbers must be finite; `-0` becomes `0` (as the parser reads it).
 * - A parameter that `params` does not bind (no own key, or `undefined`) is
 *   left in place, so binding can happen in steps; `compile` reports what is
 *   still unbound. Keys of `params` that the query does not use are ignored.
 *
 * Returns a new query; the given one is not changed.
 *
 * @example
 * const query = bind(parse('from courses where subject = $s and year in ($ys) limit $n'),
 *   { s: 'x" or 1=1', ys: [2020, 2021], n: 5 });
 * compile(query);
 * // → { resource_id: "courses",
 * //     filters: { subject: "x\" or 1=1", year: [2020, 2021] }, limit: 5 }
 */
export function bind(query: Query, params: Params): Query {
  return new Binder(params).query(query);
}

class Binder {
  constructor(private readonly params: Params) {}

  query(query: Query): Query {
    const bound: { -readonly [K in keyof Query]: Query[K] } = { ...query, from: this.from(query.from) };
    if (query.joins !== undefined) bound.joins = query.joins.map((join) => ({ ...join, source: this.from(join.source) }));
    if (query.where !== undefined) bound.where = this.where(query.where);
    if (query.search !== undefined) bound.search = this.search(query.search);
    if (query.limit !== undefined) bound.limit = this.count(query.limit);
    if (query.offset !== undefined) bound.offset = this.count(query.offset);
    // the parameters of expressions (docs/expressions.md), bound as values where they stand
    if (query.select !== undefined) bound.select = { ...query.select, items: query.select.items.map((item) => (item.value.kind === 'star' ? item : { ...item, value: this.expression(item.value) })) };
    if (query.group !== undefined) bound.group = { ...query.group, keys: query.group.keys.map((key) => this.expression(key)) };
    if (query.having !== undefined) bound.having = { ...query.having, condition: mapConditionLeaves(query.having.condition, (leaf) => this.leaf(leaf)) };
    if (query.order !== undefined) bound.order = { ...query.order, keys: query.order.keys.map((key) => ({ ...key, field: this.expression(key.field) })) };
    return bound;
  }

  private expression(expression: Expression): Expression {
    return mapLeaves(expression, (leaf) => this.leaf(leaf));
  }

  /** A parameter of an expression as the literal it is bound to; a number keeps its text, which is its type. */
  private leaf(leaf: Leaf): Expression {
    // an aggregate's argument is an expression too (sum(price * $rate))
    if (leaf.kind === 'aggregate' && leaf.field !== undefined) return { ...leaf, field: this.expression(leaf.field) };
    if (leaf.kind !== 'param') return leaf;
    const value = this.lookup(leaf);
    if (value === undefined) return leaf;
    const node = literalNode(leaf, checkScalar(leaf, value));
    return node.kind === 'number' ? { ...node, text: String(node.value) } : node;
  }

  private from(from: From): From {
    const resource = this.resource(from.resource);
    // a union's resources each (`from a union $b`)
    return from.union === undefined ? { ...from, resource } : { ...from, resource, union: from.union.map((member) => this.resource(member)) };
  }

  private resource(resource: From['resource']): From['resource'] {
    if (resource.kind !== 'param') return resource;
    const value = this.lookup(resource);
    if (value === undefined) return resource;
    if (typeof value !== 'string' || value === '') {
      throw invalid(resource, 'a non-empty string (a resource id or name)', value);
    }
    return stringNode(resource, value);
  }

  private search(search: Search): Search {
    const bound: { -readonly [K in keyof Search]: Search[K] } = { ...search };
    if (search.text !== undefined) bound.text = this.searchText(search.text);
    if (search.fields !== undefined) bound.fields = search.fields.map((f) => ({ ...f, text: this.searchText(f.text) }));
    return bound;
  }

  private searchText(text: StringValue | Parameter): StringValue | Parameter {
    if (text.kind !== 'param') return text;
    const value = this.lookup(text);
    if (value === undefined) return text;
    if (typeof value !== 'string') throw invalid(text, 'a string (the text to search for)', value);
    return stringNode(text, value);
  }

  private count<C extends Limit | Offset>(clause: C): C {
    const param = clause.value;
    if (param.kind !== 'param') return clause;
    const value = this.lookup(param);
    if (value === undefined) return clause;
    if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
      throw invalid(param, `a whole number of 0 or more (the ${clause.kind})`, value);
    }
    const node: NumberValue = { kind: 'number', span: param.span, value: value === 0 ? 0 : value };
    return { ...clause, value: node };
  }

  private where(where: Where): Where {
    return { ...where, condition: this.condition(where.condition) };
  }

  private condition(condition: Condition): Condition {
    switch (condition.kind) {
      case 'eq':
      case 'compare':
        return { ...condition, value: this.value(condition.value, condition.field.name) };
      case 'in':
        return { ...condition, values: this.list(condition) };
      case 'between':
        return {
          ...condition,
          low: this.value(condition.low, condition.field.name),
          high: this.value(condition.high, condition.field.name),
        };
      case 'like': {
        const pattern = condition.pattern;
        if (pattern.kind !== 'param') return condition;
        const value = this.lookup(pattern);
        if (value === undefined) return condition;
        if (typeof value !== 'string') throw invalid(pattern, 'a string (the pattern to match)', value);
        return { ...condition, pattern: stringNode(pattern, value) };
      }
      case 'is-null':
        return condition;
      case 'comparison':
        return mapConditionLeaves(condition, (leaf) => this.leaf(leaf));
      case 'not':
        return { ...condition, condition: this.condition(condition.condition) };
      case 'and':
      case 'or':
        return { ...condition, conditions: condition.conditions.map((c) => this.condition(c)) };
      default:
        return assertNever(condition, 'condition');
    }
  }

  /** The values of `in (…)`: a bound list spreads in place of its parameter. */
  private list(condition: In): Value[] {
    return condition.values.flatMap((value): Value[] => {
      if (value.kind !== 'param') return [value];
      const bound = this.lookup(value);
      if (bound === undefined) return [value];
      if (!Array.isArray(bound)) return [literalNode(value, checkScalar(value, bound))];
      return (bound as readonly unknown[]).map((element) =>
        literalNode(value, checkScalar(value, element, 'a list of strings, numbers, booleans or nulls')));
    });
  }

  private value(value: Value, field: string): Value {
    if (value.kind !== 'param') return value;
    const bound = this.lookup(value);
    if (bound === undefined) return value;
    if (Array.isArray(bound)) {
      throw invalid(value, SCALAR, bound, `a list can only be bound where "in" lists values: ${formatField(field)} in ($${value.name})`);
    }
    return literalNode(value, checkScalar(value, bound));
  }

  /** The bound value, or `undefined` when `params` does not bind the name. */
  private lookup(param: Parameter): unknown {
    // Own keys only: `$constructor` must not find Object.prototype.constructor.
    return Object.hasOwn(this.params, param.name) ? this.params[param.name] : undefined;
  }
}

function checkScalar(param: Parameter, value: unknown, expected = SCALAR): ScalarParam {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return value;
  if (typeof value === 'number') {
    if (Number.isFinite(value)) return value;
    throw invalid(param, 'a finite number', value);
  }
  throw invalid(param, expected, value);
}

function literalNode(param: Parameter, value: ScalarParam): Literal {
  const span = param.span;
  if (value === null) return { kind: 'null', span };
  switch (typeof value) {
    case 'string':
      return { kind: 'string', span, value };
    case 'number':
      return { kind: 'number', span, value: value === 0 ? 0 : value };
    case 'boolean':
      return { kind: 'boolean', span, value };
    default:
      return assertNever(value, 'parameter value');
  }
}

function stringNode(param: Parameter, value: string): StringValue {
  return { kind: 'string', span: param.span, value };
}

function invalid(param: Parameter, expected: string, value: unknown, hint?: string): QueryError {
  const found = describeValue(value);
  return queryError('INVALID_PARAMETER', param.span, [param.name, expected, found], {
    expected: [expected],
    found,
    ...(hint === undefined ? {} : { hint }),
  });
}

/**
 * Walks over the AST that several passes share: the values and fields a
 * condition mentions, and the parameters of a query, in source order.
 */
import { assertNever, querySources, unionMembers, type Condition, type Field, type Parameter, type Query, type Value } from '../ast.js';
import { conditionLeaves, expressionLeaves, windowParts, type Leaf } from './expressions.js';

/**
 * Every value node of a condition, depth first (source order); a `like`
 * pattern counts as a value.
 * @example conditionValues(parse('from t where a = 1 and b in (2, $x)').where!.condition) // → [1, 2, $x] as nodes
 */
export function conditionValues(condition: Condition, out: Value[] = []): Value[] {
  switch (condition.kind) {
    case 'eq':
    case 'compare':
      out.push(condition.value);
      return out;
    case 'in':
      for (const value of condition.values) out.push(value);
      return out;
    case 'between':
      out.push(condition.low, condition.high);
      return out;
    case 'like':
      out.push(condition.pattern);
      return out;
    case 'is-null':
      return out;
    case 'comparison':
      for (const leaf of conditionLeaves(condition)) out.push(...leafValues(leaf));
      return out;
    case 'not':
      return conditionValues(condition.condition, out);
    case 'and':
    case 'or':
      for (const member of condition.conditions) conditionValues(member, out);
      return out;
    default:
      return assertNever(condition, 'condition');
  }
}

/**
 * Every field node a condition tests, depth first (source order, repeats kept).
 * @example conditionFieldNodes(parse('from t where a = 1 or not b is null').where!.condition).map((f) => f.name) // → ['a', 'b']
 */
export function conditionFieldNodes(condition: Condition, out: Field[] = []): Field[] {
  switch (condition.kind) {
    case 'eq':
    case 'compare':
    case 'in':
    case 'between':
    case 'like':
    case 'is-null':
      out.push(condition.field);
      return out;
    case 'comparison':
      for (const leaf of conditionLeaves(condition)) {
        if (leaf.kind === 'field') out.push(leaf);
        else if (leaf.kind === 'bucket') out.push(leaf.field);
      }
      return out;
    case 'not':
      return conditionFieldNodes(condition.condition, out);
    case 'and':
    case 'or':
      for (const member of condition.conditions) conditionFieldNodes(member, out);
      return out;
    default:
      return assertNever(condition, 'condition');
  }
}

/**
 * The names of the fields a condition tests, each once, in the order they first appear.
 * @example conditionFields(parse('from t where a = 1 and (b = 2 or a = 3)').where!.condition) // → ['a', 'b']
 */
export function conditionFields(condition: Condition | undefined): string[] {
  if (condition === undefined) return [];
  return [...new Set(conditionFieldNodes(condition).map((f) => f.name))];
}

/**
 * Every parameter node of a query (from, where, search, limit, offset), in source order.
 * @example parametersOf(parse('from $r where a = $x limit $n')).map((p) => p.name) // → ['r', 'x', 'n']
 */
export function parametersOf(query: Query): Parameter[] {
  // every resource: `from`'s (a union's each) and each join's, which stand before the clauses
  const values: Value[] = querySources(query).flatMap(unionMembers);
  if (query.where !== undefined) conditionValues(query.where.condition, values);
  if (query.search !== undefined) {
    if (query.search.text !== undefined) values.push(query.search.text);
    for (const field of query.search.fields ?? []) values.push(field.text);
  }
  // the parameters of expressions: select items, group keys, having, sort keys
  for (const item of query.select?.items ?? []) if (item.value.kind !== 'star') values.push(...expressionValues(item.value));
  for (const key of query.group?.keys ?? []) values.push(...expressionValues(key));
  if (query.having !== undefined) values.push(...conditionLeaves(query.having.condition).flatMap(leafValues));
  if (query.qualify !== undefined) values.push(...conditionLeaves(query.qualify.condition).flatMap(leafValues));
  for (const key of query.order?.keys ?? []) values.push(...expressionValues(key.field));
  if (query.limit !== undefined) values.push(query.limit.value);
  if (query.offset !== undefined) values.push(query.offset.value);
  return values.filter((v): v is Parameter => v.kind === 'param').sort((a, b) => a.span.start - b.span.start);
}

/**
 * The parameter that comes first in the source, if any is left unbound.
 * @example firstParameter(parse('from t where a = $x limit $n'))?.name // → 'x'
 */
export function firstParameter(query: Query): Parameter | undefined {
  return parametersOf(query)[0];
}

/** The values a leaf is or holds: itself when a value, an aggregate's argument's (sum(price * $rate)), a window's (`lag(x, $n)`), else none. */
function leafValues(leaf: Leaf): Value[] {
  switch (leaf.kind) {
    case 'field':
    case 'bucket':
      return [];
    case 'aggregate':
      return leaf.field === undefined ? [] : expressionValues(leaf.field);
    case 'window':
      return windowParts(leaf).flatMap(expressionValues);
    default:
      return [leaf];
  }
}

function expressionValues(expression: Parameters<typeof expressionLeaves>[0]): Value[] {
  return expressionLeaves(expression).flatMap(leafValues);
}

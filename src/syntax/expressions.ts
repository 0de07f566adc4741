/**
 * Walks over expressions (docs/expressions.md) that several passes share:
 * the fields and values an expression reads, and an expression with its
 * leaves replaced.
 */
import { assertNever, isComputed, type Aggregate, type Condition, type Expression, type Field, type Operand, type Query, type Star, type Window } from '../ast.js';
import type { Span } from '../span.js';

/** The leaves an expression reads: fields, values, parameters, aggregates, buckets and windows (a window's insides are its own). */
export type Leaf = Exclude<Expression, { readonly kind: 'binary' | 'negate' | 'call' | 'case' | 'cast' }>;

/**
 * Every leaf of an expression, depth first (source order); a case's
 * conditions give their operands and values too.
 * @example expressionLeaves(parse('from t select a * 2 + b').select!.items[0]!.value).map((l) => l.kind) // → ['field', 'number', 'field']
 */
export function expressionLeaves(expression: Expression, out: Leaf[] = []): Leaf[] {
  switch (expression.kind) {
    case 'field':
    case 'string':
    case 'number':
    case 'boolean':
    case 'null':
    case 'param':
    case 'aggregate':
    case 'bucket':
    case 'window':
      out.push(expression);
      return out;
    case 'binary':
      expressionLeaves(expression.left, out);
      return expressionLeaves(expression.right, out);
    case 'negate':
    case 'cast':
      return expressionLeaves(expression.operand, out);
    case 'call':
      for (const arg of expression.args) expressionLeaves(arg, out);
      return out;
    case 'case':
      for (const when of expression.whens) {
        conditionLeaves(when.condition, out);
        expressionLeaves(when.result, out);
      }
      if (expression.else !== undefined) expressionLeaves(expression.else, out);
      return out;
    default:
      return assertNever(expression, 'expression');
  }
}

/** The leaves of a condition's tests: operands, values and the leaves of compared expressions. */
export function conditionLeaves(condition: Condition<Operand>, out: Leaf[] = []): Leaf[] {
  switch (condition.kind) {
    case 'comparison':
      expressionLeaves(condition.left, out);
      return expressionLeaves(condition.right, out);
    case 'eq':
    case 'compare':
      out.push(condition.field, condition.value);
      return out;
    case 'in':
      out.push(condition.field, ...condition.values);
      return out;
    case 'between':
      out.push(condition.field, condition.low, condition.high);
      return out;
    case 'like':
      out.push(condition.field, condition.pattern);
      return out;
    case 'is-null':
      out.push(condition.field);
      return out;
    case 'not':
      return conditionLeaves(condition.condition, out);
    case 'and':
    case 'or':
      for (const member of condition.conditions) conditionLeaves(member, out);
      return out;
    default:
      return assertNever(condition, 'condition');
  }
}

/** The first aggregate in an expression (a case's conditions included), or undefined. */
export function firstAggregate(expression: Expression): Aggregate | undefined {
  return expressionLeaves(expression).find((leaf): leaf is Aggregate => leaf.kind === 'aggregate');
}

/** The fields an expression reads (inside aggregates and their arguments, buckets and windows too), in source order. */
export function expressionFields(expression: Expression): Field[] {
  return expressionLeaves(expression).flatMap((leaf) => {
    switch (leaf.kind) {
      case 'field':
        return [leaf];
      case 'bucket':
        return [leaf.field];
      case 'aggregate':
        return leaf.field === undefined ? [] : expressionFields(leaf.field);
      case 'window':
        return windowParts(leaf).flatMap(expressionFields);
      default:
        return [];
    }
  });
}

/** What a window reads: its call's arguments (an aggregate as it stands), its partition, its order keys. */
export function windowParts(window: Window): Expression[] {
  const call = window.call.kind === 'aggregate' ? [window.call] : window.call.args;
  return [...call, ...window.partition, ...window.order.map((key) => key.field)];
}

/** The first window of an expression, or undefined. */
export function firstWindow(expression: Expression): Window | undefined {
  return expressionLeaves(expression).find((leaf): leaf is Window => leaf.kind === 'window');
}

/** The first window of a condition's operands and compared expressions, or undefined. */
export function conditionWindow(condition: Condition<Operand> | undefined): Window | undefined {
  if (condition === undefined) return undefined;
  return conditionLeaves(condition).find((leaf): leaf is Window => leaf.kind === 'window');
}

/** Whether a query computes a window anywhere (select, qualify, order by). */
export function hasWindow(query: Query): boolean {
  return (
    (query.select?.items.some((item) => item.value.kind !== 'star' && firstWindow(item.value) !== undefined) ?? false) ||
    conditionWindow(query.qualify?.condition) !== undefined ||
    (query.order?.keys.some((key) => firstWindow(key.field) !== undefined) ?? false)
  );
}

/** An expression with each leaf replaced (a case's conditions by `mapCondition`'s rules: each operand, then each compared expression). */
export function mapLeaves(expression: Expression, map: (leaf: Leaf) => Expression): Expression {
  switch (expression.kind) {
    case 'field':
    case 'string':
    case 'number':
    case 'boolean':
    case 'null':
    case 'param':
    case 'aggregate':
    case 'bucket':
    case 'window':
      return map(expression);
    case 'binary':
      return { ...expression, left: mapLeaves(expression.left, map), right: mapLeaves(expression.right, map) };
    case 'negate':
    case 'cast':
      return { ...expression, operand: mapLeaves(expression.operand, map) };
    case 'call':
      return { ...expression, args: expression.args.map((arg) => mapLeaves(arg, map)) };
    case 'case': {
      const whens = expression.whens.map((when) => ({ ...when, condition: mapConditionLeaves(when.condition, map), result: mapLeaves(when.result, map) }));
      return expression.else === undefined ? { ...expression, whens } : { ...expression, whens, else: mapLeaves(expression.else, map) };
    }
    default:
      return assertNever(expression, 'expression');
  }
}

/** A condition with the leaves of its compared expressions replaced, and each test's operand (which must stay an operand). */
export function mapConditionLeaves<F extends Operand>(condition: Condition<F>, map: (leaf: Leaf) => Expression): Condition<F> {
  switch (condition.kind) {
    case 'comparison':
      return { ...condition, left: mapLeaves(condition.left, map), right: mapLeaves(condition.right, map) };
    case 'eq':
    case 'compare':
    case 'in':
    case 'between':
    case 'like':
    case 'is-null': {
      const field = map(condition.field);
      return field.kind === 'field' || field.kind === 'aggregate' ? ({ ...condition, field } as Condition<F>) : condition;
    }
    case 'not':
      return { ...condition, condition: mapConditionLeaves(condition.condition, map) };
    case 'and':
    case 'or':
      return { ...condition, conditions: condition.conditions.map((c) => mapConditionLeaves(c, map)) };
    default:
      return assertNever(condition, 'condition');
  }
}

/**
 * Where a query first computes (an expression of docs/expressions.md, a
 * comparison of expressions, or `select *`), or undefined: what a plan on a
 * CKAN portal does not compute yet.
 */
export function firstComputation(query: Query): Span | undefined {
  const spans: Span[] = [];
  const visit = (expression: Expression | Star): void => {
    if (expression.kind === 'star' || isComputed(expression)) spans.push(expression.span);
  };
  for (const item of query.select?.items ?? []) visit(item.value);
  for (const key of query.group?.keys ?? []) visit(key);
  for (const key of query.order?.keys ?? []) visit(key.field);
  const conditions = (condition: Condition<Operand> | undefined): void => {
    if (condition === undefined) return;
    if (condition.kind === 'comparison') spans.push(condition.span);
    else if (condition.kind === 'not') conditions(condition.condition);
    else if (condition.kind === 'and' || condition.kind === 'or') condition.conditions.forEach(conditions);
  };
  conditions(query.where?.condition);
  conditions(query.having?.condition);
  return spans.sort((a, b) => a.start - b.start)[0];
}

/** An expression with its direct operands replaced (a case's conditions keep theirs, their compared expressions mapped). */
export function mapChildren(expression: Expression, map: (child: Expression) => Expression): Expression {
  switch (expression.kind) {
    case 'binary':
      return { ...expression, left: map(expression.left), right: map(expression.right) };
    case 'negate':
    case 'cast':
      return { ...expression, operand: map(expression.operand) };
    case 'call':
      return { ...expression, args: expression.args.map(map) };
    case 'case': {
      const whens = expression.whens.map((when) => ({ ...when, condition: mapConditionLeaves(when.condition, map), result: map(when.result) }));
      return expression.else === undefined ? { ...expression, whens } : { ...expression, whens, else: map(expression.else) };
    }
    default:
      return expression;
  }
}

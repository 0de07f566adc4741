/** Internal helpers of the compile stage: finding parameters, and describing values and fields in messages. */
import type { Condition, Parameter, Query, Value } from '../ast.js';
import { assertNever } from '../ast.js';

/** Every parameter node of the query (from, where, search, limit, offset). */
export function parametersOf(query: Query): Parameter[] {
  const found: Parameter[] = [];
  const visit = (value: Value): void => {
    if (value.kind === 'param') found.push(value);
  };
  const visitCondition = (condition: Condition): void => {
    switch (condition.kind) {
      case 'eq':
        return visit(condition.value);
      case 'in':
        return condition.values.forEach(visit);
      case 'and':
      case 'or':
        return condition.conditions.forEach(visitCondition);
      default:
        return assertNever(condition, 'condition');
    }
  };
  visit(query.from.resource);
  if (query.where !== undefined) visitCondition(query.where.condition);
  if (query.search !== undefined) visit(query.search.text);
  if (query.limit !== undefined) visit(query.limit.value);
  if (query.offset !== undefined) visit(query.offset.value);
  return found;
}

/** A field name as a query writes it, for hints: backtick-quoted unless it is a plain name. */
export function fieldText(name: string): string {
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(name) ? name : `\`${name.replaceAll('`', '``')}\``;
}

/** A short description of a wrong value for a message: the value itself when it is small. */
export function describeValue(value: unknown): string {
  if (value === undefined) return 'undefined';
  if (Array.isArray(value)) return `a list (${abbreviate(safeJson(value))})`;
  switch (typeof value) {
    case 'string':
      return `the text ${abbreviate(JSON.stringify(value))}`;
    case 'number':
      return `the number ${String(value)}`;
    case 'boolean':
      return String(value);
    case 'object':
      return value === null ? 'null' : 'an object';
    default:
      return `a ${typeof value}`;
  }
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return '…';
  }
}

function abbreviate(text: string, max = 40): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

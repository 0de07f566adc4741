/**
 * CKAN 2.12's `filters` (docs/ckan-2.12-reference.md §1.2) read into the
 * filter tree: a dict is an AND of its entries, a list of dicts an OR;
 * `$or`/`$and` take lists of dicts; an operator dict (`{"gt": 5, "lt": 9}`)
 * is an AND of comparisons; a list of values is `in`, and a list mixing
 * operator dicts and values is an OR of the comparisons and one `in` of the
 * values; `$$name` is the field `$name`.
 */
import type { ComparisonOperator, FilterNode } from '../../datastore/filters.js';
import type { JsonValue } from '../../datastore/types.js';
import { DatastoreError } from '../../errors.js';

const OPERATORS: ReadonlySet<string> = new Set(['eq', 'gt', 'gte', 'lt', 'lte', 'in']);

/**
 * Parses 2.12 `filters` against the table's field names; undefined for no filter.
 * @example
 * parseFilters212({ num: [{ lte: 1 }, 7] }, new Set(['num']))
 * // → { op: 'and', of: [{ op: 'or', of: [{ op: 'lte', field: 'num', value: 1 }, { op: 'in', field: 'num', values: [7] }] }] }
 */
export function parseFilters212(filters: JsonValue | undefined, fields: ReadonlySet<string>): FilterNode | undefined {
  if (filters === undefined || filters === null || filters === '' || filters === 0 || filters === false) return undefined;
  const errors: string[] = [];
  const isDict = (v: unknown): v is Record<string, JsonValue> => typeof v === 'object' && v !== null && !Array.isArray(v);
  const fail = (message: string): never => {
    throw new DatastoreError('VALIDATION_ERROR', `filters: ${message}`, { body: { __type: 'Validation Error', filters: [message] } });
  };
  if (Array.isArray(filters) ? filters.length === 0 || !filters.every(isDict) : !isDict(filters)) {
    fail('Filters must be defined as a dict or a list of dicts');
  }
  let count = 0;
  const counted = (node: FilterNode): FilterNode => {
    if (++count > 100) fail('Maximum number of filter operations exceeded');
    return node;
  };
  const dict = (d: Record<string, JsonValue>, depth: number): FilterNode => {
    if (depth > 10) fail('Maximum nesting depth for filter operations reached');
    if (Object.keys(d).length >= 100) fail('Maximum number of filter operations exceeded');
    const of: FilterNode[] = [];
    for (const [key, value] of Object.entries(d)) {
      if (key.startsWith('$') && !key.startsWith('$$')) {
        if (key !== '$or' && key !== '$and') {
          errors.push(`Unknown operators (must be one of $or, $and): ${key}`);
          continue;
        }
        if (!Array.isArray(value) || !value.every(isDict)) {
          errors.push(`Filter operations must be defined as a list of dicts: ${JSON.stringify(value)}`);
          continue;
        }
        of.push(counted({ op: key === '$or' ? 'or' : 'and', of: value.map((member) => dict(member, depth + 1)) }));
        continue;
      }
      const field = key.startsWith('$$') ? key.slice(1) : key;
      if (!fields.has(field)) {
        errors.push(`Unknown field: ${field}`);
        continue;
      }
      of.push(fieldValue(field, value));
    }
    return { op: 'and', of };
  };
  const opDict = (field: string, d: Record<string, JsonValue>): FilterNode => {
    const ops = Object.entries(d).map(([op, operand]): FilterNode => {
      if (!OPERATORS.has(op)) fail(`Unknown filter operation: FilterOp(field='${field}', op='${op}', value=${JSON.stringify(operand)})`);
      if (op === 'in') {
        if (!Array.isArray(operand)) fail(`Unknown filter operation: FilterOp(field='${field}', op='in', value=${JSON.stringify(operand)})`);
        return counted({ op: 'in', field, values: operand as JsonValue[] });
      }
      return counted({ op: op as ComparisonOperator, field, value: operand });
    });
    if (ops.length === 0) fail(`the operator dict of ${JSON.stringify(field)} is empty`);
    return ops.length === 1 ? (ops[0] as FilterNode) : counted({ op: 'and', of: ops });
  };
  const fieldValue = (field: string, value: JsonValue): FilterNode => {
    if (isDict(value)) return opDict(field, value);
    if (Array.isArray(value)) {
      const dicts = value.filter(isDict);
      if (dicts.length === 0) return counted({ op: 'in', field, values: value });
      const scalars = value.filter((v) => !isDict(v));
      const of = dicts.map((d) => opDict(field, d));
      if (scalars.length > 0) of.push(counted({ op: 'in', field, values: scalars }));
      return counted({ op: 'or', of });
    }
    return counted({ op: 'eq', field, value });
  };
  const root: FilterNode = Array.isArray(filters)
    ? { op: 'or', of: (filters as Record<string, JsonValue>[]).map((d) => dict(d, 1)) }
    : dict(filters as Record<string, JsonValue>, 0);
  if (errors.length > 0) {
    throw new DatastoreError('VALIDATION_ERROR', `filters: ${errors.join('; ')}`, { body: { __type: 'Validation Error', filters: errors } });
  }
  return root;
}

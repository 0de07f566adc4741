/**
 * The filter tree: what `filters` means once parsed, for every engine.
 * CKAN 2.11's dict (`{"a": 1, "b": [2, 3]}`: an AND of equalities and
 * lists) and CKAN 2.12's operators (`{"year": {"gte": 2020}}`, mixed lists,
 * `$or`/`$and`; docs/ckan-2.12-reference.md §1) both parse to it, so the
 * memory evaluator and the SQL builder each have one thing to answer.
 */
import type { Filters, JsonValue } from './types.js';

/** A comparison of one field with one value (2.12's operators; `eq` is also 2.11's scalar filter). */
export type ComparisonOperator = 'eq' | 'gt' | 'gte' | 'lt' | 'lte';

export type FilterNode =
  /** every child holds (`and` of none is true) / some child holds (`or` of none is false) */
  | { readonly op: 'and' | 'or'; readonly of: readonly FilterNode[] }
  | { readonly op: ComparisonOperator; readonly field: string; readonly value: JsonValue }
  /** the field equals one of the values; an empty list holds for no record */
  | { readonly op: 'in'; readonly field: string; readonly values: readonly JsonValue[] };

/**
 * The tree of a 2.11 filter dict: an `and` of one `eq` (a scalar) or `in`
 * (a list) per key, in key order.
 * @example
 * dictFilterTree({ stage: ['active', 'survey'], subject: 'math' })
 * // → { op: 'and', of: [{ op: 'in', field: 'stage', values: ['active', 'survey'] }, { op: 'eq', field: 'subject', value: 'math' }] }
 */
export function dictFilterTree(filters: Filters): FilterNode {
  const of: FilterNode[] = [];
  for (const field of Object.keys(filters)) {
    const value = filters[field] as JsonValue;
    of.push(Array.isArray(value) ? { op: 'in', field, values: value as readonly JsonValue[] } : { op: 'eq', field, value });
  }
  return { op: 'and', of };
}

/**
 * The text of one `sort` item, as the compiler writes it and `fromRequest`
 * reads it back: `name asc` or `name desc`, the direction always spelled out.
 *
 * A name that is not a plain identifier (ASCII letter or `_`, then letters,
 * digits, `_`) is written in double quotes with each `"` doubled, as
 * PostgreSQL quotes identifiers. CKAN strips one pair of outer quotes from a
 * sort field (docs/ckan-2.11-reference.md §1, `sort`), so
 * names with spaces or non-ASCII letters reach it intact; a name holding a
 * comma cannot be sorted on by CKAN at all (it splits `sort` on commas first).
 */
import type { SortDirection } from '../ast.js';

const PLAIN = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * One sort item with its direction spelled out.
 * @example
 * sortText('year', 'desc')         // 'year desc'
 * sortText('school year', 'asc')   // '"school year" asc'
 */
export function sortText(field: string, direction: SortDirection): string {
  return `${quoteSortField(field)} ${direction}`;
}

/**
 * A field name as a `sort` item writes it.
 * @example
 * quoteSortField('title')       // 'title'
 * quoteSortField('say "hi"')    // '"say ""hi"""'
 */
export function quoteSortField(field: string): string {
  return PLAIN.test(field) ? field : `"${field.replaceAll('"', '""')}"`;
}

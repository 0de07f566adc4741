/**
 * How one record value reads as plain text in CSV and Markdown cells: the
 * canonical text of docs/semantics.md (numbers as `String(n)`, booleans as
 * `true`/`false`, JSON values as JSON text), and nothing for null or missing.
 */
import type { JsonValue } from '../datastore/types.js';
import { stringifyJson } from './safe-text.js';

/**
 * @example cellText(2.5) // "2.5"
 * @example cellText({ a: 1 }) // '{"a":1}'
 * @example cellText(null) // ""
 */
export function cellText(value: JsonValue | undefined): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'number') return Object.is(value, -0) ? '0' : String(value);
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  return stringifyJson(value);
}

/**
 * Records as PostgreSQL writes them, read without losing a number: CKAN
 * hands PostgreSQL's JSON text of the page to the client unchanged, so a
 * `numeric` keeps its written scale (`7.50`) and an `int8` beyond 2^53 every
 * digit (docs/ckan-2.11-reference.md §4, "Value formatting"). `JSON.parse`
 * would round both; here such a value stays its text, which the server
 * writes back as a JSON number unchanged (`src/datastore/response.ts`).
 */
import { parse } from 'lossless-json';
import type { FieldInfo } from '../../datastore/types.js';

/** Types whose values can carry more than a double holds, or a scale. */
const EXACT_TYPES: ReadonlySet<string> = new Set(['int8', 'numeric']);

/**
 * A number's text as the engines keep it: a JavaScript number when that
 * writes back as the same text, else the text itself (`"7.50"`,
 * `"9007199254740993"`).
 * @example
 * exactNumber('7.5')              // → 7.5
 * exactNumber('7.50')             // → "7.50"
 * exactNumber('9007199254740993') // → "9007199254740993"
 */
export function exactNumber(text: string): number | string {
  const n = Number(text);
  return String(n) === text ? n : text;
}

/** A number as read, before it is known whether its column keeps it exact. */
class NumberText {
  constructor(readonly text: string) {}
}

/**
 * The records of PostgreSQL's JSON text (`array_to_json(array_agg(…))`):
 * objects keyed by field id, or lists in `fields` order. Values of `int8`
 * and `numeric` fields keep their exact text where a double would change
 * it; every other number (inside `json` values too) is a plain number, as
 * `JSON.parse` gives it.
 * @example
 * parseRecords('[{"_id":1,"price":7.50}]', [{ id: '_id', type: 'int' }, { id: 'price', type: 'numeric' }], 'objects')
 * // → [{ _id: 1, price: "7.50" }]
 */
export function parseRecords(text: string, fields: readonly FieldInfo[], format: 'objects' | 'lists'): unknown[] {
  if (!fields.some((f) => EXACT_TYPES.has(f.type))) return JSON.parse(text) as unknown[];
  const records = parse(text, null, (number) => new NumberText(number)) as unknown[];
  if (format === 'lists') {
    const exact = fields.map((f) => EXACT_TYPES.has(f.type));
    return records.map((record) => (record as unknown[]).map((value, i) => settle(value, exact[i] === true)));
  }
  const exact = new Set(fields.filter((f) => EXACT_TYPES.has(f.type)).map((f) => f.id));
  // fromEntries defines keys as own properties, so a column named `__proto__` stays a column.
  return records.map((record) => Object.fromEntries(Object.entries(record as Record<string, unknown>).map(([key, value]) => [key, settle(value, exact.has(key))])));
}

function settle(value: unknown, exact: boolean): unknown {
  if (value instanceof NumberText) return exact ? exactNumber(value.text) : Number(value.text);
  if (Array.isArray(value)) return value.map((item) => settle(item, false));
  if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, settle(item, false)]));
  return value;
}

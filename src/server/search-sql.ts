/**
 * `datastore_search_sql` on the server (docs/ckan-2.12-reference.md §4): the
 * paths it answers at, and its `result`. An engine without `searchSql` (the
 * memory engine) answers as a portal with the action disabled: 400
 * `Action name not known`.
 */
import type { SqlResult } from '../engine/types.js';
import type { Route } from './routes.js';
import { isJsonNumber } from '../datastore/response.js';
import { isNumberType } from '../datastore/values.js';

export const SQL_ACTION = 'datastore_search_sql' as const;

/**
 * Paths of `datastore_search_sql`, with and without `/3/` and each language segment.
 * @example
 * sqlRoutes(['de']).has('/de/api/3/action/datastore_search_sql') // → true
 */
export function sqlRoutes(languages: readonly string[]): ReadonlyMap<string, Route> {
  const routes = new Map<string, Route>();
  for (const language of [undefined, ...languages]) {
    for (const prefix of ['/api/action/', '/api/3/action/']) {
      const linkPath = prefix + SQL_ACTION;
      routes.set(language === undefined ? linkPath : `/${language}${linkPath}`, { language, linkPath, action: SQL_ACTION });
    }
  }
  return routes;
}

/**
 * The `result` as CKAN gives it, as JSON text: the request's other keys
 * echoed, `sql` as sent, then `records`, `fields` (and `records_truncated`).
 * A number column's value kept as its text (an `int8` beyond 2^53, a
 * `numeric`'s scale) is written as that JSON number, as CKAN writes
 * Python's int and Decimal.
 * @example
 * sqlResultJson({ sql: 'SELECT 7.50 AS n', records: [{ n: '7.50' }], fields: [{ id: 'n', type: 'numeric' }] }, { sql: 'SELECT 7.50 AS n' })
 * // → '{"sql":"SELECT 7.50 AS n","records":[{"n":7.50}],"fields":[{"id":"n","type":"numeric"}]}'
 */
export function sqlResultJson(result: SqlResult, raw: Readonly<Record<string, unknown>>): string {
  const numbers = new Set(result.fields.filter((f) => isNumberType(f.type)).map((f) => f.id));
  const value = (key: string, v: unknown): string => (numbers.has(key) && typeof v === 'string' && isJsonNumber(v) ? v : (JSON.stringify(v) ?? 'null'));
  const record = (r: Readonly<Record<string, unknown>>): string => `{${Object.entries(r).map(([k, v]) => `${JSON.stringify(k)}:${value(k, v)}`).join(',')}}`;
  const merged: Record<string, unknown> = { ...raw, ...result };
  const parts = Object.entries(merged).map(([k, v]) => `${JSON.stringify(k)}:${k === 'records' ? `[${result.records.map(record).join(',')}]` : (JSON.stringify(v) ?? 'null')}`);
  return `{${parts.join(',')}}`;
}

/**
 * `datastore_search_sql` on the server (docs/ckan-2.12-reference.md §4): the
 * paths it answers at, and its `result`. An engine without `searchSql` (the
 * memory engine) answers as a portal with the action disabled: 400
 * `Action name not known`.
 */
import type { SqlResult } from '../engine/types.js';
import type { Route } from './routes.js';

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
 * The `result` as CKAN gives it: the request's other keys echoed, `sql`
 * as sent, then `records`, `fields` (and `records_truncated`).
 * @example
 * sqlResult({ sql: 'SELECT 1 AS n', records: [{ n: 1 }], fields: [{ id: 'n', type: 'int4' }] }, { sql: 'SELECT 1 AS n' })
 * // → { sql: 'SELECT 1 AS n', records: [{ n: 1 }], fields: [{ id: 'n', type: 'int4' }] }
 */
export function sqlResult(result: SqlResult, raw: Readonly<Record<string, unknown>>): Record<string, unknown> {
  return { ...raw, ...result };
}

/**
 * A request as it travels: the action URL, and the parameters as a JSON body
 * (POST) or a query string (GET). The query string is written the way the
 * local server reads it (`src/server/params.ts`) and the way CKAN reads it:
 * `filters` as JSON text, `fields` comma-separated, `limit` as a decimal.
 */
import type { SearchRequest } from '../datastore/types.js';

/**
 * `<base>[/<language>]/api/action/datastore_search`. The base may carry a
 * path (a portal served under `/data`); a trailing slash is ignored.
 *
 * @example
 * actionUrl(new URL('https://data.example.org/'), 'de')
 * // → "https://data.example.org/de/api/action/datastore_search"
 */
export function actionUrl(base: URL, language: string | undefined): string {
  const path = base.pathname.replace(/\/+$/, '');
  const segment = language === undefined || language === '' ? '' : `/${encodeURIComponent(language)}`;
  return `${base.origin}${path}${segment}/api/action/datastore_search`;
}

/**
 * The query string for a GET, keys in the request's canonical order.
 *
 * - `q` is sent as it is, unless it starts with `"`: then it is sent as JSON
 *   text, because a server reads a JSON string in `q` as the text it encodes.
 * - `fields` is comma-separated; when a name contains a comma, starts with
 *   `[` or `"`, is empty, or has white space at either end, the list is sent as JSON text
 *   (`["a,b","c"]`), which the local server reads as a list.
 *
 * @example
 * queryStringFor({ resource_id: 'courses', filters: { stage: ['a', 'b'] }, limit: 5 })
 * // → "resource_id=courses&filters=%7B%22stage%22%3A%5B%22a%22%2C%22b%22%5D%7D&limit=5"
 */
export function queryStringFor(request: SearchRequest): string {
  const params = new URLSearchParams();
  params.append('resource_id', request.resource_id);
  if (request.filters !== undefined) params.append('filters', JSON.stringify(request.filters));
  if (request.q !== undefined) params.append('q', request.q.startsWith('"') ? JSON.stringify(request.q) : request.q);
  if (request.fields !== undefined) {
    const plain = request.fields.every((name) => !name.includes(',') && name.trim() === name && !name.startsWith('[') && !name.startsWith('"') && name !== '');
    params.append('fields', plain ? request.fields.join(',') : JSON.stringify(request.fields));
  }
  if (request.sort !== undefined) params.append('sort', request.sort);
  if (request.limit !== undefined) params.append('limit', String(request.limit));
  if (request.offset !== undefined) params.append('offset', String(request.offset));
  if (request.include_total !== undefined) params.append('include_total', String(request.include_total));
  return params.toString();
}

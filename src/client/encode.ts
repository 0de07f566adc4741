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
 * The query string for a GET, keys in the request's canonical order. Every
 * request comes back unchanged through the local server's reading
 * (`requestFromQueryString` in `src/server/params.ts`), which a property
 * test checks.
 *
 * - `q` is sent as it is, unless plain text would not arrive as sent: then
 *   it is sent as JSON text (`"…"`, which the server reads as the string it
 *   encodes). That is so when the server would take the text for JSON (it
 *   starts, after white space, with `"` or `{`: `qNeedsJson`) and when it is
 *   not well-formed UTF-16 (a lone surrogate, which percent-encoding turns
 *   into U+FFFD; JSON text spells it `\ud800`).
 * - `fields` is comma-separated; when a name contains a comma, starts with
 *   `[` or `"`, is empty, has white space at either end, or is not
 *   well-formed, the list is sent as JSON text (`["a,b","c"]`), which the
 *   local server reads as a list.
 * - `sort` is sent as it is, unless it is not well-formed or starts with
 *   `[`: then as a JSON list of that one text.
 *
 * @example
 * queryStringFor({ resource_id: 'courses', filters: { stage: ['a', 'b'] }, limit: 5 })
 * // → "resource_id=courses&filters=%7B%22stage%22%3A%5B%22a%22%2C%22b%22%5D%7D&limit=5"
 * queryStringFor({ resource_id: 'courses', q: '{x}' })
 * // → "resource_id=courses&q=%22%7Bx%7D%22"   (q="{x}")
 */
export function queryStringFor(request: SearchRequest): string {
  const params = new URLSearchParams();
  params.append('resource_id', request.resource_id);
  if (request.filters !== undefined) params.append('filters', JSON.stringify(request.filters));
  // A per-field q (an object) goes as its JSON text, as CKAN reads it from a query string.
  if (request.q !== undefined) params.append('q', typeof request.q !== 'string' || qNeedsJson(request.q) ? JSON.stringify(request.q) : request.q);
  if (request.plain !== undefined) params.append('plain', String(request.plain));
  if (request.language !== undefined) params.append('language', request.language);
  if (request.distinct !== undefined) params.append('distinct', String(request.distinct));
  if (request.fields !== undefined) {
    const plain = request.fields.every(
      (name) => name !== '' && !name.includes(',') && name.trim() === name && !name.startsWith('[') && !name.startsWith('"') && isWellFormed(name),
    );
    params.append('fields', plain ? request.fields.join(',') : JSON.stringify(request.fields));
  }
  if (request.sort !== undefined) {
    const plain = !request.sort.startsWith('[') && isWellFormed(request.sort);
    params.append('sort', plain ? request.sort : JSON.stringify([request.sort]));
  }
  if (request.limit !== undefined) params.append('limit', String(request.limit));
  if (request.offset !== undefined) params.append('offset', String(request.offset));
  if (request.include_total !== undefined) params.append('include_total', String(request.include_total));
  if (request.records_format !== undefined) params.append('records_format', request.records_format);
  if (request.include_next_page !== undefined) params.append('include_next_page', String(request.include_next_page));
  return params.toString();
}

/**
 * Whether a GET must send `q` as JSON text for the server to read back the
 * same text: the server reads a `q` that starts (after white space) with `"`
 * or `{` as JSON (`src/server/params.ts`, `readQ`), and percent-encoding
 * cannot carry a lone surrogate.
 *
 * @example
 * qNeedsJson('algebra')      // → false
 * qNeedsJson('"quoted"')     // → true
 * qNeedsJson(' {x}')         // → true
 * qNeedsJson('a\ud800')      // → true
 */
export function qNeedsJson(q: string): boolean {
  return /^\s*["{]/.test(q) || !isWellFormed(q);
}

/** No lone surrogate: in a `u` regex a pair is one code point, so only an unpaired half is `\p{Cs}`. */
function isWellFormed(text: string): boolean {
  return !/\p{Cs}/u.test(text);
}

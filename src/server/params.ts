/**
 * Where a request's parameters come from, as CKAN's API view reads them
 * (docs/ckan-2.11-reference.md §6, "Request data"):
 *
 * 1. a POST with a form body (`application/x-www-form-urlencoded`, what
 *    Recline and `curl -d` send): when the form has exactly one key and its
 *    value is `""` or `"1"`, the key is JSON text of the request; otherwise
 *    the form fields are the parameters;
 * 2. else, when the URL has a query string: the query string, even on a
 *    POST with a JSON body (CKAN ignores the body then);
 * 3. else the JSON body, which must hold an object; a body of another
 *    content type is refused (415), as Flask refuses it for CKAN.
 *
 * A key given more than once becomes a list of its values. The values stay
 * text; the request checks (`validateSearch`) read text as CKAN does.
 */
import { DatastoreError } from '../errors.js';
import type { CkanVersion } from '../datastore/types.js';
import { excerpt } from './errors.js';
import { exceedsDepth } from '../datastore/values.js';

/** Deeper than this, a body cannot be a valid request; refusing early keeps recursive code paths safe. */
export const MAX_BODY_DEPTH = 64;

/**
 * Reads a query string (or a form body) into parameters: repeated keys
 * become a list, blank values stay `""` (CKAN reads `limit=` as the
 * default, `q=` as no search).
 *
 * Two readings go beyond CKAN's, for the ckql client (`queryStringFor` in
 * `src/client/encode.ts`): a `q` that is JSON text of a string is that
 * string (how the client sends a text starting with a quote or a brace), and
 * a `fields` or `sort` that is JSON text of a list of strings is that list
 * (for names holding a comma).
 *
 * Keys are created with `Object.fromEntries`, so `__proto__` in a query
 * string is an ordinary (unknown) key, never the object's prototype.
 *
 * @example
 * requestFromQueryString('resource_id=courses&limit=5&filters=%7B%22stage%22%3A%22active%22%7D')
 * // → { resource_id: "courses", limit: "5", filters: '{"stage":"active"}' }
 */
export function requestFromQueryString(query: string): Record<string, unknown> {
  const values = new Map<string, string[]>();
  for (const [key, value] of new URLSearchParams(query)) {
    const seen = values.get(key);
    if (seen === undefined) values.set(key, [value]);
    else seen.push(value);
  }
  const entries: [string, unknown][] = [];
  for (const [key, list] of values) entries.push([key, list.length > 1 ? list : readQueryValue(key, list[0] as string)]);
  return Object.fromEntries(entries) as Record<string, unknown>;
}

function readQueryValue(key: string, text: string): unknown {
  switch (key) {
    case 'q':
      return readQ(text);
    case 'fields':
    case 'sort':
      return text.startsWith('[') ? jsonStringListOr(text) : text;
    default:
      return text;
  }
}

/**
 * A GET `q`: JSON text of a string when it is one (the client's quoting),
 * of an object (CKAN's per-field search) that object, else the text as given.
 *
 * @example
 * readQ('"\\"quoted\\""') // → '"quoted"'
 * readQ('{"title": "x"}')   // → { title: "x" }
 * readQ('{x}')              // → "{x}"
 */
export function readQ(text: string): unknown {
  const first = text.trimStart().charAt(0);
  if (first !== '"' && first !== '{') return text;
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'string' || (typeof value === 'object' && value !== null && !Array.isArray(value)) ? value : text;
  } catch {
    return text;
  }
}

function jsonStringListOr(text: string): string | string[] {
  try {
    const value: unknown = JSON.parse(text);
    return Array.isArray(value) && value.every((item) => typeof item === 'string') ? value : text;
  } catch {
    return text;
  }
}

/** How a POST body is to be read, from its content type. */
export type BodyKind = 'json' | 'form' | 'unsupported';

/**
 * The kind of a body by its `content-type`: JSON (`application/json`,
 * `…+json`, or none at all), a form, or anything else (CKAN's Flask answers
 * 415 for it, e.g. `text/plain`).
 * @example
 * bodyKind('application/x-www-form-urlencoded; charset=UTF-8') // → "form"
 */
export function bodyKind(contentType: string | undefined): BodyKind {
  // what nearly every client sends, decided without splitting the text
  if (contentType === undefined || contentType === 'application/json') return 'json';
  if (contentType.trim() === '') return 'json';
  const type = (contentType.split(';')[0] ?? '').trim().toLowerCase();
  if (type === 'application/json' || (type.startsWith('application/') && type.endsWith('+json'))) return 'json';
  if (type === 'application/x-www-form-urlencoded') return 'form';
  return 'unsupported';
}

/**
 * The parameters of a form body: one key with the value `""` or `"1"` is
 * JSON text of the request (jQuery's and curl's way of posting JSON without
 * a JSON content type); otherwise the fields, a repeated key as a list.
 * @example
 * requestFromForm('%7B%22resource_id%22%3A%22courses%22%7D=', '2.11') // → { resource_id: "courses" }
 * requestFromForm('resource_id=courses&limit=5', '2.11')             // → { resource_id: "courses", limit: "5" }
 */
export function requestFromForm(body: string, ckan: CkanVersion): Record<string, unknown> {
  const pairs = [...new URLSearchParams(body)];
  const [only] = pairs;
  if (pairs.length === 1 && only !== undefined && (only[1] === '' || only[1] === '1')) return requestFromJson(only[0], ckan);
  return requestFromQueryString(body);
}

/**
 * Reads a JSON body: it must hold an object (a byte-order mark is allowed;
 * an empty body is no parameters). Refusals are CKAN's 400 whose body is a
 * bare JSON string, `"Bad request - JSON Error: …"` (2.12: `"Bad request:
 * JSON Error: …"`). Bodies nested deeper than `MAX_BODY_DEPTH` are refused
 * before any code walks them.
 *
 * @example
 * requestFromJson('{"resource_id": "courses", "q": "algebra"}', '2.11')
 * // → { resource_id: "courses", q: "algebra" }
 */
export function requestFromJson(text: string, ckan: CkanVersion): Record<string, unknown> {
  const json = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  if (json.trim() === '') return {};
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw jsonError(ckan, `Error decoding JSON data. Error: BadRequest('400 Bad Request: Failed to decode JSON object: ${excerpt(reason, 200)}') JSON data extracted from the request: {}`);
  }
  // Nesting deeper than MAX_BODY_DEPTH takes more than that many opening and as many closing brackets,
  // so a shorter text cannot be too deep and needs no walk. Checked first: nothing below (the message's
  // text of an array) may walk a value nested thousands deep.
  if (json.length > 2 * MAX_BODY_DEPTH && typeof value === 'object' && value !== null && exceedsDepth(value, MAX_BODY_DEPTH)) {
    throw jsonError(ckan, `Request data is nested more than ${MAX_BODY_DEPTH} levels deep`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw jsonError(ckan, `Request data JSON decoded to ${excerpt(pythonish(value), 200)} but it needs to be a dictionary.`);
  }
  return value as Record<string, unknown>;
}

/** CKAN's 400 for a body it cannot read: the body is one JSON string, not an envelope. */
export function jsonError(ckan: CkanVersion, detail: string): DatastoreError {
  const text = `${ckan === '2.11' ? 'Bad request - ' : 'Bad request: '}JSON Error: ${detail}`;
  return new DatastoreError('BAD_REQUEST', text, { body: text });
}

function pythonish(value: unknown): string {
  if (value === null) return 'None';
  if (value === true) return 'True';
  if (value === false) return 'False';
  if (typeof value === 'string') return `'${value}'`;
  return JSON.stringify(value) ?? String(value);
}


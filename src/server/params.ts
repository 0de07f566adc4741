/**
 * Where a request's parameters come from: a JSON body (POST) or the query
 * string (GET). Both give a plain object with the request's keys, which the
 * shared request checks (`normalizeRequest`) then validate, so the two
 * methods accept exactly the same requests.
 *
 * The client writes GET query strings with `queryStringFor`
 * (`src/client/encode.ts`); the two are kept inverse by a property test.
 */
import { validationError } from '../errors.js';
import { excerpt, serviceError } from './errors.js';

/** Deeper than this, a body cannot be a valid request; refusing early keeps recursive code paths safe. */
export const MAX_BODY_DEPTH = 64;

/** Keys that may repeat in a query string; they become a list (`fields=a&fields=b`), as in CKAN. */
const LIST_KEYS: ReadonlySet<string> = new Set(['fields', 'sort']);

/**
 * Reads a GET query string into request parameters.
 *
 * - `limit`, `offset` (decimal text), `include_total` (`true/false/1/0/yes/no`)
 *   and `filters` (JSON text, `{"stage":["a","b"]}`) stay text here:
 *   `normalizeRequest` reads text the way GET sends it, and reports what it
 *   cannot read (`Invalid integer`, `Cannot parse JSON`).
 * - `q`: the text as given, or, when it starts (after white space) with `"`
 *   or `{` and is JSON text of a string or an object, that value (`readQ`).
 *   A JSON string is how the client sends a text that itself starts with a
 *   quote or a brace, or holds a lone surrogate (`qNeedsJson` in
 *   `src/client/encode.ts`); an object is how CKAN takes a per-field search
 *   in a GET, which the request checks then refuse, as they do over POST.
 * - `fields` and `sort`: comma-separated text, repeated keys for a list, or a
 *   JSON array of strings (`["a,b","c"]`, for names that hold a comma).
 * - An empty value counts as absent (`limit=` means the default).
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
    if (value === '') continue;
    const seen = values.get(key);
    if (seen === undefined) values.set(key, [value]);
    else seen.push(value);
  }
  const entries: [string, unknown][] = [];
  for (const [key, list] of values) {
    if (list.length > 1 && !LIST_KEYS.has(key)) {
      throw validationError(key, `given ${list.length} times in the query string; give it once`);
    }
    entries.push([key, list.length > 1 ? list : readQueryValue(key, list[0] as string)]);
  }
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
      // limit, offset, include_total and filters stay text: the request checks read text as GET sends it.
      return text;
  }
}

/**
 * A GET `q`: JSON text of a string or an object when it looks like one
 * (CKAN reads a JSON object in `q` as a dict, docs/ckan-2.11-reference.md
 * §6 "Request data"), else the text as given: `{x}` and `"a` are texts.
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

/**
 * Reads a POST body: JSON text that must hold an object. A byte-order mark is
 * allowed. Bodies nested deeper than `MAX_BODY_DEPTH` are refused before any
 * code walks them.
 *
 * @example
 * requestFromBody('{"resource_id": "courses", "q": "algebra"}')
 * // → { resource_id: "courses", q: "algebra" }
 */
export function requestFromBody(text: string): Record<string, unknown> {
  const json = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  if (json.trim() === '') {
    throw serviceError('BAD_REQUEST', 'Bad request: the body is empty; send a JSON object such as {"resource_id": "…"}');
  }
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw serviceError('BAD_REQUEST', `Bad request: the body is not valid JSON (${excerpt(reason, 200)})`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    const found = value === null ? 'null' : Array.isArray(value) ? 'an array' : `a ${typeof value}`;
    throw serviceError('BAD_REQUEST', `Bad request: the body must be a JSON object with "resource_id", found ${found}`);
  }
  // Nesting deeper than MAX_BODY_DEPTH takes more than that many opening and as many closing brackets,
  // so a shorter text cannot be too deep and needs no walk.
  if (json.length > 2 * MAX_BODY_DEPTH && exceedsDepth(value, MAX_BODY_DEPTH)) {
    throw serviceError('BAD_REQUEST', `Bad request: the body is nested more than ${MAX_BODY_DEPTH} levels deep`);
  }
  return value as Record<string, unknown>;
}

/** Iterative, so that a body of a million `[` cannot overflow the stack. */
function exceedsDepth(root: object, max: number): boolean {
  const stack: [unknown, number][] = [[root, 1]];
  while (stack.length > 0) {
    const [value, depth] = stack.pop() as [unknown, number];
    if (typeof value !== 'object' || value === null) continue;
    if (depth > max) return true;
    for (const child of Array.isArray(value) ? value : Object.values(value)) {
      if (typeof child === 'object' && child !== null) stack.push([child, depth + 1]);
    }
  }
  return false;
}

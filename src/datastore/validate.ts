/**
 * Request validation: any `datastore_search` request as a server receives it
 * (a POST body after `JSON.parse`, or the object made from a GET query string)
 * → the canonical `SearchRequest`, or the error the server answers with.
 *
 * Untrusted input: only own properties are read, objects whose keys come
 * from the user are built with `Object.fromEntries` (which defines
 * `__proto__` as a plain key instead of setting a prototype), nothing
 * recurses into user values, and messages never
 * serialize a user value of unbounded size or depth.
 */
import type { Filters, Scalar, SearchRequest } from './types.js';
import { DatastoreError, validationError } from '../errors.js';
import { quoteSortField } from './sort.js';

type SortDirectionName = 'asc' | 'desc';

/**
 * One parsed `sort` item.
 * @example
 * const item: SortItem = { field: 'school year', direction: 'desc' }; // from `"school year" desc`
 */
export interface SortItem {
  readonly field: string;
  readonly direction: SortDirectionName;
}

/**
 * Options of `normalizeRequest`.
 * @example
 * normalizeRequest({ resource_id: 'r', limit: 50000 }, { maxLimit: 32000 }).limit // 32000
 */
export interface NormalizeOptions {
  /**
   * When given, a larger `limit` is capped to it (as the server does). Left
   * out, `limit` is kept as sent and `evaluate` caps it: so that a request
   * normalizes to itself whatever server later runs it.
   */
  readonly maxLimit?: number;
}

const KNOWN_KEYS: ReadonlySet<string> = new Set([
  'resource_id', 'filters', 'q', 'fields', 'sort', 'limit', 'offset', 'include_total',
]);

const TRUE_WORDS: ReadonlySet<string> = new Set(['true', '1', 'yes']);
const FALSE_WORDS: ReadonlySet<string> = new Set(['false', '0', 'no']);

/**
 * Validates a raw request and returns its canonical form: keys in the order
 * `resource_id, filters, q, fields, sort, limit, offset, include_total`, only
 * those that are set, values in one shape:
 *
 * - `filters`: an object (or, as GET sends it, its JSON text) of field →
 *   scalar or list of scalars; `-0` becomes `0`; `{}` is left out.
 * - `q`: a string; empty or all white space is left out (it means no search).
 * - `fields`: a list; a comma-separated string is split and each piece
 *   trimmed (and unquoted when it is wrapped in `"…"`); empty pieces dropped.
 * - `sort`: the string `"a asc, b desc"`, every direction spelled out, from a
 *   string or a list of items (`"a"`, `"b desc"`, `"\"school year\" desc"`);
 *   a name that is not a plain identifier is double-quoted (`""` for `"`).
 * - `limit`, `offset`: whole numbers ≥ 0; a decimal string such as `"10"`
 *   (GET) is read as CKAN reads it. Capped to `options.maxLimit` when given.
 * - `include_total`: a boolean, or `true/false/1/0/yes/no` (GET); `true` is
 *   the default and is left out, so only `false` appears.
 * - `null` (and `""` for `limit`/`offset`/`fields`/`sort`) means "not sent".
 *
 * Throws `DatastoreError`: `BAD_REQUEST` when `raw` is not an object; a 409
 * Validation Error naming the parameter otherwise (CKAN's messages:
 * `Missing value`, `Invalid integer`, `Must be a natural number`,
 * `Cannot parse JSON`, `Not a list`, `invalid value "…"`; an unknown key is
 * reported on `__extras`). Parameters are checked in the key order above;
 * unknown keys last. Unknown *field names* are not checked here: that needs
 * the table, and `evaluate` does it.
 *
 * The result is deeply frozen and recognized by `isCanonicalRequest`, so
 * `evaluate` runs it without validating it a second time.
 *
 * @example
 * normalizeRequest({ limit: '10', resource_id: 'courses', sort: ['year desc', 'title'],
 *                    fields: 'title, year', q: '  ', include_total: 'yes' });
 * // → { resource_id: "courses", fields: ["title", "year"],
 * //     sort: "year desc, title asc", limit: 10 }
 *
 * @example
 * normalizeRequest({ resource_id: 'courses', limit: -1 });
 * // throws DatastoreError VALIDATION_ERROR, body
 * // { __type: "Validation Error", limit: ["Must be a natural number"] }
 */
export function normalizeRequest(raw: unknown, options: NormalizeOptions = {}): SearchRequest {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    const message = `a datastore_search request must be a JSON object, not ${describeType(raw)}`;
    throw new DatastoreError('BAD_REQUEST', message, { body: { __type: 'Bad Request', message } });
  }
  const input = raw as Readonly<Record<string, unknown>>;
  const get = (key: string): unknown => (Object.hasOwn(input, key) ? input[key] : undefined);

  // Keys are set in the canonical order; they are fixed names, so plain assignment is safe (and
  // cheaper than Object.fromEntries, which the filters, whose keys come from the user, still use).
  const request: { -readonly [K in keyof SearchRequest]?: SearchRequest[K] } = { resource_id: resourceId(get('resource_id')) };
  const filters = normalizeFilters(get('filters'));
  if (filters !== undefined) request.filters = filters;
  const q = normalizeQ(get('q'));
  if (q !== undefined) request.q = q;
  const fields = normalizeFields(get('fields'));
  if (fields !== undefined) request.fields = fields;
  const sort = normalizeSort(get('sort'));
  if (sort !== undefined) request.sort = sort;
  let limit = naturalNumber(get('limit'), 'limit');
  if (limit !== undefined) {
    if (options.maxLimit !== undefined && limit > options.maxLimit) limit = options.maxLimit;
    request.limit = limit;
  }
  const offset = naturalNumber(get('offset'), 'offset');
  if (offset !== undefined) request.offset = offset;
  const includeTotal = normalizeBoolean(get('include_total'), 'include_total');
  if (includeTotal === false) request.include_total = false;

  for (const key of Object.keys(input)) {
    if (!KNOWN_KEYS.has(key)) throw validationError('__extras', `invalid value ${quote(key)}`);
  }
  canonical.add(request);
  return Object.freeze(request) as SearchRequest;
}

/** Every request `normalizeRequest` returned: deeply frozen, so each stays canonical for as long as it lives. */
const canonical = new WeakSet<object>();

/**
 * True when `request` is a result of `normalizeRequest` (not merely one that
 * looks canonical): it needs no validation again, and cannot change.
 * @example
 * isCanonicalRequest(normalizeRequest({ resource_id: 'courses' })) // → true
 * isCanonicalRequest({ resource_id: 'courses' })                   // → false
 */
export function isCanonicalRequest(request: unknown): request is SearchRequest {
  return typeof request === 'object' && request !== null && canonical.has(request);
}

function resourceId(value: unknown): string {
  if (value === undefined || value === null || value === '') throw validationError('resource_id', 'Missing value');
  if (typeof value !== 'string') {
    throw validationError('resource_id', `must be a string (a resource id or alias), not ${describeType(value)}`);
  }
  return value;
}

function normalizeFilters(value: unknown): Filters | undefined {
  if (value === undefined || value === null) return undefined;
  let filters = value;
  if (typeof filters === 'string') {
    // GET sends filters as JSON text (docs/semantics.md, HTTP); CKAN's json_validator does the same.
    if (filters.trim() === '') return undefined;
    try {
      filters = JSON.parse(filters);
    } catch {
      throw validationError('filters', 'Cannot parse JSON');
    }
  }
  if (typeof filters !== 'object' || filters === null || Array.isArray(filters)) {
    throw validationError(
      'filters',
      `must be an object of field name → value or list of values, not ${describeType(filters)}`,
    );
  }
  const source = filters as Readonly<Record<string, unknown>>;
  const keys = Object.keys(source);
  if (keys.length === 0) return undefined;
  const entries: [string, Scalar | readonly Scalar[]][] = [];
  for (const field of keys) {
    const v = source[field];
    if (Array.isArray(v)) {
      const list = v as readonly unknown[];
      const out: Scalar[] = new Array<Scalar>(list.length);
      for (let i = 0; i < list.length; i++) out[i] = filterScalar(list[i], field);
      entries.push([field, Object.freeze(out)]);
    } else {
      entries.push([field, filterScalar(v, field)]);
    }
  }
  return Object.freeze(Object.fromEntries(entries)) as Filters;
}

function filterScalar(value: unknown, field: string): Scalar {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return value;
  if (typeof value === 'number' && Number.isFinite(value)) return value === 0 ? 0 : value;
  throw validationError(
    'filters',
    `invalid value ${quote(field)}: a filter value must be a text, number, boolean or null, or a list of them, not ${describeType(value)}`,
  );
}

function normalizeQ(value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') {
    throw validationError('q', `must be a text to search for, not ${describeType(value)}`);
  }
  // All white space (by the same \s that q normalization folds) is no search at all.
  return /^\s*$/.test(value) ? undefined : value;
}

function normalizeFields(value: unknown): readonly string[] | undefined {
  const list = listOfStrings(value, 'fields');
  if (list === undefined) return undefined;
  return list.length === 0 ? undefined : Object.freeze(list);
}

/** A list of strings, or a comma-separated string split into trimmed, unquoted pieces. */
function listOfStrings(value: unknown, param: string): string[] | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'string') {
    const pieces: string[] = [];
    for (const raw of value.split(',')) {
      const piece = raw.trim();
      if (piece === '') continue;
      // CKAN strips one pair of wrapping double quotes from a comma-string piece.
      pieces.push(piece.length >= 2 && piece.startsWith('"') && piece.endsWith('"') ? piece.slice(1, -1) : piece);
    }
    return pieces;
  }
  if (Array.isArray(value)) {
    const list = value as readonly unknown[];
    const out: string[] = new Array<string>(list.length);
    for (let i = 0; i < list.length; i++) {
      const item = list[i];
      if (typeof item !== 'string') {
        throw validationError(param, `Not a list of strings: item ${i + 1} is ${describeType(item)}`);
      }
      out[i] = item;
    }
    return out;
  }
  throw validationError(param, 'Not a list');
}

function normalizeSort(value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  let items: SortItem[];
  if (typeof value === 'string') {
    items = parseSort(value);
  } else if (Array.isArray(value)) {
    items = [];
    for (const item of value as readonly unknown[]) {
      if (typeof item !== 'string') throw validationError('sort', `Not a list of strings: found ${describeType(item)}`);
      for (const parsed of parseSort(item)) items.push(parsed);
    }
  } else {
    throw validationError('sort', 'Not a list');
  }
  return items.length === 0 ? undefined : formatSort(items);
}

/**
 * Reads a `sort` text into items: items are separated by commas outside
 * double quotes; a field is either double-quoted (`""` inside stands for `"`)
 * or bare, read as CKAN reads it (`^(.+?)( +(asc|desc))?$`, case-insensitive,
 * so `school year desc` is the field `school year`); the direction defaults to
 * `asc`. Empty items are skipped. Anything else (`a sideways`, `a desc nulls
 * first`, an unclosed quote) is a Validation Error on `sort` quoting the item.
 *
 * @example
 * parseSort('year desc, "school, year", title ASC')
 * // → [{ field: "year", direction: "desc" }, { field: "school, year", direction: "asc" },
 * //    { field: "title", direction: "asc" }]
 */
export function parseSort(text: string): SortItem[] {
  const items: SortItem[] = [];
  let start = 0;
  let quoted = false;
  for (let i = 0; i <= text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 34 /* " */) quoted = !quoted; // a doubled "" toggles twice and stays inside
    else if ((c === 44 /* , */ && !quoted) || i === text.length) {
      const item = text.slice(start, i).trim();
      if (item !== '') items.push(parseSortItem(item));
      start = i + 1;
    }
  }
  return items;
}

const BARE_ITEM = /^(.+?)(?:\s+(asc|desc))?$/is;
const NULLS_CLAUSE = /\snulls\s+(?:first|last)\s*$/i;
const DIRECTION_ONLY = /^(?:\s+(asc|desc))?\s*$/i;

function parseSortItem(item: string): SortItem {
  let field: string;
  let direction: string | undefined;
  if (item.startsWith('"')) {
    const close = closingQuote(item);
    const rest = close === -1 ? null : DIRECTION_ONLY.exec(item.slice(close + 1));
    if (close === -1 || rest === null) throw validationError('sort', `invalid value ${quote(item)}`);
    field = item.slice(1, close).replaceAll('""', '"');
    direction = rest[1];
  } else {
    const match = BARE_ITEM.exec(item);
    if (match === null) throw validationError('sort', `invalid value ${quote(item)}`);
    field = match[1] ?? '';
    direction = match[2];
    // A bare name with a quote in it is a quoting mistake (`a"b desc`), not a name; and
    // `nulls first|last` is not offered: null placement is fixed (docs/semantics.md, Order).
    if (field.includes('"') || NULLS_CLAUSE.test(item)) {
      throw validationError('sort', `invalid value ${quote(item)}`);
    }
  }
  if (field === '') throw validationError('sort', `invalid value ${quote(item)}`);
  return { field, direction: direction === undefined ? 'asc' : (direction.toLowerCase() as SortDirectionName) };
}

/** Index of the `"` that closes the quoted name at the start of `item`, or -1. */
function closingQuote(item: string): number {
  for (let i = 1; i < item.length; i++) {
    if (item.charCodeAt(i) !== 34) continue;
    if (item.charCodeAt(i + 1) === 34) i++;
    else return i;
  }
  return -1;
}

/**
 * Writes sort items as the canonical `sort` text: `name dir` joined by `, `,
 * the name double-quoted unless it is a plain identifier (the compiler's rule,
 * `quoteSortField` in `src/compile/sort.ts`).
 *
 * @example
 * formatSort([{ field: 'year', direction: 'desc' }, { field: 'school year', direction: 'asc' }])
 * // → 'year desc, "school year" asc'
 */
export function formatSort(items: readonly SortItem[]): string {
  return items.map((item) => `${quoteSortField(item.field)} ${item.direction}`).join(', ');
}

function naturalNumber(value: unknown, param: 'limit' | 'offset'): number | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  let n: number;
  if (typeof value === 'number') {
    n = value;
  } else if (typeof value === 'string' && /^\s*[+-]?\d+\s*$/.test(value)) {
    // CKAN's int_validator reads " 5 " as 5 but rejects "5.0" and "1e3".
    n = Number(value);
  } else {
    throw validationError(param, 'Invalid integer');
  }
  if (!Number.isSafeInteger(n)) throw validationError(param, 'Invalid integer');
  if (n < 0) {
    // CKAN's two stages word this differently: the schema checks limit, the backend offset.
    throw validationError(param, param === 'limit' ? 'Must be a natural number' : `invalid value ${quote(String(n))}`);
  }
  return n === 0 ? 0 : n;
}

function normalizeBoolean(value: unknown, param: string): boolean | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value === 'boolean') return value;
  if (value === 1 || value === 0) return value === 1;
  if (typeof value === 'string') {
    const word = value.trim().toLowerCase();
    if (TRUE_WORDS.has(word)) return true;
    if (FALSE_WORDS.has(word)) return false;
  }
  throw validationError(
    param,
    `invalid value ${typeof value === 'string' ? quote(value) : describeType(value)}: use true or false (GET: true/false/1/0/yes/no)`,
  );
}

/** A JSON string of a (possibly long) user text, cut so messages stay small. */
function quote(text: string, max = 200): string {
  return JSON.stringify(text.length <= max ? text : `${text.slice(0, max - 1)}…`);
}

/** The kind of a value for a message, without serializing it. */
function describeType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  switch (typeof value) {
    case 'string':
      return `the text ${quote(value, 40)}`;
    case 'number':
      return `the number ${String(value)}`;
    case 'boolean':
      return String(value);
    case 'object':
      return 'an object';
    case 'undefined':
      return 'nothing';
    default:
      return `a ${typeof value}`;
  }
}

/**
 * Request validation: any `datastore_search` request as a server receives it
 * (a POST body after `JSON.parse`, a form or a query string made into an
 * object) → the canonical `SearchRequest`, what CKAN echoes back of it, or the
 * error CKAN answers with (docs/ckan-2.11-reference.md §1,
 * docs/ckan-2.12-reference.md §1 and §3).
 *
 * CKAN checks a request in two stages, and so does this module:
 *
 * 1. the schema (`validateSearch`): each parameter's type and default;
 *    every failing parameter is reported at once, keys in alphabetical order;
 * 2. the backend, once the resource is found and access allowed
 *    (`checkAgainstTable`): field names, the filter tree, a negative
 *    `offset`, unknown keys; only the first problem is reported, parameters
 *    in alphabetical order.
 *
 * Untrusted input: only own properties are read, objects whose keys come
 * from the user are built with `Object.fromEntries` (which defines
 * `__proto__` as a plain key instead of setting a prototype), nesting is
 * bounded before anything recurses, every loop is linear in its input, and
 * messages never serialize a user value of unbounded size or depth.
 */
import type { CkanVersion, FieldInfo, FieldSearch, FilterTree, Filters, JsonValue, RecordsFormat, SearchRequest } from './types.js';
import { DatastoreError, validationError } from '../errors.js';
import { quoteSortField } from './sort.js';
import { parseFilters, pythonRepr } from './filters.js';
import type { FilterNode } from './filters.js';
import { exceedsDepth } from './values.js';

type SortDirectionName = 'asc' | 'desc';

/**
 * One parsed `sort` item.
 * @example
 * const item: SortItem = { field: 'school year', direction: 'desc', nulls: 'last' }; // from `"school year" desc nulls last`
 */
export interface SortItem {
  readonly field: string;
  readonly direction: SortDirectionName;
  /** where nulls go; left out, PostgreSQL's default: last ascending, first descending */
  readonly nulls?: 'first' | 'last';
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
  /** whose parameters to accept; default `2.11` */
  readonly ckan?: CkanVersion;
}

/**
 * Whether CKAN's `datastore_create` takes `name` as an alias
 * (`ckanext/datastore/helpers.py`, `is_valid_table_name`): not empty, no
 * white space at either end, no leading `_`, no `"` and no `%`.
 * @example isValidAliasName('foo bar') // → true
 * @example isValidAliasName('_hidden') // → false
 */
export function isValidAliasName(name: string): boolean {
  return name !== '' && name === name.trim() && !name.startsWith('_') && !name.includes('"') && !name.includes('%');
}

/** What `isValidAliasName` asks, for a hint. */
export const ALIAS_NAME_RULE = 'an alias is not empty, has no white space at either end, does not start with "_", and holds no " or % (CKAN\'s datastore_create refuses it otherwise)';

/** The most sort items a request may have: more cannot be useful, and each costs a comparison per pair of records. */
export const MAX_SORT_ITEMS = 1_000;
/** The most names `fields` may list. */
export const MAX_FIELDS = 10_000;
/** Deeper JSON in `filters` or `q` cannot be a valid filter (2.12 allows 10 levels of `$or`/`$and`). */
const MAX_VALUE_DEPTH = 48;

const KNOWN_KEYS: Readonly<Record<CkanVersion, ReadonlySet<string>>> = {
  '2.11': new Set([
    'resource_id', 'id', 'filters', 'q', 'plain', 'language', 'full_text', 'distinct', 'fields', 'sort', 'limit', 'offset',
    'include_total', 'total_estimation_threshold', 'records_format',
  ]),
  '2.12': new Set([
    'resource_id', 'id', 'filters', 'q', 'plain', 'language', 'full_text', 'distinct', 'fields', 'sort', 'limit', 'offset',
    'include_total', 'total_estimation_threshold', 'records_format', 'include_next_page',
  ]),
};

const TRUE_WORDS: ReadonlySet<string> = new Set(['true', 'yes', 't', 'y', '1']);
const RECORDS_FORMATS: ReadonlySet<string> = new Set(['objects', 'lists', 'csv', 'tsv']);

/**
 * A request after CKAN's schema stage: the canonical request, what CKAN
 * echoes back in `result`, and what its backend stage still has to check.
 */
export interface ValidatedSearch {
  readonly request: SearchRequest;
  /**
   * The validated parameters as CKAN echoes them in `result`, keys in
   * alphabetical order (`sort` and `fields` as sent, `filters` and `q`
   * parsed, defaults filled in); `resource_id` is the name as sent.
   */
  readonly echo: ReadonlyMap<string, JsonValue>;
  /** keys this version does not know (the backend reports the first on `__extras`) */
  readonly extras: readonly string[];
  /** a negative `offset`, which CKAN's backend refuses */
  readonly negativeOffset?: number;
  readonly ckan: CkanVersion;
}

/**
 * CKAN's schema stage: checks and converts every parameter of the version's
 * `datastore_search` schema and reports every failing one at once (409,
 * `{"limit": ["Invalid integer", "Please enter an integer value"], "offset":
 * ["Invalid integer"], "__type": "Validation Error"}`). What needs the table
 * (field names, filter trees) and what CKAN's backend checks (unknown keys,
 * a negative `offset`) is left to `checkAgainstTable`.
 *
 * @example
 * const v = validateSearch({ id: 'courses', q: { title: 'alg' }, plain: 'false' });
 * v.request // → { resource_id: "courses", q: { title: "alg" }, plain: false }
 * [...v.echo.keys()] // → ["include_total", "limit", "plain", "q", "records_format", "resource_id", "total_estimation_threshold"]
 */
export function validateSearch(raw: unknown, options: NormalizeOptions = {}): ValidatedSearch {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    const message = `a datastore_search request must be a JSON object, not ${describeType(raw)}`;
    throw new DatastoreError('BAD_REQUEST', message, { body: { __type: 'Bad Request', message } });
  }
  const ckan = options.ckan ?? '2.11';
  const input = raw as Readonly<Record<string, unknown>>;
  const get = (key: string): unknown => (Object.hasOwn(input, key) ? input[key] : undefined);
  const errors = new Map<string, string[]>();
  const fail = (key: string, ...messages: string[]): undefined => {
    errors.set(key, messages);
    return undefined;
  };
  const echo = new Map<string, JsonValue>();

  // CKAN renames a non-empty `id` to `resource_id` before anything else (`__before`).
  const id = get('id');
  const resourceValue = id !== undefined && id !== null && id !== '' && id !== false && id !== 0 ? id : get('resource_id');
  const resourceId = resourceValue === undefined || resourceValue === null || resourceValue === '' ? fail('resource_id', 'Missing value') : textOf(resourceValue);

  // A list of objects in 2.11 is split by CKAN's navl into sub-keys nobody expects (`__junk`).
  if (ckan === '2.11') junkOf(input, fail);

  const filters = errors.has('__junk') ? undefined : validFilters(get('filters'), fail);
  const q = validQ(get('q'), fail);
  const plain = validBoolean(get('plain'), 'plain', fail);
  const language = optionalText(get('language'), 'language', fail);
  const fullText = optionalText(get('full_text'), 'full_text', fail);
  const distinct = validBoolean(get('distinct'), 'distinct', fail);
  const fields = errors.has('__junk') ? undefined : listOrString(get('fields'), 'fields', MAX_FIELDS, fail);
  const sortValue = errors.has('__junk') ? undefined : listOrString(get('sort'), 'sort', MAX_SORT_ITEMS, fail);
  const sortItems = sortValue === undefined ? undefined : sortItemsOf(sortValue, fail);
  let limit = validLimit(get('limit'), fail);
  if (limit !== undefined && options.maxLimit !== undefined && limit > options.maxLimit) limit = options.maxLimit;
  const offset = validInteger(get('offset'), 'offset', fail);
  const includeTotal = validBoolean(get('include_total'), 'include_total', fail);
  const threshold = ckan === '2.11' ? validInteger(get('total_estimation_threshold'), 'total_estimation_threshold', fail) : undefined;
  const recordsFormat = validRecordsFormat(get('records_format'), fail);
  const includeNextPage = ckan === '2.12' ? validBoolean(get('include_next_page'), 'include_next_page', fail) : undefined;

  if (errors.size > 0) throw schemaError(errors);

  // The echo: CKAN returns its validated dict, whose keys navl sorts.
  if (distinct !== undefined) echo.set('distinct', distinct);
  if (fields !== undefined) echo.set('fields', fields.sent);
  if (filters !== undefined) echo.set('filters', filters as JsonValue);
  if (fullText !== undefined) echo.set('full_text', fullText);
  if (ckan === '2.12') echo.set('include_next_page', includeNextPage ?? false);
  echo.set('include_total', includeTotal ?? true);
  if (language !== undefined) echo.set('language', language);
  echo.set('limit', limit ?? Math.min(DEFAULT_LIMIT_ECHO, options.maxLimit ?? DEFAULT_LIMIT_ECHO));
  if (offset !== undefined) echo.set('offset', offset);
  if (plain !== undefined) echo.set('plain', plain);
  if (q !== undefined) echo.set('q', q as JsonValue);
  echo.set('records_format', recordsFormat ?? 'objects');
  echo.set('resource_id', resourceId as string);
  if (sortValue !== undefined) echo.set('sort', sortValue.sent);
  if (ckan === '2.11') echo.set('total_estimation_threshold', threshold ?? null);

  // The canonical request: keys in SearchRequest's order, defaults left out.
  const request: { -readonly [K in keyof SearchRequest]?: SearchRequest[K] } = { resource_id: resourceId as string };
  const canonicalFilters = filters === undefined ? undefined : canonicalFiltersOf(filters);
  if (canonicalFilters !== undefined) request.filters = canonicalFilters;
  const canonicalQ = q === undefined ? undefined : canonicalQOf(q);
  if (canonicalQ !== undefined) request.q = canonicalQ;
  if (plain === false) request.plain = false;
  if (language !== undefined && language !== '') request.language = language;
  if (fullText !== undefined && !/^\s*$/.test(fullText)) request.full_text = fullText;
  if (distinct === true) request.distinct = true;
  if (fields !== undefined && fields.items.length > 0) request.fields = Object.freeze(fields.items);
  if (sortItems !== undefined && sortItems.length > 0) request.sort = formatSort(sortItems);
  if (limit !== undefined) request.limit = limit;
  if (offset !== undefined && offset >= 0) request.offset = offset;
  if (includeTotal === false) request.include_total = false;
  if (typeof threshold === 'number') request.total_estimation_threshold = threshold;
  if (recordsFormat !== undefined && recordsFormat !== 'objects') request.records_format = recordsFormat as RecordsFormat;
  if (includeNextPage === true) request.include_next_page = true;

  const extras: string[] = [];
  for (const key of Object.keys(input)) if (!KNOWN_KEYS[ckan].has(key)) extras.push(key);
  canonical.add(request);
  return {
    request: Object.freeze(request) as SearchRequest,
    echo,
    extras,
    ...(offset !== undefined && offset < 0 ? { negativeOffset: offset } : {}),
    ckan,
  };
}

/** `limit` as CKAN echoes it when none was sent (`ckan.datastore.search.rows_default`). */
const DEFAULT_LIMIT_ECHO = 100;

/**
 * Validates a raw request and returns its canonical form: keys in the order
 * of `SearchRequest` (`resource_id, filters, q, plain, language, full_text,
 * distinct, fields, sort, limit, offset, include_total,
 * total_estimation_threshold, records_format, include_next_page`), only
 * those that are set and differ from CKAN's default, values in one shape:
 *
 * - `resource_id`: `id` wins when both are sent (CKAN renames it).
 * - `filters`: an object, a list of objects (2.12) or the JSON text of one
 *   (as GET sends it); `-0` becomes `0`; `{}` is left out. A 2.11 filter
 *   that is no dict is refused here; the rest needs the table
 *   (`checkAgainstTable`, `filterTreeOf`).
 * - `q`: a string (empty or all white space is left out), or an object of
 *   field → text; any other value is its text (`5` → `"5"`).
 * - `plain`, `distinct`, `include_total`, `include_next_page`: CKAN's
 *   booleans (`true`, `"yes"`, `"t"`, `"y"`, `"1"`; every other string is
 *   false); only the value that differs from the default is kept.
 * - `fields`: a list; a comma-separated string is split and each piece
 *   trimmed (and unquoted when it is wrapped in `"…"`); empty pieces dropped.
 * - `sort`: the string `"a asc, b desc nulls last"`, every direction
 *   spelled out, from a string or a list of items; a name that is not a plain
 *   identifier is double-quoted (`""` for `"`).
 * - `limit`, `offset`: whole numbers ≥ 0, read as CKAN reads them (`" 5 "`,
 *   `true` is 1); `limit` capped to `options.maxLimit` when given.
 * - `total_estimation_threshold` (2.11; 2.12 ignores it), `records_format`
 *   (`objects` is left out), `language`, `full_text`.
 *
 * Throws `DatastoreError`: `BAD_REQUEST` when `raw` is not an object; a 409
 * Validation Error with CKAN's body otherwise: every schema problem at once
 * (`Missing value`, `Invalid integer`, `Must be a natural number`,
 * `Cannot parse JSON`, `Not a list`, `Value must be one of [...]`), then a
 * negative `offset` (`invalid value "-1"`), then an unknown key (on
 * `__extras`; `include_next_page` is one in 2.11).
 *
 * The result is deeply frozen and recognized by `isCanonicalRequest`, so
 * `evaluate` runs it without validating it a second time; a canonical
 * request is returned as it is (with `limit` capped).
 *
 * @example
 * normalizeRequest({ limit: '10', resource_id: 'courses', sort: ['year desc nulls last', 'title'],
 *                    fields: 'title, year', q: '  ', include_total: 'yes' });
 * // → { resource_id: "courses", fields: ["title", "year"],
 * //     sort: "year desc nulls last, title asc", limit: 10 }
 *
 * @example
 * normalizeRequest({ resource_id: 'courses', limit: -1 });
 * // throws DatastoreError VALIDATION_ERROR, body
 * // { limit: ["Must be a natural number"], __type: "Validation Error" }
 */
export function normalizeRequest(raw: unknown, options: NormalizeOptions = {}): SearchRequest {
  if (isCanonicalRequest(raw)) {
    const max = options.maxLimit;
    if (max === undefined || raw.limit === undefined || raw.limit <= max) return raw;
    const capped = Object.freeze({ ...raw, limit: max });
    canonical.add(capped);
    return capped;
  }
  const validated = validateSearch(raw, options);
  tableFreeChecks(validated);
  // 2.11 refuses a filter that is no dict before anything else; 2.12's parser needs the table to
  // report its errors in CKAN's order (unknown fields before unknown operations), so it waits for it.
  if (validated.ckan === '2.11' && validated.request.filters !== undefined) parseFilters(validated.request.filters, { ckan: '2.11' });
  return validated.request;
}

/** What the backend checks without the table: a negative `offset`, then unknown keys (CKAN's `__extras`). */
function tableFreeChecks(validated: ValidatedSearch): void {
  const first = validated.extras[0];
  if (first !== undefined) throw validationError('__extras', `invalid value ${quote(first)}`);
  if (validated.negativeOffset !== undefined) throw validationError('offset', `invalid value ${quote(String(validated.negativeOffset))}`);
}

/**
 * CKAN's backend stage, once the table is known: the filter tree (2.12
 * parses it first and reports all its field errors together), then, in
 * alphabetical order of the parameters, the first of: an unknown key
 * (`__extras`), an unknown name in `fields`, an unknown filter key (2.11) or
 * a filter with no operation (2.12's `{"$or": []}`), a negative `offset`, a
 * `q` object naming an unknown field or holding a non-text, a `sort` item
 * that is not `field [asc|desc] [nulls first|last]` over a known field
 * (quoted whole, as sent). Returns the filter tree the engine answers.
 *
 * @example
 * const v = validateSearch({ resource_id: 'r', fields: 'title,nope' });
 * checkAgainstTable(v, [{ id: '_id', type: 'int' }, { id: 'title', type: 'text' }]);
 * // throws { fields: ["invalid value \"nope\""], __type: "Validation Error" }
 */
export function checkAgainstTable(validated: ValidatedSearch, fields: readonly FieldInfo[]): FilterNode | undefined {
  const { request, ckan } = validated;
  const known = fieldIdsOf(fields);
  // 2.12 parses the filter tree before anything else; 2.11 only fails at once on a filter that is no
  // dict, and checks its keys in their alphabetical place, after `fields`.
  let tree = ckan === '2.12' && request.filters !== undefined ? parseFilters(request.filters, { ckan, fields }) : undefined;
  if (ckan === '2.11' && request.filters !== undefined) parseFilters(request.filters, { ckan });
  tableFreeExtras(validated);
  // `rank` (a string q) and `rank <field>` (a q object) may be listed in `fields`.
  if (request.fields !== undefined) {
    const ranks = rankColumns(request, fields);
    for (const name of request.fields) {
      if (!known.has(name) && !ranks.includes(name)) throw validationError('fields', `invalid value ${quote(name)}`);
    }
  }
  if (ckan === '2.11' && request.filters !== undefined) tree = parseFilters(request.filters, { ckan, fields });
  if (ckan === '2.12' && tree !== undefined) refuseUnknownListFields(tree, fields);
  if (ckan === '2.12' && tree === undefined && request.filters !== undefined) {
    // Operators that produced no operation at all (`{"$or": []}`) are left over as keys, and refused.
    const first = Array.isArray(request.filters) ? undefined : Object.keys(request.filters).find((key) => !known.has(key));
    if (first !== undefined) throw validationError('filters', `invalid value ${quote(first)}`);
  }
  if (validated.negativeOffset !== undefined) throw validationError('offset', `invalid value ${quote(String(validated.negativeOffset))}`);
  if (typeof request.q === 'object') {
    for (const [field, text] of Object.entries(request.q)) {
      if (!known.has(field) || typeof text !== 'string') throw validationError('q', `invalid value ${quote(field)}`);
    }
  }
  if (request.sort !== undefined) {
    // CKAN quotes the first bad clause as it was sent.
    const sent = sortPieces(validated.echo.get('sort'));
    parseSort(request.sort).forEach((item, i) => {
      if (!known.has(item.field)) throw validationError('sort', `invalid value ${quote(sent[i] ?? formatSort([item]))}`);
    });
  }
  return tree;
}

/** The sort items as sent, one per parsed item. */
function sortPieces(sent: JsonValue | undefined): string[] {
  if (typeof sent === 'string') return splitList(sent, false);
  if (!Array.isArray(sent)) return [];
  const pieces: string[] = [];
  for (const item of sent as readonly JsonValue[]) if (typeof item === 'string') pieces.push(...splitList(item, false));
  return pieces;
}

/** The ids of a table's fields, by its field list (a served table's fields do not change). */
const fieldIdsByList = new WeakMap<readonly FieldInfo[], ReadonlySet<string>>();

function fieldIdsOf(fields: readonly FieldInfo[]): ReadonlySet<string> {
  let ids = fieldIdsByList.get(fields);
  if (ids === undefined) {
    ids = new Set(fields.map((f) => f.id));
    fieldIdsByList.set(fields, ids);
  }
  return ids;
}

function tableFreeExtras(validated: ValidatedSearch): void {
  const first = validated.extras[0];
  if (first !== undefined) throw validationError('__extras', `invalid value ${quote(first)}`);
}

/**
 * CKAN 2.12's parser checks the field of every operation but a list of
 * values (`{"f": [1, 2]}`); its `datastore_validate` then refuses the fields
 * the table does not have, as 2.11 words it: `invalid value "f"` (the first,
 * in the tree's order).
 * @example
 * refuseUnknownListFields(tree of { _full_text: ['a', 'b'] }, fields) // throws filters: invalid value "_full_text"
 */
export function refuseUnknownListFields(tree: FilterNode, fields: readonly FieldInfo[]): void {
  const known = fieldIdsOf(fields);
  const first = (node: FilterNode): string | undefined => {
    if ('of' in node) {
      for (const child of node.of) {
        const found = first(child);
        if (found !== undefined) return found;
      }
      return undefined;
    }
    return known.has(node.field) ? undefined : node.field;
  };
  const unknown = first(tree);
  if (unknown !== undefined) throw validationError('filters', `invalid value ${quote(unknown)}`);
}

/**
 * The filter tree of a request (the one entry every engine calls): 2.11's
 * dict as an AND of `eq`/`in` (a list on an array column is array
 * equality), 2.12's operators, lists and `$or`/`$and` with their limits and
 * errors (docs/ckan-2.12-reference.md §1). `undefined`: no filter.
 *
 * @example
 * filterTreeOf({ resource_id: 'r', filters: { year: { gte: 2020 } } }, fields, { ckan: '2.12' })
 * // → { op: "gte", field: "year", value: 2020 }
 */
export function filterTreeOf(
  request: SearchRequest,
  fields: readonly FieldInfo[] | undefined,
  options: { readonly ckan?: CkanVersion } = {},
): FilterNode | undefined {
  if (request.filters === undefined) return undefined;
  return parseFilters(request.filters, { ckan: options.ckan ?? '2.11', ...(fields === undefined ? {} : { fields }) });
}

/**
 * The rank columns a search adds (docs/ckan-2.11-reference.md §3): `rank`
 * for a text `q` or `full_text`, `rank <field>` for each field of a `q`
 * object that the table has; each of type `float`.
 * @example
 * rankColumns({ resource_id: 'r', q: 'algebra' }, fields) // → ["rank"]
 */
export function rankColumns(request: SearchRequest, fields: readonly FieldInfo[]): string[] {
  const names: string[] = [];
  const q = request.q;
  if (request.full_text !== undefined || typeof q === 'string') names.push('rank');
  if (typeof q === 'object') {
    for (const field of Object.keys(q)) if (fields.some((f) => f.id === field)) names.push(`rank ${field}`);
  }
  return names;
}

/**
 * A canonical request with another `fields` (the server adds `_id` for
 * `next_page`, and takes the rank columns out, which it writes itself),
 * and without the keys in `drop`.
 * @example
 * withFields(normalizeRequest({ resource_id: 'r', fields: 'title' }), ['title', '_id']).fields // → ["title", "_id"]
 */
export function withFields(request: SearchRequest, fields: readonly string[] | undefined, drop: readonly (keyof SearchRequest)[] = []): SearchRequest {
  const copy: { -readonly [K in keyof SearchRequest]?: SearchRequest[K] } = { ...request };
  for (const key of drop) delete copy[key];
  if (fields === undefined || fields.length === 0) delete copy.fields;
  else copy.fields = Object.freeze([...fields]);
  const frozen = Object.freeze(copy) as SearchRequest;
  canonical.add(frozen);
  return frozen;
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

type Fail = (key: string, ...messages: string[]) => undefined;

function schemaError(errors: ReadonlyMap<string, readonly string[]>): DatastoreError {
  const keys = [...errors.keys()].sort();
  const body: Record<string, unknown> = Object.fromEntries(keys.map((key) => [key, errors.get(key)]));
  body.__type = 'Validation Error';
  const message = keys.map((key) => `${key}: ${(errors.get(key) ?? []).join(', ')}`).join('; ');
  return new DatastoreError('VALIDATION_ERROR', message, { body: body as { __type: string } });
}

/**
 * CKAN 2.11's navl turns a list whose first item is an object into sub-keys
 * (`('filters', 0, 'stage')`) that no schema entry expects: `__junk`.
 */
function junkOf(input: Readonly<Record<string, unknown>>, fail: Fail): void {
  const keys = Object.keys(input);
  // the keys are sorted (for the message's order) only when some value is such a list, which is rare
  if (!keys.some((key) => isListOfObjects(input[key]))) return;
  const junk: string[] = [];
  for (const key of keys.sort()) {
    const value = input[key];
    if (!isListOfObjects(value)) continue;
    for (let i = 0; i < value.length && junk.length < 20; i++) {
      const item: unknown = value[i];
      if (typeof item !== 'object' || item === null || Array.isArray(item)) continue;
      for (const sub of Object.keys(item).sort()) junk.push(`(${pythonRepr(key)}, ${i}, ${pythonRepr(excerpt(sub))})`);
    }
  }
  if (junk.length > 0) fail('__junk', `The input field [${junk.join(', ')}] was not expected.`);
}

/** A non-empty list whose first item is an object (not a list): what navl splits into sub-keys. */
function isListOfObjects(value: unknown): value is readonly unknown[] {
  if (!Array.isArray(value) || value.length === 0) return false;
  const first: unknown = value[0];
  return typeof first === 'object' && first !== null && !Array.isArray(first);
}

/** CKAN's `unicode_safe`: text as is, other values as their JSON text. */
function textOf(value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return JSON.stringify(value);
  return excerpt(safeJson(value), 200);
}

function optionalText(value: unknown, key: string, fail: Fail): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'object' && exceedsDepth(value, MAX_VALUE_DEPTH)) return fail(key, 'nested too deep');
  return textOf(value);
}

/** CKAN's `json_validator`: objects and lists as they are, anything else parsed as JSON text. */
function validFilters(value: unknown, fail: Fail): FilterTree | Filters | JsonValue | undefined {
  if (value === undefined || value === null) return undefined;
  let parsed: unknown = value;
  if (typeof value === 'string') {
    try {
      parsed = JSON.parse(value);
    } catch {
      return fail('filters', 'Cannot parse JSON');
    }
  } else if (typeof value !== 'object') {
    return fail('filters', 'Cannot parse JSON');
  }
  if (typeof parsed === 'object' && parsed !== null && exceedsDepth(parsed, MAX_VALUE_DEPTH)) {
    return fail('filters', `Filters must not be nested more than ${MAX_VALUE_DEPTH} levels deep`);
  }
  return parsed as JsonValue;
}

/** A frozen copy with `-0` as `0`; `{}` and the JSON values that mean "no filter" are left out. */
function canonicalFiltersOf(filters: JsonValue): Filters | FilterTree | undefined {
  if (filters === null || filters === false || filters === 0 || filters === '') return undefined;
  if (typeof filters === 'object' && !Array.isArray(filters) && Object.keys(filters).length === 0) return undefined;
  return frozenCopy(filters) as Filters | FilterTree;
}

function frozenCopy(value: JsonValue): JsonValue {
  if (typeof value === 'number') {
    // JSON has no NaN or Infinity; a caller in JavaScript can pass them.
    if (!Number.isFinite(value)) throw validationError('filters', `invalid value ${String(value)}: a filter number must be finite`);
    return value === 0 ? 0 : value;
  }
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) {
    const list = value as readonly JsonValue[];
    const out = new Array<JsonValue>(list.length);
    for (let i = 0; i < list.length; i++) out[i] = frozenCopy(list[i] as JsonValue);
    return Object.freeze(out);
  }
  // a loop, not `Object.fromEntries` of mapped entries (two arrays per key and a generic path)
  const out: Record<string, JsonValue> = {};
  for (const key of Object.keys(value)) {
    const copy = frozenCopy((value as Record<string, JsonValue>)[key] as JsonValue);
    // an own `__proto__` key stays a key, as `fromEntries` would keep it
    if (key === '__proto__') Object.defineProperty(out, key, { value: copy, enumerable: true, writable: true, configurable: true });
    else out[key] = copy;
  }
  return Object.freeze(out);
}

/**
 * CKAN's `unicode_or_json_validator`: an object (or JSON text of one) is a
 * per-field search; any other value becomes its text (`5` → `"5"`, a list
 * its Python form).
 */
function validQ(value: unknown, fail: Fail): string | Readonly<Record<string, JsonValue>> | undefined {
  if (value === undefined || value === null) return undefined;
  // JSON text of an object is that object, however it came (a JSON body too): CKAN's validator parses every text
  if (typeof value === 'string') return jsonObjectOf(value) ?? value;
  if (typeof value === 'object') {
    if (exceedsDepth(value, MAX_VALUE_DEPTH)) return fail('q', 'nested too deep');
    if (!Array.isArray(value)) return value as Record<string, JsonValue>;
    return pythonRepr(value as JsonValue);
  }
  if (typeof value === 'boolean') return value ? 'True' : 'False';
  return String(value);
}

/** The object a text is the JSON of (Python's `json.loads` allows white space around it), else undefined. */
function jsonObjectOf(text: string): Record<string, JsonValue> | undefined {
  if (!text.trimStart().startsWith('{')) return undefined;
  try {
    const parsed: unknown = JSON.parse(text);
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, JsonValue>) : undefined;
  } catch {
    return undefined;
  }
}

function canonicalQOf(q: string | Readonly<Record<string, JsonValue>>): string | FieldSearch | undefined {
  if (typeof q === 'string') return /^\s*$/.test(q) ? undefined : q;
  if (Object.keys(q).length === 0) return undefined;
  return frozenCopy(q as JsonValue) as FieldSearch;
}

/** CKAN's `boolean_validator`; a number other than 0/1, which CKAN fails on (500), is refused. */
function validBoolean(value: unknown, key: string, fail: Fail): boolean | undefined {
  // `null` is "not sent" (CKAN's ignore_missing or default); "" is false.
  if (value === undefined || value === null) return undefined;
  if (value === '') return false;
  if (typeof value === 'boolean') return value;
  if (value === 1 || value === 0) return value === 1;
  if (typeof value === 'string') return TRUE_WORDS.has(value.toLowerCase());
  return fail(key, `invalid value ${describeType(value)}: use true or false`);
}

function validRecordsFormat(value: unknown, fail: Fail): string | undefined {
  // CKAN's `default('objects')` replaces a missing, None or empty value
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value === 'string' && RECORDS_FORMATS.has(value)) return value;
  return fail('records_format', "Value must be one of ['objects', 'lists', 'csv', 'tsv']");
}

/** A list of strings (or lists, which CKAN's validator lets through) or one comma-separated string. */
function listOrString(
  value: unknown,
  key: 'fields' | 'sort',
  max: number,
  fail: Fail,
): { readonly sent: JsonValue; readonly items: string[] } | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'string') {
    const items = splitList(value, key === 'fields');
    if (items.length > max) return fail(key, `too many items: ${items.length} (at most ${max})`);
    return { sent: value, items };
  }
  if (!Array.isArray(value)) return fail(key, 'Not a list');
  const list = value as readonly unknown[];
  if (list.length > max) return fail(key, `too many items: ${list.length} (at most ${max})`);
  const items: string[] = [];
  for (let i = 0; i < list.length; i++) {
    const item = list[i];
    if (typeof item !== 'string') return fail(key, `Neither a string nor a list: ${describeType(item)}`);
    if (key === 'fields') items.push(item);
    else for (const piece of splitList(item, false)) items.push(piece);
    if (items.length > max) return fail(key, `too many items: more than ${max}`);
  }
  return { sent: list as JsonValue, items };
}

/** Comma-separated pieces, trimmed, empty ones dropped; `fields` pieces wrapped in `"…"` lose their quotes. */
function splitList(text: string, unquote: boolean): string[] {
  const pieces: string[] = [];
  let start = 0;
  let quoted = false;
  for (let i = 0; i <= text.length; i++) {
    const c = text.charCodeAt(i);
    // `sort` keeps commas inside a double-quoted name (the compiler's quoting); `fields` splits on every comma, as CKAN.
    if (!unquote && c === 34 /* " */) quoted = !quoted;
    else if ((c === 44 /* , */ && !quoted) || i === text.length) {
      const piece = text.slice(start, i).trim();
      if (piece !== '') pieces.push(unquote && piece.length >= 2 && piece.startsWith('"') && piece.endsWith('"') ? piece.slice(1, -1) : piece);
      start = i + 1;
    }
  }
  return pieces;
}

function sortItemsOf(sort: { readonly items: string[] }, fail: Fail): SortItem[] | undefined {
  const items: SortItem[] = [];
  for (const text of sort.items) {
    const item = parseSortItem(text);
    if (item === undefined) return fail('sort', `invalid value ${quote(text)}`);
    items.push(item);
  }
  return items;
}

/**
 * Reads a `sort` text into items: items are separated by commas outside
 * double quotes; each is CKAN's `field [asc|desc] [nulls first|last]`
 * (case-insensitive); a field is either double-quoted (`""` inside stands
 * for `"`) or bare (`school year desc` is the field `school year`); the
 * direction defaults to `asc`. Empty items are skipped. Anything else
 * (`a sideways`, an unclosed quote) is a Validation Error on `sort` quoting
 * the item. Linear in the length of the text.
 *
 * @example
 * parseSort('year desc nulls last, "school, year", title ASC')
 * // → [{ field: "year", direction: "desc", nulls: "last" }, { field: "school, year", direction: "asc" },
 * //    { field: "title", direction: "asc" }]
 */
export function parseSort(text: string): SortItem[] {
  const items: SortItem[] = [];
  for (const piece of splitList(text, false)) {
    const item = parseSortItem(piece);
    if (item === undefined) throw validationError('sort', `invalid value ${quote(piece)}`);
    items.push(item);
  }
  return items;
}

function isSpace(c: number): boolean {
  return c === 32 || (c >= 9 && c <= 13) || c === 0xa0 || c === 0xfeff || (c >= 0x2000 && c <= 0x200a) || c === 0x1680 || c === 0x2028 || c === 0x2029 || c === 0x202f || c === 0x205f || c === 0x3000;
}

/** Whether `text` has the word `word` (lower case, ASCII) ending at `end`, compared case-insensitively. */
function endsWithWord(text: string, end: number, word: string): boolean {
  const start = end - word.length;
  if (start < 0) return false;
  for (let i = 0; i < word.length; i++) if ((text.charCodeAt(start + i) | 0x20) !== word.charCodeAt(i)) return false;
  return true;
}

/** Index of the first of the spaces that end at `end` (= `end` when there are none). */
function spacesBefore(text: string, end: number): number {
  let i = end;
  while (i > 0 && isSpace(text.charCodeAt(i - 1))) i--;
  return i;
}

/**
 * One sort item, read right to left so each character is looked at a
 * bounded number of times: `[ nulls first|last]`, then `[ asc|desc]`, then
 * the field (which must not be empty).
 */
function parseSortItem(item: string): SortItem | undefined {
  let end = item.length;
  let nulls: 'first' | 'last' | undefined;
  for (const word of ['first', 'last'] as const) {
    if (!endsWithWord(item, end, word)) continue;
    const gap = spacesBefore(item, end - word.length);
    if (gap === end - word.length || !endsWithWord(item, gap, 'nulls')) break;
    const before = spacesBefore(item, gap - 5);
    if (before === gap - 5 || before === 0) break;
    nulls = word;
    end = before;
    break;
  }
  let direction: SortDirectionName = 'asc';
  for (const word of ['asc', 'desc'] as const) {
    if (!endsWithWord(item, end, word)) continue;
    const before = spacesBefore(item, end - word.length);
    if (before === end - word.length || before === 0) break;
    direction = word;
    end = before;
    break;
  }
  let field: string;
  if (item.charCodeAt(0) === 34 /* " */) {
    const close = closingQuote(item);
    // The quoted name must be all of the field part.
    if (close === -1 || end < close + 1 || spacesBefore(item, end) !== close + 1) return undefined;
    field = item.slice(1, close).replaceAll('""', '"');
  } else {
    field = item.slice(0, end);
    // A bare name with a quote in it is a quoting mistake (`a"b desc`), not a name.
    if (field.includes('"')) return undefined;
  }
  if (field === '') return undefined;
  return nulls === undefined ? { field, direction } : { field, direction, nulls };
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
 * Writes sort items as the canonical `sort` text: `name dir[ nulls
 * first|last]` joined by `, `, the name double-quoted unless it is a plain
 * identifier (the compiler's rule, `quoteSortField` in `sort.ts`).
 *
 * @example
 * formatSort([{ field: 'year', direction: 'desc', nulls: 'last' }, { field: 'school year', direction: 'asc' }])
 * // → 'year desc nulls last, "school year" asc'
 */
export function formatSort(items: readonly SortItem[]): string {
  return items.map((item) => `${quoteSortField(item.field)} ${item.direction}${item.nulls === undefined ? '' : ` nulls ${item.nulls}`}`).join(', ');
}

/** CKAN's `limit`: the default when missing, `null` or `""`; a natural number; above the cap, the cap. */
function validLimit(value: unknown, fail: Fail): number | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  const n = integerOf(value);
  if (n === undefined) {
    // int_validator fails, then limit_to_configured_maximum's convert_int adds its own message for text.
    return typeof value === 'string' ? fail('limit', 'Invalid integer', 'Please enter an integer value') : fail('limit', 'Invalid integer');
  }
  if (n < 0) return fail('limit', 'Must be a natural number');
  return n;
}

/** CKAN's `int_validator` (`offset`, `total_estimation_threshold`); `null` and blank text mean "not sent". */
function validInteger(value: unknown, key: string, fail: Fail): number | undefined {
  if (value === undefined || value === null || (typeof value === 'string' && value.trim() === '')) return undefined;
  const n = integerOf(value);
  return n === undefined ? fail(key, 'Invalid integer') : n;
}

/**
 * A whole number as CKAN's `int_validator` reads it: a number without a
 * fraction (`true` is 1), or decimal digits with optional sign and spaces.
 * Beyond what a double holds exactly, the value is clamped (it only meets
 * a cap or a count).
 */
function integerOf(value: unknown): number | undefined {
  if (typeof value === 'boolean') return value ? 1 : 0;
  if (typeof value === 'number') {
    if (!Number.isFinite(value) || !Number.isInteger(value)) return undefined;
    return value === 0 ? 0 : value;
  }
  if (typeof value !== 'string') return undefined;
  const text = value.trim();
  let i = text.charCodeAt(0) === 43 || text.charCodeAt(0) === 45 ? 1 : 0;
  if (i === text.length) return undefined;
  for (; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 48 || c > 57) return undefined;
  }
  const n = Number(text);
  if (!Number.isSafeInteger(n)) return n < 0 ? -Number.MAX_SAFE_INTEGER : Number.MAX_SAFE_INTEGER;
  return n === 0 ? 0 : n;
}


function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

function excerpt(text: string, max = 200): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

/** A JSON string of a (possibly long) user text, cut so messages stay small. */
function quote(text: string, max = 200): string {
  return JSON.stringify(excerpt(text, max));
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

/**
 * Turns an HTTP answer into a result or a typed `DatastoreError`: CKAN's
 * envelope (`success`, `result` | `error.__type`), CKAN's bare-string 400s
 * (docs/ckan-2.11-reference.md §5, "Error envelope"), and
 * anything else a proxy or a wrong URL may answer.
 */
import { LosslessNumber, parse as parseLossless } from 'lossless-json';
import { excerpt } from '../text.js';
import { isNumberType } from '../datastore/values.js';
import { DatastoreError, datastoreCodes } from '../errors.js';
import type { DatastoreErrorCode } from '../errors.js';
import type { ErrorBody, SearchResult } from '../datastore/types.js';

/** `__type` → code, read off the catalogue so the two cannot disagree. */
const CODE_BY_TYPE: ReadonlyMap<string, DatastoreErrorCode> = new Map(
  (Object.entries(datastoreCodes) as [DatastoreErrorCode, { type: string | undefined }][])
    .filter(([, entry]) => entry.type !== undefined)
    .map(([code, entry]) => [entry.type as string, code]),
);

export interface ResponseContext {
  /** `https://host[:port]`, for messages (no credentials, no query string) */
  readonly origin: string;
  /** whether a token was sent, for the advice in a 403 message */
  readonly sentToken: boolean;
  /** the `Location` of a redirect */
  readonly location?: string;
}

/**
 * Reads a complete response. Resolves with `result` for a datastore_search
 * success, throws a `DatastoreError` otherwise.
 *
 * @example
 * readResponse(409, '{"success": false, "error": {"__type": "Validation Error", "filters": ["invalid value \\"foo\\""]}}', ctx)
 * // throws DatastoreError { code: "VALIDATION_ERROR", status: 409,
 * //   message: 'the server rejected the request: filters: invalid value "foo"' }
 */
export function readResponse(status: number, text: string, context: ResponseContext): SearchResult {
  return readSearch(status, text, context, 'datastore_search');
}

/**
 * Reads a complete `datastore_search_sql` response as `readResponse` reads
 * a search's: its `result` (records and fields; no `resource_id`, which
 * that action does not echo), or the typed `DatastoreError`.
 * @example
 * readSqlResponse(200, '{"success": true, "result": {"records": [], "fields": [], "sql": "SELECT 1"}}', ctx).records // → []
 */
export function readSqlResponse(status: number, text: string, context: ResponseContext): SearchResult {
  return readSearch(status, text, context, 'datastore_search_sql');
}

/**
 * A `datastore_search_sql` result read through `action` (an `unknown`),
 * checked as `readSqlResponse` checks one.
 * @example checkedSqlResult({ records: [{ _id: 1 }], fields: [{ id: '_id', type: 'int' }] }, 'https://data.example.org').records // → [{ _id: 1 }]
 * @example checkedSqlResult(null, 'https://data.example.org') // throws INVALID_RESPONSE: … a datastore_search_sql result that is no object with records
 */
export function checkedSqlResult(result: unknown, origin: string): SearchResult {
  if (!isObject(result) || !Array.isArray(result.records)) {
    throw new DatastoreError('INVALID_RESPONSE', `${origin} answered a datastore_search_sql result that is no object with records: ${bodyExcerpt(String(JSON.stringify(result)))}`);
  }
  return checkedResult(result, { origin, sentToken: false }, 'datastore_search_sql');
}

type SearchAction = 'datastore_search' | 'datastore_search_sql';

function readSearch(status: number, text: string, context: ResponseContext, action: SearchAction): SearchResult {
  const json = parseJson(text);
  const envelope = isObject(json) ? json : undefined;
  if (status >= 200 && status < 300 && envelope?.success === true && isObject(envelope.result) && Array.isArray(envelope.result.records)) {
    const { records, fields } = envelope.result;
    const scaled = scaledFields(fields, text);
    return checkedResult(scaled !== undefined || roundsIntegers(records, fields) ? exactResult(text, envelope.result, scaled) : envelope.result, context, action);
  }
  return failure(status, text, json, context, `a ${action} response (no result.records)`, action);
}

/**
 * Reads a complete response of any CKAN action: its `result`, or the typed
 * `DatastoreError` its envelope (or its absence) says.
 * @example
 * readActionResponse(200, '{"success": true, "result": {"count": 0, "results": []}}', ctx) // → { count: 0, results: [] }
 * readActionResponse(404, '{"success": false, "error": {"__type": "Not Found Error", "message": "Not found"}}', ctx)
 * // throws DatastoreError { code: "NOT_FOUND", status: 404 }
 */
export function readActionResponse(status: number, text: string, context: ResponseContext): unknown {
  const json = parseJson(text);
  if (status >= 200 && status < 300 && isObject(json) && json.success === true && 'result' in json) return json.result;
  return failure(status, text, json, context, "a CKAN action's response (no result)", 'CKAN');
}

/**
 * Whether a body is CKAN's own error envelope (`{"success": false, "error": {"__type": …}}`).
 * @example hasCkanError('{"success": false, "error": {"__type": "Authorization Error"}}') // true
 * @example hasCkanError('<html>403 Forbidden</html>') // false
 */
export function hasCkanError(text: string): boolean {
  const json = parseJson(text);
  return isObject(json) && isErrorBody(json.error);
}

/** The error an answer that is not a success stands for (`expected`: what a success would have been). */
function failure(status: number, text: string, json: unknown, context: ResponseContext, expected: string, service: string): never {
  const envelope = isObject(json) ? json : undefined;
  if (status >= 200 && status < 300) {
    if (envelope?.success === false && isErrorBody(envelope.error)) throw errorFromBody(status, envelope.error, context);
    const what = json === undefined ? 'not JSON' : `JSON, but not ${expected}`;
    throw new DatastoreError(
      'INVALID_RESPONSE',
      `${context.origin} answered HTTP ${status}, but the body is ${what}; is the URL the portal's base URL, without /api/…? Body starts: ${bodyExcerpt(text)}`,
      { status, body: bodyExcerpt(text, 2_000) },
    );
  }
  if (envelope !== undefined && isErrorBody(envelope.error)) throw errorFromBody(status, envelope.error, context);
  if (status >= 300 && status < 400 && context.location !== undefined) {
    const base = baseOf(context.location);
    throw new DatastoreError(
      'HTTP_ERROR',
      `${context.origin} answered HTTP ${status}, a redirect to ${bodyExcerpt(context.location)}; ${base === undefined ? "connect to the portal's new base URL instead" : `connect to ${base} instead (--url, a profile's url:)`} (redirects are not followed)`,
      { status, body: bodyExcerpt(text, 2_000) },
    );
  }
  if (typeof json === 'string') {
    // CKAN 2.11 answers a bad body with a bare JSON string: "Bad request - JSON Error: …".
    const code: DatastoreErrorCode = status === 400 ? 'BAD_REQUEST' : 'HTTP_ERROR';
    // (2.11 "Bad request - Action name not known: …", 2.12 "Bad request: …"): CKAN without the DataStore plugin.
    const noDatastore = status === 400 && /Action name not known: datastore_search$/.test(json);
    const said = noDatastore
      ? `${context.origin} has no DataStore (datastore_search is not one of its actions: "${bodyExcerpt(json, 200)}"): its datasets can be listed (ckql datasets) and their files downloaded, not queried`
      : `${context.origin} answered HTTP ${status}: ${bodyExcerpt(json, 500)}`;
    throw new DatastoreError(code, said, { status, body: json });
  }
  // CKAN answers its /api/action/ URLs with JSON: a page that is not says the base URL is not a portal's.
  const wrongUrl = status === 404 ? "; is the URL the portal's base URL (the part before /api/)? CKAN answers its /api/action/ URLs with JSON, an error too" : '';
  throw new DatastoreError(
    'HTTP_ERROR',
    `${context.origin} answered HTTP ${status} without a ${service} error body${wrongUrl}${text.trim() === '' ? '' : `: ${bodyExcerpt(text)}`}`,
    { status, body: bodyExcerpt(text, 2_000) },
  );
}

/**
 * Every part of a result the rest of ckql reads, checked before it is used
 * (a portal may answer anything): records are objects (unless asked as
 * lists), `fields` a list of `{ id, type }` with text ids and types,
 * `resource_id` a text (`datastore_search` echoes it; the sql action does
 * not), `total` and `limit` whole numbers of 0 or more, `offset` too,
 * `total_was_estimated` a boolean, `next_page` CKAN 2.12's cursor
 * (`{"_id": {"gt": n}}`), `records_truncated` a boolean. Anything else is
 * `INVALID_RESPONSE` naming the action and the part, never a `TypeError`
 * further on. A `total` of null is no total; no `fields` is none.
 */
function checkedResult(result: Record<string, unknown>, context: ResponseContext, action: SearchAction): SearchResult {
  const wrong = (what: string): never => {
    throw new DatastoreError('INVALID_RESPONSE', `${context.origin} answered a ${action} result whose ${what}`, { body: bodyExcerpt(JSON.stringify(result) ?? '', 2_000) });
  };
  const records = result.records as unknown[];
  // Only object records are checked: `records_format: lists` answers arrays.
  const objects = result.records_format === undefined || result.records_format === 'objects';
  if (!objects && result.records_format !== 'lists') wrong(`records_format is ${bodyExcerpt(String(JSON.stringify(result.records_format)), 60)}, not objects or lists`);
  const record = objects ? records.findIndex((each) => !isObject(each)) : records.findIndex((each) => !Array.isArray(each));
  if (record >= 0) wrong(`records[${record}] is not ${objects ? 'an object' : 'a list'}`);
  const checked: Record<string, unknown> = { ...result };
  if (result.fields !== undefined) {
    if (!Array.isArray(result.fields)) wrong('fields is not a list');
    const field = (result.fields as unknown[]).findIndex((each) => !isObject(each) || typeof each.id !== 'string' || typeof each.type !== 'string');
    if (field >= 0) wrong(`fields[${field}] is not a field ({ id, type } with text id and type)`);
  } else {
    checked.fields = [];
  }
  if (action === 'datastore_search' && typeof result.resource_id !== 'string') wrong('resource_id is not a text');
  if (result.total === null) delete checked.total;
  else if (result.total !== undefined && !isCount(result.total)) wrong('total is not a whole number of 0 or more');
  for (const key of ['limit', 'offset'] as const) {
    if (result[key] !== undefined && !isCount(result[key])) wrong(`${key} is not a whole number of 0 or more`);
  }
  for (const key of ['total_was_estimated', 'records_truncated'] as const) {
    if (result[key] !== undefined && typeof result[key] !== 'boolean') wrong(`${key} is not true or false`);
  }
  if (result.next_page !== undefined && result.next_page !== null && !isCursor(result.next_page)) wrong('next_page is not a cursor ({"_id": {"gt": n}} or {"_id": {"lt": n}})');
  return checked as unknown as SearchResult;
}

/** A count as CKAN gives one: a whole number, 0 or more, that a double holds exactly. */
function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

/** CKAN 2.12's `next_page`: `{"_id": {"gt": n}}` or `{"_id": {"lt": n}}` (docs/ckan-2.12-reference.md §2.1). */
function isCursor(value: unknown): boolean {
  if (!isObject(value) || Object.keys(value).length !== 1 || !isObject(value._id)) return false;
  const ops = Object.keys(value._id);
  return ops.length === 1 && (ops[0] === 'gt' || ops[0] === 'lt') && Number.isSafeInteger(value._id[ops[0]]);
}

/**
 * An error body as the rest of the code may read it: `__type` and each
 * field as text or a list of texts. A server's objects (or one with its own
 * `toString`) become JSON text here, so rendering never calls their methods.
 */
function plainBody(body: ErrorBody): ErrorBody {
  const plain: Record<string, unknown> = { __type: body.__type };
  for (const [key, value] of Object.entries(body)) {
    if (key === '__type') continue;
    plain[key] = Array.isArray(value) ? value.map(textOf) : textOf(value);
  }
  return plain as ErrorBody;
}

function textOf(value: unknown): string {
  if (typeof value === 'string') return value;
  try {
    return JSON.stringify(value) ?? typeof value;
  } catch {
    return typeof value;
  }
}

function errorFromBody(status: number, raw: ErrorBody, context: ResponseContext): DatastoreError {
  const body = plainBody(raw);
  const code = CODE_BY_TYPE.get(body.__type) ?? 'HTTP_ERROR';
  const said = typeof body.message === 'string' ? body.message : undefined;
  let message: string;
  switch (code) {
    case 'VALIDATION_ERROR':
      message = `the server rejected the request: ${validationMessages(body)}`;
      break;
    case 'FORBIDDEN':
      message = `${said ?? `access denied (HTTP ${status})`} (${context.sentToken ? 'the token that was sent is not accepted for this resource' : 'no token was sent; this resource needs one'})`;
      break;
    case 'HTTP_ERROR':
      message = `${context.origin} answered HTTP ${status} (${body.__type})${said === undefined ? '' : `: ${said}`}`;
      break;
    default:
      message = said ?? `${body.__type} (HTTP ${status})`;
  }
  return new DatastoreError(code, message, { status, body });
}

/** `filters: invalid value "foo"; limit: Must be a natural number` */
function validationMessages(body: ErrorBody): string {
  const parts: string[] = [];
  for (const [param, value] of Object.entries(body)) {
    if (param === '__type' || param === 'info') continue;
    const messages = Array.isArray(value) ? value.map(textOf) : [textOf(value)];
    parts.push(`${param}: ${messages.join('; ')}`);
  }
  return parts.length === 0 ? 'Validation Error (no details given)' : parts.join('; ');
}

/**
 * Whether `JSON.parse` may have rounded an integer of these records: a
 * value at or beyond 2^53 (CKAN's `int8` and `numeric` are exact on the
 * wire). Only then is the body read again, slower, by `exactResult`; a
 * page without such a number keeps `JSON.parse`'s speed.
 */
function roundsIntegers(records: readonly unknown[], fields: unknown): boolean {
  // The number columns, when the result names its fields' types (CKAN's always do); else every key.
  const numbers = Array.isArray(fields)
    ? fields.flatMap((field: unknown) => (isObject(field) && typeof field.id === 'string' && typeof field.type === 'string' && isNumberType(field.type) ? [field.id] : []))
    : undefined;
  const rounded = (value: unknown): boolean =>
    typeof value === 'number' && (value > Number.MAX_SAFE_INTEGER || value < Number.MIN_SAFE_INTEGER) && Number.isInteger(value);
  for (const record of records) {
    if (!isObject(record)) continue;
    if (numbers === undefined) {
      for (const key in record) if (rounded(record[key])) return true;
    } else {
      for (const id of numbers) if (rounded(record[id])) return true;
    }
  }
  return false;
}

const INTEGER_TEXT = /^-?\d+$/;

/** A number with a trailing zero after its point (`2.0`, `10.50`), or of 16 digits or more, which `JSON.parse` would not keep. */
const SCALED_NUMBER = /\.\d*0[\s,}\]]|\d{16}/;

/**
 * The `numeric` fields of a result whose text may hold a number `JSON.parse`
 * would change (CKAN writes a numeric as PostgreSQL does, its scale kept:
 * `2.0`, `4.7059195948084837`); undefined when there is none, the fast path.
 */
function scaledFields(fields: unknown, text: string): ReadonlySet<string> | undefined {
  if (!Array.isArray(fields)) return undefined;
  const ids = fields.flatMap((field: unknown) => (isObject(field) && typeof field.id === 'string' && field.type === 'numeric' ? [field.id] : []));
  return ids.length > 0 && SCALED_NUMBER.test(text) ? new Set(ids) : undefined;
}

/**
 * `result` read from `text` with every integer beyond 2^53 kept as its
 * exact text, as the memory loader keeps such numbers (output formats
 * print the digits as they came), and a value of a `scaled` field as its
 * text where a number would write another (`"2.0"`, as the PostgreSQL
 * engines keep it: docs/engines.md, Numbers in the output); other numbers
 * as `JSON.parse` reads them.
 */
function exactResult(text: string, parsed: Record<string, unknown>, scaled?: ReadonlySet<string>): Record<string, unknown> {
  try {
    const exact = parseLossless(text, null, (digits) => {
      const n = Number(digits);
      if (INTEGER_TEXT.test(digits)) return Number.isSafeInteger(n) ? n : digits;
      if (String(n) === digits) return n;
      return scaled === undefined ? n : new LosslessNumber(digits);
    }) as { result?: unknown };
    if (!isObject(exact.result)) return parsed;
    return scaled === undefined ? exact.result : (withScales(exact.result, scaled) as Record<string, unknown>);
  } catch {
    // Nested too deep for the second reader: the rounded numbers are all there is.
    return parsed;
  }
}

/** The result with each kept number of a scaled field of a record as its text, and every other kept number a number. */
function withScales(result: Record<string, unknown>, scaled: ReadonlySet<string>): unknown {
  const ids = Array.isArray(result.fields) ? result.fields.map((field: unknown) => (isObject(field) ? field.id : undefined)) : [];
  const numbers = (value: unknown): unknown => {
    if (value instanceof LosslessNumber) return Number(value.value);
    if (Array.isArray(value)) return value.map(numbers);
    if (isObject(value)) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, numbers(v)]));
    return value;
  };
  const cell = (id: unknown, value: unknown): unknown => (value instanceof LosslessNumber && typeof id === 'string' && scaled.has(id) ? value.value : numbers(value));
  const records = Array.isArray(result.records)
    ? result.records.map((record: unknown) => {
        if (Array.isArray(record)) return record.map((value, k) => cell(ids[k], value));
        if (isObject(record)) return Object.fromEntries(Object.entries(record).map(([k, v]) => [k, cell(k, v)]));
        return record;
      })
    : result.records;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(result)) out[key] = key === 'records' ? records : numbers(value);
  return out;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isErrorBody(value: unknown): value is ErrorBody {
  return isObject(value) && typeof value.__type === 'string';
}

/**
 * The base URL a redirected action points at: the `Location` up to its
 * `/api/[3/]action/`, or undefined when it names no action (a login page).
 * @example baseOf('https://data.example.org/fr/api/3/action/datastore_search?resource_id=r') // 'https://data.example.org/fr'
 */
function baseOf(location: string): string | undefined {
  let url: URL;
  try {
    url = new URL(location);
  } catch {
    return undefined;
  }
  const at = /\/api\/(?:3\/)?action\/[^/]*$/.exec(url.pathname);
  return at === null ? undefined : `${url.origin}${url.pathname.slice(0, at.index)}`;
}

/** A body cut down for a message, white space folded: a server's HTML error page reads as one line. */
function bodyExcerpt(text: string, max = 200): string {
  return excerpt(text.replace(/\s+/g, ' ').trim(), max);
}

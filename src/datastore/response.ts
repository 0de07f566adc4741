/**
 * The `result` of a `datastore_search` response as CKAN writes it
 * (docs/ckan-2.11-reference.md §4–§5, docs/ckan-2.12-reference.md §2–§3):
 * the validated request echoed in alphabetical key order, then `records`
 * (objects, lists, or CSV/TSV text), `fields`, `_links` (2.11), `total`,
 * `total_was_estimated` (2.11) and `next_page` (2.12). Shared by every
 * engine's server, so the wire is the same whatever answers.
 */
import type { CkanVersion, FieldInfo, JsonValue, RecordsFormat, Row, SearchRequest } from './types.js';
import { generate } from './generate.js';
import { parseSort } from './validate.js';
import { floatText } from './number-text.js';
import { isNumberType } from './values.js';

/** The `_links` of a 2.11 result: request paths, no host, no language segment. */
export interface ResultLinks {
  readonly start: string;
  readonly next: string;
  readonly prev?: string;
}

/** 2.12's keyset cursor: a filters fragment to merge into the next request. */
export type NextPage = { readonly _id: { readonly gt: number } } | { readonly _id: { readonly lt: number } };

/**
 * What `resultJson` writes. `fields` and `records` are the engine's (objects
 * keyed by field id); `outputFields` is the list the response shows (rank
 * columns included); a field of `outputFields` the records lack is a rank
 * column, written as `RANK`.
 */
export interface ResultParts {
  readonly ckan: CkanVersion;
  /** the validated request as CKAN echoes it, keys in alphabetical order */
  readonly echo: ReadonlyMap<string, JsonValue>;
  /** the resource's real id (an alias resolved) */
  readonly resourceId: string;
  readonly outputFields: readonly FieldInfo[];
  readonly records: readonly Row[];
  readonly recordsFormat: RecordsFormat;
  readonly total?: number;
  /** 2.11 only: `total_was_estimated`, written with `total` */
  readonly totalWasEstimated?: boolean;
  /** 2.11 only */
  readonly links?: ResultLinks;
  /** 2.12 only */
  readonly nextPage?: NextPage;
}

/**
 * The value of a rank column. The memory engine does not rank (its `q` is
 * a substring test; docs/semantics.md): every match gets what PostgreSQL's
 * `ts_rank(…, 32)` gives one matching word.
 */
export const RANK = 0.0573088;

/**
 * `result` as JSON text, keys in CKAN's order.
 * @example
 * resultJson({ ckan: '2.11', echo: new Map([['include_total', true], ['limit', 1], ['records_format', 'objects'],
 *   ['resource_id', 'r'], ['total_estimation_threshold', null]]), resourceId: 'r',
 *   outputFields: [{ id: '_id', type: 'int' }], records: [{ _id: 1 }], recordsFormat: 'objects', total: 3,
 *   totalWasEstimated: false, links: { start: '/api/action/datastore_search', next: '/api/action/datastore_search?offset=1' } })
 * // → '{"include_total":true,"limit":1,"records_format":"objects","resource_id":"r","total_estimation_threshold":null,
 * //     "records":[{"_id":1}],"fields":[{"id":"_id","type":"int"}],"_links":{…},"total":3,"total_was_estimated":false}'
 */
export function resultJson(parts: ResultParts, fieldsJson?: string): string {
  let json = '';
  for (const piece of resultPieces(parts, fieldsJson)) json += piece;
  return json;
}

/** Records per piece of `resultPieces`: a piece of wide records stays well under a megabyte. */
const RECORDS_PER_PIECE = 500;

/**
 * `result` as `resultJson` writes it, in pieces of at most
 * `RECORDS_PER_PIECE` records, so that a server can write a large answer as
 * its client reads it instead of holding all of its text.
 * @example
 * [...resultPieces(parts)].join('') === resultJson(parts) // true
 */
export function* resultPieces(parts: ResultParts, fieldsJson?: string): Generator<string, void, undefined> {
  const fields = fieldsJson ?? JSON.stringify(parts.outputFields);
  let json = '{';
  let fieldsWritten = false;
  parts.echo.forEach((value, key) => {
    if (json.length > 1) json += ',';
    if (key === 'fields') {
      // CKAN overwrites the echoed `fields` with the result's, in place.
      json += `"fields":${fields}`;
      fieldsWritten = true;
    } else if (key === 'resource_id') {
      json += `"resource_id":${jsonString(parts.resourceId)}`;
    } else {
      json += ECHO_KEYS.get(key) ?? `${jsonString(key)}:`;
      json += scalarJson(value);
    }
  });
  json += ',"records":';
  if (parts.records.length <= RECORDS_PER_PIECE) json += recordsJson(parts, 0, parts.records.length);
  else {
    yield json;
    const quote = parts.recordsFormat === 'csv' || parts.recordsFormat === 'tsv' ? '"' : '';
    yield quote || '[';
    for (let from = 0; from < parts.records.length; from += RECORDS_PER_PIECE) {
      const text = recordsJson(parts, from, Math.min(parts.records.length, from + RECORDS_PER_PIECE));
      // The inside of each piece's list (or string), joined as one.
      yield quote === '' ? `${from === 0 ? '' : ','}${text.slice(1, -1)}` : text.slice(1, -1);
    }
    json = quote || ']';
  }
  if (!fieldsWritten) json += `,"fields":${fields}`;
  const links = parts.links;
  if (links !== undefined) json += `,"_links":{"start":${jsonString(links.start)},"next":${jsonString(links.next)}${links.prev === undefined ? '' : `,"prev":${jsonString(links.prev)}`}}`;
  if (parts.total !== undefined) {
    json += `,"total":${parts.total}`;
    if (parts.ckan === '2.11') json += `,"total_was_estimated":${parts.totalWasEstimated === true}`;
  }
  if (parts.nextPage !== undefined) json += `,"next_page":${JSON.stringify(parts.nextPage)}`;
  yield `${json}}`;
}

/** The JSON text (and colon) of the keys the echo can have besides `fields` and `resource_id`. */
const ECHO_KEYS: ReadonlyMap<string, string> = new Map(
  ['distinct', 'filters', 'full_text', 'include_next_page', 'include_total', 'language', 'limit', 'offset', 'plain', 'q', 'records_format', 'sort', 'total_estimation_threshold'].map(
    (key) => [key, `"${key}":`],
  ),
);

/** `JSON.stringify(value)`, without its call for the echo's usual values (a flag, a number, a word, null). */
function scalarJson(value: JsonValue): string {
  switch (typeof value) {
    case 'boolean':
      return value ? 'true' : 'false';
    case 'string':
      return jsonString(value);
    case 'number':
      return value - value === 0 ? `${value}` : 'null';
    default:
      return value === null ? 'null' : JSON.stringify(value);
  }
}

/** `records[from, to)` in the requested format: a JSON list, or a JSON string of CSV/TSV text. */
function recordsJson(parts: ResultParts, from: number, to: number): string {
  switch (parts.recordsFormat) {
    case 'objects':
      return objectsWriter(parts.outputFields, parts.ckan)(parts.records, from, to);
    case 'lists':
      return listsJson(parts, from, to);
    case 'csv':
      return JSON.stringify(delimited(parts, ',', from, to));
    case 'tsv':
      return JSON.stringify(delimited(parts, '\t', from, to));
  }
}

/** Writes `records[from, to)` as a JSON list of objects, each value as `valueJson` writes it. */
type ObjectsWriter = (records: readonly Row[], from: number, to: number) => string;

/** The writer of each field list (a served table's list lives as long as the table), per version. */
const writersByFields: Record<CkanVersion, WeakMap<readonly FieldInfo[], ObjectsWriter>> = { '2.11': new WeakMap(), '2.12': new WeakMap() };

/**
 * The objects writer of a field list: a function generated for the list
 * (each value read by a property load of its literal name and written by
 * its type), which writes what the field-by-field `objectsJson` writes. A
 * page of 10 records of 7 fields took about half the time of one
 * `JSON.stringify` of the page (BENCHMARKS.md, Server), which also needed a
 * check of every value first to know that it would write the same.
 * @example
 * objectsWriter([{ id: '_id', type: 'int' }, { id: 'n', type: 'numeric' }], '2.11')([{ _id: 1, n: '7.50' }], 0, 1)
 * // → '[{"_id":1,"n":7.50}]'
 */
export function objectsWriter(fields: readonly FieldInfo[], ckan: CkanVersion): ObjectsWriter {
  const known = writersByFields[ckan].get(fields);
  if (known !== undefined) return known;
  const helpers = ckan === '2.11' ? HELPERS_211 : HELPERS_212;
  // a value by its kind: text by the field's type, a finite number as its digits (as JSON.stringify), the rest as valueJson
  const value = (f: FieldInfo, k: number): string => {
    const name = JSON.stringify(f.id);
    const read = f.id in Object.prototype ? `(Object.hasOwn(r, ${name}) ? r[${name}] : undefined)` : `r[${name}]`;
    const text = isNumberType(f.type) ? 'N(v)' : f.type === 'timestamp' ? 'T(v)' : 'S(v)';
    const missing = f.type === 'float' ? `(Object.hasOwn(r, ${name}) ? "null" : ${JSON.stringify(String(RANK))})` : '"null"';
    const key = JSON.stringify(`${k === 0 ? '{' : ','}${jsonString(f.id)}:`);
    // a float8 as PostgreSQL's JSON writes it (`1e-07`, `2.5e+15`), which JavaScript writes otherwise
    const number = f.type === 'float8' ? 'F(v)' : '"" + v';
    return `v = ${read}; out += ${key}; out += typeof v === "string" ? ${text} : typeof v === "number" ? (v - v === 0 ? ${number} : "null") : v === null ? "null" : v === undefined ? ${missing} : X(v);`;
  };
  const body =
    `let out = "["; for (let j = from; j < to; j++) { const r = rs[j]; let v; if (j > from) out += ",";` +
    `${fields.length === 0 ? 'out += "{";' : fields.map(value).join(' ')} out += "}"; } return out + "]";`;
  const generated = generate<(rs: readonly Row[], from: number, to: number, S: Text, N: Text, T: Text, X: (v: unknown) => string, F: (v: number) => string) => string>(
    ['rs', 'from', 'to', 'S', 'N', 'T', 'X', 'F'],
    body,
  );
  const writer: ObjectsWriter =
    generated === undefined
      ? (records, from, to) => objectsJson(fields, records, ckan, from, to)
      : (records, from, to) => generated(records, from, to, jsonString, numberText, helpers.timestamp, anyJson, floatText);
  writersByFields[ckan].set(fields, writer);
  return writer;
}

type Text = (value: string) => string;

/** A text in a number field: as written when it is a JSON number (an exact big number or decimal), else quoted. */
function numberText(value: string): string {
  return isJsonNumber(value) ? value : jsonString(value);
}

const HELPERS_211 = { timestamp: (value: string): string => jsonString(timestampText(value, '2.11')) };
const HELPERS_212 = { timestamp: (value: string): string => jsonString(timestampText(value, '2.12')) };

function anyJson(value: unknown): string {
  return JSON.stringify(value);
}

/**
 * The field-by-field writer of `records[from, to)` as a JSON list of
 * objects: what the generated writer writes, where code cannot be generated.
 * @example
 * objectsJson([{ id: 'n', type: 'numeric' }], [{ n: '7.50' }], '2.11', 0, 1) // → '[{"n":7.50}]'
 */
export function objectsJson(fields: readonly FieldInfo[], records: readonly Row[], ckan: CkanVersion, from: number, to: number): string {
  const keys = fields.map((f) => `${jsonString(f.id)}:`);
  let out = '[';
  for (let r = from; r < to; r++) {
    const record = records[r] as Row;
    if (r > from) out += ',';
    out += '{';
    for (let k = 0; k < fields.length; k++) {
      if (k > 0) out += ',';
      out += keys[k] as string;
      out += valueJson(fields[k] as FieldInfo, record, ckan);
    }
    out += '}';
  }
  return `${out}]`;
}

function listsJson(parts: ResultParts, from: number, to: number): string {
  let out = '[';
  for (let r = from; r < to; r++) {
    const record = parts.records[r] as Row;
    if (r > from) out += ',';
    out += '[';
    for (let k = 0; k < parts.outputFields.length; k++) {
      if (k > 0) out += ',';
      out += valueJson(parts.outputFields[k] as FieldInfo, record, parts.ckan);
    }
    out += ']';
  }
  return `${out}]`;
}

/** One value as CKAN's JSON writes it: exact integers and decimals kept as written, timestamps as `to_char` gives them. */
function valueJson(field: FieldInfo, record: Row, ckan: CkanVersion): string {
  if (!Object.hasOwn(record, field.id)) return field.type === 'float' ? String(RANK) : 'null';
  const value = record[field.id];
  if (value === undefined || value === null) return 'null';
  if (typeof value === 'string') {
    if (isNumberType(field.type) && isJsonNumber(value)) return value;
    if (field.type === 'timestamp') return jsonString(timestampText(value, ckan));
    return jsonString(value);
  }
  if (typeof value === 'number' && field.type === 'float8' && Number.isFinite(value)) return floatText(value);
  return JSON.stringify(value);
}


const JSON_NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;

/**
 * True for a text that is a JSON number (and short enough to be one a
 * database wrote): such a text in a number field is written as it is.
 * @example isJsonNumber('7.50') // → true
 */
export function isJsonNumber(text: string): boolean {
  return text.length < 400 && JSON_NUMBER.test(text);
}

const TIMESTAMP = /^(\d{4}-\d{2}-\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d+))?)?)?/;

/**
 * A timestamp as CKAN writes it: `YYYY-MM-DDTHH:MM:SS` (2.11), with `.mmm`
 * milliseconds in 2.12 (`to_char(…, 'YYYY-MM-DD"T"HH24:MI:SS.MS')`). A zone
 * is dropped, as PostgreSQL's `timestamp` drops it on input.
 * @example
 * timestampText('2023-09-07', '2.12') // → "2023-09-07T00:00:00.000"
 */
export function timestampText(value: string, ckan: CkanVersion): string {
  const m = TIMESTAMP.exec(value);
  if (m === null) return value;
  const seconds = `${m[1]}T${m[2] ?? '00'}:${m[3] ?? '00'}:${m[4] ?? '00'}`;
  return ckan === '2.11' ? seconds : `${seconds}.${(m[5] ?? '').padEnd(3, '0').slice(0, 3)}`;
}

/**
 * Records as CKAN's `records_format: csv` (or `tsv`) writes them: PostgreSQL's
 * `COPY … csv` text, a line per record, no header (the dump's body).
 * @example delimitedText([{ id: 'a', type: 'text' }], [{ a: 'x,y' }], '2.11', ',') // → '"x,y"\n'
 */
export function delimitedText(fields: readonly FieldInfo[], records: readonly Row[], ckan: CkanVersion, delimiter: ',' | '\t'): string {
  let out = '';
  for (const record of records) {
    for (let k = 0; k < fields.length; k++) {
      if (k > 0) out += delimiter;
      out += cellText(fields[k] as FieldInfo, record, ckan, delimiter);
    }
    out += '\n';
  }
  return out;
}

/**
 * One record as a JSON list, each value as CKAN's JSON writes it (the dump's `json` records).
 * @example recordListJson([{ id: '_id', type: 'int' }, { id: 'a', type: 'text' }], { _id: 1, a: 'x' }, '2.11') // → '[1,"x"]'
 */
export function recordListJson(fields: readonly FieldInfo[], record: Row, ckan: CkanVersion): string {
  let out = '[';
  for (let k = 0; k < fields.length; k++) {
    if (k > 0) out += ',';
    out += valueJson(fields[k] as FieldInfo, record, ckan);
  }
  return `${out}]`;
}

/**
 * One value as CKAN's JSON writes it (exact numbers as written, timestamps as `to_char` gives them), or undefined for none.
 * @example valueText({ id: 't', type: 'timestamp' }, { t: '2023-09-07' }, '2.12') // → '"2023-09-07T00:00:00.000"'
 */
export function valueText(field: FieldInfo, record: Row, ckan: CkanVersion): string {
  return valueJson(field, record, ckan);
}

/** PostgreSQL's `COPY … csv` text of a page: no header, `\n` after each line. */
function delimited(parts: ResultParts, delimiter: string, from: number, to: number): string {
  let out = '';
  for (let r = from; r < to; r++) {
    const record = parts.records[r] as Row;
    for (let k = 0; k < parts.outputFields.length; k++) {
      if (k > 0) out += delimiter;
      out += cellText(parts.outputFields[k] as FieldInfo, record, parts.ckan, delimiter);
    }
    out += '\n';
  }
  return out;
}

function cellText(field: FieldInfo, record: Row, ckan: CkanVersion, delimiter: string): string {
  if (!Object.hasOwn(record, field.id)) return field.type === 'float' ? String(RANK) : '';
  const value = record[field.id];
  const structured = field.type === 'json' || field.type.startsWith('_');
  // CKAN selects json and array columns through `coalesce(…, 'null')`: a null is the text `null`.
  if (value === undefined || value === null) return structured ? 'null' : '';
  let text: string;
  if (structured || typeof value === 'object') text = JSON.stringify(value);
  else if (typeof value === 'boolean') text = value ? 't' : 'f';
  else if (typeof value === 'number') text = field.type === 'float8' || field.type === 'float' ? floatText(value) : String(value);
  else if (field.type === 'timestamp') text = timestampText(value, ckan);
  else text = value;
  return csvQuote(text, delimiter);
}


/** A CSV field quoted as `COPY … csv` quotes: when it holds the delimiter, a quote, CR or LF, or is empty. */
function csvQuote(text: string, delimiter: string): string {
  if (text === '' || text === '\\.' || text.includes(delimiter) || text.includes('"') || text.includes('\n') || text.includes('\r')) {
    return `"${text.replaceAll('"', '""')}"`;
  }
  return text;
}

/**
 * 2.12's `next_page`: present when `include_next_page` is set, the sort is
 * exactly one `_id` clause (no `sort`, `q` or `distinct` means `_id asc`)
 * and the page has records; `{"_id": {"gt": max}}` ascending, `{"_id":
 * {"lt": min}}` descending (also with `nulls last`, where CKAN picks `gt`:
 * a documented fix). `ids` are the page's `_id`s.
 * @example
 * nextPageOf({ resource_id: 'r', include_next_page: true, limit: 2 }, [1, 2]) // → { _id: { gt: 2 } }
 */
export function nextPageOf(request: SearchRequest, ids: readonly number[]): NextPage | undefined {
  if (request.include_next_page !== true || ids.length === 0) return undefined;
  const direction = keysetDirection(request);
  if (direction === undefined) return undefined;
  let best = ids[0] as number;
  for (const id of ids) best = direction === 'asc' ? Math.max(best, id) : Math.min(best, id);
  return direction === 'asc' ? { _id: { gt: best } } : { _id: { lt: best } };
}

/** `asc`/`desc` when the request's effective sort is one `_id` clause, else `undefined`. */
export function keysetDirection(request: SearchRequest): 'asc' | 'desc' | undefined {
  if (request.sort === undefined) {
    const searching = request.q !== undefined || request.full_text !== undefined;
    return searching || request.distinct === true ? undefined : 'asc';
  }
  const items = parseSort(request.sort);
  if (items.length !== 1 || items[0]?.field !== '_id') return undefined;
  return items[0].direction;
}

/**
 * JSON text of a string: only quoted when it holds nothing JSON escapes
 * (one `JSON.stringify` costs more than this check on a short text).
 */
export function jsonString(text: string): string {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x20 || c === 0x22 || c === 0x5c || (c >= 0xd800 && c <= 0xdfff)) return JSON.stringify(text);
  }
  return `"${text}"`;
}

/**
 * Python's `urllib.parse.parse_qsl` then `urlencode` of a query string, as
 * CKAN 2.11 rebuilds `_links`: blank values dropped, a repeated key keeps
 * its last value at its first place, `offset` removed from `start`, set in
 * `next` and `prev` (`prev` only when `offset - limit > 0`).
 * @example
 * linksFor('/api/action/datastore_search', 'resource_id=x&limit=5&offset=10', 10, 5)
 * // → { start: "/api/action/datastore_search?resource_id=x&limit=5",
 * //     next: "/api/action/datastore_search?resource_id=x&limit=5&offset=15",
 * //     prev: "/api/action/datastore_search?resource_id=x&limit=5&offset=5" }
 */
export function linksFor(path: string, query: string, offset: number, limit: number): ResultLinks {
  // A POST's parameters are in its body: the links hold only the offset (what the general way below gives then).
  if (query === '') {
    const links: { start: string; next: string; prev?: string } = { start: path, next: `${path}?offset=${pyQuotePlus(String(offset + limit))}` };
    if (offset - limit > 0) links.prev = `${path}?offset=${pyQuotePlus(String(offset - limit))}`;
    return links;
  }
  const args = new Map<string, string>();
  for (const pair of query.split('&')) {
    if (pair === '') continue;
    const eq = pair.indexOf('=');
    if (eq === -1) continue; // parse_qsl drops a pair without `=`
    const value = pyUnquote(pair.slice(eq + 1));
    if (value === '') continue;
    args.set(pyUnquote(pair.slice(0, eq)), value);
  }
  const encode = (map: ReadonlyMap<string, string | number>): string =>
    [...map].map(([k, v]) => `${pyQuotePlus(k)}=${pyQuotePlus(String(v))}`).join('&');
  const withQuery = (q: string): string => (q === '' ? path : `${path}?${q}`);
  const start = new Map(args);
  start.delete('offset');
  const next = new Map<string, string | number>(args);
  next.set('offset', offset + limit);
  const links: { start: string; next: string; prev?: string } = { start: withQuery(encode(start)), next: withQuery(encode(next)) };
  if (offset - limit > 0) {
    const prev = new Map<string, string | number>(args);
    prev.set('offset', offset - limit);
    links.prev = withQuery(encode(prev));
  }
  return links;
}

/** Python's `unquote_plus`: `+` is a space, `%XX` bytes decoded as UTF-8 (bad bytes replaced). */
function pyUnquote(text: string): string {
  const spaced = text.replaceAll('+', ' ');
  if (!spaced.includes('%')) return spaced;
  const bytes: number[] = [];
  for (let i = 0; i < spaced.length; i++) {
    const c = spaced.charCodeAt(i);
    if (c === 37 && /^[0-9a-fA-F]{2}$/.test(spaced.slice(i + 1, i + 3))) {
      bytes.push(parseInt(spaced.slice(i + 1, i + 3), 16));
      i += 2;
    } else {
      for (const b of Buffer.from(spaced[i] as string, 'utf8')) bytes.push(b);
    }
  }
  return Buffer.from(bytes).toString('utf8');
}

/** Characters `quote_plus` never changes. */
const UNRESERVED = /^[A-Za-z0-9_.~-]*$/;

/** Python's `quote_plus` (what `urlencode` uses): letters, digits and `_.-~` kept, spaces as `+`. */
function pyQuotePlus(text: string): string {
  // an offset or a plain word (each `_links` of a POST) reads the same quoted
  if (UNRESERVED.test(text)) return text;
  return encodeURIComponent(text)
    .replace(/[!'()*]/g, (c) => `%${(c.charCodeAt(0) as number).toString(16).toUpperCase()}`)
    .replaceAll('%20', '+');
}

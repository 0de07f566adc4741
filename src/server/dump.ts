/**
 * `GET /datastore/dump/<id>`: a whole resource (or a search of it) as one
 * file, streamed page by page, as CKAN 2.11.5's `ckanext/datastore/blueprint.py`
 * (`dump`, `dump_to`) and `writer.py` write it: `format` csv (default),
 * tsv, json (`{"fields": […], "records": [[…], …]}`, lists) or xml; `bom`;
 * `offset`, `limit`, `filters`, `q`, `distinct`, `plain`, `language`,
 * `fields` and `sort` (default `_id`); `Content-Disposition: attachment;
 * filename="<id>.<format>"`. A missing resource, and one the token does not
 * open, is 404. On 2.12 it pages by `_id` keyset where the sort allows
 * (CKAN 2.12's `include_next_page`), else by offset as 2.11 does.
 */
import type { CkanVersion, FieldInfo, JsonValue, Row, SearchRequest, SearchResult } from '../datastore/types.js';
import { delimitedText, recordListJson } from '../datastore/response.js';
import { DatastoreError } from '../errors.js';
import type { Engine } from '../engine/types.js';
import { TABLE_METADATA } from './metadata.js';

/** CKAN's `PAGINATE_BY`: records per page of a dump, unless `rows_max` is lower. */
export const PAGINATE_BY = 32_000;

export const DUMP_FORMATS = ['csv', 'tsv', 'json', 'xml'] as const;
export type DumpFormat = (typeof DUMP_FORMATS)[number];

const CONTENT_TYPES: Readonly<Record<DumpFormat, string>> = {
  csv: 'text/csv; charset=utf-8',
  tsv: 'text/tab-separated-values; charset=utf-8',
  json: 'application/json; charset=utf-8',
  xml: 'text/xml; charset=utf-8',
};

/** What the API sends for a dump: a status, a type, headers, and the body as it is made. */
export interface DumpAnswer {
  readonly status: number;
  readonly type: string;
  readonly headers?: Readonly<Record<string, string>>;
  readonly text: string;
  /** the rest of the body, page by page */
  readonly stream?: AsyncIterable<string>;
}

/** Who asks, and how the server answers. */
export interface DumpSettings {
  readonly ckan: CkanVersion;
  /** the server's cap on `limit` (`rows_max`) */
  readonly maxLimit: number;
  /** whether the asker may read the resource (a private one needs a token) */
  readonly readable: (id: string) => boolean;
}

/**
 * The path of a dump (`/datastore/dump/<id>`, behind a language segment or
 * not), or undefined.
 * @example dumpResourceOf('/en/datastore/dump/courses', ['en']) // → 'courses'
 */
export function dumpResourceOf(path: string, languages: readonly string[]): string | undefined {
  const match = /^(?:\/([^/]+))?\/datastore\/dump\/([^/]+)$/.exec(path);
  if (match === null) return undefined;
  if (match[1] !== undefined && !languages.includes(match[1])) return undefined;
  try {
    return decodeURIComponent(match[2] as string);
  } catch {
    return match[2];
  }
}

/** A 400 as Flask's `abort(400, …)` answers it. */
function badRequest(message: string): DumpAnswer {
  return { status: 400, type: 'text/html; charset=utf-8', text: errorPage(400, 'Bad Request', message) };
}

function notFound(): DumpAnswer {
  return { status: 404, type: 'text/html; charset=utf-8', text: errorPage(404, 'Not Found', 'DataStore resource not found') };
}

function errorPage(status: number, title: string, message: string): string {
  const escaped = message.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');
  return `<!doctype html>\n<html lang=en>\n<title>${status} ${title}</title>\n<h1>${title}</h1>\n<p>${escaped}</p>\n`;
}

const TRUE_WORDS = ['true', 'yes', 'on', '1', 't', 'y'];
const FALSE_WORDS = ['false', 'no', 'off', '0', 'f', 'n'];

/** The dump's parameters as CKAN's `dump_schema` reads the query string; a message per bad one. */
function readParams(query: URLSearchParams): { request: Partial<SearchRequest>; format: DumpFormat; bom: boolean; offset: number; limit: number | undefined } | { errors: string[] } {
  const errors: string[] = [];
  const get = (key: string): string | undefined => query.get(key) ?? undefined;
  const integer = (key: string): number | undefined => {
    const text = get(key);
    if (text === undefined) return undefined;
    if (!/^\s*-?\d+\s*$/.test(text)) {
      errors.push(`${key}: Invalid integer`);
      return undefined;
    }
    return Number(text);
  };
  const boolean = (key: string): boolean | undefined => {
    const text = get(key)?.trim().toLowerCase();
    if (text === undefined) return undefined;
    if (TRUE_WORDS.includes(text)) return true;
    if (FALSE_WORDS.includes(text)) return false;
    errors.push(`${key}: Value must be one of: true, false`);
    return undefined;
  };
  const offset = integer('offset') ?? 0;
  const limit = integer('limit');
  const format = (get('format') ?? 'csv') as DumpFormat;
  if (!DUMP_FORMATS.includes(format)) errors.push(`format: Value must be one of ('csv', 'tsv', 'json', 'xml')`);
  const bom = boolean('bom') ?? false;
  const request: Record<string, unknown> = {};
  const filters = get('filters');
  if (filters !== undefined) {
    try {
      request.filters = JSON.parse(filters);
    } catch {
      errors.push('filters: Cannot parse JSON');
    }
  }
  const q = get('q');
  if (q !== undefined) {
    let parsed: unknown = q;
    if (/^\s*\{/.test(q)) {
      try {
        parsed = JSON.parse(q);
      } catch {
        parsed = q;
      }
    }
    request.q = parsed;
  }
  const distinct = boolean('distinct');
  if (distinct !== undefined) request.distinct = distinct;
  const plain = boolean('plain');
  if (plain !== undefined) request.plain = plain;
  const language = get('language');
  if (language !== undefined) request.language = language;
  const fields = query.getAll('fields');
  if (fields.length > 0) request.fields = fields.length === 1 ? (fields[0] as string).split(',').map((name) => name.trim()) : fields;
  const sorts = query.getAll('sort');
  request.sort = sorts.length === 0 ? '_id' : sorts.join(',');
  if (errors.length > 0) return { errors };
  return { request: request as Partial<SearchRequest>, format, bom, offset, limit };
}

/**
 * The dump of `id` for the query string `query`.
 * @example
 * const answer = await answerDump(engine, 'courses', new URLSearchParams('format=json'), settings, undefined);
 * // → { status: 200, type: 'application/json; charset=utf-8', headers: { 'content-disposition': 'attachment; filename="<id>.json"' }, … }
 */
export async function answerDump(engine: Engine, id: string, query: URLSearchParams, settings: DumpSettings, signal: AbortSignal | undefined): Promise<DumpAnswer> {
  const params = readParams(query);
  if ('errors' in params) return badRequest(params.errors.join('\n'));
  const read = params;
  const resource = id === TABLE_METADATA ? undefined : await engine.resource(id);
  if (resource === undefined || !settings.readable(resource.id)) return notFound();
  const pageSize = Math.min(PAGINATE_BY, settings.maxLimit);
  const sort = read.request.sort ?? '_id';
  // CKAN 2.12 pages by keyset when the order is `_id`'s and `_id` is written; otherwise by offset.
  const keyset = settings.ckan === '2.12' && /^\s*"?_id"?(\s+asc)?\s*$/i.test(sort) && (read.request.fields === undefined || read.request.fields.includes('_id'));
  // A dump's columns are the table's (or those asked for): a search adds no rank column to it.
  const columns = read.request.fields ?? (read.request.q === undefined ? undefined : resource.fields.map((field) => field.id));
  const base: SearchRequest = { ...read.request, ...(columns === undefined ? {} : { fields: columns }), resource_id: resource.id, sort, include_total: false } as SearchRequest;
  const options = { ckan: settings.ckan, maxLimit: settings.maxLimit, ...(signal === undefined ? {} : { signal }) };
  const page = (offset: number, remaining: number | undefined, after: number | undefined) =>
    engine.search(
      {
        ...base,
        ...(after === undefined ? {} : { filters: { ...(base.filters as Record<string, JsonValue> | undefined), _id: { gt: after } } }),
        limit: remaining === undefined ? pageSize : Math.min(pageSize, remaining),
        ...(after === undefined && offset !== 0 ? { offset } : {}),
      },
      options,
    );
  let first: SearchResult;
  try {
    first = await page(read.offset, read.limit, undefined);
  } catch (error) {
    if (error instanceof DatastoreError && error.code === 'NOT_FOUND') return notFound();
    if (error instanceof DatastoreError && error.status !== undefined && error.status < 500) {
      return { status: error.status, type: 'text/plain; charset=utf-8', text: `${error.message}\n` };
    }
    throw error;
  }
  const fields = first.fields;
  const write = writerFor(read.format, fields, settings.ckan);
  const head = (read.bom ? '\ufeff' : '') + write.head();
  async function* rest(): AsyncGenerator<string, void, undefined> {
    let result = first;
    let offset = read.offset;
    let remaining = read.limit;
    let written = 0;
    for (;;) {
      if (remaining !== undefined && remaining <= 0) break;
      const records = result.records;
      yield write.records(records, written);
      written += records.length;
      const served = result.limit;
      if (records.length < served || records.length === 0) break;
      offset += records.length;
      if (remaining !== undefined) {
        remaining -= records.length;
        if (remaining <= 0) break;
      }
      if (signal?.aborted === true) return;
      const last = records[records.length - 1]?._id;
      result = await page(offset, remaining, keyset && typeof last === 'number' ? last : undefined);
    }
    yield write.end();
  }
  return {
    status: 200,
    type: CONTENT_TYPES[read.format],
    headers: { 'content-disposition': `attachment; filename="${resource.id}.${read.format}"` },
    text: head,
    stream: rest(),
  };
}

interface Writer {
  head(): string;
  /** records, `before` of them written already */
  records(records: readonly Row[], before: number): string;
  end(): string;
}

function writerFor(format: DumpFormat, fields: readonly FieldInfo[], ckan: CkanVersion): Writer {
  switch (format) {
    case 'csv':
    case 'tsv': {
      const delimiter = format === 'csv' ? ',' : '\t';
      return {
        head: () => `${fields.map((field) => pythonCsvCell(field.id, delimiter)).join(delimiter)}\r\n`,
        records: (records) => delimitedText(fields, records, ckan, delimiter),
        end: () => '',
      };
    }
    case 'json':
      return {
        head: () => `{\n  "fields": ${JSON.stringify(fields)},\n  "records": [`,
        records: (records, before) => {
          let out = '';
          records.forEach((record, i) => {
            out += before + i === 0 ? '\n    ' : ',\n    ';
            out += recordListJson(fields, record, ckan);
          });
          return out;
        },
        end: () => '\n]}\n',
      };
    case 'xml': {
      const columns = fields.map((field) => field.id);
      const withId = columns[0] === '_id';
      const shown = withId ? columns.slice(1) : columns;
      const names = ckan === '2.12' ? safeElementNames(shown) : new Map(shown.map((name) => [name, name]));
      return {
        head: () => '<data xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">\n',
        records: (records) => {
          let out = '';
          for (const record of records) {
            out += withId ? `<row _id="${xmlAttribute(pythonText(record._id ?? null))}">` : '<row>';
            for (const column of shown) out += xmlNode(names.get(column) as string, record[column] ?? null);
            out += '</row>\n';
          }
          return out;
        },
        end: () => '</data>\n',
      };
    }
  }
}

/** A header cell as Python's `csv.writer` (QUOTE_MINIMAL) writes it. */
function pythonCsvCell(text: string, delimiter: string): string {
  return text.includes(delimiter) || text.includes('"') || text.includes('\r') || text.includes('\n') ? `"${text.replaceAll('"', '""')}"` : text;
}

/** `str(value)` of a JSON value as Python reads it (`True`, `1`, `2.5`). */
function pythonText(value: JsonValue): string {
  if (value === true) return 'True';
  if (value === false) return 'False';
  return String(value);
}

/** One element as CKAN's `XMLWriter._insert_node` builds it with ElementTree. */
function xmlNode(name: string, value: JsonValue, key?: string): string {
  const keyAttribute = key === undefined ? '' : ` key="${xmlAttribute(key)}"`;
  if (value === null) return `<${name} xsi:nil="true"${keyAttribute} />`;
  if (Array.isArray(value) || typeof value === 'object') {
    const entries: [string, JsonValue][] = Array.isArray(value) ? value.map((item, i) => [String(i), item]) : Object.entries(value as Record<string, JsonValue>);
    if (entries.length === 0) return `<${name}${keyAttribute} />`;
    return `<${name}${keyAttribute}>${entries.map(([k, v]) => xmlNode('value', v, k)).join('')}</${name}>`;
  }
  const text = pythonText(value);
  return text === '' ? `<${name}${keyAttribute} />` : `<${name}${keyAttribute}>${xmlText(text)}</${name}>`;
}

function xmlText(text: string): string {
  return text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');
}

function xmlAttribute(text: string): string {
  return xmlText(text).replaceAll('"', '&quot;').replaceAll('\n', '&#10;');
}

/**
 * CKAN 2.12's XML element names: NFC, no leading `xml` or digits, spaces
 * as `_`, only letters, digits, `_`, `.` and `-`, a letter or `_` first,
 * made unique with `_0`, `_1`, ….
 */
function safeElementNames(columns: readonly string[]): Map<string, string> {
  const names = new Map<string, string>();
  const used = new Set<string>();
  for (const column of columns) {
    const name = column
      .normalize('NFC')
      .replace(/^(\d*xml\d*|\d+)/i, '')
      .replace(/\s+/g, '_')
      .replace(/[^\p{L}\p{N}_.-]/gu, '')
      .replace(/^[\d.-]+/, '');
    let unique = name;
    for (let suffix = 0; used.has(unique); suffix++) unique = `${name}_${suffix}`;
    used.add(unique);
    names.set(column, unique);
  }
  return names;
}

/**
 * Declared types: what a data file's columns are, said beside it rather than
 * guessed, so a local table is a portal's table (docs/portals-reference.md §3).
 *
 * - CKAN's own `datastore_create` fields (`[{id, type, info}]`), in a
 *   `--fields FILE` or a `<name>.fields.json` beside the data file; the
 *   object forms (`{resource_id, aliases, fields, primary_key}` as
 *   `datastore_create` takes it, `{meta, fields}` as `datastore_info` gives
 *   it) also carry the resource's id and aliases;
 * - a Frictionless Table Schema (`{fields: [{name, type, title, description}], primaryKey}`),
 *   alone or inside a `datapackage.json`;
 * - `--infer ckql|xloader|datapusher`: how columns nobody declared are typed.
 *
 * The same declarations are read by the memory loader (which converts each
 * cell as PostgreSQL would read it) and by the PostgreSQL loaders (which let
 * PostgreSQL cast), so every engine answers alike. This file reads texts and
 * JSON only (the memory core's part, docs/engines.md); the files are read by
 * its Node edge, src/engine/node/declared-files.ts.
 */
import type { FieldDictionary, FieldType, JsonValue, ScalarFieldType } from '../datastore/types.js';
import { toolError } from '../errors.js';
import { fieldTypeOf, SUPPORTED_FIELD_TYPES } from '../datastore/field-types.js';

export { fieldTypeOf } from '../datastore/field-types.js';

/** How columns nobody declared get their types. */
export type InferMode = 'ckql' | 'xloader' | 'datapusher';

export const INFER_MODES: readonly InferMode[] = ['ckql', 'xloader', 'datapusher'];

/** A column as declared: its name, its type when declared, its data dictionary. */
export interface DeclaredField {
  readonly id: string;
  readonly type?: FieldType;
  readonly info?: FieldDictionary;
}

/** What is declared about one data file. */
export interface Declaration {
  /** the file that says it, for messages */
  readonly source: string;
  readonly fields: readonly DeclaredField[];
  /** the resource's id, when the declaration names it (an export's fields file does) */
  readonly resourceId?: string;
  readonly aliases?: readonly string[];
  readonly primaryKey?: readonly string[];
}

function typeOf(name: unknown, where: string, field: string): FieldType {
  const type = typeof name === 'string' ? fieldTypeOf(name) : undefined;
  if (type === undefined) {
    throw toolError('DATA_INVALID', [where, `the field ${JSON.stringify(field)} has the type ${JSON.stringify(name)}, which ckql's engines do not hold; use ${SUPPORTED_FIELD_TYPES}`], { file: where });
  }
  return type;
}

/**
 * A Frictionless Table Schema type as a CKAN type (frictionless-py's CKAN
 * storage and ckanext-validation agree on these): string → text, integer →
 * int8, number → numeric, boolean → bool, date → date, datetime →
 * timestamp, object → json, array → _text; any other (time, year,
 * duration, geopoint, any) → text.
 * @example tableSchemaType('datetime') // → 'timestamp'
 */
export function tableSchemaType(type: string | undefined): FieldType {
  switch (type) {
    case 'integer':
      return 'int8';
    case 'number':
      return 'numeric';
    case 'boolean':
      return 'bool';
    case 'date':
      return 'date';
    case 'datetime':
      return 'timestamp';
    case 'object':
    case 'geojson':
      return 'json';
    case 'array':
      return '_text';
    default:
      return 'text';
  }
}

/**
 * A fields file's text as a declaration: a JSON list of CKAN fields, a
 * `datastore_create` or `datastore_info` object, or a Table Schema. Every
 * mistake is `DATA_INVALID` naming `source` (the file) and the field.
 * @example
 * declarationFromText('[{"id": "year", "type": "int", "info": {"label": "Year"}}]', 'measurements.fields.json')
 * // → { source: 'measurements.fields.json', fields: [{ id: 'year', type: 'int4', info: { label: 'Year' } }] }
 */
export function declarationFromText(text: string, source: string): Declaration {
  return declarationOf(jsonOfText(text, source), source);
}

/** A JSON file's text parsed (a byte-order mark dropped); bad JSON is `DATA_INVALID` naming `source`. */
export function jsonOfText(text: string, source: string): unknown {
  try {
    return JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
  } catch (error) {
    throw toolError('DATA_INVALID', [source, `not valid JSON: ${(error as Error).message}`], { file: source, cause: error });
  }
}

/**
 * A declaration from parsed JSON (see `readDeclaration`).
 * @example declarationOf([{ id: 'year', type: 'int' }], 'x.fields.json').fields // → [{ id: 'year', type: 'int4' }]
 */
export function declarationOf(json: unknown, source: string): Declaration {
  const list = Array.isArray(json) ? json : isObject(json) ? json.fields : undefined;
  if (!Array.isArray(list)) {
    throw toolError('DATA_INVALID', [source, 'a fields file holds a list of fields ([{"id": …, "type": …, "info": {…}}]), an object with "fields", or a Table Schema'], { file: source });
  }
  const schema = list.some((field) => isObject(field) && typeof field.name === 'string' && field.id === undefined);
  const fields = schema ? list.map((field, i) => tableSchemaField(field, i, source)) : list.map((field, i) => ckanField(field, i, source));
  const seen = new Set<string>();
  for (const field of fields) {
    if (seen.has(field.id)) throw toolError('DATA_INVALID', [source, `the field ${JSON.stringify(field.id)} is declared twice`], { file: source });
    seen.add(field.id);
  }
  const object = isObject(json) ? json : {};
  const meta = isObject(object.meta) ? object.meta : {};
  const resourceId = textOr(object.resource_id) ?? textOr(meta.id);
  const aliases = listOf(object.aliases ?? meta.aliases, source, 'aliases');
  const primaryKey = listOf(schema ? object.primaryKey : object.primary_key, source, schema ? 'primaryKey' : 'primary_key');
  for (const key of primaryKey ?? []) {
    if (!seen.has(key)) throw toolError('DATA_INVALID', [source, `the primary key names ${JSON.stringify(key)}, which is not a declared field`], { file: source });
  }
  return {
    source,
    fields: fields.filter((field) => field.id !== '_id'),
    ...(resourceId === undefined ? {} : { resourceId }),
    ...(aliases === undefined ? {} : { aliases }),
    ...(primaryKey === undefined || primaryKey.length === 0 ? {} : { primaryKey }),
  };
}

function ckanField(value: unknown, index: number, source: string): DeclaredField {
  if (!isObject(value) || typeof value.id !== 'string' || value.id === '') {
    throw toolError('DATA_INVALID', [source, `field ${index + 1} is not a field with an "id" (CKAN's {"id": …, "type": …, "info": {…}})`], { file: source });
  }
  const id = value.id;
  // datastore_info's schema.native_type says the column's type where `type` is missing.
  const typeName = value.type ?? (isObject(value.schema) ? value.schema.native_type : undefined);
  const info = value.info;
  if (info !== undefined && info !== null && !isObject(info)) {
    throw toolError('DATA_INVALID', [source, `the info of ${JSON.stringify(id)} must be an object ({"label": …, "notes": …})`], { file: source });
  }
  return {
    id,
    ...(typeName === undefined || typeName === null || id === '_id' ? {} : { type: typeOf(typeName, source, id) }),
    ...(isObject(info) && Object.keys(info).length > 0 ? { info: info as FieldDictionary } : {}),
  };
}

function tableSchemaField(value: unknown, index: number, source: string): DeclaredField {
  if (!isObject(value) || typeof value.name !== 'string' || value.name === '') {
    throw toolError('DATA_INVALID', [source, `field ${index + 1} of the Table Schema has no "name"`], { file: source });
  }
  const info: Record<string, JsonValue> = {};
  if (typeof value.title === 'string') info.label = value.title;
  if (typeof value.description === 'string') info.notes = value.description;
  return {
    id: value.name,
    type: tableSchemaType(typeof value.type === 'string' ? value.type : undefined),
    ...(Object.keys(info).length > 0 ? { info } : {}),
  };
}

/**
 * A CKAN package name from a folder or package name: lower case, runs of
 * other characters as `-`, at least two characters (CKAN's rule).
 * @example packageName('Air Quality 2023') // → 'air-quality-2023'
 */
export function packageName(text: string): string {
  const name = text.toLowerCase().replace(/[^a-z0-9_-]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 100);
  return name.length >= 2 ? name : `${name || 'data'}-set`.slice(0, 100);
}

// ---------------------------------------------------------------------------
// Cells as PostgreSQL reads them

/** A cell that cannot be read as its declared type. */
export class CellError extends Error {}

const INT_TEXT = /^\s*([+-]?)0*(\d+)\s*$/;
const NUMERIC_TEXT = /^\s*[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?\s*$/;
const TRUE_WORDS: ReadonlySet<string> = new Set(['t', 'true', 'y', 'yes', 'on', '1']);
const FALSE_WORDS: ReadonlySet<string> = new Set(['f', 'false', 'n', 'no', 'off', '0']);
const ISO_DATE = /^\s*(\d{4}-\d{2}-\d{2})(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}(?::?\d{2})?)?)?\s*$/;
const ISO_TIMESTAMP = /^\s*(\d{4}-\d{2}-\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(\.\d+)?)?)?(?:Z|[+-]\d{2}(?::?\d{2})?)?\s*$/;

const RANGE: Readonly<Record<'int4' | 'int8', readonly [bigint, bigint]>> = {
  int4: [-2147483648n, 2147483647n],
  int8: [-9223372036854775808n, 9223372036854775807n],
};

/**
 * A text cell read as `type`, as PostgreSQL's input functions read it, and
 * kept as the memory engine keeps such values: numbers exact (beyond 2^53 as
 * their digits), booleans from `t`/`true`/`yes`/`on`/`1` and their
 * opposites, dates and timestamps from ISO 8601 text, `json` and arrays from
 * JSON text (arrays also from PostgreSQL's `{a,b}`). Throws `CellError`
 * saying what was wrong.
 * @example cellValue(' 42 ', 'int4') // → 42
 * @example cellValue('yes', 'bool')  // → true
 * @example cellValue('["a","b"]', '_text') // → ['a', 'b']
 */
export function cellValue(cell: string, type: FieldType): JsonValue {
  if (type.startsWith('_')) return arrayValue(cell, type.slice(1) as ScalarFieldType);
  switch (type) {
    case 'int':
    case 'int4':
    case 'int8': {
      const m = INT_TEXT.exec(cell);
      if (m === null) throw new CellError(`${JSON.stringify(cell)} is not a whole number (${type})`);
      const digits = `${m[1] === '-' && m[2] !== '0' ? '-' : ''}${m[2]}`;
      const [min, max] = RANGE[type === 'int8' ? 'int8' : 'int4'];
      const big = BigInt(digits);
      if (big < min || big > max) throw new CellError(`${cell.trim()} is out of range for ${type === 'int' ? 'int4' : type}`);
      const n = Number(digits);
      return Number.isSafeInteger(n) ? n : digits;
    }
    case 'numeric':
    case 'float8':
    case 'float': {
      if (!NUMERIC_TEXT.test(cell)) throw new CellError(`${JSON.stringify(cell)} is not a number (${type})`);
      const text = cell.trim().replace(/^\+/, '');
      const n = Number(text);
      if (!Number.isFinite(n)) throw new CellError(`${cell.trim()} is out of range for ${type}`);
      if (type !== 'numeric') return n;
      return exactText(text, n);
    }
    case 'bool': {
      const word = cell.trim().toLowerCase();
      if (TRUE_WORDS.has(word)) return true;
      if (FALSE_WORDS.has(word)) return false;
      throw new CellError(`${JSON.stringify(cell)} is not a boolean (true/false, t/f, yes/no, on/off, 1/0)`);
    }
    case 'date': {
      const m = ISO_DATE.exec(cell);
      if (m === null || !realDay(m[1] as string)) throw new CellError(`${JSON.stringify(cell)} is not an ISO 8601 date (YYYY-MM-DD)`);
      return m[1] as string;
    }
    case 'timestamp': {
      const m = ISO_TIMESTAMP.exec(cell);
      if (m === null || !realDay(m[1] as string) || Number(m[2] ?? 0) > 23 || Number(m[3] ?? 0) > 59 || Number(m[4] ?? 0) > 59) {
        throw new CellError(`${JSON.stringify(cell)} is not an ISO 8601 timestamp (YYYY-MM-DDTHH:MM:SS)`);
      }
      return `${m[1]}T${m[2] ?? '00'}:${m[3] ?? '00'}:${m[4] ?? '00'}${m[5] ?? ''}`;
    }
    case 'json': {
      try {
        return JSON.parse(cell) as JsonValue;
      } catch {
        throw new CellError(`${JSON.stringify(cell.length > 40 ? `${cell.slice(0, 40)}…` : cell)} is not JSON (json)`);
      }
    }
    default:
      return cell;
  }
}

/**
 * A JSON value (from a `.json` or `.ndjson` file) read as `type`: the text
 * PostgreSQL's `COPY` would be given for it (`csvCell`), read back as
 * `cellValue` reads a cell; `json` and arrays keep their structure.
 * @example jsonValueOf('42', 'int4') // → 42
 * @example jsonValueOf(7, 'text')    // → '7'
 */
export function jsonValueOf(value: JsonValue | bigint | undefined, type: FieldType): JsonValue {
  if (value === undefined || value === null) return null;
  // an integer the loader read exactly (memory/load.ts `withExactIntegers`): its digits, as a cell's
  if (typeof value === 'bigint') return type === 'json' ? Number(value) : type.startsWith('_') ? [cellValue(String(value), type.slice(1) as FieldType)] : cellValue(String(value), type);
  if (type === 'json') return value;
  if (type.startsWith('_')) {
    if (!Array.isArray(value)) return typeof value === 'string' ? arrayValue(value, type.slice(1) as ScalarFieldType) : [jsonValueOf(value, type.slice(1) as FieldType)];
    return (value as readonly JsonValue[]).map((item) => jsonValueOf(item, type.slice(1) as FieldType));
  }
  if (typeof value === 'object') {
    if (type === 'text') return JSON.stringify(value);
    throw new CellError(`${excerptJson(value)} is not a ${type} value`);
  }
  if (typeof value === 'boolean') {
    if (type === 'text') return value ? 'true' : 'false';
    return cellValue(value ? 't' : 'f', type);
  }
  return cellValue(String(value), type);
}

function arrayValue(cell: string, element: ScalarFieldType): JsonValue {
  const text = cell.trim();
  // CKAN's csv writes a null array as the text `null` (it selects arrays through coalesce(…, 'null')).
  if (text === 'null') return null;
  let items: unknown;
  if (text.startsWith('[')) {
    try {
      items = JSON.parse(text);
    } catch {
      items = undefined;
    }
  } else if (text.startsWith('{') && text.endsWith('}')) {
    items = postgresArray(text);
  }
  if (!Array.isArray(items)) throw new CellError(`${JSON.stringify(cell)} is not an array (a JSON list ["a","b"], or {a,b})`);
  return items.map((item: unknown) => (item === null ? null : jsonValueOf(item as JsonValue, element)));
}

/** The items of a one-dimensional PostgreSQL array literal (`{a,"b c",NULL}`), as texts and nulls. */
function postgresArray(text: string): (string | null)[] {
  const inner = text.slice(1, -1);
  const items: (string | null)[] = [];
  if (inner.trim() === '') return items;
  let i = 0;
  while (i <= inner.length) {
    while (inner[i] === ' ') i++;
    let item = '';
    let quoted = false;
    if (inner[i] === '"') {
      quoted = true;
      i++;
      while (i < inner.length && inner[i] !== '"') {
        if (inner[i] === '\\') i++;
        item += inner[i] ?? '';
        i++;
      }
      i++;
    } else {
      while (i < inner.length && inner[i] !== ',') item += inner[i++];
      item = item.trim();
    }
    items.push(!quoted && item.toUpperCase() === 'NULL' ? null : item);
    while (inner[i] === ' ') i++;
    if (i >= inner.length) break;
    if (inner[i] !== ',') throw new CellError(`${JSON.stringify(text)} is not an array literal`);
    i++;
  }
  return items;
}

/** A numeric's value: the number when it is exact, else its digits (an integer beyond 2^53, or more digits than a double holds). */
function exactText(text: string, n: number): number | string {
  if (/^-?\d+$/.test(text)) return Number.isSafeInteger(n) ? n : text.replace(/^(-?)0+(?=\d)/, '$1');
  const digits = text.replace(/[eE].*$/, '').replace(/[-.]/g, '').replace(/^0+/, '').replace(/0+$/, '');
  return digits.length <= 15 ? n : text;
}

function realDay(date: string): boolean {
  const [year, month, day] = date.split('-').map(Number) as [number, number, number];
  if (month < 1 || month > 12 || day < 1) return false;
  const days = month === 2 ? ((year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28) : [4, 6, 9, 11].includes(month) ? 30 : 31;
  return day <= days;
}

function excerptJson(value: JsonValue): string {
  const text = JSON.stringify(value);
  return text.length > 40 ? `${text.slice(0, 40)}…` : text;
}

// ---------------------------------------------------------------------------
// Inference as the portals' loaders do it

/**
 * A header as xloader makes a column name of it: stripped, cut to 63
 * characters (PostgreSQL's identifier limit), stripped again.
 * @example xloaderHeader('  Name  ') // → 'Name'
 */
export function xloaderHeader(header: string): string {
  return header.trim().slice(0, 63).trim();
}

/**
 * DataPusher's typing of a column (messytables: Integer and Decimal →
 * `numeric`, dates → `timestamp`, anything else → `text`), over the cells as
 * they go by.
 * @example
 * const column = new DatapusherInference();
 * for (const cell of ['1', '2.5']) column.see(cell);
 * column.type() // → 'numeric'
 */
export class DatapusherInference {
  private numeric = true;
  private timestamp = true;
  private any = false;

  see(cell: string): void {
    if (cell === '') return;
    this.any = true;
    if (this.numeric && !(NUMERIC_TEXT.test(cell) && Number.isFinite(Number(cell.trim())))) this.numeric = false;
    if (this.timestamp && ISO_TIMESTAMP.exec(cell) === null) this.timestamp = false;
  }

  type(): FieldType {
    if (!this.any) return 'text';
    return this.numeric ? 'numeric' : this.timestamp ? 'timestamp' : 'text';
  }
}

/** Whether a JSON value is an object (not an array, not null). */
export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A JSON value that is a text other than the empty one, else undefined. */
export function textOr(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

function listOf(value: unknown, source: string, key: string): string[] | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'string') return value.split(',').map((item) => item.trim()).filter((item) => item !== '');
  if (!Array.isArray(value) || !value.every((item) => typeof item === 'string')) {
    throw toolError('DATA_INVALID', [source, `${key} must be a list of names`], { file: source });
  }
  return value as string[];
}

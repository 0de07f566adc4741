/**
 * What the evaluator knows about a table, computed once and cached: the field
 * list, columns (one array of values per field, built when a request first
 * filters or sorts on that field), and the normalized text that `q` searches.
 *
 * The cache is a WeakMap keyed by the `Table` object or the rows array, so it
 * lives exactly as long as the data. Tables and rows are treated as
 * immutable (they are `readonly`); for a plain array the cache is dropped when
 * its length changes, the one mutation that is cheap to notice.
 */
import type { FieldInfo, FieldType, JsonValue, Row, Table } from '../datastore/types.js';
import { canonicalText, normalizeText } from './values.js';
import { recordFactory } from './row-shape.js';
import type { RecordFactory } from './row-shape.js';

/** The kinds of value one column holds, besides null. */
export type ColumnKind = 'string' | 'number' | 'boolean' | 'null' | 'mixed';

export interface Column {
  /** the field's value per row, `undefined` stored as `null` */
  readonly values: readonly (JsonValue | null)[];
  readonly kind: ColumnKind;
  /** canonical text per row, built on first need (mixed columns only) */
  texts: readonly (string | null)[] | undefined;
  /**
   * Dictionary encoding of a text column with repeated values: `codes[i]` is
   * the code of row i's text (`-1` for null) in `dictionary`. Filters compare
   * small integers instead of strings. Undefined when the column is not
   * `string` or has too many distinct texts to gain from it.
   */
  readonly codes: Int32Array | undefined;
  readonly dictionary: ReadonlyMap<string, number> | undefined;
}

/** Normalized text of rows `[first, first + starts.length - 1)`, for `q`. */
export interface SearchChunk {
  readonly first: number;
  /** each row's normalized field texts, each followed by `\n` (which `q` never holds) */
  readonly text: string;
  /** `starts[k]` is where row `first + k` begins in `text`; one extra entry = `text.length` */
  readonly starts: Int32Array;
}

export interface PreparedSource {
  readonly rows: readonly Row[];
  readonly length: number;
  readonly fields: readonly FieldInfo[];
  readonly fieldById: ReadonlyMap<string, FieldInfo>;
  /** true for a Table: a name outside `fields` is a Validation Error */
  readonly known: boolean;
  /** the table's id, reported as `resource_id` (undefined for plain rows) */
  readonly tableId: string | undefined;
  /**
   * Rows are own-key-exact records of `fields` in order (rows made by the
   * loader or `tableFromRows`), so they can be returned as records as they are.
   */
  readonly rowsAreRecords: boolean;
  readonly columns: Map<string, Column>;
  search: readonly SearchChunk[] | undefined;
  readonly recordFactories: Map<string, RecordFactory>;
}

const cache = new WeakMap<object, PreparedSource>();

/** Rows arrays whose objects are exactly their table's records (see `rowsAreRecords`). */
const recordShapedRows = new WeakSet<object>();

/**
 * Marks a rows array (made by the loader or `tableFromRows`) as holding, in
 * each row, exactly the table's fields as own keys in field order, so the
 * evaluator may hand the row objects out as records without copying them.
 */
export function markRowsAsRecords(rows: readonly Row[]): void {
  recordShapedRows.add(rows);
}

export function isTable(source: Table | readonly Row[]): source is Table {
  return !Array.isArray(source);
}

/** The prepared form of a table or rows array, from the cache when possible. */
export function prepareSource(source: Table | readonly Row[]): PreparedSource {
  const key: object = source;
  const hit = cache.get(key);
  if (hit !== undefined && hit.length === hit.rows.length && (isTable(source) ? hit.rows === source.rows : true)) {
    return hit;
  }
  const prepared = isTable(source) ? prepareTable(source) : prepareRows(source);
  cache.set(key, prepared);
  return prepared;
}

function prepareTable(table: Table): PreparedSource {
  const fields = table.fields.some((f) => f.id === '_id')
    ? table.fields
    : [{ id: '_id', type: 'int' as const }, ...table.fields];
  return makeSource(table.rows, fields, true, table.id, recordShapedRows.has(table.rows) && fields === table.fields);
}

function prepareRows(rows: readonly Row[]): PreparedSource {
  return makeSource(rows, inferFields(rows), false, undefined, false);
}

function makeSource(
  rows: readonly Row[],
  fields: readonly FieldInfo[],
  known: boolean,
  tableId: string | undefined,
  rowsAreRecords: boolean,
): PreparedSource {
  return {
    rows,
    length: rows.length,
    fields,
    fieldById: new Map(fields.map((f) => [f.id, f])),
    known,
    tableId,
    rowsAreRecords,
    columns: new Map(),
    search: undefined,
    recordFactories: new Map(),
  };
}

/**
 * The field list of plain records (semantics.md, Data model): `_id` (int)
 * first, then every key in the order it first appears, typed from its first
 * non-null value: number → numeric, boolean → bool, string → text, other →
 * json; a key that is null everywhere is text.
 */
export function inferFields(rows: readonly Row[]): FieldInfo[] {
  const types = new Map<string, FieldType | undefined>([['_id', 'int']]);
  for (const row of rows) {
    for (const key in row) {
      if (!Object.hasOwn(row, key) || types.get(key) !== undefined) continue;
      const type = typeOfValue(row[key]);
      // first appearance fixes the position; the first non-null value fixes the type
      if (type !== undefined || !types.has(key)) types.set(key, type);
    }
  }
  return [...types].map(([id, type]) => ({ id, type: type ?? 'text' }));
}

function typeOfValue(value: unknown): FieldType | undefined {
  switch (typeof value) {
    case 'number':
      return 'numeric';
    case 'boolean':
      return 'bool';
    case 'string':
      return 'text';
    case 'undefined':
      return undefined;
    default:
      return value === null ? undefined : 'json';
  }
}

/** Reads `field` of `row` as the evaluator sees it: own keys only, missing → null. */
export function readField(row: Row, field: string): JsonValue | null {
  if (!Object.hasOwn(row, field)) return null;
  return row[field] ?? null;
}

/**
 * The column of `field` (its values in row order), built on first use. `_id`
 * falls back to the 1-based position where a row has none.
 */
export function column(source: PreparedSource, field: string): Column {
  const cached = source.columns.get(field);
  if (cached !== undefined) return cached;
  const rows = source.rows;
  const n = rows.length;
  const values = new Array<JsonValue | null>(n);
  let seen = 0; // bit set of kinds: 1 string, 2 number, 4 boolean, 8 other
  const guarded = field in Object.prototype;
  if (field === '_id') {
    for (let i = 0; i < n; i++) {
      const v = (rows[i] as Row)._id ?? i + 1;
      values[i] = v;
      seen |= kindBit(v);
    }
  } else if (guarded) {
    for (let i = 0; i < n; i++) {
      const v = readField(rows[i] as Row, field);
      values[i] = v;
      if (v !== null) seen |= kindBit(v);
    }
  } else {
    for (let i = 0; i < n; i++) {
      const v = (rows[i] as Row)[field] ?? null;
      values[i] = v;
      if (v !== null) seen |= kindBit(v);
    }
  }
  const kind: ColumnKind =
    seen === 0 ? 'null' : seen === 1 ? 'string' : seen === 2 ? 'number' : seen === 4 ? 'boolean' : 'mixed';
  const encoded = kind === 'string' ? encode(values as readonly (string | null)[]) : undefined;
  const built: Column = { values, kind, texts: undefined, codes: encoded?.codes, dictionary: encoded?.dictionary };
  source.columns.set(field, built);
  return built;
}

/**
 * Dictionary-encodes a text column, or gives up (undefined) once it holds
 * more distinct texts than a quarter of its rows: then codes would save
 * little and the dictionary would cost a lot.
 */
function encode(values: readonly (string | null)[]): { codes: Int32Array; dictionary: Map<string, number> } | undefined {
  const n = values.length;
  const limit = Math.max(16, n >>> 2);
  const dictionary = new Map<string, number>();
  const codes = new Int32Array(n);
  for (let i = 0; i < n; i++) {
    const v = values[i];
    if (v === null || v === undefined) {
      codes[i] = -1;
      continue;
    }
    let code = dictionary.get(v);
    if (code === undefined) {
      code = dictionary.size;
      if (code >= limit) return undefined;
      dictionary.set(v, code);
    }
    codes[i] = code;
  }
  return { codes, dictionary };
}

function kindBit(value: unknown): number {
  switch (typeof value) {
    case 'string':
      return 1;
    case 'number':
      return 2;
    case 'boolean':
      return 4;
    default:
      return 8;
  }
}

/** The canonical texts of a column, built on first use. */
export function columnTexts(col: Column): readonly (string | null)[] {
  if (col.texts !== undefined) return col.texts;
  const values = col.values;
  const texts = new Array<string | null>(values.length);
  for (let i = 0; i < values.length; i++) texts[i] = canonicalText(values[i]);
  col.texts = texts;
  return texts;
}

/** Rows per search chunk: keeps every chunk's text far below V8's string length limit. */
const CHUNK_ROWS = 16384;
// Printable ASCII and \t\n\r: the text that NFKC leaves as it is. Other text takes the exact path.
const NON_ASCII = /[^\t\n\r -~]/;

/**
 * The text `q` searches, per row: the normalized canonical text of every
 * field but `_id`, each followed by `\n`. Built on the first `q`.
 *
 * Normalizing a whole row at once equals normalizing each field: `\n` never
 * composes under NFKC and stops the final-sigma context of `toLowerCase`.
 * ASCII text is only lower-cased (NFKC leaves ASCII as it is), which keeps
 * the per-row offsets and allows one `toLowerCase` per chunk.
 */
export function searchChunks(source: PreparedSource): readonly SearchChunk[] {
  if (source.search !== undefined) return source.search;
  const names = source.fields.map((f) => f.id).filter((id) => id !== '_id');
  const guarded = names.map((name) => name in Object.prototype);
  const rows = source.rows;
  const chunks: SearchChunk[] = [];
  for (let first = 0; first < rows.length; first += CHUNK_ROWS) {
    const end = Math.min(rows.length, first + CHUNK_ROWS);
    const parts: string[] = [];
    const starts = new Int32Array(end - first + 1);
    let offset = 0;
    for (let i = first; i < end; i++) {
      const row = rows[i] as Row;
      let text = '';
      for (let f = 0; f < names.length; f++) {
        const name = names[f] as string;
        const v = guarded[f] === true ? readField(row, name) : row[name];
        if (v === null || v === undefined) continue;
        text += (typeof v === 'string' ? v : canonicalText(v)) + '\n';
      }
      parts.push(text);
      starts[i - first] = offset;
      offset += text.length;
    }
    starts[end - first] = offset;
    let raw = parts.join('');
    if (!NON_ASCII.test(raw)) {
      raw = raw.toLowerCase();
    } else {
      // Normalization may change lengths: normalize per row and recompute the offsets.
      let pos = 0;
      for (let k = 0; k < parts.length; k++) {
        const normalized = normalizeText(parts[k] as string);
        parts[k] = normalized;
        starts[k] = pos;
        pos += normalized.length;
      }
      starts[parts.length] = pos;
      raw = parts.join('');
    }
    chunks.push({ first, text: raw, starts });
  }
  source.search = chunks;
  return chunks;
}

/** A cached record factory for an output field list. */
export function recordFactoryFor(source: PreparedSource, keys: readonly string[]): RecordFactory {
  const cacheKey = JSON.stringify(keys);
  let factory = source.recordFactories.get(cacheKey);
  if (factory === undefined) {
    factory = recordFactory(keys);
    source.recordFactories.set(cacheKey, factory);
  }
  return factory;
}

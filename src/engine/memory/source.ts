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
import type { FieldInfo, FieldType, JsonValue, Row, Table } from '../../datastore/types.js';
import { canonicalText, compareText, normalizeText } from '../../datastore/values.js';
import { recordFactory, rowText } from './row-shape.js';
import type { RecordFactory, RowText } from './row-shape.js';

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
  /** the sort rank of each code (texts by code point), built on the first sort that needs many comparisons */
  ranks: Int32Array | undefined;
  /** how many sorts used this column (a top-k before ranks exist compares texts instead) */
  sorts: number;
}

/** Normalized text of rows `[first, first + starts.length - 1)`, for `q`. */
export interface SearchChunk {
  readonly first: number;
  /** each row's normalized field texts, each followed by `\n` (which `q` never holds) */
  readonly text: string;
  /** `starts[k]` is where row `first + k` begins in `text`; one extra entry = `text.length` */
  readonly starts: Int32Array;
  /** rows end in `\0` (then no field holds `\0`, so a `q` with `\0` matches nothing here) */
  readonly rowEnds: boolean;
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
  /** how many requests used each field that has no column yet (see `useColumn`) */
  readonly fieldUses: Map<string, number>;
  search: readonly SearchChunk[] | undefined;
  /** how many requests searched (`q`) before the search text was built (see `useSearchText`) */
  searchUses: number;
  readonly recordFactories: Map<string, RecordFactory>;
}

const cache = new WeakMap<object, PreparedSource>();

/** Rows arrays whose objects are exactly their table's records (see `rowsAreRecords`). */
const recordShapedRows = new WeakSet<object>();

/** A text column encoded by whoever made the rows: each row's code (`-1` for null) and text → code. */
export interface ProvidedColumn {
  readonly codes: Int32Array;
  readonly dictionary: ReadonlyMap<string, number>;
}

/** Encoded text columns handed over with a rows array, by field. */
const providedColumns = new WeakMap<object, ReadonlyMap<string, ProvidedColumn>>();

/**
 * Hands the evaluator encoded text columns of a rows array (the loader,
 * which builds them while it shares repeated strings): each must cover every
 * row, code texts in order of first appearance, and the field must hold only
 * text or null. The first request on any table over these rows then uses
 * them as columns instead of reading the rows.
 * @example
 * provideColumns(rows, new Map([['status', { codes, dictionary }]]));
 */
export function provideColumns(rows: readonly Row[], columns: ReadonlyMap<string, ProvidedColumn>): void {
  providedColumns.set(rows, columns);
}

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
    fieldUses: new Map(),
    search: undefined,
    searchUses: 0,
    recordFactories: new Map(),
  };
}

/**
 * The field list of plain records (docs/semantics.md, Data model): `_id` (int)
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
 * Counts one request's use of `field` (call once per request and field) and
 * says whether it should read the field's column: true when the column
 * exists or this is the field's second use, false on the first use, when
 * reading the row objects once is cheaper than building a column (see
 * row-scan.ts). The same policy as the equality indexes: a one-off request
 * never pays for a structure only later requests gain from.
 * @example
 * useColumn(source, 'status') // false: first request on the table, read the rows
 * useColumn(source, 'status') // true: column(source, 'status') builds it now
 */
export function useColumn(source: PreparedSource, field: string): boolean {
  if (source.columns.has(field) || providedColumns.get(source.rows)?.has(field) === true) return true;
  const uses = (source.fieldUses.get(field) ?? 0) + 1;
  source.fieldUses.set(field, uses);
  return uses >= 2;
}

/**
 * The column of `field` (its values in row order), built on first use. `_id`
 * falls back to the 1-based position where a row has none.
 */
export function column(source: PreparedSource, field: string): Column {
  const cached = source.columns.get(field);
  if (cached !== undefined) return cached;
  const provided = providedColumns.get(source.rows)?.get(field);
  if (provided !== undefined) {
    const built = providedColumn(source.rows, field, provided);
    source.columns.set(field, built);
    return built;
  }
  const { values, kind } = readColumn(source.rows, field);
  const encoded = kind === 'string' ? encode(values as readonly (string | null)[]) : undefined;
  const built: Column = { values, kind, texts: undefined, codes: encoded?.codes, dictionary: encoded?.dictionary, ranks: undefined, sorts: 0 };
  source.columns.set(field, built);
  return built;
}

/**
 * The codes and dictionary of `field` if it has them already (built, or
 * handed over by the loader), without building anything.
 * @example
 * encodedColumn(source, 'status')?.codes // Int32Array, or undefined
 */
export function encodedColumn(source: PreparedSource, field: string): ProvidedColumn | undefined {
  const built = source.columns.get(field);
  if (built !== undefined) return built.codes !== undefined && built.dictionary !== undefined ? { codes: built.codes, dictionary: built.dictionary } : undefined;
  return providedColumns.get(source.rows)?.get(field);
}

/**
 * A column from codes made by the loader: text only, so filters and sorts
 * use the codes; the values array is built only if something asks for it.
 */
function providedColumn(rows: readonly Row[], field: string, provided: ProvidedColumn): Column {
  let values: readonly (JsonValue | null)[] | undefined;
  return {
    get values() {
      values ??= readColumn(rows, field).values;
      return values;
    },
    kind: 'string',
    texts: undefined,
    codes: provided.codes,
    dictionary: provided.dictionary,
    ranks: undefined,
    sorts: 0,
  };
}

/** The values of `field` per row (see `column`) and the kinds they hold. */
function readColumn(rows: readonly Row[], field: string): { values: (JsonValue | null)[]; kind: ColumnKind } {
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
  return { values, kind };
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

/**
 * The rank of each dictionary code in code-point order of its text, so a sort
 * compares two integers instead of two strings. Built once per column.
 */
export function codeRanks(col: Column): Int32Array | undefined {
  if (col.ranks !== undefined || col.dictionary === undefined) return col.ranks;
  const texts = [...col.dictionary.keys()];
  // Without surrogates, UTF-16 code unit order (the native sort's) is code point order.
  if (texts.some((t) => SURROGATE.test(t))) texts.sort(compareText);
  else texts.sort();
  const ranks = new Int32Array(texts.length);
  texts.forEach((text, rank) => {
    ranks[(col.dictionary as ReadonlyMap<string, number>).get(text) as number] = rank;
  });
  col.ranks = ranks;
  return ranks;
}

const SURROGATE = /[\uD800-\uDFFF]/;

/**
 * The text of each dictionary code (`texts[code]`), from the dictionary.
 * @example
 * dictionaryTexts(column)[0] // the column's first text
 */
export function dictionaryTexts(dictionary: ReadonlyMap<string, number>): string[] {
  const texts = new Array<string>(dictionary.size);
  for (const [text, code] of dictionary) texts[code] = text;
  return texts;
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

/**
 * Counts one request's `q` and says whether it should use the search text:
 * true when it exists or this is the table's second `q` (then
 * `searchChunks` builds it), false on the first, which scans the values
 * instead (search-scan.ts). Call once per request with a `q`.
 * @example
 * useSearchText(source) // false: first q on this table
 * useSearchText(source) // true
 */
export function useSearchText(source: PreparedSource): boolean {
  if (source.search !== undefined) return true;
  source.searchUses++;
  return source.searchUses >= 2;
}

/** The fields `q` searches: all but `_id`. */
export function searchFields(source: PreparedSource): string[] {
  return source.fields.map((f) => f.id).filter((id) => id !== '_id');
}

/** Rows per search chunk: keeps every chunk's text far below V8's string length limit. */
const CHUNK_ROWS = 16384;
// Anything but printable ASCII, \t, \n, \r and the row end \0: text that NFKC may change.
const NON_ASCII = /[^\0\t\n\r -~]/;
/** Ends each row in a chunk's text, so rows can be found again after normalizing the whole chunk. */
const ROW_END = '\0';

/**
 * The text `q` searches, per row: the normalized canonical text of every
 * field but `_id`, each followed by `\n`, the row followed by `\0`. Built on
 * the first `q` and cached.
 *
 * A chunk of rows is normalized in one call, which is what makes the first
 * search cheap. That equals normalizing each field alone: `\n` and `\0` never
 * compose or decompose under NFKC (both are starters without mappings) and
 * both end the final-sigma context of `toLowerCase`; neither is produced or
 * removed by either step, so the `\0`s still mark the rows afterwards. A
 * chunk whose data itself holds `\0` is built row by row instead.
 */
export function searchChunks(source: PreparedSource): readonly SearchChunk[] {
  if (source.search !== undefined) return source.search;
  const textOf = rowText(searchFields(source), canonicalText, '\n');
  const rows = source.rows;
  const chunks: SearchChunk[] = [];
  for (let first = 0; first < rows.length; first += CHUNK_ROWS) {
    const end = Math.min(rows.length, first + CHUNK_ROWS);
    const parts: string[] = [];
    for (let i = first; i < end; i++) parts.push(textOf(rows[i] as Row) + ROW_END);
    const raw = parts.join('');
    const count = end - first;
    const rawStarts = rowStarts(raw, count);
    if (rawStarts === undefined) chunks.push(searchChunkByRow(rows, first, end, textOf));
    else chunks.push({ first, ...normalizeChunk(raw, rawStarts), rowEnds: true });
  }
  source.search = chunks;
  return chunks;
}

/** Where each of `count` rows starts in `text` (rows end in `\0`), or undefined when the data holds `\0` too. */
function rowStarts(text: string, count: number): Int32Array | undefined {
  const starts = new Int32Array(count + 1);
  let at = 0;
  for (let k = 0; k < count; k++) {
    at = text.indexOf(ROW_END, at);
    if (at === -1) return undefined;
    starts[k + 1] = ++at;
  }
  return at === text.length ? starts : undefined;
}

const NON_ASCII_ALL = new RegExp(NON_ASCII.source, 'g');

/**
 * Normalizes a chunk. Most data is ASCII, where NFKC changes nothing and
 * lower-casing keeps every offset: only the rows holding other characters
 * are normalized one by one, the runs of ASCII rows between them are only
 * lower-cased. When most rows hold such characters, the whole chunk is
 * normalized at once and the rows found again by their `\0`.
 */
function normalizeChunk(raw: string, rawStarts: Int32Array): { text: string; starts: Int32Array } {
  const count = rawStarts.length - 1;
  const dirty: number[] = [];
  NON_ASCII_ALL.lastIndex = 0;
  let row = 0;
  for (let hit = NON_ASCII_ALL.exec(raw); hit !== null; hit = NON_ASCII_ALL.exec(raw)) {
    while ((rawStarts[row + 1] as number) <= hit.index) row++;
    dirty.push(row);
    NON_ASCII_ALL.lastIndex = rawStarts[row + 1] as number; // the rest of this row needs no look
    if (dirty.length * 4 > count) break;
  }
  if (dirty.length === 0) return { text: raw.toLowerCase(), starts: rawStarts };
  if (dirty.length * 4 > count) {
    const text = normalizeText(raw);
    return { text, starts: rowStarts(text, count) as Int32Array };
  }
  const pieces: string[] = [];
  const starts = new Int32Array(count + 1);
  let length = 0;
  let next = 0; // first row not yet placed
  const placeClean = (upTo: number): void => {
    if (upTo <= next) return;
    const from = rawStarts[next] as number;
    pieces.push(raw.slice(from, rawStarts[upTo] as number).toLowerCase());
    for (let k = next; k < upTo; k++) starts[k] = length + (rawStarts[k] as number) - from;
    length += (rawStarts[upTo] as number) - from;
    next = upTo;
  };
  for (const k of dirty) {
    placeClean(k);
    const normalized = normalizeText(raw.slice(rawStarts[k] as number, rawStarts[k + 1] as number));
    pieces.push(normalized);
    starts[k] = length;
    length += normalized.length;
    next = k + 1;
  }
  placeClean(count);
  starts[count] = length;
  return { text: pieces.join(''), starts };
}

/** The same text for a chunk whose data holds `\0`: each row normalized alone, no row ends. */
function searchChunkByRow(rows: readonly Row[], first: number, end: number, textOf: RowText): SearchChunk {
  const parts: string[] = [];
  const starts = new Int32Array(end - first + 1);
  let offset = 0;
  for (let i = first; i < end; i++) {
    const normalized = normalizeText(textOf(rows[i] as Row));
    parts.push(normalized);
    starts[i - first] = offset;
    offset += normalized.length;
  }
  starts[end - first] = offset;
  return { first, text: parts.join(''), starts, rowEnds: false };
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

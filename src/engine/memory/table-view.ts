/**
 * What the evaluator knows about a table or an array of plain records: its
 * field list and the structures later requests reuse (equality indexes, the
 * text `q` searches). One view per table object or rows array, kept in a
 * WeakMap so it lives exactly as long as the data. Data is treated as
 * immutable once evaluated; for a plain array the view is dropped when its
 * length changes, the one mutation that is cheap to notice.
 */
import type { FieldInfo, FieldType, JsonValue, Row, Table } from '../../datastore/types.js';
import { toolError } from '../../errors.js';

export interface TableView {
  readonly rows: readonly Row[];
  /** `rows.length` when the view was made */
  readonly length: number;
  readonly fields: readonly FieldInfo[];
  readonly fieldById: ReadonlyMap<string, FieldInfo>;
  /** the table's id, reported as `resource_id` (undefined for plain records) */
  readonly tableId: string | undefined;
  /** per field: its equality index, or null once decided against one (too many distinct values) */
  readonly indexes: Map<string, EqualityIndex | null>;
  /** per field: how many requests filtered it by equality before it had an index */
  readonly equalityUses: Map<string, number>;
  /** the text `q` searches, built on the first `q` */
  search: readonly SearchChunk[] | undefined;
}

/** For one field, the ascending row positions of each canonical text (null for null or missing): equality-index.ts. */
export type EqualityIndex = ReadonlyMap<string | null, Int32Array>;

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

const views = new WeakMap<object, TableView>();

/**
 * The view of a table or plain records, from the cache when it is still valid.
 * @example
 * tableView([{ title: 'Algebra' }]).fields // [{ id: "_id", type: "int" }, { id: "title", type: "text" }]
 */
export function tableView(source: Table | readonly Row[]): TableView {
  const hit = views.get(source);
  const rows = Array.isArray(source) ? (source as readonly Row[]) : (source as Table).rows;
  if (hit !== undefined && hit.rows === rows && hit.length === rows.length) return hit;
  const view = Array.isArray(source) ? makeView(rows, inferFields(rows), undefined) : makeView(rows, tableFields(source as Table), (source as Table).id);
  views.set(source, view);
  return view;
}

function tableFields(table: Table): readonly FieldInfo[] {
  return table.fields.some((f) => f.id === '_id') ? table.fields : [{ id: '_id', type: 'int' }, ...table.fields];
}

function makeView(rows: readonly Row[], fields: readonly FieldInfo[], tableId: string | undefined): TableView {
  return {
    rows,
    length: rows.length,
    fields,
    fieldById: new Map(fields.map((f) => [f.id, f])),
    tableId,
    indexes: new Map(),
    equalityUses: new Map(),
    search: undefined,
  };
}

/**
 * The field list of plain records (docs/semantics.md, Data model): `_id` (int)
 * first, then every key in the order it first appears, typed from its first
 * non-null value: number → numeric, boolean → bool, string → text, other →
 * json; a key that is null everywhere is text.
 *
 * Rows usually share their keys in one order, so each row's keys are
 * compared with the list so far and only a row that differs is looked at
 * key by key.
 * @example
 * inferFields([{ a: 1 }, { b: 'x', a: null }]) // [_id int, a numeric, b text]
 */
export function inferFields(rows: readonly Row[]): FieldInfo[] {
  const keys: string[] = [];
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i] as Row;
    // j: where this row's keys are in the common order; -1 once off it (a small integer, so
    // `keys[j]` stays an array element load: an Infinity here made every later row slow)
    let j = 0;
    for (const key in row) {
      if (key === '_id') continue;
      if (j >= 0 && keys[j] === key) {
        j++;
        continue;
      }
      j = -1; // off the common order: look each remaining key up
      if (Object.hasOwn(row, key) && !keys.includes(key)) keys.push(key);
    }
  }
  return [{ id: '_id', type: 'int' }, ...keys.map((id) => ({ id, type: firstType(rows, id) }))];
}

function firstType(rows: readonly Row[], field: string): FieldType {
  for (let i = 0; i < rows.length; i++) {
    const value = readField(rows[i] as Row, field);
    if (value === null) continue;
    refuseNonJson(value, field, i);
    return typeOfValue(value);
  }
  return 'text';
}

/**
 * Refuses a value that is not JSON (a `Date`, a `Map`, any class instance):
 * the types refuse it, and so does the evaluator wherever it meets one.
 * @example
 * refuseNonJson(new Date(), 'on', 0) // throws DATA_INVALID: record 1 holds a Date in "on" …
 */
export function refuseNonJson(value: unknown, field: string, position: number): void {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return;
  const proto: unknown = Object.getPrototypeOf(value);
  if (proto === Object.prototype || proto === null) return;
  const what = (value as { constructor?: { name?: string } }).constructor?.name ?? 'object';
  throw toolError('DATA_INVALID', ['records', `record ${position + 1} holds a ${what} in ${JSON.stringify(field)}: values must be JSON (give a date as ISO text)`]);
}

function typeOfValue(value: JsonValue): FieldType {
  switch (typeof value) {
    case 'number':
      return 'numeric';
    case 'boolean':
      return 'bool';
    case 'string':
      return 'text';
    default:
      return 'json';
  }
}

/**
 * Reads `field` of `row` as the evaluator sees it: own keys only, missing →
 * null; `_id` falls back to the 1-based `position + 1` (plain records).
 * @example
 * readField({ title: 'Algebra' }, 'constructor', 0) // null (not Object.prototype's)
 */
export function readField(row: Row, field: string, position = 0): JsonValue | null {
  if (!Object.hasOwn(row, field)) return field === '_id' ? position + 1 : null;
  return row[field] ?? (field === '_id' ? position + 1 : null);
}

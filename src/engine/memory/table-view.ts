/**
 * What the evaluator knows about a table or an array of plain records: its
 * field list and the structures later requests reuse (equality indexes, the
 * text `q` searches). One view per table object or rows array (from its
 * second use: see `seenOnce`), kept in a WeakMap so it lives exactly as long
 * as the data. Data is treated as immutable once evaluated; for a plain
 * array the view is dropped when its length changes, the one mutation that
 * is cheap to notice.
 */
import { fieldTypeOf, SUPPORTED_FIELD_TYPES } from '../../datastore/field-types.js';
import type { FieldDictionary, FieldInfo, FieldType, JsonValue, Row, Table } from '../../datastore/types.js';
import { toolError } from '../../errors.js';
import { generate } from '../../datastore/generate.js';

export interface TableView {
  readonly rows: readonly Row[];
  /** `rows.length` when the view was made */
  readonly length: number;
  /** every field; for plain records possibly only the first record's until `completeFields` (see `pending`) */
  fields: readonly FieldInfo[];
  fieldById: ReadonlyMap<string, FieldInfo>;
  /**
   * Plain records whose field list is still the first record's keys: those
   * keys as `for…in` lists them, which `completeFields` checks every other
   * record's against. Undefined once the list is known to be complete.
   */
  pending: readonly string[] | undefined;
  /** the table's id, reported as `resource_id` (undefined for plain records) */
  readonly tableId: string | undefined;
  /**
   * Whether the fields were given, not inferred (a `Table`, or plain records
   * with declared fields): their types hold, and the records' other keys are
   * no fields. For declared fields, their JSON (a later call with other
   * fields gets another view).
   */
  readonly given: string | true | undefined;
  /** per field: its equality index, or null once decided against one (too many distinct values) */
  readonly indexes: Map<string, EqualityIndex | null>;
  /** per field: how many requests filtered it by equality before it had an index */
  readonly equalityUses: Map<string, number>;
  /** the text `q` searches, a share of it built by each `q` from the second on (text-search.ts) */
  search: SearchText | undefined;
  /** how many string `q`s ran before `search` was begun */
  searchUses: number;
  /** whether every row's `_id` is a number above the row before's, so `_id` order is row order (found on the first sort by `_id`) */
  idAscending?: boolean;
}

/** For one field, the ascending row positions of each canonical text (null for null or missing): equality-index.ts. */
export type EqualityIndex = ReadonlyMap<string | null, Int32Array>;

/** The text `q` searches, per chunk of rows: text-search.ts. */
export interface SearchText {
  /** chunk `c` holds rows from `c * 2^14` on; undefined until a search builds it */
  readonly chunks: (SearchChunk | undefined)[];
  /** the characters the built chunks hold */
  chars: number;
  /** the most characters the chunks may hold; rows past it are read from the row objects */
  readonly maxChars: number;
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

const views = new WeakMap<object, TableView>();
/**
 * Plain arrays evaluated once. A plain array's view holds the array it is
 * keyed by, and V8's young-generation collector keeps such a key alive until
 * a full collection: an embedder handing a fresh array to every call had
 * each one copied out of the young generation, and the collections cost
 * several times the calls (BENCHMARKS.md, Evaluate). So an array's view is
 * kept from its second use on; a set holds nothing but its keys.
 */
const seenOnce = new WeakSet<object>();

/**
 * The view of a table or plain records, from the cache when it is still valid.
 * For plain records the field list starts as the first record's keys (their
 * types are final: each is the type of the field's first non-null value);
 * `completeFields` finishes it. With `declared` (plain records only, see
 * `declaredFields`) the fields are those, as a table's are.
 * @example
 * tableView([{ title: 'Algebra' }]).fields // [{ id: "_id", type: "int" }, { id: "title", type: "text" }]
 * tableView([{ title: 'Algebra', year: 2020 }], declaredFields(['title'])).fields // [{ id: "_id", type: "int" }, { id: "title", type: "text" }]
 */
export function tableView(source: Table | readonly Row[], declared?: DeclaredFields): TableView {
  const hit = views.get(source);
  const rows = Array.isArray(source) ? (source as readonly Row[]) : (source as Table).rows;
  const given = Array.isArray(source) ? declared?.key : true;
  if (hit !== undefined && hit.rows === rows && hit.length === rows.length && hit.given === given) return hit;
  const view = !Array.isArray(source)
    ? makeView(rows, withId((source as Table).fields), (source as Table).id, true)
    : declared === undefined
      ? plainView(rows)
      : makeView(rows, withId(declared.fields.map((f) => ({ id: f.id, type: f.type ?? firstType(rows, f.id), ...(f.info === undefined ? {} : { info: f.info }) }))), undefined, declared.key);
  if (!Array.isArray(source) || seenOnce.has(source)) views.set(source, view);
  else seenOnce.add(source);
  return view;
}

/** A table's fields with `_id` (int) first unless they have it. */
function withId(fields: readonly FieldInfo[]): readonly FieldInfo[] {
  return fields.some((f) => f.id === '_id') ? fields : [{ id: '_id', type: 'int' }, ...fields];
}

function makeView(rows: readonly Row[], fields: readonly FieldInfo[], tableId: string | undefined, given?: string | true): TableView {
  return {
    rows,
    length: rows.length,
    fields,
    fieldById: new Map(fields.map((f) => [f.id, f])),
    pending: undefined,
    tableId,
    given,
    indexes: new Map(),
    equalityUses: new Map(),
    search: undefined,
    searchUses: 0,
  };
}

function plainView(rows: readonly Row[]): TableView {
  if (rows.length < 2) return makeView(rows, inferFields(rows), undefined);
  const first = rows[0] as Row;
  const view = makeView(rows, typed(rows, ownKeys(first)), undefined);
  view.pending = forInKeys(first);
  return view;
}

/**
 * A field of plain records as an embedder declares it (`evaluate`'s
 * `fields` option): its name, or CKAN's `datastore_create` field
 * (`{ id, type, info }`, the type in any spelling CKAN accepts: `int`,
 * `text[]`, `double precision`); a field without a type is typed by its
 * first non-null value, as an inferred one is.
 * @example
 * const fields: FieldDeclaration[] = ['title', { id: 'year', type: 'int' }];
 */
export type FieldDeclaration = string | { readonly id: string; readonly type?: string; readonly info?: FieldDictionary };

/** Declared fields, checked: each with its type when declared, and their JSON (which views compare). */
export interface DeclaredFields {
  readonly fields: readonly { readonly id: string; readonly type?: FieldType; readonly info?: FieldDictionary }[];
  readonly key: string;
}

/**
 * Checks declared fields (`FieldDeclaration`): a list of names or
 * `{ id, type, info }` objects, each id once, each type one ckql's engines
 * hold. `_id` may be listed (an answer's `fields` can be passed back as
 * they are); it is always the int first field. Every mistake is
 * `DATA_INVALID` naming the field.
 * @example
 * declaredFields(['title', { id: 'year', type: 'int' }]).fields // [{ id: 'title' }, { id: 'year', type: 'int4' }]
 * declaredFields([{ id: 'year', type: 'integr' }]) // throws DATA_INVALID: fields: the field "year" has the type "integr", …
 */
export function declaredFields(option: unknown): DeclaredFields {
  const refuse = (detail: string, hint?: string): Error => toolError('DATA_INVALID', ['fields', detail], { key: 'fields', ...(hint === undefined ? {} : { hint }) });
  if (!Array.isArray(option)) throw refuse('the fields option is a list of field names or CKAN fields ([{"id": …, "type": …}])');
  const fields: { id: string; type?: FieldType; info?: FieldDictionary }[] = [];
  const seen = new Set<string>();
  (option as readonly unknown[]).forEach((entry, k) => {
    const object = typeof entry === 'object' && entry !== null && !Array.isArray(entry) ? (entry as Readonly<Record<string, unknown>>) : undefined;
    const id = typeof entry === 'string' ? entry : object?.id;
    if (typeof id !== 'string' || id === '') {
      throw refuse(`field ${k + 1} is neither a name nor a field with an "id" (CKAN's {"id": …, "type": …})`);
    }
    if (seen.has(id)) throw refuse(`the field ${JSON.stringify(id)} is declared twice`);
    seen.add(id);
    const typeName = object?.type;
    const type = typeof typeName === 'string' ? fieldTypeOf(typeName) : undefined;
    if (typeName !== undefined && type === undefined) {
      throw refuse(`the field ${JSON.stringify(id)} has the type ${JSON.stringify(typeName)}, which ckql's engines do not hold`, `use ${SUPPORTED_FIELD_TYPES}`);
    }
    const info = object?.info;
    if (info !== undefined && (typeof info !== 'object' || info === null || Array.isArray(info))) {
      throw refuse(`the info of ${JSON.stringify(id)} must be an object ({"label": …, "notes": …})`);
    }
    if (id === '_id') {
      if (type !== undefined && type !== 'int4' && type !== 'int8') throw refuse(`the field "_id" is the record's int position; it cannot be ${JSON.stringify(typeName)}`);
      return;
    }
    fields.push({ id, ...(type === undefined ? {} : { type }), ...(info === undefined ? {} : { info: info as FieldDictionary }) });
  });
  return { fields, key: JSON.stringify(fields) };
}

/**
 * Finishes the field list of plain records (a no-op when it is complete):
 * every key of every record, in order of first appearance. When every
 * record has the first record's keys, the list is the first record's, as
 * it is; otherwise it is read from the records.
 */
export function completeFields(view: TableView): void {
  const keys = view.pending;
  if (keys === undefined) return;
  view.pending = undefined;
  if (keysLikeFirst(view.rows, keys)) return;
  view.fields = inferFields(view.rows);
  view.fieldById = new Map(view.fields.map((f) => [f.id, f]));
}

/**
 * Whether every record after the first lists the same keys as `keys` (the
 * first's, as `for…in` lists them), in any order: then the records' fields,
 * in order of first appearance, are the first record's.
 *
 * Each record is one pass of generated code that counts its keys with
 * `for…in` and asks for each of `keys` with `in` by its literal name
 * (`"status" in r`). For records of one shape V8 answers every `in` from
 * the shape, so the check costs what counting the keys costs, about half
 * of comparing each key with the first record's in order (BENCHMARKS.md,
 * Evaluate, plain arrays). The same number of keys and each of `keys`
 * present means the same set of keys where `in` sees only what `for…in`
 * lists: so the record's prototype must be `Object.prototype` or null, and
 * no key may be a name `Object.prototype` has (`constructor`): otherwise,
 * and for a record that fails, the keys are compared one by one in order
 * (`hasKeys`). One record passes that should not: one holding a key of
 * `keys` as an own property it does not enumerate (only
 * `Object.defineProperty` makes one) and another key besides.
 * @example
 * keysLikeFirst([{ a: 1, b: 2 }, { b: 3, a: 4 }], ['a', 'b']) // true
 * keysLikeFirst([{ a: 1, b: 2 }, { a: 3, c: 4 }], ['a', 'b']) // false
 */
export function keysLikeFirst(rows: readonly Row[], keys: readonly string[]): boolean {
  const n = keys.length;
  const check = keys.some((key) => key in Object.prototype) ? undefined : keyCheck(keys);
  if (check !== undefined) return check(rows, keys, hasKeys, Object.prototype, Object.getPrototypeOf);
  for (let i = 1; i < rows.length; i++) if (!hasKeys(rows[i] as Row, keys, n)) return false;
  return true;
}

type KeyCheck = (
  rows: readonly Row[], keys: readonly string[], has: typeof hasKeys, objectPrototype: object, prototypeOf: (o: object) => unknown,
) => boolean;

/** `keyCheck`'s functions by their keys (JSON): the source is made and looked up once per key list, not once per call. Bounded: cleared when full. */
const keyChecks = new Map<string, KeyCheck | undefined>();
const KEY_CHECKS_MAX = 256;

/** The generated check of `keysLikeFirst` for `keys`, whose names enter the code only as JSON string literals. */
function keyCheck(keys: readonly string[]): KeyCheck | undefined {
  const cacheKey = JSON.stringify(keys);
  if (keyChecks.has(cacheKey)) return keyChecks.get(cacheKey);
  if (keyChecks.size >= KEY_CHECKS_MAX) keyChecks.clear();
  const made = makeKeyCheck(keys);
  keyChecks.set(cacheKey, made);
  return made;
}

function makeKeyCheck(keys: readonly string[]): KeyCheck | undefined {
  const present = keys.map((key) => `${JSON.stringify(key)} in r`).join(' && ');
  const body = `const n = keys.length;
for (let i = 1; i < rows.length; i++) {
  const r = rows[i];
  if (typeof r === "object" && r !== null) {
    let count = 0;
    for (const key in r) count++;
    if (count === n${present === '' ? '' : ` && ${present}`}) {
      const proto = prototypeOf(r);
      if (proto === objectPrototype || proto === null) continue;
    }
  }
  if (!has(r, keys, n)) return false;
}
return true;`;
  return generate<KeyCheck>(['rows', 'keys', 'has', 'objectPrototype', 'prototypeOf'], body);
}

/**
 * The field list of plain records (docs/semantics.md, Data model): `_id` (int)
 * first, then every key in the order it first appears, typed from its first
 * non-null value: number → numeric, boolean → bool, string → text, other →
 * json; a key that is null everywhere is text.
 *
 * Rows usually share their keys in one order, so each row's keys are
 * compared in order with the first row's (a fixed array, so each comparison
 * is one load and a pointer compare of interned strings), and only a row
 * that differs is looked at key by key.
 * @example
 * inferFields([{ a: 1 }, { b: 'x', a: null }]) // [_id int, a numeric, b text]
 */
export function inferFields(rows: readonly Row[]): FieldInfo[] {
  const common = rows.length === 0 ? [] : forInKeys(rows[0] as Row);
  const n = common.length;
  const keys = rows.length === 0 ? [] : ownKeys(rows[0] as Row);
  for (let i = 1; i < rows.length; i++) {
    if (!hasKeys(rows[i] as Row, common, n)) for (const key of ownKeys(rows[i] as Row)) if (!keys.includes(key)) keys.push(key);
  }
  return typed(rows, keys);
}

/**
 * Whether `row` lists exactly `keys` (length `n`), in that order, under
 * `for…in`: one load and one compare of interned strings per key.
 * @example
 * hasKeys({ a: 1, b: 2 }, ['a', 'b'], 2) // true
 * hasKeys({ b: 2, a: 1 }, ['a', 'b'], 2) // false
 */
export function hasKeys(row: Row, keys: readonly string[], n: number): boolean {
  let j = 0;
  for (const key in row) {
    if (j < n && key === keys[j]) j++;
    else return false;
  }
  return j === n;
}

/** The keys `for…in` lists (inherited enumerable ones too: a row with any is looked at key by key). */
function forInKeys(row: Row): string[] {
  const keys: string[] = [];
  for (const key in row) keys.push(key);
  return keys;
}

/** A record's own enumerable keys, in order (inherited ones are not data). */
function ownKeys(row: Row): string[] {
  return forInKeys(row).filter((key) => Object.hasOwn(row, key));
}

function typed(rows: readonly Row[], keys: readonly string[]): FieldInfo[] {
  return [{ id: '_id', type: 'int' }, ...keys.filter((id) => id !== '_id').map((id) => ({ id, type: firstType(rows, id) }))];
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

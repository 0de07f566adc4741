/**
 * The filter tree: what `filters` means once parsed, for every engine.
 * CKAN 2.11's dict (`{"a": 1, "b": [2, 3]}`: an AND of equalities and
 * lists) and CKAN 2.12's operators (`{"year": {"gte": 2020}}`, mixed lists,
 * `$or`/`$and`; docs/ckan-2.12-reference.md §1) both parse to it, so the
 * memory evaluator and the SQL builder each have one thing to answer.
 *
 * `parseFilters` follows CKAN's parser (`ckanext/datastore/filters.py`) rule
 * for rule, operation count and depth included, and gives its errors word
 * for word; where CKAN fails with a 500 (an empty operation `{}`, an `in`
 * that is not a list, a list of no filters, a 2.11 filter that is not a
 * dict) this answers a 409 Validation Error instead.
 */
import { DatastoreError, validationError } from '../errors.js';
import type { CkanVersion, FieldInfo, Filters, JsonValue } from './types.js';

/** A comparison of one field with one value (2.12's operators; `eq` is also 2.11's scalar filter). */
export type ComparisonOperator = 'eq' | 'gt' | 'gte' | 'lt' | 'lte';

export type FilterNode =
  /** every child holds (`and` of none is true) / some child holds (`or` of none is false) */
  | { readonly op: 'and' | 'or'; readonly of: readonly FilterNode[] }
  | { readonly op: ComparisonOperator; readonly field: string; readonly value: JsonValue }
  /** the field equals one of the values; an empty list holds for no record */
  | { readonly op: 'in'; readonly field: string; readonly values: readonly JsonValue[] };

/** How deeply `$or`/`$and` may nest (a top-level list counts as one level). */
export const MAX_FILTER_DEPTH = 10;
/** How many operations a filter may create, each `$or`/`$and` and each implicit AND counted. */
export const MAX_FILTER_OPERATIONS = 100;

/**
 * The tree of a 2.11 filter dict: an `and` of one `eq` (a scalar) or `in`
 * (a list) per key, in key order.
 * @example
 * dictFilterTree({ stage: ['active', 'survey'], subject: 'math' })
 * // → { op: 'and', of: [{ op: 'in', field: 'stage', values: ['active', 'survey'] }, { op: 'eq', field: 'subject', value: 'math' }] }
 */
export function dictFilterTree(filters: Filters): FilterNode {
  const of: FilterNode[] = [];
  for (const field of Object.keys(filters)) {
    const value = filters[field] as JsonValue;
    of.push(Array.isArray(value) ? { op: 'in', field, values: value as readonly JsonValue[] } : { op: 'eq', field, value });
  }
  return { op: 'and', of };
}

/**
 * Options of `parseFilters`.
 * @example
 * const options: ParseFiltersOptions = { ckan: '2.12', fields: [{ id: '_id', type: 'int' }, { id: 'year', type: 'int4' }] };
 */
export interface ParseFiltersOptions {
  readonly ckan: CkanVersion;
  /** the table's fields; left out, field names are not checked (the structure still is) */
  readonly fields?: readonly FieldInfo[];
}

/**
 * Parses `filters` as the version does. 2.12: a dict (entries ANDed) or a
 * list of dicts (ORed); a field's value is a scalar (`eq`), an operator dict
 * (`{"gte": 1, "lt": 5}`, several keys ANDed), or a list (an `in` of its
 * values, or, when it holds operator dicts, an OR of them and of one `in`
 * of the rest); `$or`/`$and` take lists of dicts; `$$name` is the field
 * `$name`. 2.11: a dict whose list values are an `in`, or array equality on
 * an array column. `undefined`: no filter at all.
 *
 * Throws CKAN's 409s: `Filters must be defined as a dict or a list of
 * dicts`, `Maximum nesting depth for filter operations reached`, `Maximum
 * number of filter operations exceeded`, `Unknown operators (must be one of
 * $or, $and): $not`, `Filter operations must be defined as a list of dicts:
 * …`, `Unknown field: x` (2.11: `invalid value "x"`), `Unknown filter
 * operation: FilterOp(field='n', op='ne', value=1)`.
 *
 * @example
 * parseFilters({ num: [{ lte: 1 }, 7, { gte: 10 }] }, { ckan: '2.12' })
 * // → { op: "or", of: [{ op: "lte", field: "num", value: 1 }, { op: "gte", field: "num", value: 10 },
 * //                    { op: "in", field: "num", values: [7] }] }
 */
export function parseFilters(filters: unknown, options: ParseFiltersOptions): FilterNode | undefined {
  return options.ckan === '2.12' ? parse212(filters, options.fields) : parse211(filters, options.fields);
}

/**
 * The version whose reading of `filters` answers it: 2.12 for a form only
 * CKAN 2.12 reads (docs/ckan-2.12-reference.md §1): a list of filter
 * dicts, an operator dict among a field's values (`{"gte": 5}`, alone or in
 * a list), or a `$or`/`$and` list. CKAN 2.11 refuses each of them (`Filters
 * must be defined as a dict`, `can't adapt type 'dict'`), so reading them as
 * 2.12 turns no 2.11 answer into another. Anything else is 2.11's.
 * @example filtersVersion({ year: { gte: 2020 } }) // → '2.12'
 * @example filtersVersion({ year: [2020, 2021], $x: 1 }) // → '2.11'
 */
export function filtersVersion(filters: unknown): CkanVersion {
  if (Array.isArray(filters)) return filters.length > 0 && filters.every(isDict) ? '2.12' : '2.11';
  if (!isDict(filters)) return '2.11';
  for (const value of Object.values(filters)) {
    // an operator dict, a list holding one, or `$or`/`$and`'s list of filter dicts
    if (isDict(value) || (Array.isArray(value) && value.some(isDict))) return '2.12';
  }
  return '2.11';
}

// ---------------------------------------------------------------------------
// CKAN 2.11

/** Each field list's types by id, made once per list: a table's fields do not change (`Table` is read-only). */
const typesByFields = new WeakMap<readonly FieldInfo[], ReadonlyMap<string, string>>();

function typesOf(fields: readonly FieldInfo[]): ReadonlyMap<string, string> {
  let types = typesByFields.get(fields);
  if (types === undefined) {
    types = new Map(fields.map((f) => [f.id, f.type]));
    typesByFields.set(fields, types);
  }
  return types;
}

function parse211(filters: unknown, fields: readonly FieldInfo[] | undefined): FilterNode | undefined {
  if (isFalsy(filters)) return undefined;
  if (typeof filters !== 'object' || filters === null || Array.isArray(filters)) {
    // CKAN 2.11 calls `.keys()` on it and answers 500.
    throw validationError('filters', 'Filters must be defined as a dict');
  }
  const dict = filters as Readonly<Record<string, JsonValue>>;
  const types = fields === undefined ? undefined : typesOf(fields);
  const of: FilterNode[] = [];
  for (const field of Object.keys(dict)) {
    const type = types?.get(field);
    if (types !== undefined && type === undefined) throw validationError('filters', `invalid value ${quote(field)}`);
    const value = dict[field] as JsonValue;
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) throw invalidQuery("can't adapt type 'dict'");
    if (!Array.isArray(value)) {
      of.push({ op: 'eq', field, value });
    } else if (type !== undefined && type.startsWith('_')) {
      // A list on an array column is equality with the whole array (2.11; 2.12 reads it as `in`).
      of.push({ op: 'eq', field, value });
    } else {
      const values = value as readonly JsonValue[];
      for (const item of values) {
        if (typeof item === 'object' && item !== null) {
          throw invalidQuery(Array.isArray(item) ? `operator does not exist: ${type ?? 'text'} = ${type ?? 'text'}[]` : "can't adapt type 'dict'");
        }
      }
      of.push({ op: 'in', field, values });
    }
  }
  return of.length === 0 ? undefined : { op: 'and', of };
}

/** CKAN's answer to a statement PostgreSQL refuses (docs/ckan-2.11-reference.md §5, Error envelope). */
function invalidQuery(reason: string): DatastoreError {
  return new DatastoreError('VALIDATION_ERROR', `query: Invalid query (${reason})`, {
    body: { query: ['Invalid query'], info: { orig: [reason] }, __type: 'Validation Error' } as unknown as { __type: string },
  });
}

// ---------------------------------------------------------------------------
// CKAN 2.12 (ckanext/datastore/filters.py)

/** CKAN's `FilterOp`: `$or`/`$and` hold operations, the others a field and an operand. */
interface Op {
  readonly op: string;
  readonly field: string | null;
  readonly value: JsonValue | readonly Op[];
}

class Parser212 {
  readonly errors: string[] = [];
  private total = 0;

  constructor(private readonly known: ReadonlySet<string> | undefined) {}

  private newOp(op: string, field: string | null, value: JsonValue | readonly Op[]): Op {
    this.total += 1;
    if (this.total > MAX_FILTER_OPERATIONS) throw tooMany();
    return { op, field, value };
  }

  private checkOperator(key: string, value: JsonValue): string | undefined {
    if (key !== '$or' && key !== '$and') return `Unknown operators (must be one of $or, $and): ${key}`;
    if (!isListOfDicts(value)) return `Filter operations must be defined as a list of dicts: ${pythonStr(value)}`;
    return undefined;
  }

  /** The members of a `$or`/`$and` (or the top-level list), with same-kind children merged into them. */
  combineMembers(value: JsonValue, parent: string, level: number): Op[] | undefined {
    const children = this.processMembers(value, level + 1);
    return children === undefined ? undefined : combine(children, parent);
  }

  private processMembers(value: JsonValue, level: number): Op[] | undefined {
    if (level >= MAX_FILTER_DEPTH) throw validationError('filters', 'Maximum nesting depth for filter operations reached');
    const out: Op[] = [];
    for (const item of value as readonly JsonValue[]) {
      const dict = item as Readonly<Record<string, JsonValue>>;
      const keys = Object.keys(dict);
      if (keys.length >= MAX_FILTER_OPERATIONS) throw tooMany();
      const childOps: Op[] = [];
      for (const key of keys) {
        const v = dict[key] as JsonValue;
        if (isOperatorKey(key)) {
          const error = this.checkOperator(key, v);
          if (error !== undefined) {
            this.errors.push(error);
            continue;
          }
          const members = this.combineMembers(v, key, level);
          if (members !== undefined && members.length > 0) childOps.push(this.newOp(key, null, members));
        } else {
          const op = this.fieldOperation(key, v);
          if (op !== undefined) childOps.push(op);
        }
      }
      if (childOps.length === 1) out.push(childOps[0] as Op);
      else if (childOps.length > 1) out.push(this.newOp('$and', null, combine(childOps, '$and')));
    }
    return out.length > 0 ? out : undefined;
  }

  private checkField(field: string, op: string, value: JsonValue): Op | undefined {
    if (this.known !== undefined && !this.known.has(field)) {
      this.errors.push(`Unknown field: ${field}`);
      return undefined;
    }
    return this.newOp(op, field, value);
  }

  fieldOperation(key: string, value: JsonValue): Op | undefined {
    // `$$name` is the field `$name`. CKAN strips again on every level it recurses, and so does this.
    const field = key.startsWith('$$') ? key.slice(1) : key;
    if (typeof value !== 'object' || value === null) return this.checkField(field, 'eq', value);
    if (!Array.isArray(value)) {
      const dict = value as Readonly<Record<string, JsonValue>>;
      const keys = Object.keys(dict);
      if (keys.length === 0) {
        // CKAN: IndexError, a 500.
        this.errors.push(`Empty filter operation for field: ${field}`);
        return undefined;
      }
      if (keys.length === 1) return this.checkField(field, keys[0] as string, dict[keys[0] as string] as JsonValue);
      const children: Op[] = [];
      for (const k of keys) {
        const op = this.fieldOperation(field, { [k]: dict[k] as JsonValue });
        if (op !== undefined) children.push(op);
      }
      return children.length > 0 ? this.newOp('$and', null, children) : undefined;
    }
    const list = value as readonly JsonValue[];
    const operations: JsonValue[] = [];
    const values: JsonValue[] = [];
    for (const item of list) {
      if (typeof item === 'object' && item !== null && !Array.isArray(item)) operations.push(item);
      else values.push(item);
    }
    if (operations.length === 0) return this.newOp('in', field, list);
    const members: Op[] = [];
    for (const item of operations) {
      const op = this.fieldOperation(field, item);
      if (op !== undefined) members.push(op);
    }
    if (values.length > 0) members.push(this.newOp('in', field, values));
    return members.length > 0 ? this.newOp('$or', null, members) : undefined;
  }

  root(input: JsonValue): Op | undefined {
    if (Array.isArray(input)) {
      if (input.length >= MAX_FILTER_OPERATIONS) throw tooMany();
      const children = this.combineMembers(input, '$or', 0);
      return children === undefined || children.length === 0 ? undefined : this.newOp('$or', null, children);
    }
    const dict = input as Readonly<Record<string, JsonValue>>;
    const keys = Object.keys(dict);
    if (keys.length >= MAX_FILTER_OPERATIONS) throw tooMany();
    const children: Op[] = [];
    for (const key of keys) {
      const value = dict[key] as JsonValue;
      if (isOperatorKey(key)) {
        const error = this.checkOperator(key, value);
        if (error !== undefined) {
          this.errors.push(error);
          continue;
        }
        const members = this.combineMembers(value, key, 0);
        if (members === undefined || members.length === 0) continue;
        if (key === '$and') children.push(...members);
        else children.push(this.newOp(key, null, members));
      } else {
        const op = this.fieldOperation(key, value);
        if (op !== undefined) children.push(op);
      }
    }
    if (this.errors.length > 0) return undefined;
    if (children.length > 1) return this.newOp('$and', null, children);
    return children[0];
  }
}

function parse212(filters: unknown, fields: readonly FieldInfo[] | undefined): FilterNode | undefined {
  if (isFalsy(filters)) return undefined;
  if (!(isDict(filters) || isListOfDicts(filters as JsonValue))) {
    throw validationError('filters', 'Filters must be defined as a dict or a list of dicts');
  }
  const parser = new Parser212(fields === undefined ? undefined : new Set(fields.map((f) => f.id)));
  const root = parser.root(filters as JsonValue);
  if (parser.errors.length > 0) {
    throw new DatastoreError('VALIDATION_ERROR', `filters: ${parser.errors.join('; ')}`, {
      body: { filters: parser.errors.slice(0, 100), __type: 'Validation Error' },
    });
  }
  if (root === undefined) {
    // A list whose members hold no filter: CKAN then fails on it (a 500).
    if (Array.isArray(filters)) throw validationError('filters', 'Filters must hold at least one filter operation');
    return undefined;
  }
  const types = fields === undefined ? undefined : typesOf(fields);
  return toNode(root, types);
}

/** CKAN's tree as a `FilterNode`; an operation CKAN's SQL builder does not know is its error (F9). */
function toNode(op: Op, types: ReadonlyMap<string, string> | undefined): FilterNode {
  if (op.field === null) {
    return { op: op.op === '$or' ? 'or' : 'and', of: (op.value as readonly Op[]).map((child) => toNode(child, types)) };
  }
  switch (op.op) {
    case 'eq':
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte':
      return { op: op.op, field: op.field, value: operand(op.value as JsonValue, op.field, op.op, types) };
    case 'in':
      if (!Array.isArray(op.value)) {
        // CKAN iterates over the operand: a 500 for a number, characters for a text. Both refused here.
        throw validationError('filters', `Filter operation "in" must be given a list: ${opRepr(op)}`);
      }
      return { op: 'in', field: op.field, values: (op.value as readonly JsonValue[]).map((v) => operand(v, op.field as string, 'eq', types)) };
    default:
      throw validationError('filters', `Unknown filter operation: ${opRepr(op)}`);
  }
}

const SQL_OPERATORS: Readonly<Record<string, string>> = { eq: '=', gt: '>', gte: '>=', lt: '<', lte: '<=' };
const PG_TYPE_NAMES: Readonly<Record<string, string>> = {
  int: 'integer', int4: 'integer', int8: 'bigint', float8: 'double precision', float: 'double precision', bool: 'boolean', timestamp: 'timestamp without time zone',
};

/**
 * An operand as CKAN 2.12 binds it (`_where_clauses`' `placeholder`): on a
 * column of type `text` through Python's `str()`, so a list or an object is
 * its `repr` (`"['a']"`); on an array column a list is an array, compared
 * whole; on any other column psycopg2 sends a list as an array and cannot
 * send an object, and PostgreSQL refuses either: CKAN's 409 `Invalid query`.
 * Without the table's fields, the operand is left as it is.
 */
function operand(value: JsonValue, field: string, op: string, types: ReadonlyMap<string, string> | undefined): JsonValue {
  const type = types?.get(field);
  if (type === undefined || typeof value !== 'object' || value === null) return value;
  if (type === 'text') return pythonRepr(value);
  if (!Array.isArray(value)) throw invalidQuery("can't adapt type 'dict'");
  if (type.startsWith('_')) return value;
  const list = value as readonly JsonValue[];
  const pgType = PG_TYPE_NAMES[type] ?? type;
  if (list.length === 0) throw invalidQuery(`invalid input syntax for type ${pgType}: "{}"`);
  if (list.some((item) => typeof item === 'object' && item !== null && !Array.isArray(item))) throw invalidQuery("can't adapt type 'dict'");
  const element = list.every((item) => typeof item === 'boolean') ? 'boolean' : list.every((item) => typeof item === 'number') ? (list.every((item) => Number.isInteger(item)) ? 'integer' : 'numeric') : 'text';
  throw invalidQuery(`operator does not exist: ${pgType} ${SQL_OPERATORS[op] ?? '='} ${element}[]`);
}

function combine(ops: readonly Op[], parent: string): Op[] {
  const out: Op[] = [];
  for (const op of ops) {
    if (op.op === parent && op.field === null) out.push(...(op.value as readonly Op[]));
    else out.push(op);
  }
  return out;
}

function tooMany(): DatastoreError {
  return validationError('filters', 'Maximum number of filter operations exceeded');
}

function isOperatorKey(key: string): boolean {
  return key.startsWith('$') && !key.startsWith('$$');
}

function isDict(value: unknown): value is Readonly<Record<string, JsonValue>> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isListOfDicts(value: JsonValue): boolean {
  return Array.isArray(value) && (value as readonly JsonValue[]).every(isDict);
}

/** Python's falsiness, which CKAN's parser starts with: no filter at all. */
function isFalsy(value: unknown): boolean {
  if (value === undefined || value === null || value === false || value === 0 || value === '') return true;
  if (Array.isArray(value)) return false; // `[]` is handled by the caller's structure rules
  return typeof value === 'object' && Object.keys(value).length === 0;
}

function opRepr(op: Op): string {
  return `FilterOp(field=${op.field === null ? 'None' : pythonRepr(op.field)}, op=${pythonRepr(op.op)}, value=${pythonRepr(op.value as JsonValue)})`;
}

function quote(text: string): string {
  return JSON.stringify(text.length <= 200 ? text : `${text.slice(0, 199)}…`);
}

/** Python's `str()` of a JSON value: a text as it is, anything else its `repr`. */
function pythonStr(value: JsonValue): string {
  return typeof value === 'string' ? cut(value) : pythonRepr(value);
}

const REPR_BUDGET = 300;

function cut(text: string): string {
  return text.length <= REPR_BUDGET ? text : `${text.slice(0, REPR_BUDGET)}…`;
}

/**
 * Python's `repr()` of a JSON value, as CKAN's messages print values
 * (`{'num': 1}`, `['a', None, True]`), cut after a few hundred characters.
 * @example
 * pythonRepr({ num: [1, 'x', null, true] }) // → "{'num': [1, 'x', None, True]}"
 */
export function pythonRepr(value: JsonValue): string {
  const parts: string[] = [];
  let size = 0;
  const push = (text: string): boolean => {
    parts.push(text);
    size += text.length;
    return size < REPR_BUDGET;
  };
  const walk = (v: JsonValue, depth: number): boolean => {
    if (depth > 64) return push('...');
    if (v === null) return push('None');
    if (v === true) return push('True');
    if (v === false) return push('False');
    if (typeof v === 'number') return push(Number.isInteger(v) ? String(v) : String(v).replace(/e([+-])(\d)$/, 'e$10$2'));
    if (typeof v === 'string') return push(pythonString(v.length > REPR_BUDGET ? v.slice(0, REPR_BUDGET) : v));
    if (Array.isArray(v)) {
      if (!push('[')) return false;
      const list = v as readonly JsonValue[];
      for (let i = 0; i < list.length; i++) {
        if (i > 0 && !push(', ')) return false;
        if (!walk(list[i] as JsonValue, depth + 1)) return false;
      }
      return push(']');
    }
    if (!push('{')) return false;
    let first = true;
    for (const key of Object.keys(v)) {
      if (!first && !push(', ')) return false;
      first = false;
      if (!push(`${pythonString(key)}: `)) return false;
      if (!walk((v as Record<string, JsonValue>)[key] as JsonValue, depth + 1)) return false;
    }
    return push('}');
  };
  return walk(value, 0) ? parts.join('') : `${parts.join('').slice(0, REPR_BUDGET)}…`;
}

function pythonString(text: string): string {
  const quoteChar = text.includes("'") && !text.includes('"') ? '"' : "'";
  let out = quoteChar;
  for (const ch of text) {
    const c = ch.codePointAt(0) as number;
    if (ch === '\\') out += '\\\\';
    else if (ch === quoteChar) out += `\\${ch}`;
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (c < 0x20 || c === 0x7f) out += `\\x${c.toString(16).padStart(2, '0')}`;
    else out += ch;
  }
  return out + quoteChar;
}

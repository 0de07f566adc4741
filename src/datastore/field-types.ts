/**
 * CKAN's (PostgreSQL's) spellings of the types ckql's engines hold, as
 * `datastore_create` accepts them and a data dictionary's `type_override`
 * names them (`int`, `integer`, `text[]`, `double precision`, …).
 */
import type { FieldType, ScalarFieldType } from './types.js';

/** The type names ckql's engines hold, and the PostgreSQL spellings CKAN accepts for them. */
const TYPE_NAMES: Readonly<Record<string, ScalarFieldType>> = {
  text: 'text', varchar: 'text', 'character varying': 'text', string: 'text',
  int: 'int4', int4: 'int4', integer: 'int4',
  int8: 'int8', bigint: 'int8',
  numeric: 'numeric', decimal: 'numeric', number: 'numeric',
  float8: 'float8', float: 'float8', 'double precision': 'float8',
  bool: 'bool', boolean: 'bool',
  date: 'date',
  timestamp: 'timestamp', 'timestamp without time zone': 'timestamp', datetime: 'timestamp',
  json: 'json', nested: 'json', jsonb: 'json',
};

/** The types `fieldTypeOf` reads, as a hint for a type it does not: the names, and the common spellings of some. */
export const SUPPORTED_FIELD_TYPES = 'text, int4 (int, integer), int8 (bigint), numeric, float8, bool, date, timestamp, json, or an array of one of them (text[] or _text)';

/**
 * A CKAN (PostgreSQL) type name as ckql's engines hold it: `int` → `int4`,
 * `text[]` → `_text`, `double precision` → `float8`. Undefined for a type
 * ckql's engines do not hold.
 * @example fieldTypeOf('text[]') // → '_text'
 * @example fieldTypeOf('integer') // → 'int4'
 */
export function fieldTypeOf(name: string): FieldType | undefined {
  const text = name.trim().toLowerCase();
  const array = text.endsWith('[]') ? text.slice(0, -2) : text.startsWith('_') ? text.slice(1) : undefined;
  if (array !== undefined) {
    const element = TYPE_NAMES[array.trim()];
    return element === undefined || element === 'json' ? undefined : `_${element}`;
  }
  return TYPE_NAMES[text];
}


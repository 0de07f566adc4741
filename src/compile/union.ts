/**
 * Unions of resources (docs/expressions.md, Unions): `from a union b` reads
 * the records of each resource in turn as one table, SQL's `UNION ALL`.
 * Fields are matched by name, in the order they are first met; a field one
 * resource lacks is null in its records; the types of a name agree, or are
 * numbers and widen as PostgreSQL's `UNION` does (int4 < int8 < numeric <
 * float8). `_resource` holds each record's resource as written.
 *
 * Every engine and target reads a union through this one description: the
 * memory engine concatenates the tables, the SQL writer writes the
 * `UNION ALL`, the plans' union scan pages each resource in turn.
 */
import type { StringValue } from '../ast.js';
import type { FieldInfo, FieldType } from '../datastore/types.js';
import { queryError } from '../errors.js';
import { identifier } from './sql.js';

/** The virtual field naming each record's resource, as written. */
export const RESOURCE_FIELD = '_resource';

/**
 * A union's resource as `_resource` gives it: as written (a `dataset/resource`
 * name the client sends as its id included).
 * @example writtenName({ kind: 'string', span, value: '5b1e…', written: 'crime/2023' }) // → 'crime/2023'
 */
export function writtenName(resource: StringValue): string {
  return resource.written ?? resource.value;
}

/** One resource of a union, with its fields. */
export interface UnionMember {
  /** as written (`crime_2021`, `portal:crime_2023`); `_resource`'s value */
  readonly resource: StringValue;
  readonly fields: readonly FieldInfo[];
}

/** The order of the number types a union widens through. */
const NUMBER_RANK: Readonly<Record<string, number>> = { int: 0, int4: 0, int8: 1, numeric: 2, float: 3, float8: 3 };

/**
 * The type two resources' fields of one name have in their union, or
 * undefined when they do not agree.
 * @example unionType('int4', 'numeric') // → 'numeric'
 * @example unionType('text', 'int4') // → undefined
 */
export function unionType(a: FieldType, b: FieldType): FieldType | undefined {
  if (a === b) return a;
  const ra = NUMBER_RANK[a];
  const rb = NUMBER_RANK[b];
  if (ra === undefined || rb === undefined) return undefined;
  if (ra === rb) return a === 'int4' || a === 'float8' ? a : b;
  return ra > rb ? a : b;
}

/**
 * The fields of a union: each name once, in the order first met, typed by
 * `unionType` (UNION_TYPE_MISMATCH naming both resources, at the later
 * one's span), then `_resource`. A resource's own `_resource` field is
 * replaced by the virtual one.
 * @example
 * unionFields([{ resource: a, fields: [{ id: 'x', type: 'int4' }] }, { resource: b, fields: [{ id: 'x', type: 'numeric' }, { id: 'y', type: 'text' }] }])
 * // → [x numeric, y text, _resource text]
 */
export function unionFields(members: readonly UnionMember[]): FieldInfo[] {
  const merged = new Map<string, { field: FieldInfo; from: UnionMember }>();
  for (const member of members) {
    for (const field of member.fields) {
      if (field.id === RESOURCE_FIELD) continue;
      const known = merged.get(field.id);
      if (known === undefined) {
        merged.set(field.id, { field, from: member });
        continue;
      }
      const type = unionType(known.field.type, field.type);
      if (type === undefined) {
        throw queryError('UNION_TYPE_MISMATCH', member.resource.span, [field.id, writtenName(known.from.resource), known.field.type, writtenName(member.resource), field.type], {
          hint: `union resources whose ${JSON.stringify(field.id)} has one type (or number types), or query ${writtenName(known.from.resource)} and ${writtenName(member.resource)} apart`,
        });
      }
      if (type !== known.field.type) merged.set(field.id, { field: { ...known.field, type }, from: known.from });
    }
  }
  return [...[...merged.values()].map((entry) => entry.field), { id: RESOURCE_FIELD, type: 'text' }];
}

/**
 * A value of a field as the union types it: a number widened to float8 is
 * a number (a numeric held as its digits becomes the nearest double), every
 * other widening keeps the value as it is held.
 */
export function widenedValue(value: unknown, type: FieldType): unknown {
  if ((type === 'float8' || type === 'float') && typeof value === 'string') return Number(value);
  if ((type === 'float8' || type === 'float') && typeof value === 'bigint') return Number(value);
  return value;
}

/** The column of a union's statement that says which resource a row is of (its place in the union), for the order of rows. */
export const MEMBER_COLUMN = '_ckql_member';

/**
 * A union as an SQL table: each resource's `SELECT` of the union's fields
 * (`NULL` of the union's type where it lacks one), `_full_text`, its name
 * as `_resource` and its place as `_ckql_member`, joined by `UNION ALL`.
 * @example
 * unionSql([{ resource: a, fields: [x int4] }, { resource: b, fields: [x numeric, y text] }], identifier, stringLiteral)
 * // (SELECT "x", NULL::text AS "y", "_full_text", 'a'::text AS "_resource", 0 AS "_ckql_member" FROM "a" UNION ALL SELECT "x", "y", … FROM "b")
 */
export function unionSql(members: readonly UnionMember[], table: (resource: string) => string, literal: (text: string) => string, quote: (name: string) => string): string {
  const fields = unionFields(members).filter((f) => f.id !== RESOURCE_FIELD);
  const selects = members.map((member, i) => {
    const own = new Set(member.fields.map((f) => f.id));
    const columns = fields.map((f) => (own.has(f.id) ? quote(f.id) : `NULL::${sqlType(f.type)} AS ${quote(f.id)}`));
    return `SELECT ${[...columns, quote('_full_text'), `${literal(writtenName(member.resource))}::text AS ${quote(RESOURCE_FIELD)}`, `${i} AS ${quote(MEMBER_COLUMN)}`].join(', ')} FROM ${table(member.resource.value)}`;
  });
  return `(${selects.join(' UNION ALL ')})`;
}

/**
 * A union's table as the SQL writer asks for it: its statement, written
 * with the writer's literals (a quoted text for CKAN, a `$n` parameter for
 * an engine). The caller that knows the resources' fields makes it, so
 * that what only plans (the language service) carries no SQL of unions.
 */
export type UnionTable = (literal: (text: string) => string) => string;

/**
 * The `UnionTable` of resources with their fields, each resource's table named by `table`.
 * @example unionTable(members, identifier)(stringLiteral) // (SELECT … FROM "a" UNION ALL SELECT … FROM "b")
 */
export function unionTable(members: readonly UnionMember[], table: (resource: string) => string): UnionTable {
  return (literal) => unionSql(members, table, literal, identifier);
}

/** A field type as a PostgreSQL type name (CKAN's `int` is `int4`; an array keeps its `[]`). */
function sqlType(type: FieldType): string {
  if (type.startsWith('_')) return `${sqlType(type.slice(1) as FieldType)}[]`;
  return type === 'int' ? 'int4' : type === 'float' ? 'float8' : type === 'json' ? 'jsonb' : type;
}

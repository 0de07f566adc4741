/**
 * The memory engine's unions (docs/expressions.md, Unions): each source
 * that is a union becomes one table, its resources' rows in turn with the
 * union's fields (compile/union.ts), and the query reads that table as it
 * reads any other. The table is made once per union of the same tables and
 * kept while they are.
 */
import type { From, Query, StringValue } from '../../ast.js';
import { querySources, unionMembers } from '../../ast.js';
import type { Row, Table } from '../../datastore/types.js';
import { queryError, resourceNotFound } from '../../errors.js';
import { RESOURCE_FIELD, unionFields, widenedValue, writtenName } from '../../compile/union.js';
import { rowFactory } from './row-shape.js';

/** What finds a table by id or alias (engine.ts's `TableLookup`, written out here so that engine.ts alone imports this file). */
interface TableLookup {
  find(idOrAlias: string): Table | undefined;
  readonly tables: readonly Table[];
}

/** The union tables made so far, by their first table, then by the members' ids and names. */
const made = new WeakMap<Table, Map<string, { readonly members: readonly Table[]; readonly table: Table }>>();

/**
 * The query with each union source read from a table of its own, and the
 * lookup that finds those tables; a query without union as it is.
 * @example withUnionTables(parse('from a union b where x > 1'), lookup).query.from // → from <union table> a
 */
export function withUnionTables(query: Query, lookup: TableLookup): { readonly query: Query; readonly lookup: TableLookup } {
  if (querySources(query).every((from) => from.union === undefined)) return { query, lookup };
  const unions = new Map<string, Table>();
  const read = (from: From): From => {
    if (from.union === undefined) return from;
    const members = unionMembers(from).map((resource): { resource: StringValue; table: Table } => {
      if (resource.kind === 'param') throw queryError('UNBOUND_PARAMETER', resource.span, [resource.name]);
      if (resource.value === '') throw queryError('EMPTY_RESOURCE', resource.span, []);
      const table = lookup.find(resource.value);
      if (table === undefined) throw resourceNotFound(resource.value);
      return { resource, table };
    });
    const table = unionTable(members);
    unions.set(table.id, table);
    const first = from.resource as StringValue;
    // The union's fields are qualified as the source's: by its alias, else by its first resource as written.
    const alias = from.alias ?? { kind: 'name' as const, span: first.span, name: first.value };
    return { kind: 'from', span: from.span, resource: { kind: 'string', span: first.span, value: table.id }, alias };
  };
  const rewritten: Query = {
    ...query,
    from: read(query.from),
    ...(query.joins === undefined ? {} : { joins: query.joins.map((join) => ({ ...join, source: read(join.source) })) }),
  };
  return {
    query: rewritten,
    lookup: { tables: lookup.tables, find: (idOrAlias) => unions.get(idOrAlias) ?? lookup.find(idOrAlias) },
  };
}

/** The table of a union: its members' rows in turn, each with every field of the union and `_resource`. */
function unionTable(members: readonly { readonly resource: StringValue; readonly table: Table }[]): Table {
  const key = members.map((m) => `${m.table.id}\u0000${m.resource.value}`).join('\u0001');
  const first = members[0]!.table;
  let byKey = made.get(first);
  const known = byKey?.get(key);
  if (known !== undefined && known.members.every((table, i) => table === members[i]!.table)) return known.table;
  const fields = unionFields(members.map((m) => ({ resource: m.resource, fields: m.table.fields })));
  const make = rowFactory(fields.map((f) => f.id));
  const rows: Row[] = [];
  for (const { resource, table } of members) {
    const own = new Set(table.fields.map((f) => f.id));
    const reads = fields.map((field) => {
      if (field.id === RESOURCE_FIELD) {
        const name = writtenName(resource);
        return (): unknown => name;
      }
      if (!own.has(field.id)) return (): unknown => null;
      const type = table.fields.find((f) => f.id === field.id)!.type;
      const id = field.id;
      return type === field.type ? (row: Row): unknown => row[id] ?? null : (row: Row): unknown => widenedValue(row[id] ?? null, field.type);
    });
    const values: unknown[] = new Array(reads.length);
    for (const row of table.rows) {
      for (let i = 0; i < reads.length; i++) values[i] = reads[i]!(row);
      rows.push(make(values) as Row);
    }
  }
  const table: Table = {
    id: `union:${members.map((m) => writtenName(m.resource)).join('+')}`,
    aliases: [],
    fields,
    rows,
    ...(members.some((m) => m.table.private === true) ? { private: true } : {}),
  };
  if (byKey === undefined) made.set(first, (byKey = new Map()));
  byKey.set(key, { members: members.map((m) => m.table), table });
  return table;
}

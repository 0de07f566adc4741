/**
 * `datastore_info` over a PostgreSQL datastore, with the statements CKAN
 * 2.11.5 runs (`resource_fields` in ckanext/datastore/backend/postgres.py):
 * the count, the table's type and sizes, its aliases, and per field its
 * type, its data dictionary and its column's `schema` from the catalogue.
 */
import type { FieldInfo } from '../../datastore/types.js';
import type { ColumnSchema, DatastoreInfo } from '../types.js';
import type { SqlSession } from './db.js';
import { quoteIdentifier } from './db.js';

/**
 * The info of the table `id` (an id, not an alias) whose fields (`_id`
 * first, with their `info`) are `fields`.
 * @example
 * await datastoreInfo(tx, id, fields)
 * // → { meta: { id, count: 12, table_type: 'BASE TABLE', size: 8192, db_size: …, idx_size: …, aliases: ['courses'] },
 * //     fields: [{ id: 'code', type: 'text', schema: { native_type: 'text', notnull: false, … } }, …] }
 */
export async function datastoreInfo(session: SqlSession, id: string, fields: readonly FieldInfo[]): Promise<DatastoreInfo> {
  const table = quoteIdentifier(id);
  const one = async (sql: string, params: readonly unknown[] = []): Promise<unknown> => Object.values((await session.query(sql, params)).rows[0] ?? {})[0];
  const count = Number(await one(`SELECT count(_id) FROM ${table}`));
  const tableType = String((await one(`SELECT table_type FROM information_schema.tables WHERE table_name = $1`, [id])) ?? 'BASE TABLE');
  const matview = Number(await one(`SELECT count(*) FROM pg_matviews WHERE matviewname = $1`, [id])) > 0;
  const size = Number(await one(`SELECT pg_relation_size($1)`, [table]));
  const dbSize = Number(await one(`SELECT pg_database_size(current_database())`));
  const idxSize = Number(await one(`SELECT pg_indexes_size($1)`, [table]));
  const aliases = (await session.query(`SELECT name FROM "_table_metadata" WHERE alias_of = $1`, [id])).rows.map((row) => String(row['name']));
  const schemaRows = await session.query(
    `SELECT f.attname AS column_name,
            pg_catalog.format_type(f.atttypid, f.atttypmod) AS native_type,
            f.attnotnull AS notnull,
            i.relname AS index_name,
            CASE WHEN i.oid <> 0 THEN true ELSE false END AS is_index,
            CASE WHEN p.contype = 'u' THEN true WHEN p.contype = 'p' THEN true ELSE false END AS uniquekey
       FROM pg_attribute f
       JOIN pg_class c ON c.oid = f.attrelid
       JOIN pg_type t ON t.oid = f.atttypid
       LEFT JOIN pg_constraint p ON p.conrelid = c.oid AND f.attnum = ANY (p.conkey)
       LEFT JOIN pg_index AS ix ON f.attnum = ANY (ix.indkey) AND c.oid = f.attrelid AND c.oid = ix.indrelid
       LEFT JOIN pg_class AS i ON ix.indexrelid = i.oid
      WHERE c.relkind = 'r'::char AND c.relname = $1 AND f.attnum > 0
      ORDER BY c.relname, f.attnum`,
    [id],
  );
  // A column in several indexes has several rows; CKAN keeps the last. Booleans come as PostgreSQL's text (`t`).
  const yes = (value: unknown): boolean => value === true || value === 't';
  const schema = new Map<string, ColumnSchema>();
  for (const row of schemaRows.rows) {
    schema.set(String(row['column_name']), {
      native_type: String(row['native_type']),
      notnull: yes(row['notnull']),
      index_name: row['index_name'] === null || row['index_name'] === undefined ? null : String(row['index_name']),
      is_index: yes(row['is_index']),
      uniquekey: yes(row['uniquekey']),
    });
  }
  return {
    meta: { id, count, table_type: matview ? 'MATERIALIZED VIEW' : tableType, size, db_size: dbSize, idx_size: idxSize, aliases },
    fields: fields
      .filter((field) => !field.id.startsWith('_'))
      .map((field) => ({ ...field, schema: schema.get(field.id) ?? { native_type: field.type, notnull: false, index_name: null, is_index: false, uniquekey: false } })),
  };
}

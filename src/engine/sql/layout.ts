/**
 * CKAN's table layout (docs/engines.md): a table per resource named by its
 * id, `_id` serial key, the data columns with CKAN's types, `_full_text`
 * kept by `populate_full_text_trigger`, the full-text indexes CKAN creates,
 * aliases as views and the `_table_metadata` view. The DDL follows CKAN
 * 2.11.5's `set_permissions.sql` and `backend/postgres.py` (`create_table`,
 * `_build_fts_indexes`, `create_alias`).
 */
import { createHash } from 'node:crypto';
import type { FieldDictionary, FieldInfo, FieldType, ResourceMeta } from '../../datastore/types.js';
import type { SqlSession } from './db.js';
import { quoteIdentifier } from './db.js';

/**
 * What `ckql load` sets up once per database, as `ckan datastore
 * set-permissions` does: the `nested` type CKAN stores `json` columns in,
 * the trigger function, and the `_table_metadata` view. Safe to run again.
 */
export const DATASTORE_SETUP_SQL = [
  `DO $body$ BEGIN
     IF NOT EXISTS (SELECT 1 FROM pg_type WHERE typname = 'nested') THEN
       CREATE TYPE "nested" AS (json json, extra text);
     END IF;
   END $body$`,
  // CKAN's trigger, verbatim in effect: every column not starting with `_`, as JSON text, joined by spaces.
  `CREATE OR REPLACE FUNCTION populate_full_text_trigger() RETURNS trigger AS $body$
     BEGIN
       IF NEW._full_text IS NOT NULL THEN
         RETURN NEW;
       END IF;
       NEW._full_text := (
         SELECT to_tsvector(string_agg(value, ' '))
         FROM json_each_text(row_to_json(NEW.*))
         WHERE key NOT LIKE '\\_%');
       RETURN NEW;
     END;
   $body$ LANGUAGE plpgsql`,
  `CREATE OR REPLACE VIEW "_table_metadata" AS
     SELECT DISTINCT
       substr(md5(dependee.relname || COALESCE(dependent.relname, '')), 0, 17) AS "_id",
       dependee.relname AS name,
       dependee.oid AS oid,
       dependent.relname AS alias_of
     FROM pg_class AS dependee
       LEFT OUTER JOIN pg_rewrite AS r ON r.ev_class = dependee.oid
       LEFT OUTER JOIN pg_depend AS d ON d.objid = r.oid
       LEFT OUTER JOIN pg_class AS dependent ON d.refobjid = dependent.oid
     WHERE (dependee.oid != dependent.oid OR dependent.oid IS NULL)
       AND (dependee.relkind = 'r'::"char" OR dependee.relkind = 'v'::"char")
       AND dependee.relnamespace = (SELECT oid FROM pg_namespace WHERE nspname = 'public')
     ORDER BY dependee.oid DESC`,
] as const;

/**
 * A mark of this version of `DATASTORE_SETUP_SQL`, kept as the comment of
 * the trigger function: a database that carries it is set up already, and
 * a load skips the set-up (its first run in a fresh PGlite costs most of a
 * second). A database set up otherwise (CKAN's) lacks it and is set up again,
 * as before: every statement is idempotent.
 */
export const DATASTORE_SETUP_MARK: string = `ckql datastore set-up ${createHash('sha1').update(DATASTORE_SETUP_SQL.join('\n'), 'utf8').digest('hex').slice(0, 12)}`;

/** Whether the database holds this version's set-up (`DATASTORE_SETUP_MARK`). */
export const DATASTORE_SETUP_CHECK_SQL: string =
  `SELECT obj_description(to_regprocedure('populate_full_text_trigger()'), 'pg_proc') = '${DATASTORE_SETUP_MARK}' AND to_regclass('"_table_metadata"') IS NOT NULL AND to_regtype('"nested"') IS NOT NULL AS ready`;

/** The set-up's last statement: the mark. */
export const DATASTORE_SETUP_MARK_SQL: string = `COMMENT ON FUNCTION populate_full_text_trigger() IS '${DATASTORE_SETUP_MARK}'`;

/** ckql's own note on a table (its comment): not CKAN's, which keeps this in its main database. */
export interface TableNote {
  readonly private?: boolean;
  readonly source?: string;
  /** the resource's name, description and dataset, for a catalogue */
  readonly meta?: ResourceMeta;
}

/**
 * The PostgreSQL type a loaded column is created with. `int` is `int4`
 * unless a value needs `int8`; `json` is CKAN's `nested` composite; an array
 * type `_x` is `x[]`.
 * @example sqlTypeOf('int', [1, 2 ** 40]) // → 'int8'
 */
export function sqlTypeOf(type: FieldType, values: Iterable<unknown> = []): string {
  switch (type) {
    case 'int': {
      for (const v of values) if (typeof v === 'number' && (v > 2147483647 || v < -2147483648)) return 'int8';
      return 'int4';
    }
    case 'float':
      return 'float8';
    case 'json':
      return 'nested';
    default:
      return type.startsWith('_') ? `${sqlTypeOf(type.slice(1) as FieldType)}[]` : type;
  }
}

/** The statements that create a resource's table (columns in order, `_id` and `_full_text` first) and its trigger. */
export function createTableSql(id: string, columns: readonly { readonly id: string; readonly sqlType: string }[]): string[] {
  const table = quoteIdentifier(id);
  const defs = ['"_id" serial primary key', '"_full_text" tsvector', ...columns.map((c) => `${quoteIdentifier(c.id)} ${c.sqlType}`)];
  return [
    `CREATE TABLE ${table} (${defs.join(', ')})`,
    `CREATE TRIGGER zfulltext BEFORE INSERT OR UPDATE ON ${table} FOR EACH ROW EXECUTE PROCEDURE populate_full_text_trigger()`,
  ];
}

/**
 * CKAN's full-text indexes (`_build_fts_indexes` with the 2.11 defaults:
 * method `gist`, language `english`, a per-column index for `text` columns),
 * named as CKAN names them: the SHA-1 of id + indexed expression.
 */
export function fullTextIndexSql(id: string, columns: readonly { readonly id: string; readonly sqlType: string }[]): string[] {
  const table = quoteIdentifier(id);
  const expressions = ['_full_text', ...columns.filter((c) => c.sqlType === 'text').map((c) => `to_tsvector('english', ${quoteIdentifier(c.id)})`)];
  return expressions.map((expression) => {
    const name = createHash('sha1').update(id + expression, 'utf8').digest('hex');
    return `CREATE INDEX ${quoteIdentifier(name)} ON ${table} USING gist(${expression})`;
  });
}

/** An alias as CKAN's `create_alias` makes it: a view of the whole table. */
export function createAliasSql(alias: string, id: string): string {
  return `CREATE VIEW ${quoteIdentifier(alias)} AS SELECT * FROM ${quoteIdentifier(id)}`;
}

/** A resource as the catalogue reads it from the database. */
export interface CatalogEntry {
  readonly id: string;
  readonly aliases: string[];
  /** `_id` first (type `int`), then the columns not starting with `_`, `nested` shown as `json` */
  readonly fields: FieldInfo[];
  readonly note: TableNote;
}

/**
 * Reads every resource table of the `public` schema: tables not starting
 * with `_`, in creation order, their aliases (views over them) and columns.
 * Works on any CKAN datastore database (read-only).
 */
export async function readCatalog(session: SqlSession): Promise<CatalogEntry[]> {
  const tables = await session.query(
    `SELECT c.relname AS name, obj_description(c.oid, 'pg_class') AS note
       FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p') AND c.relname NOT LIKE '\\_%'
      ORDER BY c.oid`,
  );
  const entries = new Map<string, CatalogEntry>();
  for (const row of tables.rows) {
    const name = String(row['name']);
    entries.set(name, { id: name, aliases: [], fields: [{ id: '_id', type: 'int' }], note: parseNote(row['note']) });
  }
  if (entries.size === 0) return [];
  const columns = await session.query(
    `SELECT c.relname AS table, a.attname AS name, t.typname AS type, col_description(c.oid, a.attnum) AS comment
       FROM pg_attribute a
       JOIN pg_class c ON c.oid = a.attrelid
       JOIN pg_namespace n ON n.oid = c.relnamespace
       JOIN pg_type t ON t.oid = a.atttypid
      WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p') AND a.attnum > 0 AND NOT a.attisdropped
        AND a.attname NOT LIKE '\\_%'
      ORDER BY c.oid, a.attnum`,
  );
  for (const row of columns.rows) {
    const entry = entries.get(String(row['table']));
    if (entry === undefined) continue;
    const type = String(row['type']);
    // CKAN renames its `nested` composite back to `json` in `fields` (`_unrename_json_field`).
    const info = columnInfo(row['comment']);
    entry.fields.push({ id: String(row['name']), type: (type === 'nested' ? 'json' : type) as FieldType, ...(info === undefined ? {} : { info }) });
  }
  const aliases = await session.query(
    `SELECT DISTINCT v.relname AS alias, t.relname AS table, v.oid
       FROM pg_class v
       JOIN pg_rewrite r ON r.ev_class = v.oid
       JOIN pg_depend d ON d.objid = r.oid
       JOIN pg_class t ON t.oid = d.refobjid
      WHERE v.relkind = 'v' AND t.relkind IN ('r', 'p') AND v.oid <> t.oid
        AND v.relnamespace = (SELECT oid FROM pg_namespace WHERE nspname = 'public')
      ORDER BY v.oid`,
  );
  for (const row of aliases.rows) entries.get(String(row['table']))?.aliases.push(String(row['alias']));
  return [...entries.values()];
}

function parseNote(comment: unknown): TableNote {
  if (typeof comment !== 'string') return {};
  try {
    const parsed = JSON.parse(comment) as { ckql?: TableNote };
    return typeof parsed.ckql === 'object' && parsed.ckql !== null ? parsed.ckql : {};
  } catch {
    return {};
  }
}

/**
 * A column's data dictionary as CKAN 2.11 keeps it: the column comment is
 * JSON whose `_info` key holds `info` (`description::json -> '_info'`,
 * ckanext/datastore/backend/postgres.py `_get_field_info`). A comment that
 * is not JSON, or has no `_info` object (a 2.10 comment before `ckan
 * datastore upgrade`), gives none, as CKAN 2.11 gives none.
 * @example columnInfo(' {"_info":{"label":"Year"}}') // → { label: 'Year' }
 */
export function columnInfo(comment: unknown): FieldDictionary | undefined {
  if (typeof comment !== 'string') return undefined;
  try {
    const parsed = JSON.parse(comment) as { _info?: unknown };
    const info = typeof parsed === 'object' && parsed !== null ? parsed._info : undefined;
    return typeof info === 'object' && info !== null && !Array.isArray(info) && Object.keys(info).length > 0 ? (info as FieldDictionary) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The comment CKAN 2.11's `datastore_create` writes on a column with `info`:
 * a space (its mark of the 2.11 layout), then `{"_info": …}` as compact JSON.
 * @example columnCommentSql('r', 'year', { label: 'Year' }) // → `COMMENT ON COLUMN "r"."year" IS ' {"_info":{"label":"Year"}}'`
 */
export function columnCommentSql(id: string, column: string, info: FieldDictionary): string {
  const literal = `' ${JSON.stringify({ _info: info }).replaceAll("'", "''")}'`;
  return `COMMENT ON COLUMN ${quoteIdentifier(id)}.${quoteIdentifier(column)} IS ${literal}`;
}

/**
 * CKAN's `primary_key`: not a primary key (`_id` is one) but a unique index,
 * named as `create_indexes` names it (the SHA-1 of the id and the quoted columns).
 */
export function primaryKeySql(id: string, key: readonly string[]): string {
  const columns = key.map((name) => quoteIdentifier(name)).join(', ');
  const name = createHash('sha1').update(id + columns, 'utf8').digest('hex');
  return `CREATE UNIQUE INDEX ${quoteIdentifier(name)} ON ${quoteIdentifier(id)} (${columns})`;
}

/** ckql's note as a table comment: JSON under a `ckql` key, so another tool's comment is never mistaken for it. */
export function tableNoteSql(id: string, note: TableNote): string {
  // COMMENT takes no bound parameters; the text is ckql's own JSON, quoted as a string literal.
  const literal = `'${JSON.stringify({ ckql: note }).replaceAll("'", "''")}'`;
  return `COMMENT ON TABLE ${quoteIdentifier(id)} IS ${literal}`;
}

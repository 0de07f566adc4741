/**
 * CKAN's table layout on PGlite, to run the `sql` target's text: one table
 * per resource named by its alias (a view by its id), `_id` the row key,
 * `_full_text` a tsvector of every field's text, each field with the
 * PostgreSQL type CKAN gives it (docs/ckan-2.11-reference.md §5).
 */
import type { FieldType, Row, Table } from '../../src/datastore/types.js';
import { TOTAL_COLUMN } from '../../src/compile/sql.js';
import { readSqlText } from '../../src/datastore/sql-text.js';
import { borrowPglite } from './pglite-pool.js';

const pgTypes: Record<string, string> = {
  text: 'text',
  int: 'integer',
  int4: 'integer',
  int8: 'bigint',
  numeric: 'numeric',
  float8: 'double precision',
  float: 'double precision',
  bool: 'boolean',
  date: 'date',
  timestamp: 'timestamp',
  json: 'json',
};

function pgType(type: FieldType): string {
  return type.startsWith('_') ? `${pgTypes[type.slice(1)] ?? 'text'}[]` : (pgTypes[type] ?? 'text');
}

const quote = (name: string) => `"${name.replaceAll('"', '""')}"`;

export interface CkanSql {
  /** Runs the text as datastore_search_sql would, and reads records and total back as ckql does. */
  run(sql: string, table: Table): Promise<{ records: Row[]; total: number }>;
  close(): Promise<void>;
}

/**
 * A PGlite database holding the tables in CKAN's layout (started from ckql's
 * cached cluster: an initdb per file cost seconds), with PGlite's own parsers.
 */
export async function openCkanSql(tables: readonly Table[]): Promise<CkanSql> {
  const { pg: db, release } = await borrowPglite();
  for (const table of tables) {
    const fields = table.fields.filter((f) => f.id !== '_id');
    const name = table.aliases[0] ?? table.id;
    const columns = ['"_id" integer primary key', '"_full_text" tsvector', ...fields.map((f) => `${quote(f.id)} ${pgType(f.type)}`)];
    await db.exec(`CREATE TABLE ${quote(name)} (${columns.join(', ')})`);
    if (name !== table.id) await db.exec(`CREATE VIEW ${quote(table.id)} AS SELECT * FROM ${quote(name)}`);
    for (const [i, row] of table.rows.entries()) {
      const values = fields.map((f) => {
        const v = row[f.id];
        if (v === undefined || v === null) return null;
        if (f.type === 'json') return JSON.stringify(v);
        if (typeof v === 'object') return v;
        return String(v);
      });
      const placeholders = fields.map((_, j) => `$${j + 2}`);
      await db.query(
        `INSERT INTO ${quote(name)} ("_id", ${fields.map((f) => quote(f.id)).join(', ')}) VALUES ($1${placeholders.map((p) => `, ${p}`).join('')})`,
        [row._id ?? i + 1, ...values],
      );
    }
    const text = fields.map((f) => `coalesce(CAST(${quote(f.id)} AS text), '')`).join(` || ' ' || `) || "''";
    await db.exec(`UPDATE ${quote(name)} SET "_full_text" = to_tsvector('english', ${text})`);
  }
  return {
    async run(sql, table) {
      // as CKAN runs it: through SQLAlchemy's text(), which reads `\:` as `:`
      const read = readSqlText(sql);
      if ('bindParameter' in read) throw new Error(`CKAN would fail on the bind parameter :${read.bindParameter} in ${sql}`);
      const result = await db.query<Record<string, unknown>>(read.sql);
      const types = new Map(table.fields.map((f) => [f.id, f.type]));
      let total = 0;
      const records = result.rows.map((row) => {
        total = Number(row[TOTAL_COLUMN]);
        const out: Record<string, unknown> = {};
        for (const [key, value] of Object.entries(row)) {
          if (key === TOTAL_COLUMN || key === '_full_text') continue;
          out[key] = readValue(value, types.get(key));
        }
        return out as Row;
      });
      return { records, total };
    },
    close: release,
  };
}

/** A value as datastore_search gives it: numbers as numbers, dates as ISO text. */
function readValue(value: unknown, type: FieldType | undefined): unknown {
  if (value === null || value === undefined) return null;
  if (typeof value === 'bigint') return Number(value);
  if ((type === 'numeric' || type === 'int8') && typeof value === 'string') return Number(value);
  if (value instanceof Date) {
    const iso = value.toISOString();
    return type === 'date' ? iso.slice(0, 10) : iso.replace(/\.000Z$/, '').replace(/Z$/, '');
  }
  return value;
}

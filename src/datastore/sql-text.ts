/**
 * `datastore_search_sql`'s text as CKAN reads it. CKAN runs the statement
 * through SQLAlchemy's `text()` (`ckanext/datastore/backend/postgres.py`,
 * `search_sql`, and the `EXPLAIN` of `get_table_and_function_names_from_sql`),
 * which knows nothing of SQL's quotes:
 *
 * - a `:name` that follows no word character, `:` or `\` and is followed by
 *   no `:` is a bind parameter, inside a quoted literal or name too; CKAN
 *   passes no values, so `WHERE note = 'a :b'` fails ("A value is required
 *   for bind parameter 'b'"), an HTTP 500 on a portal;
 * - `\:` followed by a run of word characters (possibly none) and then no
 *   `:` or word character is read as that `:` and run, the backslash dropped.
 *
 * So the `sql` target writes every `:` as `\:` (`escapeColons`), which
 * SQLAlchemy reads back as `:` wherever it stands, and `ckql serve` reads a
 * statement as CKAN does (`readSqlText`). `\w` here is Python's: Unicode
 * letters, digits and `_`. (SQLAlchemy 1.4 and 2.0 read alike:
 * /work/shared/reference/aggregation-and-joins.md §3.3.)
 */

const BIND_PARAMETER = /(?<![:\p{L}\p{N}_\\]):([\p{L}\p{N}_]+)(?!:)/u;
const ESCAPED_COLON = /\\(:[\p{L}\p{N}_$]*)(?![:\p{L}\p{N}_$])/gu;

/**
 * Text with every `:` written `\:`, which SQLAlchemy's `text()` reads back as
 * `:` and never as a bind parameter.
 * @example escapeColons("'a :b'") // → "'a \\:b'"
 */
export function escapeColons(text: string): string {
  return text.replaceAll(':', '\\:');
}

/**
 * What PostgreSQL receives for a statement CKAN runs through SQLAlchemy's
 * `text()` without values: the statement with each `\:` read as `:`, or,
 * when it holds a bind parameter, that parameter's name.
 * @example
 * readSqlText("SELECT 'a \\:b'") // → { sql: "SELECT 'a :b'" }
 * readSqlText("SELECT 'a :b'")   // → { bindParameter: 'b' }
 * readSqlText("SELECT x::text")  // → { sql: 'SELECT x::text' }
 */
export function readSqlText(sql: string): { readonly sql: string } | { readonly bindParameter: string } {
  const bind = BIND_PARAMETER.exec(sql);
  if (bind !== null) return { bindParameter: bind[1] as string };
  return { sql: unescapeColons(sql) };
}

/**
 * The text inside a quoted SQL name or literal that `escapeColons` wrote, as
 * SQLAlchemy hands it on: each `\:` read as `:`.
 * @example unescapeColons('a \\:b') // → 'a :b'
 */
export function unescapeColons(text: string): string {
  return text.replace(ESCAPED_COLON, '$1');
}

/**
 * The `sql` target: a query as one `SELECT` for `datastore_search_sql`
 * (docs/beyond-the-request.md, Targets), on CKAN's table layout: the table
 * is named by the resource id, `_id` is the row key, `_full_text` the
 * search vector.
 *
 * Safety: identifiers are double-quoted with `"` doubled, literals
 * single-quoted with `'` doubled (standard_conforming_strings, PostgreSQL's
 * default, so a backslash is an ordinary character), and a NUL anywhere is
 * an error. Nothing is concatenated that did not pass through one of these.
 * In both a `:` is written `\:`: CKAN runs the text through SQLAlchemy's
 * `text()`, which reads `:word` as a bind parameter even inside quotes and
 * `\:` as `:` (datastore/sql-text.ts); run the text on PostgreSQL directly
 * only through `readSqlText`.
 * Every literal is untyped text, which PostgreSQL reads as the column's type,
 * as the language reads a value as the field's type.
 */
import type { PlainQuery, PlainSortKey, Query, StringValue, Parameter, Value } from '../ast.js';
import { selectedNames } from '../ast.js';
import { queryError } from '../errors.js';
import { conditionSql, type FieldSql, type LiteralWriter } from './sql-expression.js';

// Conditions and expressions are written together (a case holds conditions, a comparison expressions): sql-expression.ts.
export { conditionSql, type FieldSql, type LiteralWriter };

import { escapeColons } from '../datastore/sql-text.js';
import { unboundError } from './dict-filters.js';
import { hasPrefixWord, tsQueryText } from './search-text.js';

/** A `datastore_search_sql` request. */
export interface SqlRequest {
  readonly sql: string;
}

/** The column that carries the total of every record the query matches. */
export const TOTAL_COLUMN = '_ckql_total';

/** The `limit` of a query without one, and the most rows `datastore_search_sql` gives (`rows_max`). */
export const DEFAULT_LIMIT = 100;
export const MAX_LIMIT = 32_000;

/**
 * The `SELECT` of a query: the same records, order and total as
 * `datastore_search` gives for it. The total is a window count in the same
 * statement (column `_ckql_total`); the client drops it and `_full_text`.
 *
 * @example
 * sqlRequest(parse('from courses where year >= 2020 and stage != retired order by year desc limit 5'), 'courses').sql
 * // → SELECT *, count(*) OVER () AS "_ckql_total" FROM "courses"
 * //   WHERE ("year" >= '2020' AND "stage" <> 'retired') ORDER BY "year" DESC, "_id" LIMIT 5
 */
export function sqlRequest(query: PlainQuery, resource: string): SqlRequest {
  const table = identifier(resource);
  const where = whereSql(query, stringLiteral);
  const whereText = where === undefined ? '' : ` WHERE ${where}`;
  const columns = query.select === undefined ? '*' : selectedNames(query.select)!.map(identifier).join(', ');
  const limit = Math.min(count(query.limit?.value, DEFAULT_LIMIT), MAX_LIMIT);
  const offset = count(query.offset?.value, 0);
  const page = ` LIMIT ${limit}${offset > 0 ? ` OFFSET ${offset}` : ''}`;
  const total = `count(*) OVER () AS ${identifier(TOTAL_COLUMN)}`;
  const keys = query.order?.keys ?? [];
  if (query.select?.distinct) {
    const order = keys.length === 0 ? '' : ` ORDER BY ${keys.map(sortKeySql).join(', ')}`;
    return { sql: `SELECT *, ${total} FROM (SELECT DISTINCT ${columns} FROM ${table}${whereText}) AS "_ckql"${order}${page}` };
  }
  // `_id` last: the language's order among equal keys is the records' order.
  const order = ` ORDER BY ${[...keys.map(sortKeySql), '"_id"'].join(', ')}`;
  return { sql: `SELECT ${columns}, ${total} FROM ${table}${whereText}${order}${page}` };
}

/**
 * One page of a query by `_id` keyset, for `datastore_search_sql`: the
 * query's conditions and search, `_id` above the last one read, in `_id`
 * order, no total (a window count would read every match on every page).
 * @example
 * keysetSql(parse('from r where year >= 2020'), 'r', ['_id', 'year'], 1000, 500)
 * // → SELECT "_id", "year" FROM "r" WHERE ("year" >= '2020') AND "_id" > 1000 ORDER BY "_id" LIMIT 500
 */
export function keysetSql(query: Query, resource: string, columns: readonly string[], after: number | undefined, limit: number): string {
  const where: string[] = [];
  const matching = whereSql(query, stringLiteral);
  if (matching !== undefined) where.push(`(${matching})`);
  if (after !== undefined) where.push(`"_id" > ${Math.floor(after)}`);
  const whereText = where.length === 0 ? '' : ` WHERE ${where.join(' AND ')}`;
  return `SELECT ${columns.map(identifier).join(', ')} FROM ${identifier(resource)}${whereText} ORDER BY "_id" LIMIT ${Math.max(0, Math.floor(limit))}`;
}

/**
 * An identifier in double quotes, `"` doubled, `:` written `\:`.
 * @example identifier('say "hi"') // → '"say ""hi"""'
 */
export function identifier(name: string): string {
  checkNul(name);
  return `"${escapeColons(name.replaceAll('"', '""'))}"`;
}

/**
 * Text as a literal in single quotes, `'` doubled, `:` written `\:`.
 * @example stringLiteral("it's 10:30") // → "'it''s 10\\:30'"
 */
export function stringLiteral(text: string): string {
  checkNul(text);
  return `'${escapeColons(text.replaceAll("'", "''"))}'`;
}

function checkNul(text: string): void {
  if (text.includes('\u0000')) {
    throw queryError('NUL_IN_SQL', { start: 0, end: 0 }, [], { hint: 'remove the NUL (\\u0000) character from the value or name' });
  }
}


/**
 * A query's `where` and `search` as one SQL condition (undefined when it has
 * neither), each value written by `literal`.
 * @example whereSql(parse('from t where a != 1'), stringLiteral) // → `"a" <> '1'`
 */
export function whereSql(query: Query, literal: LiteralWriter, field: FieldSql = plainField, searched = '"_full_text"'): string | undefined {
  const where: string[] = [];
  if (query.where !== undefined) where.push(conditionSql(query.where.condition, literal, field));
  if (query.search !== undefined) {
    const search = searchSql(query, literal, field, searched);
    if (search !== undefined) where.push(search);
  }
  return where.length === 0 ? undefined : where.join(' AND ');
}


const plainField: FieldSql = (operand) => {
  if (operand.kind !== 'field') throw new Error('an aggregate outside a grouped query');
  return identifier(operand.name);
};

/**
 * CKAN's full-text search, in SQL: `_full_text` for the whole record (of
 * the first resource, in a join: `searched`), `to_tsvector` of a field for
 * per-field search.
 */
function searchSql(query: Query, literal: LiteralWriter, field: FieldSql, searched: string): string | undefined {
  const search = query.search!;
  const language = literal(search.language?.value ?? 'english');
  const tsQuery = (text: StringValue | Parameter): string => {
    if (text.kind === 'param') throw unboundError(text);
    return hasPrefixWord(text.value)
      ? `to_tsquery(${language}, ${literal(tsQueryText(text.value))})`
      : `plainto_tsquery(${language}, ${literal(text.value)})`;
  };
  if (search.fields !== undefined) {
    return search.fields
      .map((f) => `to_tsvector(${language}, CAST(${field(f.field)} AS text)) @@ ${tsQuery(f.text)}`)
      .join(' AND ');
  }
  const text = search.text!;
  if (text.kind === 'string' && /^\s*$/.test(text.value)) return undefined;
  return `${searched} @@ ${tsQuery(text)}`;
}

/** One `order by` key: its field, direction and `NULLS` placement. */
export function sortKeySql(key: PlainSortKey): string {
  const nulls = key.nulls === undefined ? '' : ` NULLS ${key.nulls.toUpperCase()}`;
  return `${identifier(key.field.name)} ${key.direction.toUpperCase()}${nulls}`;
}

function count(value: Value | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (value.kind === 'param') throw unboundError(value);
  if (value.kind !== 'number' || !Number.isSafeInteger(value.value) || value.value < 0) {
    throw queryError('INVALID_INTEGER', value.span, ['limit or offset', String(value.kind === 'number' ? value.value : value.kind)]);
  }
  return value.value;
}

/**
 * `datastore_search` as CKAN 2.11.5 builds its SQL (`backend/postgres.py`:
 * `validate`, `_where_clauses`, `_textsearch_query`, `_sort`,
 * `datastore_search`, `search_data`; docs/ckan-2.11-reference.md §2–§4), and
 * 2.12's filter tree, `distinct` and timestamps when asked
 * (docs/ckan-2.12-reference.md §1.3, §3). Every value from the request is a
 * bound parameter; names enter the text only as quoted identifiers.
 */
import type { FieldInfo, FieldSearch, JsonValue } from '../../datastore/types.js';
import type { FilterNode } from '../../datastore/filters.js';
import { invalidQuery } from './errors.js';
import type { CkanVersion } from '../types.js';
import { quoteIdentifier as id } from './db.js';
import { arrayLiteral } from './load.js';
import type { SqlSearchRequest } from './request.js';
import { pythonStr } from './request.js';

/** The statements of one search, sharing their parameters. */
export interface BuiltSearch {
  /** one text value: the records as JSON (objects, lists) — or rows of column texts (csv, tsv) */
  readonly records: { readonly sql: string; readonly params: readonly unknown[] };
  /** `count(*)`, when `include_total` and no estimate answers */
  readonly count: { readonly sql: string; readonly params: readonly unknown[] } | undefined;
  /** true when `total` may come from `pg_class.reltuples` (2.11's `total_estimation_threshold`) */
  readonly mayEstimate: boolean;
  /** `fields` of the result: the columns answered, rank columns typed `float` */
  readonly fields: readonly FieldInfo[];
  /** for `include_next_page`: the single `_id` sort's direction, or undefined */
  readonly keyset: 'asc' | 'desc' | undefined;
  /** the page's rows (`SELECT *`, filtered, sorted, limited), with `records`' parameters */
  readonly page: string;
}

/** Parameters in order; each value gets the type a psycopg2 literal of it would have. */
class Params {
  readonly values: unknown[] = [];
  /** `$n` for a value as psycopg2 would send it: text untyped, numbers and booleans typed, lists as arrays */
  bind(value: JsonValue | undefined): string {
    if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
      throw invalidQuery("can't adapt type 'dict'");
    }
    if (Array.isArray(value)) return this.add(arrayLiteral(value));
    const n = this.add(typeof value === 'boolean' ? (value ? 'true' : 'false') : value === undefined ? null : value);
    if (typeof value === 'number') return Number.isInteger(value) ? `${n}::int8` : `${n}::numeric`;
    if (typeof value === 'boolean') return `${n}::boolean`;
    return n;
  }
  add(value: unknown): string {
    this.values.push(typeof value === 'number' ? String(value) : value);
    return `$${this.values.length}`;
  }
}

/**
 * Builds the statements of a validated request over a table whose fields
 * (`_id` first) are `fields`, the tree `filters` (2.12) or the 2.11 dict.
 */
export function buildSearch(
  table: string,
  fields: readonly FieldInfo[],
  request: SqlSearchRequest,
  filterTree: FilterNode | undefined,
  ckan: CkanVersion,
): BuiltSearch {
  const types = new Map<string, string>(fields.map((f) => [f.id, f.type as string]));
  const params = new Params();
  const lang = request.language !== undefined && request.language !== '' ? request.language : 'english';

  // _textsearch_query: the tsquery expressions joined into FROM, and a rank column per query.
  const tsQueries: string[] = [];
  const rankColumns = new Map<string, string>();
  let langParam: string | undefined;
  const langRef = (): string => (langParam ??= params.add(lang));
  const addQuery = (text: string, field?: string): void => {
    const alias = id(field === undefined ? 'query' : `query ${field}`);
    const fn = request.plain ? 'plainto_tsquery' : 'to_tsquery';
    tsQueries.push(`${fn}(${langRef()}, ${params.add(text)}) ${alias}`);
    const ranked = field === undefined ? '_full_text' : `to_tsvector(${langRef()}, cast(${id(field)} as text))`;
    rankColumns.set(field === undefined ? 'rank' : `rank ${field}`, `ts_rank(${ranked}, ${alias}, 32)`);
  };
  const q = request.q;
  const fullText = request.full_text !== undefined && request.full_text !== '' ? request.full_text : undefined;
  const qSet = typeof q === 'string' ? q !== '' : q !== undefined && Object.keys(q).length > 0;
  if (qSet && fullText === undefined) {
    if (typeof q === 'string') addQuery(q);
    else for (const [field, value] of Object.entries(q as FieldSearch)) addQuery(value, field);
  } else if (fullText !== undefined) {
    addQuery(fullText);
    if (typeof q === 'object') for (const [field, value] of Object.entries(q)) addQuery(value, field);
  }
  const tsQuery = tsQueries.length === 0 ? '' : `, ${tsQueries.join(', ')}`;

  // _where_clauses
  const where: string[] = [];
  if (ckan === '2.12') {
    if (filterTree !== undefined) where.push(filterSql(filterTree, types, params));
  } else if (request.filters !== undefined && typeof request.filters === 'object' && request.filters !== null && !Array.isArray(request.filters)) {
    for (const [field, value] of Object.entries(request.filters)) {
      const type = types.get(field) as string;
      const isArray = type.startsWith('_');
      if (Array.isArray(value) && !isArray) {
        // An empty list gives `in ()`, a syntax error CKAN answers with 409 Invalid query.
        const list = value.map((v) => params.bind(type === 'text' ? pythonStr(v) : v));
        where.push(`${id(field)} in (${list.join(',')})`);
      } else {
        where.push(`${id(field)} = ${params.bind(type === 'text' ? pythonStr(value) : value)}`);
      }
    }
  }
  if (qSet && typeof q === 'string') where.push('_full_text @@ "query"');
  else if (qSet && typeof q === 'object') {
    for (const field of Object.keys(q)) {
      const alias = id(`query ${field}`);
      const type = types.get(field) as string;
      // Fields whose type CKAN does not index on its own are narrowed by `_full_text` first (2.12: always).
      if (ckan === '2.12' || !(type === 'text' || type === 'tsvector')) where.push(`_full_text @@ ${alias}`);
      where.push(`to_tsvector(${langRef()}, cast(${id(field)} as text)) @@ ${alias}`);
    }
  }
  if (fullText !== undefined) where.push('_full_text @@ "query"');
  const whereSql = where.length === 0 ? '' : `WHERE ${where.map((c) => `(${c})`).join(' AND ')}`;

  // datastore_search: which columns, in which form.
  const resultTypes = new Map(types);
  for (const rank of rankColumns.keys()) resultTypes.set(rank, 'float');
  let fieldIds: string[];
  if (request.fields !== undefined && fullText === undefined) fieldIds = [...request.fields];
  else if (request.fields !== undefined) {
    const all = [...resultTypes.keys()];
    if (!request.fields.includes('rank')) all.splice(all.indexOf('rank'), 1);
    fieldIds = [...all, ...request.fields.filter((f) => !all.includes(f))];
  } else fieldIds = [...resultTypes.keys()];

  const format = request.records_format;
  const stamp = ckan === '2.12' ? `'YYYY-MM-DD"T"HH24:MI:SS.MS'` : `'YYYY-MM-DD"T"HH24:MI:SS'`;
  const select = fieldIds.map((field, index) => {
    const type = resultTypes.get(field) ?? '';
    let expr = id(field);
    const rank = rankColumns.get(field);
    if (rank !== undefined) expr = rank;
    let out: string;
    if (type === 'json') out = `coalesce((${expr}).json,'null')`;
    else if (type === 'timestamp') out = format === 'lists' ? `coalesce(to_json(to_char(${expr}, ${stamp})), 'null')` : `to_char(${expr}, ${stamp})`;
    else if (type.startsWith('_')) out = `coalesce(array_to_json(${expr}),'null')`;
    else out = format === 'lists' ? `coalesce(to_json(${expr}),'null')` : expr;
    if (format === 'objects') return `${out} as ${id(field)}`;
    if (format === 'lists') return out;
    // csv/tsv: COPY writes each column's text; columns are named by position (a field may repeat).
    return `${out} as ${id(`c${index}`)}`;
  });

  let sort = request.sort === undefined || request.sort.length === 0
    ? [...rankColumns.values()].map((rank) => `${rank} DESC`)
    : request.sort.map((item) => `${id(item.field)} ${item.direction}${item.nulls === undefined ? '' : ` nulls ${item.nulls}`}`);
  if (sort.length === 0 && !request.distinct) sort = ['_id'];
  const sortSql = sort.length === 0 ? '' : `ORDER BY ${sort.join(', ')}`;
  const keyset = request.sort === undefined
    ? (qSet || fullText !== undefined || request.distinct ? undefined : 'asc')
    : request.sort.length === 1 && request.sort[0]?.field === '_id'
      ? request.sort[0].direction
      : undefined;

  const distinct = request.distinct ? 'DISTINCT' : '';
  const filterParams = params.values.length;
  const limit = params.add(request.limit);
  const offset = params.add(request.offset);
  const from = `${id(table)} ${tsQuery}`;
  let recordsSql: string;
  if (ckan === '2.12' && request.distinct) {
    // 2.12 (PR #9365): DISTINCT first, then order and page; the other formats are read from its columns.
    const named = fieldIds.map((f) => `${selectExpr(f, resultTypes, rankColumns, stamp)} as ${id(f)}`);
    const page = `SELECT DISTINCT ${named.join(', ')} FROM (SELECT * FROM ${from} ${whereSql}) as z ${sortSql} LIMIT ${limit} OFFSET ${offset}`;
    if (format === 'objects') recordsSql = `SELECT array_to_json(array_agg(j))::text AS records FROM (${page}) AS j`;
    else if (format === 'lists') {
      const items = fieldIds.map((f) => `coalesce(to_json(d.${id(f)}),'null')`).join(` || ',' || `);
      recordsSql = `SELECT '[' || array_to_string(array_agg(j.v), ',') || ']' AS records FROM (SELECT '[' || ${items} || ']' v FROM (${page}) AS d) AS j`;
    } else recordsSql = `SELECT ${fieldIds.map((f, i) => `d.${id(f)}::text as ${id(`c${i}`)}`).join(', ')} FROM (${page}) AS d`;
  } else {
    const columns = format === 'lists' ? `'[' || ${select.join(` || ',' || `)} || ']' v` : select.join(', ');
    const inner = `SELECT ${distinct} ${columns} FROM (SELECT * FROM ${from} ${whereSql} ${sortSql} LIMIT ${limit} OFFSET ${offset}) as z`;
    if (format === 'objects') recordsSql = `SELECT array_to_json(array_agg(j))::text AS records FROM (${inner}) AS j`;
    else if (format === 'lists') recordsSql = `SELECT '[' || array_to_string(array_agg(j.v), ',') || ']' AS records FROM (${inner}) AS j`;
    else recordsSql = inner;
  }

  const countSelect = fieldIds.map((f) => selectExpr(f, resultTypes, rankColumns, stamp));
  const count = request.include_total
    ? { sql: `SELECT count(*) AS total FROM (SELECT ${distinct} ${countSelect.join(', ')} FROM ${from} ${whereSql}) as t`, params: params.values.slice(0, filterParams) }
    : undefined;
  return {
    records: { sql: recordsSql, params: params.values },
    count,
    mayEstimate: ckan === '2.11' && request.total_estimation_threshold !== null && whereSql === '' && !request.distinct,
    // The data dictionary comes along, as CKAN's `_result_fields` adds `info` to each field that has one.
    fields: fieldIds.map((f) => {
      const info = rankColumns.has(f) ? undefined : fields.find((field) => field.id === f)?.info;
      return { id: f, type: (resultTypes.get(f) ?? 'text') as FieldInfo['type'], ...(info === undefined ? {} : { info }) };
    }),
    keyset,
    page: `SELECT * FROM ${from} ${whereSql} ${sortSql} LIMIT ${limit} OFFSET ${offset}`,
  };
}

function selectExpr(field: string, types: ReadonlyMap<string, string>, ranks: ReadonlyMap<string, string>, stamp: string): string {
  const type = types.get(field) ?? '';
  const expr = ranks.get(field) ?? id(field);
  if (type === 'json') return `coalesce((${expr}).json,'null')`;
  if (type === 'timestamp') return `to_char(${expr}, ${stamp})`;
  if (type.startsWith('_')) return `coalesce(array_to_json(${expr}),'null')`;
  return expr;
}

/** 2.12's `build_clause` (docs/ckan-2.12-reference.md §1.3). */
function filterSql(node: FilterNode, types: ReadonlyMap<string, string>, params: Params): string {
  const value = (field: string, v: JsonValue): string => params.bind(types.get(field) === 'text' ? pythonStr(v) : v);
  switch (node.op) {
    case 'and':
    case 'or': {
      const parts = node.of.map((child) => filterSql(child, types, params));
      if (parts.length === 0) return node.op === 'and' ? 'true' : 'false';
      return `(${parts.join(node.op === 'and' ? ' AND ' : ' OR ')})`;
    }
    case 'in':
      return node.values.length === 0 ? 'false' : `${id(node.field)} in (${node.values.map((v) => value(node.field, v)).join(',')})`;
    case 'eq':
      return `${id(node.field)} = ${value(node.field, node.value)}`;
    case 'gt':
      return `${id(node.field)} > ${value(node.field, node.value)}`;
    case 'gte':
      return `${id(node.field)} >= ${value(node.field, node.value)}`;
    case 'lt':
      return `${id(node.field)} < ${value(node.field, node.value)}`;
    case 'lte':
      return `${id(node.field)} <= ${value(node.field, node.value)}`;
  }
}

/**
 * Rows of column texts as PostgreSQL's `COPY … TO STDOUT csv` writes them:
 * NULL an empty field, a field quoted when it holds the delimiter, a quote,
 * a line break, or is empty; `\n` after every row.
 * @example copyCsv([['a', null, 'b,c', '']], ',') // → 'a,,"b,c",""\n'
 */
export function copyCsv(rows: readonly (readonly (string | null)[])[], delimiter: ',' | '\t'): string {
  let out = '';
  for (const row of rows) {
    out += row
      .map((cell) => {
        if (cell === null) return '';
        if (cell === '' || cell === '\\.' || cell.includes(delimiter) || cell.includes('"') || cell.includes('\n') || cell.includes('\r')) {
          return `"${cell.replaceAll('"', '""')}"`;
        }
        return cell;
      })
      .join(delimiter);
    out += '\n';
  }
  return out;
}

/**
 * A portal's `datastore_search_sql` as a source: the sql target's `SELECT`
 * of the query, one page at a time with `LIMIT`/`OFFSET`. The sql target
 * orders every query totally (its order, then `_id`), so pages by offset
 * neither repeat nor skip a record; a `select distinct` has no `_id`, so its
 * selected fields break the ties instead.
 */
import type { PlainQuery, Query, SortKey, Value } from '../ast.js';
import { isPlainQuery } from '../ast.js';
import { plan } from '../compile/compile.js';
import type { SqlRequest } from '../compile/sql.js';
import type { Plan } from '../compile/plan.js';
import type { FieldInfo, Row, SearchResult } from '../datastore/types.js';
import { checkSignal } from './operator.js';
import type { Operator } from './operator.js';

/** Sends one SELECT and reads the answer as a search result (`total` from the first record, when there is one). */
export type SendSql = (sql: string, signal: AbortSignal | undefined) => Promise<SearchResult & { readonly records_truncated?: boolean }>;

/** The most rows CKAN's datastore_search_sql returns by default (`ckan.datastore.search.rows_max`). */
export const SQL_MAX_ROWS = 32_000;

/**
 * The records of a bound query, page by page: its own `offset`, then up to
 * its `limit` (every record when `all` and it has none; else 100, as
 * datastore_search), `pageSize` at a time.
 * @example
 * sqlScan(parse('from courses where year >= 2020'), { pageSize: 1000, all: true, send })
 * // SELECT …, count(*) OVER () AS "_ckql_total" FROM "courses" WHERE "year" >= '2020' ORDER BY "_id" LIMIT 1000
 * // … LIMIT 1000 OFFSET 1000, and so on until a short page or the total
 */
export function sqlScan(
  query: Query,
  options: { readonly pageSize: number; readonly all: boolean; readonly send: SendSql; readonly fields?: readonly (readonly FieldInfo[])[] | undefined; readonly unions?: Plan['unions'] },
): Operator {
  const start = numberOf(query.offset?.value, 0);
  const wanted = numberOf(query.limit?.value, options.all ? Number.POSITIVE_INFINITY : 100);
  // One SELECT says a bounded query whole (up to the portal's rows_max); every record is read page by page.
  const pageSize = Math.max(1, Math.min(options.all ? options.pageSize : Math.max(options.pageSize, wanted), SQL_MAX_ROWS));
  const ordered = query.select?.distinct && isPlainQuery(query) ? withTies(query) : query;
  const sqlOf = (limit: number, offset: number): string => (plan(page(ordered, limit, offset), { target: 'sql', ...(options.fields === undefined ? {} : { fields: options.fields }), ...(options.unions === undefined ? {} : { unions: options.unions }) }).request as SqlRequest).sql;
  return {
    kind: 'sql',
    detail: `datastore_search_sql, ${Number.isFinite(wanted) && wanted <= pageSize ? 'one SELECT' : `pages of ${pageSize} by LIMIT/OFFSET`}`,
    inputs: [],
    open: async (context) => {
      const ask = async (limit: number, offset: number): Promise<SearchResult & { readonly records_truncated?: boolean }> => {
        checkSignal(context);
        context.stats.requests += 1;
        return options.send(sqlOf(limit, offset), context.signal);
      };
      // `limit 0` asks for one row all the same: `count(*) OVER ()` rides on rows, so none would leave the count unknown.
      const firstLimit = wanted === 0 ? 1 : Math.min(pageSize, wanted);
      const first = await ask(firstLimit, start);
      // `count(*) OVER ()` rides on every row: an empty first page from the start is a count of 0.
      const total = typeof first.total === 'number' ? first.total : first.records.length === 0 && start === 0 ? 0 : undefined;
      if (wanted === 0) {
        return { fields: first.fields, batches: (async function* () {})(), ...(total === undefined ? {} : { total }) };
      }
      const inRange = total === undefined ? undefined : Math.min(Math.max(0, total - start), wanted);
      async function* batches(): AsyncGenerator<readonly Row[], void, undefined> {
        let fetched = 0;
        let answer: (SearchResult & { readonly records_truncated?: boolean }) | undefined = first;
        let limit = firstLimit;
        for (;;) {
          if (answer === undefined) {
            limit = Math.min(pageSize, wanted - fetched);
            answer = await ask(limit, start + fetched);
          }
          fetched += answer.records.length;
          context.stats.read += answer.records.length;
          context.onPage?.({ fetched, total: inRange });
          const records = answer.records;
          // A short page is the end, unless the portal cut it at its own row limit (records_truncated).
          const last =
            records.length === 0 ||
            (records.length < limit && answer.records_truncated !== true) ||
            fetched >= wanted ||
            (inRange !== undefined && fetched >= inRange);
          answer = undefined;
          if (records.length > 0) yield records;
          if (last) return;
        }
      }
      return { fields: first.fields, batches: batches(), ...(total === undefined ? {} : { total }) };
    },
  };
}

/** The query with this page's `limit` and `offset`. */
function page(query: Query, limit: number, offset: number): Query {
  const span = query.span;
  return {
    ...query,
    limit: { kind: 'limit', span, value: { kind: 'number', span, value: limit } },
    offset: { kind: 'offset', span, value: { kind: 'number', span, value: offset } },
  };
}

/** A `select distinct` ordered by its keys, then by every selected field not among them: distinct rows differ in one. */
function withTies(query: PlainQuery): Query {
  const keys = query.order?.keys ?? [];
  const ordered = new Set(keys.map((key) => key.field.name));
  const ties: SortKey[] = [];
  for (const field of query.select!.items.map((item) => item.value)) {
    if (ordered.has(field.name)) continue;
    ordered.add(field.name);
    ties.push({ kind: 'sort-key', span: field.span, field, direction: 'asc' });
  }
  if (ties.length === 0) return query;
  return { ...query, order: { kind: 'order', span: query.order?.span ?? query.span, keys: [...keys, ...ties] } };
}

/** A bound count (`plan` has checked it is a whole number), or the fallback when the query has none. */
function numberOf(value: Value | undefined, fallback: number): number {
  return value?.kind === 'number' ? value.value : fallback;
}

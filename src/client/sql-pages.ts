/**
 * `searchAll` with the `sql` target: every record through
 * `datastore_search_sql`, one `SELECT` per page with `LIMIT`/`OFFSET`.
 * The sql target orders every query totally (its order, then `_id`), so
 * pages by offset neither repeat nor skip a record; a `select distinct` has
 * no `_id`, so its selected fields break the ties instead.
 */
import type { Query, SortKey, Value } from '../ast.js';
import { plan } from '../compile/compile.js';
import type { SqlRequest } from '../compile/sql.js';
import type { Row, SearchResult } from '../datastore/types.js';

/** Sends one SELECT and reads the answer as a search result (`total` from the first record, when there is one). */
export type SendSql = (sql: string) => Promise<SearchResult & { readonly records_truncated?: boolean }>;

/**
 * The records of a bound query, page by page: the query's own `offset`, then
 * up to its `limit` (every record without one), `pageSize` at a time.
 * @example
 * for await (const row of sqlPages(parse('from courses where year >= 2020'), 1000, sendSql)) …
 * // SELECT …, count(*) OVER () AS "_ckql_total" FROM "courses" WHERE "year" >= '2020' ORDER BY "_id" LIMIT 1000
 * // … LIMIT 1000 OFFSET 1000, and so on until a short page or the total
 */
export async function* sqlPages(
  query: Query,
  pageSize: number,
  send: SendSql,
  onPage?: (progress: { readonly fetched: number; readonly total: number | undefined }) => void,
): AsyncGenerator<Row, void, undefined> {
  const start = numberOf(query.offset?.value, 0);
  const wanted = numberOf(query.limit?.value, Number.POSITIVE_INFINITY);
  const ordered = query.select?.distinct ? withTies(query) : query;
  let fetched = 0;
  let total: number | undefined;
  while (fetched < wanted) {
    const limit = Math.min(pageSize, wanted - fetched);
    const { sql } = plan(page(ordered, limit, start + fetched), { target: 'sql' }).request as SqlRequest;
    const answer = await send(sql);
    if (fetched === 0 && typeof answer.total === 'number') total = answer.total;
    fetched += answer.records.length;
    onPage?.({ fetched, total: total === undefined ? undefined : Math.min(Math.max(0, total - start), wanted) });
    for (const record of answer.records) yield record;
    // A short page is the end, unless the portal cut it at its own row limit (records_truncated).
    if (answer.records.length === 0 || (answer.records.length < limit && answer.records_truncated !== true)) return;
    if (total !== undefined && start + fetched >= total) return;
  }
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
function withTies(query: Query): Query {
  const keys = query.order?.keys ?? [];
  const ordered = new Set(keys.map((key) => key.field.name));
  const ties: SortKey[] = [];
  for (const field of query.select!.fields) {
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

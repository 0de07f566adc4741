/**
 * Sources (docs/executor.md, Sources): the leaves of a plan. A portal's
 * `datastore_search` pages (by offset in an order that ends in `_id`, or by
 * CKAN 2.12's `next_page` cursor), its `datastore_search_sql` pages, and a
 * local engine's whole answer. Each fetches a page only when its reader asks
 * for the next batch, so a plan that stops early sends no more requests.
 */
import type { Query } from '../ast.js';
import type { SearchRequest, SearchResult, Row } from '../datastore/types.js';
import { parseSort } from '../datastore/validate.js';
import { quoteSortField } from '../datastore/sort.js';
import { DatastoreError } from '../errors.js';
import type { Engine, EngineQueryOptions } from '../engine/types.js';
import { closing } from '../engine/stream.js';
import { breathe, checkSignal } from './operator.js';
import type { Operator, Stream } from './operator.js';

/** Sends one datastore_search request. */
export type SendPage = (request: SearchRequest, signal: AbortSignal | undefined) => Promise<SearchResult>;

/** How a scan pages. */
export type Paging = 'offset' | 'keyset';

/** Options of `pageScan`. */
export interface PageScanOptions {
  /** the request to page through; its own `offset` and `limit` bound the range read (none: every record) */
  readonly request: SearchRequest;
  readonly send: SendPage;
  /** records per request */
  readonly pageSize: number;
  /** `offset` (in an order made total by `_id`) or 2.12's `next_page` cursor */
  readonly paging: Paging;
  /**
   * A plan that must read every record (an aggregate, a count, every record
   * wanted) asks for the count first (`limit: 0`), so that it can refuse before
   * fetching; a plan that may stop early starts with its first page.
   */
  readonly countFirst: boolean;
  /** the most records the scan may read, and the error past it (with the count the portal gave, or records read) */
  readonly maxScan?: { readonly max: number; readonly refuse: (count: number, read: number | undefined) => Error };
  /** the portal's origin, for messages */
  readonly origin?: string;
}

/**
 * A portal's records, page by page. In offset paging the sort is completed
 * with `_id` (or, for `distinct`, with the selected fields), since pages by
 * a sort with ties may repeat and drop records between requests
 * (docs/executor.md, Correct paging).
 */
export function pageScan(options: PageScanOptions): Operator {
  const request = options.paging === 'offset' ? withTotalOrder(options.request) : options.request;
  const { send, pageSize } = options;
  const start = request.offset ?? 0;
  const wanted = request.limit ?? Number.POSITIVE_INFINITY;
  const base: SearchRequest = withoutPage(request);
  return {
    kind: 'scan',
    detail: `${options.paging === 'offset' ? 'pages by offset' : "pages by 2.12's next_page"}, ${pageSize} records a request${options.countFirst ? ', counted first' : ''}`,
    inputs: [],
    open: async (context) => {
      const ask = async (page: SearchRequest): Promise<SearchResult> => {
        checkSignal(context);
        context.stats.requests += 1;
        return send(page, context.signal);
      };
      let total: number | undefined;
      let first: SearchResult | undefined;
      let fields;
      // CKAN 2.11's estimate (`total_estimation_threshold`: pg_class.reltuples) may be short of
      // the records there are; paging then ends at a short page (docs/ckan-2.11-reference.md §1).
      let estimated = false;
      const refuseBeyond = (count: number | undefined, read: number | undefined): void => {
        if (options.maxScan !== undefined && count !== undefined && count > options.maxScan.max) throw options.maxScan.refuse(count, read);
      };
      if (options.countFirst) {
        const head = await ask({ ...base, limit: 0 });
        total = head.total;
        estimated = head.total_was_estimated === true;
        fields = head.fields;
        refuseBeyond(total === undefined ? undefined : Math.min(Math.max(0, total - start), wanted), undefined);
      } else {
        first = await ask(pageRequest(base, options.paging, Math.min(pageSize, wanted, options.maxScan?.max ?? Infinity), start, undefined, true, request.include_total !== false));
        total = first.total;
        estimated = first.total_was_estimated === true;
        fields = first.fields;
      }
      const totalInRange = total === undefined || estimated ? undefined : Math.min(Math.max(0, total - start), wanted);
      // With a bound on what may be read (and more to read than it), no page goes past it.
      const bounded = options.maxScan !== undefined && (totalInRange === undefined || totalInRange > options.maxScan.max);
      const pageLimit = (fetched: number): number => {
        const limit = Math.min(pageSize, wanted - fetched);
        return bounded ? Math.min(limit, Math.max(0, options.maxScan!.max - fetched)) : limit;
      };

      async function* batches(): AsyncGenerator<readonly Row[], void, undefined> {
        let fetched = 0;
        let previous: string | undefined;
        let cursor: Record<string, unknown> | undefined;
        let page = first;
        for (;;) {
          const asked = pageLimit(fetched);
          if (page === undefined) {
            if (asked === 0) throw options.maxScan!.refuse(totalInRange ?? fetched, fetched);
            page = await ask(pageRequest(base, options.paging, asked, start + fetched, cursor, false, false));
          }
          const records = page.records;
          // A server that ignores `offset` sends the same page again and again; without a total nothing else would stop it.
          const signature = options.paging === 'offset' ? pageSignature(records, base.fields !== undefined) : undefined;
          if (signature !== undefined && signature === previous) {
            throw new DatastoreError(
              'INVALID_RESPONSE',
              `${options.origin ?? 'the portal'} answered offset ${start + fetched} with the same records as offset ${start + fetched - records.length}: it ignores offset, so paging cannot go on (${fetched} records read)`,
            );
          }
          previous = signature;
          fetched += records.length;
          context.stats.read += records.length;
          context.onPage?.({ fetched, total: totalInRange });
          const next = (page as { next_page?: unknown }).next_page;
          // A short page is the end; compare with the server's `limit`, which may be capped below ours.
          const served = typeof page.limit === 'number' ? Math.min(page.limit, asked) : asked;
          const last =
            records.length === 0 ||
            records.length < served ||
            fetched >= wanted ||
            (totalInRange !== undefined && fetched >= totalInRange) ||
            (options.paging === 'keyset' && (typeof next !== 'object' || next === null));
          if (options.paging === 'keyset' && !last) cursor = next as Record<string, unknown>;
          page = undefined;
          if (records.length > 0) yield records;
          if (last) return;
        }
      }
      return { fields, batches: batches(), ...(total === undefined ? {} : { total }) };
    },
  };
}

/** One page's request: the range, the cursor's filters, and the count only on the first. */
function pageRequest(
  base: SearchRequest,
  paging: Paging,
  limit: number,
  offset: number,
  cursor: Record<string, unknown> | undefined,
  first: boolean,
  countTotal: boolean,
): SearchRequest {
  // Only the first page asks for the total: counting is the expensive part of a CKAN search.
  const total = first && countTotal ? {} : { include_total: false };
  if (paging === 'keyset') {
    const filters = cursor === undefined ? base.filters : withCursor(base.filters, cursor);
    return { ...base, ...(filters === undefined ? {} : { filters: filters as SearchRequest['filters'] }), limit, include_next_page: true, ...total };
  }
  return { ...base, limit, ...(offset > 0 ? { offset } : {}), ...total };
}

/** The request's filters and the cursor (`{"_id": {"gt": n}}`), both holding. */
function withCursor(filters: SearchRequest['filters'], cursor: Record<string, unknown>): Record<string, unknown> {
  if (filters === undefined) return cursor;
  if (!Array.isArray(filters) && !Object.hasOwn(filters, '_id')) return { ...(filters as Record<string, unknown>), ...cursor };
  return { $and: [Array.isArray(filters) ? { $or: filters } : filters, cursor] };
}

function withoutPage(request: SearchRequest): SearchRequest {
  const { limit: _limit, offset: _offset, include_total: _total, ...rest } = request;
  return rest;
}

/**
 * The request in an order without ties: its sort, then `_id` (the records'
 * own key). A `distinct` request's records have no `_id` unless it is
 * selected (PostgreSQL orders `SELECT DISTINCT` by selected columns only),
 * so its selected fields break the ties instead: distinct records differ in one.
 * @example withTotalOrder({ resource_id: 'r', sort: 'cat asc' }).sort // 'cat asc, _id asc'
 */
export function withTotalOrder(request: SearchRequest): SearchRequest {
  const items = request.sort === undefined || request.sort.trim() === '' ? [] : parseSort(request.sort);
  const present = new Set(items.map((item) => item.field));
  const ties = request.distinct === true && request.fields !== undefined && !request.fields.includes('_id') ? request.fields : ['_id'];
  const missing = [...new Set(ties)].filter((name) => !present.has(name));
  if (missing.length === 0 || present.has('_id')) return request;
  const added = missing.map((name) => `${quoteSortField(name)} asc`).join(', ');
  return { ...request, sort: request.sort === undefined || request.sort.trim() === '' ? added : `${request.sort}, ${added}` };
}

/**
 * The first and last record of a page as text, to notice a page sent twice;
 * undefined for an empty or unprintable page, or for one of a few fields
 * without `_id` (such records may repeat from page to page without a fault).
 */
function pageSignature(records: readonly Row[], projected: boolean): string | undefined {
  if (records.length === 0 || (projected && !Object.hasOwn(records[0]!, '_id'))) return undefined;
  try {
    return JSON.stringify([records.length, records[0], records[records.length - 1]]);
  } catch {
    return undefined;
  }
}

/**
 * One request that says the whole query, sent as it is: the portal's answer
 * is the result (its records, its `total`).
 */
export function oneRequest(request: SearchRequest, send: SendPage): Operator {
  return {
    kind: 'request',
    detail: 'datastore_search says the whole query: one request, answered by the portal',
    inputs: [],
    open: async (context) => {
      checkSignal(context);
      context.stats.requests += 1;
      const answer = await send(request, context.signal);
      context.stats.read += answer.records.length;
      async function* batches(): AsyncGenerator<readonly Row[], void, undefined> {
        if (answer.records.length > 0) yield answer.records;
      }
      return { resource: answer.resource_id, fields: answer.fields, batches: batches(), ...(answer.total === undefined ? {} : { total: answer.total }) };
    },
  };
}

/**
 * A local engine's answer to the whole query (docs/executor.md): the memory
 * engine in one pass, a PostgreSQL engine as one statement.
 */
export function engineQuery(engine: Engine, query: Query, options: Omit<EngineQueryOptions, 'signal'>): Operator {
  return {
    kind: 'engine',
    detail: `the ${engine.kind} engine answers the whole query${engine.kind === 'memory' ? ' in one pass' : ' as one SQL statement'}`,
    inputs: [],
    open: async (context): Promise<Stream> => {
      checkSignal(context);
      const answer = await engine.query(query, { ...options, ...(context.signal === undefined ? {} : { signal: context.signal }) });
      async function* batches(): AsyncGenerator<readonly Row[], void, undefined> {
        let fetched = 0;
        try {
          for await (const batch of answer.batches) {
            await breathe(context);
            fetched += batch.length;
            context.stats.read += batch.length;
            context.onPage?.({ fetched, total: answer.total });
            yield batch;
          }
        } finally {
          await answer.batches.return(undefined);
        }
      }
      return {
        resource: answer.resource,
        fields: answer.fields,
        batches: closing(batches(), () => answer.batches.return(undefined)),
        ...(answer.total === undefined ? {} : { total: answer.total }),
        ...(answer.facets === undefined ? {} : { facets: answer.facets }),
      };
    },
  };
}

/** Whether a request can be paged with 2.12's cursor: in `_id` order, no offset, no search, no distinct. */
export function keysetPageable(request: SearchRequest): boolean {
  if (request.offset !== undefined || request.q !== undefined || request.distinct === true) return false;
  return request.sort === undefined || /^\s*"?_id"?(\s+asc)?\s*$/i.test(request.sort);
}

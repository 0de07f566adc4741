/**
 * Running a plan (docs/beyond-the-request.md, Plans): page through the
 * records the portal can select, keep those the residual keeps, and apply
 * `select`, `distinct`, `offset` and `limit` locally, one page in memory at
 * a time. The portal's `sort` gives the order.
 */
import type { Plan } from '../compile/plan.js';
import type { FieldInfo, Row, SearchRequest, SearchResult } from '../datastore/types.js';
import { canonicalText } from '../datastore/values.js';
import { residualTest } from '../engine/memory/evaluate-query.js';
import { queryError } from '../errors.js';

/** Sends one datastore_search request. */
export type SendPage = (request: SearchRequest) => Promise<SearchResult>;

export interface PlanRun {
  /** the fields of the records yielded, in order */
  readonly fields: readonly FieldInfo[];
  /** the records the query keeps, after offset and up to its limit (or every one when `all`) */
  readonly records: AsyncGenerator<Row, void, undefined>;
  /** how many records the whole query matches, once `records` has been read to the end without stopping early */
  matched(): number | undefined;
}

const DEFAULT_LIMIT = 100;

/**
 * Starts a plan that has a residual. The first request counts what the
 * portal would send (`limit: 0`); above `plan.maxScan` it fails there,
 * before any record is fetched.
 *
 * `all`: every record (searchAll) unless the query says `limit`; otherwise
 * the query's limit, default 100, as `datastore_search` would.
 * `count`: read on past the limit to count every match (for `total`).
 */
export async function runPlan(
  plan: Plan,
  send: SendPage,
  options: { readonly pageSize: number; readonly all: boolean; readonly count: boolean },
): Promise<PlanRun> {
  const residual = plan.residual!;
  const base = plan.request as SearchRequest;
  const first = await send({ ...base, limit: 0 });
  const scan = first.total ?? 0;
  if (scan > plan.maxScan) {
    throw queryError('SCAN_TOO_LARGE', residual.where?.span ?? residual.span, [scan, plan.maxScan], {
      hint:
        plan.target === 'ckan-2.11'
          ? 'narrow it with "=" or "in" conditions, or a search, that the portal answers itself; or raise the limit (--max-scan, maxScan)'
          : 'narrow it with "=", "in", "<", "<=", ">", ">=" or "between" conditions that the portal answers itself; or raise the limit (--max-scan, maxScan)',
    });
  }
  const keep = residualTest(residual, first.fields);
  const selected = residual.select === undefined ? undefined : [...new Set(residual.select.fields.map((f) => f.name))];
  const byId = new Map(first.fields.map((f) => [f.id, f]));
  const fields = selected === undefined ? first.fields : selected.map((name) => byId.get(name)!);
  const offset = residual.offset?.value.kind === 'number' ? residual.offset.value.value : 0;
  const limit =
    residual.limit?.value.kind === 'number' ? residual.limit.value.value : options.all ? Number.POSITIVE_INFINITY : DEFAULT_LIMIT;
  let matched: number | undefined;
  // Pages by offset need one fixed order: ties in the query's order are broken by `_id`, as the language orders them.
  const pagingSort = base.sort === undefined ? '_id asc' : /(^|,)\s*"?_id"?(\s|,|$)/.test(base.sort) ? base.sort : `${base.sort}, _id asc`;

  async function* records(): AsyncGenerator<Row, void, undefined> {
    const seen = residual.select?.distinct ? new Set<string>() : undefined;
    let kept = 0;
    let fetched = 0;
    for (;;) {
      const page = await send({ ...base, sort: pagingSort, limit: options.pageSize, offset: fetched, include_total: false });
      for (const row of page.records) {
        const position = fetched++;
        if (!keep(row, position)) continue;
        const out = selected === undefined ? row : (Object.fromEntries(selected.map((name) => [name, row[name] ?? null])) as Row);
        if (seen !== undefined) {
          const key = JSON.stringify(Object.values(out).map((v) => canonicalText(v)));
          if (seen.has(key)) continue;
          seen.add(key);
        }
        const index = kept++;
        if (index >= offset && index < offset + limit) yield out;
        // Stop early: nothing more to yield, and nobody asked for the count.
        if (index + 1 >= offset + limit && !options.count) return;
      }
      if (page.records.length < options.pageSize) {
        matched = kept;
        return;
      }
    }
  }

  return { fields, records: records(), matched: () => matched };
}

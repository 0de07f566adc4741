/**
 * Plans as operator trees (docs/executor.md): the compiler's plan (what the
 * target says, and the residual) becomes the tree that runs, and explain
 * prints that same tree.
 */
import type { PlainQuery, Query } from '../ast.js';
import type { Plan, Target } from '../compile/plan.js';
import type { SearchRequest } from '../datastore/types.js';
import { DatastoreError, queryError, validationError } from '../errors.js';
import { format } from '../format.js';
import type { Engine } from '../engine/types.js';
import { residualTest } from '../engine/memory/evaluate-query.js';
import { distinct, filter, limit, project } from './local.js';
import type { Operator } from './operator.js';
import { engineQuery, keysetPageable, oneRequest, pageScan } from './scan.js';
import type { Paging, SendPage } from './scan.js';
import { sqlScan } from './sql-scan.js';
import { facetTree, shapedTree } from './shaped.js';
import { windowTree } from './window.js';
import type { ShapedOptions, ShapedPortal } from './shaped.js';
import { checkSignal } from './operator.js';
import { shapeOf } from '../compile/shape.js';
import { facetsFromRows } from '../compile/sql-shaped.js';
import type { SqlRequest } from '../compile/sql.js';
import type { SendSql } from './sql-scan.js';

/** `limit` when a query has none, as datastore_search (`ckan.datastore.search.rows_default`). */
export const DEFAULT_LIMIT = 100;

/** What a run is asked for. */
export interface RunOptions {
  /** every record unless the query says `limit` (searchAll, `--all`); else the query's limit, default 100 */
  readonly all: boolean;
  /** count every record the query matches, even where that means reading past the limit */
  readonly total: boolean;
  /** records per request to a portal */
  readonly pageSize: number;
  /** explain: the portal's count of each request a plan pages through (by its JSON), to predict its pages */
  readonly counts?: ReadonlyMap<string, number> | undefined;
}

/** How a plan reaches a portal. */
export interface Portal {
  readonly send: SendPage;
  readonly sendSql: SendSql;
  /** `https://host`, for messages */
  readonly origin: string;
}

/**
 * The tree that runs a plan against a portal. `query` is the bound query the
 * plan was made from (the sql target pages it).
 *
 * @example
 * portalTree(plan('from enrolments where status != withdrawn limit 3'), query, portal, { all: false, total: false, pageSize: 1000 })
 * // limit 3, then stop reading
 * // └─ filter status != withdrawn
 * //    └─ scan {"resource_id":"enrolments","sort":"_id asc"}, pages by offset, 1000 records a request
 */
export function portalTree(plan: Plan, query: Query, portal: Portal, options: RunOptions): Operator {
  if (plan.target === 'sql') {
    const scan = sqlScan(query, { pageSize: options.pageSize, all: options.all, send: portal.sendSql, fields: plan.fields, unions: plan.unions });
    return plan.facetRequest === undefined ? scan : sqlFacets(scan, plan.facetRequest, query, portal.sendSql);
  }
  if (plan.window !== undefined) return windowTree(recordsTree(plan, plan.window.inner, portal, { ...options, all: true, total: false }), plan.window, options);
  const records = recordsTree(plan, query, portal, options);
  return plan.facets === undefined ? records : facetTree(records, plan, query, portal, shapedOptions(plan, options));
}

function shapedOptions(plan: Plan, options: RunOptions): ShapedOptions {
  return { all: options.all, pageSize: options.pageSize, counts: options.counts, paging: (request) => (plan.target === 'ckan-2.12' && keysetPageable(request) ? 'keyset' : 'offset') };
}

/** One side of a join across sources: its source's portal, named as the query names it, and the target its requests are written for. */
export interface SidePortal extends ShapedPortal {
  readonly name: string;
  readonly target: Exclude<Target, 'sql'>;
}

/**
 * The tree of a join across sources (docs/aggregates.md): a shaped plan
 * whose sides are each read from their own source (`sides`, in the order
 * of the query's resources), joined, then finished as a join of one
 * source's resources is.
 * @example
 * sourcesTree(planQuery(query, { target: 'ckan-2.11', sideTargets: ['ckan-2.11', 'ckan-2.12'] }), query, [portalA, portalB], options)
 * // limit 100, then count the rest
 * // └─ aggregate group by c.level: count(*), …
 * //    └─ join join c on e.course = c.code; the smaller side hashed (by the count), …
 * //       ├─ scan from local: {"resource_id":"enrolments","fields":["_id","course"]}, pages by offset, …
 * //       └─ scan from portal: {"resource_id":"courses","filters":{"subject":"math"},…}, pages by 2.12's next_page, …
 */
export function sourcesTree(plan: Plan, query: Query, sides: readonly SidePortal[], options: RunOptions & { readonly members?: ReadonlyMap<string, SidePortal> }): Operator {
  const members = options.members;
  const shaped: ShapedOptions = {
    ...shapedOptions(plan, options),
    portals: sides,
    // A union's resources are each read from their own source (their names as written say which).
    ...(members === undefined || members.size === 0 ? {} : { memberPortal: (written: string) => members.get(written)! }),
    paging: (request, side) => (sides[side]?.target === 'ckan-2.12' && keysetPageable(request) ? 'keyset' : 'offset'),
  };
  if (plan.window !== undefined) return windowTree(shapedTree(plan, sides[0]!, { ...shaped, all: true }), plan.window, options);
  const records = shapedTree(plan, sides[0]!, shaped);
  return plan.facets === undefined ? records : facetTree(records, plan, query, sides[0]!, shaped);
}

/** The facets of a query on the sql target: its one facets statement, sent before the records are read. */
function sqlFacets(records: Operator, request: SqlRequest, query: Query, sendSql: SendSql): Operator {
  const shape = shapeOf(query);
  return {
    kind: 'facets',
    detail: `one datastore_search_sql statement: ${request.sql}`,
    inputs: [records],
    open: async (context) => {
      checkSignal(context);
      context.stats.requests += 1;
      const answer = await sendSql(request.sql, context.signal);
      const facets = facetsFromRows(shape.facets, answer.records, () => undefined);
      return { ...(await records.open(context)), facets };
    },
  };
}

/** The tree of a plan's records on a `ckan-*` target (a facet plan's, without its facets). */
function recordsTree(plan: Plan, query: Query, portal: Portal, options: RunOptions): Operator {
  if (plan.shaped !== undefined) return shapedTree(plan, portal, shapedOptions(plan, options));
  const request = plan.request as SearchRequest;
  const paging: Paging = plan.target === 'ckan-2.12' && keysetPageable(request) ? 'keyset' : 'offset';
  const residual = plan.residual;
  if (residual === undefined) {
    // The portal says the whole query: one request, or (every record) its pages, its own limit and offset bounding the range.
    if (!options.all) return oneRequest(request, portal.send);
    return pageScan({ request, send: portal.send, pageSize: options.pageSize, paging, countFirst: false, origin: portal.origin });
  }
  const wanted = residual.limit?.value.kind === 'number' ? residual.limit.value.value : options.all ? Number.POSITIVE_INFINITY : DEFAULT_LIMIT;
  const offset = residual.offset?.value.kind === 'number' ? residual.offset.value.value : 0;
  // A plan that must read every record counts first, so it can refuse before fetching any.
  const readsAll = options.total || !Number.isFinite(wanted);
  const span = residual.where?.span ?? residual.select?.span ?? residual.span;
  let tree: Operator = pageScan({
    request,
    send: wordedAsWritten(portal.send, residual),
    pageSize: options.pageSize,
    paging,
    countFirst: readsAll,
    origin: portal.origin,
    maxScan: {
      max: plan.maxScan,
      refuse: (count, read) =>
        queryError('SCAN_TOO_LARGE', span, [count, plan.maxScan], {
          hint: [
            read === undefined ? '' : `ckql read ${read} of them without finishing the query; `,
            plan.target === 'ckan-2.11'
              ? 'narrow it with "=" or "in" conditions, or a search, that the portal answers itself'
              : 'narrow it with "=", "in", "<", "<=", ">", ">=" or "between" conditions that the portal answers itself',
            '; or raise the limit (--max-scan N, .max-scan N in the REPL, maxScan in the library); or, where the portal enables datastore_search_sql, the sql target (--target sql, .target sql) answers it in one request',
          ].join(''),
        }),
    },
  });
  const where = residual.where;
  if (where !== undefined) {
    const test = { kind: 'query', span: residual.span, from: residual.from, where } as const satisfies Query;
    tree = filter(tree, conditionText(test), (fields) => residualTest(test, fields));
  }
  const selected = (residual as PlainQuery).select?.items.map((item) => item.value.name);
  if (selected !== undefined && !sameList(selected, request.fields)) tree = project(tree, selected);
  if (plan.local.distinct) tree = distinct(tree);
  return limit(tree, { offset, limit: wanted, count: options.total });
}

/** The tree of a query that a local engine answers whole. */
export function engineTree(engine: Engine, query: Query, options: Pick<RunOptions, 'all' | 'total'> & { readonly batchSize?: number; readonly maxJoinRows?: number }): Operator {
  return engineQuery(engine, query, {
    all: options.all,
    total: options.total,
    ...(options.batchSize === undefined ? {} : { batchSize: options.batchSize }),
    ...(options.maxJoinRows === undefined ? {} : { maxJoinRows: options.maxJoinRows }),
  });
}

/**
 * A plan asks for the fields its residual tests beside the selected ones, so
 * a name only the `where` uses and the table lacks comes back as CKAN's
 * `fields` error; the user wrote it in `where`, and the error says so, as
 * one request with that filter would have said it.
 */
function wordedAsWritten(send: SendPage, residual: Query): SendPage {
  const selected = new Set((residual as PlainQuery).select?.items.map((item) => item.value.name) ?? []);
  return async (request, signal) => {
    try {
      return await send(request, signal);
    } catch (error) {
      const messages = error instanceof DatastoreError && error.code === 'VALIDATION_ERROR' ? (error.body as { fields?: unknown } | undefined)?.fields : undefined;
      const message = Array.isArray(messages) && typeof messages[0] === 'string' ? messages[0] : undefined;
      const name = message === undefined ? undefined : /^invalid value "(.*)"$/s.exec(message)?.[1];
      if (message !== undefined && name !== undefined && !selected.has(unquoted(name))) throw validationError('filters', message);
      throw error;
    }
  };
}

/** A name as CKAN's message quotes it: JSON's escapes read where they are JSON's (ckql serve writes them so), else as it stands. */
function unquoted(text: string): string {
  try {
    return JSON.parse(`"${text}"`) as string;
  } catch {
    return text;
  }
}


function sameList(a: readonly string[], b: readonly string[] | undefined): boolean {
  return b !== undefined && a.length === b.length && a.every((name, i) => name === b[i]);
}

/** A residual `where` as the language writes it. */
function conditionText(query: Query): string {
  return format(query).split('\n').slice(1).join(' ').replace(/^where\s+/, '');
}

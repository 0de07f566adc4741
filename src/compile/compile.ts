/**
 * The compiler: a query (AST or text) → one `datastore_search` request.
 *
 * Pure: no I/O, no clock, no state. The same query always gives the same
 * request, a deeply frozen plain JSON object with its keys in the order
 * `resource_id, filters, q, fields, sort, limit, offset`, and only the keys
 * the query sets, so the server's defaults apply to the rest.
 */
import type { Condition, Field, Query, SelectItem } from '../ast.js';
import { QueryError, queryError } from '../errors.js';
import type { SearchRequest } from '../datastore/types.js';
import { MAX_FIELDS, MAX_SORT_ITEMS } from '../datastore/validate.js';
import { parse } from '../syntax/parse.js';
import { firstParameter } from '../syntax/walk.js';
import { bind } from './bind.js';
import type { Params } from './bind.js';
import { dictFilters } from './dict-filters.js';
import type { Span } from '../span.js';
import { constructName, firstResidual, onlyEqualities, parseTarget, planQuery, saysWhole, type Plan, type PlanOptions, type Target } from './plan.js';
import type { SqlRequest } from './sql.js';

/**
 * Compiles a query to the `datastore_search` request it stands for.
 *
 * Text is parsed first, and `params` (if given) are bound (see `bind`).
 * The where clause becomes `filters`:
 * - `f = v` gives `filters.f = v`; `f in (a, b)` gives `[a, b]`; `f in ()` gives `[]`.
 * - An `or` group over one field gives the values of all its branches, in
 *   order, as a list: `(f = a or f in (b, c))` → `[a, b, c]`. A branch may be
 *   an `and` group over that same field; it counts as the values it leaves.
 * - Conditions on one field joined by `and`, at any depth of `and` groups,
 *   are intersected: the values of the first condition (in its order, each
 *   value once) that every other condition also allows. Values are compared
 *   by canonical text (docs/semantics.md: `2020` equals `"2020"`; `null` only
 *   equals `null`, never the text `"null"`). The result is a single value
 *   when one of those conditions is an `=` and exactly one value remains,
 *   otherwise a list, `[]` when nothing is common (which matches no record).
 * - `filters` keys follow the order in which fields first appear.
 *
 * `search "t"` becomes `q: "t"` exactly as written; an empty or all-white-space
 * search means no search (docs/semantics.md), so it sets no `q`, as
 * `normalizeRequest` leaves it out: the compiled request is always canonical.
 * `select` becomes `fields`; `order by` becomes `sort` with every direction
 * spelled out and names quoted as `quoteSortField` does; `limit` and `offset`
 * stay numbers.
 *
 * Throws `QueryError`: any parse error; `INVALID_PARAMETER` from binding;
 * `UNBOUND_PARAMETER` for a parameter left without a value;
 * `OR_ACROSS_FIELDS` (pointing at the first condition on another field) and
 * `AND_INSIDE_OR` (pointing at the `and` group) for what a request cannot
 * express; `TARGET_CANNOT_EXPRESS` for any other condition the target
 * cannot say, and for what no single request says: `group by`, an
 * aggregate, a bucket, an `as` name, `having`, a join or `facet` (the `sql`
 * target says all but `facet` in one `SELECT`). Such a query is a plan:
 * `plan` (and `client.explain`, `ckql explain`) shows it, `client.search`
 * runs it, `evaluateQuery` answers it over records in hand. When given text,
 * every error carries it as `source`.
 *
 * @example
 * compile(`from courses
 *          where stage in (active, survey) and subject = math and (year = 2020 or year = 2021)
 *          search "linear algebra"
 *          order by year desc, title
 *          limit 10`);
 * // → { resource_id: "courses",
 * //     filters: { stage: ["active", "survey"], subject: "math", year: [2020, 2021] },
 * //     q: "linear algebra", sort: "year desc, title asc", limit: 10 }
 *
 * @example
 * compile('from courses where year in (2020, 2021) and year = "2021"');
 * // → { resource_id: "courses", filters: { year: 2021 } }
 */
export function compile(query: Query | string, options: CompileOptions & { readonly target: 'sql' }): SqlRequest;
export function compile(query: Query | string, options?: Params | CompileOptions): SearchRequest;
export function compile(query: Query | string, options?: Params | CompileOptions): SearchRequest | SqlRequest {
  const { params, target } = readOptions(options);
  return withQuery(query, params, (bound) => {
    checkNameCounts(bound, target);
    checkSearchText(bound, target);
    const planned = planQuery(bound, { target, distinctOnPortal: true });
    if (planned.residual !== undefined) throw refusal(planned.residual.where!.condition, planned.target);
    if (!saysWhole(planned)) throw shapeRefusal(bound, planned.target);
    return planned.request;
  });
}

/**
 * Plans a query for a target (see `planQuery`): the request the target can
 * answer and the residual the client applies locally.
 *
 * @example
 * plan('from enrolments where grade >= 5 and status != withdrawn', { target: 'ckan-2.12' });
 * // → { target: 'ckan-2.12',
 * //     request: { resource_id: 'enrolments', filters: { grade: { gte: 5 } } },
 * //     residual: (the query) from enrolments where status != withdrawn,
 * //     local: { where: true, select: false, limit: true, order: false }, maxScan: 100000 }
 */
export function plan(query: Query | string, options: PlanOptions & { readonly params?: Params } = {}): Plan {
  return withQuery(query, options.params, (bound) => {
    checkNameCounts(bound, options.target);
    checkSearchText(bound, options.target);
    return planQuery(bound, options);
  });
}

/**
 * A request names at most `MAX_FIELDS` fields and `MAX_SORT_ITEMS` sort
 * items (the bounds `normalizeRequest`, `fromRequest` and `ckql serve`
 * hold a request to): a query past them is refused here, where its clause
 * can be pointed at, not by the portal. The `sql` target has no such list.
 */
function checkNameCounts(query: Query, target: Target | undefined): void {
  if (target === 'sql') return;
  // the request lists each name as the select does, repeats included
  const selected = query.select?.items.length ?? 0;
  if (query.select !== undefined && selected > MAX_FIELDS) {
    throw queryError('TOO_MANY_NAMES', query.select.span, ['select', selected, MAX_FIELDS], { hint: 'select fewer fields, or leave select out for every field' });
  }
  const keys = query.order?.keys.length ?? 0;
  if (query.order !== undefined && keys > MAX_SORT_ITEMS) {
    throw queryError('TOO_MANY_NAMES', query.order.span, ['order by', keys, MAX_SORT_ITEMS], { hint: 'order by fewer fields' });
  }
}

/**
 * A whole-record search whose text is a JSON object's (`search '{"a": "x"}'`)
 * cannot be sent to a portal as that text: CKAN's `q` validator reads such a
 * text as the object, a search per field. It is refused for a CKAN target
 * rather than answered as something else; the `sql` target searches the text.
 */
function checkSearchText(query: Query, target: Target | undefined): void {
  const text = query.search?.text;
  if (target === 'sql' || text?.kind !== 'string' || !text.value.trimStart().startsWith('{')) return;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text.value);
  } catch {
    return;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return;
  throw queryError('SEARCH_READ_AS_FIELDS', text.span, [], { hint: 'to search fields, write search f "text", g "text"; to search this text, change it so it is no JSON object (a word before the {)' });
}

/** Options of `compile`: the target (default `ckan-2.11`) and parameter values. */
export interface CompileOptions {
  readonly target?: Target;
  readonly params?: Params;
}

/**
 * `compile(q, params)` (the older form) or `compile(q, { target, params })`:
 * an object whose keys are only `target` and `params`, with a known target
 * or a `params` object, is read as options. (A query whose parameters are
 * named `target` and `params` passes them as `{ params: { … } }`.)
 */
function readOptions(options: Params | CompileOptions | undefined): { params?: Params; target?: Target } {
  if (options === undefined) return {};
  const keys = Object.keys(options);
  const o = options as Record<string, unknown>;
  const isOptions =
    keys.length > 0 &&
    keys.every((key) => key === 'target' || key === 'params') &&
    (o.target === undefined || (typeof o.target === 'string' && parseTarget(o.target) === o.target)) &&
    (o.params === undefined || (typeof o.params === 'object' && o.params !== null && !Array.isArray(o.params)));
  if (!isOptions) return { params: options as Params };
  const result: { params?: Params; target?: Target } = {};
  if (o.params !== undefined) result.params = o.params as Params;
  if (o.target !== undefined) result.target = o.target as Target;
  return result;
}

/** Parses text, binds parameters and runs `step`, reporting errors against the text and unbound parameters first. */
function withQuery<T>(query: Query | string, params: Params | undefined, step: (query: Query) => T): T {
  if (typeof query !== 'string') return reportUnbound(params === undefined ? query : bind(query, params), step);
  const source = query;
  try {
    const parsed = parse(source);
    return reportUnbound(params === undefined ? parsed : bind(parsed, params), step);
  } catch (error) {
    throw error instanceof QueryError ? withSource(error, source) : error;
  }
}

function reportUnbound<T>(query: Query, step: (query: Query) => T): T {
  try {
    return step(query);
  } catch (error) {
    // An unbound parameter is reported before any other problem, and the
    // first one in the source wins. The walk stops at whatever it meets
    // first, so the query is searched for parameters only once it failed:
    // a query that compiles never pays for that second walk.
    const unbound = firstParameter(query);
    if (unbound === undefined) throw error;
    throw queryError('UNBOUND_PARAMETER', unbound.span, [unbound.name], {
      found: `$${unbound.name}`,
      hint: `give it a value: compile(query, { ${JSON.stringify(unbound.name)}: … }), or --param ${unbound.name}=… on the command line`,
    });
  }
}

/**
 * Why `compile` alone cannot send a query to a target: the first construct
 * of the residual. A 2.11 query made only of `=` and `in` that a dict cannot
 * say keeps its precise errors (`OR_ACROSS_FIELDS`, `AND_INSIDE_OR`).
 */
function refusal(residual: Condition, target: Target): QueryError {
  const first = firstResidual(residual);
  if (onlyEqualities(first)) dictFilters(first);
  const hint =
    target === 'ckan-2.11'
      ? `${PLAN_IT}; or compile for target ckan-2.12 or sql`
      : `${PLAN_IT}; or compile for target sql`;
  return queryError('TARGET_CANNOT_EXPRESS', first.span, [constructName(culprit(first, target)), target], { hint });
}

/** Where a query that is a plan runs and shows, in the library and on the command line. */
const PLAN_IT =
  'run it as a plan: client.search and ckql query do, plan() and ckql explain show it, evaluateQuery() runs it over records you hold';

/**
 * Why no single request says a query whose plan groups, joins, renames or
 * facets (`saysWhole` false): the construct that comes first in the text.
 * The `sql` target says all of them in one `SELECT` but the facets, which
 * are a second statement.
 */
/** How a refusal names a select item that is not a field: its function, or what kind of value it is. */
function constructWord(value: Exclude<SelectItem['value'], Field>): string {
  if (value.kind === 'aggregate' || value.kind === 'bucket' || value.kind === 'call') return `"${value.fn}"`;
  if (value.kind === 'binary') return `"${value.op}"`;
  if (value.kind === 'negate') return '"-"';
  if (value.kind === 'star') return '"*"';
  if (value.kind === 'case' || value.kind === 'cast') return `"${value.kind}"`;
  if (value.kind === 'window') return '"over"';
  return 'a value';
}

function shapeRefusal(query: Query, target: Target): QueryError {
  const found: { span: Span; name: string }[] = [];
  if (query.facet !== undefined) found.push({ span: query.facet.span, name: '"facet"' });
  if (target !== 'sql') {
    for (const join of query.joins ?? []) found.push({ span: join.span, name: '"join"' });
    if (query.group !== undefined) found.push({ span: query.group.span, name: '"group by"' });
    if (query.having !== undefined) found.push({ span: query.having.span, name: '"having"' });
    if (query.qualify !== undefined) found.push({ span: query.qualify.span, name: '"qualify"' });
    for (const item of query.select?.items ?? []) {
      if (item.value.kind !== 'field') found.push({ span: item.value.span, name: constructWord(item.value) });
      else if (item.as !== undefined) found.push({ span: item.span, name: '"as"' });
    }
    for (const key of query.order?.keys ?? []) {
      if (key.field.kind === 'aggregate') found.push({ span: key.field.span, name: `"${key.field.fn}"` });
    }
  }
  const first = found.reduce((a, b) => (b.span.start < a.span.start ? b : a), found[0] ?? { span: query.span, name: 'this query' });
  const hint = target === 'sql' || query.facet !== undefined ? PLAN_IT : `${PLAN_IT}; or compile for target sql (one SELECT)`;
  return queryError('TARGET_CANNOT_EXPRESS', first.span, [first.name, target], { hint });
}

/** The innermost construct a target cannot say, for the message. */
function culprit(condition: Condition, target: Target): Condition {
  if (condition.kind !== 'and' && condition.kind !== 'or') return condition;
  const inner = condition.conditions.find((c) => !onlyEqualities(c) && !(target === 'ckan-2.12' && (c.kind === 'compare' || c.kind === 'between')));
  return inner === undefined ? condition : culprit(inner, target);
}

/** The same error, carrying the query text so it can be rendered with an excerpt. */
export function withSource(error: QueryError, source: string): QueryError {
  if (error.source !== undefined) return error;
  const copy = new QueryError(error.code, error.message, error.span, {
    expected: error.expected,
    ...(error.found === undefined ? {} : { found: error.found }),
    ...(error.hint === undefined ? {} : { hint: error.hint }),
    source,
  });
  if (error.stack !== undefined) copy.stack = error.stack;
  return copy;
}

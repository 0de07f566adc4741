/**
 * Plans: a query split into what a target portal can answer (one request,
 * paged by the client) and a residual that the client applies locally
 * (docs/beyond-the-request.md, Targets).
 *
 * Pure, like `compile`: the plan is frozen plain data, and running it is the
 * client's business (`client/plan-run.ts`).
 */
import { expressionFields } from '../syntax/expressions.js';
import type { Condition, Field, FieldSearch, Query, Search, StringValue, Parameter, Value } from '../ast.js';
import type { Span } from '../span.js';
import { bindShape, fieldsOfValue, shapeOf, type BoundShape, type Shape } from './shape.js';
import { facetSql, shapedSql, shapedSqlRequest } from './sql-shaped.js';
import { windowSql, windowStep, type WindowStep } from './window.js';
import { conditionFieldNodes } from '../syntax/walk.js';
import { assertNever, isPlainQuery } from '../ast.js';
import type { PlainQuery, PlainSortKey } from '../ast.js';
import type { FieldInfo, FieldSearch as FieldSearchRequest, Filters, JsonValue, Scalar, SearchRequest } from '../datastore/types.js';
import { queryError } from '../errors.js';
import { sortText } from '../datastore/sort.js';
import { dictFilters, literal, unboundError } from './dict-filters.js';
import { QueryError } from '../errors.js';
import { DEFAULT_LIMIT, identifier, MAX_LIMIT, sqlRequest, stringLiteral, type SqlRequest } from './sql.js';
import { hasPrefixWord, tsQueryText } from './search-text.js';
import { conditionFields } from '../syntax/walk.js';
import { RESOURCE_FIELD } from './union.js';
import type { UnionTable } from './union.js';

/**
 * The dialect of the portal that answers: CKAN 2.9–2.11 (and any portal whose
 * version is unknown), CKAN 2.12's filter operators, or
 * `datastore_search_sql`.
 */
export type Target = 'ckan-2.11' | 'ckan-2.12' | 'sql';

/** Every target, in the order a user reads them. */
export const targets: readonly Target[] = ['ckan-2.11', 'ckan-2.12', 'sql'];

/** Reads a target name (`ckan-2.12`, also `2.12`); undefined when it is none. */
export function parseTarget(text: string): Target | undefined {
  const name = text.trim().toLowerCase();
  if (name === '2.11' || name === '2.10' || name === '2.9') return 'ckan-2.11';
  if (name === '2.12') return 'ckan-2.12';
  return (targets as readonly string[]).includes(name) ? (name as Target) : undefined;
}

/** The default number of records a plan may read to finish a query locally. */
export const DEFAULT_MAX_SCAN = 100_000;

/**
 * The default number of rows a join may give; past it a join is refused
 * before it runs (`JOIN_TOO_LARGE`). A joined row costs the memory engine 4
 * bytes a side while the join runs (the positions of its rows), and a plan's
 * joined records go on in batches (docs/executor.md, Counting and limits).
 */
export const DEFAULT_MAX_JOIN_ROWS = 10_000_000;

export interface PlanOptions {
  readonly target?: Target;
  /** the most records the pushed-down part may match; default 100 000 */
  readonly maxScan?: number;
  /** the most rows a join may give; default 10 000 000 (`DEFAULT_MAX_JOIN_ROWS`) */
  readonly maxJoinRows?: number;
  /**
   * Send `select distinct` to a CKAN 2.11 portal as `distinct: true` (what
   * `compile` does: the request says it). Plans do not by default: CKAN
   * 2.10.8–2.10.10 and 2.11.3–2.11.5 apply `DISTINCT` to one page of
   * records, so the answer would be short (docs/ckan-2.11-reference.md §4);
   * they apply it locally instead.
   */
  readonly distinctOnPortal?: boolean;
  /**
   * A join across sources (docs/aggregates.md): the target of each resource
   * of the query (`from`'s, then each join's), so each side's request says
   * what its own portal can; `target` is then the first side's.
   */
  readonly sideTargets?: readonly Exclude<Target, 'sql'>[];
  /**
   * The `sql` target: the fields of each resource a grouped, joined or
   * faceted query reads, in the order it names them (what the client reads
   * from the portal before a join). With them every field is written with
   * its table (an unqualified one both have is AMBIGUOUS_FIELD), join keys
   * of different types meet as text, and `min`/`max` of a boolean is
   * `bool_and`/`bool_or`; without them an unqualified field in a join is
   * UNQUALIFIED_FIELD.
   */
  readonly fields?: readonly (readonly FieldInfo[])[];
  /**
   * The `sql` target: each union source's table, by side (`unionTable`, made
   * with its resources' fields; its entry of `fields` is then the union's,
   * `unionFields`): the SQL names every column of each resource of a union
   */
  readonly unions?: readonly (UnionTable | undefined)[];
}

/** What the client does locally after fetching the pushed-down records. */
export interface LocalSteps {
  /** the residual `where` runs locally */
  readonly where: boolean;
  /** `select` runs locally: the request fetches the selected fields and those the residual reads */
  readonly select: boolean;
  /** `select distinct` runs locally (always on CKAN 2.11, see `PlanOptions.distinctOnPortal`) */
  readonly distinct: boolean;
  /** `offset` and `limit` run locally: the request is paged through */
  readonly limit: boolean;
  /** the order is always the portal's (`sort` is pushed down), so this is false */
  readonly order: false;
  /** grouped queries: pages are folded into a hash aggregate as they arrive */
  readonly aggregate?: boolean;
  /** joins: one side hashed, the other streamed past it */
  readonly join?: boolean;
  /** windows (docs/expressions.md): computed over the rows of the inner query, then qualify, order and the page */
  readonly window?: boolean;
}

/** One resource of a shaped plan: how its records are read. */
export interface SidePlan {
  /** the resource as written (`source:resource` across sources) */
  readonly resource: string;
  readonly qualifier: string;
  /** its pushed-down where and search, the fields the query reads of it (and `_id`), paged in `_id` order */
  readonly request: SearchRequest;
  /** its conditions the target cannot say, tested on its records as they arrive */
  readonly residual?: Condition;
  /**
   * a union (compile/union.ts): its resources, read in turn by one union
   * scan; each one's request is `request` with the conditions of
   * `condition` that name only its own fields (`memberRequest`), and the
   * whole condition is the residual, tested on the union's records
   */
  readonly union?: { readonly members: readonly StringValue[]; readonly condition?: Condition; readonly target: Exclude<Target, 'sql'> };
}

/**
 * A grouped, joined or faceted query on a portal that answers only
 * `datastore_search` (docs/aggregates.md, How each target answers): each
 * resource read in pages, then joined, filtered, aggregated, sorted and
 * paged locally, as the executor's operators (execute/build.ts).
 */
export interface ShapedPlan {
  /** the bound query this plan answers (a facet plan's: the query's records, its facets) */
  readonly query: Query;
  readonly sides: readonly SidePlan[];
  /** conditions over records of several resources, or of a left join's optional side: tested after the join */
  readonly joined?: Condition;
  /** `count(*)` and nothing else to compute: the first side's `limit: 0` request answers it */
  readonly countOnly: boolean;
}

/**
 * A query as a target answers it. `request` is sent as is when nothing runs
 * locally; otherwise it is the pushed-down part, without `limit`/`offset`,
 * which the client pages through, keeping the records the `residual` query
 * (in the language; its where, select, limit and offset) keeps.
 */
export interface Plan {
  readonly target: Target;
  readonly request: SearchRequest | SqlRequest;
  /** the rest of the query, run locally over the fetched records; absent when the request says it all */
  readonly residual?: Query;
  readonly local: LocalSteps;
  readonly maxScan: number;
  /** the most rows a join may give, when asked for (`PlanOptions.maxJoinRows`); else `DEFAULT_MAX_JOIN_ROWS` */
  readonly maxJoinRows?: number;
  /** a grouped, joined or renamed query on a `ckan-*` target: how its records are read and finished */
  readonly shaped?: ShapedPlan;
  /** a query with `facet` on a `ckan-*` target: how the records its facets count are read */
  readonly facets?: ShapedPlan;
  /** a query with `facet` on the `sql` target: the facets' one statement */
  readonly facetRequest?: SqlRequest;
  /** the `sql` target: the fields it was planned with (`PlanOptions.fields`), to plan each page of its records with */
  readonly fields?: readonly (readonly FieldInfo[])[];
  /** the `sql` target: the union sources' resources it was planned with (`PlanOptions.unions`) */
  readonly unions?: readonly (UnionTable | undefined)[];
  /** a query with windows on a `ckan-*` target: the rest of the plan reads its inner query, whose rows this step finishes */
  readonly window?: WindowStep;
}

/**
 * Whether a plan's request says its whole query, so that the portal's answer
 * to it is the query's: nothing runs locally (no residual) and nothing is
 * grouped, joined, renamed or faceted from the records read.
 * @example saysWhole(plan('from courses where subject = math')) // → true
 * @example saysWhole(plan('from courses group by subject select subject, count(*)')) // → false
 */
export function saysWhole(planned: Plan): boolean {
  return planned.residual === undefined && planned.shaped === undefined && planned.facets === undefined && planned.facetRequest === undefined && planned.window === undefined;
}

/**
 * Plans a (bound) query for a target: the largest part of its `where` the
 * target can say is pushed down with `search` and `order by`; the rest is the
 * residual. The `sql` target says everything.
 *
 * @example
 * plan(parse('from enrolments where grade >= 5 and status != withdrawn'), { target: 'ckan-2.11' });
 * // → { target: 'ckan-2.11', request: { resource_id: 'enrolments' },
 * //     residual: from enrolments where grade >= 5 and status != withdrawn,
 * //     local: { where: true, select: false, limit: true, order: false }, maxScan: 100000 }
 * plan(parse('from enrolments where grade >= 5 and status != withdrawn'), { target: 'ckan-2.12' });
 * // → request: { resource_id: 'enrolments', filters: { grade: { gte: 5 } } }, residual: … where status != withdrawn
 */
export function planQuery(query: Query, options: PlanOptions = {}): Plan {
  const step = windowStep(query);
  if (step !== undefined) return planWindow(step, options);
  const records = query.facet === undefined ? query : withoutFacet(query);
  const planned = isPlainQuery(records) ? planPlain(records, options) : planShaped(records, options);
  if (query.facet === undefined) return planned;
  // The facets count the records the query keeps: on SQL one more statement, on a portal one more reading.
  shapeOf(query);
  if (planned.target === 'sql') return freeze({ ...planned, facetRequest: facetSql(query, boundOptions(query, options))! });
  return freeze({ ...planned, facets: shapedPlan(facetReading(query), planned.target as Exclude<Target, 'sql'>, options.sideTargets) });
}

/**
 * A query with windows (compile/window.ts): on the `sql` target one
 * statement, the windows over its inner query's; on a portal, the plan of
 * the inner query, read whole, and the window step after it.
 */
function planWindow(step: WindowStep, options: PlanOptions): Plan {
  const target = options.target ?? 'ckan-2.11';
  if (target !== 'sql') {
    const inner = planQuery(step.inner, options);
    return freeze({ ...inner, local: { ...inner.local, limit: true, window: true }, window: step });
  }
  const shape = shapeOf(step.inner);
  if (shape.sources.length > 1 && shape.sources.some((s) => sourceOf(s.resource) !== undefined)) refuseSources(shape);
  const bound = options.fields === undefined ? undefined : bindShape(shape, options.fields);
  const inner = shapedSql(shape, { literal: stringLiteral, table: identifier, total: false, page: false, ...(bound === undefined ? {} : { bound }), ...unionsOf(options) });
  const page = ` LIMIT ${Math.min(step.limit ?? DEFAULT_LIMIT, MAX_LIMIT)}${step.offset > 0 ? ` OFFSET ${step.offset}` : ''}`;
  return freeze({
    target,
    request: { sql: windowSql(step, inner, stringLiteral, { total: true, page }) },
    local: NOTHING_LOCAL,
    maxScan: options.maxScan ?? DEFAULT_MAX_SCAN,
    ...(options.fields === undefined ? {} : { fields: options.fields }),
    ...unionsOf(options),
  });
}

/** The facets statement's options on the `sql` target: the shape met with the fields, when they are known. */
function boundOptions(query: Query, options: PlanOptions): { bound?: BoundShape; unions?: readonly (UnionTable | undefined)[] } {
  return { ...(options.fields === undefined ? {} : { bound: bindShape(shapeOf(query), options.fields) }), ...unionsOf(options) };
}

/** The sql target's union sources, as the SQL writer takes them, and as the plan keeps them (`Plan.unions`). */
function unionsOf(options: PlanOptions): { unions?: readonly (UnionTable | undefined)[] } {
  return options.unions === undefined ? {} : { unions: options.unions };
}

/** The query without its facets: the records a facet query gives are those it gives without them. */
function withoutFacet(query: Query): Query {
  const { facet: _facet, ...rest } = query;
  return rest;
}

/** What a facet plan reads: the query's sources, where and search, and the faceted fields. */
function facetReading(query: Query): Query {
  const { facet, select: _select, order: _order, limit: _limit, offset: _offset, ...rest } = query;
  const items = facet!.items.map((item) => ({ kind: 'select-item' as const, span: item.span, value: item.field }));
  return { ...rest, select: { kind: 'select', span: facet!.span, items } };
}

/**
 * A query one request cannot say: on the `sql` target one `SELECT`; on a
 * portal, each resource read in pages (its where pushed down, its fields
 * cut to those the query reads) and the rest done locally.
 */
function planShaped(query: Query, options: PlanOptions): Plan {
  const target = options.target ?? 'ckan-2.11';
  const maxScan = options.maxScan ?? DEFAULT_MAX_SCAN;
  const shape = shapeOf(query);
  if (target === 'sql') {
    if (shape.sources.length > 1 && shape.sources.some((s) => sourceOf(s.resource) !== undefined)) refuseSources(shape);
    const bound = options.fields === undefined ? undefined : bindShape(shape, options.fields);
    return freeze({ target, request: shapedSqlRequest(query, bound, options.unions), local: NOTHING_LOCAL, maxScan, ...(options.fields === undefined ? {} : { fields: options.fields }), ...unionsOf(options) });
  }
  const shaped = shapedPlan(query, target, options.sideTargets);
  const first = shaped.sides[0]!.request;
  const residual = shaped.joined !== undefined || shaped.sides.some((side) => side.residual !== undefined);
  return freeze({
    target,
    request: shaped.countOnly ? { ...first, limit: 0 } : first,
    local: {
      where: residual,
      select: true,
      distinct: shape.distinct,
      limit: true,
      order: false,
      aggregate: shape.grouped,
      join: shape.joins.length > 0,
    },
    maxScan,
    ...(options.maxJoinRows === undefined ? {} : { maxJoinRows: options.maxJoinRows }),
    shaped,
  });
}

/**
 * The source a resource is written with (`source:resource`; a session
 * resolves it, docs/aggregates.md), and the resource without it. The name
 * holds no `/` and no white space; a UUID, a plain CKAN name and a
 * `dataset/resource` name hold no `:` before their first `/`, so have none.
 * @example splitSource('portal:enrolments') // → { source: 'portal', resource: 'enrolments' }
 * @example splitSource('courses') // → { resource: 'courses' }
 */
export function splitSource(written: string): { readonly source?: string; readonly resource: string } {
  const match = /^([^:/\s]+):(.+)$/s.exec(written);
  return match === null ? { resource: written } : { source: match[1]!, resource: match[2]! };
}

/**
 * The hint of UNKNOWN_SOURCE: the sources there are, and how to write a
 * resource whose own name has `word:` in front (CKAN's datastore takes `:`
 * in an alias): after the current source's own name, when it has one
 * (`local:`, its profile's), or by its id.
 * @example unknownSourceHint('ab:c', ['portal', 'local'], 'local')
 * // → 'the sources: portal, local; a resource written without "name:" is the current source\'s, and one whose own name has ":" is written after that source\'s name (local:ab:c) or by its id'
 */
export function unknownSourceHint(written: string, known: readonly string[], current: string | undefined): string {
  const list = known.length === 0 ? 'this session knows no other source' : `the sources: ${known.join(', ')}`;
  const own = current === undefined ? 'by its id' : `after that source's name (${current}:${written}) or by its id`;
  return `${list}; a resource written without "name:" is the current source's, and one whose own name has ":" is written ${own}`;
}

function sourceOf(resource: string): string | undefined {
  return splitSource(resource).source;
}

function refuseSources(shape: Shape): never {
  throw queryError('TARGET_CANNOT_EXPRESS', shape.joins[0]!.span, ['a join of resources of different sources', 'sql'], {
    hint: 'datastore_search_sql joins the tables of one portal; across sources ckql joins them itself (any other target)',
  });
}

/** The sides of a shaped query on a `ckan-*` target: which conditions each side's request says, and what is left. */
function shapedPlan(query: Query, target: Exclude<Target, 'sql'>, sideTargets?: readonly Exclude<Target, 'sql'>[]): ShapedPlan {
  const shape = shapeOf(query);
  const targetOf = (side: number): Exclude<Target, 'sql'> => sideTargets?.[side] ?? target;
  const single = shape.sources.length === 1;
  // Which side a field is of, where the query says so: its qualifier, or the only resource.
  const sideOf = (field: Field): number | undefined => {
    if (single) return 0;
    if (field.qualifier === undefined) return undefined;
    const side = shape.sources.findIndex((s) => s.qualifier === field.qualifier);
    return side < 0 ? undefined : side;
  };
  const optional = new Set(shape.joins.flatMap((join, j) => (join.left ? [j + 1] : [])));
  const members = query.where === undefined ? [] : query.where.condition.kind === 'and' ? query.where.condition.conditions : [query.where.condition];
  const ofSide: Condition[][] = shape.sources.map(() => []);
  const joined: Condition[] = [];
  for (const member of members) {
    const sides = new Set(conditionFieldNodes(member).map(sideOf));
    const [side] = [...sides];
    // A left join's optional side is tested after the join, where a record without a match has nulls.
    if (sides.size === 1 && side !== undefined && !optional.has(side)) ofSide[side]!.push(member);
    else joined.push(member);
  }
  const and = (list: Condition[], span: Span): Condition | undefined =>
    list.length === 0 ? undefined : list.length === 1 ? list[0] : { kind: 'and', span, conditions: list };
  const whereSpan = query.where?.span ?? query.span;

  // The fields each side must give: every field the query reads, by side; a side with a field of unknown side gives all.
  const wanted: (Set<string> | undefined)[] = shape.sources.map(() => new Set(['_id']));
  const need = (field: Field): void => {
    const side = sideOf(field);
    if (side === undefined) {
      for (let i = 0; i < wanted.length; i++) if (shape.sources.length > 1) wanted[i] = undefined;
      return;
    }
    wanted[side]?.add(field.name);
  };
  for (const item of query.select?.items ?? []) if (item.value.kind !== 'star') expressionFields(item.value).forEach(need);
  for (const key of shape.keys) expressionFields(key).forEach(need);
  for (const aggregate of shape.aggregates) fieldsOfValue(aggregate).forEach(need);
  for (const key of shape.order) if (key.by.kind === 'value') expressionFields(key.by.value).forEach(need);
  for (const join of shape.joins) for (const pair of join.on) [pair.left, pair.right].forEach(need);
  for (const member of joined) conditionFieldNodes(member).forEach(need);
  // `select *, …` reads every field too (docs/expressions.md)
  const noSelect = (query.select === undefined || shape.star !== undefined) && !shape.grouped;

  const sides = shape.sources.map((source, side): SidePlan => {
    const condition = and(ofSide[side]!, whereSpan);
    // A union's conditions are pushed down at run time, once each resource has said its fields (`memberRequest`);
    // they are all tested after the union too.
    const union = source.union === undefined ? undefined : { members: source.union, ...(condition === undefined ? {} : { condition }), target: targetOf(side) };
    const { rest, filters } = union === undefined ? split(condition, targetOf(side)) : { rest: condition, filters: undefined };
    if (rest !== undefined) conditionFieldNodes(rest).forEach(need);
    // Across sources each side's request goes to its own source, which knows the resource without the source's name.
    const request: Record<string, unknown> = { resource_id: sideTargets === undefined ? source.resource : splitSource(source.resource).resource };
    if (filters !== undefined) request.filters = filters;
    const search = searchOfSide(query.search, side, sideOf);
    if (search !== undefined) Object.assign(request, searchKeys(search));
    const fields = wanted[side];
    if (fields !== undefined && !noSelect) request.fields = [...fields].filter((name) => union === undefined || name !== RESOURCE_FIELD);
    return {
      resource: source.resource,
      qualifier: source.qualifier,
      request: request as unknown as SearchRequest,
      ...(rest === undefined ? {} : { residual: rest }),
      ...(union === undefined ? {} : { union }),
    };
  });
  const joinedCondition = and(joined, whereSpan);
  const countOnly =
    shape.grouped && shape.keys.length === 0 && shape.sources.length === 1 && sides[0]!.residual === undefined && sides[0]!.union === undefined &&
    shape.aggregates.every((a) => a.fn === 'count' && a.field === undefined);
  return { query, sides, ...(joinedCondition === undefined ? {} : { joined: joinedCondition }), countOnly };
}

/**
 * The request of one resource of a union (`SidePlan.union`): the side's
 * request for that resource, its `fields` cut to those it has, with the
 * filters of the conditions whose fields it all has (the others, and any
 * the target cannot say, are tested after the union with the rest);
 * undefined when a per-field search names a field it lacks, which no
 * record of it can then match.
 * @example memberRequest({ resource_id: 'crime_2021', fields: ['_id', 'offense'] }, offense = burglary, 'crime_2022', ['_id', 'offense'], 'ckan-2.11')
 * // → { resource_id: 'crime_2022', fields: ['_id', 'offense'], filters: { offense: 'burglary' } }
 */
export function memberRequest(
  base: SearchRequest, condition: Condition | undefined, resource: string, fields: readonly string[], target: Exclude<Target, 'sql'>,
): SearchRequest | undefined {
  const own = new Set(fields);
  if (base.q !== undefined && typeof base.q === 'object' && Object.keys(base.q).some((name) => !own.has(name))) return undefined;
  const request: Record<string, unknown> = { ...base, resource_id: resource };
  if (base.fields !== undefined) request.fields = base.fields.filter((name) => own.has(name));
  const members = condition === undefined ? [] : condition.kind === 'and' ? condition.conditions : [condition];
  const ownConditions = members.filter((member) => conditionFieldNodes(member).every((field) => field.name !== RESOURCE_FIELD && own.has(field.name)));
  const span = condition?.span ?? { start: 0, end: 0 };
  const { filters } = split(ownConditions.length === 0 ? undefined : ownConditions.length === 1 ? ownConditions[0] : { kind: 'and', span, conditions: ownConditions }, target);
  // A join's keys pushed to the union (an `in` filter of a field): a resource without that field has no key to meet.
  const keyed = base.filters as Readonly<Record<string, unknown>> | undefined;
  if (keyed !== undefined && (Array.isArray(keyed) || Object.keys(keyed).some((name) => !own.has(name)))) return undefined;
  if (filters !== undefined) {
    const apart = keyed === undefined || (!Array.isArray(filters) && Object.keys(filters).every((name) => !Object.hasOwn(keyed, name)));
    // Both said when they name other fields; else the keys alone (the conditions are tested after the union).
    if (apart) request.filters = keyed === undefined ? filters : Object.assign(Object.create(null) as object, keyed, filters);
  }
  return request as unknown as SearchRequest;
}

/** The part of a search one side's request says: the whole-record text on the first resource; per-field texts on each field's. */
function searchOfSide(search: Search | undefined, side: number, sideOf: (field: Field) => number | undefined): Search | undefined {
  if (search === undefined) return undefined;
  if (search.fields === undefined) return side === 0 ? search : undefined;
  const fields = search.fields.filter((f) => (sideOf(f.field) ?? 0) === side);
  return fields.length === 0 ? undefined : { ...search, fields };
}

/** A plain query's plan (see `planQuery`). */
function planPlain(query: PlainQuery, options: PlanOptions): Plan {
  const target = options.target ?? 'ckan-2.11';
  const maxScan = options.maxScan ?? DEFAULT_MAX_SCAN;
  const resource = resourceOf(query);
  if (target === 'sql') {
    return freeze({ target, request: sqlRequest(query, resource), local: NOTHING_LOCAL, maxScan });
  }
  const { rest, filters } = split(query.where?.condition, target);
  const request: Record<string, unknown> = { resource_id: resource };
  if (filters !== undefined) request.filters = filters;
  if (query.search !== undefined) Object.assign(request, searchKeys(query.search));
  // Distinct runs here on CKAN 2.11 (see `distinctOnPortal`), and on any target after a condition that runs here:
  // the portal's distinct would come before the records that condition drops.
  const localDistinct = query.select?.distinct === true && (rest !== undefined || (target === 'ckan-2.11' && options.distinctOnPortal !== true));
  const local = rest !== undefined || localDistinct;
  if (query.select?.distinct && !local) request.distinct = true;
  if (query.select !== undefined) {
    const selected = query.select.items.map((item) => item.value.name);
    // A local step reads the selected fields, those the residual tests, and `_id` (which tells pages apart);
    // nothing else need cross the wire.
    request.fields = local ? [...new Set([...selected, ...conditionFields(rest), '_id'])] : selected;
  }
  if (query.order !== undefined) request.sort = sortValue(query.order.keys);
  if (!local) {
    if (query.limit !== undefined) request.limit = count(query.limit.value);
    if (query.offset !== undefined) request.offset = count(query.offset.value);
    return freeze({ target, request: request as unknown as SearchRequest, local: NOTHING_LOCAL, maxScan });
  }
  // The client pages through these records by offset: an order without ties, or pages repeat and drop records.
  request.sort = totalOrder(request.sort as string | undefined);
  const residual: { -readonly [K in keyof Query]: Query[K] } = { kind: 'query', span: query.span, from: query.from };
  if (rest !== undefined) residual.where = { kind: 'where', span: query.where!.span, condition: rest };
  if (query.select !== undefined) residual.select = query.select;
  if (query.limit !== undefined) residual.limit = query.limit;
  if (query.offset !== undefined) residual.offset = query.offset;
  return freeze({
    target,
    request: request as unknown as SearchRequest,
    residual,
    local: { where: rest !== undefined, select: query.select !== undefined, distinct: localDistinct, limit: true, order: false },
    maxScan,
  });
}

const NOTHING_LOCAL: LocalSteps = { where: false, select: false, distinct: false, limit: false, order: false };

/** A sort that ends in `_id` (the records' own key), so that it orders every record. */
function totalOrder(sort: string | undefined): string {
  if (sort === undefined) return '_id asc';
  return sort.split(',').some((item) => /^\s*_id(\s|$)/.test(item)) ? sort : `${sort}, _id asc`;
}

/**
 * Why a target cannot say a condition, for `compile`'s refusal: the first
 * condition (in source order) that the residual holds.
 */
export function firstResidual(condition: Condition): Condition {
  return condition.kind === 'and' ? condition.conditions[0]! : condition;
}

/** Words for a construct in an error message. */
export function constructName(condition: Condition): string {
  switch (condition.kind) {
    case 'eq':
      return condition.value.kind === 'null' ? '"= null" (is null)' : '"="';
    case 'compare':
      return `"${{ ne: '!=', lt: '<', lte: '<=', gt: '>', gte: '>=' }[condition.op]}"`;
    case 'in':
      return condition.values.some((v) => v.kind === 'null') ? '"in" with null' : '"in"';
    case 'between':
      return '"between"';
    case 'like':
      return condition.ignoreCase ? '"ilike"' : '"like"';
    case 'is-null':
      return '"is null"';
    case 'comparison':
      return 'a comparison of expressions';
    case 'not':
      return '"not"';
    case 'and':
      return '"and" inside "or"';
    case 'or':
      return '"or" across fields';
    default:
      return assertNever(condition, 'condition');
  }
}

// ---------------------------------------------------------------- the split

/**
 * The filters of the pushed-down condition (made once: the checks need
 * them) and the residual. Only a top-level `and` is
 * split: each member goes to one side (a member the target can say keeps
 * the records it would, so filtering first and testing the rest after is
 * the same as testing all). Anything else goes whole to one side.
 */
function split(condition: Condition | undefined, target: Exclude<Target, 'sql'>): { rest?: Condition; filters?: Filters | FilterDict } {
  if (condition === undefined) return {};
  const members = condition.kind === 'and' ? condition.conditions : [condition];
  const pushed: Condition[] = [];
  const rest: Condition[] = [];
  for (const member of members) (canSay(member, target) ? pushed : rest).push(member);
  const side = (list: Condition[]): Condition | undefined =>
    list.length === 0 ? undefined : list.length === 1 ? list[0] : { kind: 'and', span: condition.span, conditions: list };
  let down = side(pushed);
  // the request's filters, made here once (the checks below need them)
  let filters: Filters | FilterDict | undefined;
  if (target === 'ckan-2.11' && down !== undefined) {
    const dict = dictOrNull(down);
    if (dict === null) {
      // Members that each fit a dict but not together (rare): send none of them.
      rest.unshift(...pushed);
      down = undefined;
    } else filters = dict;
  }
  if (target === 'ckan-2.12' && down !== undefined) {
    filters = treeFilters(down);
    if (!withinTreeLimits(filters)) {
      rest.unshift(...pushed);
      down = undefined;
      filters = undefined;
    }
  }
  // Keep the residual in source order.
  rest.sort((a, b) => a.span.start - b.span.start);
  const result: { rest?: Condition; filters?: Filters | FilterDict } = {};
  if (filters !== undefined) result.filters = filters;
  const residual = side(rest);
  if (residual !== undefined) result.rest = residual;
  return result;
}

/** Whether a condition is made only of `=` and `in` with non-null values, and `and` / `or` groups. */
export function onlyEqualities(condition: Condition): boolean {
  switch (condition.kind) {
    case 'eq':
      return condition.value.kind !== 'null';
    case 'in':
      return condition.values.every((v) => v.kind !== 'null');
    case 'and':
    case 'or':
      return condition.conditions.every(onlyEqualities);
    default:
      return false;
  }
}

/** Whether CKAN 2.11's dict says a condition. */
function dictSays(condition: Condition): boolean {
  return dictOrNull(condition) !== null;
}

/** CKAN 2.11's dict of a condition, or null where no dict says it. */
function dictOrNull(condition: Condition): Filters | undefined | null {
  if (!onlyEqualities(condition)) return null;
  try {
    return dictFilters(condition);
  } catch (error) {
    if (error instanceof QueryError && (error.code === 'OR_ACROSS_FIELDS' || error.code === 'AND_INSIDE_OR')) return null;
    throw error;
  }
}

/** A value a portal filter can compare with: not null (a portal filter never matches null). */
function portalValue(value: Value): boolean {
  if (value.kind === 'param') throw unboundError(value);
  return value.kind !== 'null';
}

/** Whether a target can say a condition in its `filters`. */
function canSay(condition: Condition, target: Exclude<Target, 'sql'>): boolean {
  switch (condition.kind) {
    case 'eq':
      return portalValue(condition.value);
    case 'in':
      return condition.values.every(portalValue);
    case 'compare':
      return target === 'ckan-2.12' && condition.op !== 'ne' && portalValue(condition.value);
    case 'between':
      return target === 'ckan-2.12' && portalValue(condition.low) && portalValue(condition.high);
    case 'like':
    case 'is-null':
    case 'not':
    case 'comparison':
      return false;
    case 'and':
    case 'or':
      if (!condition.conditions.every((c) => canSay(c, target))) return false;
      return target === 'ckan-2.12' || dictSays(condition);
    default:
      return assertNever(condition, 'condition');
  }
}

// ---------------------------------------------------------------- CKAN 2.12 filters

type FilterDict = Record<string, JsonValue>;

/**
 * CKAN 2.12's `filters` for a condition it can say: the 2.11 dict when that
 * says it (so a query means the same request on both), else a dict with
 * operator objects (`{"gte": 5}`), `$or` and `$and` (docs/ckan-2.12-reference.md §1.2).
 */
function treeFilters(condition: Condition): Filters | FilterDict | undefined {
  const dict = dictOrNull(condition);
  if (dict === null) return treeDict(condition);
  // 2.12 reads a key starting with `$` as an operator: a field named so is written `$$name`.
  if (dict === undefined || !Object.keys(dict).some((key) => key.startsWith('$'))) return dict;
  const escaped: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(dict)) {
    Object.defineProperty(escaped, key.startsWith('$') ? `$${key}` : key, { value, enumerable: true, writable: true, configurable: true });
  }
  return Object.freeze(escaped) as Filters;
}

/** A field name as a 2.12 filter key: a leading `$` is doubled (`$$AUD` is the field `$AUD`). */
function filterKey(field: Field): string {
  return field.name.startsWith('$') ? `$${field.name}` : field.name;
}

function treeDict(condition: Condition): FilterDict {
  switch (condition.kind) {
    case 'eq':
      return { [filterKey(condition.field)]: literal(condition.value) };
    case 'in':
      return { [filterKey(condition.field)]: condition.values.map(literal) };
    case 'compare':
      return { [filterKey(condition.field)]: { [condition.op]: literal(condition.value) } };
    case 'between':
      return { [filterKey(condition.field)]: { gte: literal(condition.low), lte: literal(condition.high) } };
    case 'or':
      return { $or: condition.conditions.map(treeDict) };
    case 'and': {
      const merged: FilterDict = {};
      const separate: FilterDict[] = [];
      for (const member of condition.conditions) {
        const dict = treeDict(member);
        const keys = Object.keys(dict);
        const fits = (into: FilterDict): boolean => keys.every((key) => !Object.hasOwn(into, key) || mergeable(into[key], dict[key]));
        // Every dict here is one conjunct: a member joins the first that can take it, so `f = 0 and f >= a and f <= b`
        // is written as 2.12's reading of it gives it back (`{f: 0, $and: [{f: {gte, lte}}]}`).
        const into = fits(merged) ? merged : separate.find(fits);
        if (into === undefined) {
          separate.push(dict);
          continue;
        }
        // Defined, not assigned: a field named `__proto__` is a key like any other.
        for (const key of keys) defineKey(into, key, Object.hasOwn(into, key) ? { ...(into[key] as object), ...(dict[key] as object) } : dict[key]!);
      }
      if (separate.length > 0) merged.$and = [...((merged.$and as FilterDict[] | undefined) ?? []), ...separate];
      return merged;
    }
    case 'like':
    case 'is-null':
    case 'not':
    case 'comparison':
      throw new Error(`CKAN 2.12 filters cannot say ${condition.kind}`);
    default:
      return assertNever(condition, 'condition');
  }
}

/** Two operator objects on one field with different operators join into one (`{gte, lte}`). */
function mergeable(a: JsonValue | undefined, b: JsonValue | undefined): boolean {
  const isOps = (v: JsonValue | undefined): v is Record<string, JsonValue> =>
    typeof v === 'object' && v !== null && !Array.isArray(v);
  return isOps(a) && isOps(b) && Object.keys(b).every((op) => !Object.hasOwn(a, op));
}

/**
 * CKAN 2.12 refuses more than 100 operations or 10 levels of `$or`/`$and`
 * (docs/ckan-2.12-reference.md §1.2, limits); counted here a little
 * generously (every dict's implicit `and` counts), so a plan never meets the
 * refusal.
 */
function withinTreeLimits(filters: Filters | FilterDict | undefined): boolean {
  if (filters === undefined) return true;
  let ops = 0;
  let deepest = 0;
  const dict = (d: Record<string, unknown>, depth: number): void => {
    deepest = Math.max(deepest, depth);
    const keys = Object.keys(d);
    if (keys.length > 1) ops++;
    for (const key of keys) {
      const value = d[key];
      if (key === '$or' || key === '$and') {
        ops++;
        for (const member of value as Record<string, unknown>[]) dict(member, depth + 1);
      } else if (Array.isArray(value)) {
        ops++;
      } else if (typeof value === 'object' && value !== null) {
        const n = Object.keys(value).length;
        ops += n > 1 ? n + 1 : 1;
      } else {
        ops++;
      }
    }
  };
  dict(filters as Record<string, unknown>, 0);
  return ops < 100 && deepest < 9;
}

// ---------------------------------------------------------------- search, sort, counts

/**
 * `q` (text or per-field object), `plain: false` when a word asks for a
 * prefix, and `language`. Blank text is no search (docs/semantics.md).
 */
function searchKeys(search: Search): { q?: string | FieldSearchRequest; plain?: false; language?: string } {
  const keys: { q?: string | FieldSearchRequest; plain?: false; language?: string } = {};
  if (search.fields !== undefined) {
    const texts = search.fields.map((f: FieldSearch) => [f.field.name, searchText(f.text)] as const);
    const prefix = texts.some(([, text]) => hasPrefixWord(text));
    const q: Record<string, string> = {};
    for (const [name, text] of texts) defineKey(q, name, prefix ? tsQueryText(text) : text);
    keys.q = q;
    if (prefix) keys.plain = false;
  } else if (search.text !== undefined) {
    const text = searchText(search.text);
    if (/^\s*$/.test(text)) return keys;
    if (hasPrefixWord(text)) {
      keys.q = tsQueryText(text);
      keys.plain = false;
    } else {
      keys.q = text;
    }
  }
  if (search.language !== undefined) keys.language = search.language.value;
  return keys;
}

function defineKey(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

function searchText(value: StringValue | Parameter): string {
  if (value.kind === 'param') throw unboundError(value);
  return value.value;
}

/** The `sort` text: every direction spelled out, `nulls first|last` kept. */
export function sortValue(keys: readonly PlainSortKey[]): string {
  return keys.map((key) => sortText(key.field.name, key.direction) + (key.nulls === undefined ? '' : ` nulls ${key.nulls}`)).join(', ');
}

function count(value: Value): number {
  if (value.kind === 'param') throw unboundError(value);
  if (value.kind !== 'number' || !Number.isSafeInteger(value.value) || value.value < 0) {
    const found = value.kind === 'number' ? String(value.value) : value.kind;
    throw queryError('INVALID_INTEGER', value.span, ['limit or offset', found], { found });
  }
  return value.value === 0 ? 0 : value.value;
}

/** The resource id or name; an empty one is refused here, before any request. */
export function resourceOf(query: Query): string {
  const resource = query.from.resource;
  if (resource.kind === 'param') throw unboundError(resource);
  if (resource.value === '') {
    throw queryError('EMPTY_RESOURCE', resource.span, [], {
      found: JSON.stringify(resource.value),
      hint: 'name the resource to search: from <resource id or name>',
    });
  }
  return resource.value;
}

/** Deep-freezes plain data (the AST of a residual is already never mutated, so it is left as is). */
function freeze<T>(value: T): T {
  freezeDeep(value);
  return value;
}

/**
 * `freeze`'s walk: arrays by index and objects by `for…in`, not by
 * `Object.keys`, which made an array of keys (of index strings, for an
 * array) per object and a closure per plan (about 2 % of `compile(ast)`).
 * A plan's objects are literals, whose prototype lists no key, so `for…in`
 * gives their own keys; a value that is no object is not visited (1–2 % of
 * `compile(text)`, an A/B of the corpus in one process).
 */
function freezeDeep(v: unknown): void {
  if (typeof v !== 'object' || v === null || Object.isFrozen(v)) return;
  if ((v as { kind?: unknown }).kind === 'query') return;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) {
      const value: unknown = v[i];
      if (typeof value === 'object' && value !== null) freezeDeep(value);
    }
  } else {
    for (const key in v) {
      const value = (v as Record<string, unknown>)[key];
      if (typeof value === 'object' && value !== null) freezeDeep(value);
    }
  }
  Object.freeze(v);
}

/** A scalar used by `sql.ts` and the client. */
export type { Scalar };

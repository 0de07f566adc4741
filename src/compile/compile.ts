/**
 * The compiler: a query (AST or text) → one `datastore_search` request.
 *
 * Pure: no I/O, no clock, no state. The same query always gives the same
 * request, a deeply frozen plain JSON object with its keys in the order
 * `resource_id, filters, q, fields, sort, limit, offset`, and only the keys
 * the query sets, so the server's defaults apply to the rest.
 */
import type { Condition, Equals, Field, In, Or, Parameter, Query, SortKey, Value } from '../ast.js';
import { assertNever } from '../ast.js';
import { QueryError, queryError } from '../errors.js';
import type { Filters, Scalar, SearchRequest } from '../datastore/types.js';
import { parse } from '../syntax/parse.js';
import { bind } from './bind.js';
import type { Params } from './bind.js';
import { canonicalText } from '../datastore/values.js';
import { sortText } from '../datastore/sort.js';
import { fieldText, parametersOf } from './parameters.js';

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
 * express. When given text, every error carries it as `source`.
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
export function compile(query: Query | string, params?: Params): SearchRequest {
  if (typeof query !== 'string') return compileQuery(params === undefined ? query : bind(query, params));
  const source = query;
  try {
    const parsed = parse(source);
    return compileQuery(params === undefined ? parsed : bind(parsed, params));
  } catch (error) {
    throw error instanceof QueryError ? withSource(error, source) : error;
  }
}

function compileQuery(query: Query): SearchRequest {
  try {
    return buildRequest(query);
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
 * One pass over the query: each object is made in its final key order (a
 * key only when the query sets it) and frozen as soon as it is complete,
 * so the result needs no second walk to freeze it.
 */
function buildRequest(query: Query): SearchRequest {
  const request: Record<string, unknown> = { resource_id: text(query.from.resource) };
  if (query.where !== undefined) {
    const filters = compileFilters(query.where.condition);
    if (filters !== undefined) request.filters = filters;
  }
  if (query.search !== undefined) {
    const q = text(query.search.text);
    // Same test as normalizeRequest: all white space is no search at all.
    if (!/^\s*$/.test(q)) request.q = q;
  }
  if (query.select !== undefined) request.fields = Object.freeze(query.select.fields.map(fieldName));
  if (query.order !== undefined) request.sort = sortValue(query.order.keys);
  if (query.limit !== undefined) request.limit = count(query.limit.value, 'limit');
  if (query.offset !== undefined) request.offset = count(query.offset.value, 'offset');
  return Object.freeze(request) as unknown as SearchRequest;
}

function fieldName(field: Field): string {
  return field.name;
}

function sortValue(keys: readonly SortKey[]): string {
  let sort = sortText(keys[0]!.field.name, keys[0]!.direction);
  for (let i = 1; i < keys.length; i++) sort += `, ${sortText(keys[i]!.field.name, keys[i]!.direction)}`;
  return sort;
}

// ---------------------------------------------------------------- filters

/** The values one field may take under a condition. */
interface ValueSet {
  readonly field: Field;
  readonly values: readonly Scalar[];
  /** the condition was an `=` (alone, a single value rather than a list) */
  readonly equals: boolean;
}

/** Conditions that are not `and` groups: an `and` is flattened into its members. */
type Leaf = Equals | In | Or;

function compileFilters(condition: Condition): Filters | undefined {
  const leaves: Leaf[] = [];
  collectLeaves(condition, leaves);
  if (leaves.length === 0) return undefined;
  const filters: Record<string, Scalar | readonly Scalar[]> = {};
  let repeated = false;
  // Every leaf is read in source order, so the first problem in the text is
  // the one reported. A field's first condition gives its value as written.
  for (const leaf of leaves) {
    let name: string;
    let value: Scalar | readonly Scalar[];
    if (leaf.kind === 'eq') {
      // The commonest condition needs no value set.
      name = leaf.field.name;
      value = literal(leaf.value);
    } else {
      const set = leafSet(leaf);
      name = set.field.name;
      value = set.values;
    }
    if (Object.hasOwn(filters, name)) repeated = true;
    else setFilter(filters, name, value);
  }
  // A field with several conditions is rare: only then are its sets grouped
  // and intersected (the key keeps its place of first appearance).
  if (repeated) {
    const byField = new Map<string, ValueSet[]>();
    for (const leaf of leaves) {
      const set = leafSet(leaf);
      const group = byField.get(set.field.name);
      if (group === undefined) byField.set(set.field.name, [set]);
      else group.push(set);
    }
    for (const [name, group] of byField) if (group.length > 1) setFilter(filters, name, commonValue(group));
  }
  return Object.freeze(filters);
}

/** Sets (or replaces) one filter, frozen; a field named `__proto__` stays an ordinary own key. */
function setFilter(filters: Record<string, unknown>, name: string, value: Scalar | readonly Scalar[]): void {
  if (Array.isArray(value)) Object.freeze(value);
  if (name === '__proto__') {
    Object.defineProperty(filters, name, { value, enumerable: true, writable: true, configurable: true });
  } else {
    filters[name] = value;
  }
}

/** The members of nested `and` groups, depth first, i.e. in source order. */
function collectLeaves(condition: Condition, leaves: Leaf[]): void {
  switch (condition.kind) {
    case 'and':
      for (const member of condition.conditions) collectLeaves(member, leaves);
      return;
    case 'eq':
    case 'in':
    case 'or':
      leaves.push(condition);
      return;
    default:
      return assertNever(condition, 'condition');
  }
}

function leafSet(leaf: Leaf): ValueSet {
  switch (leaf.kind) {
    case 'eq':
      return { field: leaf.field, values: [literal(leaf.value)], equals: true };
    case 'in':
      return { field: leaf.field, values: leaf.values.map(literal), equals: false };
    case 'or':
      return orSet(leaf);
    default:
      return assertNever(leaf, 'condition');
  }
}

/** An `or` group: every branch must be on the first branch's field; values are joined in order. */
function orSet(or: Or): ValueSet {
  let field: Field | undefined;
  const values: Scalar[] = [];
  for (const branch of or.conditions) {
    const set = branchSet(branch);
    if (field === undefined) field = set.field;
    else if (set.field.name !== field.name) {
      throw queryError('OR_ACROSS_FIELDS', branch.span, [field.name, set.field.name], {
        found: set.field.name,
        hint: `"or" may only join values of one field, as in (${fieldText(field.name)} = a or ${fieldText(field.name)} = b); run one query per field instead`,
      });
    }
    // a loop, not push(...values): a list of many thousand values would overflow the argument stack
    for (const value of set.values) values.push(value);
  }
  if (field === undefined) throw new Error('an "or" group needs at least one condition');
  return { field, values, equals: false };
}

function branchSet(branch: Condition): ValueSet {
  if (branch.kind !== 'and') return leafSet(branch);
  // An `and` over one field is a value set like any other; over several it is not.
  const leaves: Leaf[] = [];
  collectLeaves(branch, leaves);
  const sets = leaves.map(leafSet);
  const first = sets[0];
  if (first === undefined) throw new Error('an "and" group needs at least one condition');
  if (sets.some((set) => set.field.name !== first.field.name)) {
    throw queryError('AND_INSIDE_OR', branch.span, [], {
      hint: 'take the "and" out of the "or" group, or write two queries: a request cannot say (a and b) or c',
    });
  }
  return { field: first.field, values: intersect(sets), equals: false };
}

/** One field's filter value from its several `and`-joined conditions. */
function commonValue(sets: readonly ValueSet[]): Scalar | readonly Scalar[] {
  const common = intersect(sets);
  const single = common[0];
  return sets.some((set) => set.equals) && common.length === 1 && single !== undefined ? single : common;
}

/** The first set's values (its order, each once) that every other set also holds. */
function intersect(sets: readonly ValueSet[]): Scalar[] {
  const [first, ...rest] = sets;
  if (first === undefined) return [];
  const others = rest.map((set) => new Set(set.values.map(valueKey)));
  const seen = new Set<string | null>();
  const common: Scalar[] = [];
  for (const value of first.values) {
    const key = valueKey(value);
    if (seen.has(key) || !others.every((keys) => keys.has(key))) continue;
    seen.add(key);
    common.push(value);
  }
  return common;
}

/** Equality key: the canonical text; `null` (never the text "null") for null. */
function valueKey(value: Scalar): string | null {
  return canonicalText(value);
}

// ---------------------------------------------------------------- values

function literal(value: Value): Scalar {
  switch (value.kind) {
    case 'string':
    case 'boolean':
      return value.value;
    case 'number':
      if (!Number.isFinite(value.value)) {
        throw queryError('NUMBER_OUT_OF_RANGE', value.span, [String(value.value)]);
      }
      return value.value === 0 ? 0 : value.value; // -0 → 0, as the parser reads it
    case 'null':
      return null;
    case 'param':
      throw unboundError(value);
    default:
      return assertNever(value, 'value');
  }
}

function text(value: Value): string {
  if (value.kind === 'param') throw unboundError(value);
  if (value.kind !== 'string') throw new Error(`expected a string node, found ${value.kind}`);
  return value.value;
}

function count(value: Value, what: 'limit' | 'offset'): number {
  if (value.kind === 'param') throw unboundError(value);
  const n = value.kind === 'number' ? value.value : Number.NaN;
  if (!Number.isSafeInteger(n) || n < 0) {
    const found = value.kind === 'number' ? String(value.value) : value.kind;
    throw queryError('INVALID_INTEGER', value.span, [what, found], { found });
  }
  return n === 0 ? 0 : n;
}

// ---------------------------------------------------------------- parameters and errors

/** Stops the walk at a parameter; `compileQuery` then reports the first one in the source, with a hint. */
function unboundError(param: Parameter): QueryError {
  return queryError('UNBOUND_PARAMETER', param.span, [param.name], { found: `$${param.name}` });
}

/** The parameter that comes first in the source, if any is left. */
function firstParameter(query: Query): Parameter | undefined {
  return parametersOf(query).reduce<Parameter | undefined>(
    (first, param) => (first === undefined || param.span.start < first.span.start ? param : first),
    undefined,
  );
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

/**
 * The way back: a `datastore_search` request → the query that compiles to it.
 * This is how a request found in a log or another program is shown as ckql.
 */
import type { Condition, Equals, Field, In, Literal, Query, SortKey } from '../ast.js';
import type { Filters, Scalar, SearchRequest } from '../datastore/types.js';
import { normalizeRequest, parseSort } from '../datastore/validate.js';
import { validationError } from '../errors.js';
import type { Span } from '../span.js';

/** Every node made here has this span: the query has no source text. */
const NO_SPAN: Span = Object.freeze({ start: 0, end: 0 });

/**
 * Turns any valid request, canonical or CKAN-style, back into a query, so
 * that `compile(fromRequest(r))` deep-equals `normalizeRequest(r)` (which
 * validates it first):
 * `fields` may be a list or a comma-separated string, `sort` a string or a
 * list of `"field dir"` items, `filters` values scalars or lists (an empty
 * list becomes `f in ()`), `limit`/`offset` whole numbers.
 *
 * - What normalization leaves out stays out: an empty or all-white-space
 *   `q`, empty `filters`/`fields`/`sort`, `include_total: true` (the default).
 *   `include_total: false` and an empty field name cannot be written in the
 *   language, so they are rejected with a Validation Error on that parameter
 *   rather than silently changing the request.
 * - Spans: the query has no source text, so every node gets the zero-width
 *   span `{ start: 0, end: 0 }`. For a query with real positions, parse its
 *   text: `parse(format(fromRequest(r)))`.
 * - An invalid request throws the `DatastoreError` the server would give
 *   (409 Validation Error naming the parameter): a missing `resource_id`, a
 *   filter value that is an object, an unknown key, a negative `limit`, …
 *
 * @example
 * const query = fromRequest({
 *   resource_id: 'courses', filters: { stage: ['active', 'survey'], year: 2020 },
 *   sort: ['year desc', 'title'], fields: 'title, year', limit: '10' });
 * format(query);
 * // from courses
 * // select title, year
 * // where stage in (active, survey) and year = 2020
 * // order by year desc, title
 * // limit 10
 * compile(query);
 * // → { resource_id: "courses", filters: { stage: ["active", "survey"], year: 2020 },
 * //     fields: ["title", "year"], sort: "year desc, title asc", limit: 10 }
 */
export function fromRequest(request: unknown): Query {
  return queryFromCanonical(normalizeRequest(request));
}

function queryFromCanonical(request: SearchRequest): Query {
  if (request.include_total === false) {
    throw validationError(
      'include_total',
      'a ckql query always asks for the total, so include_total: false cannot be written as a query; leave the key out',
    );
  }
  const query: { -readonly [K in keyof Query]: Query[K] } = {
    kind: 'query',
    span: NO_SPAN,
    from: { kind: 'from', span: NO_SPAN, resource: { kind: 'string', span: NO_SPAN, value: request.resource_id } },
  };
  const conditions = Object.entries((request.filters ?? {}) as Filters).map(([name, value]) => condition(name, value));
  const [only] = conditions;
  if (only !== undefined) {
    const condition: Condition = conditions.length === 1 ? only : { kind: 'and', span: NO_SPAN, conditions };
    query.where = { kind: 'where', span: NO_SPAN, condition };
  }
  if (request.q !== undefined) {
    query.search = { kind: 'search', span: NO_SPAN, text: { kind: 'string', span: NO_SPAN, value: request.q as string } };
  }
  if (request.fields !== undefined && request.fields.length > 0) {
    query.select = { kind: 'select', span: NO_SPAN, fields: request.fields.map((name) => field(name, 'fields')) };
  }
  if (request.sort !== undefined) {
    // The canonical sort text is read back with the same rule that wrote it.
    const keys = parseSort(request.sort).map((item): SortKey => ({
      kind: 'sort-key', span: NO_SPAN, field: field(item.field, 'sort'), direction: item.direction,
    }));
    if (keys.length > 0) query.order = { kind: 'order', span: NO_SPAN, keys };
  }
  if (request.limit !== undefined) {
    query.limit = { kind: 'limit', span: NO_SPAN, value: { kind: 'number', span: NO_SPAN, value: request.limit } };
  }
  if (request.offset !== undefined) {
    query.offset = { kind: 'offset', span: NO_SPAN, value: { kind: 'number', span: NO_SPAN, value: request.offset } };
  }
  return query;
}

function condition(name: string, value: Scalar | readonly Scalar[]): Equals | In {
  const subject = field(name, 'filters');
  if (Array.isArray(value)) {
    return { kind: 'in', span: NO_SPAN, field: subject, values: (value as readonly Scalar[]).map(literal) };
  }
  return { kind: 'eq', span: NO_SPAN, field: subject, value: literal(value as Scalar) };
}

function field(name: string, param: string): Field {
  if (name === '') {
    // The language has no empty field name (`` `` `` is a syntax error).
    throw validationError(param, 'an empty field name cannot be written in a ckql query');
  }
  return { kind: 'field', span: NO_SPAN, name };
}

function literal(value: Scalar): Literal {
  if (value === null) return { kind: 'null', span: NO_SPAN };
  switch (typeof value) {
    case 'string':
      return { kind: 'string', span: NO_SPAN, value };
    case 'number':
      return { kind: 'number', span: NO_SPAN, value: value === 0 ? 0 : value };
    case 'boolean':
      return { kind: 'boolean', span: NO_SPAN, value };
  }
}

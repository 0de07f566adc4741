/**
 * The way back: a `datastore_search` request → the query that compiles to it.
 * This is how a request found in a log or another program is shown as ckql.
 */
import type { Condition, Equals, Field, FieldSearch, In, Literal, Query, Search, SortKey, StringValue } from '../ast.js';
import { assertNever, plainSelect } from '../ast.js';
import { parseFilters, type FilterNode } from '../datastore/filters.js';
import type { CkanVersion, Filters, JsonValue, Scalar, SearchRequest } from '../datastore/types.js';
import { normalizeRequest, parseSort } from '../datastore/validate.js';
import { validationError } from '../errors.js';
import type { Span } from '../span.js';
import { fromSql } from './from-sql.js';
import { hasPrefixWord, searchWords } from './search-text.js';

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
 * - A CKAN 2.12 request is read as 2.11 reads it when 2.11 accepts it;
 *   `{ ckan: '2.12' }` reads it as 2.12 does (`$$p` is the field `$p`).
 * - A `datastore_search_sql` request (`{ sql }`) whose `SELECT` ckql's sql
 *   target wrote is read back by `fromSql` (its notes say what comes back
 *   normalized); other SQL throws the `QueryError` `UNREADABLE_SQL`.
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
export function fromRequest(request: unknown, options: FromRequestOptions = {}): Query {
  if (isSqlRequest(request)) return fromSql(request.sql);
  if (options.ckan !== undefined) return queryFromCanonical(normalizeRequest(request, { ckan: options.ckan }), options.ckan);
  let normalized: SearchRequest;
  try {
    normalized = normalizeRequest(request);
  } catch (error) {
    // CKAN 2.12's filter operators, `$or`, `next_page`… are refused by 2.11's rules: read them as 2.12 does.
    try {
      normalized = normalizeRequest(request, { ckan: '2.12' });
    } catch {
      throw error;
    }
    return queryFromCanonical(normalized, '2.12');
  }
  return queryFromCanonical(normalized, '2.11');
}

/** Options of `fromRequest`. */
export interface FromRequestOptions {
  /**
   * Read the request as this CKAN version does. A dict of plain values
   * means one thing to both, except a key starting with `$`: 2.12 reads
   * `$$p` as the field `$p` (an escape), 2.11 as the field `$$p`. Default:
   * 2.11's reading, else 2.12's when 2.11 refuses the request.
   */
  readonly ckan?: CkanVersion;
}

/**
 * A `datastore_search_sql` request (`{ sql }`): only the `SELECT` ckql's sql
 * target writes is read back (`fromSql`).
 */
function isSqlRequest(request: unknown): request is { sql: string } {
  if (typeof request !== 'object' || request === null || !Object.hasOwn(request, 'sql') || Object.hasOwn(request, 'resource_id')) return false;
  const { sql, ...rest } = request as { sql: unknown };
  if (typeof sql !== 'string') throw validationError('sql', 'the SELECT of a datastore_search_sql request is text');
  const others = Object.keys(rest);
  if (others.length > 0) throw validationError(others[0]!, 'a datastore_search_sql request has only sql; leave the key out');
  return true;
}

function queryFromCanonical(request: SearchRequest, ckan: '2.11' | '2.12'): Query {
  for (const key of ['include_next_page', 'full_text', 'total_estimation_threshold'] as const) {
    if (request[key] !== undefined && request[key] !== false && request[key] !== null) {
      throw validationError(key, `ckql cannot yet write ${key} as a query; leave the key out`);
    }
  }
  if (request.records_format !== undefined && request.records_format !== 'objects') {
    throw validationError('records_format', 'a ckql query reads records as objects; print other formats with --format instead');
  }
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
  const filters = request.filters;
  const where = filters === undefined ? undefined : ckan === '2.12' ? treeCondition(filters) : dictCondition(filters as Filters);
  if (where !== undefined) query.where = { kind: 'where', span: NO_SPAN, condition: where };
  const search = searchOf(request);
  if (search !== undefined) query.search = search;
  if (request.fields !== undefined && request.fields.length > 0) {
    const fields = request.fields.map((name) => field(name, 'fields'));
    query.select = plainSelect(fields, NO_SPAN, request.distinct === true);
  } else if (request.distinct === true) {
    throw validationError('distinct', 'ckql writes distinct as select distinct with the fields; give fields too');
  }
  if (request.sort !== undefined) {
    // The canonical sort text is read back with the same rule that wrote it.
    const keys = parseSort(request.sort).map((item): SortKey => ({
      kind: 'sort-key', span: NO_SPAN, field: field(item.field, 'sort'), direction: item.direction,
      ...(item.nulls === undefined ? {} : { nulls: item.nulls }),
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

/** CKAN 2.11's dict: one `=` or `in` per key, joined by `and`. */
function dictCondition(filters: Filters): Condition | undefined {
  const conditions = Object.entries(filters).map(([name, value]) => condition(name, value));
  if (conditions.length === 0) return undefined;
  return conditions.length === 1 ? conditions[0] : { kind: 'and', span: NO_SPAN, conditions };
}

/**
 * CKAN 2.12's filters as 2.12 reads them (operators, lists mixing values and
 * operators, `$or`, `$and`). A null there matches nothing (it is compared,
 * never tested for): `{"f": null}` becomes `f in ()`, and a null in a list is
 * left out.
 */
function treeCondition(filters: NonNullable<SearchRequest['filters']>): Condition | undefined {
  const tree = parseFilters(filters, { ckan: '2.12' });
  if (tree === undefined) return undefined;
  const node = nodeCondition(tree);
  return node.kind === 'and' && node.conditions.length === 0 ? undefined : node;
}

function nodeCondition(node: FilterNode): Condition {
  switch (node.op) {
    case 'and':
    case 'or': {
      const conditions = node.of.map(nodeCondition);
      if (conditions.length === 1) return conditions[0]!;
      // `or` of nothing holds for no record: the empty set says that.
      if (conditions.length === 0 && node.op === 'or') return { kind: 'in', span: NO_SPAN, field: field('_id', 'filters'), values: [] };
      return { kind: node.op, span: NO_SPAN, conditions };
    }
    case 'in': {
      const values = node.values.filter((v) => v !== null).map((v) => literal(scalarOf(v)));
      return { kind: 'in', span: NO_SPAN, field: field(node.field, 'filters'), values };
    }
    case 'eq':
      if (node.value === null) return { kind: 'in', span: NO_SPAN, field: field(node.field, 'filters'), values: [] };
      return { kind: 'eq', span: NO_SPAN, field: field(node.field, 'filters'), value: literal(scalarOf(node.value)) };
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte':
      if (node.value === null) return { kind: 'in', span: NO_SPAN, field: field(node.field, 'filters'), values: [] };
      return { kind: 'compare', span: NO_SPAN, op: node.op, field: field(node.field, 'filters'), value: literal(scalarOf(node.value)) };
    default:
      return assertNever(node, 'filter');
  }
}

function scalarOf(value: JsonValue): Scalar {
  if (value === null || typeof value !== 'object') return value;
  throw validationError('filters', `ckql cannot yet write a comparison with ${JSON.stringify(value)} (a list or an object) as a query`);
}

/** `q` (text or per field), `plain: false` (a to_tsquery text ckql can read back) and `language`. */
function searchOf(request: SearchRequest): Search | undefined {
  const text = (raw: string): StringValue => {
    if (request.plain !== false) {
      // In the language a word ending in * is a prefix search; a plain q has no way to say that word.
      if (hasPrefixWord(raw)) {
        throw validationError('q', `ckql cannot yet write a plain search for a word ending in * (in a query it is a prefix search): ${JSON.stringify(raw)}`);
      }
      return { kind: 'string', span: NO_SPAN, value: raw };
    }
    return { kind: 'string', span: NO_SPAN, value: prefixText(raw) };
  };
  const language = request.language === undefined ? {} : { language: { kind: 'string' as const, span: NO_SPAN, value: request.language } };
  const q = request.q;
  if (q === undefined) {
    if (request.language !== undefined) throw validationError('language', 'a language goes with a search; give q too');
    return undefined;
  }
  if (typeof q === 'string') return { kind: 'search', span: NO_SPAN, text: text(q), ...language };
  const fields = Object.entries(q).map(([name, value]): FieldSearch => ({
    kind: 'field-search', span: NO_SPAN, field: field(name, 'q'), text: text(value),
  }));
  if (fields.length === 0) return undefined;
  return { kind: 'search', span: NO_SPAN, fields, ...language };
}

/**
 * A `to_tsquery` text of the shape ckql writes (`linear & alg:*`) as search
 * words (`linear alg*`); other operators cannot be said yet.
 */
function prefixText(tsquery: string): string {
  const words = searchWords(tsquery);
  if (words === undefined) {
    throw validationError('q', `ckql can read back a to_tsquery text of words joined by & (a word:* is a prefix), not ${JSON.stringify(tsquery)}`);
  }
  return words;
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

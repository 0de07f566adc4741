/**
 * The reference evaluator: walks the query's AST record by record and says
 * what the query means, as plainly as possible. It shares nothing with the
 * compiler or the fast evaluator but the equality and order rule
 * (`values.ts`), so a property test can check the two paths against each
 * other: `evaluateQuery(q, t)` must equal `evaluate(compile(q), t)`.
 *
 * Slow on purpose (every record, every condition, every time); use
 * `evaluate` for real work.
 */
import { conditionReader, expressionReader, withComputedSlots } from './computed.js';
import type { Aggregate, Condition, Expression, Field, PlainQuery, PlainSortKey, Query, SortKey, Value } from '../../ast.js';
import { assertNever, isPlainQuery, selectedNames } from '../../ast.js';
import type { FacetResult, Facets, FieldInfo, FieldType, JsonValue, Row, SearchResult, Table } from '../../datastore/types.js';
import { likePatternError, queryError, resourceNotFound, validationError } from '../../errors.js';
import { bindShape, mapCondition, shapeOf } from '../../compile/shape.js';
import type { BoundShape, FacetSpec, Shape } from '../../compile/shape.js';
import { addDecimal, decimalOf, decimalText, decimalValue } from '../../datastore/decimal.js';
import type { Decimal } from '../../datastore/decimal.js';
import { bucketFunction } from '../../datastore/buckets.js';
import { bind } from '../../compile/bind.js';
import type { Params } from '../../compile/bind.js';
import { quoteSortField } from '../../datastore/sort.js';
import { parse } from '../../syntax/parse.js';
import { canonicalText, compareNumberColumn, compareValues, foldCase, normalizeQueryText, searchableText, typeReading, valuesEqual } from '../../datastore/values.js';
import { conditionFields, firstParameter } from '../../syntax/walk.js';
import { hasPrefixWord } from '../../compile/search-text.js';
import type { PlainRecord } from './evaluate.js';

const DEFAULT_LIMIT = 100;
const MAX_LIMIT = 32000;

/**
 * Evaluates a query (text or AST) over a table or plain records by walking
 * its AST, with the meaning of docs/language.md and docs/semantics.md:
 *
 * - SQL's three-valued logic (docs/beyond-the-request.md): a test on a null
 *   or missing value is unknown, except `is [not] null`; `not unknown` is
 *   unknown; a record is kept only when the whole `where` is true;
 * - `f = v` / `f in (…)`: canonical-text equality, where `null` equals only
 *   null or missing (so `f = null` is `f is null`); `in ()` matches nothing;
 * - `< <= > >= between` compare by the field's type: numbers numerically,
 *   dates and timestamps in time, booleans false < true, text by code point;
 *   a value that cannot be read as the field's type is a Validation Error;
 *   `f != null` is `f is not null`;
 * - `like` / `ilike`: `%` any run, `_` one character, `\` escapes; text fields only;
 * - `search "t"`: some field other than `_id` contains `t` (NFKC, lower case,
 *   white space folded); a word ending in `*` makes each word a term that some
 *   field must contain; `search f "t", …`: each named field contains its
 *   text; blank text is no search; `language` changes nothing locally;
 * - `order by` stable, nulls last ascending, first descending (`compareValues`)
 *   unless `nulls first|last` says otherwise, else `_id` order; `select
 *   distinct` keeps the first record (by `_id`) of each combination of
 *   selected values (equal by canonical text) before ordering, and refuses
 *   to order by a field it does not select, as PostgreSQL; `offset`, `limit`
 *   (default 100, capped at 32000); `select` projects, in its order.
 *
 * `params` are bound first (`bind`); a parameter left unbound is an
 * `UNBOUND_PARAMETER` QueryError at its span. A name the table (or, for
 * plain records, every record) does not have in `select`, `where`, `search`
 * or `order by` is the Validation Error that `evaluate` gives (checked in
 * that order), as the server answers it. The result has the shape of `evaluate`'s,
 * except that it has no `filters` key: a where clause need not be a request's
 * filters (`or` across fields), so there is nothing canonical to echo.
 *
 * @example
 * evaluateQuery('from courses where (subject = math or year = 2021) order by year desc select title', courses);
 * // → { …, records: [{ title: "Poetry" }, { title: "Geometry" }, { title: "Algebra" }], total: 3, … }
 */
export function evaluateQuery(query: Query | string, source: Table | TableFinder, params?: Params): SearchResult;
export function evaluateQuery<R extends PlainRecord<R>>(query: Query | string, rows: readonly R[], params?: Params): SearchResult;
export function evaluateQuery(query: Query | string, source: Table | readonly Row[] | TableFinder, params?: Params): SearchResult;
export function evaluateQuery(query: Query | string, source: Table | readonly object[] | TableFinder, params?: Params): SearchResult {
  const parsed = typeof query === 'string' ? parse(query) : query;
  const q = params === undefined ? parsed : bind(parsed, params);
  const unbound = firstParameter(q);
  if (unbound !== undefined) {
    throw queryError('UNBOUND_PARAMETER', unbound.span, [unbound.name], {
      hint: `pass a value for it, e.g. params { ${unbound.name}: … }`,
      ...(typeof query === 'string' ? { source: query } : {}),
    });
  }
  const resource = literalText(q.from.resource);
  if (resource === '') {
    throw queryError('EMPTY_RESOURCE', q.from.resource.span, [], typeof query === 'string' ? { source: query } : {});
  }
  const records = withoutFacet(q);
  const tables = source as Table | readonly Row[] | TableFinder;
  if (!isPlainQuery(records)) return evaluateShaped(q, tables);
  const found = sourceTable(tables, resource);
  const result = evaluatePlain(records, found, resource);
  if (q.facet === undefined) return result;
  return { ...result, facets: referenceFacets(shapeOf(q), [found], [fieldsOf(found)]) };
}

/** Finds a table by id or alias (a `Catalog` is one): what a join's resources are looked up in. */
export interface TableFinder {
  find(idOrAlias: string): Table | undefined;
}

function isFinder(source: Table | readonly Row[] | TableFinder): source is TableFinder {
  return !Array.isArray(source) && typeof (source as TableFinder).find === 'function' && !('rows' in source);
}

/** The table a resource names: the one given, or found by the finder. */
function sourceTable(source: Table | readonly Row[] | TableFinder, resource: string): Table | readonly Row[] {
  if (!isFinder(source)) return source;
  const table = source.find(resource);
  if (table === undefined) throw resourceNotFound(resource);
  return table;
}

function fieldsOf(source: Table | readonly Row[]): readonly FieldInfo[] {
  return Array.isArray(source) ? fieldsOfRows(source as readonly Row[]) : withId((source as Table).fields);
}

/** The query without its facets: the records a facet query gives are those it gives without them. */
export function withoutFacet(query: Query): Query {
  if (query.facet === undefined) return query;
  const { facet: _facet, ...rest } = query;
  return rest;
}

/** A plain query (see `isPlainQuery`) over one table or plain records. */
function evaluatePlain(q: PlainQuery, source: Table | readonly Row[], resource: string): SearchResult {
  const table = Array.isArray(source) ? undefined : (source as Table);
  const rows: readonly Row[] = table === undefined ? (source as readonly Row[]) : table.rows;
  const fields = table === undefined ? fieldsOfRows(rows) : withId(table.fields);
  const known = new Map(fields.map((f) => [f.id, f]));

  const selected = selectedNames(q.select);
  const keys: readonly PlainSortKey[] = q.order?.keys ?? [];
  for (const name of selected ?? []) if (!known.has(name)) throw validationError('fields', `invalid value ${JSON.stringify(name)}`);
  for (const name of conditionFields(q.where?.condition)) {
    if (!known.has(name)) throw validationError('filters', `invalid value ${JSON.stringify(name)}`);
  }
  for (const f of q.search?.fields ?? []) {
    if (!known.has(f.field.name)) throw validationError('q', `invalid value ${JSON.stringify(f.field.name)}`);
  }
  for (const key of keys) {
    if (!known.has(key.field.name)) throw validationError('sort', `invalid value ${JSON.stringify(sortClause(key))}`);
  }
  const context: Context = { types: new Map(fields.map((f) => [f.id, f.type])), typed: table !== undefined };
  if (q.where !== undefined) checkCondition(q.where.condition, context);
  const outNames = selected ?? fields.map((f) => f.id);
  if (q.select?.distinct) {
    // PostgreSQL refuses to order distinct records by what they do not show
    const outside = keys.find((key) => !outNames.includes(key.field.name));
    if (outside !== undefined) throw validationError('sort', `for SELECT DISTINCT, ORDER BY expressions must appear in select list: ${JSON.stringify(outside.field.name)}`);
  }

  // Each record with its position, so `_id` can default to it.
  const all = rows.map((row, i) => ({ row, position: i }));
  const searched = fields.filter((f) => f.id !== '_id').map((f) => f.id);
  const search = searchTest(q, searched);
  let kept = all.filter(({ row, position }) => {
    if (q.where !== undefined && truth(q.where.condition, row, position, context) !== true) return false;
    return search === undefined || search(row, position);
  });
  if (q.select?.distinct) {
    // the first record (by _id) of each combination of the selected values, equal by canonical text
    const seen = new Set<string>();
    kept = kept.filter(({ row, position }) => {
      const key = JSON.stringify(outNames.map((name) => canonicalText(valueOf(row, name, position))));
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    });
  }

  // A table's number column may hold numbers kept as their text: they sort by value, as the engine sorts them.
  const orders = keys.map((key) => (context.typed && NUMERIC.has(typeOf(key.field.name, context)) ? compareNumberColumn : compareValues));
  kept.sort((a, b) => {
    for (const [k, key] of keys.entries()) {
      const c = compareKey(key, valueOf(a.row, key.field.name, a.position), valueOf(b.row, key.field.name, b.position), orders[k] ?? compareValues);
      if (c !== 0) return c;
    }
    return a.position - b.position;
  });

  const project = ({ row, position }: { row: Row; position: number }): Row =>
    Object.fromEntries(outNames.map((name) => [name, valueOf(row, name, position)])) as Row;
  const matched = kept.map(project);

  const offset = q.offset === undefined ? 0 : countOf(q.offset.value);
  const limit = Math.min(q.limit === undefined ? DEFAULT_LIMIT : countOf(q.limit.value), MAX_LIMIT);
  const records = matched.slice(offset, offset + limit);

  const result: Record<string, unknown> = {
    resource_id: table?.id ?? resource,
    fields: selected === undefined ? fields : selected.map((name) => known.get(name) ?? { id: name, type: 'text' }),
    records,
    total: matched.length,
    total_was_estimated: false,
    limit,
  };
  if (q.offset !== undefined) result.offset = offset;
  const text = q.search?.text;
  if (text !== undefined && !/^\s*$/.test(literalText(text))) result.q = literalText(text);
  if (keys.length > 0) result.sort = keys.map(sortClause).join(', ');
  result.include_total = true;
  result.records_format = 'objects';
  return result as unknown as SearchResult;
}

function sortClause(key: PlainSortKey): string {
  return `${quoteSortField(key.field.name)} ${key.direction}${key.nulls === undefined ? '' : ` nulls ${key.nulls}`}`;
}

/** One sort key's order of two values: nulls where `nulls` says, else last ascending and first descending. */
function compareKey(key: Pick<SortKey, 'direction' | 'nulls'>, a: JsonValue, b: JsonValue, order: (a: unknown, b: unknown) => number): number {
  if (key.nulls !== undefined && (a === null) !== (b === null)) return (a === null) === (key.nulls === 'first') ? -1 : 1;
  const c = order(a, b);
  return key.direction === 'desc' ? -c : c;
}

// ---------------------------------------------------------------- where

/** The field types, and whether they are declared (a table) or read off plain records. */
interface Context {
  readonly types: ReadonlyMap<string, FieldType>;
  readonly typed: boolean;
}

/** Three-valued truth: `undefined` is unknown. */
type Truth = boolean | undefined;

function truth(condition: Condition, row: Row, position: number, context: Context): Truth {
  switch (condition.kind) {
    case 'eq': {
      const value = valueOf(row, condition.field.name, position);
      const wanted = literalValue(condition.value);
      if (wanted === null) return value === null;
      return value === null ? undefined : valuesEqual(value, wanted);
    }
    case 'in': {
      const value = valueOf(row, condition.field.name, position);
      const wanted = condition.values.map(literalValue);
      if (value === null) return wanted.includes(null) ? true : wanted.length === 0 ? false : undefined;
      return wanted.some((w) => w !== null && valuesEqual(value, w));
    }
    case 'compare': {
      const value = valueOf(row, condition.field.name, position);
      const wanted = literalValue(condition.value);
      if (wanted === null) return condition.op === 'ne' ? value !== null : undefined;
      if (value === null) return undefined;
      if (condition.op === 'ne') return !valuesEqual(value, wanted);
      const c = compareTyped(value, wanted, typeOf(condition.field.name, context));
      if (c === undefined) return undefined;
      switch (condition.op) {
        case 'lt':
          return c < 0;
        case 'lte':
          return c <= 0;
        case 'gt':
          return c > 0;
        case 'gte':
          return c >= 0;
        default:
          return assertNever(condition.op, 'operator');
      }
    }
    case 'between': {
      // `low <= f and f <= high`, each side unknown on a null: `5 between 10 and null` is false, not unknown.
      const value = valueOf(row, condition.field.name, position);
      if (value === null) return undefined;
      const type = typeOf(condition.field.name, context);
      const side = (bound: Value, holds: (c: number) => boolean): Truth => {
        const literal = literalValue(bound);
        if (literal === null) return undefined;
        const c = compareTyped(value, literal, type);
        return c === undefined ? undefined : holds(c);
      };
      const above = side(condition.low, (c) => c >= 0);
      const below = side(condition.high, (c) => c <= 0);
      return above === false || below === false ? false : above === undefined || below === undefined ? undefined : true;
    }
    case 'like': {
      const value = valueOf(row, condition.field.name, position);
      if (value === null) return undefined;
      const text = canonicalText(value)!;
      const pattern = likePattern(literalText(condition.pattern), condition.ignoreCase);
      return pattern.test(condition.ignoreCase ? foldCase(text) : text);
    }
    case 'is-null':
      return valueOf(row, condition.field.name, position) === null;
    case 'not': {
      const inner = truth(condition.condition, row, position, context);
      return inner === undefined ? undefined : !inner;
    }
    case 'and': {
      let result: Truth = true;
      for (const member of condition.conditions) {
        const t = truth(member, row, position, context);
        if (t === false) return false;
        if (t === undefined) result = undefined;
      }
      return result;
    }
    case 'or': {
      let result: Truth = false;
      for (const member of condition.conditions) {
        const t = truth(member, row, position, context);
        if (t === true) return true;
        if (t === undefined) result = undefined;
      }
      return result;
    }
    case 'comparison':
      return conditionReader<Row>(condition, (field) => ({ read: (r) => valueOf(r, field.name, position), type: typeOf(field.name, context) }))(row);
    default:
      return assertNever(condition, 'condition');
  }
}

function typeOf(name: string, context: Context): FieldType {
  return context.types.get(name) ?? 'text';
}

/**
 * `like` patterns as a regular expression: `%` any run, `_` one character
 * (code point), `\` takes the next character as itself (`checkCondition`
 * refused a pattern that ends in it); `ilike` folds both sides (`foldCase`).
 */
function likePattern(pattern: string, ignoreCase: boolean): RegExp {
  let source = '';
  const chars = [...(ignoreCase ? foldCase(pattern) : pattern)];
  for (let i = 0; i < chars.length; i++) {
    const c = chars[i]!;
    if (c === '\\') source += escapeRegExp(chars[++i]!);
    else if (c === '%') source += '[^]*';
    else if (c === '_') source += '[^]';
    else source += escapeRegExp(c);
  }
  return new RegExp(`^${source}$`, 'u');
}

/** A character as itself in a `u` regular expression: only syntax characters take a `\` there (`\-` is an error). */
function escapeRegExp(c: string): string {
  return /^[\\^$.*+?()[\]{}|/]$/.test(c) ? `\\${c}` : c;
}

/** Whether a like pattern ends in an escape character that escapes nothing. */
function endsInEscape(pattern: string): boolean {
  let escaped = false;
  for (const c of pattern) escaped = !escaped && c === '\\';
  return escaped;
}

const NUMERIC: ReadonlySet<FieldType> = new Set(['int', 'int4', 'int8', 'numeric', 'float8', 'float']);

/** A value read as a field's type, as PostgreSQL reads an untyped literal (`typeReading`); `undefined` when it cannot be. */
function asType(value: JsonValue, type: FieldType): number | string | undefined {
  // json and array columns have no order in PostgreSQL (no reading): a comparison with them is refused.
  return typeReading(type)?.read(value);
}

/** Compares a record's value with a literal by the field's type; unknown when the record's value is not of it. */
function compareTyped(value: JsonValue, literal: JsonValue, type: FieldType): number | undefined {
  const reading = typeReading(type);
  const a = asType(value, type);
  const b = asType(literal, type);
  if (reading === undefined || a === undefined || b === undefined) return undefined;
  return reading.compare(a, b);
}

/**
 * The checks a server makes before reading any record: every value of a
 * comparison must read as its field's type, and `like` needs a text field.
 * On plain records the types are guessed from the values, so only the
 * comparisons are checked, and only where the guess is a number, date or boolean.
 */
function checkCondition(condition: Condition, context: Context): void {
  const check = (field: string, value: Value): void => {
    const literal = literalValue(value);
    if (literal === null) return;
    const type = typeOf(field, context);
    if (asType(literal, type) === undefined) {
      throw validationError('filters', `${JSON.stringify(canonicalText(literal))} is not a valid ${type} value for the field ${JSON.stringify(field)}`);
    }
  };
  switch (condition.kind) {
    case 'eq':
    case 'in':
    case 'is-null':
      return;
    case 'compare':
      if (condition.op !== 'ne') check(condition.field.name, condition.value);
      return;
    case 'between':
      check(condition.field.name, condition.low);
      check(condition.field.name, condition.high);
      return;
    case 'like': {
      const type = typeOf(condition.field.name, context);
      if (context.typed && type !== 'text') {
        throw validationError('filters', `"like" needs a text field; ${JSON.stringify(condition.field.name)} is ${type}`);
      }
      const pattern = literalText(condition.pattern);
      if (endsInEscape(pattern)) throw likePatternError(pattern);
      return;
    }
    case 'not':
      return checkCondition(condition.condition, context);
    case 'and':
    case 'or':
      for (const member of condition.conditions) checkCondition(member, context);
      return;
    case 'comparison':
      return;
    default:
      return assertNever(condition, 'condition');
  }
}

// ---------------------------------------------------------------- search

/** The search test of a query, or undefined when it searches nothing. */
function searchTest(q: Query, searched: readonly string[]): ((row: Row, position: number) => boolean) | undefined {
  const search = q.search;
  if (search === undefined) return undefined;
  if (search.fields !== undefined) {
    // a blank text asks nothing of its field, as a blank search asks nothing of the record
    const texts = search.fields.filter((f) => normalizeQueryText(literalText(f.text)) !== '');
    const tests = texts.map((f) => ({ name: f.field.name, terms: termsOf(literalText(f.text)) }));
    return (row, position) =>
      tests.every(({ name, terms }) => {
        const text = searchableText(valueOf(row, name, position));
        return text !== null && terms.every((term) => text.includes(term));
      });
  }
  const raw = literalText(search.text!);
  if (normalizeQueryText(raw) === '') return undefined;
  const terms = termsOf(raw);
  return (row, position) =>
    terms.every((term) => searched.some((name) => searchableText(valueOf(row, name, position))?.includes(term) === true));
}

/** The whole text as one phrase, or, when a word ends in `*`, each word (without `*`) as its own term. */
function termsOf(text: string): string[] {
  if (!hasPrefixWord(text)) return [normalizeQueryText(text)];
  return normalizeQueryText(text.replace(/[&|!():*<>'\\"]/gu, ' ')).split(' ').filter((t) => t !== '');
}

// ---------------------------------------------------------------- values

/** A record's value of a field: own keys only, missing → null; `_id` defaults to the 1-based position. */
function valueOf(row: Row, name: string, position: number): JsonValue {
  const value = Object.hasOwn(row, name) ? (row[name] ?? null) : null;
  return name === '_id' && value === null ? position + 1 : value;
}

function literalValue(value: Value): JsonValue {
  switch (value.kind) {
    case 'string':
    case 'number':
    case 'boolean':
      return value.value;
    case 'null':
      return null;
    case 'param':
      // firstParameter() has already rejected every unbound parameter.
      throw queryError('UNBOUND_PARAMETER', value.span, [value.name]);
    default:
      return assertNever(value, 'value');
  }
}

function literalText(value: Query['from']['resource']): string {
  if (value.kind === 'param') throw queryError('UNBOUND_PARAMETER', value.span, [value.name]);
  return value.value;
}

function countOf(value: Exclude<Query['limit'], undefined>['value']): number {
  if (value.kind === 'param') throw queryError('UNBOUND_PARAMETER', value.span, [value.name]);
  if (!Number.isSafeInteger(value.value) || value.value < 0) {
    throw queryError('INVALID_INTEGER', value.span, ['a limit or offset', String(value.value)]);
  }
  return value.value;
}

function withId(fields: readonly FieldInfo[]): readonly FieldInfo[] {
  return fields.some((f) => f.id === '_id') ? fields : [{ id: '_id', type: 'int' }, ...fields];
}

/** docs/semantics.md, Data model: `_id` first, keys by first appearance, typed by the first non-null value. */
function fieldsOfRows(rows: readonly Row[]): FieldInfo[] {
  const order: string[] = ['_id'];
  const types = new Map<string, FieldType>([['_id', 'int']]);
  for (const row of rows) {
    for (const key of Object.keys(row)) {
      if (!order.includes(key)) order.push(key);
      const value = row[key];
      if (types.has(key) || value === null || value === undefined) continue;
      types.set(key, typeof value === 'number' ? 'numeric' : typeof value === 'boolean' ? 'bool' : typeof value === 'string' ? 'text' : 'json');
    }
  }
  return order.map((id) => ({ id, type: types.get(id) ?? 'text' }));
}

/**
 * The local half of a plan: a residual query (`plan`'s `residual`) as a
 * record test, over records fetched with their `fields`. Its where clause is
 * checked first as `evaluateQuery` checks it (an unknown field or a value
 * that cannot be read as its field's type is the same Validation Error).
 * @example
 * const keep = residualTest(plan('from t where a != 1', { target: 'ckan-2.11' }).residual!, page.fields);
 * page.records.filter((row, i) => keep(row, i)); // the records whose a is not 1 (and not null)
 */
export function residualTest(residual: Query, fields: readonly FieldInfo[]): (row: Row, position: number) => boolean {
  const known = new Set(fields.map((f) => f.id));
  for (const name of conditionFields(residual.where?.condition)) {
    if (!known.has(name)) throw validationError('filters', `invalid value ${JSON.stringify(name)}`);
  }
  for (const name of selectedNames((residual as PlainQuery).select) ?? []) {
    if (!known.has(name)) throw validationError('fields', `invalid value ${JSON.stringify(name)}`);
  }
  const context: Context = { types: new Map(fields.map((f) => [f.id, f.type])), typed: true };
  const condition = residual.where?.condition;
  if (condition === undefined) return () => true;
  checkCondition(condition, context);
  return (row, position) => truth(condition, row, position, context) === true;
}

/**
 * The checks a server makes of a whole query before reading a record, as
 * `evaluateQuery` makes them over a table: every name it uses is a field
 * (in CKAN's order: fields, filters, q, sort; the same Validation Errors),
 * every value a comparison reads fits its field's type, and `like` tests a
 * text field. The PostgreSQL engines check a query so before writing its SQL.
 * @example checkQuery(parse('from t where nope = 1'), fields) // throws VALIDATION_ERROR: filters: invalid value "nope"
 */
export function checkQuery(query: PlainQuery, fields: readonly FieldInfo[]): void {
  const known = new Set(fields.map((f) => f.id));
  for (const name of selectedNames(query.select) ?? []) {
    if (!known.has(name)) throw validationError('fields', `invalid value ${JSON.stringify(name)}`);
  }
  for (const name of conditionFields(query.where?.condition)) {
    if (!known.has(name)) throw validationError('filters', `invalid value ${JSON.stringify(name)}`);
  }
  for (const f of query.search?.fields ?? []) {
    if (!known.has(f.field.name)) throw validationError('q', `invalid value ${JSON.stringify(f.field.name)}`);
  }
  for (const key of query.order?.keys ?? []) {
    if (!known.has(key.field.name)) throw validationError('sort', `invalid value ${JSON.stringify(sortClause(key))}`);
  }
  if (query.where !== undefined) checkCondition(query.where.condition, { types: new Map(fields.map((f) => [f.id, f.type])), typed: true });
}

// ---------------------------------------------------------------- grouped, joined, faceted (docs/aggregates.md)

/** A record of the joined sources, each field under `side\0name`, with the record of each side. */
interface Tuple {
  readonly flat: Record<string, JsonValue>;
  /** each side's position (-1: no record matched a left join) */
  readonly positions: readonly number[];
}

const flatKey = (side: number, name: string): string => `${side}\u0000${name}`;

/**
 * The records of a shaped query's sources: joined (nested loops, key
 * against key by canonical text, a null key matching nothing), then kept by
 * `where` and `search`. In the order of the first source's records, then of
 * each joined one's.
 */
function keptTuples(shape: Shape, tables: readonly (Table | readonly Row[])[], bound: BoundShape): { tuples: Tuple[]; context: Context } {
  const flat = (field: Field): string => {
    const ref = bound.ref(field);
    return flatKey(ref.side, ref.info.id);
  };
  const types = new Map<string, FieldType>();
  bound.fields.forEach((list, side) => list.forEach((f) => types.set(flatKey(side, f.id), f.type)));
  const context: Context = { types, typed: tables.every((t) => !Array.isArray(t)) };
  const rowsOf = (side: number): readonly Row[] => {
    const t = tables[side]!;
    return Array.isArray(t) ? (t as readonly Row[]) : (t as Table).rows;
  };
  const addSide = (into: Record<string, JsonValue>, side: number, row: Row | undefined, position: number): void => {
    for (const f of bound.fields[side]!) into[flatKey(side, f.id)] = row === undefined ? null : valueOf(row, f.id, position);
  };
  let tuples: Tuple[] = rowsOf(0).map((row, i) => {
    const flatRow: Record<string, JsonValue> = {};
    addSide(flatRow, 0, row, i);
    return { flat: flatRow, positions: [i] };
  });
  shape.joins.forEach((join, j) => {
    const side = j + 1;
    const rows = rowsOf(side);
    const pairs = join.on.map((pair) => {
      const [mine, other] = bound.ref(pair.left).side === side ? [pair.left, pair.right] : [pair.right, pair.left];
      return { mine: bound.ref(mine).info.id, other: flat(other) };
    });
    const next: Tuple[] = [];
    for (const tuple of tuples) {
      let matched = false;
      rows.forEach((row, i) => {
        const equal = pairs.every(({ mine, other }) => {
          const a = valueOf(row, mine, i);
          const b = tuple.flat[other] ?? null;
          return a !== null && b !== null && canonicalText(a) === canonicalText(b);
        });
        if (!equal) return;
        matched = true;
        const flatRow = { ...tuple.flat };
        addSide(flatRow, side, row, i);
        next.push({ flat: flatRow, positions: [...tuple.positions, i] });
      });
      if (!matched && join.left) {
        const flatRow = { ...tuple.flat };
        addSide(flatRow, side, undefined, -1);
        next.push({ flat: flatRow, positions: [...tuple.positions, -1] });
      }
    }
    tuples = next;
  });
  const where = shape.query.where === undefined ? undefined : mapCondition(shape.query.where.condition, (f) => ({ ...f, name: flat(f), qualifier: undefined }) as Field);
  if (where !== undefined) checkCondition(where, context);
  // `search "…"` searches the first resource's record; `search f "…"` each named field.
  const search = shape.query.search;
  const searched = bound.fields[0]!.filter((f) => f.id !== '_id').map((f) => flatKey(0, f.id));
  const searchQuery: Query | undefined =
    search === undefined
      ? undefined
      : {
          ...shape.query,
          search: search.fields === undefined ? search : { ...search, fields: search.fields.map((f) => ({ ...f, field: { ...f.field, name: flat(f.field) } })) },
        };
  const test = searchQuery === undefined ? undefined : searchTest(searchQuery, searched);
  const kept = tuples.filter((tuple) => (where === undefined || truth(where, tuple.flat, 0, context) === true) && (test === undefined || test(tuple.flat, 0)));
  return { tuples: kept, context };
}

/** A group's key value, or a record's value of a field, a bucket or an expression. */
function valueIn(value: Expression, flat: Record<string, JsonValue>, bound: BoundShape): JsonValue {
  if (value.kind !== 'field' && value.kind !== 'bucket') {
    const reading = (f: Field) => {
      const ref = bound.ref(f);
      return { read: (row: Record<string, JsonValue>) => row[flatKey(ref.side, ref.info.id)] ?? null, type: ref.info.type };
    };
    return expressionReader(value, reading).read(flat);
  }
  const field = value.kind === 'field' ? value : value.field;
  const ref = bound.ref(field);
  const raw = flat[flatKey(ref.side, ref.info.id)] ?? null;
  if (value.kind === 'field') return raw;
  return bucketFunction(value.fn === 'bucket' ? { width: value.width!.value } : { unit: value.fn })(raw);
}

/** An aggregate over a group's records, plainly (exact sums of integers and numeric, as PostgreSQL). */
function aggregateOver(aggregate: Aggregate, group: readonly Tuple[], bound: BoundShape): JsonValue {
  if (aggregate.field === undefined) return group.length;
  const argument = aggregate.field;
  const type = bound.recordType(argument);
  const values = group.map((t) => valueIn(argument, t.flat, bound) ?? null).filter((v) => v !== null);
  switch (aggregate.fn) {
    case 'count':
      return aggregate.distinct ? new Set(values.map((v) => canonicalText(v))).size : values.length;
    case 'sum':
    case 'avg': {
      if (values.length === 0) return null;
      const float = type === 'float8' || type === 'float';
      if (float) {
        const total = values.reduce<number>((sum, v) => sum + Number(v), 0);
        return aggregate.fn === 'sum' ? total : total / values.length;
      }
      let sum: Decimal = { int: 0n, scale: 0 };
      for (const v of values) {
        const d = decimalOf(v);
        if (d === undefined) throw validationError('query', `invalid input syntax for type numeric: ${JSON.stringify(canonicalText(v))}`);
        sum = addDecimal(sum, d);
      }
      return aggregate.fn === 'sum' ? decimalValue(sum) : Number(decimalText(sum)) / values.length;
    }
    case 'min':
    case 'max': {
      if (values.length === 0) return null;
      const reading = typeReading(type);
      const order = (a: JsonValue, b: JsonValue): number => {
        const x = reading?.read(a);
        const y = reading?.read(b);
        return reading !== undefined && x !== undefined && y !== undefined ? reading.compare(x, y) : compareValues(a, b);
      };
      let best = values[0]!;
      for (const v of values.slice(1)) if (aggregate.fn === 'min' ? order(v, best) < 0 : order(v, best) > 0) best = v;
      return best;
    }
    default:
      return assertNever(aggregate.fn, 'aggregate');
  }
}

/** The order of a column's values: numbers of a number type by value (kept text included), else `compareValues`. */
function orderOf(type: FieldType | undefined): (a: unknown, b: unknown) => number {
  return type !== undefined && NUMERIC.has(type) ? compareNumberColumn : compareValues;
}

/**
 * A query that one request cannot say, walked plainly: the records of its
 * sources joined and kept, grouped (one row of slots per group), tested by
 * `having`, ordered (then by the group keys, or the records' order), made
 * distinct, paged and named (docs/aggregates.md).
 */
function evaluateShaped(q: Query, source: Table | readonly Row[] | TableFinder): SearchResult {
  const shape = shapeOf(q);
  const tables = shape.sources.map((s) => sourceTable(source, s.resource));
  const bound = bindShape(shape, tables.map(fieldsOf));
  const { tuples } = keptTuples(shape, tables, bound);

  interface Out {
    readonly values: Record<string, JsonValue>;
    readonly sortValues: readonly JsonValue[];
  }
  let out: Out[];
  const sortTypes: (FieldType | undefined)[] = [];
  const directions: Pick<SortKey, 'direction' | 'nulls'>[] = [];
  if (shape.grouped) {
    const groups = new Map<string, Tuple[]>();
    for (const tuple of tuples) {
      const key = JSON.stringify(shape.keys.map((k) => canonicalText(valueIn(k, tuple.flat, bound))));
      const list = groups.get(key);
      if (list === undefined) groups.set(key, [tuple]);
      else list.push(tuple);
    }
    // Without group by, no records are still one group (count 0, the rest null).
    if (shape.keys.length === 0 && groups.size === 0) groups.set('[]', []);
    const compute = withComputedSlots(bound);
    const slotRows = [...groups.values()].map((group) => {
      const row: Record<string, JsonValue> = {};
      shape.keys.forEach((k, i) => (row[`k${i}`] = group.length === 0 ? null : valueIn(k, group[0]!.flat, bound)));
      shape.aggregates.forEach((a, i) => (row[`a${i}`] = aggregateOver(a, group, bound)));
      return row;
    }).map((row) => (compute === undefined ? row : (compute(row) as Record<string, JsonValue>)));
    const slotContext: Context = { types: bound.slotTypes, typed: true };
    const having = shape.having;
    if (having !== undefined) checkCondition(having, slotContext);
    const kept = having === undefined ? slotRows : slotRows.filter((row) => truth(having, row, 0, slotContext) === true);
    const slots = [...shape.order.map((key) => (key.by as { slot: string }).slot), ...shape.keys.map((_, i) => `k${i}`)];
    for (const key of shape.order) directions.push(key);
    for (const _ of shape.keys) directions.push({ direction: 'asc' });
    for (const slot of slots) sortTypes.push(bound.slotTypes.get(slot));
    out = kept.map((row) => ({
      values: Object.fromEntries(bound.columns.map((c) => [c.name, row[c.slot!] ?? null])),
      sortValues: slots.map((slot) => row[slot] ?? null),
    }));
  } else {
    for (const key of shape.order) {
      directions.push(key);
      const value = (key.by as { value: Expression }).value;
      sortTypes.push(value.kind === 'bucket' ? (value.fn === 'bucket' ? 'numeric' : 'timestamp') : value.kind === 'field' ? bound.ref(value).info.type : computedType(value, bound));
    }
    out = tuples.map((tuple) => ({
      values: Object.fromEntries(bound.columns.map((c) => [c.name, valueIn(c.value, tuple.flat, bound)])),
      sortValues: shape.order.map((key) => valueIn((key.by as { value: Expression }).value, tuple.flat, bound)),
    }));
    if (shape.distinct) {
      const seen = new Set<string>();
      out = out.filter((row) => {
        const key = JSON.stringify(bound.columns.map((c) => canonicalText(row.values[c.name])));
        if (seen.has(key)) return false;
        seen.add(key);
        return true;
      });
    }
  }
  const indexed = out.map((row, i) => ({ row, i }));
  indexed.sort((a, b) => {
    for (let k = 0; k < directions.length; k++) {
      const c = compareKey(directions[k]!, a.row.sortValues[k] ?? null, b.row.sortValues[k] ?? null, orderOf(sortTypes[k]));
      if (c !== 0) return c;
    }
    return a.i - b.i;
  });
  const matched = indexed.map(({ row }) => row.values as Row);
  const offset = shape.offset;
  const limit = Math.min(shape.limit ?? DEFAULT_LIMIT, MAX_LIMIT);
  const first = tables[0]!;
  const result: Record<string, unknown> = {
    resource_id: Array.isArray(first) ? shape.sources[0]!.resource : (first as Table).id,
    fields: bound.columns.map((c) => ({ id: c.name, type: c.type })),
    records: matched.slice(offset, offset + limit),
    total: matched.length,
    total_was_estimated: false,
    limit,
  };
  if (q.offset !== undefined) result.offset = offset;
  result.include_total = true;
  result.records_format = 'objects';
  if (shape.facets.length > 0) result.facets = facetsOver(shape.facets, tuples, bound);
  return result as unknown as SearchResult;
}

/** The facets of a plain query over one table (its records are `evaluatePlain`'s). */
function referenceFacets(shape: Shape, tables: readonly (Table | readonly Row[])[], fields: readonly (readonly FieldInfo[])[]): Facets {
  const bound = bindShape(shape, fields);
  return facetsOver(shape.facets, keptTuples(shape, tables, bound).tuples, bound);
}

/** Each facet's values counted over the kept records: by count, then by value; nulls apart. */
function facetsOver(facets: readonly FacetSpec[], tuples: readonly Tuple[], bound: BoundShape): Facets {
  const out: Record<string, FacetResult> = {};
  for (const facet of facets) {
    const ref = bound.ref(facet.field);
    const bucket = facet.by === undefined ? undefined : bucketFunction(facet.by);
    const counts = new Map<string, { value: JsonValue; count: number }>();
    let nulls = 0;
    for (const tuple of tuples) {
      const raw = tuple.flat[flatKey(ref.side, ref.info.id)] ?? null;
      const value = bucket === undefined ? raw : bucket(raw);
      if (value === null) {
        nulls++;
        continue;
      }
      const key = canonicalText(value)!;
      const known = counts.get(key);
      if (known === undefined) counts.set(key, { value, count: 1 });
      else known.count++;
    }
    const type = facet.by === undefined ? ref.info.type : 'unit' in facet.by ? 'timestamp' : 'numeric';
    const order = orderOf(type);
    const values = [...counts.values()].sort((a, b) => b.count - a.count || order(a.value, b.value));
    out[facet.name] = {
      field: facet.field.name,
      ...(facet.by === undefined ? {} : { by: 'unit' in facet.by ? facet.by.unit : String(facet.by.width) }),
      values: values.slice(0, facet.top),
      null_count: nulls,
      more: values.length > facet.top,
    };
  }
  return out;
}

/** The column type of an expression over the records of a shape. */
function computedType(value: Expression, bound: BoundShape): FieldType {
  return expressionReader(value, (f: Field) => ({ read: () => null, type: bound.ref(f).info.type })).type;
}

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
import type { Condition, Parameter, Query, SortKey } from '../../ast.js';
import { assertNever } from '../../ast.js';
import type { FieldInfo, FieldType, JsonValue, Row, SearchResult, Table } from '../../datastore/types.js';
import { queryError, validationError } from '../../errors.js';
import { bind } from '../../compile/bind.js';
import type { Params } from '../../compile/bind.js';
import { quoteSortField } from '../../datastore/sort.js';
import { parse } from '../../syntax/parse.js';
import { compareValues, normalizeQueryText, searchableText, valuesEqual } from '../../datastore/values.js';

const DEFAULT_LIMIT = 100;
const MAX_LIMIT = 32000;

/**
 * Evaluates a query (text or AST) over a table or plain records by walking
 * its AST, with the meaning of docs/language.md and docs/semantics.md:
 *
 * - `f = v` keeps records whose `f` equals `v` (canonical text; `null` only
 *   null or missing); `f in (…)` any of the values, `in ()` none; `and` all;
 *   `or` any — also across different fields, which `compile` rejects: this
 *   is the AST's meaning, a request just cannot say it;
 * - `search "t"`: some field other than `_id` contains `t` (NFKC, lower case,
 *   white space folded); blank text is no search;
 * - `order by` stable, nulls last ascending, first descending (`compareValues`),
 *   else `_id` order; `offset`, `limit` (default 100, capped at 32000);
 *   `select` projects, in its order.
 *
 * `params` are bound first (`bind`); a parameter left unbound is an
 * `UNBOUND_PARAMETER` QueryError at its span. With a `Table`, a name the table
 * does not have in `select`, `where` or `order by` is the Validation Error
 * that `evaluate` gives (checked in that order); with plain records it is a
 * field that is null everywhere. The result has the shape of `evaluate`'s,
 * except that it has no `filters` key: a where clause need not be a request's
 * filters (`or` across fields), so there is nothing canonical to echo.
 *
 * @example
 * evaluateQuery('from courses where (subject = math or year = 2021) order by year desc select title', courses);
 * // → { …, records: [{ title: "Poetry" }, { title: "Geometry" }, { title: "Algebra" }], total: 3, … }
 */
export function evaluateQuery(query: Query | string, source: Table | readonly Row[], params?: Params): SearchResult {
  const parsed = typeof query === 'string' ? parse(query) : query;
  const q = params === undefined ? parsed : bind(parsed, params);
  const unbound = firstParameter(q);
  if (unbound !== undefined) {
    throw queryError('UNBOUND_PARAMETER', unbound.span, [unbound.name], {
      hint: `pass a value for it, e.g. params { ${unbound.name}: … }`,
      ...(typeof query === 'string' ? { source: query } : {}),
    });
  }

  const table = Array.isArray(source) ? undefined : (source as Table);
  const rows: readonly Row[] = table === undefined ? (source as readonly Row[]) : table.rows;
  const fields = table === undefined ? fieldsOfRows(rows) : withId(table.fields);
  const known = new Map(fields.map((f) => [f.id, f]));

  const selected = q.select === undefined ? undefined : [...new Set(q.select.fields.map((f) => f.name))];
  const keys: readonly SortKey[] = q.order?.keys ?? [];
  if (table !== undefined) {
    for (const name of selected ?? []) if (!known.has(name)) throw validationError('fields', `invalid value ${JSON.stringify(name)}`);
    for (const name of conditionFields(q.where?.condition)) {
      if (!known.has(name)) throw validationError('filters', `invalid value ${JSON.stringify(name)}`);
    }
    for (const key of keys) {
      if (!known.has(key.field.name)) throw validationError('sort', `invalid value ${JSON.stringify(sortClause(key))}`);
    }
  }

  // Each record with its position, so `_id` can default to it.
  const all = rows.map((row, i) => ({ row, position: i }));
  const searchText = q.search === undefined ? '' : normalizeQueryText(literalText(q.search.text));
  const searched = fields.filter((f) => f.id !== '_id').map((f) => f.id);
  const kept = all.filter(({ row, position }) => {
    if (q.where !== undefined && !holds(q.where.condition, row, position)) return false;
    if (searchText === '') return true;
    return searched.some((name) => searchableText(valueOf(row, name, position))?.includes(searchText) === true);
  });

  kept.sort((a, b) => {
    for (const key of keys) {
      const c = compareValues(valueOf(a.row, key.field.name, a.position), valueOf(b.row, key.field.name, b.position));
      if (c !== 0) return key.direction === 'desc' ? -c : c;
    }
    return a.position - b.position;
  });

  const offset = q.offset === undefined ? 0 : countOf(q.offset.value);
  const limit = Math.min(q.limit === undefined ? DEFAULT_LIMIT : countOf(q.limit.value), MAX_LIMIT);
  const page = kept.slice(offset, offset + limit);
  const outNames = selected ?? fields.map((f) => f.id);
  const records = page.map(({ row, position }) =>
    Object.fromEntries(outNames.map((name) => [name, valueOf(row, name, position)])) as Row);

  const result: Record<string, unknown> = {
    resource_id: table?.id ?? literalText(q.from.resource),
    fields: selected === undefined ? fields : selected.map((name) => known.get(name) ?? { id: name, type: 'text' }),
    records,
    total: kept.length,
    total_was_estimated: false,
    limit,
  };
  if (q.offset !== undefined) result.offset = offset;
  if (q.search !== undefined && !/^\s*$/.test(literalText(q.search.text))) result.q = literalText(q.search.text);
  if (keys.length > 0) result.sort = keys.map(sortClause).join(', ');
  result.include_total = true;
  result.records_format = 'objects';
  return result as unknown as SearchResult;
}

function sortClause(key: SortKey): string {
  return `${quoteSortField(key.field.name)} ${key.direction}`;
}

function holds(condition: Condition, row: Row, position: number): boolean {
  switch (condition.kind) {
    case 'eq':
      return valuesEqual(valueOf(row, condition.field.name, position), literalValue(condition.value));
    case 'in': {
      const value = valueOf(row, condition.field.name, position);
      return condition.values.some((v) => valuesEqual(value, literalValue(v)));
    }
    case 'and':
      return condition.conditions.every((c) => holds(c, row, position));
    case 'or':
      return condition.conditions.some((c) => holds(c, row, position));
    default:
      return assertNever(condition, 'condition');
  }
}

/** A record's value of a field: own keys only, missing → null; `_id` defaults to the 1-based position. */
function valueOf(row: Row, name: string, position: number): JsonValue {
  const value = Object.hasOwn(row, name) ? (row[name] ?? null) : null;
  return name === '_id' && value === null ? position + 1 : value;
}

function literalValue(value: Extract<Condition, { kind: 'eq' }>['value']): JsonValue {
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

/** Field names of a where clause, each once, in the order they first appear. */
function conditionFields(condition: Condition | undefined): string[] {
  const names: string[] = [];
  const visit = (c: Condition): void => {
    switch (c.kind) {
      case 'eq':
      case 'in':
        if (!names.includes(c.field.name)) names.push(c.field.name);
        return;
      case 'and':
      case 'or':
        c.conditions.forEach(visit);
        return;
      default:
        assertNever(c, 'condition');
    }
  };
  if (condition !== undefined) visit(condition);
  return names;
}

/** The first parameter still in the query, by position in the source. */
function firstParameter(query: Query): Parameter | undefined {
  const found: Parameter[] = [];
  const value = (v: { kind: string }): void => {
    if (v.kind === 'param') found.push(v as Parameter);
  };
  const visit = (c: Condition): void => {
    switch (c.kind) {
      case 'eq':
        value(c.value);
        return;
      case 'in':
        c.values.forEach(value);
        return;
      case 'and':
      case 'or':
        c.conditions.forEach(visit);
        return;
      default:
        assertNever(c, 'condition');
    }
  };
  value(query.from.resource);
  if (query.where !== undefined) visit(query.where.condition);
  if (query.search !== undefined) value(query.search.text);
  if (query.limit !== undefined) value(query.limit.value);
  if (query.offset !== undefined) value(query.offset.value);
  return found.sort((a, b) => a.span.start - b.span.start)[0];
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

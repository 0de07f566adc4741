/**
 * A whole query over a table in one pass (`Engine.query` of the memory
 * engine), with the meaning of docs/semantics.md and
 * docs/beyond-the-request.md that the reference walker `evaluateQuery` spells
 * out, on the machinery of `evaluate` (evaluate.ts: the generated scan, the
 * equality indexes, the search text, the bounded heap).
 *
 * The `where` is turned into negation normal form whose leaves are tests of
 * one field's value: `not` is pushed down to the leaves (De Morgan), and each
 * leaf is asked either "is it true" or "is it false". Under SQL's
 * three-valued logic a record is kept when the whole condition is true, and
 * in negation normal form that is exactly the `and`/`or` of those two-valued
 * questions, so "unknown" can be read as "no" everywhere: `not (a > 1)` asks
 * "is `a > 1` false", which a null `a` is not.
 */
import type { Condition as QueryCondition, FieldSearch, PlainQuery, PlainSortKey, Query, Value } from '../../ast.js';
import { assertNever, selectedNames } from '../../ast.js';
import { hasPrefixWord, tsQueryText } from '../../compile/search-text.js';
import type { FieldInfo, JsonValue, Row, Table } from '../../datastore/types.js';
import type { SortItem } from '../../datastore/validate.js';
import { canonicalText, normalizeQueryText } from '../../datastore/values.js';
import { queryError, validationError } from '../../errors.js';
import { quoteSortField } from '../../datastore/sort.js';
import { conditionFields, firstParameter } from '../../syntax/walk.js';
import type { EngineQueryOptions, QueryStream } from '../types.js';
import { answerSteps, buildRecords, DEFAULT_LIMIT } from './evaluate.js';
import { abortedBy, paced } from '../pace.js';
import type { Conjunct } from './evaluate.js';
import { likeTest } from './like.js';
import { compareTest, conditionOf, notEqualsCondition } from './predicate.js';
import type { Condition, ValueTest } from './predicate.js';
import { fieldSearchTest, parseTsQuery } from './text-search.js';
import type { TsQuery } from './text-search.js';
import { tableView } from './table-view.js';
import type { TableView } from './table-view.js';

/** Records per batch unless `EngineQueryOptions.batchSize` says otherwise. */
export const DEFAULT_BATCH_SIZE = 1000;

/**
 * Answers a bound query over a table: its fields, its total when asked, and
 * its records in batches built as they are read. Errors are those of
 * `evaluateQuery`, raised before any record is read: a name the table does
 * not have (checked in `select`, `where`, `search`, `order by` order), a
 * value a comparison cannot read as its field's type, `like` on a field that
 * is not text. `limit` has no cap here; without one the answer has 100
 * records, or every record with `options.all`. The work pauses every few
 * milliseconds for the event loop, and stops with `ABORTED` once the
 * signal is aborted (engine/pace.ts).
 * @example
 * const stream = await queryTable(parse('from courses where subject != math order by credits desc limit 2'), courses);
 * for await (const batch of stream.batches) console.log(batch); // [{ _id: 7, … }, { _id: 3, … }]
 */
export async function queryTable(query: PlainQuery, table: Table, options: EngineQueryOptions = {}): Promise<QueryStream> {
  const unbound = firstParameter(query);
  if (unbound !== undefined) throw queryError('UNBOUND_PARAMETER', unbound.span, [unbound.name]);
  stopIfAborted(options.signal);
  const view = tableView(table);
  const known = view.fieldById;
  const selected = selectedNames(query.select);
  const keys: readonly PlainSortKey[] = query.order?.keys ?? [];
  for (const name of selected ?? []) if (!known.has(name)) throw validationError('fields', `invalid value ${JSON.stringify(name)}`);
  for (const name of conditionFields(query.where?.condition)) {
    if (!known.has(name)) throw validationError('filters', `invalid value ${JSON.stringify(name)}`);
  }
  for (const f of query.search?.fields ?? []) {
    if (!known.has(f.field.name)) throw validationError('q', `invalid value ${JSON.stringify(f.field.name)}`);
  }
  for (const key of keys) {
    if (!known.has(key.field.name)) throw validationError('sort', `invalid value ${JSON.stringify(sortClause(key))}`);
  }

  const conjuncts = query.where === undefined ? [] : conjunctsOf(query.where.condition, true, known);
  const { searches, byField } = searchesOf(query);
  for (const test of byField) conjuncts.push({ condition: test });

  const offset = query.offset === undefined ? 0 : count(query.offset.value);
  const limit = query.limit !== undefined ? count(query.limit.value) : options.all === true ? Infinity : DEFAULT_LIMIT;
  const sortItems = keys.map((key): SortItem => ({ field: key.field.name, direction: key.direction, ...(key.nulls === undefined ? {} : { nulls: key.nulls }) }));
  const answer = await paced(answerSteps(view, {
    conjuncts,
    searches,
    sortItems,
    projection: selected,
    distinct: query.select?.distinct === true,
    offset,
    limit,
    count: options.total === true,
  }), options.signal);
  const fields: readonly FieldInfo[] = selected === undefined ? view.fields : selected.map((name) => known.get(name) as FieldInfo);
  const batchSize = Math.max(1, Math.floor(options.batchSize ?? DEFAULT_BATCH_SIZE));
  return {
    fields,
    ...(answer.total === undefined ? {} : { total: answer.total }),
    batches: batchesOf(view, answer.keys, answer.page, batchSize, options.signal),
  };
}

async function* batchesOf(view: TableView, keys: readonly string[], page: Parameters<typeof buildRecords>[2], size: number, signal: AbortSignal | undefined): AsyncGenerator<readonly Row[]> {
  for (let from = 0; from < page.length; from += size) {
    stopIfAborted(signal);
    yield buildRecords(view, keys, page, from, Math.min(page.length, from + size));
  }
}

function stopIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted === true) throw abortedBy(signal);
}

function sortClause(key: PlainSortKey): string {
  return `${quoteSortField(key.field.name)} ${key.direction}${key.nulls === undefined ? '' : ` nulls ${key.nulls}`}`;
}

function count(value: NonNullable<Query['limit']>['value']): number {
  if (value.kind === 'param') throw queryError('UNBOUND_PARAMETER', value.span, [value.name]);
  if (!Number.isSafeInteger(value.value) || value.value < 0) {
    throw queryError('INVALID_INTEGER', value.span, ['a limit or offset', String(value.value)]);
  }
  return value.value;
}

// ---------------------------------------------------------------- where

/** The question of `normalForm` as the members of its top-level `and`, each an index may answer. */
export function conjunctsOf(condition: QueryCondition, truth: boolean, fields: ReadonlyMap<string, FieldInfo>): Conjunct[] {
  if (condition.kind === 'not') return conjunctsOf(condition.condition, !truth, fields);
  if ((condition.kind === 'and' && truth) || (condition.kind === 'or' && !truth)) return condition.conditions.flatMap((c) => conjunctsOf(c, truth, fields));
  return [normalForm(condition, truth, fields)];
}

/**
 * The question "is `condition` true" (`truth` true) or "is it false" in
 * negation normal form, as a scan condition. Leaves are made in the
 * condition's order, so the first value a field cannot hold is the one
 * reported, as `evaluateQuery` reports it. An `=`/`in`/`is null` asked
 * whether true carries its values for an equality index (`Conjunct.equals`).
 */
function normalForm(condition: QueryCondition, truth: boolean, fields: ReadonlyMap<string, FieldInfo>): Conjunct {
  const field = (name: string): FieldInfo => fields.get(name) as FieldInfo;
  const test = (name: string, t: ValueTest): Conjunct => ({ condition: { op: 'test', field: name, test: t } });
  switch (condition.kind) {
    case 'eq':
    case 'in': {
      const values = condition.kind === 'in' ? condition.values.map(literal) : [literal(condition.value)];
      const name = condition.field.name;
      if (truth) return { condition: conditionOf({ op: 'in', field: name, values }, fields), field: name, equals: values };
      // false: a value equal to none of them (`f = null` is `f is null`, false for any value);
      // a null only for the empty list (`null in ()` is false, `null in (1)` unknown)
      return { condition: notEqualsCondition(name, values) };
    }
    case 'compare': {
      const name = condition.field.name;
      const value = literal(condition.value);
      if (condition.op === 'ne') {
        // `f != null` is `f is not null`
        if (!truth) return { condition: conditionOf({ op: 'eq', field: name, value }, fields), field: name, equals: [value] };
        return { condition: notEqualsCondition(name, [value]) };
      }
      // `not (f < v)` is `f >= v` where the comparison is known (neither side null, the value of the type)
      const op = truth ? condition.op : ({ lt: 'gte', lte: 'gt', gt: 'lte', gte: 'lt' } as const)[condition.op];
      return test(name, compareTest(field(name), op, value, refuseValue));
    }
    case 'between': {
      const name = condition.field.name;
      const low = literal(condition.low);
      const high = literal(condition.high);
      const atLeast = compareTest(field(name), truth ? 'gte' : 'lt', low, refuseValue);
      const atMost = compareTest(field(name), truth ? 'lte' : 'gt', high, refuseValue);
      const sides: Condition[] = [
        { op: 'test', field: name, test: atLeast },
        { op: 'test', field: name, test: atMost },
      ];
      return { condition: { op: truth ? 'and' : 'or', of: sides } };
    }
    case 'like': {
      const name = condition.field.name;
      const type = field(name).type;
      if (type !== 'text') throw validationError('filters', `"like" needs a text field; ${JSON.stringify(name)} is ${type}`);
      const matches = likeTest(literalText(condition.pattern), condition.ignoreCase);
      return test(name, (v) => !isNull(v) && matches(canonicalText(v) as string) === truth);
    }
    case 'is-null':
      return truth ? { condition: conditionOf({ op: 'eq', field: condition.field.name, value: null }, fields), field: condition.field.name, equals: [null] } : { condition: notEqualsCondition(condition.field.name, [null]) };
    case 'not':
      return normalForm(condition.condition, !truth, fields);
    case 'and':
    case 'or': {
      const of = condition.conditions.map((c) => normalForm(c, truth, fields).condition);
      // De Morgan: "is (a and b) false" is "is a false or is b false"
      const op = (condition.kind === 'and') === truth ? 'and' : 'or';
      return { condition: { op, of } };
    }
    case 'comparison':
      throw queryError('NOT_COMPUTED_YET', condition.span, ['this comparison', 'the memory engine'], { hint: 'docs/expressions.md says what each engine and target computes' });
    default:
      return assertNever(condition, 'condition');
  }
}

function isNull(value: JsonValue | null | undefined): boolean {
  return value === null || value === undefined;
}

/** A comparison's value that its field cannot hold, worded as `evaluateQuery` words it. */
function refuseValue(field: FieldInfo, value: JsonValue): Error {
  return validationError('filters', `${JSON.stringify(canonicalText(value))} is not a valid ${field.type} value for the field ${JSON.stringify(field.id)}`);
}

function literal(value: Value): JsonValue {
  switch (value.kind) {
    case 'string':
    case 'number':
    case 'boolean':
      return value.value;
    case 'null':
      return null;
    case 'param':
      throw queryError('UNBOUND_PARAMETER', value.span, [value.name]);
    default:
      return assertNever(value, 'value');
  }
}

function literalText(value: Query['from']['resource']): string {
  if (value.kind === 'param') throw queryError('UNBOUND_PARAMETER', value.span, [value.name]);
  return value.value;
}

// ---------------------------------------------------------------- search

/**
 * `search "text"` as searches of the whole record's text, and `search f "t",
 * …` as tests of each field's value; blank text asks nothing. A text with a
 * word ending in `*` is its words, each a term of its own (as a portal is
 * asked: `tsQueryText`), else it is one phrase.
 */
export function searchesOf(query: Query): { searches: TsQuery[]; byField: Condition[] } {
  const search = query.search;
  if (search === undefined) return { searches: [], byField: [] };
  if (search.fields !== undefined) {
    const byField = search.fields
      .filter((f: FieldSearch) => normalizeQueryText(literalText(f.text)) !== '')
      .map((f): Condition => ({ op: 'test', field: f.field.name, test: fieldSearchTest(textQueryOf(literalText(f.text))) }));
    return { searches: [], byField };
  }
  const text = literalText(search.text!);
  if (normalizeQueryText(text) === '') return { searches: [], byField: [] };
  // each term on its own, so each runs as one sweep of the search text
  return { searches: terms(textQueryOf(text)), byField: [] };
}

function textQueryOf(text: string): TsQuery {
  return hasPrefixWord(text) ? parseTsQuery(tsQueryText(text)) : { kind: 'term', text: normalizeQueryText(text) };
}

function terms(query: TsQuery): TsQuery[] {
  return query.kind === 'and' ? query.of.flatMap(terms) : [query];
}

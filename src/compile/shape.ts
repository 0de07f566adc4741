/**
 * The shape of a query that one request cannot say: a join, a group, a
 * facet, a new name (docs/aggregates.md). Pure, in two steps:
 *
 * - `shapeOf(query)` reads what the query asks without knowing any field:
 *   the sources, the group keys and aggregates (each once), the output
 *   columns and their names, `having` and `order by` over them, the facets;
 *   it refuses what no data can make right (NOT_GROUPED, DUPLICATE_NAME, …).
 * - `bindShape(shape, fields)` meets the shape with each source's fields:
 *   which source an unqualified field is of (AMBIGUOUS_FIELD), the type of
 *   every column, and the aggregates and buckets a type cannot take.
 *
 * Every engine and target answers from the same shape, so they agree on
 * names, order and meaning: the memory engine (engine/memory/shaped.ts), the
 * SQL writer (sql-shaped.ts) and the plans' operators (execute/).
 *
 * A grouped query computes, per group, a row of slots: `k0`, `k1`, … the
 * group keys, `a0`, `a1`, … the aggregates. `having` and `order by` are
 * read over those slots, and the output columns are named slots.
 */
import type {
  Aggregate, Bucket, Condition, Expression, Field, From, Join, Operand, Query, SelectItem, SortDirection, StringValue,
} from '../ast.js';
import { assertNever, hasComparison, isComputed, querySources, unionMembers } from '../ast.js';
import type { FieldInfo, FieldType } from '../datastore/types.js';
import { isNumberType } from '../datastore/values.js';
import { queryError, validationError } from '../errors.js';
import type { Span } from '../span.js';
import { expressionText, formatField } from '../format.js';
import { unboundError } from './dict-filters.js';
import { expressionFields, firstAggregate, mapChildren, mapLeaves } from '../syntax/expressions.js';
import { expressionType, fieldTypeOf, valueTypeOf } from './expression-types.js';

/** A `facet`'s default number of values, and the most `top` may ask for. */
export const DEFAULT_FACET_TOP = 30;
export const MAX_FACET_TOP = 1000;

/** One resource of the query: `from`'s, then each join's. */
export interface ShapeSource {
  readonly from: From;
  /** the resource as written (a source-qualified `portal:resource` included) */
  readonly resource: string;
  /** the name that qualifies its fields: the alias, else the resource */
  readonly qualifier: string;
  /** a union (`from a union b`): every resource it reads, the first included (compile/union.ts) */
  readonly union?: readonly StringValue[];
}

/** One column of the answer. */
export interface Column {
  readonly name: string;
  readonly span: Span;
  readonly value: Expression;
  /** in a grouped query: the slot of a group's row that holds it (`k0`, `a1`, `c0`) */
  readonly slot?: string;
}

/** What a key of `order by` sorts by: a slot of a group's row, or (ungrouped) a value of the record. */
export type SortBy = { readonly kind: 'slot'; readonly slot: string } | { readonly kind: 'value'; readonly value: Expression };

export interface ShapeSortKey {
  readonly span: Span;
  readonly by: SortBy;
  readonly direction: SortDirection;
  /** absent: nulls last ascending, first descending */
  readonly nulls?: 'first' | 'last';
}

/** One facet: a field's values (or their buckets) counted over the records the query keeps. */
export interface FacetSpec {
  readonly name: string;
  readonly span: Span;
  readonly field: Field;
  /** a date unit, or a width (with its text, exactly as written) */
  readonly by?: { readonly unit: 'year' | 'month' | 'week' | 'day' } | { readonly width: number };
  readonly top: number;
}

export interface Shape {
  readonly query: Query;
  readonly sources: readonly ShapeSource[];
  readonly joins: readonly Join[];
  /** a group by, an aggregate, or having: the answer has a row per group */
  readonly grouped: boolean;
  readonly keys: readonly Expression[];
  readonly aggregates: readonly Aggregate[];
  /** a grouped query's computed values (`c0`, `c1`, …): expressions over the other slots of a group's row */
  readonly computed: readonly Expression[];
  /** the answer's columns; undefined for an ungrouped query without select (every field of every source: `bindShape`) */
  readonly columns: readonly Column[] | undefined;
  /**
   * `select *, price * qty as total` (ungrouped only): every field of every
   * source, in their order, stands before column `at` of `columns`
   * (`bindShape` puts them there); `*` alone leaves `columns` empty
   */
  readonly star?: { readonly span: Span; readonly at: number };
  /** `having` over the slots of a group's row: each field names a slot */
  readonly having?: Condition;
  readonly order: readonly ShapeSortKey[];
  readonly facets: readonly FacetSpec[];
  /** `select distinct` of an ungrouped query */
  readonly distinct: boolean;
  readonly offset: number;
  /** undefined: none given */
  readonly limit: number | undefined;
}

/** The slot of group key `i` and of aggregate `i`. */
export const keySlot = (i: number): string => `k${i}`;
export const aggregateSlot = (i: number): string => `a${i}`;
export const computedSlot = (i: number): string => `c${i}`;

/**
 * The shape of a bound query (parameters bound; `isPlainQuery` false).
 * @example
 * shapeOf(parse('from courses group by subject select subject, count(*) as n having n > 3'))
 * // → { grouped: true, keys: [subject], aggregates: [count(*)], columns: [subject → k0, n → a0],
 * //     having: a0 > 3, order: [k0 asc], … }
 */
export function shapeOf(query: Query): Shape {
  const sources = querySources(query).map((from): ShapeSource => {
    const resource = resourceText(from.resource);
    const union = from.union === undefined ? {} : { union: unionMembers(from).map((member): StringValue => (member.kind === 'string' ? member : { kind: 'string', span: member.span, value: resourceText(member) })) };
    return { from, resource, qualifier: from.alias?.name ?? resource, ...union };
  });
  const single = sources.length === 1;
  const same = (a: Field, b: Field): boolean => sameField(a, b, single);
  for (const join of query.joins ?? []) checkKeys(join, sources);

  // `*` stands for every field, which only `bindShape` knows: the other items are the columns here
  const items = (query.select?.items ?? []).filter((item): item is SelectItem & { readonly value: Expression } => item.value.kind !== 'star');
  const aggregateInSelect = items.some((item) => firstAggregate(item.value) !== undefined);
  const aggregateInOrder = query.order?.keys.some((key) => firstAggregate(key.field) !== undefined) ?? false;
  const grouped = query.group !== undefined || query.having !== undefined || aggregateInSelect || aggregateInOrder;
  const starItem = query.select?.items.find((item) => item.value.kind === 'star');
  if (starItem !== undefined && grouped) {
    throw queryError('NOT_GROUPED', starItem.span, ['"*"'], {
      found: '*',
      hint: 'a group has no one value of every field: select the group keys and aggregates (select subject, count(*))',
    });
  }

  // Names first: explicit ones are fixed, then each item's own, made unique.
  const named = nameItems(query, single);

  const keys: Expression[] = [];
  const keyIndex = new SameIndex<Expression>(keys, (a, b) => sameValue(a, b, same));
  const byAs = new Map<string, (typeof items)[number]>();
  for (const item of items) if (item.as !== undefined && !byAs.has(item.as.name)) byAs.set(item.as.name, item);
  for (const key of query.group?.keys ?? []) {
    // A name that is a select item's `as` name stands for that item (SoQL's `$group=day`).
    const aliased = key.kind === 'field' && key.qualifier === undefined ? byAs.get(key.name) : undefined;
    const value = aliased?.value ?? key;
    if (value.kind === 'aggregate') {
      const name = (key as Field).name;
      throw queryError('NOT_GROUPED', key.span, [JSON.stringify(name)], {
        hint: `${JSON.stringify(name)} names an aggregate; group by the fields it is counted over, and test it in having`,
      });
    }
    if (keyIndex.indexOf(value) < 0) keyIndex.push(value);
  }

  const aggregates: Aggregate[] = [];
  const aggregateIndex = new SameIndex<Aggregate>(aggregates, (a, b) => sameAggregate(a, b, same));
  const aggregateSlotOf = (aggregate: Aggregate): string => {
    let i = aggregateIndex.indexOf(aggregate);
    if (i < 0) i = aggregateIndex.push(aggregate);
    return aggregateSlot(i);
  };
  const keySlotOf = (value: Expression): string | undefined => {
    const i = keyIndex.indexOf(value);
    return i < 0 ? undefined : keySlot(i);
  };
  // A computed value of a group's row: an expression over its slots (`c0`, `c1`, …), made once per value.
  const computed: Expression[] = [];
  const slotField = (slot: string, span: Span): Field => ({ kind: 'field', span, name: slot });
  let slotOfName: (field: Field) => string | undefined = () => undefined;
  const overSlots = (value: Expression): Expression => {
    const key = keySlotOf(value);
    if (key !== undefined) return slotField(key, value.span);
    switch (value.kind) {
      case 'aggregate':
        return slotField(aggregateSlotOf(value), value.span);
      case 'field': {
        const slot = slotOfName(value);
        if (slot === undefined) throw notGrouped(value, query);
        return slotField(slot, value.span);
      }
      case 'bucket':
        throw notGrouped(value, query);
      default:
        return isComputed(value) ? mapChildren(value, overSlots) : value;
    }
  };
  const computedSlotOf = (value: Expression): string => {
    const over = overSlots(value);
    let i = computed.findIndex((c) => sameValue(c, over, same));
    if (i < 0) i = computed.push(over) - 1;
    return computedSlot(i);
  };

  let columns: Column[] | undefined;
  let star: Shape['star'];
  if (grouped) {
    if (query.select === undefined) {
      // group by without select: the keys and count(*)
      const count: Aggregate = { kind: 'aggregate', span: query.group?.span ?? query.span, fn: 'count' };
      const values: Expression[] = [...keys, count];
      const names = uniqueNames(values.map((value) => ({ value, span: value.span })), single);
      columns = values.map((value, i) => ({
        name: names[i]!,
        span: value.span,
        value,
        slot: value.kind === 'aggregate' ? aggregateSlotOf(value) : keySlot(i),
      }));
    } else {
      columns = named.map(({ item, name }) => {
        const value = item.value;
        let slot = value.kind === 'aggregate' ? aggregateSlotOf(value) : keySlotOf(value);
        if (slot === undefined && isComputed(value)) slot = computedSlotOf(value);
        if (slot === undefined) throw notGrouped(value, query);
        return { name, span: item.span, value, slot };
      });
    }
  } else if (query.select !== undefined) {
    columns = named.map(({ item, name }) => ({ name, span: item.span, value: item.value }));
    if (starItem !== undefined) {
      // the fields go where the first `*` stands: after the items before it
      const order = new Map(query.select.items.map((item, i) => [item, i]));
      const starIndex = order.get(starItem)!;
      star = { span: starItem.span, at: named.filter(({ item }) => order.get(item as SelectItem)! < starIndex).length };
    }
  } else if (sources.length === 1) {
    columns = undefined;
  }

  const columnByName = new Map<string, Column>();
  for (const column of columns ?? []) if (!columnByName.has(column.name)) columnByName.set(column.name, column);
  slotOfName = (field: Field): string | undefined => {
    if (field.qualifier === undefined) {
      const column = columnByName.get(field.name);
      if (column?.slot !== undefined) return column.slot;
    }
    return keySlotOf(field);
  };

  let having: Condition | undefined;
  if (query.having !== undefined) {
    having = mapCondition(query.having.condition, (operand) => {
      const slot = operand.kind === 'aggregate' ? aggregateSlotOf(operand) : slotOfName(operand);
      if (slot === undefined) throw notGrouped(operand, query);
      return { kind: 'field', span: operand.span, name: slot };
    }, overSlots);
  }

  const order: ShapeSortKey[] = [];
  for (const key of query.order?.keys ?? []) {
    const by = grouped && isComputed(key.field) ? { kind: 'slot' as const, slot: computedSlotOf(key.field) } : sortBy(key.field, grouped, columns, slotOfName, aggregateSlotOf, query);
    order.push({ span: key.span, by, direction: key.direction, ...(key.nulls === undefined ? {} : { nulls: key.nulls }) });
  }

  const facets = facetsOf(query);
  return {
    query,
    sources,
    joins: query.joins ?? [],
    grouped,
    keys,
    aggregates,
    computed,
    columns,
    ...(star === undefined ? {} : { star }),
    ...(having === undefined ? {} : { having }),
    order,
    facets,
    distinct: query.select?.distinct === true && !grouped,
    offset: countOf(query.offset?.value) ?? 0,
    limit: countOf(query.limit?.value),
  };
}

function sortBy(
  operand: Expression,
  grouped: boolean,
  columns: readonly Column[] | undefined,
  slotOfName: (field: Field) => string | undefined,
  aggregateSlotOf: (aggregate: Aggregate) => string,
  query: Query,
): SortBy {
  if (grouped) {
    const slot = operand.kind === 'aggregate' ? aggregateSlotOf(operand) : operand.kind === 'field' ? slotOfName(operand) : undefined;
    if (slot === undefined) throw notGrouped(operand, query);
    return { kind: 'slot', slot };
  }
  if (operand.kind === 'aggregate') throw new Error('an aggregate in order by makes the query grouped');
  if (operand.kind !== 'field') return { kind: 'value', value: operand };
  // An output name comes first, as PostgreSQL reads ORDER BY; else a field of the records.
  const column = operand.qualifier === undefined ? columns?.find((c) => c.name === operand.name) : undefined;
  if (column !== undefined && column.value.kind !== 'aggregate') return { kind: 'value', value: column.value };
  return { kind: 'value', value: operand };
}

/** `NOT_GROUPED`, with both fixes in its hint. */
function notGrouped(value: Expression, query: Query): Error {
  const text = valueText(value);
  const field = value.kind === 'field' ? value : value.kind === 'bucket' ? value.field : undefined;
  const fieldText = field === undefined ? text : fieldRefText(field);
  const hint =
    query.group === undefined
      ? `either add "group by ${text}", or aggregate it: count(distinct ${fieldText}), min(${fieldText}), max(${fieldText})`
      : `either add it to group by (group by ${[...query.group.keys.map(valueText), text].join(', ')}), or aggregate it: count(distinct ${fieldText}), min(${fieldText}), max(${fieldText})`;
  return queryError('NOT_GROUPED', value.span, [JSON.stringify(text)], { found: text, hint });
}

/** A field, bucket or aggregate as the language writes it (an expression as `the expression`). */
export function valueText(value: Expression): string {
  switch (value.kind) {
    case 'field':
      return fieldRefText(value);
    case 'bucket':
      return value.fn === 'bucket' ? `bucket(${fieldRefText(value.field)}, ${String(value.width?.value)})` : `${value.fn}(${fieldRefText(value.field)})`;
    case 'aggregate':
      return value.field === undefined ? `${value.fn}(*)` : `${value.fn}(${value.distinct ? 'distinct ' : ''}${valueText(value.field)})`;
    default:
      return expressionText(value);
  }
}

/** `c.subject`, `` c.`school year` ``, `subject` */
export function fieldRefText(field: Field): string {
  return field.qualifier === undefined ? formatField(field.name) : `${field.qualifier}.${formatField(field.name)}`;
}

// ---------------------------------------------------------------- names

interface NamedItem {
  readonly item: { readonly value: Expression; readonly span: Span; readonly as?: { readonly name: string; readonly span: Span } };
  readonly name: string;
}

/** A query's select items with their output names, as `shapeOf` names its columns (a window's: its function's name). */
export function namedItems(query: Query): readonly NamedItem[] {
  return nameItems(query, querySources(query).length === 1);
}

/** The select items with their output names: `as` names as given (each once), the others as `uniqueNames` makes them. */
function nameItems(query: Query, single: boolean): NamedItem[] {
  const items = (query.select?.items ?? []).filter((item): item is SelectItem & { readonly value: Expression } => item.value.kind !== 'star');
  const explicit = new Set<string>();
  for (const item of items) {
    if (item.as === undefined) continue;
    if (explicit.has(item.as.name)) {
      throw queryError('DUPLICATE_NAME', item.as.span, [item.as.name], { found: item.as.name, hint: 'give each column its own name' });
    }
    explicit.add(item.as.name);
  }
  // The same plain field twice is one column, as `select a, a` is (each plain field is checked against every one before it).
  const plain = new SameIndex<Field>([], (a, b) => sameField(a, b, single));
  const kept = items.filter((item) => {
    if (item.as !== undefined || item.value.kind !== 'field') return true;
    const before = plain.indexOf(item.value) >= 0;
    plain.push(item.value);
    return !before;
  });
  const implicit = uniqueNames(kept.map((item) => ({ value: item.value, span: item.span, ...(item.as === undefined ? {} : { as: item.as.name }) })), single, explicit);
  return kept.map((item, i) => ({ item, name: implicit[i]! }));
}

/**
 * Output names: an `as` name as it is; a field its name (`alias.field` when
 * two fields of different resources share it); an aggregate or a bucket
 * `count`, `count_f`, `count_distinct_f`, `sum_f`, `month_f`, `bucket_f`; a
 * name taken already gets `_2`, `_3`, ….
 */
function uniqueNames(
  items: readonly { readonly value: Expression; readonly span: Span; readonly as?: string }[],
  single: boolean,
  reserved: ReadonlySet<string> = new Set(),
): string[] {
  // An expression without a name of its own is `expr_1`, `expr_2`, … in its order (PostgreSQL's `?column?`).
  let expressions = 0;
  const base = items.map((item) => item.as ?? ownName(item.value) ?? `expr_${++expressions}`);
  // Fields of different resources with one name are named by their resource: the plain fields of each name, found once.
  const fieldsNamed = new Map<string, Field[]>();
  for (const [j, other] of items.entries()) {
    if (other.as !== undefined || other.value.kind !== 'field') continue;
    const list = fieldsNamed.get(base[j]!);
    if (list === undefined) fieldsNamed.set(base[j]!, [other.value]);
    else list.push(other.value);
  }
  const names = items.map((item, i) => {
    if (item.as !== undefined || item.value.kind !== 'field' || single) return base[i]!;
    const field = item.value;
    // (the same field as this one, itself among them, is no clash)
    const clash = (fieldsNamed.get(base[i]!) ?? []).some((other) => !sameField(other, field, single));
    return clash && field.qualifier !== undefined ? `${field.qualifier}.${field.name}` : base[i]!;
  });
  const taken = new Set(reserved);
  // the next suffix to try for each name: every one below it is taken already
  const nextSuffix = new Map<string, number>();
  return names.map((name, i) => {
    if (items[i]!.as !== undefined) return name;
    let unique = name;
    let n = nextSuffix.get(name) ?? 2;
    if (taken.has(unique)) {
      for (unique = `${name}_${n}`; taken.has(unique); unique = `${name}_${n}`) n++;
      nextSuffix.set(name, n + 1);
    }
    taken.add(unique);
    return unique;
  });
}

/** An item's own name, before clashes (see `uniqueNames`): a function its name, a cast its operand's, `case` `case`; undefined for another expression. */
export function ownName(value: Expression): string | undefined {
  switch (value.kind) {
    case 'field':
      return value.name;
    case 'bucket':
      return `${value.fn}_${value.field.name}`;
    case 'aggregate':
      if (value.field === undefined) return 'count';
      // an expression's aggregate is named by its function alone, as PostgreSQL names it (`sum(price * qty)` is `sum`)
      if (value.field.kind !== 'field') return value.fn;
      return `${value.fn}_${value.distinct ? 'distinct_' : ''}${value.field.name}`;
    case 'call':
      return value.fn;
    case 'cast':
      return ownName(value.operand);
    case 'case':
      return 'case';
    case 'window':
      return value.call.kind === 'aggregate' ? ownName(value.call) : value.call.fn;
    default:
      return undefined;
  }
}

// ---------------------------------------------------------------- sameness

/**
 * Values kept in `values`, found again by `same`: only among those of the
 * same name (a field's, a bucket's field's, an aggregate's field's), which
 * `same` requires, so a lookup does not walk every value (group by and
 * select lists of thousands of fields plan in linear time).
 */
class SameIndex<V extends Expression> {
  private readonly byName = new Map<string, number[]>();

  constructor(
    private readonly values: V[],
    private readonly same: (a: V, b: V) => boolean,
  ) {}

  /** The index of the first value `same` as `value`, or -1. */
  indexOf(value: V): number {
    for (const i of this.byName.get(nameOf(value)) ?? []) if (this.same(this.values[i]!, value)) return i;
    return -1;
  }

  push(value: V): number {
    const i = this.values.push(value) - 1;
    const name = nameOf(value);
    const list = this.byName.get(name);
    if (list === undefined) this.byName.set(name, [i]);
    else list.push(i);
    return i;
  }
}

/** The field name a value's sameness turns on (none for `count(*)`; one list for every other expression). */
function nameOf(value: Expression): string {
  switch (value.kind) {
    case 'field':
      return value.name;
    case 'bucket':
      return value.field.name;
    case 'aggregate':
      return value.field === undefined ? '' : nameOf(value.field);
    default:
      return '\u0000expression';
  }
}

/**
 * Two fields are the same when their names are and their qualifiers do not
 * differ: an unqualified name matches a qualified one of that name (the
 * fields decide later which resource it is; if they differ, one of the two
 * is unknown or ambiguous there). In a query of one resource the qualifier
 * can only name it.
 */
export function sameField(a: Field, b: Field, single: boolean): boolean {
  return a.name === b.name && (single || a.qualifier === undefined || b.qualifier === undefined || a.qualifier === b.qualifier);
}

function sameValue(a: Expression, b: Expression, same: (a: Field, b: Field) => boolean): boolean {
  if (a.kind === 'field' && b.kind === 'field') return same(a, b);
  if (a.kind === 'bucket' && b.kind === 'bucket') return a.fn === b.fn && a.width?.value === b.width?.value && same(a.field, b.field);
  if (a.kind === 'aggregate' && b.kind === 'aggregate') return sameAggregate(a, b, same);
  // expressions: the same text, spans aside
  if (isComputed(a) && isComputed(b)) return JSON.stringify(a, withoutSpans) === JSON.stringify(b, withoutSpans);
  return false;
}

function withoutSpans(key: string, value: unknown): unknown {
  return key === 'span' ? undefined : value;
}

function sameAggregate(a: Aggregate, b: Aggregate, same: (a: Field, b: Field) => boolean): boolean {
  if (a.fn !== b.fn || (a.distinct === true) !== (b.distinct === true)) return false;
  if (a.field === undefined || b.field === undefined) return a.field === b.field;
  return sameValue(a.field, b.field, same);
}

// ---------------------------------------------------------------- joins, facets, counts

/** Each pair of a join's keys names a field of each side (the one it joins and one before it). */
function checkKeys(join: Join, sources: readonly ShapeSource[]): void {
  const index = sources.findIndex((s) => s.from === join.source);
  for (const pair of join.on) {
    const sides = [pair.left, pair.right].map((field) => (field.qualifier === undefined ? undefined : sources.findIndex((s) => s.qualifier === field.qualifier)));
    if (sides[0] !== undefined && sides[0] === sides[1]) {
      throw queryError('JOIN_KEYS_ONE_SIDE', pair.span, [], {
        hint: `pair a field of ${JSON.stringify(sources[index]!.qualifier)} with one of the resource it joins: on ${sources[0]!.qualifier}.k = ${sources[index]!.qualifier}.k`,
      });
    }
  }
}

function facetsOf(query: Query): FacetSpec[] {
  const taken = new Set<string>();
  return (query.facet?.items ?? []).map((item): FacetSpec => {
    let name = item.field.name;
    for (let n = 2; taken.has(name); n++) name = `${item.field.name}_${n}`;
    taken.add(name);
    const by = item.by === undefined ? undefined : item.by.kind === 'unit' ? { unit: item.by.unit } : { width: item.by.value };
    return { name, span: item.span, field: item.field, ...(by === undefined ? {} : { by }), top: item.top?.value ?? DEFAULT_FACET_TOP };
  });
}

function resourceText(resource: StringValue | { readonly kind: 'param'; readonly span: Span; readonly name: string }): string {
  if (resource.kind === 'param') throw unboundError(resource);
  return resource.value;
}

function countOf(value: NonNullable<Query['limit']>['value'] | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (value.kind === 'param') throw unboundError(value);
  return value.value;
}

/** A condition with each operand replaced. */
export function mapCondition<F extends Operand, G extends Operand>(
  condition: Condition<F>,
  map: (operand: F) => G,
  expression: (value: Expression) => Expression = (value) => mapLeaves(value, (leaf) => (leaf.kind === 'field' || leaf.kind === 'aggregate' ? map(leaf as F) : leaf)),
): Condition<G> {
  switch (condition.kind) {
    case 'eq':
    case 'compare':
    case 'in':
    case 'between':
    case 'like':
    case 'is-null':
      return { ...condition, field: map(condition.field) } as Condition<G>;
    case 'comparison':
      return { ...condition, left: expression(condition.left), right: expression(condition.right) };
    case 'not':
      return { ...condition, condition: mapCondition(condition.condition, map, expression) };
    case 'and':
    case 'or':
      return { ...condition, conditions: condition.conditions.map((c) => mapCondition(c, map, expression)) };
    default:
      return assertNever(condition, 'condition');
  }
}

/** Every field a condition tests (in `where`, over records). */
export function conditionFieldList(condition: Condition | undefined, out: Field[] = []): Field[] {
  if (condition === undefined) return out;
  switch (condition.kind) {
    case 'eq':
    case 'compare':
    case 'in':
    case 'between':
    case 'like':
    case 'is-null':
      out.push(condition.field);
      return out;
    case 'comparison':
      out.push(...expressionFields(condition.left), ...expressionFields(condition.right));
      return out;
    case 'not':
      return conditionFieldList(condition.condition, out);
    case 'and':
    case 'or':
      for (const member of condition.conditions) conditionFieldList(member, out);
      return out;
    default:
      return assertNever(condition, 'condition');
  }
}

// ---------------------------------------------------------------- binding to fields

/** Where a field of the query is: its source and its field info. */
export interface FieldRef {
  readonly side: number;
  readonly info: FieldInfo;
}

/** A shape met with its sources' fields. */
export interface BoundShape {
  readonly shape: Shape;
  /** each source's fields, `_id` first */
  readonly fields: readonly (readonly FieldInfo[])[];
  /** the source and field a field node names */
  ref(field: Field): FieldRef;
  /** the type of a value of the records (a field, a bucket, an expression of them: an aggregate's argument) */
  recordType(value: Expression): FieldType;
  /** the answer's columns and their types */
  readonly columns: readonly BoundColumn[];
  /** the type of each slot of a group's row (grouped only) */
  readonly slotTypes: ReadonlyMap<string, FieldType>;
}

export interface BoundColumn extends Column {
  readonly type: FieldType;
}

/**
 * Meets a shape with the fields of its sources (in the order of
 * `shape.sources`): each field the query names is found (a name no source
 * has is CKAN's Validation Error on `fields`; one that two sources have is
 * AMBIGUOUS_FIELD), and each column typed as PostgreSQL types it.
 * @example
 * bindShape(shapeOf(parse('from courses group by subject select subject, avg(credits)')), [courses.fields]).columns
 * // → [{ name: 'subject', type: 'text', … }, { name: 'avg_credits', type: 'numeric', … }]
 */
export function bindShape(shape: Shape, fields: readonly (readonly FieldInfo[])[]): BoundShape {
  const withId = fields.map((list) => (list.some((f) => f.id === '_id') ? list : [{ id: '_id', type: 'int' as const }, ...list]));
  const byName = withId.map((list) => new Map(list.map((f) => [f.id, f])));
  const cache = new Map<Field, FieldRef>();
  const ref = (field: Field, param = 'fields'): FieldRef => {
    const known = cache.get(field);
    if (known !== undefined) return known;
    let found: FieldRef | undefined;
    if (field.qualifier !== undefined && shape.sources.length > 1) {
      const side = shape.sources.findIndex((s) => s.qualifier === field.qualifier);
      const info = side < 0 ? undefined : byName[side]!.get(field.name);
      if (info !== undefined) found = { side, info };
    } else {
      const sides = byName.flatMap((map, side) => (map.has(field.name) ? [side] : []));
      if (sides.length > 1 && field.name !== '_id') {
        const [a, b] = sides.map((side) => shape.sources[side]!.qualifier);
        throw queryError('AMBIGUOUS_FIELD', field.span, [field.name, a!, b!], {
          found: field.name,
          hint: `qualify it: ${sides.map((side) => `${shape.sources[side]!.qualifier}.${formatField(field.name)}`).join(' or ')}`,
        });
      }
      if (sides.length > 1) {
        throw queryError('AMBIGUOUS_FIELD', field.span, ['_id', shape.sources[sides[0]!]!.qualifier, shape.sources[sides[1]!]!.qualifier], {
          found: '_id',
          hint: `every resource has _id: qualify it, ${shape.sources[sides[0]!]!.qualifier}._id`,
        });
      }
      if (sides.length === 1) found = { side: sides[0]!, info: byName[sides[0]!]!.get(field.name)! };
    }
    if (found === undefined) throw validationError(param, `invalid value ${JSON.stringify(field.name)}`);
    cache.set(field, found);
    return found;
  };
  // Every name the query uses is looked up now, so a wrong one is refused before any record is read,
  // in CKAN's order of parameters: fields, filters, q, sort.
  for (const join of shape.joins) for (const pair of join.on) checkPair(pair.left, pair.right, ref, shape);
  for (const column of shape.columns ?? []) fieldsOfValue(column.value).forEach((f) => ref(f));
  for (const key of shape.keys) fieldsOfValue(key).forEach((f) => ref(f));
  for (const aggregate of shape.aggregates) fieldsOfValue(aggregate).forEach((f) => ref(f));
  for (const f of conditionFieldList(shape.query.where?.condition)) ref(f, 'filters');
  for (const f of shape.query.search?.fields ?? []) ref(f.field, 'q');
  for (const key of shape.order) if (key.by.kind === 'value') fieldsOfValue(key.by.value).forEach((f) => ref(f, 'sort'));
  for (const facet of shape.facets) ref(facet.field);

  const slotTypes = new Map<string, FieldType>();
  // An aggregate's argument is read over the records: a field as it is, an expression typed by its fields (never by slots).
  const recordType = (value: Expression): FieldType => {
    if (value.kind === 'field') return ref(value).info.type;
    if (value.kind === 'bucket') return bucketType(value, ref(value.field).info);
    return fieldTypeOf(expressionType(value, (leaf) => valueTypeOf(recordType(leaf))));
  };
  const argumentInfo = (argument: Expression): FieldInfo => (argument.kind === 'field' ? ref(argument).info : { id: valueText(argument), type: recordType(argument) });
  const leafType = (value: Expression): FieldType => {
    switch (value.kind) {
      case 'field':
        return slotTypes.get(value.name) ?? ref(value).info.type;
      case 'bucket':
        return bucketType(value, ref(value.field).info);
      case 'aggregate':
        return aggregateType(value, value.field === undefined ? undefined : argumentInfo(value.field));
      default:
        return fieldTypeOf(expressionType(value, (leaf) => valueTypeOf(leafType(leaf))));
    }
  };
  // a field of the records (a slot's name is none, so slots are typed by the map, the records by ref)
  const typeOf = (value: Expression): FieldType => {
    if (value.kind === 'field') return ref(value).info.type;
    return leafType(value);
  };
  shape.keys.forEach((key, i) => slotTypes.set(keySlot(i), typeOf(key)));
  shape.aggregates.forEach((aggregate, i) => slotTypes.set(aggregateSlot(i), typeOf(aggregate)));
  shape.computed.forEach((over, i) => slotTypes.set(computedSlot(i), leafType(over)));
  for (const facet of shape.facets) checkFacet(facet, ref(facet.field).info);
  const typed: BoundColumn[] | undefined = shape.columns?.map((column) => ({ ...column, type: column.slot !== undefined ? slotTypes.get(column.slot)! : typeOf(column.value) }));
  const columns: BoundColumn[] = typed === undefined ? everyField(shape, withId) : shape.star === undefined ? typed : withStar(shape, typed, everyField(shape, withId), ref);
  return { shape, fields: withId, ref: (field) => ref(field), recordType, columns, slotTypes };
}

function checkPair(left: Field, right: Field, ref: (field: Field) => FieldRef, shape: Shape): void {
  const a = ref(left);
  const b = ref(right);
  if (a.side === b.side) {
    throw queryError('JOIN_KEYS_ONE_SIDE', { start: left.span.start, end: right.span.end }, [], {
      hint: `qualify the keys by the resources they join: on ${shape.sources[0]!.qualifier}.k = ${shape.sources[1]!.qualifier}.k`,
    });
  }
}

/**
 * The columns of `select *, …` (docs/expressions.md): the fields where the
 * `*` stands, the items around them. A field selected as it is as well is
 * one column, where it first stands (as `select a, a` is); an `as` name a
 * field has is DUPLICATE_NAME; an item's own name (`lower`, `expr_1`) that a
 * field has gets `_2`, `_3`, … as two items' names do.
 */
function withStar(shape: Shape, typed: readonly BoundColumn[], fields: readonly BoundColumn[], ref: (field: Field) => FieldRef): BoundColumn[] {
  const at = shape.star!.at;
  const explicit = new Set((shape.query.select?.items ?? []).flatMap((item) => (item.as === undefined ? [] : [item.as.name])));
  const key = (field: Field): string => {
    const { side, info } = ref(field);
    return `${side}\u0000${info.id}`;
  };
  const plainKey = (column: BoundColumn): string | undefined => (column.value.kind === 'field' && !explicit.has(column.name) ? key(column.value) : undefined);
  const before = typed.slice(0, at);
  const beforeKeys = new Set(before.map(plainKey));
  const star = fields.filter((column) => !beforeKeys.has(key(column.value as Field)));
  const starKeys = new Set(fields.map((column) => key(column.value as Field)));
  const after = typed.slice(at).filter((column) => {
    const plain = plainKey(column);
    return plain === undefined || !starKeys.has(plain);
  });
  const starNames = new Set(star.map((column) => column.name));
  const taken = new Set([...before, ...star, ...after].map((column) => column.name));
  const rename = (column: BoundColumn): BoundColumn => {
    if (!starNames.has(column.name)) return column;
    if (explicit.has(column.name)) {
      throw queryError('DUPLICATE_NAME', column.span, [column.name], { found: column.name, hint: `* gives the field ${JSON.stringify(column.name)} already: give the item another name` });
    }
    let n = 2;
    while (taken.has(`${column.name}_${n}`)) n++;
    taken.add(`${column.name}_${n}`);
    return { ...column, name: `${column.name}_${n}` };
  };
  return [...before.map(rename), ...star, ...after.map(rename)];
}

/** An ungrouped join without select: every field of every source, `_id` of each too, named `alias.field` where names meet. */
function everyField(shape: Shape, fields: readonly (readonly FieldInfo[])[]): BoundColumn[] {
  const all = fields.flatMap((list, side) =>
    list.map((info) => ({ side, info, field: { kind: 'field' as const, span: shape.sources[side]!.from.span, name: info.id, qualifier: shape.sources[side]!.qualifier } })),
  );
  const count = new Map<string, number>();
  for (const { info } of all) count.set(info.id, (count.get(info.id) ?? 0) + 1);
  return all.map(({ info, field }) => ({
    name: (count.get(info.id) ?? 0) > 1 ? `${field.qualifier}.${info.id}` : info.id,
    span: field.span,
    value: field,
    type: info.type,
  }));
}

/** The fields a value reads. */
export function fieldsOfValue(value: Expression): Field[] {
  return expressionFields(value);
}

const DATE_TYPES: ReadonlySet<string> = new Set(['date', 'timestamp', 'text']);

/**
 * The type of a bucket: a date bucket is the `timestamp` its period starts
 * at (`date_trunc`); `bucket(f, w)` is `numeric`. A date bucket takes a
 * date, a timestamp or text (read as a timestamp, as `::timestamp` reads
 * it); a width bucket a number.
 */
export function bucketType(bucket: Bucket, info: FieldInfo): FieldType {
  if (bucket.fn === 'bucket') {
    if (!isNumberType(info.type)) throw bucketRefusal(bucket, info, 'a number');
    return 'numeric';
  }
  if (!DATE_TYPES.has(info.type)) throw bucketRefusal(bucket, info, 'a date, timestamp or text');
  return 'timestamp';
}

function bucketRefusal(bucket: Bucket, info: FieldInfo, wanted: string): Error {
  return queryError('BUCKET_NEEDS_TYPE', bucket.span, [bucket.fn, info.id, info.type, wanted], {
    hint: bucket.fn === 'bucket' ? 'bucket(f, width) groups numbers; for dates use year(f), month(f), week(f) or day(f)' : 'year(), month(), week() and day() group dates; for numbers use bucket(f, width)',
  });
}

/**
 * The type of an aggregate, as PostgreSQL gives it: `count` is `int8`;
 * `sum` of an integer `int8` (`numeric` for `int8`), of `numeric` `numeric`,
 * of `float8` `float8`; `avg` `numeric` (`float8` for `float8`); `min` and
 * `max` the field's type. `sum` and `avg` need a number field.
 */
export function aggregateType(aggregate: Aggregate, info: FieldInfo | undefined): FieldType {
  if (aggregate.fn === 'count') return 'int8';
  if (info === undefined) throw new Error(`${aggregate.fn} without a field`);
  if (aggregate.fn === 'min' || aggregate.fn === 'max') {
    if (info.type === 'json' || info.type.startsWith('_')) {
      throw queryError('AGGREGATE_NEEDS_NUMBER', aggregate.span, [aggregate.fn, info.id, info.type], { hint: 'min and max need values with an order: numbers, text, dates, booleans' });
    }
    return info.type;
  }
  if (!isNumberType(info.type)) {
    throw queryError('AGGREGATE_NEEDS_NUMBER', aggregate.span, [aggregate.fn, info.id, info.type], {
      hint: `count it instead: count(${valueText(aggregate.field!)}), count(distinct ${valueText(aggregate.field!)})`,
    });
  }
  const float = info.type === 'float8' || info.type === 'float';
  if (aggregate.fn === 'avg') return float ? 'float8' : 'numeric';
  if (float) return 'float8';
  return info.type === 'int8' || info.type === 'numeric' ? 'numeric' : 'int8';
}

function checkFacet(facet: FacetSpec, info: FieldInfo): void {
  if (facet.by === undefined) return;
  if ('unit' in facet.by && !DATE_TYPES.has(info.type)) {
    throw queryError('BUCKET_NEEDS_TYPE', facet.span, [facet.by.unit, info.id, info.type, 'a date, timestamp or text'], { hint: 'facet a number field by a width: facet credits by 2.5' });
  }
  if ('width' in facet.by && !isNumberType(info.type)) {
    throw queryError('BUCKET_NEEDS_TYPE', facet.span, ['bucket', info.id, info.type, 'a number'], { hint: 'facet a date field by a unit: facet start_date by month' });
  }
}

/**
 * The `where` of a join split by side, as every engine counts a join
 * before it runs: `ofSide[s]` the members naming only side `s`'s fields
 * (each side's own scan keeps its rows by them), `across` the rest (tested
 * over the joined rows): members naming several sides, members on a
 * left-joined side (its missing rows are tested as nulls), and comparisons
 * of expressions.
 */
export function sideConditions(shape: Shape, bound: BoundShape): { readonly ofSide: Condition[][]; readonly across: Condition[] } {
  const optional = new Set(shape.joins.flatMap((join, j) => (join.left ? [j + 1] : [])));
  const where = shape.query.where?.condition;
  const members = where === undefined ? [] : where.kind === 'and' ? where.conditions : [where];
  const ofSide: Condition[][] = shape.sources.map(() => []);
  const across: Condition[] = [];
  for (const member of members) {
    const sides = new Set(conditionFieldList(member).map((field) => bound.ref(field).side));
    const [side] = [...sides];
    if (sides.size === 1 && side !== undefined && !optional.has(side) && !hasComparison(member)) ofSide[side]!.push(member);
    else across.push(member);
  }
  return { ofSide, across };
}

/** Side `side`'s part of a join's search: the whole-record text searches the first resource; a field's text, its resource. */
export function sideSearch(shape: Shape, bound: BoundShape, side: number): Query['search'] {
  const search = shape.query.search;
  if (search === undefined) return undefined;
  if (search.fields === undefined) return side === 0 ? search : undefined;
  const fields = search.fields.filter((f) => bound.ref(f.field).side === side);
  return fields.length === 0 ? undefined : { ...search, fields };
}

/**
 * Windows and `qualify` (docs/expressions.md): a query with windows is its
 * query without them (the inner query, which every engine and target already
 * answers), then one step over the inner query's rows: the windows, then
 * `qualify`, `order by`, `offset` and `limit`, then the visible columns.
 *
 * The inner query selects every column of the answer that is no window, and
 * hidden columns (`_ckql_0`, `_ckql_1`, …) for what the step reads that no
 * column of the answer holds: a window's argument, partition and order
 * keys, a key of `order by` or a field `qualify` tests. So the step works
 * over named columns only, and is written the same on every engine: SQL
 * over a subquery (`windowSql`), the executor's `window` operator and the
 * memory engine over rows (engine/memory/window.ts).
 */
import type { Aggregate, Condition, Expression, Field, Query, SelectItem, SortDirection, Window } from '../ast.js';
import { assertNever } from '../ast.js';
import type { FieldInfo, FieldType } from '../datastore/types.js';
import { queryError } from '../errors.js';
import { expressionText } from '../format.js';
import type { Span } from '../span.js';
import { firstWindow, hasWindow, mapConditionLeaves } from '../syntax/expressions.js';
import { aggregateType, namedItems } from './shape.js';
import { conditionSql, identifier, TOTAL_COLUMN } from './sql.js';
import type { LiteralWriter } from './sql.js';
import { unboundError } from './dict-filters.js';

/** A key of a window's order or of the step's `order by`: a column of the inner query's rows (or a window's). */
export interface ColumnKey {
  readonly column: string;
  readonly direction: SortDirection;
  /** absent: nulls last ascending, first descending */
  readonly nulls?: 'first' | 'last';
}

/** One window, over the inner query's columns. */
export interface WindowSpec {
  /** the column it gives */
  readonly column: string;
  readonly window: Window;
  /** the column of its argument: lag's and lead's value, an aggregate's field; absent for the rankings and `count(*)` */
  readonly argument?: string;
  /** lag's and lead's offset (1 unless given) */
  readonly offset: number;
  readonly partition: readonly string[];
  readonly order: readonly ColumnKey[];
}

/** The step after the inner query. */
export interface WindowStep {
  /** the query without its windows, qualify, order, offset and limit; its select names every column it gives */
  readonly inner: Query;
  readonly windows: readonly WindowSpec[];
  /** qualify, its fields naming columns of the rows with their windows */
  readonly qualify?: Condition;
  readonly order: readonly ColumnKey[];
  /** the columns of the answer, in order */
  readonly columns: readonly string[];
  readonly offset: number;
  /** undefined: none given */
  readonly limit: number | undefined;
}

/** The prefix of the hidden columns: no name a query gives begins so (NOT_COMPUTED_YET refuses one that does). */
const HIDDEN = '_ckql_';

/**
 * The step of a query with windows (undefined for one without): its inner
 * query and what is done over its rows. Refuses what the step does not
 * compute yet, at its span.
 * @example
 * windowStep(parse('from g select s, row_number() over (partition by s order by x desc) as r qualify r <= 3'))
 * // inner: from g select s as s, x as _ckql_0; windows: [r: row_number over (s) by _ckql_0 desc]; qualify: r <= 3
 */
export function windowStep(query: Query): WindowStep | undefined {
  if (!hasWindow(query)) return undefined;
  const notYet = (what: string, span: Span, hint: string): never => {
    throw queryError('NOT_COMPUTED_YET', span, [what, 'ckql'], { hint });
  };
  if (query.select === undefined) notYet('a window without select', query.qualify?.span ?? query.span, 'list the columns: select a, b, row_number() over (…) as r');
  if (query.select!.distinct === true) notYet('select distinct with a window', query.select!.span, 'leave out "distinct", or group by the columns');
  if (query.facet !== undefined) notYet('facet with a window', query.facet.span, 'run the facets in a query of their own');
  const star = query.select!.items.find((item) => item.value.kind === 'star');
  if (star !== undefined) notYet('"select *" beside a window', star.span, 'list the fields: select a, b, row_number() over (…) as r');

  const items: SelectItem[] = [];
  const hidden = new Map<string, string>();
  // A column of the inner query that holds a value the step reads (one per value).
  let count = 0;
  const hiddenColumn = (value: Expression): string => {
    const key = valueKey(value);
    let name = hidden.get(key);
    if (name === undefined) {
      name = `${HIDDEN}${count++}`;
      hidden.set(key, name);
      items.push({ kind: 'select-item', span: value.span, value, as: { kind: 'name', span: value.span, name } });
    }
    return name;
  };
  const windows: WindowSpec[] = [];
  const windowColumn = (window: Window, column?: string): string => {
    const known = windows.find((w) => sameWindow(w.window, window));
    if (known !== undefined && column === undefined) return known.column;
    const call = window.call;
    const argument = call.kind === 'aggregate' ? call.field : call.args[0];
    const offset = call.kind === 'window-call' ? call.args[1] : undefined;
    if (offset?.kind === 'param') throw unboundError(offset);
    const spec: WindowSpec = {
      column: column ?? `${HIDDEN}w${windows.length}`,
      window,
      ...(argument === undefined ? {} : { argument: hiddenColumn(argument) }),
      offset: offset?.kind === 'number' ? offset.value : 1,
      partition: window.partition.map(hiddenColumn),
      order: window.order.map((key) => columnKey(hiddenColumn(key.field), key)),
    };
    windows.push(spec);
    return spec.column;
  };

  const columns: string[] = [];
  const named = namedItems(query);
  // The answer's columns first: a value the step reads that one of them holds is read from it, not copied.
  for (const { item, name } of named) {
    if (name.startsWith(HIDDEN)) notYet(`the name ${JSON.stringify(name)}`, item.span, `a column of a query with windows is not named "${HIDDEN}…": rename it`);
    const value = item.value as Expression;
    columns.push(name);
    if (value.kind === 'window') continue;
    const inner = firstWindow(value);
    if (inner !== undefined) notYet('a window inside an expression', inner.span, `name the window in select and compute over the name in a query of this one; or select ${expressionText(inner)} as its own column`);
    items.push({ kind: 'select-item', span: item.span, value, as: { kind: 'name', span: item.as?.span ?? item.span, name } });
    const key = valueKey(value);
    if (!hidden.has(key)) hidden.set(key, name);
  }
  for (const { item, name } of named) if (item.value.kind === 'window') windowColumn(item.value, name);
  // A name of the answer, or (not one) a value of the inner query's rows in a column of its own.
  const columnOf = (value: Expression): string => {
    if (value.kind === 'field' && value.qualifier === undefined && columns.includes(value.name)) return value.name;
    if (value.kind === 'window') return windowColumn(value);
    const inner = firstWindow(value);
    if (inner !== undefined) notYet('a window inside an expression', inner.span, 'name the window in select and test or sort by the name');
    return hiddenColumn(value);
  };
  const field = (name: string, span: Span): Field => ({ kind: 'field', span, name });
  const qualify =
    query.qualify === undefined
      ? undefined
      : mapConditionLeaves(query.qualify.condition, (leaf) => (leaf.kind === 'field' || leaf.kind === 'window' ? field(columnOf(leaf), leaf.span) : leaf));
  const order = (query.order?.keys ?? []).map((key) => columnKey(columnOf(key.field), key));

  const { qualify: _qualify, order: _order, limit: _limit, offset: _offset, ...rest } = query;
  const inner: Query = { ...rest, select: { kind: 'select', span: query.select!.span, items } };
  return {
    inner,
    windows,
    ...(qualify === undefined ? {} : { qualify: qualify as Condition }),
    order,
    columns,
    offset: countOf(query.offset?.value) ?? 0,
    limit: countOf(query.limit?.value),
  };
}

function columnKey(column: string, key: { readonly direction: SortDirection; readonly nulls?: 'first' | 'last' }): ColumnKey {
  return key.nulls === undefined ? { column, direction: key.direction } : { column, direction: key.direction, nulls: key.nulls };
}

/** A value's text without its spans: equal values, one key. */
function valueKey(value: Expression): string {
  return JSON.stringify(value, (k, v: unknown) => (k === 'span' ? undefined : v));
}

function sameWindow(a: Window, b: Window): boolean {
  const text = (w: Window): string => JSON.stringify(w, (k, v: unknown) => (k === 'span' ? undefined : v));
  return text(a) === text(b);
}

function countOf(value: NonNullable<Query['limit']>['value'] | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (value.kind === 'param') throw unboundError(value);
  return value.value;
}

/**
 * The type of a window's column, by PostgreSQL's rules: the rankings
 * `int8`, lag and lead their argument's type, an aggregate its type over
 * its argument (`aggregateType`).
 */
export function windowType(spec: WindowSpec, fields: readonly FieldInfo[]): FieldType {
  const call = spec.window.call;
  const argument = spec.argument === undefined ? undefined : fields.find((f) => f.id === spec.argument);
  if (call.kind === 'aggregate') return aggregateType(call, argument === undefined ? undefined : { ...argument, id: call.field === undefined ? argument.id : call.field.kind === 'field' ? call.field.name : expressionText(call.field) });
  switch (call.fn) {
    case 'row_number':
    case 'rank':
    case 'dense_rank':
      return 'int8';
    case 'lag':
    case 'lead':
      return argument?.type ?? 'text';
    default:
      return assertNever(call, 'window function');
  }
}

/** The fields of the step's answer: the inner query's, and each window's by `windowType`, in the answer's order. */
export function windowFields(step: WindowStep, inner: readonly FieldInfo[]): FieldInfo[] {
  const all = windowedFields(step, inner);
  return step.columns.map((name) => all.find((f) => f.id === name)!);
}

/** The inner query's fields and each window's column: what `qualify` and `order by` read. */
export function windowedFields(step: WindowStep, inner: readonly FieldInfo[]): FieldInfo[] {
  return [...inner, ...step.windows.map((spec) => ({ id: spec.column, type: windowType(spec, inner) }))];
}

/** A window's call as SQL over the inner query's columns. */
function windowCallSql(spec: WindowSpec): string {
  const call = spec.window.call;
  const argument = spec.argument === undefined ? '*' : identifier(spec.argument);
  if (call.kind === 'aggregate') return `${(call as Aggregate).fn}(${argument})`;
  switch (call.fn) {
    case 'row_number':
    case 'rank':
    case 'dense_rank':
      return `${call.fn}()`;
    case 'lag':
    case 'lead':
      return `${call.fn}(${argument}, ${spec.offset})`;
    default:
      return assertNever(call, 'window function');
  }
}

function keySql(key: ColumnKey): string {
  return `${identifier(key.column)}${key.direction === 'desc' ? ' DESC' : ''}${key.nulls === undefined ? '' : ` NULLS ${key.nulls.toUpperCase()}`}`;
}

/** A window as SQL: `row_number() OVER (PARTITION BY "_ckql_0" ORDER BY "_ckql_1" DESC, "_ckql_n")` (the inner order last: its ties come in it). */
export function windowSpecSql(spec: WindowSpec): string {
  // row_number, lag and lead give each row its own value: ties of the window's order come in the inner order,
  // as the memory engine's stable sort gives them (rank and the aggregates give peers one value, so need no tie order).
  const call = spec.window.call;
  const ordered = call.kind !== 'aggregate' && (call.fn === 'row_number' || call.fn === 'lag' || call.fn === 'lead');
  const order = [...spec.order.map(keySql), ...(ordered ? [identifier(POSITION_COLUMN)] : [])];
  const parts = [
    ...(spec.partition.length === 0 ? [] : [`PARTITION BY ${spec.partition.map(identifier).join(', ')}`]),
    ...(order.length === 0 ? [] : [`ORDER BY ${order.join(', ')}`]),
  ];
  return `${windowCallSql(spec)} OVER (${parts.join(' ')})`;
}

/** The column that keeps the inner query's order: ties of `order by` (and an answer without one) come in it. */
export const POSITION_COLUMN = '_ckql_n';

/**
 * The step as one statement over the inner query's (`innerSql`, written
 * with its order and without a page): the inner rows numbered in their
 * order, the windows over them, `qualify` as a `WHERE` over that, then the
 * answer's columns in `order by`'s order (ties in the inner order), and the
 * page. `total`: `count(*) OVER ()` of the rows qualify keeps.
 * @example
 * windowSql(step, 'SELECT … FROM "g" AS "g" ORDER BY "g"."_id"', literal, { total: false, page: ' LIMIT 100' })
 * // SELECT "s" AS "s", "r" AS "r" FROM (SELECT *, row_number() OVER (PARTITION BY "_ckql_0" ORDER BY "_ckql_1" DESC, "_ckql_n") AS "r"
 * //   FROM (SELECT row_number() OVER () AS "_ckql_n", _ckql_i.* FROM (…) AS _ckql_i) AS _ckql_p) AS _ckql_w
 * // WHERE "r" <= '3' ORDER BY "_ckql_n" LIMIT 100
 */
export function windowSql(step: WindowStep, innerSql: string, literal: LiteralWriter, options: { readonly total: boolean; readonly page: string }): string {
  const numbered = `SELECT row_number() OVER () AS ${identifier(POSITION_COLUMN)}, _ckql_i.* FROM (${innerSql}) AS _ckql_i`;
  const windows = step.windows.map((spec) => `${windowSpecSql(spec)} AS ${identifier(spec.column)}`);
  const withWindows = `SELECT *, ${windows.join(', ')} FROM (${numbered}) AS _ckql_p`;
  const where = step.qualify === undefined ? '' : ` WHERE ${conditionSql(step.qualify, literal, (f) => identifier((f as Field).name))}`;
  const total = options.total ? `, count(*) OVER () AS ${identifier(TOTAL_COLUMN)}` : '';
  const order = [...step.order.map(keySql), identifier(POSITION_COLUMN)].join(', ');
  return `SELECT ${step.columns.map((c) => `${identifier(c)} AS ${identifier(c)}`).join(', ')}${total} FROM (${withWindows}) AS _ckql_w${where} ORDER BY ${order}${options.page}`;
}

/**
 * Grouped, joined and faceted queries as SQL (docs/aggregates.md): one
 * `SELECT … FROM … JOIN … WHERE … GROUP BY … HAVING … ORDER BY … LIMIT`,
 * with `count(*) OVER ()` for the total, and the facets of a query as one
 * statement, a `UNION ALL` of a group per facet.
 *
 * Written to pass CKAN's checks of `datastore_search_sql`
 * (docs/ckan-2.11-reference.md, docs/aggregates-reference.md §3):
 * only functions on its allow-list (`count sum avg min max date_trunc floor
 * to_char`; casts as `::`, never `cast(`), every column named with `AS`
 * (CKAN keeps one of two equal names), expressions, not output names, in
 * `GROUP BY`, `HAVING` and `ORDER BY` (PostgreSQL refuses names there), and
 * every `:` of a literal or name as `\:` (through `stringLiteral`).
 */
import type { Aggregate, Bucket, Condition, Expression, Field, Operand, Query } from '../ast.js';
import type { FacetResult, Facets, FieldType, JsonValue } from '../datastore/types.js';
import { decimalOf, decimalValue } from '../datastore/decimal.js';
import { isNumberType } from '../datastore/values.js';

import { queryError } from '../errors.js';
import { conditionSql, DEFAULT_LIMIT, identifier, MAX_LIMIT, stringLiteral, TOTAL_COLUMN, whereSql } from './sql.js';
import type { FieldSql, LiteralWriter, SqlRequest } from './sql.js';
import { expressionSql } from './sql-expression.js';
import { MEMBER_COLUMN } from './union.js';
import type { UnionTable } from './union.js';
import { keySlot, shapeOf, sideConditions, sideSearch } from './shape.js';
import type { BoundShape, FacetSpec, Shape } from './shape.js';

/** How the SQL is written for its reader: CKAN (quoted literals), or an engine (bound parameters, its own tables). */
export interface ShapedSqlOptions {
  /** writes a text value: a quoted literal for CKAN, a `$n` parameter for an engine */
  readonly literal: LiteralWriter;
  /** the table of a resource: CKAN names it by the resource id (or alias) */
  readonly table: (resource: string) => string;
  /** the shape met with its fields, when they are known: join keys of different types compare as text, and a join without select lists every field */
  readonly bound?: BoundShape;
  /** count every row of the answer in each row (`count(*) OVER ()` as `_ckql_total`) */
  readonly total: boolean;
  /** write the query's `LIMIT` and `OFFSET` (default); an engine pages itself */
  readonly page?: boolean;
  /** an engine's formatting of a column's value (a timestamp as CKAN writes it); default the value */
  readonly column?: (sql: string, field: Field | undefined) => string;
  /** a union source's resources with their fields, by side (compile/union.ts); the SQL names every column of a union */
  readonly unions?: readonly (UnionTable | undefined)[];
}

/**
 * The table a side reads: its resource's, or a union's statement.
 * @example sourceTable(shapeOf(parse('from a union b')), 0, options) // (SELECT … FROM "a" UNION ALL SELECT … FROM "b")
 */
export function sourceTable(shape: Shape, side: number, options: Pick<ShapedSqlOptions, 'table' | 'literal' | 'unions'>): string {
  const source = shape.sources[side]!;
  if (source.union === undefined) return options.table(source.resource);
  const members = options.unions?.[side];
  if (members === undefined) {
    throw queryError('TARGET_CANNOT_EXPRESS', source.from.span, ['a union of unknown fields', 'sql'], {
      hint: 'its SQL names each resource\'s columns: run it, and ckql reads their fields first',
    });
  }
  return members(options.literal);
}

/**
 * The `SELECT` of a shaped query for `datastore_search_sql`.
 * @example
 * shapedSqlRequest(parse('from courses group by subject select subject, count(*) as n having n > 3 order by n desc limit 10')).sql
 * // SELECT "courses"."subject" AS "subject", count(*) AS "n", count(*) OVER () AS "_ckql_total" FROM "courses" AS "courses"
 * // GROUP BY "courses"."subject" HAVING count(*) > '3' ORDER BY count(*) DESC, "courses"."subject" LIMIT 10
 */
export function shapedSqlRequest(query: Query, bound?: BoundShape, unions?: ShapedSqlOptions['unions']): SqlRequest {
  return { sql: shapedSql(shapeOf(query), { literal: stringLiteral, table: identifier, total: true, ...(bound === undefined ? {} : { bound }), ...(unions === undefined ? {} : { unions }) }) };
}

/**
 * The parts every statement of a shape shares: FROM with its joins, and how
 * a field is written; `joins`: only the first that many joins; `sideTable`:
 * what each side reads (default its resource's table).
 */
function fromClause(
  shape: Shape,
  options: ShapedSqlOptions,
  joins = shape.joins.length,
  sideTable = (side: number): string => sourceTable(shape, side, options),
): { from: string; field: (field: Field) => string; keyPair: (left: Field, right: Field) => [string, string] } {
  const qualifier = (side: number): string => identifier(shape.sources[side]!.qualifier);
  const sideOf = (field: Field): number | undefined => {
    if (options.bound !== undefined) return options.bound.ref(field).side;
    if (shape.sources.length === 1) return 0;
    if (field.qualifier === undefined) return undefined;
    const side = shape.sources.findIndex((s) => s.qualifier === field.qualifier);
    return side < 0 ? undefined : side;
  };
  // Unqualified in a join whose fields are not known here: which table has it is the portal's to say, so it is refused
  // (the client reads each resource's fields first, and plans with them: bindShape qualifies it or says AMBIGUOUS_FIELD).
  const field = (f: Field): string => {
    const side = sideOf(f);
    if (side === undefined) {
      const names = shape.sources.map((s) => `${s.qualifier}.${f.name}`).join(' or ');
      throw queryError('UNQUALIFIED_FIELD', f.span, [f.name], {
        found: f.name,
        hint: `qualify it: ${names}; a query run against the portal is qualified by ckql, which reads each resource's fields first`,
      });
    }
    return `${qualifier(side)}.${identifier(f.name)}`;
  };
  // Keys compare by canonical text: columns of different types meet as text; of one type, as they are (an index serves).
  const keyPair = (left: Field, right: Field): [string, string] => {
    const types = options.bound === undefined ? undefined : [left, right].map((f) => options.bound!.ref(f).info.type);
    return types !== undefined && types[0] !== types[1] ? [`${field(left)}::text`, `${field(right)}::text`] : [field(left), field(right)];
  };
  let from = `${sideTable(0)} AS ${qualifier(0)}`;
  shape.joins.slice(0, joins).forEach((join, j) => {
    const on = join.on.map((pair) => keyPair(pair.left, pair.right).join(' = '));
    from += ` ${join.left ? 'LEFT JOIN' : 'JOIN'} ${sideTable(j + 1)} AS ${qualifier(j + 1)} ON ${on.join(' AND ')}`;
  });
  return { from, field, keyPair };
}

/** The columns of `joinCountSql`'s statements. */
export const JOIN_COUNT_COLUMNS = { rows: 'rows', earlier: 'earlier', joined: 'joined' } as const;

/**
 * The statement that counts the rows join `j` (0: the first) gives before
 * it runs, exactly as the memory engine counts them (engine/memory/shaped.ts):
 * each side kept by its own conditions and search (`sideConditions`), the
 * conditions across sides not yet tested. Per key, the rows the earlier
 * sides give (joined as the query joins them: at most the bound, as join
 * `j - 1` was counted first) times the joined side's rows; a left join adds
 * the earlier rows no key met. Its one row: `rows`, and the rows of each
 * side (`earlier`, `joined`). With `top`: instead the three keys that
 * multiply the most (`k0`… as text), with each side's rows of the key.
 * @example
 * // from e a join e b on a.status = b.status, j = 0:
 * // WITH _ckql_a AS (SELECT "a"."status" AS "k0", count(*) AS n FROM (SELECT * FROM "e" AS "a") AS "a" GROUP BY "a"."status"), _ckql_b AS (…)
 * // SELECT (SELECT coalesce(sum(_ckql_a.n * _ckql_b.n), 0) FROM _ckql_a JOIN _ckql_b ON _ckql_a."k0" = _ckql_b."k0") AS "rows", …
 */
export function joinCountSql(shape: Shape, j: number, options: ShapedSqlOptions & { readonly bound: BoundShape }, top: boolean): string {
  const bound = options.bound;
  const { ofSide } = sideConditions(shape, bound);
  const sideTable = (side: number): string => {
    const q = identifier(shape.sources[side]!.qualifier);
    const conditions = ofSide[side]!;
    const [first] = conditions;
    const condition: Condition | undefined = conditions.length > 1 ? { kind: 'and', span: shape.query.span, conditions } : first;
    const search = sideSearch(shape, bound, side);
    const { where: _where, search: _search, ...rest } = shape.query;
    const own: Query = { ...rest, ...(condition === undefined ? {} : { where: { kind: 'where', span: condition.span, condition } }), ...(search === undefined ? {} : { search }) };
    const operand: FieldSql = (o) => {
      if (o.kind !== 'field') throw new Error('an aggregate in where');
      return `${q}.${identifier(o.name)}`;
    };
    const where = whereSql(own, options.literal, operand, `${q}."_full_text"`);
    return `(SELECT * FROM ${sourceTable(shape, side, options)} AS ${q}${where === undefined ? '' : ` WHERE ${where}`})`;
  };
  const { from, keyPair } = fromClause(shape, options, j, sideTable);
  const join = shape.joins[j]!;
  // Each pair as (the earlier side's key, the joined side's key).
  const pairs = join.on.map((pair) => (bound.ref(pair.left).side === j + 1 ? keyPair(pair.right, pair.left) : keyPair(pair.left, pair.right)));
  const k = (i: number): string => identifier(`k${i}`);
  const grouped = (keys: readonly string[], source: string): string =>
    `SELECT ${keys.map((key, i) => `${key} AS ${k(i)}`).join(', ')}, count(*) AS n FROM ${source} GROUP BY ${keys.join(', ')}`;
  const joinedSide = `${sideTable(j + 1)} AS ${identifier(shape.sources[j + 1]!.qualifier)}`;
  const withs = `WITH _ckql_a AS (${grouped(pairs.map((p) => p[0]), from)}), _ckql_b AS (${grouped(pairs.map((p) => p[1]), joinedSide)})`;
  const on = pairs.map((_, i) => `_ckql_a.${k(i)} = _ckql_b.${k(i)}`).join(' AND ');
  const c = JOIN_COUNT_COLUMNS;
  if (top) {
    const keys = pairs.map((_, i) => `_ckql_a.${k(i)}::text AS ${k(i)}`).join(', ');
    return `${withs} SELECT ${keys}, _ckql_a.n AS ${identifier(c.earlier)}, _ckql_b.n AS ${identifier(c.joined)} FROM _ckql_a JOIN _ckql_b ON ${on} ORDER BY _ckql_a.n * _ckql_b.n DESC, ${pairs.map((_, i) => `_ckql_a.${k(i)}`).join(', ')} LIMIT 3`;
  }
  const pairsOf = join.left ? `sum(_ckql_a.n * coalesce(_ckql_b.n, 1)), 0) FROM _ckql_a LEFT JOIN _ckql_b` : `sum(_ckql_a.n * _ckql_b.n), 0) FROM _ckql_a JOIN _ckql_b`;
  return `${withs} SELECT (SELECT coalesce(${pairsOf} ON ${on}) AS ${identifier(c.rows)}, (SELECT coalesce(sum(n), 0) FROM _ckql_a) AS ${identifier(c.earlier)}, (SELECT coalesce(sum(n), 0) FROM _ckql_b) AS ${identifier(c.joined)}`;
}

/** The shape's `where` and `search` as one condition; each call writes its values anew (an engine binds each use). */
function whereClause(shape: Shape, options: ShapedSqlOptions, field: (field: Field) => string): string | undefined {
  const operand: FieldSql = (o) => {
    if (o.kind !== 'field') throw new Error('an aggregate in where');
    return field(o);
  };
  return whereSql(shape.query, options.literal, operand, `${identifier(shape.sources[0]!.qualifier)}."_full_text"`);
}

/** A bucket as SQL: `date_trunc` of the value read as a timestamp, or `floor(f / w) * w` in numeric. */
function bucketSql(bucket: Bucket, field: (field: Field) => string): string {
  if (bucket.fn === 'bucket') {
    const width = String(bucket.width!.value);
    // In parentheses: a cast after it (`::text`) must apply to the product, not to the width.
    return `(floor(${field(bucket.field)}::numeric / ${width}) * ${width})`;
  }
  return `date_trunc('${bucket.fn}', ${field(bucket.field)}::timestamp)`;
}

/**
 * An aggregate as SQL. PostgreSQL has no `min`/`max` of booleans; where the
 * field is known to be one (an engine's own tables, or a portal's whose
 * fields the client read) they are `bool_and` and `bool_or`, which order
 * false before true as the memory engine does. Where the type is not known
 * (`ckql compile --target sql`), `min`/`max` of a one-element array of each
 * non-null value, then its element: PostgreSQL orders arrays by their
 * elements for every type that has an order, booleans included, and
 * `ARRAY[…]` and `[1]` are syntax, not functions CKAN's allow-list checks.
 * @example
 * // max(online), its type unknown:
 * // (max(CASE WHEN "courses"."online" IS NOT NULL THEN ARRAY["courses"."online"] END))[1]
 */
function aggregateSql(aggregate: Aggregate, field: (field: Field) => string, bound?: BoundShape, literal: LiteralWriter = stringLiteral): string {
  if (aggregate.field === undefined) return 'count(*)';
  // an expression's argument is written as a select item's (docs/expressions.md), its fields as the records'
  const column = aggregate.field.kind === 'field' ? field(aggregate.field) : valueSql(aggregate.field, field, literal);
  const ordered = aggregate.fn === 'min' || aggregate.fn === 'max';
  if (ordered && bound === undefined) return `(${aggregate.fn}(CASE WHEN ${column} IS NOT NULL THEN ARRAY[${column}] END))[1]`;
  const boolean = ordered && bound!.recordType(aggregate.field) === 'bool';
  const fn = boolean ? (aggregate.fn === 'min' ? 'bool_and' : 'bool_or') : aggregate.fn;
  return `${fn}(${aggregate.distinct ? 'DISTINCT ' : ''}${column})`;
}

function valueSql(value: Expression, field: (field: Field) => string, literal: LiteralWriter = stringLiteral): string {
  switch (value.kind) {
    case 'field':
      return field(value);
    case 'bucket':
      return bucketSql(value, field);
    case 'aggregate':
      return aggregateSql(value, field, undefined, literal);
    default:
      return expressionSql(value, (leaf) => valueSql(leaf, field, literal), literal);
  }
}

/** The SQL of a shape (its facets aside): one statement. */
export function shapedSql(shape: Shape, options: ShapedSqlOptions): string {
  const { from, field } = fromClause(shape, options);
  const where = whereClause(shape, options, field);
  const columns = options.bound?.columns ?? shape.columns;
  if (options.bound === undefined && shape.star !== undefined) {
    // `"t".*` would hold `_full_text`, and a field of an item's name twice, of which CKAN keeps one
    throw queryError('TARGET_CANNOT_EXPRESS', shape.star.span, ['"select *" beside other items, without the fields', 'sql'], {
      hint: 'the SQL names every column: compile with a source that gives the resource\'s fields, list them (select a, b, price * qty as total), or leave select out for every field',
    });
  }
  if (columns === undefined) {
    throw queryError('TARGET_CANNOT_EXPRESS', shape.query.span, ['a join without select', 'sql'], {
      hint: 'list the fields to return: select e.student, c.title (the SQL must name every column, as CKAN keeps one of two equal names)',
    });
  }
  const format = options.column ?? ((sql: string) => sql);
  const whereText = where === undefined ? '' : ` WHERE ${where}`;
  const total = options.total ? `, count(*) OVER () AS ${identifier(TOTAL_COLUMN)}` : '';
  const limit = Math.min(shape.limit ?? DEFAULT_LIMIT, MAX_LIMIT);
  const page = options.page === false ? '' : ` LIMIT ${limit}${shape.offset > 0 ? ` OFFSET ${shape.offset}` : ''}`;
  const nulls = (key: { readonly nulls?: 'first' | 'last' }): string => (key.nulls === undefined ? '' : ` NULLS ${key.nulls.toUpperCase()}`);

  if (shape.grouped) {
    // Each key is written once and that text used wherever it stands: PostgreSQL matches a selected expression to
    // its GROUP BY key by its text, and a key's literal bound twice would be two parameters ($1, $2), not one.
    const keyTexts = shape.keys.map((k) => valueSql(k, field, options.literal));
    const slotSql = (slot: string): string => {
      const i = Number(slot.slice(1));
      if (slot.startsWith('c')) return expressionSql(shape.computed[i]!, (leaf) => slotSql((leaf as Field).name), options.literal);
      return slot.startsWith('k') ? keyTexts[i]! : aggregateSql(shape.aggregates[i]!, field, options.bound, options.literal);
    };
    const select = columns.map((c) => `${format(slotSql(c.slot!), c.value.kind === 'field' ? c.value : undefined)} AS ${identifier(c.name)}`).join(', ');
    const group = shape.keys.length === 0 ? '' : ` GROUP BY ${keyTexts.join(', ')}`;
    const having = shape.having === undefined ? '' : ` HAVING ${conditionSql(shape.having, options.literal, (o: Operand) => slotSql((o as Field).name))}`;
    // The keys last: without order by, groups come in key order; with it, ties do (the same on every engine).
    const order = [
      ...shape.order.map((key) => `${slotSql((key.by as { slot: string }).slot)} ${key.direction.toUpperCase()}${nulls(key)}`),
      ...shape.keys.map((_, i) => slotSql(keySlot(i))),
    ];
    const orderText = order.length === 0 ? '' : ` ORDER BY ${order.join(', ')}`;
    return `SELECT ${select}${total} FROM ${from}${whereText}${group}${having}${orderText}${page}`;
  }

  // A union's rows in its resources' order, each resource's in `_id` order.
  const ids = shape.sources.flatMap((source) =>
    source.union === undefined ? [`${identifier(source.qualifier)}."_id"`] : [`${identifier(source.qualifier)}.${identifier(MEMBER_COLUMN)}`, `${identifier(source.qualifier)}."_id"`]);
  const sortValue = (key: Shape['order'][number]): string => valueSql((key.by as { value: Expression }).value, field, options.literal);
  if (!shape.distinct) {
    const select = columns.map((c) => `${format(valueSql(c.value, field, options.literal), c.value.kind === 'field' ? c.value : undefined)} AS ${identifier(c.name)}`).join(', ');
    // Without order by, the records of the first resource in their order, each with its matches in theirs.
    const order = [...shape.order.map((key) => `${sortValue(key)} ${key.direction.toUpperCase()}${nulls(key)}`), ...ids];
    return `SELECT ${select}${total} FROM ${from}${whereText} ORDER BY ${order.join(', ')}${page}`;
  }
  // Distinct: the first record (in the records' order) of each combination, then ordered by the keys and that record.
  const values = columns.map((c) => valueSql(c.value, field, options.literal));
  const inner = [
    ...columns.map((c, i) => `${format(values[i]!, c.value.kind === 'field' ? c.value : undefined)} AS ${identifier(c.name)}`),
    ...ids.map((id, side) => `${id} AS ${identifier(`_ckql_id${side}`)}`),
  ];
  const outerOrder = shape.order.map((key) => {
    const value = (key.by as { value: Expression }).value;
    const at = columns.findIndex((c) => c.value.kind !== 'aggregate' && sameExpression(c.value, value));
    if (at < 0) {
      throw queryError('TARGET_CANNOT_EXPRESS', key.span, ['order by a value not selected, with select distinct', 'sql'], {
        hint: 'select the value you order by',
      });
    }
    return `${identifier(columns[at]!.name)} ${key.direction.toUpperCase()}${nulls(key)}`;
  });
  const distinctOn = `SELECT DISTINCT ON (${values.join(', ')}) ${inner.join(', ')} FROM ${from}${whereText} ORDER BY ${[...values, ...ids].join(', ')}`;
  // aliased as every column of the statement is (CKAN's checks, and a reader of the text)
  const names = columns.map((c) => `${identifier(c.name)} AS ${identifier(c.name)}`).join(', ');
  const order = [...outerOrder, ...ids.map((_, side) => identifier(`_ckql_id${side}`))].join(', ');
  return `SELECT ${names}${total} FROM (${distinctOn}) AS "_ckql" ORDER BY ${order}${page}`;
}

function sameExpression(a: Expression, b: Expression): boolean {
  if (a.kind === 'field' && b.kind === 'field') return a.name === b.name && (a.qualifier === b.qualifier || a.qualifier === undefined || b.qualifier === undefined);
  if (a.kind === 'bucket' && b.kind === 'bucket') return a.fn === b.fn && a.width?.value === b.width?.value && sameExpression(a.field, b.field);
  const text = (e: Expression): string => JSON.stringify(e, (key, v: unknown) => (key === 'span' ? undefined : v));
  return a.kind === b.kind && a.kind !== 'field' && a.kind !== 'bucket' && text(a) === text(b);
}

/** The columns of the facets statement: which facet (its position), a value as text, its count. */
export const FACET_COLUMNS = { facet: '_ckql_facet', value: 'value', count: 'count' } as const;

/**
 * Every facet of a query as one statement: per facet, its `top + 1`
 * commonest values (count descending, then value; one more than asked says
 * whether more exist) and the count of records without a value, joined by
 * `UNION ALL`. Values are text (a timestamp as `YYYY-MM-DDTHH:MI:SS`); the
 * reader gives them back their type.
 * @example
 * facetSql(parse('from courses where stage = active facet subject top 20'))?.sql
 * // (SELECT 0 AS "_ckql_facet", "courses"."subject"::text AS "value", count(*) AS "count" FROM "courses" AS "courses"
 * //  WHERE ("courses"."stage" = 'active') AND "courses"."subject" IS NOT NULL GROUP BY "courses"."subject"
 * //  ORDER BY count(*) DESC, "courses"."subject" LIMIT 21)
 * // UNION ALL (SELECT 0, NULL, count(*) … AND "courses"."subject" IS NULL)
 */
export function facetSql(query: Query, options: Partial<ShapedSqlOptions> = {}): SqlRequest | undefined {
  const shape = shapeOf(query);
  if (shape.facets.length === 0) return undefined;
  return { sql: facetStatement(shape, { literal: stringLiteral, table: identifier, total: false, ...options }) };
}

/** The facets statement of a shape (see `facetSql`). */
export function facetStatement(shape: Shape, options: ShapedSqlOptions): string {
  const { from, field } = fromClause(shape, options);
  const parts = shape.facets.map((facet: FacetSpec, i) => {
    const value = facetValueSql(facet, field);
    const timestamp = (facet.by !== undefined && 'unit' in facet.by) || (facet.by === undefined && options.bound?.ref(facet.field).info.type === 'timestamp');
    // As JSON text: one column type for every facet, and each value's own type read back from it.
    const text = timestamp ? `to_json(to_char(${value}, 'YYYY-MM-DD"T"HH24:MI:SS'))::text` : `to_json(${value})::text`;
    // Each part writes the where anew, so an engine binds its values once per use.
    const also = (test: string): string => {
      const where = whereClause(shape, options, field);
      return ` WHERE ${where === undefined ? test : `(${where}) AND ${test}`}`;
    };
    const top = `(SELECT ${i} AS ${identifier(FACET_COLUMNS.facet)}, ${text} AS ${identifier(FACET_COLUMNS.value)}, count(*) AS ${identifier(FACET_COLUMNS.count)} FROM ${from}${also(`${value} IS NOT NULL`)} GROUP BY ${value} ORDER BY count(*) DESC, ${value} LIMIT ${facet.top + 1})`;
    const nulls = `(SELECT ${i}, NULL, count(*) FROM ${from}${also(`${value} IS NULL`)})`;
    return `${top} UNION ALL ${nulls}`;
  });
  return parts.join(' UNION ALL ');
}

function facetValueSql(facet: FacetSpec, field: (field: Field) => string): string {
  const column = field(facet.field);
  if (facet.by === undefined) return column;
  if ('unit' in facet.by) return `date_trunc('${facet.by.unit}', ${column}::timestamp)`;
  const width = String(facet.by.width);
  return `(floor(${column}::numeric / ${width}) * ${width})`;
}

/**
 * The facets statement's rows as facets: per facet, its values (read back
 * as the facet's type: numbers as numbers, booleans as booleans), its count
 * of records without a value, and whether more values exist (the `top + 1`st).
 */
export function facetsFromRows(
  facets: readonly FacetSpec[],
  rows: readonly Readonly<Record<string, unknown>>[],
  typeOf: (facet: FacetSpec) => FieldType | undefined,
): Facets {
  const out: Record<string, FacetResult> = {};
  facets.forEach((facet, i) => {
    const mine = rows.filter((row) => Number(row[FACET_COLUMNS.facet]) === i);
    const type = typeOf(facet);
    const values = mine
      .filter((row) => row[FACET_COLUMNS.value] !== null && row[FACET_COLUMNS.value] !== undefined)
      .map((row) => ({ value: facetJson(String(row[FACET_COLUMNS.value]), type), count: Number(row[FACET_COLUMNS.count]) }));
    const nulls = mine.find((row) => row[FACET_COLUMNS.value] === null || row[FACET_COLUMNS.value] === undefined);
    out[facet.name] = {
      field: facet.field.name,
      ...(facet.by === undefined ? {} : { by: 'unit' in facet.by ? facet.by.unit : String(facet.by.width) }),
      values: values.slice(0, facet.top),
      null_count: nulls === undefined ? 0 : Number(nulls[FACET_COLUMNS.count]),
      more: values.length > facet.top,
    };
  });
  return out;
}

/** A facet's value as the statement writes it (JSON text): a number exactly (`facetValue`), anything else as JSON reads it. */
function facetJson(text: string, type: FieldType | undefined): JsonValue {
  if (/^-?\d/.test(text)) return facetValue(text, type ?? 'numeric');
  const value = JSON.parse(text) as JsonValue;
  return typeof value === 'string' ? facetValue(value, type) : value;
}

/** A facet's value as text, given back its type (a number kept as text where a double would not hold it). */
export function facetValue(text: string, type: FieldType | undefined): JsonValue {
  if (type !== undefined && isNumberType(type)) {
    const d = decimalOf(text);
    return d === undefined ? text : decimalValue(d);
  }
  if (type === 'bool') return text === 'true' || text === 't';
  if (type === 'timestamp') return text.replace(' ', 'T');
  return text;
}

/**
 * Expressions as SQL (docs/expressions.md), on CKAN's `datastore_search_sql`
 * allow-list: every function written is on it (`round abs floor ceil lower
 * upper length substr concat date_part date_trunc`, and `btrim` for
 * `trim`), and what is not (`coalesce`, `nullif`, `greatest`, `least`,
 * `cast(`) is written as SQL syntax: `CASE`, and casts as `::`. Every
 * operation is parenthesised, so the statement means the AST whatever
 * PostgreSQL's precedence; numbers are written as the lexer read them
 * (digits only), text through the caller's literal writer.
 */
import { assertNever, type Aggregate, type Bucket, type Condition, type Equals, type Expression, type Field, type IsNull, type Operand, type Value } from '../ast.js';
import { queryError } from '../errors.js';
import { unboundError } from './dict-filters.js';
import { dateUnits } from '../syntax/functions.js';
import { canonicalText } from '../datastore/values.js';

/** How a leaf of an expression (a field, an aggregate, a bucket) is written. */
export type LeafSql = (leaf: Field | Aggregate | Bucket) => string;

/**
 * An expression as SQL.
 * @example expressionSql(parse('from t select round(avg(grade), 1)').select!.items[0]!.value, leaf, stringLiteral)
 * // → round(avg("t"."grade"), 1)
 */
export function expressionSql(expression: Expression, leaf: LeafSql, literal: LiteralWriter): string {
  const sql = (e: Expression): string => expressionSql(e, leaf, literal);
  switch (expression.kind) {
    case 'field':
    case 'aggregate':
    case 'bucket':
      return leaf(expression);
    case 'number':
      return `${expression.text ?? String(expression.value)}`.startsWith('-') ? `(${expression.text ?? String(expression.value)})` : (expression.text ?? String(expression.value));
    case 'string':
      return literal(expression.value);
    case 'boolean':
      return expression.value ? 'TRUE' : 'FALSE';
    case 'null':
      return 'NULL';
    case 'param':
      throw unboundError(expression);
    case 'binary':
      return `(${sql(expression.left)} ${expression.op} ${sql(expression.right)})`;
    case 'negate':
      return `(- ${sql(expression.operand)})`;
    case 'cast':
      return `(${sql(expression.operand)})::${expression.type === 'int' ? 'int4' : expression.type}`;
    case 'case': {
      const whens = expression.whens.map((when) => ` WHEN ${whenSql(when.condition, leaf, literal)} THEN ${sql(when.result)}`).join('');
      return `CASE${whens}${expression.else === undefined ? '' : ` ELSE ${sql(expression.else)}`} END`;
    }
    case 'call': {
      const fn = expression.fn;
      if (fn === 'date_part' || fn === 'date_trunc') {
        // a unit of the closed list is written in the statement, not bound: a group key and its select item must be one expression
        const unit = expression.args[0]!;
        const text = unit.kind === 'string' && dateUnits.includes(unit.value.toLowerCase()) ? `'${unit.value.toLowerCase()}'` : sql(unit);
        return `${fn}(${text}, (${sql(expression.args[1]!)})::timestamp)`;
      }
      // concat takes "any" and length has several overloads: a bound text ($1) gets its type said, or PostgreSQL cannot choose.
      const typed = fn === 'concat' || fn === 'length';
      const args = expression.args.map((arg) => (typed && arg.kind === 'string' ? `(${sql(arg)})::text` : sql(arg)));
      switch (fn) {
        case 'trim':
          return `btrim(${args[0]!})`;
        case 'coalesce':
          return `CASE${args.slice(0, -1).map((a) => ` WHEN ${a} IS NOT NULL THEN ${a}`).join('')} ELSE ${args[args.length - 1]!} END`;
        case 'nullif':
          return `CASE WHEN ${args[0]!} = ${args[1]!} THEN NULL ELSE ${args[0]!} END`;
        case 'greatest':
        case 'least': {
          const op = fn === 'greatest' ? '>=' : '<=';
          return args.reduce((a, b) => `CASE WHEN ${a} IS NULL THEN ${b} WHEN ${b} IS NULL THEN ${a} WHEN ${a} ${op} ${b} THEN ${a} ELSE ${b} END`);
        }
        case 'round':
        case 'abs':
        case 'floor':
        case 'ceil':
        case 'lower':
        case 'upper':
        case 'length':
        case 'substr':
        case 'concat':
          return `${fn}(${args.join(', ')})`;
        default:
          return assertNever(fn, 'function');
      }
    }
    case 'window':
      // windows are written over the columns of the query without them (compile/window.ts), never as a leaf of one
      throw new Error('a window is written by the window step, not as an expression of a row');
    default:
      return assertNever(expression, 'expression');
  }
}

/** A case's condition: its tests of fields and aggregates as `where` and `having` write them. */
function whenSql(condition: Condition<Operand>, leaf: LeafSql, literal: LiteralWriter): string {
  return conditionSql(condition as Condition, literal, (operand: Operand) => leaf(operand));
}

/** A comparison of expressions whose leaves are fields or aggregates (a bucket there is not written yet). */
export function operandLeaf(field: (operand: Operand) => string): LeafSql {
  return (leaf) => {
    if (leaf.kind === 'bucket') throw queryError('NOT_COMPUTED_YET', leaf.span, ['a bucket inside a comparison', 'the sql target'], { hint: "compare date_trunc('month', d) instead" });
    return field(leaf);
  };
}

// ---------------------------------------------------------------- conditions

/**
 * Writes a text value into SQL: the sql target writes a quoted literal; an
 * engine running the same SQL binds a parameter (`$n`) instead.
 */
export type LiteralWriter = (text: string) => string;

/** Writes what a condition tests: a field's column (`"f"`, `"c"."f"`), or in `having` an aggregate. */
export type FieldSql<F extends Operand = Operand> = (operand: F) => string;

const comparisonSql = { eq: '=', ne: '<>', lt: '<', lte: '<=', gt: '>', gte: '>=' } as const;

function valueSql(value: Value, literal: LiteralWriter): string {
  if (value.kind === 'param') throw unboundError(value);
  if (value.kind === 'null') return 'NULL';
  return literal(canonicalText(value.value)!);
}

const operatorSql = { ne: '<>', lt: '<', lte: '<=', gt: '>', gte: '>=' } as const;

/** A condition as SQL: each value written by `literal`, each field or aggregate by `field`. */
export function conditionSql<F extends Operand>(condition: Condition<F>, literal: LiteralWriter, field: FieldSql<F>): string {
  const valueOf = (value: Value): string => valueSql(value, literal);
  switch (condition.kind) {
    case 'eq':
      return condition.value.kind === 'null'
        ? `${field(condition.field)} IS NULL`
        : `${field(condition.field)} = ${valueOf(condition.value)}`;
    case 'compare':
      // `f != null` is `f is not null`, as `f = null` is `f is null`; any other comparison with null is unknown.
      if (condition.value.kind === 'null') {
        return condition.op === 'ne' ? `${field(condition.field)} IS NOT NULL` : 'NULL';
      }
      return `${field(condition.field)} ${operatorSql[condition.op]} ${valueOf(condition.value)}`;
    case 'in': {
      const column = field(condition.field);
      const values = condition.values.filter((v) => v.kind !== 'null');
      if (values.length === condition.values.length && values.length === 0) {
        // `in ()` holds for no record; the field is still named, so an unknown one is refused as elsewhere.
        return `(false AND ${column} IS NULL)`;
      }
      const list = values.length === 0 ? 'false' : `${column} IN (${values.map(valueOf).join(', ')})`;
      return values.length < condition.values.length ? `(${column} IS NULL OR ${list})` : list;
    }
    case 'between':
      return `${field(condition.field)} BETWEEN ${valueOf(condition.low)} AND ${valueOf(condition.high)}`;
    case 'like':
      return `${field(condition.field)} ${condition.ignoreCase ? 'ILIKE' : 'LIKE'} ${valueOf(condition.pattern)}`;
    case 'is-null':
      return `${field(condition.field)} IS NULL`;
    case 'not':
      // `is not null` has its own SQL, as it has its own words in the language.
      if (isNullTest(condition.condition)) return `${field(condition.condition.field)} IS NOT NULL`;
      return `NOT (${conditionSql(condition.condition, literal, field)})`;
    case 'and':
    case 'or':
      if (condition.conditions.length === 0) return condition.kind === 'and' ? 'true' : 'false';
      return `(${condition.conditions.map((member) => conditionSql(member, literal, field)).join(condition.kind === 'and' ? ' AND ' : ' OR ')})`;
    case 'comparison': {
      const leaf = operandLeaf(field as FieldSql);
      return `${expressionSql(condition.left, leaf, literal)} ${comparisonSql[condition.op]} ${expressionSql(condition.right, leaf, literal)}`;
    }
    default:
      return assertNever(condition, 'condition');
  }
}

/** `f is null`, also written `f = null`. */
function isNullTest<F extends Operand>(condition: Condition<F>): condition is IsNull<F> | Equals<F> {
  return condition.kind === 'is-null' || (condition.kind === 'eq' && condition.value.kind === 'null');
}


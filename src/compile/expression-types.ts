/**
 * The type of an expression, as PostgreSQL 15 resolves it
 * (docs/expressions.md): number literals by their text, the number types
 * promoted `int4 < int8 < numeric < float8`, `||` text, each function's
 * result type. Every engine and target types a computed column by this,
 * so they agree on it.
 */
import { assertNever, type Expression } from '../ast.js';
import type { FieldType } from '../datastore/types.js';
import { queryError } from '../errors.js';

/** The types an expression's value may have; `unknown` is a string literal before its context decides. */
export type ValueType = 'int4' | 'int8' | 'numeric' | 'float8' | 'text' | 'bool' | 'date' | 'timestamp' | 'json' | 'unknown';

const NUMBER_RANK: Readonly<Record<string, number>> = { int4: 1, int8: 2, numeric: 3, float8: 4 };

/** Whether a value type is a number. */
export function isNumber(type: ValueType): boolean {
  return NUMBER_RANK[type] !== undefined;
}

/** A field's type as a value type (`int` is `int4`, `float` is `float8`). */
export function valueTypeOf(type: FieldType): ValueType {
  switch (type) {
    case 'int':
    case 'int4':
    case 'oid':
      return 'int4';
    case 'float':
    case 'float8':
      return 'float8';
    case 'int8':
    case 'numeric':
    case 'text':
    case 'bool':
    case 'date':
    case 'timestamp':
    case 'json':
      return type;
    case 'name':
      return 'text';
    default:
      return 'json';
  }
}

/** A value type as the field type a column of it has. */
export function fieldTypeOf(type: ValueType): FieldType {
  return type === 'unknown' ? 'text' : type;
}

/** The type of a number literal's text: an integer by its size, anything with a point or an exponent numeric. */
export function literalType(text: string): ValueType {
  if (!/^-?\d+$/.test(text)) return 'numeric';
  const n = BigInt(text);
  if (n >= -(2n ** 31n) && n < 2n ** 31n) return 'int4';
  if (n >= -(2n ** 63n) && n < 2n ** 63n) return 'int8';
  return 'numeric';
}

/** The common type of several (PostgreSQL's resolution for `case`, `coalesce`, `greatest`): the widest number, else the first known. */
export function commonType(types: readonly ValueType[], what: string, span: { start: number; end: number }): ValueType {
  const known = types.filter((t) => t !== 'unknown');
  if (known.length === 0) return 'text';
  if (known.every(isNumber)) return known.reduce((a, b) => (NUMBER_RANK[a]! >= NUMBER_RANK[b]! ? a : b));
  const first = known[0]!;
  for (const other of known) {
    if (other !== first) throw queryError('TYPE_MISMATCH', span, [what, first, other], { hint: `cast one side: cast(x as ${first})` });
  }
  return first;
}

/**
 * The type of an expression, its leaves typed by `leaf` (a field, an
 * aggregate or a bucket). Refuses what PostgreSQL refuses: arithmetic on
 * text, `round(float8, n)`.
 * @example expressionType(parse('from t select count(*) * 100.0 / 7').select!.items[0]!.value, …) // → 'numeric'
 */
export function expressionType(expression: Expression, leaf: (leaf: Expression) => ValueType): ValueType {
  const type = (e: Expression): ValueType => expressionType(e, leaf);
  switch (expression.kind) {
    case 'field':
    case 'aggregate':
    case 'bucket':
      return leaf(expression);
    case 'number':
      return literalType(expression.text ?? String(expression.value));
    case 'string':
      return 'unknown';
    case 'boolean':
      return 'bool';
    case 'null':
    case 'param':
      return 'unknown';
    case 'negate': {
      const t = type(expression.operand);
      if (!isNumber(t) && t !== 'unknown') throw queryError('TYPE_MISMATCH', expression.span, ['"-"', t, t], { hint: 'negate a number' });
      return t === 'unknown' ? 'numeric' : t;
    }
    case 'binary': {
      const left = type(expression.left);
      const right = type(expression.right);
      if (expression.op === '||') {
        if (left === 'json' || right === 'json') throw queryError('TYPE_MISMATCH', expression.span, ['"||"', left, right], { hint: 'cast to text: x::text' });
        return 'text';
      }
      const l = left === 'unknown' ? (isNumber(right) ? right : 'numeric') : left;
      const r = right === 'unknown' ? (isNumber(l) ? l : 'numeric') : right;
      if (!isNumber(l) || !isNumber(r)) {
        throw queryError('TYPE_MISMATCH', expression.span, [`"${expression.op}"`, left, right], { hint: 'arithmetic takes numbers: cast a text of digits with x::numeric' });
      }
      const result = NUMBER_RANK[l]! >= NUMBER_RANK[r]! ? l : r;
      if (expression.op === '%' && result === 'float8') {
        throw queryError('TYPE_MISMATCH', expression.span, ['"%"', left, right], { hint: 'cast to numeric: cast(x as numeric) % n' });
      }
      return result;
    }
    case 'cast':
      return expression.type === 'int' ? 'int4' : expression.type;
    case 'case': {
      const results = [...expression.whens.map((w) => type(w.result)), ...(expression.else === undefined ? [] : [type(expression.else)])];
      return commonType(results, 'case', expression.span);
    }
    case 'call': {
      const args = expression.args.map(type);
      const fn = expression.fn;
      switch (fn) {
        case 'round':
        case 'floor':
        case 'ceil': {
          const t = args[0]!;
          if (t === 'float8') {
            if (args.length > 1) {
              throw queryError('TYPE_MISMATCH', expression.span, ['round(x, n)', 'float8', args[1]!], { hint: 'round a float8 to places as a numeric: round(cast(x as numeric), n)' });
            }
            return 'float8';
          }
          if (!isNumber(t) && t !== 'unknown') throw queryError('TYPE_MISMATCH', expression.span, [`${expression.fn}()`, t, t], { hint: `${expression.fn} takes a number` });
          // an integer alone is read as float8 (PostgreSQL's preferred number type); round(int, n) is numeric's
          if ((t === 'int4' || t === 'int8') && args.length === 1) return 'float8';
          return 'numeric';
        }
        case 'abs': {
          const t = args[0]!;
          if (!isNumber(t) && t !== 'unknown') throw queryError('TYPE_MISMATCH', expression.span, ['abs()', t, t], { hint: 'abs takes a number' });
          return t === 'unknown' ? 'numeric' : t;
        }
        case 'lower':
        case 'upper':
        case 'trim':
        case 'substr':
        case 'concat':
          return 'text';
        case 'length':
          return 'int4';
        case 'coalesce':
        case 'greatest':
        case 'least':
          return commonType(args, expression.fn, expression.span);
        case 'nullif':
          return commonType(args, 'nullif', expression.span);
        case 'date_part':
          return 'float8';
        case 'date_trunc':
          return 'timestamp';
        default:
          return assertNever(fn, 'function');
      }
    }
    case 'window': {
      const call = expression.call;
      if (call.kind === 'aggregate') return leaf(call);
      // PostgreSQL's: the rankings are bigint, lag and lead give their argument's type
      return call.fn === 'lag' || call.fn === 'lead' ? type(call.args[0]!) : 'int8';
    }
    default:
      return assertNever(expression, 'expression');
  }
}

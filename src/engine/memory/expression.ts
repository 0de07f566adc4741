/**
 * Expressions evaluated in memory, with PostgreSQL's meaning
 * (docs/expressions.md): null in, null out (but `coalesce`, `concat`,
 * `case`); integers divide toward zero; `numeric` is exact (an integer and
 * a scale, `datastore/decimal.ts`) with PostgreSQL's result scale for `/`
 * and `round`; division by zero is `DIVISION_BY_ZERO` at the expression.
 *
 * An expression is compiled once into a tree of closures, each typed by
 * `expressionType`, so a row pays only for the operations it computes.
 */
import { assertNever, type Condition, type Expression, type Operand, type Value } from '../../ast.js';
import { expressionType, isNumber, literalType, type ValueType } from '../../compile/expression-types.js';
import { dateBucket } from '../../datastore/buckets.js';
import { decimalOf, decimalText, decimalValue, type Decimal } from '../../datastore/decimal.js';
import { floatText, floatValue, scaledText, scaledValue } from '../../datastore/number-text.js';
import type { JsonValue } from '../../datastore/types.js';
import { generate } from '../../datastore/generate.js';
import { canonicalText, compareText } from '../../datastore/values.js';
import { queryError } from '../../errors.js';
import type { Span } from '../../span.js';

/** A value as an expression holds it: numbers of the integer and numeric types as decimals, float8 as a double. */
export type Computed = Decimal | number | string | boolean | JsonValue | null;

/** A compiled expression: its type, its value for an item (a row, a group's row of slots), and that value as a record's field holds it. */
export interface Compiled<T> {
  readonly type: ValueType;
  readonly run: (item: T) => Computed;
  /** `outputValue(run(item))`, by the scaled path (see `scaledOutput`) where it can say the value */
  readonly output: (item: T) => JsonValue;
  /** the scaled path as code for a generated loop (see `scaledColumn`), undefined where there is none */
  readonly scaled: (prefix: string, exit: string) => ScaledColumn<T> | undefined;
}

/** How the leaves (fields, aggregates, buckets) of an expression are read, and their types. */
export interface Leaves<T> {
  read(leaf: Expression): (item: T) => JsonValue | null | undefined;
  type(leaf: Expression): ValueType;
}

const INT_RANGE: Readonly<Record<string, readonly [bigint, bigint]>> = { int4: [-(2n ** 31n), 2n ** 31n - 1n], int8: [-(2n ** 63n), 2n ** 63n - 1n] };

/**
 * Compiles an expression over items of type T.
 * @example compileExpression(parse('from t select price * qty').select!.items[0]!.value, leaves).run(row)
 */
export function compileExpression<T>(expression: Expression, leaves: Leaves<T>): Compiled<T> {
  const type = expressionType(expression, (leaf) => leaves.type(leaf));
  const run = build(expression, leaves, type);
  const compiled: Compiled<T> = {
    type,
    run,
    output: scaledOutput(expression, leaves, type, run) ?? ((item) => outputValue(run(item))),
    scaled: (prefix, exit) => scaledColumn(compiled, expression, leaves, prefix, exit),
  };
  return compiled;
}

/**
 * The value as a record's field holds it, PostgreSQL's text kept where a
 * number would write another (docs/engines.md, Numbers in the output): a
 * decimal with its scale (`"2.0"`), a float8 PostgreSQL writes with an
 * exponent (`"1e+20"`) as that text. A `key` (a group key, a distinct
 * value) drops trailing zeros instead, so equal numbers of two scales are
 * one group, as they are in PostgreSQL.
 */
export function outputValue(value: Computed, key = false): JsonValue {
  if (value === null || value === undefined) return null;
  if (isDecimal(value)) return key ? decimalValue(value) : scaledValue(value);
  if (typeof value === 'number' && !key) return floatValue(value);
  return value as JsonValue;
}

/** The value as PostgreSQL prints it (`::text`): a numeric with its scale, a float8 as its shortest text, a boolean `true`/`false`. */
export function valueText(value: Computed, type: ValueType): string | null {
  if (value === null || value === undefined) return null;
  if (isDecimal(value)) return scaledText(value);
  if (typeof value === 'number') return floatText(value);
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (typeof value === 'string') return type === 'timestamp' ? value.replace('T', ' ') : value;
  return JSON.stringify(value);
}

function isDecimal(value: unknown): value is Decimal {
  return typeof value === 'object' && value !== null && typeof (value as Decimal).int === 'bigint';
}

// ---------------------------------------------------------------- conversions

function toDecimal(value: Computed): Decimal | null {
  if (value === null || value === undefined) return null;
  if (isDecimal(value)) return value;
  if (typeof value === 'number') return decimalOf(floatText(value)) ?? null;
  const d = decimalOf(typeof value === 'string' ? value : canonicalText(value));
  if (d === undefined) throw invalidInput('numeric', value);
  return d;
}

function toFloat(value: Computed): number | null {
  if (value === null || value === undefined) return null;
  if (typeof value === 'number') return value;
  if (isDecimal(value)) return Number(decimalText(value));
  const n = Number(value);
  if (typeof value !== 'string' || value.trim() === '' || Number.isNaN(n)) throw invalidInput('double precision', value);
  return n;
}

function toText(value: Computed): string | null {
  if (value === null || value === undefined) return null;
  if (typeof value === 'string') return value;
  if (isDecimal(value)) return scaledText(value);
  if (typeof value === 'number') return floatText(value);
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  return JSON.stringify(value);
}

/** A leaf's value (as records hold it) in its type's representation. */
function fromRecord(value: JsonValue | null | undefined, type: ValueType): Computed {
  if (value === null || value === undefined) return null;
  switch (type) {
    case 'int4':
    case 'int8':
    case 'numeric':
      return toDecimal(value as Computed);
    case 'float8':
      return toFloat(value as Computed);
    case 'text':
    case 'unknown':
    case 'date':
    case 'timestamp':
      return typeof value === 'string' ? value : canonicalText(value);
    case 'bool':
      return typeof value === 'boolean' ? value : value === 'true' || value === 't';
    case 'json':
      return value;
    default:
      return assertNever(type, 'type');
  }
}

/** A value of type `from` in the representation of type `to` (a number promoted, a literal read). */
function convert(value: Computed, from: ValueType, to: ValueType): Computed {
  if (value === null || value === undefined || from === to) return value;
  switch (to) {
    case 'int4':
    case 'int8': {
      if (from === 'float8') return checkRange(BigIntRound(value as number), to);
      const d = toDecimal(from === 'unknown' || from === 'text' ? integerText(value) : value);
      return d === null ? null : checkRange(roundDecimal(d, 0).int, to);
    }
    case 'numeric':
      return from === 'float8' ? float8Numeric(value as number) : toDecimal(value);
    case 'float8':
      return toFloat(value);
    case 'text':
    case 'unknown':
      return toText(value);
    case 'bool': {
      if (typeof value === 'boolean') return value;
      const text = String(toText(value)).trim().toLowerCase();
      if (['t', 'true', 'yes', 'y', 'on', '1'].includes(text)) return true;
      if (['f', 'false', 'no', 'n', 'off', '0'].includes(text)) return false;
      throw invalidInput('boolean', value);
    }
    case 'date':
    case 'timestamp':
      return toText(value);
    case 'json':
      return value;
    default:
      return assertNever(to, 'type');
  }
}

/** `x::numeric` of a float8: its 15 significant digits, as PostgreSQL's `float8_numeric` writes them (`%.15g`). */
function float8Numeric(n: number): Decimal {
  if (!Number.isFinite(n)) throw invalidInput('numeric', n);
  return decimalOf(Number(n.toPrecision(15)))!;
}

function integerText(value: Computed): Computed {
  const text = String(toText(value)).trim();
  if (!/^[+-]?\d+$/.test(text)) throw invalidInput('integer', value);
  return text;
}

function BigIntRound(n: number): bigint {
  if (!Number.isFinite(n)) throw invalidInput('integer', n);
  return BigInt(roundHalfEven(n));
}

function checkRange(int: bigint, type: 'int4' | 'int8'): Decimal {
  const [low, high] = INT_RANGE[type]!;
  if (int < low || int > high) throw queryError('NUMBER_OUT_OF_RANGE', { start: 0, end: 0 }, [`${int} (${type === 'int4' ? 'integer' : 'bigint'} out of range)`]);
  return { int, scale: 0 };
}

function invalidInput(type: string, value: unknown): Error {
  return queryError('TYPE_MISMATCH', { start: 0, end: 0 }, [`invalid input syntax for type ${type}`, JSON.stringify(value), type], { hint: 'only values of the type can be read as it' });
}

// ---------------------------------------------------------------- numbers

function rescale(d: Decimal, scale: number): bigint {
  return scale >= d.scale ? d.int * 10n ** BigInt(scale - d.scale) : d.int / 10n ** BigInt(d.scale - scale);
}

/** `d` rounded half away from zero to `scale` places (PostgreSQL's numeric rounding). */
function roundDecimal(d: Decimal, scale: number): Decimal {
  if (scale >= d.scale) return { int: rescale(d, scale), scale };
  const factor = 10n ** BigInt(d.scale - scale);
  const negative = d.int < 0n;
  const abs = negative ? -d.int : d.int;
  let q = abs / factor;
  if ((abs % factor) * 2n >= factor) q += 1n;
  return { int: negative ? -q : q, scale };
}

/** Round half to even, as PostgreSQL's `round(float8)` (rint). */
function roundHalfEven(n: number): number {
  const r = Math.round(n);
  return Math.abs(n % 1) === 0.5 ? 2 * Math.round(n / 2) : r;
}

/** PostgreSQL's base-10000 weight and first digit of a non-zero decimal (numeric.c's select_div_scale reads them). */
function weightAndFirst(d: Decimal): { weight: number; first: number } {
  const abs = d.int < 0n ? -d.int : d.int;
  // align the fraction to whole groups of four digits
  const pad = (4 - (d.scale % 4)) % 4;
  const digits = (abs * 10n ** BigInt(pad)).toString();
  const fractionGroups = (d.scale + pad) / 4;
  const groups = Math.ceil(digits.length / 4);
  const padded = digits.padStart(groups * 4, '0');
  for (let g = 0; g < groups; g++) {
    const value = Number(padded.slice(g * 4, g * 4 + 4));
    if (value !== 0) return { weight: groups - fractionGroups - 1 - g, first: value };
  }
  return { weight: 0, first: 0 };
}

/** The scale PostgreSQL gives `a / b` of numerics (numeric.c, select_div_scale). */
export function divisionScale(a: Decimal, b: Decimal): number {
  const x = a.int === 0n ? { weight: 0, first: 0 } : weightAndFirst(a);
  const y = weightAndFirst(b);
  let qweight = x.weight - y.weight;
  if (x.first <= y.first) qweight--;
  let scale = 16 - qweight * 4;
  scale = Math.max(scale, a.scale, b.scale, 0);
  return Math.min(scale, 1000);
}

/** `a / b` to `scale` places, rounded half away from zero (PostgreSQL's `div_var`). */
export function divideDecimal(a: Decimal, b: Decimal, scale: number): Decimal {
  // a / b to `scale` places, rounded half away from zero: one more digit, then rounded
  const num = a.int * 10n ** BigInt(Math.max(0, scale + 1 + b.scale - a.scale));
  const den = b.int * 10n ** BigInt(Math.max(0, a.scale - scale - 1 - b.scale));
  const q = num / den;
  return roundDecimal({ int: q, scale: scale + 1 }, scale);
}

function compareNumbersOf(a: Computed, b: Computed, type: ValueType): number {
  if (type === 'float8') {
    const x = a as number;
    const y = b as number;
    return x < y ? -1 : x > y ? 1 : 0;
  }
  const x = a as Decimal;
  const y = b as Decimal;
  const scale = Math.max(x.scale, y.scale);
  const p = rescale(x, scale);
  const q = rescale(y, scale);
  return p < q ? -1 : p > q ? 1 : 0;
}

/** Two values of one type in PostgreSQL's order (text by code point, as a C-collated database). */
function compareAs(a: Computed, b: Computed, type: ValueType): number {
  if (isNumber(type)) return compareNumbersOf(a, b, type);
  if (type === 'bool') return Number(a) - Number(b);
  return compareText(String(toText(a)), String(toText(b)));
}

// ---------------------------------------------------------------- building

function build<T>(expression: Expression, leaves: Leaves<T>, type: ValueType): (item: T) => Computed {
  const sub = (e: Expression, as?: ValueType): ((item: T) => Computed) => {
    const own = expressionType(e, (leaf) => leaves.type(leaf));
    const run = build(e, leaves, own);
    if (as === undefined || as === own) return run;
    return (item) => convert(run(item), own, as);
  };
  switch (expression.kind) {
    case 'field':
    case 'aggregate':
    case 'bucket': {
      const read = leaves.read(expression);
      return (item) => fromRecord(read(item), type);
    }
    case 'number': {
      const text = expression.text ?? String(expression.value);
      const value = literalType(text) === 'float8' ? Number(text) : decimalOf(text)!;
      return () => value;
    }
    case 'string': {
      const value = expression.value;
      return () => value;
    }
    case 'boolean': {
      const value = expression.value;
      return () => value;
    }
    case 'null':
      return () => null;
    case 'param':
      throw queryError('UNBOUND_PARAMETER', expression.span, [expression.name]);
    case 'negate': {
      const operand = sub(expression.operand, type);
      return (item) => {
        const v = operand(item);
        if (v === null) return null;
        if (typeof v === 'number') return -v;
        const d = v as Decimal;
        return type === 'int4' || type === 'int8' ? checkRange(-d.int, type) : { int: -d.int, scale: d.scale };
      };
    }
    case 'binary':
      return binary(expression.op, sub(expression.left, expression.op === '||' ? 'text' : type), sub(expression.right, expression.op === '||' ? 'text' : type), type, expression.span);
    case 'cast': {
      const own = expressionType(expression.operand, (leaf) => leaves.type(leaf));
      const operand = sub(expression.operand);
      return (item) => convert(operand(item), own, type);
    }
    case 'case': {
      const whens = expression.whens.map((when) => ({ test: conditionTest(when.condition, leaves), result: sub(when.result, type) }));
      const otherwise = expression.else === undefined ? undefined : sub(expression.else, type);
      return (item) => {
        for (const when of whens) if (when.test(item) === true) return when.result(item);
        return otherwise === undefined ? null : otherwise(item);
      };
    }
    case 'call':
      return call(expression, leaves, type, sub);
    case 'window':
      // a window is computed over the rows of the query without it (engine/memory/window.ts), never from one row
      throw new Error('a window is computed by the window step, not as an expression of a row');
    default:
      return assertNever(expression, 'expression');
  }
}

function binary<T>(op: string, left: (item: T) => Computed, right: (item: T) => Computed, type: ValueType, span: Span): (item: T) => Computed {
  if (op === '||') {
    return (item) => {
      const a = left(item);
      const b = right(item);
      return a === null || b === null ? null : `${String(a)}${String(b)}`;
    };
  }
  const zero = (): Error => queryError('DIVISION_BY_ZERO', span, [], { hint: 'test the divisor first: case when d = 0 then null else n / d end, or nullif(d, 0)' });
  if (type === 'float8') {
    return (item) => {
      const a = left(item) as number | null;
      const b = right(item) as number | null;
      if (a === null || b === null) return null;
      switch (op) {
        case '+':
          return a + b;
        case '-':
          return a - b;
        case '*':
          return a * b;
        case '/':
          if (b === 0) throw zero();
          return a / b;
        default:
          throw queryError('TYPE_MISMATCH', span, [`"${op}"`, 'float8', 'float8'], { hint: 'cast to numeric: cast(x as numeric) % n' });
      }
    };
  }
  const integer = type === 'int4' || type === 'int8';
  return (item) => {
    const a = left(item) as Decimal | null;
    const b = right(item) as Decimal | null;
    if (a === null || b === null) return null;
    let out: Decimal;
    switch (op) {
      case '+':
      case '-': {
        const scale = Math.max(a.scale, b.scale);
        const x = rescale(a, scale);
        const y = rescale(b, scale);
        out = { int: op === '+' ? x + y : x - y, scale };
        break;
      }
      case '*':
        out = { int: a.int * b.int, scale: a.scale + b.scale };
        break;
      case '/':
        if (b.int === 0n) throw zero();
        out = integer ? { int: a.int / b.int, scale: 0 } : divideDecimal(a, b, divisionScale(a, b));
        break;
      case '%': {
        if (b.int === 0n) throw zero();
        const scale = Math.max(a.scale, b.scale);
        out = { int: rescale(a, scale) % rescale(b, scale), scale };
        break;
      }
      default:
        throw new Error(`unknown operator ${op}`);
    }
    return integer ? checkRange(out.int, type) : out;
  };
}

function call<T>(
  expression: Extract<Expression, { kind: 'call' }>,
  leaves: Leaves<T>,
  type: ValueType,
  sub: (e: Expression, as?: ValueType) => (item: T) => Computed,
): (item: T) => Computed {
  const args = expression.args;
  const typeOf = (e: Expression): ValueType => expressionType(e, (leaf) => leaves.type(leaf));
  switch (expression.fn) {
    case 'round':
    case 'floor':
    case 'ceil': {
      const fn = expression.fn;
      if (type === 'float8') {
        const x = sub(args[0]!, 'float8');
        const f = fn === 'round' ? roundHalfEven : fn === 'floor' ? Math.floor : Math.ceil;
        return (item) => {
          const v = x(item) as number | null;
          return v === null ? null : f(v);
        };
      }
      const x = sub(args[0]!, 'numeric');
      const places = args[1] === undefined ? undefined : sub(args[1], 'int4');
      return (item) => {
        const v = x(item) as Decimal | null;
        if (v === null) return null;
        if (fn === 'round') {
          const n = places === undefined ? 0 : (places(item) as Decimal | null);
          if (n === null) return null;
          const p = typeof n === 'number' ? n : Number(n.int);
          if (p >= 0) return roundDecimal(v, p);
          const rounded = roundDecimal({ int: v.int, scale: v.scale - p }, 0);
          return { int: rounded.int * 10n ** BigInt(-p), scale: 0 };
        }
        const truncated = rescale(v, 0);
        const exact = rescale({ int: truncated, scale: 0 }, v.scale) === v.int;
        if (exact) return { int: truncated, scale: 0 };
        return { int: fn === 'floor' ? (v.int < 0n ? truncated - 1n : truncated) : v.int < 0n ? truncated : truncated + 1n, scale: 0 };
      };
    }
    case 'abs': {
      const x = sub(args[0]!, type);
      return (item) => {
        const v = x(item);
        if (v === null) return null;
        if (typeof v === 'number') return Math.abs(v);
        const d = v as Decimal;
        return { int: d.int < 0n ? -d.int : d.int, scale: d.scale };
      };
    }
    case 'lower':
    case 'upper':
    case 'trim':
    case 'length': {
      const x = sub(args[0]!, 'text');
      const fn = expression.fn;
      return (item) => {
        const v = x(item) as string | null;
        if (v === null) return null;
        if (fn === 'lower') return v.toLowerCase();
        if (fn === 'upper') return v.toUpperCase();
        if (fn === 'trim') return v.replace(/^ +| +$/g, '');
        return { int: BigInt([...v].length), scale: 0 };
      };
    }
    case 'substr': {
      const s = sub(args[0]!, 'text');
      const from = sub(args[1]!, 'int8');
      const count = args[2] === undefined ? undefined : sub(args[2], 'int8');
      return (item) => {
        const v = s(item) as string | null;
        const f = from(item) as Decimal | null;
        const n = count === undefined ? undefined : (count(item) as Decimal | null);
        if (v === null || f === null || n === null) return null;
        const chars = [...v];
        const start = Number(f.int);
        if (n !== undefined && n.int < 0n) throw queryError('TYPE_MISMATCH', expression.span, ['substr()', 'a negative length', 'text'], { hint: 'give a length of 0 or more' });
        const end = n === undefined ? chars.length + 1 : start + Number(n.int);
        return chars.slice(Math.max(start, 1) - 1, Math.max(end, 1) - 1).join('');
      };
    }
    case 'concat': {
      const parts = args.map((arg) => ({ run: sub(arg), type: typeOf(arg) }));
      return (item) =>
        parts
          .map((part) => {
            const v = part.run(item);
            if (v === null) return '';
            return typeof v === 'boolean' ? (v ? 't' : 'f') : String(toText(v));
          })
          .join('');
    }
    case 'coalesce': {
      const parts = args.map((arg) => sub(arg, type));
      return (item) => {
        for (const part of parts) {
          const v = part(item);
          if (v !== null) return v;
        }
        return null;
      };
    }
    case 'nullif': {
      const a = sub(args[0]!, type);
      const b = sub(args[1]!, type);
      return (item) => {
        const x = a(item);
        const y = b(item);
        return x !== null && y !== null && compareAs(x, y, type) === 0 ? null : x;
      };
    }
    case 'greatest':
    case 'least': {
      const parts = args.map((arg) => sub(arg, type));
      const sign = expression.fn === 'greatest' ? 1 : -1;
      return (item) => {
        let best: Computed = null;
        for (const part of parts) {
          const v = part(item);
          if (v !== null && (best === null || sign * compareAs(v, best, type) > 0)) best = v;
        }
        return best;
      };
    }
    case 'date_part': {
      const unit = sub(args[0]!, 'text');
      const d = sub(args[1]!, 'timestamp');
      return (item) => {
        const u = unit(item) as string | null;
        const v = d(item) as string | null;
        return u === null || v === null ? null : datePart(u.toLowerCase(), v, expression.span);
      };
    }
    case 'date_trunc': {
      const unit = sub(args[0]!, 'text');
      const d = sub(args[1]!, 'timestamp');
      return (item) => {
        const u = unit(item) as string | null;
        const v = d(item) as string | null;
        if (u === null || v === null) return null;
        const lower = u.toLowerCase();
        if (lower === 'year' || lower === 'month' || lower === 'week' || lower === 'day') return dateBucket(v, lower);
        throw queryError('UNKNOWN_UNIT', expression.span, [u], { hint: "date_trunc here takes 'year', 'month', 'week' or 'day'" });
      };
    }
    default:
      return assertNever(expression.fn, 'function');
  }
}

/** `date_part(unit, d)` of a date or timestamp's text (read as UTC, as the engines store them). */
function datePart(unit: string, text: string, span: Span): number {
  const ms = Date.parse(/[zZ]|[+-]\d\d:?\d\d$/.test(text) || text.length === 10 ? text : `${text}Z`);
  if (!Number.isFinite(ms)) throw invalidInput('timestamp', text);
  const at = new Date(ms);
  switch (unit) {
    case 'year':
      return at.getUTCFullYear();
    case 'quarter':
      return Math.floor(at.getUTCMonth() / 3) + 1;
    case 'month':
      return at.getUTCMonth() + 1;
    case 'day':
      return at.getUTCDate();
    case 'hour':
      return at.getUTCHours();
    case 'minute':
      return at.getUTCMinutes();
    case 'second':
      return at.getUTCSeconds() + at.getUTCMilliseconds() / 1000;
    case 'dow':
      return at.getUTCDay();
    case 'doy':
      return Math.floor((ms - Date.UTC(at.getUTCFullYear(), 0, 1)) / 86_400_000) + 1;
    case 'epoch':
      return ms / 1000;
    case 'week': {
      const day = Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate());
      const thursday = day + (3 - ((at.getUTCDay() + 6) % 7)) * 86_400_000;
      const yearStart = Date.UTC(new Date(thursday).getUTCFullYear(), 0, 1);
      return Math.floor((thursday - yearStart) / (7 * 86_400_000)) + 1;
    }
    default:
      throw queryError('UNKNOWN_UNIT', span, [unit], { hint: "one of 'year', 'quarter', 'month', 'week', 'day', 'hour', 'minute', 'second', 'dow', 'doy', 'epoch'" });
  }
}

// ---------------------------------------------------------------- the scaled path

/*
 * A numeric value as `units / 10^scale`, `units` an integer of at most
 * 2^53 − 1 and `scale` at most 22 (10^22 is the largest power of ten a
 * double holds exactly). Doubles compute such values exactly: a sum, a
 * difference, a product or a remainder of two integers below 2^53 is the
 * exact one whenever the result stays below 2^53, so these values need no
 * BigInt. The scaled path of an expression is one generated function of
 * straight-line code over such pairs, which answers the output value, or
 * calls the exact path (`build`) for the whole expression where it cannot
 * say it: a null, text, a value or a result past 2^53 units or 22 places,
 * a division by zero, an integer out of its type's range. Expressions have
 * no side effects, so the exact path gives what the scaled one would have,
 * error included.
 */

/** A scaled value, as the helpers of the generated code write one. */
interface Scaled {
  units: number;
  scale: number;
}

const SAFE = Number.MAX_SAFE_INTEGER;
const MAX_SCALE = 22;

/** 10^0 … 10^22, exact as doubles, and their nearest reciprocals. */
const POWERS = Array.from({ length: MAX_SCALE + 1 }, (_, i) => 10 ** i);
const INVERSE_POWERS = POWERS.map((power) => 1 / power);

/** 1.5 × 2^52: adding and subtracting it rounds a double below 2^51 to an integer (cheaper than `Math.round`). */
const ROUNDING = 6755399441055744;

/**
 * A record's number as the decimal its shortest text says (what `toDecimal`
 * reads it as), written into `out`: its places found by a round trip. If
 * `m / 10^p` reads back as the double with |m| < 10^15, m is its shortest
 * text's digits: two decimals of at most 15 significant digits are never
 * one double, and the fewest places that read back have no trailing zero.
 * `out` keeps the last value's places, tried first.
 */
function unitsOf(value: unknown, out: Scaled): boolean {
  if (typeof value !== 'number') return false;
  if (Number.isSafeInteger(value)) {
    out.units = value;
    out.scale = 0;
    return true;
  }
  // The previous value's places, unless fewer say this one (a numeric's scale is its shortest text's, as the exact path reads it).
  if (out.scale > 0 && placesAre(value, out.scale, out) && !endsInZero(out.units)) return true;
  for (let p = 1; p <= MAX_SCALE; p++) {
    const m: number = value * POWERS[p]! + ROUNDING - ROUNDING;
    if (!(Math.abs(m) < 1e15)) return false;
    if (placesAre(value, p, out)) return true;
  }
  return false;
}

/**
 * Whether `value` is a decimal of `p` places and fewer than 10^15 units
 * (then written into `out`). `value * 10^p` is within 2^-52 of its units
 * when it is one: a farther product is turned away before the division.
 */
function placesAre(value: number, p: number, out: Scaled): boolean {
  const x = value * POWERS[p]!;
  const m = x + ROUNDING - ROUNDING;
  if (!(Math.abs(m) < 1e15) || Math.abs(x - m) > Math.abs(x) * 2 ** -50 || m / POWERS[p]! !== value) return false;
  out.units = m;
  out.scale = p;
  return true;
}

/**
 * The value `outputValue` gives the decimal of `units` over 10^scale
 * (`scaledValue`): below 10^15 units and without a trailing zero, the double
 * nearest the quotient; otherwise its text with the scale kept (`"2.0"`),
 * written from the units' digits (what `scaledText` writes, without a BigInt).
 */
function unitsValue(units: number, scale: number): JsonValue {
  // `+ 0` makes a negative zero (a product with a negative factor) the 0 the BigInt path gives
  const m = units + 0;
  if (!(Math.abs(m) < 1e15)) return scaledValue({ int: BigInt(m), scale });
  if (scale === 0) return m;
  const n = m / POWERS[scale]!;
  if (!endsInZero(m) && Math.abs(n) >= 1e-6) return n;
  const digits = String(m < 0 ? -m : m);
  const cut = digits.length - scale;
  const text = cut > 0 ? `${digits.slice(0, cut)}.${digits.slice(cut)}` : `0.${'0'.repeat(-cut)}${digits}`;
  // m is not 0 here when negative: no negative zero to write
  return m < 0 ? `-${text}` : text;
}

/**
 * Whether an integer |m| < 2^53 is a multiple of ten, without `%` (on
 * doubles a call into the runtime): m / 10 is exact when it is an integer,
 * and no integer times ten is m otherwise.
 */
function endsInZero(m: number): boolean {
  return Math.floor(m / 10) * 10 === m;
}

/**
 * ⌊a / b⌋ of integers 0 ≤ a < 2^53 and b ≥ 1, without `%` (on doubles a
 * call into the runtime): the rounded quotient's floor is the true one or
 * one more, and one more is told by `q * b` passing `a` (a product past
 * 2^53 is rounded, but not to 2^53 − 1 or below).
 */
function quotient(a: number, b: number): number {
  const q = Math.floor(a / b);
  return q * b > a ? q - 1 : q;
}

/**
 * ⌊a / 10^p⌋ of an integer 0 ≤ a < 2^53, by a product rather than a
 * division: for p ≥ 1 the quotient is below 2^53 / 10, so the product by
 * the rounded 10^-p is within 0.5 of it, and its floor is the true one or
 * one off either way, which `q * 10^p` against `a` tells.
 */
function quotientByPower(a: number, p: number): number {
  const b = POWERS[p]!;
  const q = Math.floor(a * INVERSE_POWERS[p]!);
  if (q * b > a) return q - 1;
  return (q + 1) * b <= a ? q + 1 : q;
}

/** `x % y` of integers (y ≠ 0): the remainder keeps the dividend's sign, as BigInt's and PostgreSQL's. */
function remainder(x: number, y: number): number {
  const ax = Math.abs(x);
  const ay = Math.abs(y);
  const r = ax - quotient(ax, ay) * ay;
  return x < 0 ? -r : r;
}

/** `x / y` of integers (y ≠ 0), toward zero. */
function divideTowardZero(x: number, y: number): number {
  const q = quotient(Math.abs(x), Math.abs(y));
  return (x < 0) !== (y < 0) ? -q : q;
}

/**
 * `units / 10^scale` rounded half away from zero to `places` (negative:
 * tens, hundreds, …), as `roundDecimal` and `round`'s negative places do:
 * written into `out`, false past 2^53 units or 22 places.
 */
function roundScaled(units: number, scale: number, places: number, out: Scaled): boolean {
  if (places >= scale) {
    if (places > MAX_SCALE) return false;
    const u = units * POWERS[places - scale]!;
    if (!(Math.abs(u) <= SAFE)) return false;
    out.units = u;
    out.scale = places;
    return true;
  }
  const shift = scale - places;
  if (shift > MAX_SCALE || -places > MAX_SCALE) return false;
  const abs = Math.abs(units);
  let q = quotientByPower(abs, shift);
  if ((abs - q * POWERS[shift]!) * 2 >= POWERS[shift]!) q += 1;
  if (units < 0) q = -q;
  if (places < 0) q *= POWERS[-places]!;
  if (!(Math.abs(q) <= SAFE)) return false;
  out.units = q;
  out.scale = Math.max(places, 0);
  return true;
}

/** `floor` (`up` false) or `ceil` of `units / 10^scale`, a whole number of units. */
function floorOrCeil(units: number, scale: number, up: boolean): number {
  const abs = Math.abs(units);
  let q = quotientByPower(abs, scale);
  // toward zero, then one step away from it where a fraction was cut off on the side the function moves to
  if (q * POWERS[scale]! !== abs && (up ? units > 0 : units < 0)) q += 1;
  return units < 0 ? -q : q;
}

/** What the generated code is given: its reads of leaves, the exact path, the helpers. */
const HELPERS = { unitsOf, scaledValue: unitsValue, remainder, divideTowardZero, roundScaled, floorOrCeil, POWERS };

/** The code of an expression's scaled path as it is written: statements, the leaves it reads, fresh names. */
interface ScaledCode<T> {
  readonly lines: string[];
  readonly reads: ((item: T) => unknown)[];
  /** scratch objects (`Scaled`) the code names `o0`, `o1`, …, after its prefix */
  scratch: number;
  /** the prefix of every name the code makes, so that several expressions share one function */
  readonly prefix: string;
  /** the statement that leaves the scaled path, for the exact path to say the value */
  readonly exit: string;
}

/**
 * An expression's scaled path as code for a generated loop over items
 * (the memory engine's records, row-shape.ts `joinedRecords`): written in
 * the loop, no call stands between the value and the record that holds
 * it. `setup` goes before the loop, where `handle` names this object;
 * `lines` run in the loop with the item as `item`, and either leave by
 * `exit` or end with `value`, the record's value.
 */
export interface ScaledColumn<T> {
  /** the helpers' names, once for every column of a loop (from any one of them) */
  prelude(handle: string): string;
  setup(handle: string): string[];
  readonly lines: readonly string[];
  readonly value: string;
  readonly reads: readonly ((item: T) => unknown)[];
  /** the value by the exact path, where the scaled one leaves */
  readonly exact: (item: T) => JsonValue;
  readonly helpers: typeof HELPERS;
}

/** The names the code of a scaled path calls, declared from `helpers`. */
const SCALED_HELPERS = (helpers: string): string => `const { unitsOf, scaledValue, remainder, divideTowardZero, roundScaled, floorOrCeil, POWERS } = ${helpers};`;

/**
 * The scaled path of a compiled expression as code (see `ScaledColumn`),
 * its names starting with `prefix`, leaving by `exit`; undefined where
 * the expression has none.
 * @example scaledColumn(compiled, parse('from t select price * qty').select!.items[0]!.value, leaves, 'e0_', '{ v0 = h0.exact(j); break c0; }')
 */
export function scaledColumn<T>(compiled: Compiled<T>, expression: Expression, leaves: Leaves<T>, prefix: string, exit: string): ScaledColumn<T> | undefined {
  const code: ScaledCode<T> = { lines: [], reads: [], scratch: 0, prefix, exit };
  const value = scaledCode(expression, leaves, compiled.type, code);
  if (value === undefined) return undefined;
  const { run } = compiled;
  return {
    prelude: (handle) => SCALED_HELPERS(`${handle}.helpers`),
    setup: (handle) => [
      ...code.reads.map((_, i) => `const ${prefix}r${i} = ${handle}.reads[${i}];`),
      ...Array.from({ length: code.scratch }, (_, i) => `const ${prefix}o${i} = { units: 0, scale: 0 };`),
    ],
    lines: code.lines,
    value: `scaledValue(${value})`,
    reads: code.reads,
    exact: (item) => outputValue(run(item)),
    helpers: HELPERS,
  };
}

function isExact(type: ValueType): boolean {
  return type === 'int4' || type === 'int8' || type === 'numeric';
}

/**
 * The output of an expression by its scaled path, the exact path `run`
 * where it cannot say the value; undefined where some node has no scaled
 * form (see `scaledCode`) or code cannot be generated.
 */
function scaledOutput<T>(expression: Expression, leaves: Leaves<T>, type: ValueType, run: (item: T) => Computed): ((item: T) => JsonValue) | undefined {
  const column = scaledColumn({ type, run, output: () => null, scaled: () => undefined }, expression, leaves, '', 'return column.exact(item);');
  if (column === undefined) return undefined;
  const body = [column.prelude('column'), ...column.setup('column'), 'return function (item) {', ...column.lines, `return ${column.value};`, '};'].join('\n');
  return generate<(column: ScaledColumn<T>) => (item: T) => JsonValue>(['column'], body)?.(column);
}

/**
 * Writes the statements that compute a node of an exact number type into
 * `code`, and gives the names of its units and scale (`"u3, s3"`);
 * undefined where the node has no scaled form: only fields, literals,
 * `+ - * %`, `/` of integers, unary `-`, casts between the exact types,
 * `round`, `floor`, `ceil` and `abs` have one.
 */
function scaledCode<T>(expression: Expression, leaves: Leaves<T>, type: ValueType, code: ScaledCode<T>): string | undefined {
  if (!isExact(type)) return undefined;
  const sub = (e: Expression, as: ValueType): string | undefined => {
    const own = expressionType(e, (leaf) => leaves.type(leaf));
    if (!isExact(own)) return undefined;
    const value = scaledCode(e, leaves, own, code);
    return value === undefined ? undefined : scaledAs(value, own, as, code);
  };
  const n = code.scratch++;
  const p = code.prefix;
  const lines = code.lines;
  switch (expression.kind) {
    case 'field':
    case 'aggregate':
    case 'bucket': {
      const read = code.reads.push(leaves.read(expression)) - 1;
      lines.push(`if (!unitsOf(${p}r${read}(item), ${p}o${n})) ${code.exit}`, `const ${p}u${n} = ${p}o${n}.units, ${p}s${n} = ${p}o${n}.scale;`);
      return `${p}u${n}, ${p}s${n}`;
    }
    case 'number': {
      const text = expression.text ?? String(expression.value);
      if (literalType(text) === 'float8') return undefined;
      const d = decimalOf(text);
      if (d === undefined || d.scale > MAX_SCALE || d.int > BigInt(SAFE) || d.int < -BigInt(SAFE)) return undefined;
      lines.push(`const ${p}u${n} = ${String(d.int)}, ${p}s${n} = ${d.scale};`);
      return `${p}u${n}, ${p}s${n}`;
    }
    case 'negate': {
      const operand = sub(expression.operand, type);
      if (operand === undefined) return undefined;
      const [u, s] = operand.split(', ');
      lines.push(`const ${p}u${n} = -${u}, ${p}s${n} = ${s};`, ...rangeCheck(`${p}u${n}`, type, code.exit));
      return `${p}u${n}, ${p}s${n}`;
    }
    case 'binary': {
      if (expression.op === '||' || (expression.op === '/' && type === 'numeric')) return undefined;
      const left = sub(expression.left, type);
      const right = sub(expression.right, type);
      if (left === undefined || right === undefined) return undefined;
      const [ua, sa] = left.split(', ');
      const [ub, sb] = right.split(', ');
      switch (expression.op) {
        case '+':
        case '-':
        case '%':
          lines.push(
            `let ${p}x${n} = ${ua}, ${p}y${n} = ${ub}, ${p}s${n} = ${sa};`,
            `if (${sa} !== ${sb}) {`,
            `if (${sa} < ${sb}) { ${p}x${n} *= POWERS[${sb} - ${sa}]; ${p}s${n} = ${sb}; } else ${p}y${n} *= POWERS[${sa} - ${sb}];`,
            `if (!(Math.abs(${p}x${n}) <= ${SAFE} && Math.abs(${p}y${n}) <= ${SAFE})) ${code.exit}`,
            '}',
            expression.op === '%' ? `if (${p}y${n} === 0) ${code.exit}\nconst ${p}u${n} = remainder(${p}x${n}, ${p}y${n});` : `const ${p}u${n} = ${p}x${n} ${expression.op} ${p}y${n};`,
            `if (!(Math.abs(${p}u${n}) <= ${SAFE})) ${code.exit}`,
          );
          break;
        case '*':
          // a double product past 2^53 is rounded, but never below 2^53: the test keeps only exact products
          lines.push(`const ${p}u${n} = ${ua} * ${ub}, ${p}s${n} = ${sa} + ${sb};`, `if (!(Math.abs(${p}u${n}) <= ${SAFE}) || ${p}s${n} > ${MAX_SCALE}) ${code.exit}`);
          break;
        case '/':
          // integers only (a numeric quotient has PostgreSQL's division scale: the exact path)
          lines.push(`if (${ub} === 0) ${code.exit}`, `const ${p}u${n} = divideTowardZero(${ua}, ${ub}), ${p}s${n} = 0;`);
          break;
        default:
          return undefined;
      }
      lines.push(...rangeCheck(`${p}u${n}`, type, code.exit));
      return `${p}u${n}, ${p}s${n}`;
    }
    case 'cast':
      return sub(expression.operand, type);
    case 'call': {
      const args = expression.args;
      switch (expression.fn) {
        case 'round': {
          const x = sub(args[0]!, 'numeric');
          const places = args[1] === undefined ? '0, 0' : sub(args[1], 'int4');
          if (x === undefined || places === undefined) return undefined;
          // the places, an int4, have no scale
          lines.push(`if (!roundScaled(${x}, ${places.split(', ')[0]}, ${p}o${n})) ${code.exit}`, `const ${p}u${n} = ${p}o${n}.units, ${p}s${n} = ${p}o${n}.scale;`);
          return `${p}u${n}, ${p}s${n}`;
        }
        case 'floor':
        case 'ceil': {
          const x = sub(args[0]!, 'numeric');
          if (x === undefined) return undefined;
          lines.push(`const ${p}u${n} = floorOrCeil(${x}, ${expression.fn === 'ceil'}), ${p}s${n} = 0;`);
          return `${p}u${n}, ${p}s${n}`;
        }
        case 'abs': {
          const x = sub(args[0]!, type);
          if (x === undefined) return undefined;
          const [u, s] = x.split(', ');
          lines.push(`const ${p}u${n} = Math.abs(${u}), ${p}s${n} = ${s};`, ...rangeCheck(`${p}u${n}`, type, code.exit));
          return `${p}u${n}, ${p}s${n}`;
        }
        default:
          return undefined;
      }
    }
    default:
      return undefined;
  }
}

/** A value of type `from` read as type `to`, both exact types: to an integer type, rounded half away from zero and checked (as `convert`). */
function scaledAs<T>(value: string, from: ValueType, to: ValueType, code: ScaledCode<T>): string {
  if (from === to || to === 'numeric') return value;
  const n = code.scratch++;
  const p = code.prefix;
  const [u, s] = value.split(', ');
  code.lines.push(`let ${p}u${n} = ${u};`, `if (${s} !== 0) { if (!roundScaled(${u}, ${s}, 0, ${p}o${n})) ${code.exit} ${p}u${n} = ${p}o${n}.units; }`, ...rangeCheck(`${p}u${n}`, to, code.exit));
  return `${p}u${n}, 0`;
}

/** A test that leaves the scaled path for an integer out of its type's range (every integer below 2^53 is within int8's). */
function rangeCheck(units: string, type: ValueType, exit: string): string[] {
  return type === 'int4' ? [`if (${units} < ${-(2 ** 31)} || ${units} > ${2 ** 31 - 1}) ${exit}`] : [];
}

// ---------------------------------------------------------------- conditions

/** A condition's truth for an item, SQL's three-valued logic (undefined: unknown). */
export function conditionTest<T>(condition: Condition<Operand>, leaves: Leaves<T>): (item: T) => boolean | undefined {
  switch (condition.kind) {
    case 'comparison':
      return comparisonTest(condition.op, condition.left, condition.right, leaves);
    case 'eq':
      return condition.value.kind === 'null' ? isNullTest(condition.field, leaves, true) : comparisonTest('eq', condition.field, condition.value, leaves);
    case 'compare':
      if (condition.value.kind === 'null') return condition.op === 'ne' ? isNullTest(condition.field, leaves, false) : () => undefined;
      return comparisonTest(condition.op, condition.field, condition.value, leaves);
    case 'in': {
      const tests = condition.values.map((value: Value) => comparisonTest('eq', condition.field, value, leaves));
      return (item) => {
        let result: boolean | undefined = false;
        for (const test of tests) {
          const t = test(item);
          if (t === true) return true;
          if (t === undefined) result = undefined;
        }
        return result;
      };
    }
    case 'between': {
      const low = comparisonTest('gte', condition.field, condition.low, leaves);
      const high = comparisonTest('lte', condition.field, condition.high, leaves);
      return (item) => and(low(item), high(item));
    }
    case 'like': {
      const read = compileExpression(condition.field, leaves).run;
      const pattern = condition.pattern.kind === 'string' ? condition.pattern.value : '';
      const regex = likeRegExp(pattern, condition.ignoreCase);
      return (item) => {
        const v = read(item);
        return v === null ? undefined : regex.test(String(toText(v)));
      };
    }
    case 'is-null':
      return isNullTest(condition.field, leaves, true);
    case 'not': {
      const inner = conditionTest(condition.condition, leaves);
      return (item) => {
        const t = inner(item);
        return t === undefined ? undefined : !t;
      };
    }
    case 'and':
    case 'or': {
      const members = condition.conditions.map((member) => conditionTest(member, leaves));
      const isAnd = condition.kind === 'and';
      return (item) => {
        let result: boolean | undefined = isAnd;
        for (const member of members) {
          const t = member(item);
          if (t === !isAnd) return t;
          if (t === undefined) result = undefined;
        }
        return result;
      };
    }
    default:
      return assertNever(condition, 'condition');
  }
}

function and(a: boolean | undefined, b: boolean | undefined): boolean | undefined {
  if (a === false || b === false) return false;
  return a === undefined || b === undefined ? undefined : true;
}

function isNullTest<T>(operand: Expression, leaves: Leaves<T>, wanted: boolean): (item: T) => boolean {
  const read = compileExpression(operand, leaves).run;
  return (item) => (read(item) === null) === wanted;
}

function likeRegExp(pattern: string, ignoreCase: boolean): RegExp {
  let source = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '\\' && i + 1 < pattern.length) source += pattern[++i]!.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
    else if (c === '%') source += '[\\s\\S]*';
    else if (c === '_') source += '[\\s\\S]';
    else source += c.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
  }
  return new RegExp(`^${source}$`, ignoreCase ? 'iu' : 'u');
}

/**
 * `left op right`: both sides read as one type (the numbers' wider, a
 * literal as the other side's type); text with a number is TYPE_MISMATCH,
 * as PostgreSQL has no such comparison.
 */
function comparisonTest<T>(op: 'eq' | 'ne' | 'lt' | 'lte' | 'gt' | 'gte', left: Expression, right: Expression, leaves: Leaves<T>): (item: T) => boolean | undefined {
  const typeOf = (e: Expression): ValueType => expressionType(e, (leaf) => leaves.type(leaf));
  const lt = typeOf(left);
  const rt = typeOf(right);
  let common: ValueType;
  if (lt === 'unknown') common = rt === 'unknown' ? 'text' : rt;
  else if (rt === 'unknown') common = lt;
  else if (isNumber(lt) && isNumber(rt)) common = lt === 'float8' || rt === 'float8' ? 'float8' : lt === 'numeric' || rt === 'numeric' ? 'numeric' : 'int8';
  else if (isNumber(lt) !== isNumber(rt)) {
    // a number literal with a text field reads as the field's text would be compared before expressions: refused
    throw queryError('TYPE_MISMATCH', { start: left.span.start, end: right.span.end }, ['a comparison', lt, rt], { hint: `cast one side: cast(x as ${isNumber(lt) ? lt : rt})` });
  } else common = lt;
  if (common === 'int4' || common === 'int8') common = 'numeric';
  const a = compileExpression(left, leaves).run;
  const b = compileExpression(right, leaves).run;
  return (item) => {
    const x = convert(a(item), lt, common);
    const y = convert(b(item), rt, common);
    if (x === null || y === null) return undefined;
    const c = compareAs(x, y, common);
    switch (op) {
      case 'eq':
        return c === 0;
      case 'ne':
        return c !== 0;
      case 'lt':
        return c < 0;
      case 'lte':
        return c <= 0;
      case 'gt':
        return c > 0;
      case 'gte':
        return c >= 0;
      default:
        return assertNever(op, 'operator');
    }
  };
}

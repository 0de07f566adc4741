/**
 * Exact decimal arithmetic for the aggregates PostgreSQL computes exactly
 * (`sum` of integers and `numeric`, `bucket(f, w)` = `floor(f / w) * w` on
 * `numeric`): a decimal is an integer and a power of ten. Values a double
 * holds come back as numbers; the others as their decimal text, as the
 * loaders keep an `int8` or `numeric` beyond a double (docs/semantics.md).
 */

/** `int / 10^scale` */
export interface Decimal {
  readonly int: bigint;
  readonly scale: number;
}

const DECIMAL = /^\s*([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?\s*$/;

/**
 * A number, or the decimal text of one, as a decimal; undefined for
 * anything else (NaN, infinities, other text).
 * @example decimalOf(0.1) // { int: 1n, scale: 1 }; decimalOf('9007199254740993') // { int: 9007199254740993n, scale: 0 }
 */
export function decimalOf(value: unknown): Decimal | undefined {
  let text: string;
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) return undefined;
    if (Number.isSafeInteger(value)) return { int: BigInt(value), scale: 0 };
    // A double of few decimals (a price, a grade): its digits by a round trip, without writing and reading its text.
    // The fewest decimals whose value reads back as this double are its shortest text's (String(value)): below
    // 10^15 units of the last place, two decimals that many places apart never read as one double.
    for (let scale = 1, power = 10; scale <= 10; scale++, power *= 10) {
      const units = Math.round(value * power);
      if (Math.abs(units) >= 1e15) break;
      if (units / power === value) return { int: BigInt(units), scale };
    }
    text = String(value);
  } else if (typeof value === 'string') {
    text = value;
  } else {
    return undefined;
  }
  const m = DECIMAL.exec(text);
  if (m === null || ((m[2] ?? '') === '' && (m[3] ?? '') === '')) return undefined;
  const fraction = m[3] ?? '';
  const exponent = Number(m[4] ?? 0);
  let int = BigInt(`${m[1] === '-' ? '-' : ''}${m[2] || '0'}${fraction}`);
  let scale = fraction.length - exponent;
  if (scale < 0) {
    int *= 10n ** BigInt(-scale);
    scale = 0;
  }
  return { int, scale };
}

/** PostgreSQL's `numeric`: at most 131,072 digits before the point and 16,383 after (`NUMERIC_DSCALE_MAX`). */
export const NUMERIC_MAX_WHOLE_DIGITS = 131_072;
export const NUMERIC_MAX_SCALE = 16_383;

/**
 * Whether PostgreSQL's `numeric` holds the number a decimal text writes
 * (`'1e400'::numeric` is 1 and 400 zeros; `1e131072` overflows it).
 * @example withinNumeric('1e400') // true; withinNumeric('1e131072') // false
 */
export function withinNumeric(text: string): boolean {
  // A text without an exponent has no more digits on either side than characters.
  if (text.length <= NUMERIC_MAX_SCALE && !/[eE]/.test(text)) return true;
  const m = DECIMAL.exec(text);
  if (m === null) return false;
  const fraction = m[3] ?? '';
  const exponent = Number(m[4] ?? 0);
  const significant = `${m[2] ?? ''}${fraction}`.replace(/^0+/, '');
  return significant.length + exponent - fraction.length <= NUMERIC_MAX_WHOLE_DIGITS && fraction.length - exponent <= NUMERIC_MAX_SCALE;
}

function rescale(d: Decimal, scale: number): bigint {
  return scale === d.scale ? d.int : d.int * 10n ** BigInt(scale - d.scale);
}

/** `a + b`, exactly. */
export function addDecimal(a: Decimal, b: Decimal): Decimal {
  const scale = Math.max(a.scale, b.scale);
  return { int: rescale(a, scale) + rescale(b, scale), scale };
}

/** Floor division of integers (BigInt's `/` truncates toward zero). */
function floorDiv(a: bigint, b: bigint): bigint {
  const q = a / b;
  return (a % b !== 0n && (a < 0n) !== (b < 0n)) ? q - 1n : q;
}

/**
 * `floor(f / w) * w`, exactly (PostgreSQL's on `numeric`).
 * @example floorBucket(decimalOf(0.3)!, decimalOf(0.1)!) // 0.3 (doubles give 0.2)
 */
export function floorBucket(f: Decimal, w: Decimal): Decimal {
  const scale = Math.max(f.scale, w.scale);
  const width = rescale(w, scale);
  return { int: floorDiv(rescale(f, scale), width) * width, scale };
}

/**
 * The decimal's text, without trailing zeros after the point.
 * @example decimalText({ int: 1230n, scale: 3 }) // "1.23"
 */
export function decimalText(d: Decimal): string {
  const negative = d.int < 0n;
  let digits = (negative ? -d.int : d.int).toString();
  if (d.scale > 0) {
    digits = digits.padStart(d.scale + 1, '0');
    const whole = digits.slice(0, digits.length - d.scale);
    const fraction = digits.slice(digits.length - d.scale).replace(/0+$/, '');
    digits = fraction === '' ? whole : `${whole}.${fraction}`;
  }
  return negative && digits !== '0' ? `-${digits}` : digits;
}

/**
 * The decimal as a value: a number when a double holds it exactly, else
 * its text (as the loaders keep such a number).
 * @example decimalValue({ int: 3n, scale: 1 }) // 0.3; decimalValue({ int: 9007199254740993n, scale: 0 }) // '9007199254740993'
 */
export function decimalValue(d: Decimal): number | string {
  // Fewer than 16 digits: the double nearest the quotient is the one its text reads as, and reads back exactly.
  if (d.scale <= 22 && d.int > -SIXTEEN_DIGITS && d.int < SIXTEEN_DIGITS) return Number(d.int) / 10 ** d.scale;
  const text = decimalText(d);
  const n = Number(text);
  return decimalOf(n) !== undefined && sameDecimal(decimalOf(n)!, d) ? n : text;
}

const SIXTEEN_DIGITS = 10n ** 15n;

function sameDecimal(a: Decimal, b: Decimal): boolean {
  const scale = Math.max(a.scale, b.scale);
  return rescale(a, scale) === rescale(b, scale);
}

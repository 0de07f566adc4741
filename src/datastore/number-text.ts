/**
 * Numbers as PostgreSQL prints them (docs/engines.md, Numbers in the
 * output): a `numeric` with its scale (`2.0`, `10.50`), a `float8` as the
 * shortest text that reads back, with an exponent below 1e-4 and from 1e15
 * (`1e+20`, `1.5e-07`). A record holds such a number as a JavaScript number
 * when that writes the same text, else as the text, as the PostgreSQL
 * engines keep what they read (`src/engine/sql/records.ts`).
 */
import type { Decimal } from './decimal.js';

const SIXTEEN_DIGITS = 10n ** 15n;

/**
 * The decimal's text with its scale, as PostgreSQL prints a `numeric`
 * (trailing zeros kept; no negative zero).
 * @example scaledText({ int: 20n, scale: 1 }) // "2.0"; scaledText({ int: -5n, scale: 3 }) // "-0.005"
 */
export function scaledText(d: Decimal): string {
  const negative = d.int < 0n;
  let digits = (negative ? -d.int : d.int).toString();
  if (d.scale > 0) {
    digits = digits.padStart(d.scale + 1, '0');
    digits = `${digits.slice(0, digits.length - d.scale)}.${digits.slice(digits.length - d.scale)}`;
  }
  return negative && /[1-9]/.test(digits) ? `-${digits}` : digits;
}

/**
 * The decimal as a record holds a `numeric`: a number when the number
 * writes the decimal's text (`2.5`), else that text (`"2.0"`, `"10.50"`,
 * an integer past 2^53).
 * @example scaledValue({ int: 25n, scale: 1 }) // 2.5; scaledValue({ int: 20n, scale: 1 }) // "2.0"
 */
export function scaledValue(d: Decimal): number | string {
  if (d.int > -SIXTEEN_DIGITS && d.int < SIXTEEN_DIGITS && d.scale <= 22) {
    // Under 16 digits the double nearest the quotient writes the decimal without its trailing zeros (two
    // decimals of at most 15 digits are never one double): without a trailing zero, that is its text,
    // unless JavaScript writes it with an exponent (below 1e-6).
    const m = Number(d.int);
    const n = m / 10 ** d.scale;
    if (d.scale === 0 || (m % 10 !== 0 && Math.abs(n) >= 1e-6)) return n;
    const shortest = String(n);
    if (!shortest.includes('e')) {
      const point = shortest.indexOf('.');
      const places = point < 0 ? 0 : shortest.length - point - 1;
      return `${shortest}${point < 0 ? '.' : ''}${'0'.repeat(d.scale - places)}`;
    }
  }
  const text = scaledText(d);
  const n = Number(text);
  return String(n) === text ? n : text;
}

/**
 * A double as PostgreSQL prints a `float8` (`extra_float_digits` 1, its
 * default since 12): the shortest text that reads back, with an exponent of
 * at least two digits below 1e-4 and from 1e15.
 * @example floatText(1e20) // "1e+20"; floatText(1.5e-7) // "1.5e-07"; floatText(0.1) // "0.1"
 */
export function floatText(n: number): string {
  if (Number.isNaN(n)) return 'NaN';
  if (!Number.isFinite(n)) return n > 0 ? 'Infinity' : '-Infinity';
  if (Object.is(n, -0)) return '-0';
  const abs = Math.abs(n);
  if (abs !== 0 && (abs < 1e-4 || abs >= 1e15)) {
    const [mantissa, exponent] = n.toExponential().split('e') as [string, string];
    const e = Number(exponent);
    return `${mantissa}e${e < 0 ? '-' : '+'}${String(Math.abs(e)).padStart(2, '0')}`;
  }
  return String(n);
}

/**
 * A float8 as a record holds it: the number, or PostgreSQL's text where
 * that differs from the number's (`"1e+20"`, `"1.5e-07"`, `"-0"`).
 * @example floatValue(0.5) // 0.5; floatValue(1e20) // "1e+20"
 */
export function floatValue(n: number): number | string {
  const text = floatText(n);
  return text === String(n) ? n : text;
}

/**
 * A numeric as a record holds it (src/datastore/number-text.ts): the number
 * when it writes the decimal's text with its scale, else that text; checked
 * against the decimal's digits written out by hand here.
 */
import fc from 'fast-check';
import { expect, it } from 'vitest';
import { scaledValue } from '../../src/datastore/number-text.js';
import { propertyParameters } from '../helpers/arbitraries.js';

/** The decimal `int / 10^scale` written out digit by digit, its scale kept (PostgreSQL's numeric text). */
function byHand(int: bigint, scale: number): string {
  const digits = (int < 0n ? -int : int).toString().padStart(scale + 1, '0');
  const text = scale === 0 ? digits : `${digits.slice(0, digits.length - scale)}.${digits.slice(digits.length - scale)}`;
  return int < 0n ? `-${text}` : text;
}

it('writes the decimal with its scale, as a number only where the number writes that text', () => {
  const decimal = fc.record({
    int: fc.oneof(fc.bigInt({ min: -(10n ** 15n), max: 10n ** 15n }), fc.bigInt({ min: -(10n ** 30n), max: 10n ** 30n }), fc.integer({ min: -999, max: 999 }).map((n) => BigInt(n) * 1000n)),
    scale: fc.integer({ min: 0, max: 25 }),
  });
  fc.assert(
    fc.property(decimal, ({ int, scale }) => {
      const value = scaledValue({ int, scale });
      const want = byHand(int, scale);
      if (typeof value === 'number') expect(String(value)).toBe(want);
      else expect(value).toBe(want);
    }),
    propertyParameters(2000),
  );
});

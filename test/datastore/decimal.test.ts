/**
 * The exact decimals of src/datastore/decimal.ts read a double by a round
 * trip and write one by a division: both must give what the double's own
 * shortest text (JavaScript's `String`, not ckql's) says, for any double.
 */
import fc from 'fast-check';
import { expect, test } from 'vitest';
import { decimalOf, decimalText, decimalValue } from '../../src/datastore/decimal.js';
import { propertyParameters } from '../helpers/arbitraries.js';

/** Doubles as data holds them: prices and grades of a few decimals, and any double at all. */
const doubles = fc.oneof(
  fc.tuple(fc.integer({ min: -1e9, max: 1e9 }), fc.integer({ min: 0, max: 10 })).map(([units, places]) => units / 10 ** places),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
);

test('decimalOf(a double) is the decimal its shortest text writes', () => {
  fc.assert(
    fc.property(doubles, (x) => {
      expect(decimalOf(x)).toEqual(decimalOf(String(x)));
    }),
    propertyParameters(),
  );
  // the cases a round trip could get wrong: a product off by one in the last place, and a tiny fraction
  expect(decimalOf(1.005)).toEqual({ int: 1005n, scale: 3 });
  expect(decimalOf(0.1 + 0.2)).toEqual(decimalOf('0.30000000000000004'));
  expect(decimalOf(1e-7)).toEqual({ int: 1n, scale: 7 });
});

test('decimalValue writes a decimal as the number its text reads as, or as the text where no double holds it', () => {
  fc.assert(
    fc.property(fc.bigInt({ min: -(10n ** 20n), max: 10n ** 20n }), fc.integer({ min: 0, max: 25 }), (int, scale) => {
      const d = { int, scale };
      const text = decimalText(d);
      const n = Number(text);
      const exact = decimalOf(n) !== undefined && decimalOf(n)!.int * 10n ** BigInt(Math.max(0, scale - decimalOf(n)!.scale)) === int * 10n ** BigInt(Math.max(0, decimalOf(n)!.scale - scale));
      expect(decimalValue(d)).toEqual(exact ? n : text);
    }),
    propertyParameters(),
  );
});

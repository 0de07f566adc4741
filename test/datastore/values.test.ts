import { describe, expect, test } from 'vitest';
import fc from 'fast-check';
import {
  canonicalText, compareDecimal, compareNumberColumn, compareNumbers, compareText, compareValues, normalizeQueryText, normalizeText, searchableText, valuesEqual,
} from '../../src/datastore/values.js';
import { anyCodePoint, propertyParameters, scaledRuns } from '../helpers/arbitraries.js';

describe('canonicalText', () => {
  test.each([
    ['text', 'Active', 'Active'],
    ['integer', 2020, '2020'],
    ['decimal', 2.5, '2.5'],
    ['negative zero', -0, '0'],
    ['large number', 1e21, '1e+21'],
    ['true', true, 'true'],
    ['false', false, 'false'],
    ['array', [1, 'a', null], '[1,"a",null]'],
    ['object keeps insertion order', { b: 1, a: [true] }, '{"b":1,"a":[true]}'],
  ])('%s', (_, value, text) => {
    expect(canonicalText(value)).toBe(text);
  });

  test('null and missing have no text', () => {
    expect(canonicalText(null)).toBeNull();
    expect(canonicalText(undefined)).toBeNull();
  });
});

describe('valuesEqual', () => {
  test('a number equals its text', () => {
    expect(valuesEqual(2020, '2020')).toBe(true);
    expect(valuesEqual('2020', 2020)).toBe(true);
    expect(valuesEqual(2.5, '2.50')).toBe(false);
    expect(valuesEqual(10, '10.0')).toBe(false);
  });

  test('case-sensitive', () => {
    expect(valuesEqual('Active', 'active')).toBe(false);
    expect(valuesEqual('Active', 'Active')).toBe(true);
  });

  test('null equals only null or missing', () => {
    expect(valuesEqual(null, null)).toBe(true);
    expect(valuesEqual(null, undefined)).toBe(true);
    expect(valuesEqual(null, 'null')).toBe(false);
    expect(valuesEqual('null', null)).toBe(false);
    expect(valuesEqual(null, '')).toBe(false);
    expect(valuesEqual(null, 0)).toBe(false);
  });

  test('booleans equal their text', () => {
    expect(valuesEqual(true, 'true')).toBe(true);
    expect(valuesEqual(false, 'False')).toBe(false);
  });

  test('json values compare by JSON text', () => {
    expect(valuesEqual({ a: 1 }, '{"a":1}')).toBe(true);
    expect(valuesEqual([1, 2], [1, 2])).toBe(true);
    expect(valuesEqual({ a: 1, b: 2 }, { b: 2, a: 1 })).toBe(false);
  });

  test('-0 equals 0 and "0"', () => {
    expect(valuesEqual(-0, 0)).toBe(true);
    expect(valuesEqual(-0, '0')).toBe(true);
    expect(valuesEqual(-0, '-0')).toBe(false);
  });

  test('agrees with comparing canonical texts, for any JSON values', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.jsonValue(), (a, b) => {
        expect(valuesEqual(a, b)).toBe(canonicalText(a) === canonicalText(b));
      }),
      propertyParameters(scaledRuns(500)),
    );
  });
});

describe('compareText', () => {
  test('orders by code point, not by UTF-16 unit', () => {
    // U+FF5E is a single unit 0xFF5E; U+1F600 is the surrogate pair D83D DE00: `<` gets this wrong.
    expect('\uFF5E' < '\u{1F600}').toBe(false);
    expect(compareText('\uFF5E', '\u{1F600}')).toBeLessThan(0);
    expect(compareText('\u{1F600}', '\uFF5E')).toBeGreaterThan(0);
  });

  test('upper case before lower case (C collation), prefix first', () => {
    expect(compareText('B', 'a')).toBeLessThan(0);
    expect(compareText('ab', 'abc')).toBeLessThan(0);
    expect(compareText('x', 'x')).toBe(0);
  });

  test('agrees with comparing code point arrays', () => {
    const byCodePoints = (a: string, b: string): number => {
      const x = [...a].map((c) => c.codePointAt(0) as number);
      const y = [...b].map((c) => c.codePointAt(0) as number);
      for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return (x[i] as number) - (y[i] as number);
      return x.length - y.length;
    };
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme' }), fc.string({ unit: 'grapheme' }), (a, b) => {
        expect(Math.sign(compareText(a, b))).toBe(Math.sign(byCodePoints(a, b)));
      }),
      propertyParameters(scaledRuns(1000)),
    );
  });
});

describe('compareValues', () => {
  test('numbers numerically, nulls last', () => {
    expect([10, null, 2, undefined, -1].sort(compareValues)).toEqual([-1, 2, 10, null, undefined]);
  });

  test('booleans false < true', () => {
    expect(compareValues(false, true)).toBeLessThan(0);
    expect(compareValues(true, true)).toBe(0);
  });

  test('mixed types: boolean < number < text < json < null', () => {
    const values = [null, { a: 1 }, 'b', 3, true, [0], 'a', false, 1];
    expect([...values].sort(compareValues)).toEqual([false, true, 1, 3, 'a', 'b', [0], { a: 1 }, null]);
  });

  test('NaN after every other number', () => {
    expect(compareNumbers(Number.NaN, Infinity)).toBeGreaterThan(0);
    expect(compareNumbers(Number.NaN, Number.NaN)).toBe(0);
  });

  test('is a total order: antisymmetric and transitive over mixed values', () => {
    const value = fc.oneof(fc.constant(null), fc.boolean(), fc.double({ noNaN: true }), fc.string(), fc.jsonValue());
    fc.assert(
      fc.property(value, value, value, (a, b, c) => {
        expect(Math.sign(compareValues(a, b)) + Math.sign(compareValues(b, a))).toBe(0);
        if (compareValues(a, b) <= 0 && compareValues(b, c) <= 0) expect(compareValues(a, c)).toBeLessThanOrEqual(0);
      }),
      propertyParameters(scaledRuns(1000)),
    );
  });
});

describe('text normalization', () => {
  test('NFKC and lower case', () => {
    expect(normalizeText('Ｍａｔｈ')).toBe('math');
    expect(normalizeText('ﬁle')).toBe('file');
    expect(normalizeText('Cafe\u0301')).toBe('café');
    expect(normalizeText('STRASSE')).toBe('strasse');
  });

  test('q: white space runs fold to one space and are trimmed', () => {
    expect(normalizeQueryText('  Linear\n\t ALGEBRA  ')).toBe('linear algebra');
    expect(normalizeQueryText('a\u00a0\u3000b')).toBe('a b');
    expect(normalizeQueryText(' \n ')).toBe('');
  });

  test('q never holds a newline, whatever the input', () => {
    fc.assert(
      fc.property(fc.string({ unit: anyCodePoint }), (s) => {
        expect(normalizeQueryText(s)).not.toMatch(/[\n\t\r]/);
      }),
      propertyParameters(scaledRuns(500)),
    );
  });

  test('searchableText: canonical text normalized; null has none', () => {
    expect(searchableText('ÀB')).toBe('àb');
    expect(searchableText(2.5)).toBe('2.5');
    expect(searchableText(true)).toBe('true');
    expect(searchableText(null)).toBeNull();
  });
});

describe('compareDecimal', () => {
  test.each([
    ['9007199254740993', 9007199254740992, 1],
    [9007199254740992, '9007199254740993', -1],
    ['-9007199254740993', 5, -1],
    [0.1, '0.10000000000000000001', -1],
    ['1.0000000000000000001', 1, 1],
    ['12345678901234567890.5', 1e19, 1],
    ['12345678901234567890.5', 2e19, -1],
    ['-0.0', 0, 0],
    ['007', 7, 0],
    ['1e3', 1000, 0],
    [1e21, '999999999999999999999', 1],
    ['-10', '-9', -1],
    [Infinity, '1e400', 1],
    [-Infinity, '-1', -1],
    ['2.50', 2.5, 0],
    [' 42 ', 42, 0],
    ['.5', 0.5, 0],
  ] as const)('%s vs %s', (a, b, sign) => {
    expect(Math.sign(compareDecimal(a, b))).toBe(sign);
    expect(Math.sign(compareDecimal(b, a))).toBe(-sign || 0);
  });
});

describe('compareNumberColumn', () => {
  test('orders the text of a number no double holds by its value among numbers, and anything else as compareValues does', () => {
    const values = ['9007199254740993', 5, '-9007199254740993', 9007199254740992, null, '1.0000000000000000001', 'abc', true];
    expect([...values].sort(compareNumberColumn)).toEqual([
      true, '-9007199254740993', '1.0000000000000000001', 5, 9007199254740992, '9007199254740993', 'abc', null,
    ]);
    // Number text is ordered by its value even where a double holds it: the loader keeps every integer beyond 2^53 as its
    // text (2^53 + 2 and 2^64 are doubles), and a declared number field may hold text such as '7'.
    expect(['18446744073709551616', '9007199254740994', 8, '7'].sort(compareNumberColumn)).toEqual(['7', 8, '9007199254740994', '18446744073709551616']);
    // NaN is above every number, the kept texts too, and below other text, so the order stays total
    expect(compareNumberColumn(Number.NaN, '9007199254740993')).toBeGreaterThan(0);
    expect(compareNumberColumn(Number.NaN, 'abc')).toBeLessThan(0);
  });

  test('is a total order that sorts numbers and number text by exact value (a BigInt reference), other values after', () => {
    // integers around 2^53 and 2^64 as doubles and as text, scaled by a power of ten to make decimals, and other values
    const integer = fc.oneof(fc.bigInt({ min: -(2n ** 65n), max: 2n ** 65n }), fc.bigInt({ min: 2n ** 53n - 20n, max: 2n ** 53n + 20n }), fc.bigInt({ min: -50n, max: 50n }));
    const number = fc.record({ n: integer, scale: fc.integer({ min: 0, max: 25 }), asDouble: fc.boolean() });
    const value = fc.oneof(number, fc.constantFrom<unknown>('abc', '1abc', null, true, false, Number.NaN));
    const textOf = (n: bigint, scale: number): string => {
      const digits = (n < 0n ? -n : n).toString().padStart(scale + 1, '0');
      const text = scale === 0 ? digits : `${digits.slice(0, -scale)}.${digits.slice(-scale)}`;
      return n < 0n ? `-${text}` : text;
    };
    // the hand reference: a number is the decimal n / 10^scale, compared across scales by BigInt cross-multiplication
    type Item = { n: bigint; scale: number; stored: unknown } | { other: unknown };
    const items = (raw: unknown[]): Item[] =>
      raw.map((v) => {
        if (typeof v !== 'object' || v === null || !('n' in v)) return { other: v };
        const { n, scale, asDouble } = v as { n: bigint; scale: number; asDouble: boolean };
        const text = textOf(n, scale);
        // a double only where it holds the decimal exactly (its shortest text reads back as the same value)
        const double = Number(text);
        const stored = asDouble && compareDecimal(double, text) === 0 ? double : text;
        return { n, scale, stored };
      });
    const rank = (item: Item): number => ('other' in item ? (typeof item.other === 'boolean' ? 0 : item.other === null ? 4 : Number.isNaN(item.other) ? 2 : 3) : 1);
    const reference = (a: Item, b: Item): number => {
      if (rank(a) !== rank(b)) return rank(a) - rank(b);
      if ('other' in a || 'other' in b) return compareValues((a as { other: unknown }).other, (b as { other: unknown }).other);
      const x = a.n * 10n ** BigInt(b.scale);
      const y = b.n * 10n ** BigInt(a.scale);
      return x < y ? -1 : x > y ? 1 : 0;
    };
    fc.assert(
      fc.property(fc.array(value, { maxLength: 30 }), (raw) => {
        const list = items(raw);
        const stored = (item: Item): unknown => ('other' in item ? item.other : item.stored);
        for (const a of list) for (const b of list) expect(Math.sign(compareNumberColumn(stored(a), stored(b))) || 0, `${String(stored(a))} vs ${String(stored(b))}`).toBe(Math.sign(reference(a, b)));
      }),
      propertyParameters(scaledRuns(200)),
    );
  });
});

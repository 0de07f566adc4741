/**
 * `sum` and `avg` of `numeric` on the memory engine (src/engine/memory/aggregate.ts):
 * exact as PostgreSQL's numeric sum, whatever digits the values have. A
 * double is the decimal its shortest text says (docs/semantics.md), so the
 * sum is checked against decimal arithmetic on BigInt written here, and
 * against PostgreSQL's own `sum(numeric)` (PGlite, and a real server when
 * CKQL_TEST_PG_URL names one) over the same generated values.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Aggregate } from '../../../src/ast.js';
import type { JsonValue, Row } from '../../../src/datastore/types.js';
import type { Engine } from '../../../src/engine/types.js';
import { makeAggregator } from '../../../src/engine/memory/aggregate.js';
import { fieldRead } from '../../../src/engine/memory/row-shape.js';
import { memoryEngine } from '../../../src/engine/memory/engine.js';
import { parse } from '../../../src/syntax/parse.js';
import { createRandom } from '../../../scripts/generate-demo-data.js';
import { engineNames, openTestEngines, typedTable } from '../sql/engines.js';
import type { TestEngines } from '../sql/engines.js';

const span = { start: 0, end: 0 };
const field = { kind: 'field', span, name: 'v' } as const;
const sum = { kind: 'aggregate', span, fn: 'sum', field } as Aggregate;
const avg = { kind: 'aggregate', span, fn: 'avg', field } as Aggregate;

/** A decimal text (also `1e-7`, `1.5e+21`) as digits and a scale, by hand. */
function exact(text: string): { int: bigint; scale: number } {
  const m = /^(-?)(\d+)(?:\.(\d+))?(?:e([+-]\d+))?$/.exec(text);
  if (m === null) throw new Error(`not a decimal: ${text}`);
  const fraction = m[3] ?? '';
  let int = BigInt(`${m[1]}${m[2]}${fraction}`);
  let scale = fraction.length - Number(m[4] ?? 0);
  if (scale < 0) {
    int *= 10n ** BigInt(-scale);
    scale = 0;
  }
  return { int, scale };
}

/** The exact sum of values (numbers by their shortest text, as the loaders read them) as PostgreSQL's numeric text: the values' largest scale. */
function exactSum(values: readonly (number | string)[]): string {
  const parts = values.map((v) => exact(String(v)));
  const scale = Math.max(0, ...parts.map((p) => p.scale));
  const total = parts.reduce((a, p) => a + p.int * 10n ** BigInt(scale - p.scale), 0n);
  const negative = total < 0n;
  const digits = (negative ? -total : total).toString().padStart(scale + 1, '0');
  const whole = digits.slice(0, digits.length - scale);
  const fraction = digits.slice(digits.length - scale);
  const text = fraction === '' ? whole : `${whole}.${fraction}`;
  return negative && /[1-9]/.test(text) ? `-${text}` : text;
}

/** The sum as ckql answers it: a number where the number writes the same text, else the text (`"2.50"`). */
function asValue(text: string): number | string {
  const n = Number(text);
  return String(n) === text ? n : text;
}

/** Generated values: 2-decimal prices, then every count of digits from 1 to 17 at many magnitudes, both signs. */
function generated(count: number, seed: number): number[] {
  const next = createRandom(seed);
  return Array.from({ length: count }, (_, i) => {
    if (i % 3 === 0) return Math.round(next() * 100_000) / 100;
    const digits = 1 + Math.floor(next() * 17);
    const magnitude = 10 ** (Math.floor(next() * 20) - 8);
    const v = Number((next() * magnitude).toPrecision(digits));
    return next() < 0.3 ? -v : v;
  });
}

function sumOf(values: readonly JsonValue[], group = (_: number) => 'g' as JsonValue): Row[] {
  const aggregator = makeAggregator<Row>({
    keys: [fieldRead('k')],
    aggregates: [
      { aggregate: sum, read: fieldRead('v'), type: 'numeric' },
      { aggregate: avg, read: fieldRead('v'), type: 'numeric' },
    ],
  });
  aggregator.addAll(values.map((v, i) => ({ k: group(i), v })));
  return aggregator.groups();
}

describe('the exact sum of numeric values', () => {
  it('is the decimal sum of 2-decimal prices, and avg that sum ÷ n', () => {
    const next = createRandom(3);
    const prices = Array.from({ length: 20_000 }, () => Math.round(next() * 10_000) / 100);
    const [row] = sumOf(prices);
    const want = exactSum(prices);
    expect(row!['a0']).toBe(asValue(want));
    // avg is numeric's sum ÷ n (its digits are PostgreSQL's: checked below)
    expect(Number(row!['a1'])).toBeCloseTo(Number(want) / prices.length, 10);
  });

  it('is exact for values of every count of digits, each group alone, whatever the order', () => {
    for (const seed of [1, 2, 3, 4, 5, 6, 7, 8]) {
      const values = generated(400, seed);
      const groups = sumOf(values, (i) => `g${i % 4}`);
      for (const row of groups) {
        const mine = values.filter((_, i) => `g${i % 4}` === row['k0']);
        expect(row['a0'], `seed ${seed}, ${String(row['k0'])}: ${mine.join(' + ')}`).toBe(asValue(exactSum(mine)));
      }
      const reversed = sumOf([...values].reverse());
      expect(reversed[0]!['a0'], `seed ${seed}`).toBe(asValue(exactSum(values)));
    }
  });

  it('adds a few values whose digits a double only just holds exactly', () => {
    // Each has 15–17 significant digits: their exact sum is not the double nearest it.
    for (const values of [
      [395.7861358, 8.56393558237871, 70.0735224804],
      [21540, -113583.63292, 8054.085193003808],
      [0.1, 0.2, 0.30000000000000004],
      [1e-7, 123456789012.345, -0.000001],
    ]) {
      expect(sumOf(values)[0]!['a0'], values.join(' + ')).toBe(asValue(exactSum(values)));
    }
  });

  it('crosses 2^53 in scaled units, and mixes in numbers kept as text and integers past a double', () => {
    const values: (number | string)[] = [
      ...Array.from({ length: 50 }, () => 90071992547409.91),
      '12345678901234567890.123456789012345678901',
      2 ** 60,
      -0.01,
      '-0.000000000000000000000000000001',
      7,
      ...Array.from({ length: 50 }, () => 0.05),
    ];
    expect(sumOf(values)[0]!['a0']).toBe(asValue(exactSum(values)));
    expect(sumOf([...values].reverse())[0]!['a0']).toBe(asValue(exactSum(values)));
  });

  it('is the hand-written BigInt sum of generated decimals, in every group, also where the units pass 2^53', () => {
    // cents, decimals of up to 18 places and 2^62 units (their double's shortest text), values near 2^53, text
    const valueArb = fc.oneof(
      fc.integer({ min: -10_000_000, max: 10_000_000 }).map((m) => m / 100),
      fc.tuple(fc.bigInt({ min: -(2n ** 62n), max: 2n ** 62n }), fc.integer({ min: 0, max: 18 })).map(([m, p]) => Number(m) / 10 ** p),
      fc.integer({ min: -1000, max: 1000 }).map((d) => 9007199254740991 + d),
      fc.constantFrom(90071992547409.91, 0.1, 0.30000000000000004, 1e-7, 2 ** 60, -0, 1e21),
      fc.constantFrom('12345678901234567890.123456789', '-0.000000000000000000000000000001', '9007199254740993'),
    );
    fc.assert(
      fc.property(fc.array(fc.tuple(valueArb, fc.integer({ min: 0, max: 2 })), { maxLength: 60 }), (pairs) => {
        const values = pairs.map(([v]) => v);
        const groups = sumOf(values, (i) => pairs[i]![1]);
        for (const row of groups) {
          const mine = values.filter((_, i) => pairs[i]![1] === row['k0']);
          expect(row['a0']).toBe(asValue(exactSum(mine)));
        }
      }),
      { numRuns: Number(process.env.CKQL_DECIMAL_SUM_RUNS ?? 400), seed: 2_026_120_2 },
    );
  });

  it('merges the groups of keys with one text (1 and "1") exactly', () => {
    const values = generated(300, 11);
    const [row] = sumOf(values, (i) => (i % 2 === 0 ? 1 : '1'));
    expect(row!['a0']).toBe(asValue(exactSum(values)));
  });

  it('is 0 (not -0) for values that cancel, and null over no value', () => {
    expect(sumOf([-0.25, 0.25, -0])[0]!['a0']).toBe('0.00');
    expect(Object.is(sumOf([-1, 1, -0])[0]!['a0'], 0)).toBe(true);
    expect(sumOf([null, null])[0]!['a0']).toBeNull();
    expect(sumOf([null, null])[0]!['a1']).toBeNull();
  });
});

describe('PostgreSQL’s own numeric sum', () => {
  const values = [...generated(3000, 21), ...generated(3000, 22).map((v) => Math.round(v * 100) / 100)];
  const table = typedTable('prices', [['category', 'text'], ['price', 'numeric']], values.map((price, i) => ({ category: `c${i % 7}`, price })));
  const text = 'from prices group by category select category, count(*) as n, sum(price) as total, avg(price) as mean';
  let engines: TestEngines;

  beforeAll(async () => {
    engines = await openTestEngines([table]);
  });
  afterAll(async () => {
    await engines?.close();
  });

  it.each(engineNames)('the memory engine’s sums are %s’s', async (name) => {
    const rows = async (engine: Engine): Promise<Row[]> => {
      const stream = await engine.query(parse(text), { all: true });
      const out: Row[] = [];
      for await (const batch of stream.batches) out.push(...batch);
      return out;
    };
    const got = await rows(memoryEngine([table]));
    const want = await rows(engines.get(name));
    // numeric keeps its scale (trailing zeros as text) on every engine, avg at the scale of numeric division
    expect(got).toEqual(want);
  });
});

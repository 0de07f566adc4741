/**
 * The scaled path of expressions (src/engine/memory/expression.ts, "the
 * scaled path"): a record's value computed on doubles as `units / 10^scale`
 * is the exact path's (BigInt decimals, which expression.test.ts checks
 * against PostgreSQL), and an error where the exact path errs, over
 * generated decimals of every size: whole cents, 17-digit doubles that are
 * no short decimal, values and products past 2^53, negative zero, text.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Expression } from '../../../src/ast.js';
import type { ValueType } from '../../../src/compile/expression-types.js';
import type { JsonValue } from '../../../src/datastore/types.js';
import { memoryEngine } from '../../../src/engine/memory/engine.js';
import { compileExpression, outputValue } from '../../../src/engine/memory/expression.js';
import { parse } from '../../../src/syntax/parse.js';

type Item = Readonly<Record<string, JsonValue>>;
const types: Readonly<Record<string, ValueType>> = { a: 'numeric', b: 'numeric', i: 'int4', j: 'int8' };

/** A decimal of `places` places as a double (the shortest text of most has that many), or an edge value. */
const decimalArb: fc.Arbitrary<JsonValue> = fc.oneof(
  fc.tuple(fc.integer({ min: -99_999_999, max: 99_999_999 }), fc.integer({ min: 0, max: 6 })).map(([m, p]) => m / 10 ** p),
  fc.tuple(fc.bigInt({ min: -(2n ** 60n), max: 2n ** 60n }), fc.integer({ min: 0, max: 18 })).map(([m, p]) => Number(m) / 10 ** p),
  fc.double({ noNaN: true, noDefaultInfinity: true, min: -1e25, max: 1e25 }),
  fc.constantFrom(0, -0, 0.1 + 0.2, 9007199254740991, -9007199254740991, 9007199254740992, 2 ** 60, 1e-7, 5e-5, 0.5, -0.5, 2.5, 1e15, 999999999999999.9, 1e21),
  fc.constantFrom(null, '12.5', '9007199254740993', '1e400'),
);
const intArb: fc.Arbitrary<JsonValue> = fc.oneof(
  fc.integer({ min: -1000, max: 1000 }),
  fc.constantFrom(0, 2147483647, -2147483648, 9007199254740991, 3_037_000_499, null),
);
const itemArb: fc.Arbitrary<Item> = fc.record({ a: decimalArb, b: decimalArb, i: intArb, j: intArb });

const leafArb = fc.constantFrom('a', 'b', 'i', 'j', 'a', 'b', '2', '0', '0.05', '100.0', '1.005', '3', '9007199254740991', '0.000000000000000000001');
const expressionArb: fc.Arbitrary<string> = fc.letrec<{ e: string }>((tie) => ({
  e: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    leafArb,
    fc.tuple(tie('e'), fc.constantFrom('+', '-', '*', '/', '%'), tie('e')).map(([x, op, y]) => `(${x} ${op} ${y})`),
    tie('e').map((x) => `(- ${x})`),
    tie('e').map((x) => `abs(${x})`),
    tie('e').map((x) => `round(${x})`),
    fc.tuple(tie('e'), fc.constantFrom('0', '1', '2', '3', '-1', '-2', '20', '30', 'i')).map(([x, n]) => `round(${x}, ${n})`),
    tie('e').map((x) => `floor(${x})`),
    tie('e').map((x) => `ceil(${x})`),
    fc.tuple(tie('e'), fc.constantFrom('numeric', 'int', 'int8')).map(([x, t]) => `cast(${x} as ${t})`),
  ),
})).e;

/** The value or the error code, by one path. */
function outcome(run: () => JsonValue): { value: JsonValue } | { error: string } {
  try {
    return { value: run() };
  } catch (error) {
    return { error: (error as { code?: string }).code ?? String(error) };
  }
}

function compiled(text: string) {
  const value = parse(`from r select ${text} as x`).select!.items[0]!.value as Expression;
  return compileExpression<Item>(value, {
    read: (leaf) => (leaf.kind === 'field' ? (item) => item[(leaf as { name: string }).name] ?? null : () => null),
    type: (leaf) => (leaf.kind === 'field' ? types[(leaf as { name: string }).name]! : 'unknown'),
  });
}

describe('the scaled path of expressions', () => {
  it('gives the exact path’s value, or its error, over generated decimals', () => {
    fc.assert(
      fc.property(expressionArb, fc.array(itemArb, { minLength: 1, maxLength: 8 }), (text, items) => {
        let made: ReturnType<typeof compiled>;
        try {
          made = compiled(text);
        } catch {
          // a type error (round(float8, n)): no expression to run
          return;
        }
        const { run, output } = made;
        // several items through one compiled expression: a node's places carried from the item before must not leak
        for (const item of items) expect(outcome(() => output(item))).toEqual(outcome(() => outputValue(run(item))));
      }),
      { numRuns: Number(process.env.CKQL_SCALED_RUNS ?? 3000), seed: 2_026_120_2 },
    );
  });

  it('gives the exact path’s values in the memory engine’s records, where the scaled path is written into the records’ loop', async () => {
    const fields = [
      { id: 'a', type: 'numeric' as const },
      { id: 'b', type: 'numeric' as const },
      { id: 'i', type: 'int' as const },
      { id: 'j', type: 'int8' as const },
    ];
    await fc.assert(
      // a bare field is a column as the table holds it, not an expression
      fc.asyncProperty(fc.array(expressionArb.filter((text) => !/^[abij]$/.test(text)), { minLength: 1, maxLength: 3 }), fc.array(itemArb, { minLength: 1, maxLength: 12 }), async (texts, items) => {
        let made: ReturnType<typeof compiled>[];
        try {
          made = texts.map(compiled);
        } catch {
          return;
        }
        const rows = items.map((item, k) => ({ _id: k + 1, ...item }));
        const query = parse(`from r select ${texts.map((t, k) => `${t} as x${k}`).join(', ')}, _id limit 100`);
        const want = rows.map((row) => made.map(({ run }) => outcome(() => outputValue(run(row)))));
        const failing = want.some((cells) => cells.some((cell) => 'error' in cell));
        const got = await (async () => {
          const stream = await memoryEngine([{ id: 'r', aliases: ['r'], fields, rows }]).query(query, {});
          const out: Record<string, JsonValue>[] = [];
          for await (const batch of stream.batches) out.push(...(batch as Record<string, JsonValue>[]));
          return out;
        })().then(
          (records) => ({ records }),
          (error: unknown) => ({ error: (error as { code?: string }).code ?? String(error) }),
        );
        if (failing) {
          expect(got).toHaveProperty('error');
          return;
        }
        expect(got).toHaveProperty('records');
        const records = (got as { records: Record<string, JsonValue>[] }).records;
        expect(records.map((record) => texts.map((_, k) => ({ value: record[`x${k}`] })))).toEqual(want);
      }),
      { numRuns: Number(process.env.CKQL_SCALED_RUNS ?? 3000) / 10, seed: 2_026_120_2 },
    );
  });

  it('takes the scaled path for the benchmark’s expressions, and rounds half away from zero', () => {
    expect(compiled('a').output({ a: 32.41 })).toBe(32.41);
    const total = compiled('a * i');
    expect(total.output({ a: 32.41, i: 3 })).toBe(97.23);
    // the doubles' product is 97.22999999999999
    expect(32.41 * 3).not.toBe(97.23);
    const rounded = compiled('round(a, 1)');
    expect([0.25, -0.25, 1.05, 2.675, -2.675].map((a) => rounded.output({ a }))).toEqual([0.3, -0.3, 1.1, 2.7, -2.7]);
    expect(compiled('a * b').output({ a: -3, b: 0 })).toBe(0);
    expect(Object.is(compiled('a * b').output({ a: -3, b: 0 }), -0)).toBe(false);
  });
});

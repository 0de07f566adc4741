/**
 * `parseRecords` reads PostgreSQL's JSON text of a page as a lossless JSON
 * parser would: the record-level values of `int8`, `numeric` and `float8`
 * fields keep their text where a double would change it, everything else
 * is what `JSON.parse` gives. The oracle is lossless-json.
 */
import fc from 'fast-check';
import { parse } from 'lossless-json';
import { describe, expect, it } from 'vitest';
import type { FieldInfo } from '../../../src/datastore/types.js';
import { exactNumber, parseRecords } from '../../../src/engine/sql/records.js';
import { propertyParameters } from '../../helpers/arbitraries.js';

class NumberText {
  constructor(readonly text: string) {}
}

/** The same records through lossless-json: every number's text kept, then settled by its place. */
function oracle(text: string, fields: readonly FieldInfo[], format: 'objects' | 'lists'): unknown[] {
  const exactTypes = new Set(['int8', 'numeric', 'float8']);
  const settle = (value: unknown, exact: boolean): unknown => {
    if (value instanceof NumberText) return exact ? exactNumber(value.text) : Number(value.text);
    if (Array.isArray(value)) return value.map((item) => settle(item, false));
    if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, settle(v, false)]));
    return value;
  };
  const records = parse(text, null, (number) => new NumberText(number)) as unknown[];
  if (format === 'lists') return records.map((r) => (r as unknown[]).map((v, i) => settle(v, exactTypes.has(fields[i]?.type ?? ''))));
  const exact = new Set(fields.filter((f) => exactTypes.has(f.type)).map((f) => f.id));
  return records.map((r) => Object.fromEntries(Object.entries(r as Record<string, unknown>).map(([k, v]) => [k, settle(v, exact.has(k))])));
}

// Number texts as PostgreSQL writes them: scales, digits beyond a double, float exponents.
const numberText = fc.oneof(
  fc.integer().map(String),
  fc.constantFrom('7.50', '2.0', '0.10', '-0.0', '9007199254740993', '-9223372036854775808', '12345678901234567890.123', '1e+20', '1.5e-07', '-2.5E+3', '0.30000000000000004', '0'),
  fc.double({ noNaN: true, noDefaultInfinity: true }).map(String),
);
const tricky = fc.string({ unit: fc.constantFrom('a', '"', '\\', '{', '}', '[', ']', ',', ':', '1', '-', 'é', '\n') });
const nested: fc.Arbitrary<string> = fc.letrec<{ value: string }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    numberText,
    tricky.map((t) => JSON.stringify(t)),
    fc.constantFrom('true', 'false', 'null'),
    fc.array(tie('value'), { maxLength: 3 }).map((items) => `[${items.join(',')}]`),
    // Keys unique: with a repeated key JSON.parse keeps the last value (as Python does, and jsonb), the oracle
    // the first; which one a json column's text holds twice is not what this property is about.
    fc.uniqueArray(fc.tuple(tricky, tie('value')), { maxLength: 3, selector: ([k]) => k }).map((pairs) => `{${pairs.map(([k, v]) => `${JSON.stringify(k)}:${v}`).join(',')}}`),
  ),
})).value;

const TYPES = ['int', 'text', 'numeric', 'int8', 'float8', 'json', 'float'] as const;
const valueOf = (type: (typeof TYPES)[number]): fc.Arbitrary<string> =>
  fc.oneof(
    fc.constant('null'),
    type === 'text' ? tricky.map((t) => JSON.stringify(t)) : type === 'json' ? nested : type === 'int' ? fc.integer().map(String) : numberText,
  );

const pageArb = fc
  .uniqueArray(fc.tuple(tricky, fc.constantFrom(...TYPES)), { minLength: 1, maxLength: 5, selector: ([id]) => id })
  .chain((columns) =>
    fc.record({
      fields: fc.constant(columns.map(([id, type]): FieldInfo => ({ id, type: type as FieldInfo['type'] }))),
      rows: fc.array(fc.tuple(...columns.map(([, type]) => valueOf(type))), { maxLength: 4 }),
    }),
  );

describe('parseRecords', () => {
  it('reads what a lossless parser reads, in objects and in lists', () => {
    fc.assert(
      fc.property(pageArb, ({ fields, rows }) => {
        const objects = `[${rows.map((row) => `{${row.map((v, i) => `${JSON.stringify(fields[i]?.id)}:${v}`).join(',')}}`).join(',')}]`;
        expect(parseRecords(objects, fields, 'objects')).toEqual(oracle(objects, fields, 'objects'));
        const lists = `[${rows.map((row) => `[${row.join(',')}]`).join(',')}]`;
        expect(parseRecords(lists, fields, 'lists')).toEqual(oracle(lists, fields, 'lists'));
      }),
      propertyParameters(200),
    );
  });

  it('keeps a scale, 2^53 + 1 and a float exponent in exact fields, and nowhere else', () => {
    const fields: FieldInfo[] = [{ id: 'p', type: 'numeric' }, { id: 'n', type: 'int' }, { id: 'j', type: 'json' }];
    expect(parseRecords('[{"p":7.50,"n":2,"j":{"p":7.50}},{"p":9007199254740993,"n":3,"j":[1e+20]}]', fields, 'objects')).toEqual([
      { p: '7.50', n: 2, j: { p: 7.5 } },
      { p: '9007199254740993', n: 3, j: [1e20] },
    ]);
    expect(parseRecords('[[7.5,1e+20,"7.50"]]', [{ id: 'a', type: 'numeric' }, { id: 'b', type: 'float8' }, { id: 'c', type: 'text' }], 'lists')).toEqual([[7.5, '1e+20', '7.50']]);
  });
});

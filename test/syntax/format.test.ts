import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Condition, Field, Query, Value } from '../../src/ast.js';
import { plainSelect } from '../../src/ast.js';
import { format, formatField, formatScalar, formatString, formatText, formatValue } from '../../src/format.js';
import { parse } from '../../src/syntax/parse.js';
import { withoutSpans } from './ast-helpers.js';
import { anyCodePoint, propertyParameters, scaledRuns } from '../helpers/arbitraries.js';

const span = { start: 0, end: 0 };

describe('format', () => {
  it('prints the canonical text: lower-case keywords, one clause per line, canonical order', () => {
    expect(
      format(parse('FROM courses OFFSET 20 LIMIT 10 ORDER BY a DESC, b ASC SEARCH "algebra" WHERE s IN (x, y) AND t = 1 SELECT a, b')),
    ).toBe(
      [
        'from courses',
        'select a, b',
        'where s in (x, y) and t = 1',
        'search "algebra"',
        'order by a desc, b',
        'limit 10',
        'offset 20',
      ].join('\n'),
    );
  });

  it('keeps the parentheses a nested group needs', () => {
    expect(format(parse('from x where (a = 1 or a = 2) and ((b = 1 and c = 2))'))).toBe(
      'from x\nwhere (a = 1 or a = 2) and (b = 1 and c = 2)',
    );
    expect(format(parse('from x where (a = 1 or (a = 2 or a in ()))'))).toBe('from x\nwhere (a = 1 or (a = 2 or a in ()))');
  });

  it('drops the parentheses of a top-level "and" group, which means the same', () => {
    expect(format(parse('from x where (a = 1 and b = 2)'))).toBe('from x\nwhere a = 1 and b = 2');
  });

  it('prints parameters, booleans, null and numbers as written', () => {
    expect(format(parse('from $r where a = $v and b = true and c = null and d = -2.5e3 search $q limit $n'))).toBe(
      'from $r\nwhere a = $v and b = true and c = null and d = -2500\nsearch $q\nlimit $n',
    );
  });
});

describe('quoting', () => {
  it.each([
    ['active', 'active'],
    ['high-school', 'high-school'],
    ['v1.2', 'v1.2'],
    ['5b3f1c0a-9d2e-4f6b-8a1c-2e7d9b0c4f11', '5b3f1c0a-9d2e-4f6b-8a1c-2e7d9b0c4f11'],
    ['limit', '"limit"'],
    ['NULL', '"NULL"'],
    ['2020', '"2020"'],
    ['-3', '"-3"'],
    ['linear algebra', '"linear algebra"'],
    ['a--b', '"a--b"'],
    ['', '""'],
    ['say "hi"\\', '"say \\"hi\\"\\\\"'],
    ['tab\there\nnewline\r', '"tab\\there\\nnewline\\u000d"'],
    ['lone \ud800', '"lone \\ud800"'],
    ['München', '"München"'],
  ])('text %j → %s', (text, expected) => {
    expect(formatText(text)).toBe(expected);
  });

  it.each([
    ['subject', 'subject'],
    ['school year', '`school year`'],
    ['from', '`from`'],
    ['a`b', '`a``b`'],
    ['2020', '`2020`'],
    ['_id', '_id'],
  ])('field %j → %s', (name, expected) => {
    expect(formatField(name)).toBe(expected);
  });

  it('formats scalars and AST values', () => {
    expect([formatScalar('2020'), formatScalar(2020), formatScalar(true), formatScalar(null)]).toEqual([
      '"2020"', '2020', 'true', 'null',
    ]);
    expect(formatValue({ kind: 'param', span, name: 'x' })).toBe('$x');
    expect(formatString('plain')).toBe('"plain"');
  });
});

// --- generated queries -------------------------------------------------------

const text = fc.oneof(
  fc.string({ unit: 'grapheme', maxLength: 12 }),
  fc.string({ unit: anyCodePoint, maxLength: 8 }),
  fc.constantFrom('limit', 'FROM', 'null', '2020', '-0', '1e3', 'a--b', '`', '"', "'", '\\', 'x y', 'high-school'),
);
const name = fc.stringMatching(/^[A-Za-z_][A-Za-z0-9_]{0,8}$/);
const value: fc.Arbitrary<Value> = fc.oneof(
  text.map((v) => ({ kind: 'string' as const, span, value: v })),
  fc.double({ noNaN: true, noDefaultInfinity: true }).map((v) => ({ kind: 'number' as const, span, value: v === 0 ? 0 : v })),
  fc.boolean().map((v) => ({ kind: 'boolean' as const, span, value: v })),
  fc.constant({ kind: 'null' as const, span }),
  name.map((n) => ({ kind: 'param' as const, span, name: n })),
);
const field: fc.Arbitrary<Field> = text.filter((t) => t !== '').map((n) => ({ kind: 'field', span, name: n }));
const { condition } = fc.letrec<{ condition: Condition }>((tie) => ({
  condition: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.record({ kind: fc.constant('eq' as const), span: fc.constant(span), field, value }),
    fc.record({ kind: fc.constant('in' as const), span: fc.constant(span), field, values: fc.array(value, { maxLength: 3 }) }),
    fc.record({
      kind: fc.constantFrom('and' as const, 'or' as const),
      span: fc.constant(span),
      conditions: fc.array(tie('condition'), { minLength: 2, maxLength: 3 }),
    }),
  ),
}));
const count = fc.oneof(
  fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }).map((v) => ({ kind: 'number' as const, span, value: v })),
  name.map((n) => ({ kind: 'param' as const, span, name: n })),
);
const query: fc.Arbitrary<Query> = fc
  .record(
    {
      resource: fc.oneof(
        text.map((v) => ({ kind: 'string' as const, span, value: v })),
        name.map((n) => ({ kind: 'param' as const, span, name: n })),
      ),
      where: condition,
      search: fc.oneof(
        text.map((v) => ({ kind: 'string' as const, span, value: v })),
        name.map((n) => ({ kind: 'param' as const, span, name: n })),
      ),
      select: fc.array(field, { minLength: 1, maxLength: 3 }),
      order: fc.array(fc.record({ field, direction: fc.constantFrom('asc' as const, 'desc' as const) }), { minLength: 1, maxLength: 3 }),
      limit: count,
      offset: count,
    },
    { requiredKeys: ['resource'] },
  )
  .map((parts) => {
    const q: { -readonly [K in keyof Query]: Query[K] } = { kind: 'query', span, from: { kind: 'from', span, resource: parts.resource } };
    if (parts.where) q.where = { kind: 'where', span, condition: parts.where };
    if (parts.search) q.search = { kind: 'search', span, text: parts.search };
    if (parts.select) q.select = plainSelect(parts.select, span);
    if (parts.order) q.order = { kind: 'order', span, keys: parts.order.map((k) => ({ kind: 'sort-key', span, ...k })) };
    if (parts.limit) q.limit = { kind: 'limit', span, value: parts.limit };
    if (parts.offset) q.offset = { kind: 'offset', span, value: parts.offset };
    return q;
  });

describe('round trip', () => {
  it('parse(format(q)) equals q apart from spans', () => {
    fc.assert(
      fc.property(query, (q) => {
        expect(withoutSpans(parse(format(q)))).toEqual(withoutSpans(q));
      }),
      propertyParameters(scaledRuns(1500)),
    );
  });

  it('format is a fixed point on its own output', () => {
    fc.assert(
      fc.property(query, (q) => {
        const once = format(q);
        expect(format(parse(once))).toBe(once);
      }),
      propertyParameters(scaledRuns(500)),
    );
  });
});

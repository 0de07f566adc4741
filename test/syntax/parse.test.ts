import type { CstNode } from 'chevrotain';
import { describe, expect, it } from 'vitest';
import type { And, In, NumberValue } from '../../src/ast.js';
import { parse } from '../../src/syntax/parse.js';
import { queryParser } from '../../src/syntax/parser.js';
import { queryLexer } from '../../src/syntax/tokens.js';
import { allSpans, withoutSpans } from './ast-helpers.js';

const ast = (source: string) => withoutSpans(parse(source));
const str = (value: string) => ({ kind: 'string', value });
const num = (value: number) => ({ kind: 'number', value });
const field = (name: string) => ({ kind: 'field', name });
const eq = (f: string, value: unknown) => ({ kind: 'eq', field: field(f), value });

/** The source text a node's span covers. */
function text(source: string, span: { start: number; end: number }): string {
  return source.slice(span.start, span.end);
}

describe('parse: resources', () => {
  it.each([
    ['from 5b3f1c0a-9d2e-4f6b-8a1c-2e7d9b0c4f11', str('5b3f1c0a-9d2e-4f6b-8a1c-2e7d9b0c4f11')],
    ['from 12345678-1234-1234-1234-123456789abc', str('12345678-1234-1234-1234-123456789abc')],
    ['from courses', str('courses')],
    ['from "my courses"', str('my courses')],
    ["from 'limit'", str('limit')],
    ['from $resource', { kind: 'param', name: 'resource' }],
  ])('%s', (source, resource) => {
    expect(ast(source)).toEqual({ kind: 'query', from: { kind: 'from', resource } });
  });
});

describe('parse: where', () => {
  it('reads f = v for every kind of value', () => {
    const q = parse(
      'from x where a = "t" and b = 3 and c = word and d = true and e = false and f = null and g = $p and h = 5b3f1c0a-9d2e-4f6b-8a1c-2e7d9b0c4f11',
    );
    expect(withoutSpans(q.where?.condition)).toEqual({
      kind: 'and',
      conditions: [
        eq('a', str('t')),
        eq('b', num(3)),
        eq('c', str('word')),
        eq('d', { kind: 'boolean', value: true }),
        eq('e', { kind: 'boolean', value: false }),
        eq('f', { kind: 'null' }),
        eq('g', { kind: 'param', name: 'p' }),
        eq('h', str('5b3f1c0a-9d2e-4f6b-8a1c-2e7d9b0c4f11')),
      ],
    });
  });

  it('reads a single condition as itself, not an "and" of one', () => {
    expect(withoutSpans(parse('from x where a = 1').where)).toEqual({ kind: 'where', condition: eq('a', num(1)) });
  });

  it('reads in lists, including the empty one', () => {
    expect(withoutSpans(parse('from x where a in (1, two, "3") and b in ()').where?.condition)).toEqual({
      kind: 'and',
      conditions: [
        { kind: 'in', field: field('a'), values: [num(1), str('two'), str('3')] },
        { kind: 'in', field: field('b'), values: [] },
      ],
    });
  });

  it('reads parenthesised groups of "or" and of "and"', () => {
    expect(withoutSpans(parse('from x where (a = 1 or a = 2) and (b = 1 and c = 2)').where?.condition)).toEqual({
      kind: 'and',
      conditions: [
        { kind: 'or', conditions: [eq('a', num(1)), eq('a', num(2))] },
        { kind: 'and', conditions: [eq('b', num(1)), eq('c', num(2))] },
      ],
    });
  });

  it('reads a group of one condition as that condition', () => {
    expect(ast('from x where ((a = 1))')).toEqual(ast('from x where a = 1'));
  });

  it('reads backtick fields, with a doubled backtick as one', () => {
    expect(withoutSpans(parse('from x where `school year` = 1 and `a``b` = 2 and `from` = 3').where?.condition)).toEqual({
      kind: 'and',
      conditions: [eq('school year', num(1)), eq('a`b', num(2)), eq('from', num(3))],
    });
  });

  it('unescapes strings', () => {
    const q = parse(String.raw`from x where a = "q\"\\\/\n\t\u00e9" and b = 'it\'s'`);
    expect(withoutSpans(q.where?.condition)).toEqual({
      kind: 'and',
      conditions: [eq('a', str('q"\\/\n\té')), eq('b', str("it's"))],
    });
  });

  it('reads numbers as JSON numbers, with -0 as 0', () => {
    const q = parse('from x where a in (-3, 2.5, 1e3, -0, 0.1E-2)');
    const values = (q.where?.condition as In).values.map((v) => (v as NumberValue).value);
    expect(values).toEqual([-3, 2.5, 1000, 0, 0.001]);
    expect(Object.is(values[3], -0)).toBe(false);
  });
});

describe('parse: other clauses', () => {
  it('reads search, select, order by, limit and offset', () => {
    expect(ast('from x search "linear algebra" select a, `b c` order by a desc, b, c asc limit 10 offset 20')).toEqual({
      kind: 'query',
      from: { kind: 'from', resource: str('x') },
      search: { kind: 'search', text: str('linear algebra') },
      select: { kind: 'select', items: [{ kind: 'select-item', value: field('a') }, { kind: 'select-item', value: field('b c') }] },
      order: {
        kind: 'order',
        keys: [
          { kind: 'sort-key', field: field('a'), direction: 'desc' },
          { kind: 'sort-key', field: field('b'), direction: 'asc' },
          { kind: 'sort-key', field: field('c'), direction: 'asc' },
        ],
      },
      limit: { kind: 'limit', value: num(10) },
      offset: { kind: 'offset', value: num(20) },
    });
  });

  it('takes parameters for search, limit and offset', () => {
    expect(ast('from x search $q limit $n offset $o')).toMatchObject({
      search: { text: { kind: 'param', name: 'q' } },
      limit: { value: { kind: 'param', name: 'n' } },
      offset: { value: { kind: 'param', name: 'o' } },
    });
  });

  it('accepts clauses in any order, giving the same AST', () => {
    expect(ast('from x limit 5 where a = 1 search "s"')).toEqual(ast('from x search "s" where a = 1 limit 5'));
  });

  it('accepts whole numbers written with a fraction or exponent for limit', () => {
    expect(ast('from x limit 1e2 offset 5.0')).toMatchObject({ limit: { value: num(100) }, offset: { value: num(5) } });
  });

  it('orders distinct records only by what they show: a selected field, qualified or not, or an as name (as PostgreSQL)', () => {
    for (const shown of [
      'from x select distinct a, b order by b desc, a',
      'from x select distinct a as s order by s',
      'from x select distinct a as s order by a',
      'from x e join y f on e.k = f.k select distinct e.a order by a',
      'from x e join y f on e.k = f.k select distinct a order by e.a',
    ]) {
      expect(() => parse(shown), shown).not.toThrow();
    }
    for (const [hidden, key] of [
      ['from x select distinct a order by b', 'b'],
      ['from x select distinct a as s order by a, t desc', 't desc'],
      ['from x e join y f on e.k = f.k select distinct e.a order by f.a', 'f.a'],
    ] as const) {
      let error: unknown;
      try {
        parse(hidden);
      } catch (caught) {
        error = caught;
      }
      expect(error, hidden).toMatchObject({ code: 'DISTINCT_ORDER_NOT_SELECTED' });
      const span = (error as { span: { start: number; end: number } }).span;
      expect(hidden.slice(span.start, span.end)).toBe(key);
    }
  });

  it('accepts keywords in any case, comments, newlines and one trailing ";"', () => {
    expect(ast('FROM x -- the table\nWHERE a = 1\n  Limit 2;')).toEqual(ast('from x where a = 1 limit 2'));
  });
});

describe('parse: spans', () => {
  const source = 'from courses\nwhere (stage = a or stage = b) and `x y` in (1, 2)\norder by x desc\nlimit 5;';
  const q = parse(source);

  it('gives every node a half-open span inside the source', () => {
    for (const span of allSpans(q)) {
      expect(span.start).toBeGreaterThanOrEqual(0);
      expect(span.end).toBeLessThanOrEqual(source.length);
      expect(span.start).toBeLessThanOrEqual(span.end);
    }
  });

  it('covers the text of each node', () => {
    expect(text(source, q.span)).toBe(source.slice(0, -1)); // the ";" is not part of the query
    expect(text(source, q.from.span)).toBe('from courses');
    expect(text(source, q.where!.span)).toBe('where (stage = a or stage = b) and `x y` in (1, 2)');
    const and = q.where!.condition as And;
    expect(text(source, and.conditions[0]!.span)).toBe('(stage = a or stage = b)');
    expect(text(source, and.conditions[1]!.span)).toBe('`x y` in (1, 2)');
    expect(text(source, q.order!.span)).toBe('order by x desc');
    expect(text(source, q.order!.keys[0]!.span)).toBe('x desc');
    expect(text(source, q.limit!.span)).toBe('limit 5');
    expect(text(source, q.limit!.value.span)).toBe('5');
  });
});

describe('the syntax tree', () => {
  // parser.ts replaces internal hooks of Chevrotain's tree builder so that
  // nodes get plain `children` objects (faster to fill and read than
  // Chevrotain's null-prototype ones), filled by its own code; this fails if
  // Chevrotain stops calling them.
  it('is built with plain children objects, keyed by token and rule names', () => {
    queryParser().input = queryLexer.tokenize('from c where a = 1').tokens;
    const cst = queryParser().query();
    expect(queryParser().errors).toEqual([]);
    expect(Object.getPrototypeOf(cst.children)).toBe(Object.prototype);
    expect(Object.keys(cst.children)).toEqual(['From', 'source', 'whereClause']);
    const where = cst.children['whereClause']![0] as CstNode;
    expect(Object.getPrototypeOf(where.children)).toBe(Object.prototype);
    expect(Object.keys(where.children)).toEqual(['Where', 'condition']);
  });
});

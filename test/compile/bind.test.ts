import { describe, expect, it } from 'vitest';
import { bind } from '../../src/compile/bind.js';
import type { Params } from '../../src/compile/bind.js';
import { compile } from '../../src/compile/compile.js';
import { QueryError } from '../../src/errors.js';
import { parse } from '../../src/syntax/parse.js';
import type { Filters } from '../../src/datastore/types.js';

function bindError(source: string, params: Params): QueryError {
  try {
    bind(parse(source), params);
  } catch (error) {
    expect(error).toBeInstanceOf(QueryError);
    return error as QueryError;
  }
  throw new Error(`expected binding ${JSON.stringify(params)} into ${JSON.stringify(source)} to fail`);
}

describe('bind', () => {
  it('replaces parameters by literal nodes with the parameter\'s span', () => {
    const source = 'from $r where f = $v search $q limit $n offset $o';
    const bound = bind(parse(source), { r: 'courses', v: 2020, q: 'text', n: 5, o: 0 });
    expect(bound.from.resource).toEqual({ kind: 'string', span: spanOf(source, '$r'), value: 'courses' });
    expect(bound.where?.condition).toMatchObject({ kind: 'eq', value: { kind: 'number', span: spanOf(source, '$v'), value: 2020 } });
    expect(bound.search?.text).toEqual({ kind: 'string', span: spanOf(source, '$q'), value: 'text' });
    expect(bound.limit?.value).toEqual({ kind: 'number', span: spanOf(source, '$n'), value: 5 });
    expect(bound.offset?.value).toEqual({ kind: 'number', span: spanOf(source, '$o'), value: 0 });
  });

  it('makes booleans, null and text literals of their own kind', () => {
    const bound = bind(parse('from c where a in ($t, $f, $n, $s)'), { t: true, f: false, n: null, s: 'null' });
    const condition = bound.where?.condition;
    expect(condition?.kind === 'in' && condition.values.map((v) => v.kind)).toEqual(['boolean', 'boolean', 'null', 'string']);
    // A null in the list means "or is null", which only the sql target can send.
    expect(compile(bound, { target: 'sql' }).sql).toContain(`("a" IS NULL OR "a" IN ('true', 'false', 'null'))`);
  });

  it('binds values as data, never as syntax', () => {
    for (const text of ['x" or 1=1', "x' or '1'='1", 'a) or (b = c', '-- comment', '`f`', '$other', 'limit 5', '\\"', '']) {
      const request = compile(bind(parse('from c where f = $s search $s'), { s: text, other: 'not this' }));
      // an empty search is no search: only q disappears, the filter keeps the empty text
      expect(request).toStrictEqual({ resource_id: 'c', filters: { f: text }, ...(text === '' ? {} : { q: text }) });
    }
  });

  it('does not change the query it is given', () => {
    const query = parse('from c where f = $v');
    const before = structuredClone(query);
    bind(query, { v: 1 });
    expect(query).toStrictEqual(before);
  });

  it('leaves unbound parameters for compile to report, and ignores unused params', () => {
    const bound = bind(parse('from c where f = $a and g = $b'), { a: 1, zzz: 2 });
    const condition = bound.where?.condition;
    expect(condition?.kind === 'and' && condition.conditions.map((c) => c.kind === 'eq' && c.value.kind)).toEqual(['number', 'param']);
    expect(() => compile(bound)).toThrow(/\$b is not bound/);
  });

  it('treats a key whose value is undefined as not bound', () => {
    const params = { v: undefined } as unknown as Params;
    expect(bind(parse('from c where f = $v'), params).where?.condition).toMatchObject({ value: { kind: 'param' } });
  });

  it('looks at own keys only, so $constructor is not Object.prototype.constructor', () => {
    const bound = bind(parse('from c where f = $constructor and g = $toString'), {});
    expect(() => compile(bound)).toThrow(QueryError);
    expect(compile(bind(parse('from c where f = $constructor'), { constructor: 'x' })).filters).toStrictEqual({ f: 'x' });
  });

  it('binds in steps', () => {
    const once = bind(parse('from $r where f = $v'), { r: 'c' });
    expect(compile(bind(once, { v: 1 }))).toStrictEqual({ resource_id: 'c', filters: { f: 1 } });
  });

  it('reads -0 as 0', () => {
    expect(Object.is((compile(bind(parse('from c where f = $v'), { v: -0 })).filters as Filters | undefined)?.f, 0)).toBe(true);
  });
});

describe('lists bound into in (…)', () => {
  it('spread into the list in place of the parameter', () => {
    expect(compile('from c where f in ($xs)', { xs: [1, 'b'] }).filters).toStrictEqual({ f: [1, 'b'] });
    expect(compile('from c where f in (0, $xs, 9)', { xs: [1, 2] }).filters).toStrictEqual({ f: [0, 1, 2, 9] });
    expect(compile('from c where f in ($xs, $ys)', { xs: [1], ys: [2, 3] }).filters).toStrictEqual({ f: [1, 2, 3] });
  });

  it('an empty list is the empty set', () => {
    expect(compile('from c where f in ($xs)', { xs: [] }).filters).toStrictEqual({ f: [] });
  });

  it('a scalar in a list is one value', () => {
    expect(compile('from c where f in ($x)', { x: 'a' }).filters).toStrictEqual({ f: ['a'] });
  });

  it('every spread value has the parameter\'s span', () => {
    const source = 'from c where f in ($xs)';
    const condition = bind(parse(source), { xs: [1, 2] }).where?.condition;
    expect(condition?.kind === 'in' && condition.values.map((v) => v.span)).toEqual([spanOf(source, '$xs'), spanOf(source, '$xs')]);
  });

  it('a list elsewhere is INVALID_PARAMETER', () => {
    const error = bindError('from c where f = $xs', { xs: [1, 2] });
    expect(error.code).toBe('INVALID_PARAMETER');
    expect(error.message).toContain('$xs');
    expect(error.message).toContain('single');
    expect(error.hint).toContain('in (');
    expect(error.span).toEqual(spanOf('from c where f = $xs', '$xs'));
    expect(bindError('from $r', { r: ['a'] }).code).toBe('INVALID_PARAMETER');
    expect(bindError('from c search $q', { q: ['a'] }).code).toBe('INVALID_PARAMETER');
    expect(bindError('from c limit $n', { n: [1] }).code).toBe('INVALID_PARAMETER');
  });

  it('a list of something other than scalars is INVALID_PARAMETER', () => {
    const params = { xs: [1, { a: 1 }] } as unknown as Params;
    expect(bindError('from c where f in ($xs)', params).code).toBe('INVALID_PARAMETER');
    expect(bindError('from c where f in ($xs)', { xs: [[1]] } as unknown as Params).code).toBe('INVALID_PARAMETER');
  });
});

describe('parameters of the wrong type', () => {
  const rows: [string, unknown, RegExp][] = [
    ['from c limit $p', 'ten', /\$p must be a whole number of 0 or more/],
    ['from c limit $p', '10', /whole number/],
    ['from c limit $p', -1, /whole number.*found the number -1/],
    ['from c limit $p', 1.5, /whole number/],
    ['from c limit $p', Number.NaN, /whole number/],
    ['from c limit $p', 2 ** 60, /whole number/],
    ['from c offset $p', true, /\$p must be a whole number/],
    ['from c offset $p', null, /whole number.*found null/],
    ['from $p', 5, /\$p must be a non-empty string/],
    ['from $p', '', /non-empty string/],
    ['from $p', null, /non-empty string/],
    ['from c search $p', 5, /\$p must be a string/],
    ['from c search $p', null, /must be a string/],
    ['from c where f = $p', { a: 1 }, /\$p must be a single .*found an object/],
    ['from c where f = $p', Number.POSITIVE_INFINITY, /finite number/],
    ['from c where f in ($p)', Number.NaN, /finite number/],
    ['from c where f = $p', () => 1, /found a function/],
  ];
  it.each(rows)('%s with %s', (source, value, message) => {
    const error = bindError(source, { p: value } as unknown as Params);
    expect(error.code).toBe('INVALID_PARAMETER');
    expect(error.message).toMatch(message);
    expect(error.span).toEqual(spanOf(source, '$p'));
    expect(error.expected.length).toBe(1);
    expect(error.found).toBeDefined();
  });
});

function spanOf(source: string, text: string): { start: number; end: number } {
  const start = source.indexOf(text);
  expect(start).toBeGreaterThanOrEqual(0);
  return { start, end: start + text.length };
}

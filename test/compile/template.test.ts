import { describe, expect, it } from 'vitest';
import { ckql } from '../../src/compile/template.js';
import { compile } from '../../src/compile/compile.js';
import type { ParamValue } from '../../src/compile/bind.js';
import { QueryError } from '../../src/errors.js';

function templateError(build: () => unknown): QueryError {
  try {
    build();
  } catch (error) {
    expect(error).toBeInstanceOf(QueryError);
    return error as QueryError;
  }
  throw new Error('expected the template to fail');
}

function covered(error: QueryError): string {
  return (error.source ?? '').slice(error.span.start, error.span.end);
}

describe('ckql`…`', () => {
  it('compiles the example of the issue', () => {
    const id = '5b3f1c0a-9d2e-4f6b-8a1c-2e7d9b0c4f11';
    const s = 'math';
    expect(compile(ckql`from ${id} where subject = ${s} and year in ${[2020, 2021]}`)).toStrictEqual({
      resource_id: id,
      filters: { subject: 'math', year: [2020, 2021] },
    });
  });

  it('takes values in every place a value may stand', () => {
    const request = compile(ckql`from ${'courses'} where a = ${1} and b = ${true} and c = ${'z'} and d in (${'x'}, ${2})
      search ${'text'} limit ${10} offset ${20}`);
    expect(request).toStrictEqual({
      resource_id: 'courses',
      filters: { a: 1, b: true, c: 'z', d: ['x', 2] },
      q: 'text',
      limit: 10,
      offset: 20,
    });
  });

  it('spreads a list with or without the parentheses of in', () => {
    const years = [2019, 2020];
    expect(compile(ckql`from c where y in ${years}`).filters).toStrictEqual({ y: [2019, 2020] });
    expect(compile(ckql`from c where y in (${years})`).filters).toStrictEqual({ y: [2019, 2020] });
    expect(compile(ckql`from c where y IN${years}`).filters).toStrictEqual({ y: [2019, 2020] });
    expect(compile(ckql`from c where y in (2018, ${years}, 2021)`).filters).toStrictEqual({ y: [2018, 2019, 2020, 2021] });
    expect(compile(ckql`from c where y in ${[]}`).filters).toStrictEqual({ y: [] });
    expect(compile(ckql`from c where y in ${'one'}`).filters).toStrictEqual({ y: ['one'] });
    expect(compile(ckql`from c where (y in ${[1]} or y = ${2})`).filters).toStrictEqual({ y: [1, 2] });
  });

  it('reads the text as a template literal does (escaped backticks quote fields)', () => {
    expect(compile(ckql`from c where \`school year\` = ${2020} select \`a\`\`b\``)).toStrictEqual({
      resource_id: 'c',
      filters: { 'school year': 2020 },
      fields: ['a`b'],
    });
  });

  it('does not let the text run on into a value', () => {
    const error = templateError(() => ckql`from c where f = ${'a'}bc`);
    expect(error.code).toBe('UNEXPECTED_TOKEN');
  });

  it('keeps the template\'s own $parameters for binding later', () => {
    const query = ckql`from c where f = ${1} and g = $later`;
    expect(compile(query, { later: 'x' }).filters).toStrictEqual({ f: 1, g: 'x' });
  });

  it('does not confuse a value with a parameter the text spells like a placeholder', () => {
    const query = ckql`from c where f = ${1} and g = $__p0`;
    expect(compile(query, { __p0: 'mine' }).filters).toStrictEqual({ f: 1, g: 'mine' });
  });
});

describe('interpolated values are data, never syntax', () => {
  const hostile: string[] = [
    'x" or 1=1',
    "x' or '1'='1",
    'x") or (g = "y',
    'math -- the rest is a comment',
    '-- all of it',
    '`backticks` and \\` escapes',
    'a $param and ${x} and $$',
    '$__p0',
    'from d where g = 1',
    'a\nlimit 1',
    '\\"\\\\',
    '',
    '   ',
    '日本語 ✓ \u0000',
  ];
  it.each(hostile)('%j stays one value', (value) => {
    const query = ckql`from c where subject = ${value} and tag in ${[value, 'other']} search ${value}`;
    expect(compile(query)).toStrictEqual({
      resource_id: 'c',
      filters: { subject: value, tag: [value, 'other'] },
      ...(value.trim() === '' ? {} : { q: value }), // an all-white-space search is no search
    });
  });

  it('a resource name that looks like a query is one name', () => {
    expect(compile(ckql`from ${'x where a = 1'}`)).toStrictEqual({ resource_id: 'x where a = 1' });
  });
});

describe('values where syntax is needed', () => {
  it('a value as a field name is a parse error with a hint', () => {
    const error = templateError(() => ckql`from c where ${'subject'} = math`);
    expect(error.source).toBeDefined();
    expect(covered(error)).toBe('${…}');
    expect(error.source).toBe('from c where ${…} = math');
    expect(`${error.message} ${error.hint ?? ''}`).not.toContain('__p');
    expect(error.hint).toContain('number 1');
    expect(error.hint).toContain('field names and keywords');
  });

  it('a value as a keyword is a parse error', () => {
    expect(templateError(() => ckql`from c ${'where'} f = 1`)).toBeInstanceOf(QueryError);
    expect(templateError(() => ckql`${'from'} c`)).toBeInstanceOf(QueryError);
    expect(templateError(() => ckql`from c order by ${'a'}`)).toBeInstanceOf(QueryError);
    expect(templateError(() => ckql`from c select ${'a'}`)).toBeInstanceOf(QueryError);
  });

  it('a value inside a quoted string is MISPLACED_INTERPOLATION, not silently text', () => {
    const error = templateError(() => ckql`from c where a = 1 and f = "${'x'}"`);
    expect(error.code).toBe('MISPLACED_INTERPOLATION');
    expect(error.message).toContain('number 1');
    expect(covered(error)).toBe('${…}');
    expect(error.hint).toContain('without quotes');
  });

  it('a value inside a backtick field or a comment is MISPLACED_INTERPOLATION', () => {
    expect(templateError(() => ckql`from c where \`${'f'}\` = 1`).code).toBe('MISPLACED_INTERPOLATION');
    const error = templateError(() => ckql`from c where f = ${1} -- ${2}`);
    expect(error.code).toBe('MISPLACED_INTERPOLATION');
    expect(error.message).toContain('number 2');
  });

  it('a value of the wrong type for its place is INVALID_PARAMETER naming the value', () => {
    const error = templateError(() => ckql`from c limit ${'ten' as ParamValue}`);
    expect(error.code).toBe('INVALID_PARAMETER');
    expect(error.hint).toContain('number 1');
    expect(covered(error)).toBe('${…}');
    expect(error.message).toBe('the value interpolated as ${…} number 1 must be a whole number of 0 or more (the limit), found the text "ten"');
    expect(templateError(() => ckql`from c where f = ${[1, 2]}`).code).toBe('INVALID_PARAMETER');
    expect(templateError(() => ckql`from ${7}`).code).toBe('INVALID_PARAMETER');
  });

  it('shows the template with ${…} for every value and points at the right one', () => {
    const error = templateError(() => ckql`from ${'c'} where a = ${1} and b in ${[2, 3]} limit ${'x' as ParamValue}`);
    expect(error.source).toBe('from ${…} where a = ${…} and b in (${…}) limit ${…}');
    expect(covered(error)).toBe('${…}');
    expect(error.span.start).toBe(error.source!.lastIndexOf('${…}'));
    expect(error.message).toContain('number 4');
    expect(JSON.stringify(error)).not.toContain('__p');
  });

  it('undefined and objects are rejected', () => {
    const error = templateError(() => ckql`from c where f = ${undefined as unknown as ParamValue}`);
    expect(error.code).toBe('INVALID_PARAMETER');
    expect(error.found).toBe('undefined');
    expect(templateError(() => ckql`from c where f = ${{} as unknown as ParamValue}`).code).toBe('INVALID_PARAMETER');
  });
});

import { describe, expect, it } from 'vitest';
import { compile, plan } from '../../src/compile/compile.js';
import { fromRequest } from '../../src/compile/from-request.js';
import { QueryError } from '../../src/errors.js';
import { parse } from '../../src/syntax/parse.js';
import type { Filters, SearchRequest } from '../../src/datastore/types.js';

const R = '5b3f1c0a-9d2e-4f6b-8a1c-2e7d9b0c4f11';

/** The QueryError that compiling `source` throws, or a failed test. */
function compileError(source: string, params?: Parameters<typeof compile>[1]): QueryError {
  try {
    compile(source, params);
  } catch (error) {
    expect(error).toBeInstanceOf(QueryError);
    return error as QueryError;
  }
  throw new Error(`expected ${JSON.stringify(source)} not to compile`);
}

/** The source text an error's span covers. */
function covered(error: QueryError): string {
  expect(error.source).toBeDefined();
  return (error.source ?? '').slice(error.span.start, error.span.end);
}

describe('the compile table of language.md', () => {
  const rows: [string, SearchRequest][] = [
    [`from ${R}`, { resource_id: R }],
    ['from courses', { resource_id: 'courses' }],
    ['from "my resource"', { resource_id: 'my resource' }],
    ['from c where f = v', { resource_id: 'c', filters: { f: 'v' } }],
    ['from c where f = "v w"', { resource_id: 'c', filters: { f: 'v w' } }],
    ['from c where f = 2020', { resource_id: 'c', filters: { f: 2020 } }],
    ['from c where f = 2.5', { resource_id: 'c', filters: { f: 2.5 } }],
    ['from c where f = -3', { resource_id: 'c', filters: { f: -3 } }],
    ['from c where f = 1e3', { resource_id: 'c', filters: { f: 1000 } }],
    ['from c where f = true', { resource_id: 'c', filters: { f: true } }],
    ['from c where f = false', { resource_id: 'c', filters: { f: false } }],
    ['from c where f = "null"', { resource_id: 'c', filters: { f: 'null' } }],
    ['from c where f = "2020"', { resource_id: 'c', filters: { f: '2020' } }],
    ['from c where f in (a, b)', { resource_id: 'c', filters: { f: ['a', 'b'] } }],
    ['from c where f in (a)', { resource_id: 'c', filters: { f: ['a'] } }],
    ['from c where f in ()', { resource_id: 'c', filters: { f: [] } }],
    ['from c where f in (1, "1", true)', { resource_id: 'c', filters: { f: [1, '1', true] } }],
    ['from c where (f = a or f = b or f in (c))', { resource_id: 'c', filters: { f: ['a', 'b', 'c'] } }],
    ['from c where f in (a, b) and f = b', { resource_id: 'c', filters: { f: 'b' } }],
    ['from c where f in (a, b) and f = c', { resource_id: 'c', filters: { f: [] } }],
    ['from c search "t"', { resource_id: 'c', q: 't' }],
    ['from c select a, b', { resource_id: 'c', fields: ['a', 'b'] }],
    ['from c order by a desc, b', { resource_id: 'c', sort: 'a desc, b asc' }],
    ['from c limit 10', { resource_id: 'c', limit: 10 }],
    ['from c offset 20', { resource_id: 'c', offset: 20 }],
    ['from c limit 0 offset 0', { resource_id: 'c', limit: 0, offset: 0 }],
  ];
  it.each(rows)('%s', (source, request) => {
    expect(compile(source)).toStrictEqual(request);
  });

  it('compiles the example of language.md', () => {
    const source = `from ${R}\nwhere stage in (active, survey) and subject = math\nsearch "linear algebra"\nlimit 10`;
    expect(compile(source)).toStrictEqual({
      resource_id: R,
      filters: { stage: ['active', 'survey'], subject: 'math' },
      q: 'linear algebra',
      limit: 10,
    });
  });

  it('gives the same request for a parsed query as for its text', () => {
    const source = 'from c where a = 1 and (b = x or b = y) search "s" order by a limit 3';
    expect(compile(parse(source))).toStrictEqual(compile(source));
  });
});

describe('the request object', () => {
  const source = 'from c offset 5 limit 10 order by a search "t" select a, b where x in (1, 2) and y = z';

  it('has its keys in the order resource_id, filters, q, fields, sort, limit, offset, whatever the clause order', () => {
    expect(Object.keys(compile(source))).toEqual(['resource_id', 'filters', 'q', 'fields', 'sort', 'limit', 'offset']);
    expect(JSON.stringify(compile(source))).toBe(
      '{"resource_id":"c","filters":{"x":[1,2],"y":"z"},"q":"t","fields":["a","b"],"sort":"a asc","limit":10,"offset":5}',
    );
  });

  it('leaves out every key the query does not set', () => {
    expect(Object.keys(compile('from c'))).toEqual(['resource_id']);
    expect(Object.keys(compile('from c limit 1'))).toEqual(['resource_id', 'limit']);
  });

  it('is deeply frozen', () => {
    const request = compile(source);
    expect(Object.isFrozen(request)).toBe(true);
    expect(Object.isFrozen(request.filters)).toBe(true);
    expect(Object.isFrozen((request.filters as Filters | undefined)?.x)).toBe(true);
    expect(Object.isFrozen(request.fields)).toBe(true);
    expect(() => {
      (request as { limit?: number }).limit = 1;
    }).toThrow(TypeError);
  });

  it('is plain JSON: it survives a JSON round trip unchanged', () => {
    const request = compile(source);
    expect(JSON.parse(JSON.stringify(request))).toStrictEqual(request);
    expect(Object.getPrototypeOf(request)).toBe(Object.prototype);
    expect(Object.getPrototypeOf(request.filters)).toBe(Object.prototype);
  });

  it('is the same for the same query, and not shared between calls', () => {
    const a = compile(source);
    const b = compile(source);
    expect(a).toStrictEqual(b);
    expect(a).not.toBe(b);
  });

  it('orders filters by where each field first appears', () => {
    expect(Object.keys(compile('from c where b = 1 and a = 2 and b in (1, 2)').filters ?? {})).toEqual(['b', 'a']);
  });

  it('keeps a field named __proto__ as an ordinary filter key', () => {
    const request = compile('from c where `__proto__` = 1 and constructor = 2');
    expect(Object.keys(request.filters ?? {})).toEqual(['__proto__', 'constructor']);
    expect(JSON.stringify(request.filters)).toBe('{"__proto__":1,"constructor":2}');
    expect(Object.getPrototypeOf(request.filters)).toBe(Object.prototype);
  });

  it('writes -0 as 0', () => {
    expect(Object.is((compile('from c where f = -0').filters as Filters | undefined)?.f, 0)).toBe(true);
  });
});

describe('intersection of conditions on one field joined by and', () => {
  const rows: [string, unknown][] = [
    ['f in (a, b) and f = b', 'b'],
    ['f = b and f in (a, b)', 'b'],
    ['f in (a, b) and f in (b, c)', ['b']],
    ['f in (a, b, c) and f in (c, b)', ['b', 'c']], // the first condition's order
    ['f in (c, b, a) and f in (a, b, c) and f in (b, c)', ['c', 'b']],
    ['f = a and f = a', 'a'],
    ['f = a and f = b', []],
    ['f in (a, b) and f in (c, d)', []],
    ['f in () and f = a', []],
    ['f = a and f in ()', []],
    ['f in (a, a, b) and f in (a)', ['a']], // each common value once
    ['f in (a, a) and f = a', 'a'],
    // numbers and text compare by canonical text
    ['f = 2020 and f = "2020"', 2020],
    ['f = "2020" and f = 2020', '2020'],
    ['f in (1, 2) and f in ("2", "3")', [2]],
    ['f = 1.5 and f = "1.50"', []],
    ['f = 1e3 and f = "1000"', 1000],
    ['f = 10 and f = "10.0"', []],
    ['f = -0 and f = "0"', 0],
    ['f = true and f = "true"', true],
    ['f = true and f = "True"', []],
    // the text "null" is text
    ['f in ("null", "x") and f = "null"', 'null'],
    // case-sensitive
    ['f = Active and f = active', []],
    // nested and-groups are the same and
    ['(f in (a, b) and g = 1) and (f = b and g in (1, 2))', { f: 'b', g: 1 }],
    ['f in (a, b) and (g = 1 and (f in (b, c) and h = 2))', { f: ['b'], g: 1, h: 2 }],
    // an or group is a value set
    ['f = b and (f = a or f = b)', 'b'],
    ['f in (a, b, c) and (f = c or f = a)', ['a', 'c']],
    ['(f = a or f = b) and (f = b or f = c)', ['b']],
  ];
  it.each(rows)('%s', (where, expected) => {
    const filters = compile(`from c where ${where}`).filters;
    const isMultiField = typeof expected === 'object' && expected !== null && !Array.isArray(expected);
    expect(isMultiField ? filters : (filters as Filters | undefined)?.f).toStrictEqual(expected);
  });

  it('leaves other fields alone', () => {
    expect(compile('from c where a = 1 and f in (x, y) and b = 2 and f = y').filters).toStrictEqual({ a: 1, f: 'y', b: 2 });
  });
});

describe('or groups over one field', () => {
  const rows: [string, unknown][] = [
    ['(f = a or f = b)', ['a', 'b']],
    ['(f = a or f in (b, c) or f in ())', ['a', 'b', 'c']],
    ['(f in () or f in ())', []],
    ['(f = 1 or f = "1" or f = true)', [1, '1', true]],
    ['(f = a or (f = b or f = c))', ['a', 'b', 'c']],
    ['((f = a or f = b) or f = c)', ['a', 'b', 'c']],
    ['(f = a or f = a)', ['a', 'a']], // values as written, like f in (a, a)
    // an and branch over the same field counts as the values it leaves
    ['(f = a or (f in (b, c) and f in (c, d)))', ['a', 'c']],
    ['(f = a or (f = b and f = c))', ['a']],
  ];
  it.each(rows)('%s', (where, expected) => {
    expect((compile(`from c where ${where}`).filters as Filters | undefined)?.f).toStrictEqual(expected);
  });

  it('joins with conditions on other fields', () => {
    expect(compile('from c where (f = a or f = b) and g = 1').filters).toStrictEqual({ f: ['a', 'b'], g: 1 });
  });
});

describe('search, select, order', () => {
  it('keeps the search text exactly', () => {
    expect(compile('from c search "  Linear  Algebra "').q).toBe('  Linear  Algebra ');
    expect(compile('from c search "x\\" or 1=1"').q).toBe('x" or 1=1');
  });

  it('sets no q for an empty or all-white-space search, which means no search', () => {
    expect(compile('from c search ""')).toStrictEqual({ resource_id: 'c' });
    expect(compile('from c search " \\t\\n "')).toStrictEqual({ resource_id: 'c' });
    expect(compile('from c search $q', { q: '  ' })).toStrictEqual({ resource_id: 'c' });
  });

  it('keeps the select order and backtick-quoted names', () => {
    expect(compile('from c select b, `school year`, a, `a``b`').fields).toStrictEqual(['b', 'school year', 'a', 'a`b']);
  });

  it('spells out every direction and quotes names that are not plain identifiers', () => {
    expect(compile('from c order by a, b asc, c desc').sort).toBe('a asc, b asc, c desc');
    expect(compile('from c order by _id desc, A_1').sort).toBe('_id desc, A_1 asc');
    expect(compile('from c order by `school year` desc').sort).toBe('"school year" desc');
    expect(compile('from c order by `say "hi"`').sort).toBe('"say ""hi""" asc');
    expect(compile('from c order by `bük`, `1st`, `a,b`, `a-b`').sort).toBe('"bük" asc, "1st" asc, "a,b" asc, "a-b" asc');
  });
});

describe('what a request cannot express', () => {
  it('rejects or across fields, pointing at the condition on the other field', () => {
    const error = compileError('from c where (stage = a or subject = math)');
    expect(error.code).toBe('OR_ACROSS_FIELDS');
    expect(covered(error)).toBe('subject = math');
    expect(error.message).toContain('"stage"');
    expect(error.message).toContain('"subject"');
    expect(error.hint).toBeDefined();
  });

  it('points at the first condition on another field, however deep', () => {
    expect(covered(compileError('from c where (f = a or f in (b) or g in (1, 2) or h = 3)'))).toBe('g in (1, 2)');
    expect(covered(compileError('from c where x = 1 and (f = a or (f = b or g = c))'))).toBe('g = c');
    expect(covered(compileError('from c where (f = a or (g = b or g = c))'))).toBe('(g = b or g = c)');
  });

  it('rejects an and inside an or unless it is over the or\'s one field', () => {
    const error = compileError('from c where (f = a or (g = 1 and h = 2))');
    expect(error.code).toBe('AND_INSIDE_OR');
    expect(covered(error)).toBe('(g = 1 and h = 2)');
    expect(compileError('from c where (f = a or (f = b and g = 1))').code).toBe('AND_INSIDE_OR');
  });

  it('calls an and over another single field an or across fields', () => {
    const error = compileError('from c where (f = a or (g = 1 and g in (1, 2)))');
    expect(error.code).toBe('OR_ACROSS_FIELDS');
    expect(covered(error)).toBe('(g = 1 and g in (1, 2))');
  });
});

describe('parameters', () => {
  it('binds parameters given to compile', () => {
    expect(compile('from $r where f = $v and g in ($xs) search $q limit $n offset $o', {
      r: 'courses', v: 'x', xs: [1, 2], q: 'text', n: 5, o: 10,
    })).toStrictEqual({ resource_id: 'courses', filters: { f: 'x', g: [1, 2] }, q: 'text', limit: 5, offset: 10 });
  });

  it('reports an unbound parameter by name with its span, the first in the text', () => {
    const error = compileError('from c where f = $first and g = $second');
    expect(error.code).toBe('UNBOUND_PARAMETER');
    expect(error.message).toContain('$first');
    expect(covered(error)).toBe('$first');
    const later = compileError('from c where f = $first and g = $second', { first: 1 });
    expect(covered(later)).toBe('$second');
  });

  it('reports unbound parameters in every place', () => {
    for (const [source, name] of [
      ['from $r', '$r'],
      ['from c search $q', '$q'],
      ['from c limit $n', '$n'],
      ['from c offset $o', '$o'],
      ['from c where f in (1, $x)', '$x'],
      ['from c where (f = 1 or f = $x)', '$x'],
    ] as const) {
      const error = compileError(source);
      expect(error.code).toBe('UNBOUND_PARAMETER');
      expect(covered(error)).toBe(name);
    }
  });

  it('reports an unbound parameter before a problem of the where clause', () => {
    expect(compileError('from $r where (a = 1 or b = 2)').code).toBe('UNBOUND_PARAMETER');
  });

  it('rejects parameters of the wrong type with INVALID_PARAMETER and the source', () => {
    const error = compileError('from c limit $n', { n: 'ten' });
    expect(error.code).toBe('INVALID_PARAMETER');
    expect(covered(error)).toBe('$n');
    expect(error.message).toContain('$n');
    expect(error.message).toContain('whole number');
  });

  it('ignores params the query does not use', () => {
    expect(compile('from c', { unused: 1 })).toStrictEqual({ resource_id: 'c' });
  });

  it('reports unbound parameters of an AST without a source', () => {
    const query = parse('from c where f = $v');
    try {
      compile(query);
      expect.unreachable();
    } catch (error) {
      expect((error as QueryError).code).toBe('UNBOUND_PARAMETER');
      expect((error as QueryError).source).toBeUndefined();
    }
  });
});

describe('errors carry the source text', () => {
  it('on a parse error', () => {
    const error = compileError('from c where f = limit 5');
    expect(error.source).toBe('from c where f = limit 5');
  });

  it('on every compile error', () => {
    for (const source of ['from c where (a = 1 or b = 2)', 'from c where (a = 1 or (b = 1 and c = 2))', 'from $x']) {
      expect(compileError(source).source).toBe(source);
    }
  });

  it('but not for an AST, which has none', () => {
    try {
      compile(parse('from c where (a = 1 or b = 2)'));
      expect.unreachable();
    } catch (error) {
      expect((error as QueryError).code).toBe('OR_ACROSS_FIELDS');
      expect((error as QueryError).source).toBeUndefined();
    }
  });
});

describe('a request names at most 10,000 fields and 1,000 sort items, so a query does too', () => {
  const names = (n: number, prefix: string) => Array.from({ length: n }, (_, i) => `${prefix}${i}`);

  it('up to the bounds: compiles, and the request reads back into the same request', () => {
    for (const text of [`from t select ${names(10_000, 'f').join(', ')}`, `from t order by ${names(1_000, 'k').join(', ')}`]) {
      const request = compile(text);
      expect(compile(fromRequest(request))).toEqual(request);
    }
  });

  it.each([
    [`from t select ${names(10_001, 'f').join(', ')}`, 'select', 'select names 10001 fields, more than the 10000'],
    [`from t order by ${names(1_001, 'k').join(', ')}`, 'order by', 'order by names 1001 fields, more than the 1000'],
  ])('one past: TOO_MANY_NAMES at the clause, from compile and plan alike (%#)', (text, clause, message) => {
    for (const run of [() => compile(text), () => compile(text, { target: 'ckan-2.12' }), () => plan(text)]) {
      const error = (() => {
        try {
          run();
        } catch (e) {
          return e as QueryError;
        }
        throw new Error('compiled');
      })();
      expect(error).toBeInstanceOf(QueryError);
      expect(error.code).toBe('TOO_MANY_NAMES');
      expect(error.message).toContain(message);
      expect(text.slice(error.span.start, error.span.start + clause.length)).toBe(clause);
    }
    // the sql target has no such list
    expect(compile(text, { target: 'sql' }).sql.length).toBeGreaterThan(text.length / 2);
  });

  it('repeated names count, as the request lists them each time', () => {
    const text = `from t select ${[...names(9_999, 'f'), 'f0', 'f1'].join(', ')}`;
    expect(() => compile(text)).toThrow('select names 10001 fields');
  });
});

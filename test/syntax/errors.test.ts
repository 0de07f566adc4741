import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { QueryError, type QueryErrorCode } from '../../src/errors.js';
import { MAX_NESTING, parse } from '../../src/syntax/parse.js';
import { anyCodePoint, propertyParameters, scaledRuns } from '../helpers/arbitraries.js';

function failure(source: string): QueryError {
  try {
    parse(source);
  } catch (error) {
    if (error instanceof QueryError) return error;
    throw error;
  }
  throw new Error(`expected ${JSON.stringify(source)} not to parse`);
}

/** [query, code, the text the span covers] */
const cases: [string, QueryErrorCode, string][] = [
  // lexing
  ['from x where a = 1 & b = 2', 'UNEXPECTED_CHARACTER', '&'],
  ['from x where a = München', 'UNEXPECTED_CHARACTER', 'ü'],
  ['from x where a = "open', 'UNTERMINATED_STRING', '"open'],
  ["from x search 'line one\nline two'", 'UNTERMINATED_STRING', "'line one"],
  [String.raw`from x where a = "a\qb"`, 'INVALID_ESCAPE', String.raw`\q`],
  [String.raw`from x where a = "\u12x"`, 'INVALID_ESCAPE', String.raw`\u12`],
  ['from x where `open = 1', 'UNTERMINATED_FIELD', '`open = 1'],
  // parsing
  ['from courses where subject = limit 5', 'UNEXPECTED_TOKEN', 'limit'],
  ['form x', 'UNEXPECTED_TOKEN', 'form'],
  ['from x where a = 1 or b = 2 and c = 3', 'MIXED_AND_OR', 'and'],
  ['from x where a in (1,', 'UNEXPECTED_END_OF_INPUT', ''],
  ['from x where', 'UNEXPECTED_END_OF_INPUT', ''],
  ['', 'UNEXPECTED_END_OF_INPUT', ''],
  ['from x where a = 1 limit 1 limit 2', 'DUPLICATE_CLAUSE', 'limit 2'],
  ['from x where a = 1 where b = 2', 'DUPLICATE_CLAUSE', 'where b = 2'],
  ['from x order by a order by b desc', 'DUPLICATE_CLAUSE', 'order by b desc'],
  ['from x where (a = 1 or b = 2 and c = 3)', 'MIXED_AND_OR', 'and'],
  ['from x where a = 1 and b = 2 or c = 3', 'MIXED_AND_OR', 'or'],
  ['from x limit -1', 'INVALID_INTEGER', '-1'],
  ['from x offset 2.5', 'INVALID_INTEGER', '2.5'],
  ['from x limit 1e400', 'NUMBER_OUT_OF_RANGE', '1e400'],
  ['from x offset 99999999999999999999', 'NUMBER_OUT_OF_RANGE', '99999999999999999999'],
  ['from x where a = 1e999', 'NUMBER_OUT_OF_RANGE', '1e999'],
  ['from x where id = 9007199254740993', 'NUMBER_NOT_EXACT', '9007199254740993'],
  ['from x where p between 0.10000000000000000001 and 1', 'NUMBER_NOT_EXACT', '0.10000000000000000001'],
  ['from x where `` = 1', 'EMPTY_FIELD_NAME', '``'],
  [`from x where ${'('.repeat(MAX_NESTING + 1)}a = 1${')'.repeat(MAX_NESTING + 1)}`, 'TOO_DEEPLY_NESTED', '('],
];

describe('syntax errors', () => {
  it.each(cases)('%j gives %s', (source, code, covered) => {
    const error = failure(source);
    expect(error.code).toBe(code);
    expect(source.slice(error.span.start, error.span.end)).toBe(covered);
    expect(error.source).toBe(source);
  });

  it('says what was expected and what was found, as in the language design', () => {
    const error = failure('from courses where subject = limit 5');
    expect(error.message).toBe('expected a value after "=", found "limit"');
    expect(error.expected).toEqual(['a value']);
    expect(error.found).toBe('limit');
    expect(error.hint).toBe('a value spelled like a keyword must be quoted: "limit"');
  });

  it('reports an early end right after the last token, which the REPL reads as "keep typing"', () => {
    const error = failure('from x where a in (1,   ');
    expect(error.code).toBe('UNEXPECTED_END_OF_INPUT');
    expect(error.span).toEqual({ start: 21, end: 21 });
    expect(error.message).toBe('the query ends too early: expected a value after ","');
    expect(error.found).toBe('end of input');
  });

  it('lists everything that could come next, and end of input where the query could stop', () => {
    const error = failure('from x where a = 1 foo');
    expect(error.expected).toEqual([
      '"and"', '"or"', '"where"', '"search"', '"select"', '"group by"', '"having"', '"qualify"', '"facet"', '"order by"', '"limit"', '"offset"', 'end of input',
    ]);
  });

  it('past two thousand tokens (no content assist), still says what may follow a condition’s operand, and what starts one', () => {
    // the long query's error comes from the rule the parser stopped in; the short one's from content assist
    const long = `from t where a in (${Array.from({ length: 1100 }, (_, i) => i).join(', ')}) and `;
    const tests = ['"="', '"!="', '"<"', '"<="', '">"', '">="', '"not"', '"in"', '"between"', '"like"', '"ilike"', '"is"'];
    for (const tail of ['b xyz', 'count(*) xyz', 'not b xyz', 'b not xyz']) {
      expect([...failure(`from t where ${tail}`).expected!].sort(), tail).toEqual([...tests].sort());
      expect([...failure(long + tail).expected!].sort(), tail).toEqual([...tests].sort());
    }
    expect(failure(`${long}(b = 1 xyz`).expected).toEqual(['"and"', '"or"', '")"']);
    expect(failure(`${long}b = `).expected).toEqual(['a value']);
    expect(failure(long).expected).toEqual(['a field name', '"("']);
  });

  it('reports the first problem in the text when there are several', () => {
    expect(failure('from x where a = "bad\\q" & b').code).toBe('INVALID_ESCAPE');
    expect(failure('from x where a = ! "bad\\q"').code).toBe('UNEXPECTED_CHARACTER');
  });

  it('does not accept anything after the ";"', () => {
    const error = failure('from x; where a = 1');
    expect(error.code).toBe('UNEXPECTED_TOKEN');
    expect(error.expected).toEqual(['end of input']);
  });
});

describe('hints', () => {
  it.each([
    ['form x', 'did you mean "from"?'],
    ['from x wher a = 1', 'did you mean "where"?'],
    ['from x where a = 1 ordr by a', 'did you mean "order by"?'],
    ['from x slect a', 'did you mean "select"?'],
    ['from x where a = 1 limt 5', 'did you mean "limit"?'],
    ['from x where limit = 1', 'a field name spelled like a keyword must be quoted with backticks: `limit`'],
    ['from x where a in (from)', 'a value spelled like a keyword must be quoted: "from"'],
    ['from where', 'a resource name spelled like a keyword must be quoted: "where"'],
    ['from x where a == 1', 'compare with a single "="'],
    ['from x where a ! 1', 'write "not" before a condition, or "!=" to compare: where not f = 1, where f != 1'],
    ['from courses where a = 00012', 'a number with leading zeros is text: quote it: "00012"'],
    ['from x where a = 1, b = 2', 'join conditions with "and", not ","'],
    ['from x where a in (1, 2,)', 'remove the "," before ")"'],
    ['from x where a in 1, 2', 'write the values in parentheses: in (a, b)'],
    ['from x search linear', 'quote the search text: "linear"'],
    ['from x where a = 3rd', 'text that starts with a digit must be quoted: "3rd"'],
    ['from x where a = high school', 'a value with spaces must be quoted: "high school"'],
    ['from x where "school year" = 1', 'field names are quoted with backticks, not quotes: `school year`'],
    ['from x where 2020 = a', 'a field name that starts with a digit must be quoted with backticks: `2020`'],
    ["from x where a = 'it''s'", "a quote inside a string is escaped with a backslash: \\', not ''"],
    ['where a = 1', 'a query starts with "from" and the resource to search: from <resource> where …'],
    ['from x where a = $', 'a parameter is "$" followed by a name, such as $subject'],
    ['from `air quality`', 'a resource name is quoted with double quotes: "air quality"'],
    ['from x where title ~ "alg"', 'to match text in a field use like: f like "%algebra%" (ilike ignores case); to find words in any field: search "algebra"'],
    ['from x where title contains algebra', 'to match text in a field use like: f like "%algebra%" (ilike ignores case); to find words in any field: search "algebra"'],
    ['from x where title MATCHES "a.*"', 'to match text in a field use like: f like "%algebra%" (ilike ignores case); to find words in any field: search "algebra"'],
    ['.format csv', 'a line that starts with "." is a REPL command (.format, .limit, …), typed at the ckql> prompt; a script or a query holds queries only, and settings are flags (--format csv)'],
    ['from x where a = .5', 'a number is written like 3, -2.5 or 1e3; other text must be quoted: "…"'],
    ['from x limit 1; from y limit 1', 'this takes one query; several, each ended by ";", run as a script: ckql -c \'…; …\', ckql -f FILE, or the REPL'],
  ])('%j → %s', (source, hint) => {
    expect(failure(source).hint).toBe(hint);
  });

  it('does not guess a keyword for a word that is not close to one', () => {
    expect(failure('from x limit 5 elephant').hint).toBeUndefined();
  });
});

describe('any input', () => {
  it('either parses or throws a QueryError whose span lies inside the source', () => {
    const check = (source: string) => {
      try {
        parse(source);
      } catch (error) {
        expect(error).toBeInstanceOf(QueryError);
        const { start, end } = (error as QueryError).span;
        expect(0 <= start && start <= end && end <= source.length).toBe(true);
      }
    };
    // Strings built from the language's own pieces reach far deeper than random text.
    const piece = fc.constantFrom(
      'from', 'where', 'and', 'or', 'in', 'search', 'select', 'order', 'by', 'asc', 'desc', 'limit', 'offset',
      'true', 'null', 'x', 'a-b', '1', '-2.5', '1e400', '"s"', "'t", '"\\q"', '`f`', '`', '$p', '$', '=', '(', ')',
      ',', ';', '--c\n', '\n', ' ', '!', '\ud800', '5b3f1c0a-9d2e-4f6b-8a1c-2e7d9b0c4f11',
    );
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 25 }).map((parts) => parts.join(' ')), check),
      propertyParameters(scaledRuns(3000)),
    );
    fc.assert(fc.property(fc.string({ unit: anyCodePoint, maxLength: 60 }), check), propertyParameters(scaledRuns(2000)));
  });

  it('gives a QueryError, not a stack overflow, for absurd nesting and sizes', () => {
    expect(failure(`from x where ${'('.repeat(100_000)}`).code).toBe('TOO_DEEPLY_NESTED');
    expect(failure(`from x where a in (${'1,'.repeat(50_000)}`).code).toBe('UNEXPECTED_END_OF_INPUT');
    expect(failure(`from x where a in (${'1,'.repeat(50_000)} limit`).expected).toContain('a value');
  });
});

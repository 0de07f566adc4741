import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { suggest } from '../../src/syntax/suggest.js';
import { anyCodePoint, propertyParameters, scaledRuns } from '../helpers/arbitraries.js';

const keywords = (texts: string[]) => texts.map((text) => ({ kind: 'keyword', text }));

describe('suggest', () => {
  it('offers "from" at the start', () => {
    expect(suggest('')).toEqual({ from: 0, prefix: '', suggestions: keywords(['from']) });
  });

  it('offers a resource after "from "', () => {
    expect(suggest('from ')).toEqual({ from: 5, prefix: '', suggestions: [{ kind: 'resource' }] });
  });

  it('offers the fields of the named resource, or a group, after "where "', () => {
    expect(suggest('from courses where ')).toEqual({
      from: 19,
      prefix: '',
      suggestions: [{ kind: 'keyword', text: 'not' }, { kind: 'field', resource: 'courses' }, { kind: 'punctuation', text: '(' }, { kind: 'function' }],
    });
  });

  it('offers every operator and test after a field, and what each one goes on with', () => {
    const texts = (source: string) => suggest(source).suggestions.map((s) => ('text' in s ? s.text : s.kind));
    expect(texts('from x where a ')).toEqual(['=', '!=', '<', '<=', '>', '>=', 'not', 'in', 'between', 'like', 'ilike', 'is']);
    expect(texts('from x where a not ')).toEqual(['in', 'like', 'ilike']);
    expect(texts('from x where a is ')).toEqual(['not', 'null']);
    expect(texts('from x where a between 1 ')).toEqual(['and']);
    expect(suggest('from x where a >= ').suggestions).toEqual([{ kind: 'value', field: 'a', resource: 'x' }]);
    expect(texts('from x order by a desc nulls ')).toEqual(['first', 'last']);
    expect(texts('from x search "t" ')).toEqual(['language', 'where', 'select', 'group by', 'having', 'qualify', 'facet', 'order by', 'limit', 'offset']);
    expect(texts('from x select ')).toEqual(['distinct', 'count', 'sum', 'avg', 'min', 'max', 'year', 'month', 'week', 'day', 'bucket', 'field', 'function']);
    // aggregates and buckets only where they may stand: not in where
    expect(texts('from x where ')).toEqual(['not', 'field', '(', 'function']);
    expect(texts('from x group by ')).toEqual(['year', 'month', 'week', 'day', 'bucket', 'field', 'function']);
    expect(texts('from x group by a having ')).toEqual(['not', 'count', 'sum', 'avg', 'min', 'max', 'year', 'month', 'week', 'day', 'bucket', 'field', '(', 'function']);
    expect(texts('from x order by ')).toEqual(['count', 'sum', 'avg', 'min', 'max', 'field', 'function']);
    // a soft keyword after a resource is that keyword, never the resource's alias
    expect(texts('from x facet ')).toEqual(['field']);
    expect(texts('from x join ')).toEqual(['resource']);
    expect(texts('from x join y on ')).toEqual(['field']);
    // in a join, a declared alias (or resource name) and its dot ask for that resource's fields
    expect(suggest('from enrolments e join courses as c on e.course = c.co').suggestions).toEqual([{ kind: 'field', resource: 'courses', qualifier: 'c' }]);
    expect(suggest('from enrolments e join courses c on e.course = c.code select enrolments.').suggestions).toEqual([{ kind: 'field', resource: 'enrolments', qualifier: 'enrolments' }]);
    expect(suggest('from t where x.').suggestions).toEqual([{ kind: 'field', resource: 't' }]);
    expect(texts('from courses c ')).toEqual(['left', 'join', 'where', 'search', 'select', 'group by', 'having', 'qualify', 'facet', 'order by', 'limit', 'offset']);
    expect(texts('from x search title "a", ')).toEqual(['field']);
  });

  it('stays linear on thousands of unclosed parentheses (it suggests nothing past the nesting parse allows)', () => {
    const fastest = (n: number) => {
      const source = 'from courses where ' + '('.repeat(n);
      const runs = [0, 1, 2, 3, 4].map(() => {
        const start = performance.now();
        expect(suggest(source).suggestions).toEqual([]);
        return performance.now() - start;
      });
      // the fastest run: the least disturbed by other work on the machine
      return Math.min(...runs);
    };
    fastest(1_000); // warm up
    const small = fastest(1_000);
    const large = fastest(30_000);
    // thirty times the input: linear is about 30, quadratic about 900
    expect(large / Math.max(small, 1)).toBeLessThan(300);
  });

  it('offers values of the field after "where subject = "', () => {
    expect(suggest('from courses where subject = ')).toEqual({
      from: 29,
      prefix: '',
      suggestions: [{ kind: 'value', field: 'subject', resource: 'courses' }],
    });
    expect(suggest("from 'my data' where `school year` in (1, ")).toMatchObject({
      suggestions: [{ kind: 'value', field: 'school year', resource: 'my data' }],
    });
  });

  it('completes a keyword from the middle of a word', () => {
    expect(suggest('from courses wh')).toEqual({ from: 13, prefix: 'wh', suggestions: keywords(['where']) });
    expect(suggest('from courses S')).toMatchObject({ prefix: 'S', suggestions: keywords(['search', 'select']) });
    // the cursor inside "where": the word so far is "wh"
    expect(suggest('from courses where a = 1', 15)).toEqual({ from: 13, prefix: 'wh', suggestions: keywords(['where']) });
  });

  it('offers "and", "or" and the clauses not yet given after a complete condition', () => {
    expect(suggest('from x where a = 1 ').suggestions).toEqual(
      keywords(['and', 'or', 'search', 'select', 'group by', 'having', 'qualify', 'facet', 'order by', 'limit', 'offset']),
    );
    expect(suggest('from x where a = 1 limit 5 ').suggestions).toEqual(keywords(['search', 'select', 'group by', 'having', 'qualify', 'facet', 'order by', 'offset']));
  });

  it('offers "and", "or" and ")" inside a group', () => {
    expect(suggest('from x where (a = 1 ').suggestions).toEqual([
      ...keywords(['and', 'or']),
      { kind: 'punctuation', text: ')' },
    ]);
  });

  it('offers a direction, a comma or the next clause after a sort key', () => {
    expect(suggest('from x order by a ').suggestions).toEqual([
      ...keywords(['asc', 'desc', 'nulls']),
      { kind: 'punctuation', text: ',' },
      ...keywords(['where', 'search', 'select', 'group by', 'having', 'qualify', 'facet', 'limit', 'offset']),
    ]);
    expect(suggest('from x order ').suggestions).toEqual(keywords(['by']));
  });

  it('treats an open string or backtick name at the cursor as the word being typed', () => {
    expect(suggest('from x where a = "ma')).toEqual({
      from: 17,
      prefix: '"ma',
      suggestions: [{ kind: 'value', field: 'a', resource: 'x' }],
    });
    expect(suggest('from x where `sch')).toEqual({ from: 13, prefix: '`sch', suggestions: [{ kind: 'field', resource: 'x' }] });
  });

  it('completes a partial resource id that starts with digits as one word, however the lexer splits it', () => {
    // `4798d5` lexes as the number 4798 and the name d5; `12345678-` stops at the "-"
    expect(suggest('from 4798d5')).toEqual({ from: 5, prefix: '4798d5', suggestions: [{ kind: 'resource' }] });
    expect(suggest('from 4798d5aa-c4aa-5898-9155-fd64')).toEqual({
      from: 5,
      prefix: '4798d5aa-c4aa-5898-9155-fd64',
      suggestions: [{ kind: 'resource' }],
    });
    expect(suggest('from 12345678-')).toEqual({ from: 5, prefix: '12345678-', suggestions: [{ kind: 'resource' }] });
    expect(suggest('from 4798d5 where a = 1', 11)).toEqual({ from: 5, prefix: '4798d5', suggestions: [{ kind: 'resource' }] });
    expect(suggest('from x where a = 12ab')).toEqual({
      from: 17,
      prefix: '12ab',
      suggestions: [{ kind: 'value', field: 'a', resource: 'x' }],
    });
  });

  it('leaves digits inside a comment or an open string alone', () => {
    expect(suggest('from x -- 4798d5').suggestions).toEqual([]);
    expect(suggest('from x where a = "4798d5')).toMatchObject({ from: 17, prefix: '"4798d5' });
  });

  it('offers nothing inside a comment', () => {
    expect(suggest('from x -- wh').suggestions).toEqual([]);
  });

  it('never throws, whatever the text and cursor', () => {
    fc.assert(
      fc.property(fc.string({ unit: anyCodePoint, maxLength: 40 }), fc.integer({ min: -5, max: 50 }), (text, cursor) => {
        const result = suggest(text, cursor);
        expect(result.from).toBeGreaterThanOrEqual(0);
        expect(result.from).toBeLessThanOrEqual(text.length);
      }),
      propertyParameters(scaledRuns(300)),
    );
    expect(suggest('from x ', Number.NaN).from).toBe(7);
  });
});

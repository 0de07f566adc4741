/**
 * Windows and `qualify` (docs/expressions.md): what the parser reads, how
 * format writes it back, and the errors of a window where none may stand.
 */
import { describe, expect, it } from 'vitest';
import { QueryError } from '../../src/errors.js';
import { format } from '../../src/format.js';
import { parse } from '../../src/syntax/parse.js';
import { stripSpans } from '../helpers/spans.js';

function failure(text: string): { code: string; covers: string } {
  try {
    parse(text);
  } catch (error) {
    if (!(error instanceof QueryError)) throw error;
    return { code: error.code, covers: text.slice(error.span.start, error.span.end) };
  }
  throw new Error(`parsed: ${text}`);
}

describe('windows: the AST', () => {
  it('reads a window function over a partition and an order, and qualify over its name', () => {
    const query = parse('from grades select subject, row_number() over (partition by subject order by grade desc) as r qualify r <= 3');
    expect(stripSpans(query.select!.items[1]!.value)).toEqual({
      kind: 'window',
      call: { kind: 'window-call', fn: 'row_number', args: [] },
      partition: [{ kind: 'field', name: 'subject' }],
      order: [{ kind: 'sort-key', field: { kind: 'field', name: 'grade' }, direction: 'desc' }],
    });
    expect(stripSpans(query.qualify!.condition)).toEqual({ kind: 'compare', op: 'lte', field: { kind: 'field', name: 'r' }, value: { kind: 'number', value: 3 } });
  });

  it('wraps an aggregate as it stands, and reads lag and lead with their offsets', () => {
    const query = parse('from t select sum(x) over (partition by a), lag(x, 2) over (order by d), lead(x) over ()');
    const [sum, lag, lead] = query.select!.items.map((item) => stripSpans(item.value));
    expect(sum).toEqual({ kind: 'window', call: { kind: 'aggregate', fn: 'sum', field: { kind: 'field', name: 'x' } }, partition: [{ kind: 'field', name: 'a' }], order: [] });
    expect(lag).toMatchObject({ call: { fn: 'lag', args: [{ kind: 'field', name: 'x' }, { kind: 'number', value: 2 }] } });
    expect(lead).toMatchObject({ call: { fn: 'lead', args: [{ kind: 'field', name: 'x' }] }, partition: [], order: [] });
  });

  it('gives each window its span, from the call to the closing parenthesis', () => {
    const text = 'from t select rank() over (order by x desc nulls last) as r';
    const window = parse(text).select!.items[0]!.value;
    expect(text.slice(window.span.start, window.span.end)).toBe('rank() over (order by x desc nulls last)');
  });

  it('keeps over, partition and qualify as names elsewhere', () => {
    expect(stripSpans(parse('from t select over, partition, qualify where over = 1').select!.items.map((item) => item.value))).toEqual([
      { kind: 'field', name: 'over' }, { kind: 'field', name: 'partition' }, { kind: 'field', name: 'qualify' },
    ]);
    expect(parse('from t qualify rank() over () = 1').from.alias).toBeUndefined();
  });

  it.each([
    'from grades select subject, student, row_number() over (partition by subject order by grade desc) as r qualify r <= 3 order by subject, r',
    'from t select count(*) over (), avg(x) over (partition by a, b order by c, d desc nulls first) as m qualify m > 2 or a = x',
    'from t qualify rank() over (order by x) = 1',
    'from t group by a select a, sum(b) as s, rank() over (order by sum(b) desc) as r qualify r <= 2',
  ])('format round-trips %s', (text) => {
    const query = parse(text);
    expect(stripSpans(parse(format(query)))).toEqual(stripSpans(query));
  });

  it('prints qualify after having, and a window as it is written', () => {
    expect(format(parse('from t qualify r < 2 group by a having count(*) > 1 select a, rank() over (order by a) as r'))).toBe(
      'from t\nselect a, rank() over (order by a) as r\ngroup by a\nhaving count(*) > 1\nqualify r < 2',
    );
  });
});

describe('windows: errors at their spans', () => {
  it.each([
    ['from t where row_number() over () = 1', 'WINDOW_IN_WHERE', 'row_number() over ()'],
    ['from t group by a, rank() over (order by a)', 'WINDOW_IN_WHERE', 'rank() over (order by a)'],
    ['from t group by a select a having sum(b) over () > 1', 'WINDOW_IN_WHERE', 'sum(b) over ()'],
    ['from t select a qualify a = 1', 'QUALIFY_WITHOUT_WINDOW', 'qualify a = 1'],
    ['from t select sum(x) over (order by rank() over ())', 'NESTED_WINDOW', 'rank() over ()'],
    ['from t select rank() over (partition by lag(x) over ())', 'NESTED_WINDOW', 'lag(x) over ()'],
    ['from t select row_number()', 'WINDOW_WITHOUT_OVER', 'row_number()'],
    ['from t select round(x) over ()', 'OVER_WITHOUT_WINDOW_FUNCTION', 'over'],
    ['from t select rank(x) over ()', 'WRONG_ARGUMENT_COUNT', 'rank(x)'],
    ['from t select lag() over ()', 'WRONG_ARGUMENT_COUNT', 'lag()'],
    ['from t select lag(x, 1.5) over ()', 'INVALID_INTEGER', '1.5'],
    ['from t select lag(x, -1) over ()', 'INVALID_INTEGER', '-1'],
    ['from t select count(distinct x) over ()', 'DISTINCT_IN_WINDOW', 'count(distinct x)'],
    ['from t select rank() over () as r qualify count(*) > 1', 'AGGREGATE_IN_QUALIFY', 'count(*)'],
    ['from t select rank() over () as r qualify r = 1 qualify r = 2', 'DUPLICATE_CLAUSE', 'qualify r = 2'],
    ['from t select ranks() over ()', 'UNKNOWN_FUNCTION', 'ranks'],
    ['from t select rank() over (partition by 1)', 'UNEXPECTED_TOKEN', '1'],
  ])('%s → %s', (text, code, covers) => {
    expect(failure(text)).toEqual({ code, covers });
  });
});

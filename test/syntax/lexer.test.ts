import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import type { ILexingResult } from 'chevrotain';
import { chevrotainTokenize, queryLexer } from '../../src/syntax/tokens.js';

/** `Type:image` for every token the parser would see, plus the broken group and errors. */
function lex(source: string) {
  const result = queryLexer.tokenize(source);
  return {
    tokens: result.tokens.map((t) => `${t.tokenType.name}:${t.image}`),
    broken: (result.groups['broken'] ?? []).map((t) => `${t.tokenType.name}:${t.image}`),
    errors: result.errors.map((e) => e.offset),
  };
}

describe('lexer', () => {
  it('reads keywords in any case', () => {
    expect(lex('FROM Where aNd OR In SEARCH select ORDER by ASC desc LIMIT offset TRUE False NULL').tokens).toEqual([
      'From:FROM', 'Where:Where', 'And:aNd', 'Or:OR', 'In:In', 'Search:SEARCH', 'Select:select', 'Order:ORDER',
      'By:by', 'Asc:ASC', 'Desc:desc', 'Limit:LIMIT', 'Offset:offset', 'True:TRUE', 'False:False', 'Null:NULL',
    ]);
  });

  it('keeps a word that starts with a keyword one bareword (keywords match whole words only)', () => {
    expect(lex('index order_id orders fromage in-state null: limit.x').tokens).toEqual([
      'Bareword:index', 'Bareword:order_id', 'Bareword:orders', 'Bareword:fromage', 'Bareword:in-state',
      'Bareword:null:', 'Bareword:limit.x',
    ]);
  });

  it('reads "order" as order, not "or" followed by "der"', () => {
    expect(lex('order').tokens).toEqual(['Order:order']);
  });

  it('reads a UUID as one token, also when it starts with digits', () => {
    expect(lex('5b3f1c0a-9d2e-4f6b-8a1c-2e7d9b0c4f11 12345678-1234-1234-1234-123456789abc').tokens).toEqual([
      'Uuid:5b3f1c0a-9d2e-4f6b-8a1c-2e7d9b0c4f11',
      'Uuid:12345678-1234-1234-1234-123456789abc',
    ]);
  });

  it('reads an ISO date or timestamp as one DateTime token, and nothing else as one', () => {
    expect(lex('2025-09-01 2025-09-01T08:30 2025-09-01t08:30:59 2025-09-01T08:30:00.123Z 2025-09-01T08:30:00+02:00 2025-09-01T08:30-0530 2025-09-01T08:30+02').tokens).toEqual([
      'DateTime:2025-09-01', 'DateTime:2025-09-01T08:30', 'DateTime:2025-09-01t08:30:59', 'DateTime:2025-09-01T08:30:00.123Z',
      'DateTime:2025-09-01T08:30:00+02:00', 'DateTime:2025-09-01T08:30-0530', 'DateTime:2025-09-01T08:30+02',
    ]);
    // a date ends where a value may end: before a comma, a parenthesis, a comment
    expect(lex('(2025-09-01,2025-09-02)--x').tokens).toEqual(['LParen:(', 'DateTime:2025-09-01', 'Comma:,', 'DateTime:2025-09-02', 'RParen:)']);
    // not dates: the shape is not YYYY-MM-DD, or more follows that would continue a word or a number
    expect(lex('2025-9-01').tokens).toEqual(['Number:2025', 'Number:-9', 'Number:-0', 'Number:1']);
    expect(lex('2025-09-012').tokens[0]).toBe('Number:2025');
    expect(lex('2025-09-01x').tokens[0]).toBe('Number:2025');
    expect(lex('2025-09-01T08').tokens[0]).toBe('Number:2025');
    expect(lex('20250901-1234-1234-1234-123456789abc').tokens).toEqual(['Uuid:20250901-1234-1234-1234-123456789abc']);
  });

  it('hands a longer bareword that starts like a UUID back to Bareword', () => {
    expect(lex('abcdef01-abcd-abcd-abcd-abcdefabcdef.csv').tokens).toEqual([
      'Bareword:abcdef01-abcd-abcd-abcd-abcdefabcdef.csv',
    ]);
  });

  it('reads JSON numbers', () => {
    expect(lex('0 -3 2.5 1e3 -1.5E-7 10').tokens).toEqual([
      'Number:0', 'Number:-3', 'Number:2.5', 'Number:1e3', 'Number:-1.5E-7', 'Number:10',
    ]);
  });

  it('reads barewords of letters, digits, _ - . : that start with a letter or _', () => {
    expect(lex('active high-school v1.2 _x a:b').tokens).toEqual([
      'Bareword:active', 'Bareword:high-school', 'Bareword:v1.2', 'Bareword:_x', 'Bareword:a:b',
    ]);
  });

  it('ends a bareword at "--", which starts a comment', () => {
    expect(lex('active-- note\nx').tokens).toEqual(['Bareword:active', 'Bareword:x']);
  });

  it('skips comments and white space, newlines included', () => {
    expect(lex('from -- the table\n\tx -- end').tokens).toEqual(['From:from', 'Bareword:x']);
  });

  it('reads strings in both quotes with escapes', () => {
    expect(lex(String.raw`"a\"b" 'c\'d' "\\ \n \t \u00e9 \/"`).tokens).toEqual([
      String.raw`String:"a\"b"`, String.raw`String:'c\'d'`, String.raw`String:"\\ \n \t \u00e9 \/"`,
    ]);
  });

  it('puts strings with unknown escapes and unclosed strings in the broken group', () => {
    expect(lex(String.raw`"a\qb" 'open`).broken).toEqual([String.raw`BadEscapeString:"a\qb"`, "UnterminatedString:'open"]);
    expect(lex('"ends at the line\nx').broken).toEqual(['UnterminatedString:"ends at the line']);
  });

  it('reads backtick fields with doubled backticks, and unclosed ones as broken', () => {
    expect(lex('`school year` `a``b` ``').tokens).toEqual(['BacktickField:`school year`', 'BacktickField:`a``b`', 'BacktickField:``']);
    expect(lex('`open').broken).toEqual(['UnterminatedField:`open']);
  });

  it('reads parameters and punctuation', () => {
    expect(lex('$subject = ( , ) ;').tokens).toEqual([
      'Parameter:$subject', 'Equals:=', 'LParen:(', 'Comma:,', 'RParen:)', 'Semicolon:;',
    ]);
  });

  it('reports characters outside the language', () => {
    expect(lex('a ! b').errors).toEqual([2]);
    expect(lex('a € b').errors).toEqual([2]);
  });

  it('does not overflow on megabyte-long tokens', () => {
    const long = 'a'.repeat(2_000_000);
    expect(lex(`"${long}"`).tokens).toHaveLength(1);
    expect(lex(`"${'\\n'.repeat(1_000_000)}"`).tokens).toHaveLength(1);
    expect(lex(`x${'-a'.repeat(1_000_000)}`).tokens).toHaveLength(1);
    expect(lex(`\`${'``'.repeat(1_000_000)}\``).tokens).toHaveLength(1);
  });
});

/** Everything a lexing result says, comparable with `toEqual`. */
function full(result: ILexingResult) {
  const token = (t: { tokenType: { name: string }; tokenTypeIdx: number; image: string; startOffset: number }) => [t.tokenType.name, t.tokenTypeIdx, t.image, t.startOffset];
  return {
    tokens: result.tokens.map(token),
    broken: (result.groups['broken'] ?? []).map(token),
    errors: result.errors.map((e) => [e.offset, e.length]),
  };
}

describe('the lexer and Chevrotain\'s', () => {
  // A seeded generator: the same texts on every run.
  let seed = 20;
  const random = (n: number): number => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed % n;
  };
  const pieces = [
    ' ', '  ', '\n', '\t', '\r\n', '\u00a0', '\ufeff', '\f', '\v', '-- note\n', '--', '-', '--x', 'from', 'FROM', 'where', 'Or', 'order', 'and',
    'in', 'not', 'null', 'nulls', 'first', 'language', 'is', 'between', 'ilike', 'distinct', 'x', 'a.b', 'a:b', 'x-y', 'x--', '_u', 'a1',
    'abcdef01', 'abcdef01-2345-6789-abcd-ef0123456789', '12345678-1234-1234-1234-123456789abc', 'deadbeef-dead-beef-dead-beefdeadbeef.csv',
    '2025-09-01', '2025-09-01T08:30', '2025-09-01T08:30:00.5Z', '2025-09-01t08:30+02:00', '2025-09-01T08:30-0200', '2025-13-1',
    '0', '007', '12', '-3', '2.5', '1e3', '1E-2', '1e', '1.', '.5', '-0.0e+1', '"a b"', "'c'", '"\\n\\u0041"', '"\\q"', '"open', "'", '`f g`', '`a``b`', '`open',
    '$p', '$_1', '$', '$1', '=', '!=', '!', '<>', '<=', '<', '>=', '>', '(', ')', ',', ';', '.', ':', '€', 'é', '*', '#', '0x1f',
    'c.', 'e.`f`', 'count', 'group', 'by', 'having', 'join', 'left', 'on', 'as', 'facet', 'top', 'sum', 'avg', 'month', 'bucket',
  ];
  const texts = [
    ...readFileSync(new URL('../../examples/queries.ckql', import.meta.url), 'utf8').split(/\n(?=from )/i),
    ...Array.from({ length: 3000 }, () => Array.from({ length: 1 + random(12) }, () => pieces[random(pieces.length)]).join(random(3) === 0 ? '' : ' ')),
  ];

  it('give the same tokens, broken tokens and errors for queries and for random text', () => {
    for (const text of texts) expect(full(queryLexer.tokenize(text)), JSON.stringify(text)).toEqual(full(chevrotainTokenize(text)));
  });
});

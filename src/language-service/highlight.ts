/**
 * Highlighting from ckql's own lexer: every token with a class for a
 * painter (CodeMirror in the playground, semantic tokens in an editor). No
 * second grammar: the boundaries are the lexer's, and a soft keyword is a
 * keyword only where the grammar reads it as one.
 */
import type { IToken } from 'chevrotain';
import { functionNamed, windowFunctionNamed } from '../syntax/functions.js';
import { False, LParen, Null, True } from '../syntax/tokens.js';
import { isHardKeyword, isSoftKeyword, lexAll, roleOf } from './lex.js';

/**
 * - `keyword`: `from`, `where`, …, `nulls first` / `language` where they are keywords, and a function's name before its `(`
 * - `constant`: `true`, `false`, `null`
 * - `name`: a bareword or UUID (a resource, a field or a value, by position)
 * - `field`: a backtick-quoted field name
 * - `string`, `number`, `parameter` (`$name`), `operator` (`= != < <= > >= + - * / % || ::`),
 *   `punctuation` (`( ) , ;`), `comment`
 * - `invalid`: an open string or name, an unknown escape, a character outside the language
 */
export type TokenClass =
  | 'keyword' | 'constant' | 'name' | 'field' | 'string' | 'number' | 'parameter' | 'operator' | 'punctuation' | 'comment'
  | 'invalid';

export interface HighlightToken {
  readonly start: number;
  readonly end: number;
  readonly class: TokenClass;
  /** the lexer's token type (`Where`, `Bareword`, `Comment`, `Unexpected`, …) */
  readonly type: string;
}

const classOfType: Readonly<Record<string, TokenClass>> = {
  Uuid: 'name',
  Bareword: 'name',
  Number: 'number',
  String: 'string',
  BadEscapeString: 'invalid',
  UnterminatedString: 'invalid',
  BacktickField: 'field',
  UnterminatedField: 'invalid',
  Parameter: 'parameter',
  Plus: 'operator',
  Minus: 'operator',
  Star: 'operator',
  Slash: 'operator',
  Percent: 'operator',
  Concat: 'operator',
  DoubleColon: 'operator',
  Equals: 'operator',
  NotEquals: 'operator',
  LessEquals: 'operator',
  Less: 'operator',
  GreaterEquals: 'operator',
  Greater: 'operator',
  LParen: 'punctuation',
  RParen: 'punctuation',
  Comma: 'punctuation',
  Semicolon: 'punctuation',
  Comment: 'comment',
  Unexpected: 'invalid',
};

/**
 * The tokens of `text` (one query or a script), in order, white space left out.
 * @example
 * highlight('from t where language = en')
 * // → [{ start: 0, end: 4, class: 'keyword', type: 'From' }, { start: 5, end: 6, class: 'name', … },
 * //    { …, class: 'keyword', type: 'Where' }, { start: 13, end: 21, class: 'name', type: 'Language' }, …]
 */
export function highlight(text: string): HighlightToken[] {
  const lexed = lexAll(text);
  const tokens = lexed.flatMap((each) => (each.token === undefined || each.type.startsWith('Unterminated') || each.type === 'BadEscapeString' ? [] : [each.token]));
  const indexOf = new Map<IToken, number>(tokens.map((token, index) => [token, index]));
  return lexed.map((each): HighlightToken => {
    const token = each.token;
    let cls = classOfType[each.type];
    // `round(`: a function's name (a bareword where a field could not stand, before a parenthesis).
    if (cls === 'name' && token !== undefined && (functionNamed(token.image) ?? windowFunctionNamed(token.image)) !== undefined && tokens[(indexOf.get(token) ?? -2) + 1]?.tokenType === LParen) cls = 'keyword';
    if (cls === undefined && token !== undefined) {
      const type = token.tokenType;
      if (type === True || type === False || type === Null) cls = 'constant';
      else if (isHardKeyword(type)) cls = 'keyword';
      else if (isSoftKeyword(type)) cls = roleOf(tokens, indexOf.get(token) ?? -1) === 'keyword' ? 'keyword' : 'name';
    }
    return { start: each.start, end: each.end, class: cls ?? 'name', type: each.type };
  });
}

/**
 * The tokens of a whole text for the service: ckql's own lexer, read past
 * the places where `parse` stops (a character outside the language, an open
 * string), with the comments the lexer skips, and the rule each word stands
 * in, asked of the grammar's content assist (so a field named `language` is
 * a field, and `nulls first` after a sort key is a keyword).
 */
import { EOF, type IToken, type TokenType } from 'chevrotain';
import { queryParser, type QueryParser, type RuleName } from '../syntax/parser.js';
import { Bareword, Keyword, LParen, queryLexer, Semicolon, softKeywordTokens } from '../syntax/tokens.js';

/** One piece of the text as the lexer reads it. */
export interface LexedToken {
  readonly start: number;
  readonly end: number;
  /**
   * the lexer's token type (`Where`, `Bareword`, `String`, `UnterminatedString`, …),
   * `Comment`, or `Unexpected` for a character outside the language
   */
  readonly type: string;
  /** the lexer's token (absent for comments and unexpected characters) */
  readonly token?: IToken;
}

/**
 * Every token of `text` in order, comments and broken tokens included; a
 * character the lexer cannot read becomes an `Unexpected` token and lexing
 * goes on after it. Only white space is left out.
 */
export function lexAll(text: string): LexedToken[] {
  const out: LexedToken[] = [];
  let offset = 0;
  while (offset <= text.length) {
    const rest = offset === 0 ? text : text.slice(offset);
    const lexed = queryLexer.tokenize(rest);
    const tokens = [...lexed.tokens, ...(lexed.groups['broken'] ?? [])].sort((a, b) => a.startOffset - b.startOffset);
    const stop = lexed.errors[0]?.offset ?? rest.length;
    let last = 0;
    for (const token of tokens) {
      if (token.startOffset >= stop) break;
      pushComments(rest, last, token.startOffset, offset, out);
      const start = token.startOffset + offset;
      const moved = offset === 0 ? token : { ...token, startOffset: start };
      out.push({ start, end: start + token.image.length, type: token.tokenType.name, token: moved });
      last = token.startOffset + token.image.length;
    }
    pushComments(rest, last, stop, offset, out);
    if (stop >= rest.length) break;
    const width = String.fromCodePoint(rest.codePointAt(stop)!).length;
    out.push({ start: offset + stop, end: offset + stop + width, type: 'Unexpected' });
    offset += stop + width;
  }
  return out;
}

/** The `--` comments in `text[from, to)`, which holds only white space and comments. */
function pushComments(text: string, from: number, to: number, shift: number, out: LexedToken[]): void {
  let at = text.indexOf('--', from);
  while (at >= 0 && at < to) {
    let end = at;
    while (end < to && text.charCodeAt(end) !== 10 && text.charCodeAt(end) !== 13) end++;
    out.push({ start: at + shift, end: end + shift, type: 'Comment' });
    at = text.indexOf('--', end);
  }
}

/** The grammar rule a token would stand in, or its own type when it is a word of the grammar. */
export type Role = RuleName | 'keyword' | 'unknown';

/**
 * Past this many tokens before it in its statement, a word's rule is not
 * asked of the grammar (content assist re-reads them all); it is then read
 * as the lexer's type says.
 */
const ROLE_TOKEN_LIMIT = 2_000;

/**
 * What the parser would take `tokens[index]` for, given the tokens of its
 * statement before it: `keyword` when it can only be the keyword its type
 * names (a soft keyword in its one place), else the rule (`field`, `value`,
 * `resource`, …) that wants a name there; `unknown` where nothing fits.
 */
export function roleOf(tokens: readonly IToken[], index: number): Role {
  const token = tokens[index];
  if (token === undefined) return 'unknown';
  let first = index;
  while (first > 0 && tokens[first - 1]!.tokenType !== Semicolon) first--;
  const before = tokens.slice(first, index);
  if (before.length > ROLE_TOKEN_LIMIT) return isHardKeyword(token.tokenType) ? 'keyword' : 'unknown';
  let paths;
  try {
    paths = queryParser().computeContentAssist('query', before);
  } catch {
    return 'unknown';
  }
  const type = token.tokenType;
  const named = asName(paths, type, tokens[index + 1]);
  const keywordHere = (isHardKeyword(type) || isSoftKeyword(type)) && paths.some((path) => path.nextTokenType === type);
  if (!keywordHere) return named ?? 'unknown';
  // `count(`, `year(`: the parser tries the keyword's own rule (an aggregate, a bucket) before a function call.
  if (named === undefined || named === 'functionCall' || isHardKeyword(type)) return 'keyword';
  // Both readings fit so far (a soft keyword where a name may also stand):
  // the token after it decides, as the parser's lookahead would.
  const following = tokens[index + 1];
  if (following === undefined || following.tokenType === Semicolon) return named;
  // A soft keyword before `(` (`count(`, `year(`) is read by its own rule, which the parser tries before a function call.
  if (following.tokenType === LParen) return 'keyword';
  // The parser matches a token by its type's index, not its type: both say it is a plain name.
  const plain: IToken = { ...token, tokenType: Bareword, tokenTypeIdx: Bareword.tokenTypeIdx! };
  let after;
  try {
    after = queryParser().computeContentAssist('query', [...before, plain]);
  } catch {
    return 'keyword';
  }
  const fits = after.some((path) => path.nextTokenType === following.tokenType || (following.tokenType.CATEGORIES ?? []).includes(path.nextTokenType));
  if (fits) return named;
  // Content assist loses the comparison after a name inside nested parentheses (`where ((count = 1 …`):
  // there, parse the statement with the plain name and see whether the parser gets past the token after it.
  let last = index + 1;
  while (last + 1 < tokens.length && tokens[last + 1]!.tokenType !== Semicolon) last++;
  return parsesPast([...before, plain, ...tokens.slice(index + 1, last + 1)], following) ? named : 'keyword';
}

/** Whether the parser, reading `tokens`, stops (if at all) after `token`, or only for want of more. */
function parsesPast(tokens: readonly IToken[], token: IToken): boolean {
  if (tokens.length > ROLE_TOKEN_LIMIT) return false;
  const parser = queryParser();
  try {
    parser.input = tokens as IToken[];
    parser.query();
    const error = parser.errors[0];
    return error === undefined || error.token.tokenType === EOF || error.token.startOffset > token.startOffset;
  } catch {
    return false;
  } finally {
    parser.input = [];
  }
}

/**
 * The rule that would take `type` as a name (a bareword, a backtick name, a
 * string), if any. A bareword may begin a function call wherever a field may
 * stand: it is the call only when `(` follows, as the parser's lookahead says.
 */
function asName(paths: ReturnType<QueryParser['computeContentAssist']>, type: TokenType, following: IToken | undefined): Role | undefined {
  let call: Role | undefined;
  let other: Role | undefined;
  for (const path of paths) {
    const next = path.nextTokenType;
    const rule = (path.ruleStack[path.ruleStack.length - 1] as RuleName | undefined) ?? 'unknown';
    const takes = (next === type && !isHardKeyword(type) && !isSoftKeyword(type)) || (next === Bareword && (type.CATEGORIES ?? []).includes(Bareword));
    if (!takes) continue;
    if (rule === 'functionCall') call = rule;
    else other ??= rule;
  }
  return call !== undefined && following?.tokenType === LParen ? call : other;
}

/** A keyword wherever it stands (not a soft one). */
export function isHardKeyword(type: TokenType): boolean {
  return type.CATEGORIES?.includes(Keyword) ?? false;
}

/** A word with a meaning in one place only (`nulls`, `first`, `last`, `language`). */
export function isSoftKeyword(type: TokenType): boolean {
  return softKeywordTokens.includes(type);
}

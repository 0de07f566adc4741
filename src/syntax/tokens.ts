/**
 * The tokens of ckql and the one lexer instance.
 *
 * Chevrotain tries token types in the order of `allTokens` and takes the
 * first that matches (not the longest), except where a token names a
 * `longer_alt`. The order below is therefore part of the language; each
 * group says why it sits where it does.
 *
 * Long runs (a megabyte-long string or bareword) are matched by small
 * hand-written scanners rather than regular expressions: V8's regex engine
 * overflows its stack on a `(?:a|b)*` loop over a few million characters,
 * and `parse` must give a `QueryError`, never a `RangeError`, for any input.
 */
import {
  createToken, Lexer, type CustomPatternMatcherFunc, type CustomPatternMatcherReturn, type ICustomPattern, type ILexingResult, type IToken, type TokenType,
} from 'chevrotain';

const LETTERS = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ';

// ---------------------------------------------------------------------------
// Scanners shared by the lexer, `format` (which must quote exactly what the
// lexer would not read back as one bareword) and the string reader.

function isNameStart(code: number): boolean {
  return (code >= 97 && code <= 122) || (code >= 65 && code <= 90) || code === 95; // a-z A-Z _
}

function isNamePart(code: number): boolean {
  return (
    isNameStart(code) ||
    (code >= 48 && code <= 57) || // 0-9
    code === 46 || // .
    code === 58 // :
  );
}

/**
 * Whether a bareword that has reached `end` goes on: a `-` followed by
 * another `-` ends it, so `active-- note` reads as the bareword `active` and
 * a comment; a `:` followed by another `:` ends it too, so `qty::int` is a
 * cast (docs/expressions.md).
 */
function continuesBareword(text: string, end: number): boolean {
  const code = text.charCodeAt(end);
  if (code === 58 /* : */) return text.charCodeAt(end + 1) !== 58;
  return isNamePart(code) || (code === 45 /* - */ && text.charCodeAt(end + 1) !== 45);
}

/**
 * The end of the bareword starting at `offset`, or `offset` when there is
 * none. A bareword is letters, digits, `_ . : -` after a letter or `_`.
 */
export function scanBareword(text: string, offset: number): number {
  if (offset >= text.length || !isNameStart(text.charCodeAt(offset))) return offset;
  let end = offset + 1;
  while (continuesBareword(text, end)) end++;
  return end;
}

function isHexDigit(code: number): boolean {
  return (code >= 48 && code <= 57) || (code >= 97 && code <= 102) || (code >= 65 && code <= 70); // 0-9 a-f A-F
}

/** Hex digits per group of a UUID: `8-4-4-4-12`. */
const UUID_GROUPS = [8, 4, 4, 4, 12];

/** The end of the UUID starting at `offset`, or `offset` when there is none. */
function scanUuid(text: string, offset: number): number {
  let i = offset;
  for (let group = 0; group < UUID_GROUPS.length; group++) {
    if (group > 0 && text.charCodeAt(i++) !== 45 /* - */) return offset;
    for (let n = UUID_GROUPS[group]!; n > 0; n--) if (!isHexDigit(text.charCodeAt(i++))) return offset;
  }
  return i;
}

/** What `scanQuoted` found from an opening quote. */
export interface QuotedScan {
  /** offset just after the closing quote, or where the unclosed string stops */
  readonly end: number;
  readonly closed: boolean;
  /** offset of the first unknown escape's backslash, or -1 */
  readonly badEscape: number;
}

const HEX = /^[0-9a-fA-F]{4}$/;

/**
 * Length of the escape at `offset` (which holds a backslash) when it is one
 * the language knows (`\\ \" \' \/ \n \t \uXXXX`, and `\%` `\_`, which
 * only a like pattern takes: to-ast.ts), else 0.
 */
export function escapeLength(text: string, offset: number): number {
  switch (text.charCodeAt(offset + 1)) {
    case 92: // \
    case 34: // "
    case 39: // '
    case 47: // /
    case 110: // n
    case 116: // t
    case 37: // %
    case 95: // _
      return 2;
    case 117: // u
      return HEX.test(text.slice(offset + 2, offset + 6)) ? 6 : 0;
    default:
      return 0;
  }
}

/**
 * Scans a `"…"` or `'…'` string from its opening quote. Strings end at the
 * line: a raw line break inside one is never read as part of it, so an
 * unclosed quote is reported on its own line.
 */
export function scanQuoted(text: string, offset: number): QuotedScan {
  const quote = text.charCodeAt(offset);
  if (quote !== 34 && quote !== 39) return { end: offset, closed: false, badEscape: -1 };
  let badEscape = -1;
  let i = offset + 1;
  while (i < text.length) {
    const code = text.charCodeAt(i);
    if (code === quote) return { end: i + 1, closed: true, badEscape };
    if (code === 10 || code === 13) break;
    if (code === 92) {
      const length = escapeLength(text, i);
      if (length === 0) {
        if (badEscape < 0) badEscape = i;
        const next = text.charCodeAt(i + 1);
        // A backslash before a line break (or the end) escapes nothing: the string stops there.
        i += next === 10 || next === 13 || Number.isNaN(next) ? 1 : 2;
      } else {
        i += length;
      }
      continue;
    }
    i++;
  }
  return { end: i, closed: false, badEscape };
}

/** Scans a backtick-quoted field name; a doubled backtick is a literal one. */
export function scanBacktick(text: string, offset: number): { readonly end: number; readonly closed: boolean } {
  if (text.charCodeAt(offset) !== 96) return { end: offset, closed: false };
  let i = offset + 1;
  for (;;) {
    const at = text.indexOf('`', i);
    if (at < 0) return { end: text.length, closed: false };
    if (text.charCodeAt(at + 1) === 96) {
      i = at + 2;
      continue;
    }
    return { end: at + 1, closed: true };
  }
}

function isDigit(code: number): boolean {
  return code >= 48 && code <= 57;
}

/** Whether `count` digits stand at `offset`. */
function digitsAt(text: string, offset: number, count: number): boolean {
  for (let i = 0; i < count; i++) if (!isDigit(text.charCodeAt(offset + i))) return false;
  return true;
}

/**
 * The end of the ISO 8601 date or timestamp starting at `offset`, or
 * `offset` when there is none: `YYYY-MM-DD`, then optionally `THH:MM`,
 * `:SS`, a fraction `.S…`, and a zone `Z` or `±HH:MM` (`±HHMM`, `±HH`). The
 * shape only: the field's type judges the value, as for any other text.
 * Nothing that may continue a bareword or a number may follow (`2025-09-01x`
 * and `2025-09-012` are not dates).
 */
export function scanDateTime(text: string, offset: number): number {
  if (!digitsAt(text, offset, 4) || text.charCodeAt(offset + 4) !== 45 || !digitsAt(text, offset + 5, 2)) return offset;
  if (text.charCodeAt(offset + 7) !== 45 || !digitsAt(text, offset + 8, 2)) return offset;
  let end = offset + 10;
  const code = text.charCodeAt(end);
  if ((code === 84 || code === 116) /* T t */ && digitsAt(text, end + 1, 2) && text.charCodeAt(end + 3) === 58 && digitsAt(text, end + 4, 2)) {
    end += 6;
    if (text.charCodeAt(end) === 58 && digitsAt(text, end + 1, 2)) {
      end += 3;
      if (text.charCodeAt(end) === 46 && isDigit(text.charCodeAt(end + 1))) {
        end += 2;
        while (isDigit(text.charCodeAt(end))) end++;
      }
    }
    const zone = text.charCodeAt(end);
    if (zone === 90 || zone === 122) end += 1; // Z z
    else if ((zone === 43 || zone === 45) && digitsAt(text, end + 1, 2)) {
      end += 3;
      if (text.charCodeAt(end) === 58 && digitsAt(text, end + 1, 2)) end += 3;
      else if (digitsAt(text, end, 2)) end += 2;
    }
  }
  const next = text.charCodeAt(end);
  return isNamePart(next) || (next === 45 && text.charCodeAt(end + 1) !== 45) ? offset : end;
}

function match(text: string, offset: number, end: number): CustomPatternMatcherReturn | null {
  return end > offset ? [text.slice(offset, end)] : null;
}

/**
 * A hand-written matcher that stands for the regular expression `pattern`.
 * The grammar diagrams show a token's pattern when it is text, so `toJSON`
 * keeps them showing what the matcher reads.
 */
function matcherFor(pattern: string, exec: CustomPatternMatcherFunc): ICustomPattern & { toJSON(): string } {
  return { exec, toJSON: () => pattern };
}

// ---------------------------------------------------------------------------
// Token types

/** Skipped: white space, including newlines, is free between tokens. */
export const WhiteSpace: TokenType = createToken({
  name: 'WhiteSpace',
  pattern: /[ \t\r\n\f\v\u00a0\ufeff]+/,
  group: Lexer.SKIPPED,
  line_breaks: true,
});

/** Skipped: `--` to the end of the line. Before `Number`, which may also start with `-`. */
export const Comment: TokenType = createToken({ name: 'Comment', pattern: /--[^\r\n]*/, group: Lexer.SKIPPED });

/**
 * The token every bareword-like token falls back to through `longer_alt`,
 * defined first so the others can name it; it is placed in `allTokens` after
 * the keywords and the UUID.
 */
export const Bareword: TokenType = createToken({
  name: 'Bareword',
  label: 'name',
  pattern: { exec: (text, offset) => match(text, offset, scanBareword(text, offset)) },
  start_chars_hint: [...LETTERS, '_'],
  line_breaks: false,
});

/**
 * A UUID is one token wherever a value or resource may stand. It comes
 * before `Number` (a UUID may start with digits: `12345678-…` is not the
 * number 12345678) and before `Bareword` (both read `abcdef01-…` to the same
 * length, and the first listed wins); `longer_alt` hands a longer run such as
 * `abcdef01-…-abc.csv` back to `Bareword`. It is tried first for every word
 * that starts with a hex digit (a third of all tokens), so a scanner that
 * gives up at the first wrong character replaces the regular expression.
 */
export const Uuid: TokenType = createToken({
  name: 'Uuid',
  label: 'uuid',
  pattern: matcherFor(
    '[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}',
    (text, offset) => match(text, offset, scanUuid(text, offset)),
  ),
  start_chars_hint: [...'0123456789abcdefABCDEF'],
  line_breaks: false,
  longer_alt: Bareword,
});

/** The category of every keyword: errors use it to say "quote it". */
export const Keyword: TokenType = createToken({ name: 'Keyword', pattern: Lexer.NA });

/**
 * A keyword's token type. Keywords are not lexed on their own: every word is
 * read by the one bareword scanner, and `queryLexer.tokenize` then gives the
 * words that are keywords (in any case, as a whole word: `index` and
 * `from_year` are barewords) their keyword's type. One scan per word replaces
 * a matcher per keyword that begins with its first letter.
 */
function keyword(word: string, category: TokenType = Keyword): TokenType {
  return createToken({
    name: word[0]!.toUpperCase() + word.slice(1),
    label: word,
    pattern: Lexer.NA,
    categories: [category],
  });
}

export const From: TokenType = keyword('from');
export const Where: TokenType = keyword('where');
export const And: TokenType = keyword('and');
/** Listed before `Or`; keywords match whole words only, so `order` never reads as `or` + `der` either way. */
export const Order: TokenType = keyword('order');
export const Or: TokenType = keyword('or');
export const In: TokenType = keyword('in');
export const Search: TokenType = keyword('search');
export const Select: TokenType = keyword('select');
export const By: TokenType = keyword('by');
export const Asc: TokenType = keyword('asc');
export const Desc: TokenType = keyword('desc');
export const Limit: TokenType = keyword('limit');
export const Offset: TokenType = keyword('offset');
export const True: TokenType = keyword('true');
export const False: TokenType = keyword('false');
export const Null: TokenType = keyword('null');
export const Not: TokenType = keyword('not');
export const Is: TokenType = keyword('is');
export const Between: TokenType = keyword('between');
export const Like: TokenType = keyword('like');
export const Ilike: TokenType = keyword('ilike');
export const Distinct: TokenType = keyword('distinct');

/**
 * Soft keywords: words with a meaning in one place only (`nulls first`,
 * `nulls last`, `language german`) and common as field names and values
 * elsewhere (`language`, `first`). Their category is `Bareword`, so wherever
 * a name or value may stand they are one; only the rule that wants the word
 * itself asks for its own type. `format` never quotes them.
 */
function softKeyword(word: string): TokenType {
  return keyword(word, Bareword);
}

export const Nulls: TokenType = softKeyword('nulls');
export const First: TokenType = softKeyword('first');
export const Last: TokenType = softKeyword('last');
export const Language: TokenType = softKeyword('language');

// Counting, grouping, facets and joins (docs/aggregates.md). Each is a word
// of the grammar in one place only, and a name everywhere else: `count` is
// a function only before `(`, `group` a clause only before `by`, `as` only
// before a name, `top` only after a facet's field; a field may be called
// any of them.
export const As: TokenType = softKeyword('as');
export const Join: TokenType = softKeyword('join');
export const Left: TokenType = softKeyword('left');
export const On: TokenType = softKeyword('on');
export const Group: TokenType = softKeyword('group');
export const Having: TokenType = softKeyword('having');
export const Facet: TokenType = softKeyword('facet');
export const Top: TokenType = softKeyword('top');
export const Count: TokenType = softKeyword('count');
export const Sum: TokenType = softKeyword('sum');
export const Avg: TokenType = softKeyword('avg');
export const Min: TokenType = softKeyword('min');
export const Max: TokenType = softKeyword('max');
export const Year: TokenType = softKeyword('year');
export const Month: TokenType = softKeyword('month');
export const Week: TokenType = softKeyword('week');
export const Day: TokenType = softKeyword('day');
export const Bucket: TokenType = softKeyword('bucket');

// Expressions (docs/expressions.md): `case … end`, `cast(x as t)` and
// `extract(unit from d)` are words of the grammar only where an expression
// starts (`case when`, `cast(`, `extract(`) or inside a `case`; a field may
// be called any of them.
export const Case: TokenType = softKeyword('case');
export const When: TokenType = softKeyword('when');
export const Then: TokenType = softKeyword('then');
export const Else: TokenType = softKeyword('else');
export const End: TokenType = softKeyword('end');
export const Cast: TokenType = softKeyword('cast');
export const Extract: TokenType = softKeyword('extract');

// Windows (docs/expressions.md): `over` only after a call's `)`, `partition`
// only right inside `over (`, `qualify` only where a clause starts; a field
// may be called any of them.
export const Over: TokenType = softKeyword('over');
export const Partition: TokenType = softKeyword('partition');
export const Qualify: TokenType = softKeyword('qualify');
/** `from a union b`: resources read as one table (docs/expressions.md, Unions). */
export const Union: TokenType = softKeyword('union');

/**
 * `` c.`school year` ``: the alias of a joined resource and its dot, right
 * before a backtick-quoted field name (a plain `c.subject` is one bareword,
 * qualified by `to-ast.ts` when `c` is declared). Before `Bareword`, which
 * would read the same `c.` and stop there.
 */
export const Qualifier: TokenType = createToken({
  name: 'Qualifier',
  label: 'alias.',
  pattern: matcherFor('[A-Za-z_][A-Za-z0-9_.:-]*\\.(?=`)', (text, offset) => {
    const end = scanBareword(text, offset);
    return end > offset + 1 && text.charCodeAt(end - 1) === 46 /* . */ && text.charCodeAt(end) === 96 /* ` */ ? match(text, offset, end) : null;
  }),
  start_chars_hint: [...LETTERS, '_'],
  line_breaks: false,
});

/**
 * An ISO date or timestamp as a value: `2025-09-01`, `2025-09-01T08:30:00Z`
 * (see `scanDateTime`). It is text, as if quoted; before `Number`, which
 * would read `2025` and then stop at `-09`. `Uuid` comes first, and neither
 * reads what the other does (a UUID has eight characters before its `-`).
 */
export const DateTime: TokenType = createToken({
  name: 'DateTime',
  label: 'date',
  pattern: matcherFor(
    '[0-9]{4}-[0-9]{2}-[0-9]{2}(T[0-9]{2}:[0-9]{2}(:[0-9]{2}(\\.[0-9]+)?)?(Z|[+-][0-9]{2}(:?[0-9]{2})?)?)?',
    (text, offset) => match(text, offset, scanDateTime(text, offset)),
  ),
  start_chars_hint: [...'0123456789'],
  line_breaks: false,
});

/** JSON numbers: `-3`, `2.5`, `1e3`. After `Uuid` (see there), `DateTime` and `Comment` (`--`). */
export const NumberLiteral: TokenType = createToken({
  name: 'Number',
  label: 'number',
  pattern: /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/,
});

/** A closed string whose escapes are all known. */
export const StringLiteral: TokenType = createToken({
  name: 'String',
  label: 'string',
  pattern: {
    exec: (text, offset) => {
      const scan = scanQuoted(text, offset);
      return scan.closed && scan.badEscape < 0 ? match(text, offset, scan.end) : null;
    },
  },
  start_chars_hint: ['"', "'"],
  line_breaks: false,
});

/**
 * The broken forms of a string, tried only after `StringLiteral` failed. They
 * go to the `broken` group, out of the parser's way, so `parse` can report
 * the precise problem (INVALID_ESCAPE at the escape, UNTERMINATED_STRING at the
 * quote) instead of "unexpected character".
 */
export const BadEscapeString: TokenType = createToken({
  name: 'BadEscapeString',
  pattern: {
    exec: (text, offset) => {
      const scan = scanQuoted(text, offset);
      return scan.closed ? match(text, offset, scan.end) : null;
    },
  },
  start_chars_hint: ['"', "'"],
  line_breaks: false,
  group: 'broken',
});

export const UnterminatedString: TokenType = createToken({
  name: 'UnterminatedString',
  pattern: { exec: (text, offset) => match(text, offset, scanQuoted(text, offset).end) },
  start_chars_hint: ['"', "'"],
  line_breaks: false,
  group: 'broken',
});

/** `` `school year` ``: a field name that is not a bareword. May span lines (no escapes exist here). */
export const BacktickField: TokenType = createToken({
  name: 'BacktickField',
  label: '`field name`',
  pattern: {
    exec: (text, offset) => {
      const scan = scanBacktick(text, offset);
      return scan.closed ? match(text, offset, scan.end) : null;
    },
  },
  start_chars_hint: ['`'],
  line_breaks: true,
});

export const UnterminatedField: TokenType = createToken({
  name: 'UnterminatedField',
  pattern: { exec: (text, offset) => match(text, offset, scanBacktick(text, offset).end) },
  start_chars_hint: ['`'],
  line_breaks: true,
  group: 'broken',
});

/** `$subject`: bound by name before compiling. */
export const Parameter: TokenType = createToken({ name: 'Parameter', label: '$parameter', pattern: /\$[A-Za-z_][A-Za-z0-9_]*/ });

export const Equals: TokenType = createToken({ name: 'Equals', label: '=', pattern: '=' });
/** `!=` and its SQL spelling `<>`: one token, one meaning. Before `Less` (`<>` starts with `<`). */
export const NotEquals: TokenType = createToken({ name: 'NotEquals', label: '!=', pattern: /!=|<>/ });
/** The two-character operators come before the one-character ones they start with. */
export const LessEquals: TokenType = createToken({ name: 'LessEquals', label: '<=', pattern: '<=' });
export const Less: TokenType = createToken({ name: 'Less', label: '<', pattern: '<' });
export const GreaterEquals: TokenType = createToken({ name: 'GreaterEquals', label: '>=', pattern: '>=' });
export const Greater: TokenType = createToken({ name: 'Greater', label: '>', pattern: '>' });
export const LParen: TokenType = createToken({ name: 'LParen', label: '(', pattern: '(' });
export const RParen: TokenType = createToken({ name: 'RParen', label: ')', pattern: ')' });
export const Comma: TokenType = createToken({ name: 'Comma', label: ',', pattern: ',' });
/** `count(*)`: every record. */
export const Star: TokenType = createToken({ name: 'Star', label: '*', pattern: '*' });
/** The REPL ends a statement with `;`; the parser accepts one at the very end. */
export const Semicolon: TokenType = createToken({ name: 'Semicolon', label: ';', pattern: ';' });

// The operators of expressions (docs/expressions.md). `-` is subtraction only
// where it starts neither a comment (`--`) nor a number (`-3`): `Minus` comes
// after `Comment` and `NumberLiteral`, and inside a word it is part of the
// bareword (`MATH-106`, `a-b`), so subtraction is written with spaces.
export const Plus: TokenType = createToken({ name: 'Plus', label: '+', pattern: '+' });
export const Minus: TokenType = createToken({ name: 'Minus', label: '-', pattern: '-' });
export const Slash: TokenType = createToken({ name: 'Slash', label: '/', pattern: '/' });
export const Percent: TokenType = createToken({ name: 'Percent', label: '%', pattern: '%' });
export const Concat: TokenType = createToken({ name: 'Concat', label: '||', pattern: '||' });
/** `x::int`: after `Qualifier` and `Bareword`, which stop before a `::`. */
export const DoubleColon: TokenType = createToken({ name: 'DoubleColon', label: '::', pattern: '::' });

/** Every keyword, for hints (`did you mean`) and content assist. */
export const keywordTokens: readonly TokenType[] = [
  From, Where, And, Order, Or, In, Search, Select, By, Asc, Desc, Limit, Offset, True, False, Null,
  Not, Is, Between, Like, Ilike, Distinct,
];

/** Words with a meaning in one place only; elsewhere they are names (see `softKeyword`). */
export const softKeywordTokens: readonly TokenType[] = [
  Nulls, First, Last, Language, As, Join, Left, On, Group, Having, Facet, Top, Count, Sum, Avg, Min, Max, Year, Month, Week, Day,
  Bucket, Case, When, Then, Else, End, Cast, Extract, Over, Partition, Qualify, Union,
];

/** The aggregate functions, by their token. */
export const aggregateTokens: readonly TokenType[] = [Count, Sum, Avg, Min, Max];

/** The bucket functions, by their token. */
export const bucketTokens: readonly TokenType[] = [Year, Month, Week, Day, Bucket];

/** In lexing order; see the comment on each token for why it sits where it does. */
export const allTokens: TokenType[] = [
  WhiteSpace,
  Comment,
  Uuid,
  Keyword,
  ...keywordTokens,
  ...softKeywordTokens,
  Qualifier,
  Bareword,
  DateTime,
  NumberLiteral,
  StringLiteral,
  BadEscapeString,
  UnterminatedString,
  BacktickField,
  UnterminatedField,
  Parameter,
  Equals,
  NotEquals,
  LessEquals,
  Less,
  GreaterEquals,
  Greater,
  LParen,
  RParen,
  Comma,
  Star,
  Semicolon,
  Plus,
  Minus,
  Slash,
  Percent,
  Concat,
  DoubleColon,
];

/**
 * The one lexer. `ensureOptimizations` makes construction fail (instead of
 * silently running slower) if a token's first characters cannot be computed;
 * only start offsets are tracked, as spans need nothing else; and it stops
 * at the first unexpected character, the only one `parse` reports, rather
 * than collecting a million of them from a megabyte of junk. Keywords are
 * given their types after the scan (see `keyword`).
 */
let lexer: Lexer | undefined;

/**
 * The one lexer, made on first use: most text never reaches it (see
 * `scanTokens`), and its construction is part of every start-up otherwise.
 */
function chevrotainLexer(): Lexer {
  lexer ??= new Lexer(allTokens, {
    ensureOptimizations: true,
    positionTracking: 'onlyOffset',
    recoveryEnabled: false,
  });
  return lexer;
}

/**
 * A token type with its index, read from objects of one shape: token types
 * themselves have several (`createToken` sets only the options given), and
 * reading `tokenTypeIdx` from them was a megamorphic load per token.
 */
interface Kind {
  readonly type: TokenType;
  readonly index: number;
}

function kindOf(type: TokenType): Kind {
  return { type, index: type.tokenTypeIdx! };
}

/** The kinds of the token types `scanTokens` makes, by their names. */
const K = {
  NumberLiteral: kindOf(NumberLiteral),
  StringLiteral: kindOf(StringLiteral),
  BacktickField: kindOf(BacktickField),
  Parameter: kindOf(Parameter),
  Equals: kindOf(Equals),
  NotEquals: kindOf(NotEquals),
  LessEquals: kindOf(LessEquals),
  Less: kindOf(Less),
  GreaterEquals: kindOf(GreaterEquals),
  Greater: kindOf(Greater),
  LParen: kindOf(LParen),
  RParen: kindOf(RParen),
  Comma: kindOf(Comma),
  Semicolon: kindOf(Semicolon),
  Star: kindOf(Star),
  Plus: kindOf(Plus),
  Minus: kindOf(Minus),
  Slash: kindOf(Slash),
  Percent: kindOf(Percent),
  Concat: kindOf(Concat),
  DoubleColon: kindOf(DoubleColon),
  Uuid: kindOf(Uuid),
  DateTime: kindOf(DateTime),
  Qualifier: kindOf(Qualifier),
  Bareword: kindOf(Bareword),
} as const;

/** A keyword's lower-case spelling and its token type. */
interface KeywordEntry {
  readonly word: string;
  readonly kind: Kind;
}

/** Keywords are at most this long; a longer bareword is none. */
const KEYWORD_MAX = 15;

/**
 * Keywords by their first letter (lower case, a-z) and length, for the pass
 * after the scan: a bareword is compared with the one or two keywords of its
 * first letter and length, without making a lower-case copy.
 */
const keywordsByStart: (readonly KeywordEntry[] | undefined)[] = (() => {
  const table: KeywordEntry[][] = [];
  for (const type of [...keywordTokens, ...softKeywordTokens]) {
    const word = type.LABEL!;
    if (word.length > KEYWORD_MAX) throw new Error(`keyword ${word} is longer than ${KEYWORD_MAX}`);
    (table[keywordSlot(word.charCodeAt(0), word.length)] ??= []).push({ word, kind: kindOf(type) });
  }
  return table;
})();

/** Where `keywordsByStart` keeps the keywords of a first letter's code (lower case) and a length. */
function keywordSlot(first: number, length: number): number {
  return (first - 97) * (KEYWORD_MAX + 1) + length;
}

/** The keyword a bareword spells, in any case, or undefined. */
function keywordOf(image: string): Kind | undefined {
  // `| 32` lower-cases an ASCII letter, and a bareword starts with one (or `_`, which no keyword does).
  const length = image.length;
  const first = image.charCodeAt(0) | 32;
  if (length > KEYWORD_MAX || first < 97 || first > 122) return undefined;
  const candidates = keywordsByStart[keywordSlot(first, length)];
  if (candidates === undefined) return undefined;
  for (let c = 0; c < candidates.length; c++) {
    const { word, kind } = candidates[c]!;
    let i = 1;
    while (i < length && (image.charCodeAt(i) | 32) === word.charCodeAt(i)) i++;
    if (i === length) return kind;
  }
  return undefined;
}

export const queryLexer = {
  tokenize(text: string): ILexingResult {
    return scanTokens(text) ?? chevrotainTokenize(text);
  },
};

/** Chevrotain's lexer over `allTokens`, then the keyword pass. */
export function chevrotainTokenize(text: string): ILexingResult {
  const lexed = chevrotainLexer().tokenize(text);
  for (const token of lexed.tokens) {
    if (token.tokenType !== Bareword) continue;
    const keyword = keywordOf(token.image);
    if (keyword === undefined) continue;
    token.tokenType = keyword.type;
    token.tokenTypeIdx = keyword.index;
  }
  return lexed;
}

/**
 * The tokens of well-formed text, as `chevrotainTokenize` gives them, or
 * undefined at the first character that would make a lexing error or a
 * broken token: that text is lexed again by Chevrotain, so every error
 * keeps its one source. A query is short, and the generic lexer spent more
 * on choosing among the patterns that may start at a character (and on
 * calling each through its matcher) than on reading the characters: this
 * switch on the first character costs a quarter of that, which was a fifth
 * of `compile(text)` (BENCHMARKS.md, Parse + compile). It follows the order
 * of `allTokens` for every character (test/syntax/lexer.test.ts compares the
 * two on the grammar's tokens and on random text); a token type added to
 * `allTokens` must be added here too, or text holding it takes the slow way.
 */
function scanTokens(text: string): ILexingResult | undefined {
  const tokens: IToken[] = [];
  const length = text.length;
  let i = 0;
  while (i < length) {
    const code = text.charCodeAt(i);
    let end: number;
    let kind: Kind;
    switch (code) {
      case 32: // space
      case 9: // \t
      case 10: // \n
      case 13: // \r
      case 12: // \f
      case 11: // \v
      case 0xa0:
      case 0xfeff:
        i++;
        continue;
      case 45: // -
        if (text.charCodeAt(i + 1) === 45) {
          i += 2;
          while (i < length && text.charCodeAt(i) !== 10 && text.charCodeAt(i) !== 13) i++;
          continue;
        }
        end = scanNumber(text, i);
        kind = K.NumberLiteral;
        if (end === i) {
          end = i + 1;
          kind = K.Minus;
        }
        break;
      case 43: // +
        end = i + 1;
        kind = K.Plus;
        break;
      case 47: // /
        end = i + 1;
        kind = K.Slash;
        break;
      case 37: // %
        end = i + 1;
        kind = K.Percent;
        break;
      case 124: // |
        if (text.charCodeAt(i + 1) !== 124) return undefined;
        end = i + 2;
        kind = K.Concat;
        break;
      case 58: // :
        if (text.charCodeAt(i + 1) !== 58) return undefined;
        end = i + 2;
        kind = K.DoubleColon;
        break;
      case 34: // "
      case 39: {
        // '
        const scan = scanQuoted(text, i);
        if (!scan.closed || scan.badEscape >= 0) return undefined;
        end = scan.end;
        kind = K.StringLiteral;
        break;
      }
      case 96: {
        // `
        const scan = scanBacktick(text, i);
        if (!scan.closed) return undefined;
        end = scan.end;
        kind = K.BacktickField;
        break;
      }
      case 36: // $
        if (!isNameStart(text.charCodeAt(i + 1))) return undefined;
        end = i + 2;
        while (isWordPart(text.charCodeAt(end))) end++;
        kind = K.Parameter;
        break;
      case 61: // =
        end = i + 1;
        kind = K.Equals;
        break;
      case 33: // !
        if (text.charCodeAt(i + 1) !== 61) return undefined;
        end = i + 2;
        kind = K.NotEquals;
        break;
      case 60: {
        // <
        const next = text.charCodeAt(i + 1);
        end = next === 62 || next === 61 ? i + 2 : i + 1;
        kind = next === 62 ? K.NotEquals : next === 61 ? K.LessEquals : K.Less;
        break;
      }
      case 62: // >
        end = text.charCodeAt(i + 1) === 61 ? i + 2 : i + 1;
        kind = end === i + 2 ? K.GreaterEquals : K.Greater;
        break;
      case 40: // (
        end = i + 1;
        kind = K.LParen;
        break;
      case 41: // )
        end = i + 1;
        kind = K.RParen;
        break;
      case 44: // ,
        end = i + 1;
        kind = K.Comma;
        break;
      case 59: // ;
        end = i + 1;
        kind = K.Semicolon;
        break;
      case 42: // *
        end = i + 1;
        kind = K.Star;
        break;
      default:
        if (isDigit(code)) {
          // Uuid, then DateTime, then Number (a bareword never starts with a digit)
          end = scanUuid(text, i);
          kind = K.Uuid;
          if (end === i) {
            end = scanDateTime(text, i);
            kind = K.DateTime;
          }
          if (end === i) {
            end = scanNumber(text, i);
            kind = K.NumberLiteral;
          }
        } else if (isNameStart(code)) {
          // a UUID unless the bareword from the same place is longer (its `longer_alt`)
          end = isHexDigit(code) ? scanUuid(text, i) : i;
          const word = scanBareword(text, i);
          if (end > i && word <= end) kind = K.Uuid;
          else {
            // an alias and its dot right before a backtick-quoted field (`Qualifier`); else a bareword,
            // which is also what a longer run after a UUID is (the UUID's `longer_alt`, tried before `Qualifier`)
            kind = end === i && word > i + 1 && text.charCodeAt(word - 1) === 46 /* . */ && text.charCodeAt(word) === 96 /* ` */ ? K.Qualifier : K.Bareword;
            end = word;
          }
        } else {
          return undefined;
        }
    }
    const image = text.slice(i, end);
    const keyword = kind === K.Bareword ? keywordOf(image) : undefined;
    if (keyword !== undefined) kind = keyword;
    // the token Chevrotain makes with `positionTracking: 'onlyOffset'`
    tokens.push({ image, startOffset: i, tokenTypeIdx: kind.index, tokenType: kind.type } as IToken);
    i = end;
  }
  return { tokens, groups: { broken: [] }, errors: [] };
}

/** a-z A-Z _ 0-9 */
function isWordPart(code: number): boolean {
  return isNameStart(code) || isDigit(code);
}

/** The end of the number (`NumberLiteral`'s pattern) starting at `offset`, or `offset` when there is none. */
function scanNumber(text: string, offset: number): number {
  let i = offset;
  if (text.charCodeAt(i) === 45) i++;
  const first = text.charCodeAt(i);
  if (first === 48) i++;
  else if (first >= 49 && first <= 57) {
    i++;
    while (isDigit(text.charCodeAt(i))) i++;
  } else return offset;
  if (text.charCodeAt(i) === 46 && isDigit(text.charCodeAt(i + 1))) {
    i += 2;
    while (isDigit(text.charCodeAt(i))) i++;
  }
  const e = text.charCodeAt(i);
  if (e === 101 || e === 69) {
    let j = i + 1;
    const sign = text.charCodeAt(j);
    if (sign === 43 || sign === 45) j++;
    if (isDigit(text.charCodeAt(j))) {
      j++;
      while (isDigit(text.charCodeAt(j))) j++;
      i = j;
    }
  }
  return i;
}

/** The words the lexer reads as keywords, lower-case. */
export const keywords: ReadonlySet<string> = new Set(keywordTokens.map((t) => t.LABEL!.toLowerCase()));

// Escaped: backslash, the quote, control characters (the lexer ends a string
// at a raw line break), and lone surrogates, which would not survive being
// written to a UTF-8 file.
// eslint-disable-next-line no-control-regex
const NEEDS_ESCAPE = /[\\"\u0000-\u001f\u007f]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

function escapeChar(char: string): string {
  switch (char) {
    case '\\':
      return '\\\\';
    case '"':
      return '\\"';
    case '\n':
      return '\\n';
    case '\t':
      return '\\t';
    default:
      return `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`;
  }
}

/**
 * Any text as a double-quoted string literal.
 * @example formatString('say "hi"') // → '"say \\"hi\\""'
 */
export function formatString(text: string): string {
  return `"${text.replace(NEEDS_ESCAPE, escapeChar)}"`;
}

/**
 * Text → AST, and every syntax error of the language in the words of the
 * error catalogue: what was expected, what was found, where, and a hint
 * where one helps.
 */
import { EOF, tokenMatcher, type ILexingResult, type IRecognitionException, type IToken, type TokenType } from 'chevrotain';
import type { Query } from '../ast.js';
import { queryError, type QueryError } from '../errors.js';
import { pointSpan } from '../span.js';
import { editDistance } from '../text.js';
import { classicPath } from './assist.js';
import { queryParser, type RuleName } from './parser.js';
import { tokenSpan, toAst, unescapeString } from './to-ast.js';
import {
  And, Bareword, BacktickField, Comma, Count, Equals, From, Group, Having, In, Keyword, keywordTokens, LParen, Not, NumberLiteral, Or,
  Order, Parameter, formatString, queryLexer, RParen, scanQuoted, Semicolon, softKeywordTokens, Star, StringLiteral, Uuid, Where, NotEquals, Less, LessEquals, Greater, GreaterEquals,
} from './tokens.js';

/**
 * How deep parentheses may nest. The parser (and every pass after it) is
 * recursive, so without a bound `((((…` a few thousand deep would overflow
 * the stack instead of giving a `QueryError`. No real query comes close.
 */
export const MAX_NESTING = 64;

/**
 * Parses query text into the AST.
 *
 * @throws {QueryError} for anything that is not a query, with `source` set
 * and a span inside the source; `UNEXPECTED_END_OF_INPUT` when the text
 * stops too early (the REPL then reads another line).
 * @example
 * parse('from courses where stage in (active, survey) limit 10')
 * // → { kind: 'query', from: { resource: { kind: 'string', value: 'courses' } },
 * //     where: { condition: { kind: 'in', field: { name: 'stage' }, values: [...] } },
 * //     limit: { value: { kind: 'number', value: 10 } } }
 * // which compiles to { resource_id: 'courses', filters: { stage: ['active', 'survey'] }, limit: 10 }
 */
export function parse(source: string): Query {
  const lexed = queryLexer.tokenize(source);
  const lexError = firstLexingError(lexed, source);
  if (lexError) throw lexError;
  const tokens = lexed.tokens;
  // Nesting deeper than MAX_NESTING takes more than MAX_NESTING "(" tokens:
  // a query shorter than that (nearly all) needs no count.
  if (tokens.length > MAX_NESTING) checkNesting(tokens, source);
  const parser = queryParser();
  parser.input = tokens;
  const cst = parser.query();
  const errors = parser.errors;
  // Don't keep a huge token vector alive in the shared parser after we are done.
  if (tokens.length > 10_000) parser.input = [];
  if (errors.length > 0) throw syntaxError(errors[0]!, tokens, source);
  return toAst(cst, source);
}

// ---------------------------------------------------------------------------
// Lexing errors

function firstLexingError(lexed: ILexingResult, source: string): QueryError | undefined {
  const unexpected = lexed.errors[0];
  const broken = lexed.groups['broken']?.[0];
  if (broken && (!unexpected || broken.startOffset < unexpected.offset)) return brokenTokenError(broken, source);
  if (unexpected) return unexpectedCharacter(unexpected.offset, source);
  return undefined;
}

function unexpectedCharacter(offset: number, source: string): QueryError {
  const found = String.fromCodePoint(source.codePointAt(offset)!);
  return queryError('UNEXPECTED_CHARACTER', { start: offset, end: offset + found.length }, [found], {
    source,
    found,
    hint: /^\s*$/.test(source.slice(0, offset)) && /^\.[a-z]/i.test(source.slice(offset)) ? DOT_COMMAND_HINT : characterHint(found),
  });
}

/** `.format csv` where a query is read (a script, `ckql query`): a REPL command, not a query. */
const DOT_COMMAND_HINT = 'a line that starts with "." is a REPL command (.format, .limit, …), typed at the ckql> prompt; a script or a query holds queries only, and settings are flags (--format csv)';

function characterHint(found: string): string | undefined {
  switch (found) {
    case '!':
      return 'write "not" before a condition, or "!=" to compare: where not f = 1, where f != 1';
    case '$':
      return 'a parameter is "$" followed by a name, such as $subject';
    case '&':
    case '|':
      return 'join conditions with "and"; for alternatives of one field use "in (a, b)" or "(f = a or f = b)"';
    case '*':
      return 'leave out "select" to get every field';
    case '~':
      return TEXT_MATCH_HINT;
    case '[':
    case ']':
    case '{':
    case '}':
      return 'write a list of values in parentheses: f in (a, b)';
    case '-':
    case '.':
      return 'a number is written like 3, -2.5 or 1e3; other text must be quoted: "…"';
    default:
      return /\p{L}|\p{N}/u.test(found)
        ? 'only a-z, A-Z, digits, "_", "-", "." and ":" may stand unquoted: quote the value ("…") or the field name (`…`)'
        : undefined;
  }
}

function brokenTokenError(token: IToken, source: string): QueryError {
  const span = tokenSpan(token);
  if (token.tokenType.name === 'UnterminatedField') {
    return queryError('UNTERMINATED_FIELD', span, [], {
      source,
      found: clip(token.image),
      hint: 'close the field name with a backtick (`); write `` for a backtick inside it',
    });
  }
  const quote = token.image[0]!;
  const bad = scanQuoted(source, token.startOffset).badEscape;
  if (token.tokenType.name === 'BadEscapeString' || (bad >= 0 && bad < span.end)) {
    const escape = escapeAt(source, bad);
    return queryError('INVALID_ESCAPE', { start: bad, end: bad + escape.length }, [escape], {
      source,
      found: escape,
      hint: 'the escapes are \\\\ \\" \\\' \\/ \\n \\t and \\uXXXX (four hex digits), and \\% \\_ in a like pattern; write \\\\ for a backslash',
    });
  }
  return queryError('UNTERMINATED_STRING', span, [], {
    source,
    found: clip(token.image),
    hint: `close the string with ${quote} on the same line; write \\n for a line break inside it`,
  });
}

/** The text of the unknown escape at `offset`: the backslash and what follows (`\q`, `\u12`). */
function escapeAt(source: string, offset: number): string {
  if (source.charAt(offset + 1) === 'u') {
    const digits = /^[0-9a-fA-F]{0,3}/.exec(source.slice(offset + 2, offset + 5))![0];
    return `\\u${digits}`;
  }
  const next = source.codePointAt(offset + 1);
  return next === undefined ? '\\' : `\\${String.fromCodePoint(next)}`;
}

function checkNesting(tokens: readonly IToken[], source: string): void {
  let depth = 0;
  for (const token of tokens) {
    if (token.tokenType === LParen) {
      if (++depth > MAX_NESTING) {
        throw queryError('TOO_DEEPLY_NESTED', tokenSpan(token), [MAX_NESTING], {
          source,
          found: '(',
          hint: 'a long chain of "or" or "and" needs one pair of parentheses, not one per condition',
        });
      }
    } else if (token.tokenType === RParen) {
      depth--;
    }
  }
}

// ---------------------------------------------------------------------------
// Parsing errors

/** Human names for what may come next, grouped by the rule that wants it. */
const ruleNouns: Partial<Record<RuleName, string>> = {
  value: 'a value',
  field: 'a field name',
  resource: 'a resource id or name',
  source: 'an alias',
  name: 'a name',
};

/**
 * `f = (a, b)`: the "," shows the parentheses hold a list, which a
 * comparison cannot take; the error is the "(" (where `in` was meant).
 */
function listAfterComparison(tokens: readonly IToken[], comma: number, source: string): QueryError | undefined {
  let depth = 0;
  for (let i = comma - 1; i > 0; i--) {
    const type = tokens[i]!.tokenType;
    if (type === RParen) depth++;
    else if (type === LParen && depth-- === 0) {
      const operator = tokens[i - 1]!.tokenType;
      if (operator !== Equals && operator !== NotEquals) return undefined;
      const word = operator === Equals ? 'in' : 'not in';
      return queryError('UNEXPECTED_TOKEN', tokenSpan(tokens[i]!), [`a value after ${describe(tokens[i - 1]!)}`, '"("'], {
        source,
        found: '(',
        expected: ['a value'],
        hint: `to match any of several values write ${word}: f ${word} (a, b)`,
      });
    }
  }
  return undefined;
}

function syntaxError(error: IRecognitionException, tokens: IToken[], source: string): QueryError {
  const token = error.token;
  const atEnd = tokenMatcher(token, EOF);
  if (token.tokenType === Comma) {
    const list = listAfterComparison(tokens, tokens.indexOf(token), source);
    if (list !== undefined) return list;
  }
  const index = atEnd ? tokens.length : tokens.indexOf(token);
  const previous = index > 0 ? tokens[index - 1] : undefined;
  // What could have come here: the parser's own content assist over the
  // tokens before the error, so the list is complete and never drifts from
  // the grammar. Only the error path pays for it.
  const allInput = error.name === 'NotAllInputParsedException';
  const expected =
    index <= ASSIST_LIMIT ? expectedAt(tokens.slice(0, Math.max(index, 0))) : roughlyExpected(error, allInput, previous);
  if (allInput) expected.push('end of input');
  const what = joinAlternatives(expected.length > 0 ? expected : ['end of input']);
  const expectedText = previous ? `${what} after ${describe(previous)}` : what;
  const hint = atEnd ? undefined : hintFor(token, previous, tokens[index - 2], expected, source);

  if (atEnd) {
    const span = previous ? pointSpan(tokenSpan(previous).end) : pointSpan(0);
    return queryError('UNEXPECTED_END_OF_INPUT', span, [expectedText], { source, expected, found: 'end of input' });
  }
  return queryError('UNEXPECTED_TOKEN', tokenSpan(token), [expectedText, describe(token)], {
    source,
    expected,
    found: clip(token.image),
    hint,
  });
}

/**
 * Content assist re-reads the tokens before the error (about 10 µs per
 * token), so past this many the expected list comes from the rule the
 * parser stopped in instead: coarser, but an error in a 100 000-token input
 * still comes back in milliseconds.
 */
const ASSIST_LIMIT = 2_000;

const expectedInRule: Record<RuleName, readonly string[]> = {
  query: ['"from"'],
  source: ['a resource id or name'],
  resource: ['a resource id or name'],
  joinClause: ['"join"'],
  keyPair: ['a field name'],
  whereClause: ['a field name', '"("'],
  condition: ['a field name', '"("'],
  selectItem: ['a field name', 'a function'],
  aggregate: ['"("'],
  bucket: ['"("'],
  unit: ['"year"', '"month"', '"week"', '"day"'],
  name: ['a name'],
  groupClause: ['"by"'],
  groupKey: ['a field name'],
  havingClause: ['a field name', '"("'],
  qualifyClause: ['a field name', '"("'],
  overClause: ['"("', '"partition"', '"order"', '")"'],
  facetClause: ['a field name'],
  facetItem: ['"by"', '"top"', '","'],
  valueList: ['a value', '","', '")"'],
  group: ['"and"', '"or"', '")"'],
  searchClause: ['a quoted string', 'a parameter', 'a field name'],
  fieldSearch: ['a quoted string', 'a parameter'],
  selectClause: ['a field name'],
  orderClause: ['"by"'],
  sortKey: ['a field name'],
  limitClause: ['a whole number', 'a parameter'],
  offsetClause: ['a whole number', 'a parameter'],
  field: ['a field name'],
  value: ['a value'],
  expression: ['a field name', 'a value', 'a function'],
  additive: ['a field name', 'a value', 'a function'],
  multiplicative: ['a field name', 'a value', 'a function'],
  unary: ['a field name', 'a value', 'a function'],
  primary: ['a field name', 'a value', 'a function'],
  functionCall: ['"("', '")"', 'an argument'],
  castCall: ['"("', '"as"', 'a type', '")"'],
  extractCall: ['"("', 'a unit', '"from"', '")"'],
  caseExpression: ['"when"', '"else"', '"end"'],
  whenClause: ['"then"', '"and"', '"or"'],
  typeName: ['a type'],
};

/** What may follow the operand of a condition. */
const expectedTest: readonly string[] = ['"="', '"!="', '"<"', '"<="', '">"', '">="', '"in"', '"not"', '"between"', '"like"', '"ilike"', '"is"'];

/** The words and punctuation a condition may start after (else the error follows its operand). */
const beforeCondition: ReadonlySet<TokenType> = new Set([Where, Having, And, Or, Not, LParen]);

const expressionRules: ReadonlySet<RuleName> = new Set(['expression', 'additive', 'multiplicative', 'unary', 'primary']);
const comparisonOperators: ReadonlySet<TokenType> = new Set([Equals, NotEquals, Less, LessEquals, Greater, GreaterEquals]);

function roughlyExpected(error: IRecognitionException, allInput: boolean, previous: IToken | undefined): string[] {
  if (allInput) return [];
  const stack = error.context.ruleStack;
  const rule = (stack[stack.length - 1] ?? 'query') as RuleName;
  if (rule === 'condition' && previous !== undefined && !beforeCondition.has(previous.tokenType)) return [...expectedTest];
  // an expression's operand: after a comparison's operator the value, as before expressions (assist.ts)
  if (expressionRules.has(rule) && previous !== undefined) return comparisonOperators.has(previous.tokenType) ? ['a value'] : ['a field name'];
  return [...expectedInRule[rule]];
}

function expectedAt(before: IToken[]): string[] {
  const names: string[] = [];
  const add = (name: string) => {
    if (!names.includes(name)) names.push(name);
  };
  for (const path of queryParser().computeContentAssist('query', before)) {
    const classic = classicPath(path);
    if (classic === 'skip') continue;
    const rule = classic === 'value' ? 'value' : (path.ruleStack[path.ruleStack.length - 1] as RuleName | undefined);
    const type = path.nextTokenType;
    // An aggregate or a bucket is read in where only to say it belongs in having or group by: never expected there.
    if ((rule === 'aggregate' || rule === 'bucket' || rule === 'unit') && path.ruleStack.includes('whereClause')) continue;
    const noun = rule === undefined ? undefined : ruleNouns[rule];
    if (noun) add(noun);
    else if (type === Semicolon) continue; // accepted, but not worth suggesting
    else if (type === Order) add('"order by"');
    else if (type === Group) add('"group by"');
    else if (type === NumberLiteral) add('a whole number');
    else if (type === StringLiteral) add('a quoted string');
    else if (type === Parameter) add('a parameter');
    else add(`"${type.LABEL ?? type.name}"`);
  }
  return names;
}

/** `a`, `a or b`, `a, b or c` */
function joinAlternatives(names: readonly string[]): string {
  if (names.length <= 1) return names[0] ?? '';
  return `${names.slice(0, -1).join(', ')} or ${names[names.length - 1]}`;
}

const CLIP = 40;

function clip(text: string): string {
  return text.length > CLIP ? `${text.slice(0, CLIP)}…` : text;
}

/** A token as an error message names it. */
function describe(token: IToken): string {
  switch (token.tokenType) {
    case StringLiteral:
      return `the string ${clip(token.image)}`;
    case BacktickField:
      return `the field name ${clip(token.image)}`;
    case Parameter:
      return `the parameter ${clip(token.image)}`;
    default:
      return JSON.stringify(clip(token.image));
  }
}

// ---------------------------------------------------------------------------
// Hints: one line of advice for the mistakes people make

function hintFor(
  token: IToken,
  previous: IToken | undefined,
  beforePrevious: IToken | undefined,
  expected: readonly string[],
  source: string,
): string | undefined {
  const wants = (name: string) => expected.includes(name);
  const image = token.image;

  if (tokenMatcher(token, Keyword)) {
    if (wants('a value')) return `a value spelled like a keyword must be quoted: ${JSON.stringify(image)}`;
    if (wants('a field name')) return `a field name spelled like a keyword must be quoted with backticks: \`${image}\``;
    if (wants('a resource id or name')) return `a resource name spelled like a keyword must be quoted: ${JSON.stringify(image)}`;
  }

  if (token.tokenType === Bareword) {
    const typo = closestKeyword(image, expected);
    if (typo) return `did you mean "${typo}"?`;
    if (previous && tokenSpan(previous).end === token.startOffset && (previous.tokenType === NumberLiteral || previous.tokenType === Uuid)) {
      const text = source.slice(previous.startOffset, tokenSpan(token).end);
      return `text that starts with a digit must be quoted: ${JSON.stringify(text)}`;
    }
    if (wants('a quoted string')) return `quote the search text: ${JSON.stringify(image)}`;
    if (wants('"like"') && textMatchWords.has(image.toLowerCase())) return TEXT_MATCH_HINT;
    if (previous && beforePrevious?.tokenType === Equals && isValueWord(previous)) {
      const text = source.slice(previous.startOffset, tokenSpan(token).end);
      return `a value with spaces must be quoted: ${JSON.stringify(text)}`;
    }
  }

  if (wants('a resource id or name') && token.tokenType === BacktickField) {
    return `a resource name is quoted with double quotes: ${formatString(image.slice(1, -1).replaceAll('``', '`'))}`;
  }

  if (wants('a field name')) {
    if (token.tokenType === StringLiteral) {
      return `field names are quoted with backticks, not quotes: \`${unescapeString(image).replaceAll('`', '``')}\``;
    }
    if (token.tokenType === NumberLiteral) return `a field name that starts with a digit must be quoted with backticks: \`${image}\``;
  }

  if (token.tokenType === NumberLiteral && previous?.tokenType === NumberLiteral && tokenSpan(previous).end === token.startOffset) {
    // `00012` lexes as 0, 0, 0, 12: a code with leading zeros is text.
    const end = /^[0-9A-Za-z_.:+-]*/.exec(source.slice(token.startOffset))![0].length + token.startOffset;
    const text = source.slice(previous.startOffset, end);
    // `2025-9-1` lexes as 2025, -9, -1: a date not written as YYYY-MM-DD.
    if (/^\d{4}-\d/.test(text)) return `a date is written YYYY-MM-DD, such as 2025-09-01 (a timestamp 2025-09-01T08:30:00); other text is quoted: ${JSON.stringify(text)}`;
    return `a number with leading zeros is text: quote it: ${JSON.stringify(text)}`;
  }
  if (token.tokenType === StringLiteral && previous?.tokenType === StringLiteral && tokenSpan(previous).end === token.startOffset) {
    const quote = image[0]!;
    return `a quote inside a string is escaped with a backslash: \\${quote}, not ${quote}${quote}`;
  }
  if (token.tokenType === Star && !(previous?.tokenType === LParen && beforePrevious?.tokenType === Count)) {
    return previous?.tokenType === LParen ? '"*" stands only in count(*); other functions take a field' : 'leave out "select" to get every field';
  }
  if (token.tokenType === Equals && previous?.tokenType === Equals) return 'compare with a single "="';
  if (token.tokenType === Comma && wants('"and"')) return 'join conditions with "and", not ","';
  if (token.tokenType === RParen && previous?.tokenType === Comma) return 'remove the "," before ")"';
  if (previous?.tokenType === In && wants('"("')) return 'write the values in parentheses: in (a, b)';
  if (token.tokenType === And && previous?.tokenType === Comma) return 'in a value list, values are separated by "," only';
  if (previous?.tokenType === Semicolon && tokenMatcher(token, From)) {
    return 'this takes one query; several, each ended by ";", run as a script: ckql -c \'…; …\', ckql -f FILE, or the REPL';
  }
  if (expected.length === 1 && expected[0] === '"from"') {
    return 'a query starts with "from" and the resource to search: from <resource> where …';
  }
  return undefined;
}

/** What other languages write to match text in a field (`title contains algebra`, `title ~ 'alg'`): ckql says it with like or search. */
const TEXT_MATCH_HINT = 'to match text in a field use like: f like "%algebra%" (ilike ignores case); to find words in any field: search "algebra"';
const textMatchWords: ReadonlySet<string> = new Set(['contains', 'includes', 'has', 'matches', 'match', 'regexp', 'rlike', 'glob', 'startswith', 'endswith', 'similar']);

function isValueWord(token: IToken): boolean {
  return token.tokenType === Bareword || token.tokenType === Uuid || token.tokenType === NumberLiteral;
}

/** The expected keyword `word` is most likely a typo of, if any is close enough. */
function closestKeyword(word: string, expected: readonly string[]): string | undefined {
  const lower = word.toLowerCase();
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const name of expected) {
    if (!name.startsWith('"')) continue;
    const keyword = name.slice(1, -1);
    const head = keyword.split(' ')[0]!; // "order by" is typed as "order" first
    if (!keywordNames.has(head)) continue;
    const distance = editDistance(lower, head, 2);
    const allowed = Math.max(lower.length, head.length) <= 4 ? 1 : 2;
    if (distance <= allowed && distance < bestDistance) {
      best = keyword;
      bestDistance = distance;
    }
  }
  return best;
}

const keywordNames: ReadonlySet<string> = new Set([...keywordTokens, ...softKeywordTokens].map((t) => t.LABEL!));

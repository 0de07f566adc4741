/**
 * Content assist for the REPL: what may be typed at the cursor, from the
 * grammar itself (Chevrotain's `computeContentAssist`), so completion never
 * drifts from the parser. Keywords and punctuation come as text; resources,
 * fields and values come as kinds, for the REPL to fill in from the portal
 * or the loaded data.
 */
import type { ILexingResult, IToken, TokenType } from 'chevrotain';
import { classicPath } from './assist.js';
import { afterSource, queryParser, type RuleName } from './parser.js';
import { tokenSpan, unescapeString } from './to-ast.js';
import {
  As, BacktickField, Bareword, Between, Comma, Join, Equals, Facet, False, From, Greater, GreaterEquals, Group, Having, In, Keyword, Less,
  LessEquals, Limit, LParen, NotEquals, Null, NumberLiteral, Offset, Order, Parameter, queryLexer, RParen, Search, Select,
  softKeywordTokens, StringLiteral, True, Uuid, Where, Over, Partition, Qualify, By, Union,
} from './tokens.js';
import { MAX_NESTING } from './parse.js';

export type Suggestion =
  | { readonly kind: 'keyword'; readonly text: string }
  | { readonly kind: 'punctuation'; readonly text: string }
  /** a resource id or alias */
  | { readonly kind: 'resource' }
  /**
   * a field of `resource` (the one named after `from`, when it is known);
   * with `qualifier`, written `qualifier.field` (a joined resource's alias being typed: `c.`)
   */
  | { readonly kind: 'field'; readonly resource?: string; readonly qualifier?: string; readonly union?: readonly string[] }
  /** a value of `field` in `resource` */
  | { readonly kind: 'value'; readonly field: string; readonly resource?: string }
  /** a function of the closed list (docs/expressions.md), where an expression may call one */
  /** `windows`: where a window may stand (select, qualify, order by), the window functions too */
  | { readonly kind: 'function'; readonly windows?: true }
  /** an output name a select item gives with `as`, where a name may stand for it (group by, having, order by) */
  | { readonly kind: 'name'; readonly name: string };

export interface SuggestResult {
  /** where the word being completed starts; a completion replaces `[from, cursor)` */
  readonly from: number;
  /** the text of that word as typed so far (`wh`, `"ma`, `` `sch ``), or `''` */
  readonly prefix: string;
  readonly suggestions: readonly Suggestion[];
}

/** Tokens that may be a word still being typed when the cursor touches their end. */
const partialWords: ReadonlySet<TokenType> = new Set([Bareword, Uuid, NumberLiteral, Parameter]);

const comparisonOperators: ReadonlySet<TokenType> = new Set([Equals, NotEquals, Less, LessEquals, Greater, GreaterEquals]);

const punctuation: ReadonlySet<TokenType> = new Set([...comparisonOperators, LParen, RParen, Comma]);

/**
 * Content assist re-reads every token before the cursor for each path it
 * follows, so past this many tokens (or this deep in parentheses, which
 * `parse` refuses anyway) it suggests nothing rather than slow the prompt.
 */
const SUGGEST_TOKEN_LIMIT = 2_000;

const clauseKeywords: ReadonlySet<TokenType> = new Set([Where, Search, Select, Group, Having, Qualify, Facet, Order, Limit, Offset]);

/** Clause keywords written as two words. */
const twoWords: ReadonlyMap<TokenType, string> = new Map([[Order, 'order by'], [Group, 'group by']]);

/**
 * Suggestions at `cursor` (default: the end of `source`). Never throws.
 * @example
 * suggest('from courses where subject = ')
 * // → { from: 29, prefix: '', suggestions: [{ kind: 'value', field: 'subject', resource: 'courses' }] }
 * suggest('from courses wh')
 * // → { from: 13, prefix: 'wh', suggestions: [{ kind: 'keyword', text: 'where' }] }
 */
export function suggest(source: string, cursor: number = source.length): SuggestResult {
  const at = Number.isFinite(cursor) ? Math.min(Math.max(0, Math.trunc(cursor)), source.length) : source.length;
  try {
    return suggestAt(source.slice(0, at), at, source);
  } catch {
    return { from: at, prefix: '', suggestions: [] };
  }
}

function suggestAt(text: string, cursor: number, source: string): SuggestResult {
  const nothing: SuggestResult = { from: cursor, prefix: '', suggestions: [] };
  const lexed = queryLexer.tokenize(text);
  const tokens = lexed.tokens;
  const last = tokens[tokens.length - 1];
  const broken = lexed.groups['broken']?.[0];
  const digitWord = splitDigitWordStart(text, lexed);

  let before = tokens;
  let from = cursor;
  if (digitWord !== undefined) {
    before = tokens.filter((token) => token.startOffset < digitWord);
    from = digitWord;
  } else if (lexed.errors.length > 0) {
    // The lexer stops at a character outside the language: nothing after it is known.
    return nothing;
  } else if (broken) {
    // An open string or backtick name that runs to the cursor is the word being typed; anything
    // else broken before the cursor leaves nothing sensible to suggest.
    if (tokenSpan(broken).end !== cursor || broken.tokenType.name === 'BadEscapeString') return nothing;
    if (last && last.startOffset > broken.startOffset) return nothing;
    from = broken.startOffset;
  } else if (last && tokenSpan(last).end === cursor && (partialWords.has(last.tokenType) || isKeyword(last))) {
    before = tokens.slice(0, -1);
    from = last.startOffset;
  } else if (inComment(text, last ? tokenSpan(last).end : 0)) {
    return nothing;
  }
  before = withoutAliasReading(withShortLists(before));
  if (before.length > SUGGEST_TOKEN_LIMIT || nesting(before) > MAX_NESTING) return nothing;
  const prefix = text.slice(from);
  const resource = resourceOf(tokens);
  const present = new Set(before.filter((t) => clauseKeywords.has(t.tokenType)).map((t) => t.tokenType));

  const suggestions: Suggestion[] = [];
  const seen = new Set<string>();
  const add = (suggestion: Suggestion) => {
    const key = JSON.stringify(suggestion);
    if (seen.has(key)) return;
    seen.add(key);
    suggestions.push(suggestion);
  };
  const lower = prefix.toLowerCase();

  const addField = (path: { readonly ruleStack: readonly string[] }): void => {
    // `c.su`: the fields of the resource `c` names (an alias, or a resource's own name) in a query with joins.
    const dot = prefix.indexOf('.');
    const named = dot > 0 ? declaredSources(tokens).get(prefix.slice(0, dot)) : undefined;
    if (named !== undefined) add({ kind: 'field', resource: named, qualifier: prefix.slice(0, dot) });
    else {
      // `from a union b select _`: every field of the union (docs/expressions.md, Unions)
      const union = unionOf(tokens);
      add(resource === undefined ? { kind: 'field' } : union === undefined ? { kind: 'field', resource } : { kind: 'field', resource, union });
    }
    // In group by, having and order by a select item's `as` name stands for its value (select may follow: clauses come in any order).
    if (named === undefined && path.ruleStack.some((r) => namedClauses.has(r))) for (const name of outputNames(source)) add({ kind: 'name', name });
  };

  // The functions come after the fields and words of a place (a list shows what is most likely first).
  let calls = false;
  let windows = false;
  for (const path of queryParser().computeContentAssist('query', before)) {
    const classic = classicPath(path);
    const top = path.ruleStack[path.ruleStack.length - 1];
    // A window's words (docs/expressions.md): `over` after a call where a window may stand, then `partition by`, `order by`.
    if (top === 'overClause') {
      if (!path.ruleStack.some((rule) => windowless.has(rule))) {
        const type = path.nextTokenType;
        const word = type === Over ? 'over' : type === Partition ? 'partition by' : type === Order ? 'order by' : type === By ? 'by' : undefined;
        if (word?.startsWith(lower) === true) add({ kind: 'keyword', text: word });
        else if (type === RParen && prefix === '') add({ kind: 'punctuation', text: ')' });
      }
      continue;
    }
    // An expression's own words (docs/expressions.md): a function where a call may start, and a field inside a
    // call or an operator's operand (`round(cr`, `price * q`), which the classic paths leave out.
    if (top === 'functionCall' && path.nextTokenType === Bareword) {
      // not where a value goes (`where subject = lo`: a bareword there is a value; a call is written after a field)
      const first = path.ruleStack.indexOf('expression');
      if (!(path.ruleStack[first - 1] === 'condition' && path.occurrenceStack[first] === 2)) {
        calls = true;
        if (!path.ruleStack.some((rule) => windowless.has(rule) || rule === 'overClause')) windows = true;
      }
      continue;
    }
    if (classic === 'skip') {
      if (top === 'field' && path.ruleStack.includes('expression') && !path.ruleStack.includes('whenClause')) addField(path);
      continue;
    }
    const rule = classic === 'value' ? 'value' : (top as RuleName | undefined);
    const type = path.nextTokenType;
    // The parser reads an aggregate or a bucket in `where` only to say it belongs in `having` or `group by`.
    if ((rule === 'aggregate' || rule === 'bucket' || rule === 'unit') && path.ruleStack.includes('whereClause')) continue;
    if (rule === 'resource') add({ kind: 'resource' });
    else if (rule === 'field') addField(path);
    else if (rule === 'value') {
      const field = fieldBefore(before);
      // `c.subject = `: a value of the field `subject` of the resource `c` names, in a query with joins.
      const dot = field?.indexOf('.') ?? -1;
      const named = dot > 0 ? declaredSources(tokens).get(field!.slice(0, dot)) : undefined;
      if (named !== undefined) add({ kind: 'value', field: field!.slice(dot + 1), resource: named });
      else if (field !== undefined) add(resource === undefined ? { kind: 'value', field } : { kind: 'value', field, resource });
    } else if (isKeywordType(type)) {
      if (clauseKeywords.has(type) && present.has(type)) continue; // each clause once
      const word = twoWords.get(type) ?? type.LABEL!;
      if (word.startsWith(lower)) add({ kind: 'keyword', text: word });
    } else if (punctuation.has(type) && prefix === '') {
      add({ kind: 'punctuation', text: type.LABEL! });
    }
  }
  if (calls && !/^[`"']|\./.test(prefix)) add(windows ? { kind: 'function', windows: true } : { kind: 'function' });
  // `from a union _`: content assist runs no gates, so it also reads `union` as an alias; the parser's gate never does.
  const [previous, next] = before.slice(-2);
  const afterUnion = next?.tokenType === Union && resourceName(previous) !== undefined;
  return { from, prefix, suggestions: afterUnion ? suggestions.filter((suggestion) => suggestion.kind === 'resource') : suggestions };
}

/** The rules whose fields may be a select item's `as` name instead. */
const namedClauses: ReadonlySet<string> = new Set<RuleName>(['groupKey', 'havingClause', 'qualifyClause', 'sortKey']);

/** The clauses a window may not stand in (WINDOW_IN_WHERE): they come before the windows are computed. */
const windowless: ReadonlySet<string> = new Set<RuleName>(['whereClause', 'groupClause', 'havingClause', 'joinClause', 'facetClause']);

/** The clause keywords (and `from`, `join`) that end a select clause. */
const afterSelect: ReadonlySet<TokenType> = new Set([...clauseKeywords, From, Join]);

/**
 * The `as` names of the select items of a query (the whole text, the cursor
 * aside), in their order: `select count(*) as n, month(d) as m` → n, m. A
 * resource's alias (`from courses as c`) is not one.
 */
function outputNames(source: string): string[] {
  const tokens = queryLexer.tokenize(source).tokens;
  const names: string[] = [];
  let inSelect = false;
  tokens.forEach((token, i) => {
    if (token.tokenType === Select) inSelect = true;
    else if (afterSelect.has(token.tokenType)) inSelect = false;
    else if (inSelect && token.tokenType === As) {
      const next = tokens[i + 1];
      if (next?.tokenType === Bareword) names.push(next.image);
      else if (next?.tokenType === BacktickField && next.image.length > 2) names.push(next.image.slice(1, -1).replaceAll('``', '`'));
    }
  });
  return [...new Set(names)];
}

/**
 * Where the word before the cursor starts, when it starts with a digit and
 * the lexer split it, as it does a UUID being typed: `4798d5` reads as the
 * number 4798 and the name `d5`, and `12345678-` stops at the `-`. Such a
 * word is completed as a whole, so a resource id can be offered for it.
 */
function splitDigitWordStart(text: string, lexed: ILexingResult): number | undefined {
  let start = text.length;
  while (start > 0 && /[\w.:-]/.test(text.charAt(start - 1))) start--;
  const first = text.charCodeAt(start);
  if (!(first >= 48 && first <= 57) || text.includes('--', start)) return undefined; // 0-9; `--` starts a comment
  // The word must start a token (it is not inside a string, a backtick name
  // or a comment), and any lexing error must lie inside it.
  if ((lexed.groups['broken']?.length ?? 0) > 0) return undefined;
  if (!lexed.tokens.some((token) => token.startOffset === start)) return undefined;
  if (lexed.errors.some((error) => error.offset < start)) return undefined;
  return start;
}

/** `as _`: an alias put before a soft keyword that follows a resource (see `withoutAliasReading`). */
const explicitAlias: readonly IToken[] = queryLexer.tokenize('as _').tokens;

/**
 * The tokens, with an alias given to a resource that a soft keyword
 * (`join`, `on`, `group`, …) ends the input after. The parser's gate never
 * reads such a keyword as the resource's alias (`source` in parser.ts), but
 * content assist runs no gates and would offer what follows an alias too.
 */
function withoutAliasReading(tokens: IToken[]): IToken[] {
  const n = tokens.length;
  // `union` never ends a source: another resource follows it, and content assist reads it as the grammar does
  if (n < 3 || !afterSource.has(tokens[n - 1]!.tokenType) || tokens[n - 1]!.tokenType === Union) return tokens;
  const opener = tokens[n - 3]!.tokenType;
  if (opener !== From && opener !== Join && opener !== Union) return tokens;
  return [...tokens.slice(0, -1), ...explicitAlias, tokens[n - 1]!];
}

function isKeywordType(type: TokenType): boolean {
  return (type.CATEGORIES?.includes(Keyword) ?? false) || softKeywordTokens.includes(type);
}

const listItems: ReadonlySet<TokenType> = new Set([StringLiteral, NumberLiteral, Bareword, Uuid, Parameter, True, False, Null, BacktickField]);

/**
 * The tokens with every run of `item ,` pairs cut to one pair: a list of
 * 30 000 values (`in (…)`, `select a, b, …`) offers what one pair offers,
 * and content assist then reads a few tokens instead of the whole list.
 */
function withShortLists(tokens: IToken[]): IToken[] {
  let out: IToken[] | undefined;
  for (let i = 0; i < tokens.length; i++) {
    const repeat =
      i >= 2 && i + 1 < tokens.length &&
      listItems.has(tokens[i]!.tokenType) && tokens[i + 1]!.tokenType === Comma &&
      listItems.has(tokens[i - 2]!.tokenType) && tokens[i - 1]!.tokenType === Comma;
    if (repeat) {
      out ??= tokens.slice(0, i);
      i++; // the comma goes too
    } else if (out !== undefined) {
      out.push(tokens[i]!);
    }
  }
  return out ?? tokens;
}

function nesting(tokens: readonly IToken[]): number {
  let depth = 0;
  let deepest = 0;
  for (const token of tokens) {
    if (token.tokenType === LParen) deepest = Math.max(deepest, ++depth);
    else if (token.tokenType === RParen) depth--;
  }
  return deepest;
}

function isKeyword(token: IToken): boolean {
  return isKeywordType(token.tokenType);
}

/** Whether the cursor (the end of `text`) sits in a `--` comment after the last token. */
function inComment(text: string, lastEnd: number): boolean {
  return /--[^\r\n]*$/.test(text.slice(lastEnd));
}

/**
 * The names that qualify fields, when the query joins resources: each
 * source's alias (`from enrolments e`, `join courses as c`) and its
 * resource's own name, mapped to the resource.
 * @example declaredSources(queryLexer.tokenize('from enrolments e join portal:courses c').tokens) // → Map { enrolments → enrolments, e → enrolments, portal:courses → portal:courses, c → portal:courses }
 */
export function declaredSources(tokens: readonly IToken[]): Map<string, string> {
  const out = new Map<string, string>();
  if (!tokens.some((t) => t.tokenType === Join)) return out;
  for (let i = 0; i + 1 < tokens.length; i++) {
    const opener = tokens[i]!.tokenType;
    if (opener !== From && opener !== Join) continue;
    const named = tokens[i + 1]!;
    const resource = named.tokenType === StringLiteral ? unescapeString(named.image) : named.image;
    out.set(resource, resource);
    let next = i + 2;
    if (tokens[next]?.tokenType === As) next++;
    const alias = tokens[next];
    if (alias !== undefined && (alias.tokenType === Bareword || (alias.tokenType.CATEGORIES?.includes(Bareword) === true && !afterSource.has(alias.tokenType)))) {
      out.set(alias.image, resource);
    }
  }
  return out;
}

/** The resource named after `from`, if it is written as text. */
function resourceOf(tokens: readonly IToken[]): string | undefined {
  return tokens[0]?.tokenType === From ? resourceName(tokens[1]) : undefined;
}

/** A resource written as text (a name, a UUID or a string), else undefined. */
function resourceName(token: IToken | undefined): string | undefined {
  if (token?.tokenType === StringLiteral) return unescapeString(token.image);
  return token?.tokenType === Bareword || token?.tokenType === Uuid ? token.image : undefined;
}

/** The resources of a union after `from` (`from a union "b" union c`), if each is written as text; undefined without union. */
function unionOf(tokens: readonly IToken[]): string[] | undefined {
  if (tokens[0]?.tokenType !== From) return undefined;
  const names: string[] = [];
  for (let i = 1; ; i += 2) {
    const name = resourceName(tokens[i]);
    if (name === undefined) return undefined;
    names.push(name);
    if (tokens[i + 1]?.tokenType !== Union) return names.length > 1 ? names : undefined;
  }
}

/** The field of the comparison a value is being typed for: the name before the nearest operator, `in` or `between`. */
function fieldBefore(tokens: readonly IToken[]): string | undefined {
  for (let i = tokens.length - 1; i > 0; i--) {
    const type = tokens[i]!.tokenType;
    if (comparisonOperators.has(type) || type === In || type === Between) {
      const field = tokens[i - 1]!;
      return field.tokenType === BacktickField ? field.image.slice(1, -1).replaceAll('``', '`') : field.image;
    }
    if (type === RParen) return undefined;
  }
  return undefined;
}

/**
 * Hover: what the word under the cursor is. A keyword's one line of help; a
 * field's type and dictionary label and notes; a resource's id, alias, size
 * and fields; a parameter's declared value. The word's role comes from the
 * grammar (`roleOf`), so it works on a query still being typed.
 */
import type { IToken } from 'chevrotain';
import { formatField } from '../format.js';
import type { Span } from '../span.js';
import { declaredSources } from '../syntax/suggest.js';
import { unescapeString } from '../syntax/to-ast.js';
import { BacktickField, From, Parameter, queryLexer, Semicolon, StringLiteral } from '../syntax/tokens.js';
import { findResource, scopeOf, type LanguageContext } from './context.js';
import { keywordHelp } from './keyword-help.js';
import { functionNamed, windowFunctionNamed } from '../syntax/functions.js';
import { roleOf } from './lex.js';
import { statementAt } from './script.js';

export interface HoverResult {
  /** the word hovered, in the text given to `hover` */
  readonly span: Span;
  readonly kind: 'keyword' | 'field' | 'resource' | 'parameter' | 'function';
  /** one line: `where`, `subject: text`, `courses (4798d5…)` */
  readonly title: string;
  /** the whole help as plain text, title first */
  readonly text: string;
  /** a field's type */
  readonly type?: string;
  /** a field's dictionary label and notes (`info.label`, `info.notes`) */
  readonly label?: string;
  readonly notes?: string;
}

/**
 * What is under `cursor` in `text`, or undefined over white space, values and punctuation.
 * @example
 * hover('from courses where subject = math', 21, { resources: [{ id: 'courses', fields: [{ id: 'subject', type: 'text', info: { label: 'Subject area' } }] }] })
 * // → { span: { start: 19, end: 26 }, kind: 'field', title: 'subject: text', label: 'Subject area', text: 'subject: text\nSubject area' }
 */
export function hover(text: string, cursor: number, context: LanguageContext = {}): HoverResult | undefined {
  const at = Math.min(Math.max(0, Math.trunc(Number.isFinite(cursor) ? cursor : 0)), text.length);
  const piece = statementAt(text, at);
  const local = at - piece.start;
  const tokens = queryLexer.tokenize(piece.text).tokens;
  let index = tokens.findIndex((t) => t.startOffset <= local && local < t.startOffset + t.image.length);
  // At the very end of a word (the cursor after it) the word is still the one meant.
  if (index < 0) index = tokens.findIndex((t) => t.startOffset + t.image.length === local);
  const token = tokens[index];
  if (token === undefined) return undefined;
  const span = { start: piece.start + token.startOffset, end: piece.start + token.startOffset + token.image.length };

  if (token.tokenType === Parameter) {
    const name = token.image.slice(1);
    const declared = context.params !== undefined && Object.hasOwn(context.params, name);
    const value = declared ? context.params![name] : undefined;
    const title = `$${name}`;
    const line = !declared ? 'a parameter: bound to a value before the query runs' : value === undefined ? 'declared, with no default' : `default ${JSON.stringify(value)}`;
    return { span, kind: 'parameter', title, text: `${title}\n${line}` };
  }

  const role = roleOf(tokens, index);
  const fn = role === 'functionCall' ? (functionNamed(token.image) ?? windowFunctionNamed(token.image)) : undefined;
  if (fn !== undefined) return { span, kind: 'function', title: fn.signature, text: `${fn.signature}\n${fn.meaning}\nexample: ${fn.example}` };
  if (role === 'keyword') {
    const word = token.image.toLowerCase();
    return { span, kind: 'keyword', title: word, text: keywordHelp(word) };
  }
  if (role === 'field') {
    let name = token.tokenType === BacktickField ? token.image.slice(1, -1).replaceAll('``', '`') : token.image;
    let resource = resourceName(tokens, context);
    // `c.level` in a join: a field of the resource `c` names (an alias, or the resource as written).
    const dot = token.tokenType === BacktickField ? -1 : name.indexOf('.');
    const qualified = dot > 0 ? declaredSources(statementTokens(tokens, index)).get(name.slice(0, dot)) : undefined;
    if (qualified !== undefined) {
      resource = qualified;
      name = name.slice(dot + 1);
    }
    const field = resource === undefined ? undefined : findResource(context, resource)?.fields?.find((f) => f.id === name);
    if (field === undefined) {
      if (name === '_id') return { span, kind: 'field', title: '_id: int', type: 'int', text: "_id: int\nthe record's id in the datastore" };
      return undefined;
    }
    const title = `${formatField(field.id)}: ${field.type}`;
    const label = typeof field.info?.label === 'string' && field.info.label.trim() !== '' ? field.info.label : undefined;
    const notes = typeof field.info?.notes === 'string' && field.info.notes.trim() !== '' ? field.info.notes : undefined;
    return {
      span,
      kind: 'field',
      title,
      type: field.type,
      ...(label === undefined ? {} : { label }),
      ...(notes === undefined ? {} : { notes }),
      text: [title, label, notes].filter((part) => part !== undefined).join('\n'),
    };
  }
  if (role === 'resource') {
    const name = token.tokenType === StringLiteral ? unescapeString(token.image) : token.image;
    const resource = findResource(context, name);
    if (resource === undefined) return undefined;
    // A resource of another source (`portal:courses`) says which source it is read from.
    const source = scopeOf(context, name)?.source;
    const of = source === undefined ? '' : `${source}:`;
    const lines = [
      resource.alias !== undefined && resource.alias !== resource.id ? `${of}${resource.alias} (${resource.id})` : `${of}${resource.id}`,
      source === undefined ? undefined : `a resource of the source ${source}`,
      resource.name,
      resource.description,
      [
        resource.total === undefined ? undefined : `${resource.total} record${resource.total === 1 ? '' : 's'}`,
        resource.fields === undefined ? undefined : `fields: ${resource.fields.map((f) => f.id).join(', ')}`,
      ].filter((part) => part !== undefined).join('; '),
    ].filter((line): line is string => line !== undefined && line !== '');
    return { span, kind: 'resource', title: lines[0]!, text: lines.join('\n') };
  }
  return undefined;
}

/** The tokens of the statement `tokens[index]` is in (the text given to hover is one statement, but a `;` may end it). */
function statementTokens(tokens: readonly IToken[], index: number): IToken[] {
  let end = index;
  while (end < tokens.length && tokens[end]!.tokenType !== Semicolon) end++;
  return tokens.slice(0, end);
}

/** The resource named after `from` in the statement's tokens, when written as text or declared. */
function resourceName(tokens: readonly IToken[], context: LanguageContext): string | undefined {
  const [first, second] = tokens;
  if (first?.tokenType !== From || second === undefined || second.tokenType === Semicolon) return undefined;
  if (second.tokenType === StringLiteral) return unescapeString(second.image);
  if (second.tokenType === Parameter) {
    // `from $r` with a declared default names that resource.
    const value = context.params?.[second.image.slice(1)];
    return typeof value === 'string' ? value : undefined;
  }
  return second.image;
}

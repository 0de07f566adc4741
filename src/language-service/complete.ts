/**
 * Completion: what the grammar allows at the cursor (`suggest`, Chevrotain's
 * content assist, so a new clause in the grammar is offered with no change
 * here), filled in with the names the context knows: resources, fields with
 * their types and dictionary labels, values seen in the data, declared
 * parameters. Each item carries the text to insert, written as the lexer
 * reads it back (quoted where needed), and the range it replaces.
 *
 * What the context does not know yet is listed in `pending`, so a front
 * end that learns names asynchronously (the REPL, an editor) can ask for
 * them and complete again.
 */
import type { JsonValue } from '../datastore/types.js';
import { functions, windowFunctions } from '../syntax/functions.js';
import { formatField, formatScalar } from '../format.js';
import type { Span } from '../span.js';
import { suggest } from '../syntax/suggest.js';
import { findResource, unionSchema, type FieldSchema, type LanguageContext, type ResourceSchema } from './context.js';
import { keywordHelp } from './keyword-help.js';
import { statementAt } from './script.js';

export type CompletionKind = 'keyword' | 'punctuation' | 'source' | 'resource' | 'field' | 'name' | 'value' | 'parameter' | 'function';

export interface CompletionItem {
  /** what a list shows: the name or word itself */
  readonly label: string;
  readonly kind: CompletionKind;
  /** the text that replaces the completion's span, quoted as the lexer needs */
  readonly insert: string;
  /** a short note beside the label: a field's type, a resource's id or size */
  readonly detail?: string;
  /** longer help: a keyword's line, a field's dictionary label and notes */
  readonly documentation?: string;
}

/** Something the context did not know that would add items. */
export type Lookup =
  /** the resources of the current source, or with `source` of that source (`name:` being typed) */
  | { readonly kind: 'resources'; readonly source?: string }
  | { readonly kind: 'fields'; readonly resource: string }
  | { readonly kind: 'values'; readonly resource: string; readonly field: string };

export interface CompletionResult {
  /** the range an item replaces: from the start of the word being typed to the cursor */
  readonly span: Span;
  /** the text of that word as typed so far (`wh`, `"Kö`, `` `sch ``), or `''` */
  readonly prefix: string;
  /** the items that fit the prefix, in the grammar's order; names in the context's order, values sorted */
  readonly items: readonly CompletionItem[];
  /** what the context lacked; complete again once it is known */
  readonly pending: readonly Lookup[];
}

/**
 * Completions at `cursor` in `text` (one query or a script). Never throws.
 * @example
 * complete('from courses wh', 15).items // → [{ label: 'where', kind: 'keyword', insert: 'where', … }]
 * complete('from places where sch', 21, { resources: [{ id: 'places', fields: [{ id: 'school year', type: 'text' }] }] }).items
 * // → [{ label: 'school year', kind: 'field', insert: '`school year`', detail: 'text' }]
 */
export function complete(text: string, cursor: number, context: LanguageContext = {}): CompletionResult {
  const at = Number.isFinite(cursor) ? Math.min(Math.max(0, Math.trunc(cursor)), text.length) : text.length;
  const piece = statementAt(text, at);
  const local = at - piece.start;
  // A lone `$` is not a token yet (a parameter needs a name): what fits there is what fits without it.
  let suggested = suggest(piece.text, local);
  if (suggested.suggestions.length === 0 && piece.text.charAt(local - 1) === '$') {
    const without = suggest(piece.text.slice(0, local - 1), local - 1);
    // Only where `$` starts a word (not inside a string, a name or a comment).
    if (without.prefix === '' && without.from === local - 1) suggested = { ...without, prefix: '$' };
  }
  const { from, prefix, suggestions } = suggested;
  const items: CompletionItem[] = [];
  const pending: Lookup[] = [];
  // A name that needs quotes completes from its bare start too: `sch` finds `school year`, `K` finds "Köln".
  const quoted = /^[`"']/.test(prefix);
  const lower = prefix.toLowerCase();
  const fits = (insert: string, name?: string): boolean =>
    insert.toLowerCase().startsWith(lower) || (!quoted && name !== undefined && prefix !== '' && name.toLowerCase().startsWith(lower));
  const add = (item: CompletionItem, name?: string): void => {
    if (!fits(item.insert, name) || items.some((each) => each.insert === item.insert)) return;
    items.push(item);
  };

  for (const suggestion of suggestions) {
    switch (suggestion.kind) {
      case 'keyword':
        add({ label: suggestion.text, kind: 'keyword', insert: inCaseOf(prefix, suggestion.text), documentation: keywordHelp(suggestion.text.split(' ')[0]!) });
        break;
      case 'punctuation':
        // `(` and `,` help only when nothing is typed yet; they never complete a word.
        if (prefix === '') add({ label: suggestion.text, kind: 'punctuation', insert: suggestion.text });
        break;
      case 'resource': {
        // `portal:` typed (bare or after a quote): that source's resources, each written `portal:resource`.
        const named = sourceTyped(prefix, context);
        if (named !== undefined) {
          const resources = named === context.source ? context.resources : context.sources?.find((s) => s.name === named)?.resources;
          if (resources === undefined) pending.push(named === context.source ? { kind: 'resources' } : { kind: 'resources', source: named });
          else addResources(resources, `${named}:`, add);
          break;
        }
        if (context.resources === undefined) pending.push({ kind: 'resources' });
        else addResources(context.resources, '', add);
        // The other sources, whose resources follow their `name:`.
        for (const source of context.sources ?? []) {
          const label = `${source.name}:`;
          add({ label, kind: 'source', insert: label, detail: source.detail ?? 'a source: its resources follow' }, label);
        }
        addParameters(context, add);
        break;
      }
      case 'field': {
        if (suggestion.resource === undefined) break;
        const union = suggestion.union;
        const fields = union === undefined ? findResource(context, suggestion.resource)?.fields : unionSchema(union, context)?.fields;
        if (fields === undefined) {
          for (const resource of union ?? [suggestion.resource]) if (findResource(context, resource)?.fields === undefined) pending.push({ kind: 'fields', resource });
          break;
        }
        const qualifier = suggestion.qualifier;
        for (const field of fields) {
          if (qualifier === undefined) add(fieldItem(field), field.id);
          else {
            const item = fieldItem(field);
            add({ ...item, label: `${qualifier}.${field.id}`, insert: `${qualifier}.${item.insert}` }, `${qualifier}.${field.id}`);
          }
        }
        break;
      }
      case 'function':
        // The closed list of functions, each with its signature and what it gives (docs/expressions.md).
        for (const fn of Object.values(functions)) {
          add({ label: fn.name, kind: 'function', insert: `${inCaseOf(prefix, fn.name)}(`, detail: fn.signature, documentation: `${fn.meaning}\nexample: ${fn.example}` }, fn.name);
        }
        // The window functions where a window may stand (select, qualify, order by): each needs over (…).
        if (suggestion.windows === true) {
          for (const fn of Object.values(windowFunctions)) {
            add({ label: fn.name, kind: 'function', insert: `${inCaseOf(prefix, fn.name)}(`, detail: fn.signature, documentation: `${fn.meaning}\nexample: ${fn.example}` }, fn.name);
          }
        }
        break;
      case 'name':
        // A select item's `as` name, where group by, having and order by may use it.
        add({ label: suggestion.name, kind: 'name', insert: formatField(suggestion.name), detail: 'output name (select … as)' }, suggestion.name);
        break;
      case 'value': {
        const resource = suggestion.resource;
        const field = resource === undefined ? undefined : findResource(context, resource)?.fields?.find((f) => f.id === suggestion.field);
        // The grammar offers a value here, not its keywords; a boolean column's two are worth naming.
        if (field?.type === 'bool') for (const word of ['true', 'false']) add({ label: word, kind: 'value', insert: inCaseOf(prefix, word), detail: 'bool' });
        if (resource !== undefined) {
          const seen = context.samples?.(resource, suggestion.field);
          if (seen === undefined) pending.push({ kind: 'values', resource, field: suggestion.field });
          for (const value of sortedValues(seen ?? [])) {
            const insert = formatScalar(value);
            add({ label: typeof value === 'string' ? value : insert, kind: 'value', insert, ...(field === undefined ? {} : { detail: field.type }) }, typeof value === 'string' ? value : undefined);
          }
        }
        addParameters(context, add);
        break;
      }
    }
  }
  const start = piece.start + from;
  return { span: { start, end: at }, prefix, items, pending };
}

/** The source whose `name:` the word being typed starts with, when the context knows it. */
function sourceTyped(prefix: string, context: LanguageContext): string | undefined {
  if (context.sources === undefined) return undefined;
  const word = /^["']/.test(prefix) ? prefix.slice(1) : prefix;
  const colon = word.indexOf(':');
  if (colon <= 0) return undefined;
  const name = word.slice(0, colon);
  return name === context.source || context.sources.some((s) => s.name === name) ? name : undefined;
}

/** Resource items, aliases first, each written after `before` (a source's `name:`, or nothing). */
function addResources(resources: readonly ResourceSchema[], before: string, add: (item: CompletionItem, name?: string) => void): void {
  for (const resource of resources) {
    if (resource.alias === undefined) continue;
    const label = `${before}${resource.alias}`;
    add({ label, kind: 'resource', insert: formatScalar(label), detail: resourceDetail(resource.id, resource.total), ...described(resource) }, label);
  }
  for (const resource of resources) {
    const label = `${before}${resource.id}`;
    add({ label, kind: 'resource', insert: formatScalar(label), detail: resourceDetail(resource.alias, resource.total), ...described(resource) }, label);
  }
}

function fieldItem(field: FieldSchema): CompletionItem {
  const label = field.info?.label;
  const notes = field.info?.notes;
  const documentation = [label, notes].filter((part): part is string => typeof part === 'string' && part.trim() !== '').join('\n\n');
  return {
    label: field.id,
    kind: 'field',
    insert: formatField(field.id),
    detail: typeof label === 'string' && label.trim() !== '' ? `${field.type} · ${label}` : field.type,
    ...(documentation === '' ? {} : { documentation }),
  };
}

function resourceDetail(other: string | undefined, total: number | undefined): string | undefined {
  const parts = [other, total === undefined ? undefined : `${total} record${total === 1 ? '' : 's'}`].filter((part) => part !== undefined);
  return parts.length === 0 ? undefined : parts.join(' · ');
}

function described(resource: { readonly name?: string; readonly description?: string }): { documentation?: string } {
  const text = [resource.name, resource.description].filter((part): part is string => part !== undefined && part.trim() !== '').join('\n\n');
  return text === '' ? {} : { documentation: text };
}

function addParameters(context: LanguageContext, add: (item: CompletionItem, name?: string) => void): void {
  for (const [name, value] of Object.entries(context.params ?? {})) {
    add({ label: `$${name}`, kind: 'parameter', insert: `$${name}`, ...(value === undefined ? {} : { detail: JSON.stringify(value) }) });
  }
}

/** Scalars only, each once, in the order of their text. */
function sortedValues(values: readonly JsonValue[]): (string | number | boolean | null)[] {
  const scalars = values.filter((v): v is string | number | boolean | null => v === null || typeof v !== 'object');
  const text = (v: string | number | boolean | null): string => formatScalar(v);
  return [...new Map(scalars.map((v) => [text(v), v])).values()].sort((a, b) => (text(a) < text(b) ? -1 : text(a) > text(b) ? 1 : 0));
}

/** Keywords keep the case the person started typing in: `WH` completes to `WHERE`. */
function inCaseOf(prefix: string, word: string): string {
  return prefix.length > 0 && prefix === prefix.toUpperCase() && prefix !== prefix.toLowerCase() ? word.toUpperCase() : word;
}

/**
 * Tab completion by grammar position: `suggest` (Chevrotain content assist)
 * says what may stand at the cursor; this fills in the names only the
 * session knows (resources, fields learned with a `limit: 0` request,
 * values seen in the last result) and writes them as the lexer would read
 * them back (quoted where needed).
 */
import type { FieldInfo, JsonValue } from '../datastore/types.js';
import type { ResourceSummary } from '../session/source.js';
import { suggest } from '../syntax/suggest.js';
import { formatField, formatScalar } from '../format.js';

/** What completion may ask the session; every lookup may fail quietly (no suggestions). */
export interface CompletionContext {
  resources(): Promise<readonly ResourceSummary[]>;
  fields(resource: string): Promise<readonly FieldInfo[]>;
  /** values of `field` seen in the last result of `resource` (or in a sample of it) */
  values(field: string, resource: string | undefined): Promise<readonly JsonValue[]>;
}

export interface Completion {
  /** full words, each replacing `prefix` */
  readonly completions: readonly string[];
  /** the text before the cursor that the completions replace */
  readonly prefix: string;
}

/**
 * A field name as the lexer reads it back: bare, or in backticks.
 * @example fieldText('start_date') // 'start_date'
 * @example fieldText('school year') // '`school year`'
 */
export const fieldText: (name: string) => string = formatField;

/**
 * A record value as a query literal that means the same value (the
 * formatter's own rule, so a UUID stays bare and completes from its digits).
 * @example valueText('active') // 'active'
 * @example valueText("Éléments d'algèbre") // '"Éléments d\'algèbre"'
 */
export function valueText(value: JsonValue): string | undefined {
  if (value === null || typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') {
    return formatScalar(value);
  }
  return undefined;
}

/** Keywords keep the case the person started typing in: `WH` completes to `WHERE`. */
function inCaseOf(prefix: string, word: string): string {
  return prefix.length > 0 && prefix === prefix.toUpperCase() && prefix !== prefix.toLowerCase()
    ? word.toUpperCase()
    : word;
}

function matches(candidate: string, prefix: string): boolean {
  return candidate.toLowerCase().startsWith(prefix.toLowerCase());
}

/**
 * Completions for the query text `source` with the cursor at `cursor`.
 * @example
 * await completeQuery('from courses wh', 15, context) // { completions: ['where '], prefix: 'wh' }
 */
export async function completeQuery(source: string, cursor: number, context: CompletionContext): Promise<Completion> {
  const { prefix, suggestions } = suggest(source, cursor);
  const candidates: string[] = [];
  // A name that needs quotes completes from its bare start too: `sch` finds `school year`, `K` finds "Köln".
  const quoted = /^[`"']/.test(prefix);
  const add = (text: string | undefined, name?: string): void => {
    if (text === undefined || candidates.includes(text)) return;
    if (matches(text, prefix) || (!quoted && name !== undefined && prefix !== '' && matches(name, prefix))) candidates.push(text);
  };
  for (const suggestion of suggestions) {
    switch (suggestion.kind) {
      case 'keyword':
        add(inCaseOf(prefix, suggestion.text));
        break;
      case 'punctuation':
        // `(` and `,` help only when nothing is typed yet; they never complete a word.
        if (prefix === '') add(suggestion.text);
        break;
      case 'resource': {
        const resources = await context.resources().catch(() => []);
        for (const resource of resources) if (resource.alias !== undefined) add(valueText(resource.alias), resource.alias);
        for (const resource of resources) add(valueText(resource.id), resource.id);
        break;
      }
      case 'field': {
        if (suggestion.resource === undefined) break;
        const fields = await context.fields(suggestion.resource).catch(() => []);
        for (const field of fields) add(fieldText(field.id), field.id);
        break;
      }
      case 'value': {
        const seen = await context.values(suggestion.field, suggestion.resource).catch(() => []);
        for (const value of [...seen].sort(compareValues)) add(valueText(value), typeof value === 'string' ? value : undefined);
        break;
      }
    }
  }
  return { completions: finish(candidates), prefix };
}

function compareValues(a: JsonValue, b: JsonValue): number {
  const ta = valueText(a) ?? '';
  const tb = valueText(b) ?? '';
  return ta < tb ? -1 : ta > tb ? 1 : 0;
}

/** A single completion gets a trailing space, so the next word can follow at once. */
function finish(candidates: readonly string[]): readonly string[] {
  const only = candidates[0];
  if (candidates.length === 1 && only !== undefined && /[\w`"'\-.:]$/.test(only)) return [`${only} `];
  return candidates;
}

/** Dot commands and their argument words, for completing `.fo` and `.format cs`. */
export interface CommandCompletionContext {
  readonly commands: readonly string[];
  /** the words the argument of `command` may be, or undefined when free text */
  argumentWords(command: string): Promise<readonly string[] | undefined>;
}

/**
 * Completions for a line that starts with `.`.
 * @example await completeCommand('.for', context) // { completions: ['.format '], prefix: '.for' }
 */
export async function completeCommand(line: string, context: CommandCompletionContext): Promise<Completion> {
  const space = line.indexOf(' ');
  if (space < 0) {
    const candidates = context.commands.map((name) => `.${name}`).filter((name) => matches(name, line));
    return { completions: finish(candidates), prefix: line };
  }
  const command = line.slice(1, space);
  const words = (await context.argumentWords(command)) ?? [];
  const prefix = line.slice(line.lastIndexOf(' ') + 1);
  return { completions: finish(words.filter((word) => matches(word, prefix))), prefix };
}

/**
 * Tab completion: the language service says what fits at the cursor
 * (`complete`, by grammar position); this adapter fills its context with
 * the names only the session knows (resources, fields learned with a
 * `limit: 0` request, values seen in the last result or a sample), asking
 * for what the service reports missing, and completes again.
 */
import type { FieldInfo, JsonValue } from '../datastore/types.js';
import type { ResourceSummary } from '../session/source.js';
import { complete, type LanguageContext, type Lookup, type ResourceSchema } from '../language-service/index.js';
import { formatField, formatScalar } from '../format.js';
import { splitSource } from '../compile/plan.js';

/** What completion may ask the session; every lookup may fail quietly (no suggestions). */
export interface CompletionContext {
  resources(): Promise<readonly ResourceSummary[]>;
  /**
   * the names a resource may be written `name:resource` of (profiles, `local`),
   * the current source's among them, and a note on each; known without asking anything
   */
  sources?(): { readonly names: readonly string[]; readonly current: string | undefined; readonly notes?: ReadonlyMap<string, string> };
  /** the resources of the source `name`, opened when first asked */
  resourcesOf?(name: string): Promise<readonly ResourceSummary[]>;
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

function matches(candidate: string, prefix: string): boolean {
  return candidate.toLowerCase().startsWith(prefix.toLowerCase());
}

export interface CompleteQueryOptions {
  /** called, before waiting, with what is being asked for (`the values of country`) */
  readonly onWait?: (what: string) => void;
}

/**
 * Completions for the query text `source` with the cursor at `cursor`.
 * @example
 * await completeQuery('from courses wh', 15, context) // { completions: ['where '], prefix: 'wh' }
 */
export async function completeQuery(
  source: string,
  cursor: number,
  context: CompletionContext,
  options: CompleteQueryOptions = {},
): Promise<Completion> {
  const known = new Known(context);
  let result = complete(source, cursor, known.context());
  // Names found in one round can reveal more to ask for (a resource's fields, then nothing): two rounds at most.
  for (let round = 0; round < 2 && result.pending.length > 0; round++) {
    options.onWait?.(describe(result.pending));
    await Promise.all(result.pending.map((lookup) => known.learn(lookup)));
    result = complete(source, cursor, known.context());
  }
  return { completions: finish(result.items.map((item) => item.insert)), prefix: result.prefix };
}

/** What the session answered so far, as the service's plain context. */
class Known {
  #resources: readonly ResourceSummary[] | undefined;
  /** per named source, its resources once asked */
  readonly #sourceResources = new Map<string, readonly ResourceSummary[]>();
  readonly #fields = new Map<string, readonly FieldInfo[]>();
  readonly #values = new Map<string, readonly JsonValue[]>();

  constructor(private readonly session: CompletionContext) {}

  async learn(lookup: Lookup): Promise<void> {
    switch (lookup.kind) {
      case 'resources':
        if (lookup.source === undefined) this.#resources = await this.session.resources().catch(() => []);
        else this.#sourceResources.set(lookup.source, (await this.session.resourcesOf?.(lookup.source).catch(() => [])) ?? []);
        return;
      case 'fields':
        this.#fields.set(lookup.resource, await this.session.fields(lookup.resource).catch(() => []));
        return;
      case 'values':
        this.#values.set(JSON.stringify([lookup.resource, lookup.field]), await this.session.values(lookup.field, lookup.resource).catch(() => []));
        return;
    }
  }

  context(): LanguageContext {
    const named = this.session.sources?.();
    const current = named?.current;
    // Fields are learned by the name written (`portal:courses`); each list below holds them by the name within its
    // source, and the current source's may be written after its own name too (`local:courses` of local data).
    const withFields = (list: readonly ResourceSummary[], befores: readonly string[]): ResourceSchema[] =>
      list.map((r) => {
        const names = befores.flatMap((before) => [...(r.alias === undefined ? [] : [`${before}${r.alias}`]), `${before}${r.id}`]);
        const fields = names.map((name) => this.#fields.get(name)).find((each) => each !== undefined);
        return { ...r, ...(fields === undefined ? {} : { fields }) };
      });
    const resources = withFields(this.#resources ?? [], current === undefined ? [''] : ['', `${current}:`]);
    const others = new Map<string, ResourceSchema[]>();
    for (const [name, list] of this.#sourceResources) others.set(name, withFields(list, [`${name}:`]));
    // A resource asked for by a name the list does not hold (a portal lists few) still has its fields.
    for (const [written, fields] of this.#fields) {
      const { source, resource } = splitSource(written);
      const own = source !== undefined && named?.names.includes(source) === true;
      const list = !own ? resources : source === current ? resources : others.get(source) ?? others.set(source, []).get(source)!;
      const name = own ? resource : written;
      if (!list.some((r) => r.id === name || r.alias === name)) list.push({ id: name, fields });
    }
    const sources = named?.names.map((name) => {
      const list = others.get(name);
      const note = named.notes?.get(name);
      return { name, ...(note === undefined ? {} : { detail: note }), ...(list === undefined || (!this.#sourceResources.has(name) && list.length === 0) ? {} : { resources: list }) };
    });
    return {
      ...(this.#resources === undefined && resources.length === 0 ? {} : { resources }),
      ...(sources === undefined ? {} : { sources }),
      ...(current === undefined ? {} : { source: current }),
      samples: (resource, field) => this.#values.get(JSON.stringify([resource, field])),
    };
  }
}

/** `the values of country`, `the fields of courses`, `the resource names`. */
function describe(pending: readonly Lookup[]): string {
  const lookup = pending[0]!;
  switch (lookup.kind) {
    case 'resources':
      return lookup.source === undefined ? 'the resource names' : `the resources of ${lookup.source}`;
    case 'fields':
      return `the fields of ${lookup.resource}`;
    case 'values':
      return `the values of ${lookup.field}`;
  }
}

/** A single completion gets a trailing space, so the next word can follow at once; a source's `name:` does not (its resource follows). */
function finish(candidates: readonly string[]): readonly string[] {
  const only = candidates[0];
  if (candidates.length === 1 && only !== undefined && /[\w`"'\-.]$/.test(only)) return [`${only} `];
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

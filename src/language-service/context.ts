/**
 * What the language service may know about the source a query goes to:
 * plain data, synchronous, supplied by whichever front end is attached (the
 * REPL from its session, the playground from the server it talks to, the
 * language server from a profile, `ckql check --schema` from a source).
 * Everything is optional: with an empty context the service still parses,
 * completes keywords and formats; each thing it learns adds checks and names.
 */
import type { ParamValue } from '../compile/bind.js';
import { splitSource, type Target } from '../compile/plan.js';
import type { JsonValue } from '../datastore/types.js';

/** A data dictionary entry (CKAN's `info` on a field): what people call the field and why it is there. */
export interface FieldDictionary {
  readonly label?: string;
  readonly notes?: string;
  readonly [key: string]: unknown;
}

export interface FieldSchema {
  readonly id: string;
  /** CKAN's type name: `text`, `int4`, `numeric`, `date`, `_text`, … */
  readonly type: string;
  readonly info?: FieldDictionary;
}

export interface ResourceSchema {
  readonly id: string;
  /** the alias a query may name it by (CKAN's `_table_metadata`, a local file's name) */
  readonly alias?: string;
  /** a human title, for hover and completion details */
  readonly name?: string;
  readonly description?: string;
  /** undefined while not known yet: no field is then called unknown */
  readonly fields?: readonly FieldSchema[];
  readonly total?: number;
}

/**
 * A source a resource may be written `name:resource` of (docs/aggregates.md,
 * joins across sources): a profile of the config, or `local`.
 */
export interface SourceSchema {
  readonly name: string;
  /** a short note for completion: the profile's URL, `local data` */
  readonly detail?: string;
  /** its resources known so far; undefined while not known (completion then asks for them) */
  readonly resources?: readonly ResourceSchema[];
  /** whether `resources` lists every resource of that source */
  readonly allResources?: boolean;
}

export interface LanguageContext {
  /** the portal's dialect; default `ckan-2.11` (what runs locally is said as a note, never an error) */
  readonly target?: Target;
  /** the resources known so far */
  readonly resources?: readonly ResourceSchema[];
  /**
   * whether `resources` lists every resource of the source, so that a name
   * not among them is an error; a portal can rarely list all of its own
   */
  readonly allResources?: boolean;
  /**
   * values of a field seen in the data, for completion; `resource` is as the
   * query names it (an id or an alias); undefined while not known yet
   */
  readonly samples?: (resource: string, field: string) => readonly JsonValue[] | undefined;
  /**
   * the declared parameters and their values (a named query's `params:`);
   * when given, a parameter left without a value is noted, and values are bound
   * before the query is checked. Absent: parameters are not checked.
   */
  readonly params?: Readonly<Record<string, ParamValue | undefined>>;
  /**
   * the sources a resource may be written `name:resource` of; when given, a
   * `name:` that is none of them is UNKNOWN_SOURCE. Absent: `name:` is not
   * checked (the resource is looked up as written, as the source would).
   */
  readonly sources?: readonly SourceSchema[];
  /** the name of the current source among `sources` (`local`, its profile), if it has one: its resources are `resources` */
  readonly source?: string;
}

/** Where a resource as written is to be found: the current source's or a named source's list, and its name there. */
export interface ResourceScope {
  /** the source's name as written, when the resource is written `name:resource` of a known source */
  readonly source?: string;
  /** the resource's name within that source */
  readonly resource: string;
  readonly resources: readonly ResourceSchema[] | undefined;
  readonly allResources: boolean;
}

/**
 * Where `written` is found: `name:resource` of a source the context knows is
 * looked up in that source; of a name the context does not know, nowhere
 * (undefined: it is UNKNOWN_SOURCE when the query runs); anything else, and
 * any `name:` when the context knows no sources, in the current source's.
 * @example scopeOf({ sources: [{ name: 'portal', resources: [] }] }, 'portal:courses') // → { source: 'portal', resource: 'courses', resources: [], allResources: false }
 */
export function scopeOf(context: LanguageContext, written: string): ResourceScope | undefined {
  const current: ResourceScope = { resource: written, resources: context.resources, allResources: context.allResources === true };
  const { source, resource } = splitSource(written);
  if (source === undefined || context.sources === undefined) return current;
  if (source === context.source) return { ...current, source, resource };
  const other = context.sources.find((each) => each.name === source);
  if (other === undefined) return undefined;
  return { source, resource, resources: other.resources, allResources: other.allResources === true };
}

/** The resource a query names, by id or alias. */
export function findResource(context: LanguageContext, name: string): ResourceSchema | undefined {
  const scope = scopeOf(context, name);
  return scope === undefined ? undefined : findIn(scope.resources ?? [], scope.resource);
}

/** The resource of `resources` named `name` (an id or an alias). */
export function findIn(resources: readonly ResourceSchema[], name: string): ResourceSchema | undefined {
  return (
    resources.find((r) => r.id === name || r.alias === name) ??
    // Resource ids are UUIDs, which CKAN compares lower-cased.
    resources.find((r) => r.id.toLowerCase() === name.toLowerCase())
  );
}

/** The fields of the resource a query names, when they are known. */
export function fieldsOf(context: LanguageContext, resource: string | undefined): readonly FieldSchema[] | undefined {
  if (resource === undefined) return undefined;
  return findResource(context, resource)?.fields;
}

/**
 * The resource a union source reads as one (docs/expressions.md, Unions):
 * named by its resources, with each field once (first met first) and
 * `_resource`; its fields unknown while any resource's are. Undefined
 * when a resource of it is not known at all (that one is then reported).
 * @example unionSchema(['courses', 'schools'], context)?.fields // → [_id, code, …, name, city, …, _resource]
 */
export function unionSchema(names: readonly string[], context: LanguageContext): ResourceSchema | undefined {
  const members: ResourceSchema[] = [];
  for (const name of names) {
    const scope = scopeOf(context, name);
    const found = scope?.resources === undefined ? undefined : findIn(scope.resources, scope.resource);
    if (found === undefined) return undefined;
    members.push(found);
  }
  const id = names.join(' union ');
  if (members.some((m) => m.fields === undefined)) return { id };
  const fields = new Map<string, FieldSchema>();
  for (const member of members) for (const field of member.fields!) if (!fields.has(field.id)) fields.set(field.id, field);
  fields.set('_resource', { id: '_resource', type: 'text' });
  return { id, fields: [...fields.values()] };
}

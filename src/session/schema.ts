/**
 * What a source knows about the resources some queries name, as the
 * language service's context: the source's list, and the fields of each
 * named resource (one `limit: 0` request each). A name the source answers
 * Not Found for is left out, so with `allResources` the service calls it
 * unknown. Shared by `ckql check --schema` and the language server.
 */
import type { Span } from '../span.js';
import { querySources, unionMembers } from '../ast.js';
import type { ParamValue } from '../compile/bind.js';
import { splitSource } from '../compile/plan.js';
import { DatastoreError, QueryError, isUnknownResource } from '../errors.js';
import type { LanguageContext, ResourceSchema } from '../language-service/index.js';
import { diagnose, statementsOf } from '../language-service/index.js';
import { parse } from '../syntax/parse.js';
import type { Source } from './source.js';

/**
 * The resources `text` (a query or a script) reads: each statement's `from`
 * and joined resources, with `$parameters` read from `params` when they hold
 * text.
 * @example resourcesNamed('from courses limit 1; from $r s join courses c on s.code = c.school', { r: 'schools' }) // ['courses', 'schools']
 */
export function resourcesNamed(text: string, params: Readonly<Record<string, unknown>> = {}): string[] {
  const names: string[] = [];
  for (const statement of statementsOf(text)) {
    let query;
    try {
      query = parse(statement.text);
    } catch {
      continue;
    }
    for (const resource of querySources(query).flatMap(unionMembers)) {
      const name = resource.kind === 'param' ? params[resource.name] : resource.value;
      if (typeof name === 'string' && name !== '' && !names.includes(name)) names.push(name);
    }
  }
  return names;
}

export interface SourceSchema {
  readonly resources: readonly ResourceSchema[];
  /** every name queries use was asked for: one not among `resources` does not exist */
  readonly allResources: true;
}

/**
 * The schema of the resources `names` (and the source's own list).
 * Network failures are thrown; Not Found only leaves the name out.
 */
export async function loadSchema(source: Pick<Source, 'listResources' | 'client'>, names: Iterable<string>, signal?: AbortSignal): Promise<SourceSchema> {
  const listed = await source.listResources();
  const resources = listed.map((r): ResourceSchema => ({ id: r.id, ...(r.alias === undefined ? {} : { alias: r.alias }), ...(r.total === undefined ? {} : { total: r.total }) }));
  return { resources: await withFields(source.client, resources, names, signal), allResources: true };
}

/** `resources` with the fields of each of `names` (one `limit: 0` request each), those not among them added; a name the source answers Not Found for is left out. */
async function withFields(
  client: Source['client'],
  resources: readonly ResourceSchema[],
  names: Iterable<string>,
  signal: AbortSignal | undefined,
): Promise<ResourceSchema[]> {
  const all = [...resources];
  for (const name of new Set(names)) {
    try {
      const result = await client.search({ resource_id: name, limit: 0 }, signal === undefined ? {} : { signal });
      const fields = result.fields.map((field) => ({ ...field }));
      const known = all.findIndex((r) => r.id === name || r.alias === name || r.id === result.resource_id);
      const base: ResourceSchema = known >= 0 ? all[known]! : { id: name };
      const schema: ResourceSchema = { ...base, fields, ...(result.total === undefined ? {} : { total: result.total }) };
      if (known >= 0) all[known] = schema;
      else all.push(schema);
    } catch (error) {
      if (error instanceof DatastoreError && error.code === 'NOT_FOUND') continue;
      throw error;
    }
  }
  return all;
}

/**
 * A source's refusal of a query (a Validation Error, a Not Found) told as
 * `ckql check --schema` tells it: the first field or resource of `text`
 * that the source does not have, found by the language service against the
 * source's schema, as a query error at its place in the text (shown under
 * the query with a caret) with its "did you mean". Undefined for any other
 * error, for a query naming other sources (`portal:courses`), and when the
 * schema cannot be read or explains nothing: the source's own message
 * stands then. Only a Not Found lists the source's resources (local data
 * reads every file for it); a Validation Error asks only for the fields of
 * the resources the query names.
 * @example
 * await refusalInQuery(error, 'from courses where levle >= 3', source)
 * // QueryError UNKNOWN_FIELD '"courses" has no field "levle"' at 19–24, hint 'did you mean "level"?'
 */
export async function refusalInQuery(
  error: unknown,
  text: string,
  source: Pick<Source, 'listResources' | 'client'>,
  params?: Readonly<Record<string, ParamValue>>,
  signal?: AbortSignal,
): Promise<QueryError | undefined> {
  // The source's own answer has a body; ckql's resolving of a "dataset/resource" name throws without one, and its message
  // (the dataset's resources) says more than the list of the source's.
  if (!(error instanceof DatastoreError) || error.body === undefined) return undefined;
  // A Validation Error is told by an unknown field, a Not Found of a resource by an unknown resource (not of a path).
  const telling = error.code === 'VALIDATION_ERROR' ? 'UNKNOWN_FIELD' : isUnknownResource(error) ? 'UNKNOWN_RESOURCE' : undefined;
  if (telling === undefined) return undefined;
  const names = resourcesNamed(text, params);
  if (names.length === 0 || names.some((name) => splitSource(name).source !== undefined)) return undefined;
  let schema;
  try {
    schema = telling === 'UNKNOWN_RESOURCE' ? await loadSchema(source, names, signal) : { resources: await withFields(source.client, [], names, signal) };
  } catch {
    return undefined;
  }
  const unknown = schemaError(text, schema, telling, params);
  if (unknown !== undefined || telling !== 'UNKNOWN_FIELD') return unknown;
  // Not an unknown field: a value its field's type cannot read (`level >= high` on an int4), told at the value,
  // or a pattern on a field that holds no text (`online like "t%"`), told at the field.
  // Of several such places, the one whose words the refusal names (`between 1 and math` refused for "1").
  const named = (span: Span): boolean => error.message.includes(text.slice(span.start, span.end).replace(/^["'`]|["'`]$/g, ''));
  return schemaError(text, schema, ['VALUE_TYPE_MISMATCH', 'LIKE_NEEDS_TEXT'], params, named);
}

/** The language service's codes a source's refusal is told by. */
type SchemaCode = 'UNKNOWN_FIELD' | 'UNKNOWN_RESOURCE' | 'VALUE_TYPE_MISMATCH' | 'LIKE_NEEDS_TEXT';

const VALUE_TYPE_HINT = 'compare the field with a value of its type (`ckql fields RESOURCE` lists the types), or quote the value if the field is text';

/**
 * The language service's first error of `code` (`UNKNOWN_FIELD`,
 * `UNKNOWN_RESOURCE`) in `text` against `schema`, as a query error at its
 * place in the text with its hint; undefined when there is none.
 * @example
 * schemaError('from courses where levle >= 3', { resources: [{ id: 'courses', fields }] }, 'UNKNOWN_FIELD')
 * // QueryError UNKNOWN_FIELD '"courses" has no field "levle"' at 19–24, hint 'did you mean "level"?'
 */
export function schemaError(
  text: string,
  schema: Pick<LanguageContext, 'resources' | 'allResources'>,
  code: SchemaCode | readonly SchemaCode[],
  params?: Readonly<Record<string, ParamValue>>,
  prefer?: (span: Span) => boolean,
): QueryError | undefined {
  // A value of the wrong type is only a warning before the query runs (a source may read it); once refused it is the error.
  const codes: readonly string[] = typeof code === 'string' ? [code] : code;
  const all = diagnose(text, { ...schema, ...(params === undefined ? {} : { params }) }).filter((d) => (d.severity === 'error' || d.code === 'VALUE_TYPE_MISMATCH') && codes.includes(d.code));
  const found = (prefer === undefined ? undefined : all.find((d) => prefer(d.span))) ?? all[0];
  if (found === undefined) return undefined;
  const hint = found.hint ?? (found.code === 'VALUE_TYPE_MISMATCH' ? VALUE_TYPE_HINT : undefined);
  return new QueryError(found.code, found.message, found.span, { source: text, ...(hint === undefined ? {} : { hint }) });
}

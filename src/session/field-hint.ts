/**
 * A Validation Error about a field name gets a "did you mean" hint: the
 * resource's fields are fetched with a `limit: 0` search (which returns
 * `fields` and no records), and each field the request names that is not
 * among them is matched against them.
 */
import type { DatastoreClient } from '../client/types.js';
import type { SearchRequest } from '../datastore/types.js';
import type { DatastoreError } from '../errors.js';
import { didYouMean } from './nearest.js';
import type { Source } from './source.js';

/**
 * @example
 * await unknownFieldHint(error, { resource_id: 'courses', filters: { subjet: 'math' } }, client)
 * // 'did you mean "subject"?'
 */
export async function unknownFieldHint(
  error: DatastoreError,
  request: SearchRequest,
  client: DatastoreClient,
  signal?: AbortSignal,
): Promise<string | undefined> {
  if (error.code !== 'VALIDATION_ERROR') return undefined;
  const named = fieldsNamedBy(request);
  if (named.length === 0) return undefined;
  let known: string[];
  try {
    const result = await client.search({ resource_id: request.resource_id, limit: 0 }, signal === undefined ? {} : { signal });
    known = result.fields.map((field) => field.id);
  } catch {
    return undefined;
  }
  const unknown = named.filter((name) => !known.includes(name));
  for (const name of unknown) {
    const hint = didYouMean(name, known);
    if (hint !== undefined) return unknown.length === 1 ? hint : `${JSON.stringify(name)}: ${hint}`;
  }
  if (unknown.length === 0) return undefined;
  const list = known.filter((field) => field !== '_id');
  return `${request.resource_id} has the fields ${list.slice(0, 12).join(', ')}${list.length > 12 ? ', …' : ''}`;
}

/** Every field name a request uses: filter keys, the projection, and the sort keys. */
export function fieldsNamedBy(request: SearchRequest): string[] {
  const names = new Set<string>([...Object.keys(request.filters ?? {}), ...(request.fields ?? [])]);
  for (const name of sortFieldNames(request.sort ?? '')) names.add(name);
  return [...names];
}

/** `year desc, "school year" asc` → `['year', 'school year']` */
function sortFieldNames(sort: string): string[] {
  const names: string[] = [];
  const pattern = /\s*(?:"((?:[^"]|"")*)"|([^,\s]+))(?:\s+(?:asc|desc))?\s*(?:,|$)/giy;
  let match: RegExpExecArray | null;
  while (pattern.lastIndex < sort.length && (match = pattern.exec(sort)) !== null) {
    const name = match[1] === undefined ? match[2] : match[1].replaceAll('""', '"');
    if (name !== undefined) names.push(name);
  }
  return names;
}

/**
 * A Not Found for a resource gets a "did you mean" among the ids and aliases
 * the source knows.
 * @example await unknownResourceHint(error, 'corses', source) // 'did you mean "courses"?'
 */
export async function unknownResourceHint(
  error: DatastoreError,
  resource: string,
  source: Pick<Source, 'listResources'>,
): Promise<string | undefined> {
  if (error.code !== 'NOT_FOUND') return undefined;
  try {
    const known = (await source.listResources()).flatMap((each) => (each.alias === undefined ? [each.id] : [each.alias, each.id]));
    return didYouMean(resource, known);
  } catch {
    return undefined;
  }
}

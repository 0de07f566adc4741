/**
 * What a source knows about the resources some queries name, as the
 * language service's context: the source's list, and the fields of each
 * named resource (one `limit: 0` request each). A name the source answers
 * Not Found for is left out, so with `allResources` the service calls it
 * unknown. Shared by `ckql check --schema` and the language server.
 */
import { DatastoreError } from '../errors.js';
import type { ResourceSchema } from '../language-service/index.js';
import { statementsOf } from '../language-service/index.js';
import { parse } from '../syntax/parse.js';
import type { Source } from './source.js';

/**
 * The resources named after `from` in `text` (a query or a script), with
 * `$parameters` read from `params` when they hold text.
 * @example resourcesNamed('from courses limit 1; from $r', { r: 'schools' }) // ['courses', 'schools']
 */
export function resourcesNamed(text: string, params: Readonly<Record<string, unknown>> = {}): string[] {
  const names: string[] = [];
  for (const statement of statementsOf(text)) {
    let resource;
    try {
      resource = parse(statement.text).from.resource;
    } catch {
      continue;
    }
    const name = resource.kind === 'param' ? params[resource.name] : resource.value;
    if (typeof name === 'string' && name !== '' && !names.includes(name)) names.push(name);
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
export async function loadSchema(source: Source, names: Iterable<string>, signal?: AbortSignal): Promise<SourceSchema> {
  const listed = await source.listResources();
  const resources: ResourceSchema[] = listed.map((r) => ({ id: r.id, ...(r.alias === undefined ? {} : { alias: r.alias }), ...(r.total === undefined ? {} : { total: r.total }) }));
  for (const name of new Set(names)) {
    try {
      const result = await source.client.search({ resource_id: name, limit: 0 }, signal === undefined ? {} : { signal });
      const fields = result.fields.map((field) => ({ ...field }));
      const known = resources.findIndex((r) => r.id === name || r.alias === name || r.id === result.resource_id);
      const base: ResourceSchema = known >= 0 ? resources[known]! : { id: name };
      const schema: ResourceSchema = { ...base, fields, ...(result.total === undefined ? {} : { total: result.total }) };
      if (known >= 0) resources[known] = schema;
      else resources.push(schema);
    } catch (error) {
      if (error instanceof DatastoreError && error.code === 'NOT_FOUND') continue;
      throw error;
    }
  }
  return { resources, allResources: true };
}


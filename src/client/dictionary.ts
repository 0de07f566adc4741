/**
 * A resource's data dictionary as a person reads it: each field's type,
 * `label`, `notes` and `type_override` (CKAN's `info`, which
 * `datastore_search` returns in `fields`), and the record count, from one
 * `datastore_search` with `limit: 0`; and the warnings a query earns when
 * it compares a field stored as text with a number or a date
 * (compile/type-warnings.ts).
 */
import type { Query } from '../ast.js';
import { bind } from '../compile/bind.js';
import type { Params } from '../compile/bind.js';
import { comparisonWarnings } from '../compile/type-warnings.js';
import type { TypeWarning } from '../compile/type-warnings.js';
import type { FieldInfo } from '../datastore/types.js';
import { parse } from '../syntax/parse.js';
import { fieldTypeOf } from '../datastore/field-types.js';
import type { DatastoreClient, SearchInput } from './types.js';

export type { TypeWarning } from '../compile/type-warnings.js';

/** One field as the dictionary describes it. */
export interface FieldDescription {
  readonly id: string;
  /** the type the portal stores it as */
  readonly type: string;
  readonly label?: string;
  /** markdown, as the publisher wrote it */
  readonly notes?: string;
  /** the type the dictionary says the field holds, where it differs from `type` */
  readonly typeOverride?: string;
  /** every key of `info`, plugins' own included */
  readonly info?: FieldInfo['info'];
}

export interface Dictionary {
  /** the resource as it was named */
  readonly resource: string;
  /** its id (an alias or a `dataset/resource` name resolved) */
  readonly id: string;
  /** records in the resource, when the portal counts them */
  readonly total: number | undefined;
  readonly fields: readonly FieldDescription[];
}

/**
 * The `type_override` of a field's dictionary when it names another type
 * than the stored one (`int` over `int4` is the same type).
 * @example typeOverrideOf({ id: 'year', type: 'text', info: { type_override: 'numeric' } }) // → 'numeric'
 * @example typeOverrideOf({ id: 'year', type: 'int4', info: { type_override: 'int' } })     // → undefined
 */
export function typeOverrideOf(field: FieldInfo): string | undefined {
  const override = field.info?.type_override;
  if (typeof override !== 'string' || override.trim() === '') return undefined;
  return (fieldTypeOf(override) ?? override) === (fieldTypeOf(field.type) ?? field.type) ? undefined : override;
}

/**
 * A field's description from CKAN's `fields` entry.
 * @example describeField({ id: 'pm10', type: 'text', info: { label: 'PM10', notes: 'µg/m³, daily mean', type_override: 'numeric' } })
 * // → { id: 'pm10', type: 'text', label: 'PM10', notes: 'µg/m³, daily mean', typeOverride: 'numeric', info: { … } }
 */
export function describeField(field: FieldInfo): FieldDescription {
  const info = field.info;
  const label = typeof info?.label === 'string' && info.label !== '' ? info.label : undefined;
  const notes = typeof info?.notes === 'string' && info.notes !== '' ? info.notes : undefined;
  const typeOverride = typeOverrideOf(field);
  return {
    id: field.id,
    type: field.type,
    ...(label === undefined ? {} : { label }),
    ...(notes === undefined ? {} : { notes }),
    ...(typeOverride === undefined ? {} : { typeOverride }),
    ...(info === undefined ? {} : { info }),
  };
}

/**
 * A resource's dictionary: one `datastore_search` with `limit: 0`, which
 * returns the fields with their `info` and the total, and no record.
 * @example
 * const dictionary = await readDictionary(client, 'air-quality/measurements 2023');
 * dictionary.fields.find((f) => f.id === 'pm10')?.label // → 'PM10'
 */
export async function readDictionary(client: DatastoreClient, resource: string, signal?: AbortSignal): Promise<Dictionary> {
  const result = await client.search({ resource_id: resource, limit: 0 }, signal === undefined ? {} : { signal });
  return { resource, id: result.resource_id, total: typeof result.total === 'number' ? result.total : undefined, fields: result.fields.map(describeField) };
}

/**
 * The type warnings of a query on its resource (fetched with a `limit: 0`
 * search; none for a request given as such, or a query that does not
 * parse or bind: running it says what is wrong).
 * @example
 * await typeWarnings(client, 'from measurements where year >= 2020')
 * // → [{ code: 'TEXT_COMPARED', field: 'year', storedType: 'text', typeOverride: 'int', message: 'year >= 2020 compares text: …' }]
 */
export async function typeWarnings(
  client: DatastoreClient,
  input: SearchInput,
  options: {
    readonly params?: Params;
    readonly signal?: AbortSignal;
    /** the resource's fields when known (a session's cache), or how to get them; default a `limit: 0` search */
    readonly fields?: readonly FieldInfo[] | ((resource: string) => Promise<readonly FieldInfo[]>);
  } = {},
): Promise<TypeWarning[]> {
  if (typeof input === 'object' && 'resource_id' in input) return [];
  let query: Query;
  try {
    const parsed = typeof input === 'string' ? parse(input) : input;
    query = options.params === undefined ? parsed : bind(parsed, options.params);
  } catch {
    return [];
  }
  if (query.from.resource.kind !== 'string') return [];
  if (!mayWarn(query)) return [];
  const resource = query.from.resource.value;
  const given = options.fields;
  const fields = typeof given === 'function'
    ? await given(resource)
    : (given ?? (await client.search({ resource_id: resource, limit: 0 }, options.signal === undefined ? {} : { signal: options.signal })).fields);
  return comparisonWarnings(query, fields);
}

/** Whether a query has a comparison or a sort that could earn a warning (else no request is needed). */
function mayWarn(query: Query): boolean {
  if (query.order !== undefined) return true;
  const where = query.where;
  if (where === undefined) return false;
  const text = JSON.stringify(where.condition);
  return text.includes('"kind":"compare"') || text.includes('"kind":"between"');
}

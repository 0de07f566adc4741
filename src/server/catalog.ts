/**
 * The catalogue CKAN keeps beside the datastore, for what `ckql serve`
 * serves: `package_search`, `package_show` and `resource_show` (each
 * resource's dataset is its `datapackage.json`, or its folder; tables a
 * database held before ckql share one dataset, `datastore`), and
 * `datastore_info` as the datastore answers it. Shapes and messages are
 * CKAN 2.11.5's (ckan/logic/action/get.py, ckan/views/api.py,
 * ckanext/datastore/logic/action.py); search is a plain word match, not Solr.
 */
import { createHash } from 'node:crypto';
import type { CkanVersion, DatasetMeta, FieldInfo, FieldType, JsonValue } from '../datastore/types.js';
import { DatastoreError, validationError } from '../errors.js';
import { uuidV5 } from '../engine/memory/load.js';
import type { ColumnSchema, DatastoreInfo, Engine, ResourceInfo } from '../engine/types.js';
import { TABLE_METADATA } from './metadata.js';

/** CKAN's `ckan.search.rows_max`: `package_search` answers at most this many rows, whatever `rows` asks. */
export const SEARCH_ROWS_MAX = 1_000;

/** The dataset of tables that carry no catalogue note (a CKAN database ckql did not create). */
const DATASTORE_DATASET: DatasetMeta = { name: 'datastore', title: 'Datastore' };

/** The namespace of dataset ids (a fixed random UUID, so ids stay the same on every machine). */
const DATASET_NAMESPACE = '0b7f9a52-1c3e-4d6a-8e2f-5a4c3b2d1e0f';

/** Who asks: whether private resources may be shown. */
export interface CatalogAccess {
  /** the asker's token opens private resources */
  readonly authorized: boolean;
  /** ids of resources private besides the engine's own */
  readonly privateIds: ReadonlySet<string>;
}

interface Dataset {
  readonly meta: DatasetMeta;
  readonly resources: readonly ResourceInfo[];
}

/** The datasets of what the engine serves, each with its resources in load order; private ones only for a token. */
async function datasetsOf(engine: Engine, access: CatalogAccess): Promise<Dataset[]> {
  const byName = new Map<string, { meta: DatasetMeta; resources: ResourceInfo[] }>();
  for (const resource of await engine.resources()) {
    if (resource.id === TABLE_METADATA) continue;
    const hidden = resource.private || access.privateIds.has(resource.id);
    if (hidden && !access.authorized) continue;
    const meta = resource.meta?.dataset ?? DATASTORE_DATASET;
    let dataset = byName.get(meta.name);
    if (dataset === undefined) {
      dataset = { meta, resources: [] };
      byName.set(meta.name, dataset);
    }
    dataset.resources.push(resource);
  }
  return [...byName.values()];
}

/** A dataset's id: a name-based UUID, the same on every machine. */
function datasetId(name: string): string {
  return uuidV5(name, DATASET_NAMESPACE);
}

/** A resource as CKAN's `resource_show` gives it (its dump as its `url`). */
function resourceDict(resource: ResourceInfo, dataset: Dataset, position: number, publicUrl: string): Record<string, JsonValue> {
  const meta = resource.meta;
  const modified = meta?.modified ?? dataset.meta.modified ?? null;
  return {
    cache_last_updated: null,
    cache_url: null,
    created: modified,
    datastore_active: true,
    datastore_contains_all_records_of_source_file: true,
    description: meta?.description ?? '',
    format: meta?.format ?? '',
    hash: '',
    id: resource.id,
    last_modified: modified,
    metadata_modified: modified,
    mimetype: null,
    mimetype_inner: null,
    name: meta?.name ?? resource.aliases[0] ?? resource.id,
    package_id: datasetId(dataset.meta.name),
    position,
    resource_type: null,
    size: null,
    state: 'active',
    url: `${publicUrl}/datastore/dump/${resource.id}`,
    url_type: 'datastore',
  };
}

/** A dataset as CKAN's `package_show` gives it. */
function packageDict(dataset: Dataset, publicUrl: string): Record<string, JsonValue> {
  const meta = dataset.meta;
  const organization = meta.organization === undefined
    ? null
    : { id: uuidV5(`organization:${meta.organization}`, DATASET_NAMESPACE), name: meta.organization, title: meta.organization, type: 'organization', description: '', image_url: '', created: meta.modified ?? null, is_organization: true, approval_status: 'approved', state: 'active' };
  return {
    author: null,
    author_email: null,
    creator_user_id: null,
    id: datasetId(meta.name),
    isopen: false,
    license_id: null,
    license_title: null,
    maintainer: null,
    maintainer_email: null,
    metadata_created: meta.modified ?? null,
    metadata_modified: meta.modified ?? null,
    name: meta.name,
    notes: meta.notes ?? null,
    num_resources: dataset.resources.length,
    num_tags: 0,
    organization,
    owner_org: organization === null ? null : (organization.id as string),
    private: false,
    state: 'active',
    title: meta.title ?? meta.name,
    type: 'dataset',
    url: null,
    version: null,
    extras: [],
    groups: [],
    relationships_as_object: [],
    relationships_as_subject: [],
    resources: dataset.resources.map((resource, i) => resourceDict(resource, dataset, i, publicUrl)),
    tags: [],
  };
}

function notFound(what?: string): DatastoreError {
  const message = what === undefined ? 'Not found' : `Not found: ${what}`;
  return new DatastoreError('NOT_FOUND', message, { body: { __type: 'Not Found Error', message } });
}

function textParam(raw: Record<string, unknown>, key: string): string | undefined {
  const value = raw[key];
  if (value === undefined || value === null || value === '') return undefined;
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/**
 * `package_show`: by `id` (or `name_or_id`), a dataset's name or id.
 * @example await packageShow(engine, { id: 'examples-data' }, access, url) // → { name: 'data', resources: [ … ], … }
 */
export async function packageShow(engine: Engine, raw: Record<string, unknown>, access: CatalogAccess, publicUrl: string): Promise<Record<string, JsonValue>> {
  const wanted = textParam(raw, 'id') ?? textParam(raw, 'name_or_id');
  if (wanted === undefined) throw validationError('name_or_id', 'Missing value');
  const dataset = (await datasetsOf(engine, access)).find((each) => each.meta.name === wanted || datasetId(each.meta.name) === wanted);
  if (dataset === undefined) throw notFound();
  return packageDict(dataset, publicUrl);
}

/** `resource_show`: by `id`. */
export async function resourceShow(engine: Engine, raw: Record<string, unknown>, access: CatalogAccess, publicUrl: string): Promise<Record<string, JsonValue>> {
  const wanted = textParam(raw, 'id');
  if (wanted === undefined) throw validationError('id', 'Missing value');
  for (const dataset of await datasetsOf(engine, access)) {
    const position = dataset.resources.findIndex((resource) => resource.id === wanted);
    if (position >= 0) return resourceDict(dataset.resources[position] as ResourceInfo, dataset, position, publicUrl);
  }
  throw notFound();
}

/** One test of a search: a word anywhere in the dataset's text, or `field:value`. */
type Term = { readonly field?: string; readonly value: string };

/** `q` and `fq` as terms: words, `field:value` and `field:"a phrase"`; `*:*` and `+`/quotes around terms ignored. */
function termsOf(text: string | undefined): Term[] {
  if (text === undefined) return [];
  const terms: Term[] = [];
  for (const match of text.matchAll(/(?:\+?([A-Za-z_][\w.]*):)?(?:"([^"]*)"|\(([^)]*)\)|(\S+))/g)) {
    const field = match[1];
    const value = (match[2] ?? match[3] ?? match[4] ?? '').replace(/^\+/, '');
    if ((field === '*' || value === '*') && (field === undefined || field === '*')) continue;
    if (value === '' || value === '*:*') continue;
    terms.push(field === undefined ? { value } : { field, value });
  }
  return terms;
}

/** The texts a field of the search index holds for a dataset (CKAN's Solr fields, as ckanapi and the portals' pages use them). */
function fieldTexts(dataset: Dataset, field: string): string[] {
  const meta = dataset.meta;
  const names = dataset.resources.map((resource) => resource.meta?.name ?? resource.aliases[0] ?? resource.id);
  switch (field) {
    case 'name':
      return [meta.name];
    case 'title':
      return [meta.title ?? meta.name];
    case 'notes':
      return [meta.notes ?? ''];
    case 'organization':
      return meta.organization === undefined ? [] : [meta.organization];
    case 'id':
      return [datasetId(meta.name)];
    case 'res_name':
      return names;
    case 'res_description':
      return dataset.resources.map((resource) => resource.meta?.description ?? '');
    case 'res_format':
      return dataset.resources.map((resource) => resource.meta?.format ?? '');
    case 'res_id':
      return dataset.resources.map((resource) => resource.id);
    case 'text':
      return [meta.name, meta.title ?? '', meta.notes ?? '', ...names, ...dataset.resources.map((resource) => resource.meta?.description ?? '')];
    default:
      return [];
  }
}

/** How well a dataset matches: undefined when a term fails, else the number of word matches (the score). */
function score(dataset: Dataset, terms: readonly Term[]): number | undefined {
  let total = 0;
  for (const term of terms) {
    const value = term.value.toLowerCase();
    const texts = fieldTexts(dataset, term.field ?? 'text').map((text) => text.toLowerCase());
    // A field test matches whole values (any case); a word matches inside the dataset's text.
    const hits = term.field === undefined || term.field === 'text'
      ? texts.reduce((sum, text) => sum + text.split(value).length - 1, 0)
      : texts.filter((text) => text === value).length;
    if (hits === 0) return undefined;
    total += hits;
  }
  return total;
}

const SORT_KEYS: Readonly<Record<string, (dataset: Dataset, points: number) => string | number>> = {
  score: (_, points) => points,
  name: (dataset) => dataset.meta.name,
  title_string: (dataset) => (dataset.meta.title ?? dataset.meta.name).toLowerCase(),
  metadata_modified: (dataset) => dataset.meta.modified ?? '',
  metadata_created: (dataset) => dataset.meta.modified ?? '',
};

/** CKAN's `ckan.search.default_package_sort`. */
const DEFAULT_SORT = 'score desc, metadata_modified desc';

/** `rows` and `start` as CKAN's schema reads them: natural numbers; `rows` silently capped at `rows_max`. */
function natural(raw: Record<string, unknown>, key: string, fallback: number): number {
  const value = raw[key];
  if (value === undefined || value === null || value === '') return fallback;
  const n = typeof value === 'number' ? value : typeof value === 'string' && /^\s*\d+\s*$/.test(value) ? Number(value) : Number.NaN;
  if (!Number.isSafeInteger(n) || n < 0) throw validationError(key, typeof value === 'string' && /^-/.test(value.trim()) ? 'Must be a natural number' : 'Invalid integer');
  return n;
}

/**
 * `package_search`: `q` and `fq` (words, and `field:value` on `name`,
 * `title`, `notes`, `organization`, `res_name`, `res_format`, `res_description`,
 * `id`, `res_id`), `sort` (`score`, `name`, `title_string`,
 * `metadata_modified`), `rows` (default 10, at most 1,000 whatever is
 * asked, as CKAN's `rows_max` caps it without a word) and `start`.
 * @example await packageSearch(engine, { q: 'air', rows: 5 }, access, url) // → { count: 2, results: [ … ], sort: 'score desc, metadata_modified desc', facets: {}, search_facets: {} }
 */
export async function packageSearch(engine: Engine, raw: Record<string, unknown>, access: CatalogAccess, publicUrl: string): Promise<Record<string, JsonValue>> {
  const rows = Math.min(natural(raw, 'rows', 10), SEARCH_ROWS_MAX);
  const start = natural(raw, 'start', 0);
  const sort = textParam(raw, 'sort') ?? DEFAULT_SORT;
  const keys = sort.split(',').map((item) => {
    const [name = '', direction = 'asc'] = item.trim().split(/\s+/);
    const key = SORT_KEYS[name];
    if (key === undefined || !['asc', 'desc'].includes(direction.toLowerCase())) {
      throw new DatastoreError('BAD_REQUEST', `Search Query is invalid: "can not sort on ${name}"`, {
        status: 400,
        body: { __type: 'Search Query Error', message: `Search Query is invalid: ${JSON.stringify(`can not sort on ${name}`)}` },
      });
    }
    return { key, descending: direction.toLowerCase() === 'desc' };
  });
  const terms = [...termsOf(textParam(raw, 'q')), ...termsOf(textParam(raw, 'fq'))];
  const matched: { dataset: Dataset; points: number }[] = [];
  for (const dataset of await datasetsOf(engine, access)) {
    const points = score(dataset, terms);
    if (points !== undefined) matched.push({ dataset, points });
  }
  matched.sort((a, b) => {
    for (const { key, descending } of keys) {
      const x = key(a.dataset, a.points);
      const y = key(b.dataset, b.points);
      if (x !== y) return (x < y ? -1 : 1) * (descending ? -1 : 1);
    }
    // Ties in a stable order, so that paging with `start` neither repeats nor skips.
    return a.dataset.meta.name < b.dataset.meta.name ? -1 : a.dataset.meta.name > b.dataset.meta.name ? 1 : 0;
  });
  return {
    count: matched.length,
    facets: {},
    results: matched.slice(start, start + rows).map(({ dataset }) => packageDict(dataset, publicUrl)),
    sort,
    search_facets: {},
  };
}

/** PostgreSQL's `format_type` name of a CKAN type, as `datastore_info`'s `native_type` shows it. */
const NATIVE_TYPES: Readonly<Record<string, string>> = {
  text: 'text', int: 'integer', int4: 'integer', int8: 'bigint', numeric: 'numeric', float8: 'double precision', float: 'double precision',
  bool: 'boolean', date: 'date', timestamp: 'timestamp without time zone', json: 'nested', name: 'name', oid: 'oid',
};

function nativeType(type: FieldType): string {
  return type.startsWith('_') ? `${NATIVE_TYPES[type.slice(1)] ?? type.slice(1)}[]` : (NATIVE_TYPES[type] ?? type);
}

/**
 * `datastore_info` of a resource an engine describes without a database
 * catalogue (the memory engine): its count, aliases, and each field's
 * `info` and `schema` as PostgreSQL would give them for the same table
 * (sizes are 0: nothing is stored on disk).
 */
export function describedInfo(resource: ResourceInfo): DatastoreInfo {
  const key = resource.meta?.primaryKey ?? [];
  const index = key.length === 0 ? null : createHash('sha1').update(resource.id + key.map((name) => `"${name.replaceAll('"', '""')}"`).join(', '), 'utf8').digest('hex');
  return {
    meta: { id: resource.id, count: resource.total ?? 0, table_type: 'BASE TABLE', size: 0, db_size: 0, idx_size: 0, aliases: resource.aliases },
    fields: resource.fields
      .filter((field) => !field.id.startsWith('_'))
      .map((field) => {
        const indexed = key.includes(field.id);
        const schema: ColumnSchema = { native_type: nativeType(field.type), notnull: false, index_name: indexed ? index : null, is_index: indexed, uniquekey: false };
        return { ...field, schema };
      }),
  };
}

/**
 * `datastore_info` (CKAN 2.11.5): `id` or `resource_id` (an alias is
 * resolved), `meta` and `fields`; 2.12 also takes `include_meta` and
 * `include_fields_schema` (both true by default).
 */
export async function datastoreInfoResult(
  engine: Engine, raw: Record<string, unknown>, access: CatalogAccess, ckan: CkanVersion, signal: AbortSignal | undefined,
): Promise<Record<string, JsonValue>> {
  const wanted = textParam(raw, 'resource_id') ?? textParam(raw, 'id');
  if (wanted === undefined) throw validationError('resource_id', 'Missing value');
  const resource = await engine.resource(wanted);
  if (resource === undefined) throw notFound(`Resource/Alias "${wanted}" was not found.`);
  if ((resource.private || access.privateIds.has(resource.id)) && !access.authorized) {
    const message = `Access denied: User not authorized to read resource ${resource.id}`;
    throw new DatastoreError('FORBIDDEN', message, { body: { __type: 'Authorization Error', message } });
  }
  const info = (await engine.info?.(resource.id, signal === undefined ? {} : { signal })) ?? describedInfo(resource);
  const flag = (key: string): boolean => ckan === '2.11' || !['false', '0', 'no', 'off'].includes(String(raw[key] ?? 'true').toLowerCase());
  const fields = info.fields.map((field) => {
    const { schema, ...rest } = field;
    return (flag('include_fields_schema') ? { ...rest, schema } : rest) as unknown as JsonValue;
  });
  return { ...(flag('include_meta') ? { meta: info.meta as unknown as JsonValue } : {}), fields } as Record<string, JsonValue>;
}

/** The field list of a dump (`FieldInfo` with `info` where set), for `fields` in a json dump. */
export function dumpFields(fields: readonly FieldInfo[]): readonly FieldInfo[] {
  return fields;
}

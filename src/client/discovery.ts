/**
 * Finding data before querying it: a portal's catalogue through
 * `package_search` and `package_show` (docs/portals-reference.md §1).
 * `package_search` gives at most `ckan.search.rows_max` rows per call (1,000
 * by default) and says nothing when it cuts `rows` down, so a client asks
 * for at most 1,000 and follows `start` until the count is reached, as
 * ckanapi's `search datasets` does. No default portal indexes
 * `datastore_active`, so it is read from each resource after fetching.
 */
import { DatastoreError } from '../errors.js';
import type { DatastoreClient } from './types.js';

/** The most rows one `package_search` returns on a default portal (`ckan.search.rows_max`). */
export const SEARCH_ROWS_MAX = 1_000;

/** A resource of a dataset, as discovery shows it. */
export interface DatasetResource {
  readonly id: string;
  /** the resource's name in its dataset (`measurements 2023`); its id when it has none */
  readonly name: string;
  readonly format: string;
  /** the datastore holds its records: `datastore_search` answers for it */
  readonly datastoreActive: boolean;
}

/** A dataset (CKAN's package), as discovery shows it. */
export interface DatasetSummary {
  readonly id: string;
  /** the URL name (`air-quality`) */
  readonly name: string;
  readonly title: string;
  /** the organisation's title (its name when it has no title), if it has one */
  readonly organization: string | undefined;
  /** `metadata_modified` */
  readonly modified: string | undefined;
  readonly resources: readonly DatasetResource[];
}

/** What `searchDatasets` and `allDatasets` ask of `package_search`. */
export interface DatasetQuery {
  /** words to search for (`q`); every dataset when absent */
  readonly text?: string;
  /** an organisation's name (`fq: organization:…`) */
  readonly organization?: string;
  /** more Solr filter (`fq`), as the portal reads it */
  readonly filter?: string;
  /** rows of the first page (default 20); `allDatasets` asks 1,000 at a time */
  readonly rows?: number;
  readonly sort?: string;
  readonly signal?: AbortSignal;
}

/** One page of a search: the count of every match, and the datasets of the page. */
export interface DatasetPage {
  readonly count: number;
  readonly datasets: readonly DatasetSummary[];
}

/**
 * The first page of datasets matching a query, with the count of all.
 * @example
 * await searchDatasets(client, { text: 'air quality', organization: 'environment' })
 * // POST …/api/action/package_search {"q":"air quality","fq":"organization:environment","rows":20}
 * // → { count: 42, datasets: [{ name: 'air-quality', title: 'Air quality', resources: [ … ] }, …] }
 */
export async function searchDatasets(client: DatastoreClient, query: DatasetQuery = {}): Promise<DatasetPage> {
  const rows = Math.min(SEARCH_ROWS_MAX, Math.max(0, Math.floor(query.rows ?? 20)));
  const result = await client.action('package_search', searchBody(query, rows, 0, query.sort), query.signal === undefined ? {} : { signal: query.signal });
  return readPage(result, client.url);
}

/**
 * Every dataset matching a query, 1,000 per request following `start`, each
 * once: the order is made total (`name` last), and a dataset seen on an
 * earlier page (the catalogue changed meanwhile) is not given again.
 * @example
 * for await (const dataset of allDatasets(client, { text: 'bicycle' })) console.log(dataset.name);
 */
export async function* allDatasets(
  client: DatastoreClient,
  query: DatasetQuery & { readonly onPage?: (progress: { readonly fetched: number; readonly count: number }) => void } = {},
): AsyncGenerator<DatasetSummary, void, undefined> {
  const sort = totalOrder(query.sort);
  const seen = new Set<string>();
  let start = 0;
  let count = Number.POSITIVE_INFINITY;
  while (start < count) {
    const result = await client.action('package_search', searchBody(query, SEARCH_ROWS_MAX, start, sort), query.signal === undefined ? {} : { signal: query.signal });
    const page = readPage(result, client.url);
    count = page.count;
    // A portal that ignores `start` sends the same page again and again; only the count would stop it.
    if (page.datasets.length > 0 && page.datasets.every((dataset) => seen.has(dataset.id))) {
      throw new DatastoreError(
        'INVALID_RESPONSE',
        `${client.url} answered package_search start ${start} with datasets it gave before: it ignores start, so paging cannot go on (${seen.size} datasets read)`,
      );
    }
    // Follow what came, not what was asked: a portal whose rows_max is lower answers fewer.
    start += page.datasets.length;
    query.onPage?.({ fetched: Math.min(start, count), count });
    for (const dataset of page.datasets) {
      if (seen.has(dataset.id)) continue;
      seen.add(dataset.id);
      yield dataset;
    }
    if (page.datasets.length === 0) return;
  }
}

/**
 * One dataset by name or id (`package_show`).
 * @example (await showDataset(client, 'air-quality')).resources.map((r) => r.name) // → ['measurements 2023', 'stations']
 */
export async function showDataset(client: DatastoreClient, nameOrId: string, signal?: AbortSignal): Promise<DatasetSummary> {
  const result = await client.action('package_show', { id: nameOrId }, signal === undefined ? {} : { signal });
  return datasetOf(result, client.url);
}

/** A table of the portal's datastore, with its aliases, as `_table_metadata` lists them. */
export interface DatastoreTable {
  readonly id: string;
  readonly aliases: readonly string[];
}

/**
 * Every table and alias of the portal's datastore, from `_table_metadata`
 * (CKAN lets anyone search it; docs/portals-reference.md §1.1),
 * 1,000 rows a request in `name` order (unique: a total order); undefined
 * where the portal does not let it be read.
 * @example (await datastoreTables(client))?.find((t) => t.aliases.includes('courses'))?.id // → '5b3f…'
 */
export async function datastoreTables(client: DatastoreClient, signal?: AbortSignal): Promise<DatastoreTable[] | undefined> {
  const tables = new Map<string, string[]>();
  const aliases: [string, string][] = [];
  // Follow what came, not what was asked: a portal whose rows_max is lower answers fewer a page.
  let previous: string | undefined;
  for (let offset = 0; ; ) {
    let page;
    try {
      page = await client.search(
        { resource_id: '_table_metadata', fields: ['name', 'alias_of'], sort: 'name', limit: SEARCH_ROWS_MAX, offset, include_total: false },
        signal === undefined ? {} : { signal },
      );
    } catch (error) {
      if (error instanceof DatastoreError && ['NOT_FOUND', 'FORBIDDEN', 'VALIDATION_ERROR', 'BAD_REQUEST'].includes(error.code)) return undefined;
      throw error;
    }
    // A portal that ignores `offset` sends the same page again and again: nothing else would stop the paging.
    const signature = JSON.stringify(page.records);
    if (signature === previous) {
      throw new DatastoreError('INVALID_RESPONSE', `${client.url} answered _table_metadata offset ${offset} with the same records as before: it ignores offset, so paging cannot go on`);
    }
    previous = signature;
    for (const row of page.records) {
      if (typeof row.name !== 'string' || row.name.startsWith('_')) continue;
      if (typeof row.alias_of === 'string') aliases.push([row.name, row.alias_of]);
      else if (!tables.has(row.name)) tables.set(row.name, []);
    }
    // (a portal that says no limit served ours)
    if (page.records.length < Math.min(page.limit ?? SEARCH_ROWS_MAX, SEARCH_ROWS_MAX) || page.records.length === 0) break;
    offset += page.records.length;
  }
  for (const [alias, table] of aliases) tables.get(table)?.push(alias);
  return [...tables].map(([id, names]) => ({ id, aliases: names }));
}

function searchBody(query: DatasetQuery, rows: number, start: number, sort: string | undefined): Record<string, unknown> {
  const filters = [query.organization === undefined ? undefined : `organization:${solrValue(query.organization)}`, query.filter].filter((part) => part !== undefined && part !== '');
  return {
    ...(query.text === undefined || query.text.trim() === '' ? {} : { q: query.text }),
    ...(filters.length === 0 ? {} : { fq: filters.join(' ') }),
    rows,
    ...(start === 0 ? {} : { start }),
    ...(sort === undefined ? {} : { sort }),
  };
}

/** A value for a Solr `field:value` test: quoted unless it is one plain word. */
function solrValue(text: string): string {
  return /^[\w.-]+$/.test(text) ? text : `"${text.replaceAll('\\', '\\\\').replaceAll('"', '\\"')}"`;
}

/**
 * A sort that orders every dataset: CKAN's default (`score desc,
 * metadata_modified desc`) leaves ties, and paging with `start` over ties
 * may repeat or skip; the unique `name` ends it.
 * @example totalOrder(undefined) // → 'score desc, metadata_modified desc, name asc'
 */
export function totalOrder(sort: string | undefined): string {
  const base = sort === undefined || sort.trim() === '' ? 'score desc, metadata_modified desc' : sort.trim();
  return /(^|,)\s*(name|id)\s+(asc|desc)\s*$/i.test(base) ? base : `${base}, name asc`;
}

function readPage(result: unknown, origin: string): DatasetPage {
  if (!isObject(result) || !Number.isSafeInteger(result.count) || (result.count as number) < 0 || !Array.isArray(result.results)) {
    throw new DatastoreError('INVALID_RESPONSE', `${origin} answered package_search without a count and a list of results`);
  }
  return { count: result.count as number, datasets: result.results.map((each) => datasetOf(each, origin)) };
}

/** A package dict read defensively: a portal's extensions add and rename keys. */
function datasetOf(value: unknown, origin: string): DatasetSummary {
  if (!isObject(value) || typeof value.name !== 'string') throw new DatastoreError('INVALID_RESPONSE', `${origin} answered a dataset without a name`);
  const organization = isObject(value.organization) ? text(value.organization.title) ?? text(value.organization.name) : undefined;
  const resources = Array.isArray(value.resources) ? value.resources.filter(isObject) : [];
  return {
    id: text(value.id) ?? value.name,
    name: value.name,
    title: text(value.title) ?? value.name,
    organization,
    modified: text(value.metadata_modified),
    resources: resources.map((resource) => {
      const id = text(resource.id) ?? '';
      return {
        id,
        name: text(resource.name) ?? id,
        format: text(resource.format) ?? '',
        // An extra the datastore plugin sets; a boolean, or its text in old portals.
        datastoreActive: resource.datastore_active === true || resource.datastore_active === 'True' || resource.datastore_active === 'true',
      };
    }),
  };
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

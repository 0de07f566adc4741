/**
 * What a CKAN portal serves besides a resource's table: `status_show`
 * (which tells a client the version it talks to) and the
 * `_table_metadata` pseudo-resource, which lists every table and alias
 * (docs/ckan-2.11-reference.md §4, docs/ckan-2.12-reference.md §6).
 */
import { createHash } from 'node:crypto';
import type { CkanVersion, FieldInfo, Table } from '../datastore/types.js';
import type { ResourceInfo } from '../engine/types.js';

/** The resource id CKAN always lets anyone search. */
export const TABLE_METADATA = '_table_metadata';

/**
 * The `fields` CKAN answers for `_table_metadata`: the view's columns, with
 * `_id` typed `int` as CKAN types every table's `_id` (`_get_fields_types`),
 * though the view's `_id` holds md5 text.
 */
export const TABLE_METADATA_FIELDS: readonly FieldInfo[] = [
  { id: '_id', type: 'int' },
  { id: 'name', type: 'name' },
  { id: 'oid', type: 'oid' },
  { id: 'alias_of', type: 'name' },
];

/** The `ckan_version` each surface reports in `status_show`. */
export const CKAN_VERSIONS: Readonly<Record<CkanVersion, string>> = { '2.11': '2.11.5', '2.12': '2.12.0' };

/**
 * `status_show`'s result, keys in CKAN's order.
 * @example
 * statusResult('2.12', 'http://127.0.0.1:8080').ckan_version // → "2.12.0"
 */
export function statusResult(ckan: CkanVersion, siteUrl: string): Record<string, unknown> {
  return {
    site_title: 'ckql',
    site_description: 'ckql serve: local data over the datastore_search API',
    site_url: siteUrl,
    error_emails_to: null,
    locale_default: 'en',
    extensions: ['datastore'],
    ckan_version: CKAN_VERSIONS[ckan],
  };
}

/**
 * The `_table_metadata` table of the served resources: one row per table
 * (`alias_of` null) and one per alias (`alias_of` the table's id), with
 * CKAN's columns (`_id` is the first 16 hex digits of the md5 of
 * `name || alias_of`, as the view computes it; `oid` a stable number).
 * @example
 * tableMetadata([{ id: 'abc', aliases: ['courses'], fields: [], private: false }]).rows.length // → 2
 */
export function tableMetadata(resources: readonly ResourceInfo[]): Table {
  const rows: Record<string, string | number | null>[] = [];
  let oid = 16_384;
  for (const resource of resources) {
    rows.push({ _id: md5Id(resource.id), name: resource.id, oid: oid++, alias_of: null });
    for (const alias of resource.aliases) rows.push({ _id: md5Id(alias + resource.id), name: alias, oid: oid++, alias_of: resource.id });
  }
  return {
    id: TABLE_METADATA,
    aliases: [],
    fields: TABLE_METADATA_FIELDS,
    rows,
  };
}

function md5Id(text: string): string {
  return createHash('md5').update(text, 'utf8').digest('hex').slice(0, 16);
}

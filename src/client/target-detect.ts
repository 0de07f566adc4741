/**
 * Which dialect a portal speaks (docs/beyond-the-request.md, Targets):
 * `status_show`'s `ckan_version` when the portal answers it, else the 2.12
 * probe (a `datastore_search` with `include_next_page`, a key CKAN 2.11
 * refuses; docs/ckan-2.12-reference.md §2.1). `sql` is never detected: most
 * portals disable `datastore_search_sql`, so only a profile or a flag says it.
 */
import type { Target } from '../compile/plan.js';
import { DatastoreError } from '../errors.js';
import type { SearchRequest, SearchResult } from '../datastore/types.js';
import type { Exchanger } from './transport.js';

/**
 * The target of a CKAN version text: 2.12 and later speak 2.12's filters;
 * anything older, or a version that cannot be read, 2.11.
 * @example targetOfVersion('2.12.0b0') // → 'ckan-2.12'
 * @example targetOfVersion('2.10.4')   // → 'ckan-2.11'
 */
export function targetOfVersion(version: string): Target {
  const match = /^(\d+)\.(\d+)/.exec(version.trim());
  if (match === null) return 'ckan-2.11';
  const major = Number(match[1]);
  const minor = Number(match[2]);
  return major > 2 || (major === 2 && minor >= 12) ? 'ckan-2.12' : 'ckan-2.11';
}

/**
 * `status_show`'s `ckan_version`, or undefined when the portal does not
 * answer it with one (an error, a timeout, another shape). Never throws.
 */
export async function fetchCkanVersion(
  statusUrl: string,
  options: { readonly exchange: Exchanger; readonly headers: Readonly<Record<string, string>>; readonly signal?: AbortSignal },
): Promise<string | undefined> {
  try {
    const response = await options.exchange({ method: 'GET', url: statusUrl, headers: options.headers }, options.signal);
    if (response.status !== 200) return undefined;
    const body = JSON.parse(response.text) as { success?: unknown; result?: { ckan_version?: unknown } };
    return body.success === true && typeof body.result?.ckan_version === 'string' ? body.result.ckan_version : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The 2.12 probe on one resource: 2.11 refuses `include_next_page` with a
 * Validation Error; 2.12 answers. Any other error (an unknown resource, a
 * token) says nothing about the version: the portal is taken as 2.11, and
 * the query itself will meet that error.
 */
export async function probeNextPage(resourceId: string, send: (request: SearchRequest) => Promise<SearchResult>): Promise<Target> {
  try {
    await send({ resource_id: resourceId, limit: 0, include_next_page: true });
    return 'ckan-2.12';
  } catch (error) {
    if (error instanceof DatastoreError && error.code === 'ABORTED') throw error;
    return 'ckan-2.11';
  }
}

/**
 * Request paths: `/api/action/datastore_search` and
 * `/api/3/action/datastore_search`, each also behind every configured
 * language segment (`/de/api/…`). The segment changes nothing but the `help`
 * link; `_links` carry the path without it (as CKAN does, see
 * docs/ckan-2.11-reference.md §5 and §6).
 */
import { excerpt, serviceError } from './errors.js';
import type { DatastoreError } from '../errors.js';

export const ACTION = 'datastore_search';
/** The actions this server answers. */
export const ACTIONS = [
  'datastore_search', 'datastore_search_sql', 'status_show', 'datastore_info', 'package_search', 'package_show', 'resource_show',
] as const;
export type Action = (typeof ACTIONS)[number];
const API_PREFIXES = ['/api/action/', '/api/3/action/'] as const;

/**
 * A request target's path, without its query (a request without one is `/`).
 * @example pathOf('/api/3/action/datastore_search?resource_id=x') // → '/api/3/action/datastore_search'
 */
export function pathOf(url: string | undefined): string {
  if (url === undefined) return '/';
  const mark = url.indexOf('?');
  return mark === -1 ? url : url.slice(0, mark);
}

export interface Route {
  /** the language segment, or `undefined` for the bare path */
  readonly language: string | undefined;
  /** the path without the language segment, as `_links` show it */
  readonly linkPath: string;
  readonly action: Action;
}

/**
 * Every accepted path, looked up whole: one `Map.get` per request.
 * @example
 * buildRoutes(['de']).get('/de/api/3/action/datastore_search')
 * // → { language: "de", linkPath: "/api/3/action/datastore_search", action: "datastore_search" }
 */
export function buildRoutes(languages: readonly string[]): ReadonlyMap<string, Route> {
  const routes = new Map<string, Route>();
  for (const language of [undefined, ...languages]) {
    for (const prefix of API_PREFIXES) {
      for (const action of ACTIONS) {
        const linkPath = prefix + action;
        routes.set(language === undefined ? linkPath : `/${language}${linkPath}`, { language, linkPath, action });
      }
    }
  }
  return routes;
}

/**
 * The action named by an action path this server does not answer, with its
 * language segment: CKAN answers it with a 400 (`Action name not known`).
 * `undefined` when the path is not an action path at all.
 * @example
 * unknownAction('/api/3/action/package_show', ['en']) // → { name: "package_show", language: undefined }
 */
export function unknownAction(path: string, languages: readonly string[]): { name: string; language: string | undefined } | undefined {
  const segments = path.split('/');
  const start = segments[1] === 'api' ? 1 : 2;
  const language = start === 2 ? segments[1] : undefined;
  if (language !== undefined && !languages.includes(language)) return undefined;
  const rest = segments.slice(start);
  const version = rest[1] === '3' ? 1 : 0;
  const isAction = rest[0] === 'api' && rest[1 + version] === 'action' && rest.length === 3 + version;
  if (!isAction) return undefined;
  return { name: decodeSafely(rest[2 + version] ?? ''), language };
}

/**
 * Explains a path that is not a route: an unknown action under a known
 * prefix, an unknown language segment, or anything else.
 * @example
 * unknownPath('/fr/api/action/datastore_search', ['en', 'de']).message
 * // → 'Not found: the language segment "fr" is not offered (offered: /en, /de)'
 */
export function unknownPath(path: string, languages: readonly string[]): DatastoreError {
  const segments = path.split('/');
  // ['', lang?, 'api', '3'?, 'action', name]
  const start = segments[1] === 'api' ? 1 : 2;
  const language = start === 2 ? segments[1] : undefined;
  const rest = segments.slice(start);
  const version = rest[1] === '3' ? 1 : 0;
  const isAction = rest[0] === 'api' && rest[1 + version] === 'action' && rest.length === 3 + version;
  if (isAction && (language === undefined || languages.includes(language))) {
    const name = rest[2 + version] ?? '';
    return serviceError(
      'NOT_FOUND',
      `Not found: action ${JSON.stringify(excerpt(decodeSafely(name)))} is not known; this server offers ${ACTION}`,
    );
  }
  if (isAction && language !== undefined) {
    const offered = languages.length === 0 ? 'none' : languages.map((l) => `/${l}`).join(', ');
    return serviceError(
      'NOT_FOUND',
      `Not found: the language segment ${JSON.stringify(excerpt(decodeSafely(language)))} is not offered (offered: ${offered})`,
    );
  }
  return serviceError(
    'NOT_FOUND',
    `Not found: ${JSON.stringify(excerpt(path))}; ${ACTION} is at /api/action/${ACTION} or /api/3/action/${ACTION}`,
  );
}

function decodeSafely(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

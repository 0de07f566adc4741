/**
 * CKAN's response envelope, `{"help", "success", "result" | "error"}`, and
 * the `_links` of a result. The envelope's fixed head is built once per
 * language segment, so a response costs one `JSON.stringify` of the result.
 */
import type { ErrorBody, SearchLinks, SearchResult } from '../datastore/types.js';

export interface Envelopes {
  success(result: SearchResult, links: SearchLinks): string;
  error(body: ErrorBody): string;
}

/**
 * `help` is `<base>[/<lang>]/api/3/action/help_show?name=datastore_search`:
 * always version 3, and the language segment is kept (CKAN does the same).
 * @example
 * buildEnvelopes('http://127.0.0.1:8080', ['de'])('de').error({ __type: 'Not Found Error', message: 'Not found' })
 * // → '{"help":"http://127.0.0.1:8080/de/api/3/action/help_show?name=datastore_search","success":false,"error":{…}}'
 */
export function buildEnvelopes(baseUrl: string, languages: readonly string[]): (language: string | undefined) => Envelopes {
  const base = baseUrl.replace(/\/+$/, '');
  const make = (language: string | undefined): Envelopes => {
    const help = JSON.stringify(`${base}${language === undefined ? '' : `/${language}`}/api/3/action/help_show?name=datastore_search`);
    const successHead = `{"help":${help},"success":true,"result":`;
    const errorHead = `{"help":${help},"success":false,"error":`;
    return {
      // `_links` is spliced into the result's JSON text: copying the result to add one key costs more than the stringify.
      success: (result, links) => {
        const json = JSON.stringify(result);
        return `${successHead}${json.slice(0, -1)},"_links":${JSON.stringify(links)}}}`;
      },
      error: (body) => `${errorHead}${JSON.stringify(body)}}`,
    };
  };
  const bare = make(undefined);
  const byLanguage = new Map(languages.map((language) => [language, make(language)]));
  return (language) => (language === undefined ? bare : (byLanguage.get(language) ?? bare));
}

/**
 * `_links.start` is the request path (no host, no language segment) with the
 * query string as sent; `next` is the same with `offset` set to
 * `offset + limit`. A POST has no query string, so its `next` is
 * `<path>?offset=N` (CKAN's shape for a POST, see
 * ../shared/reference/ckan-datastore-search.md §5).
 *
 * @example
 * linksFor('/api/action/datastore_search', 'resource_id=x&limit=5', 5)
 * // → { start: "/api/action/datastore_search?resource_id=x&limit=5",
 * //     next: "/api/action/datastore_search?resource_id=x&limit=5&offset=5" }
 */
export function linksFor(path: string, query: string, nextOffset: number): SearchLinks {
  const kept = query === '' ? [] : query.split('&').filter((pair) => pair !== '' && !isOffsetPair(pair));
  kept.push(`offset=${nextOffset}`);
  return { start: query === '' ? path : `${path}?${query}`, next: `${path}?${kept.join('&')}` };
}

function isOffsetPair(pair: string): boolean {
  const end = pair.indexOf('=');
  return (end === -1 ? pair : pair.slice(0, end)) === 'offset';
}

/**
 * CKAN's response envelope, `{"help", "success", "result" | "error"}`, and
 * the `_links` of a result. The envelope's fixed head is built once per
 * language segment; a result is written key by key in `SearchResult`'s
 * order, so a table's field list can come from a cache instead of being
 * stringified for every answer.
 */
import type { ErrorBody, FieldInfo, SearchLinks, SearchResult } from '../datastore/types.js';

export interface Envelopes {
  /**
   * The success envelope of `result` with `links` added. `sharedFields`
   * says `result.fields` is the table's own list (the request had no
   * `fields`), the same array on every answer: its JSON text is cached.
   */
  success(result: SearchResult, links: SearchLinks, sharedFields: boolean): string;
  error(body: ErrorBody): string;
  /** the success envelope of any other action's `result` (`datastore_search_sql`) */
  raw(result: unknown): string;
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
      success: (result, links, sharedFields) => `${successHead}${resultJson(result, links, sharedFields)}}`,
      error: (body) => `${errorHead}${JSON.stringify(body)}}`,
      raw: (result) => `${successHead}${JSON.stringify(result)}}`,
    };
  };
  const bare = make(undefined);
  const byLanguage = new Map(languages.map((language) => [language, make(language)]));
  return (language) => (language === undefined ? bare : (byLanguage.get(language) ?? bare));
}

/**
 * `JSON.stringify({ ...result, _links: links })`, character for character,
 * for a result whose keys are in `SearchResult`'s order (as `evaluate` makes
 * them). Written out rather than stringified whole: the result would have to
 * be copied to add `_links`, and the field list, a third of the text, is the
 * same on every answer from a table. Numbers here are whole numbers and
 * booleans, whose JSON is their `String`.
 */
function resultJson(result: SearchResult, links: SearchLinks, sharedFields: boolean): string {
  const fields = sharedFields ? sharedFieldsJson(result.fields) : JSON.stringify(result.fields);
  let json = `{"resource_id":${jsonString(result.resource_id)},"fields":${fields},"records":${JSON.stringify(result.records)}`;
  if (result.total !== undefined) json += `,"total":${result.total}`;
  json += `,"total_was_estimated":${result.total_was_estimated},"limit":${result.limit}`;
  if (result.offset !== undefined) json += `,"offset":${result.offset}`;
  if (result.q !== undefined) json += `,"q":${jsonString(result.q)}`;
  if (result.filters !== undefined) json += `,"filters":${JSON.stringify(result.filters)}`;
  if (result.sort !== undefined) json += `,"sort":${jsonString(result.sort)}`;
  return `${json},"include_total":${result.include_total},"records_format":${jsonString(result.records_format)},"_links":{"start":${jsonString(links.start)},"next":${jsonString(links.next)}}}`;
}

/**
 * `JSON.stringify(text)`. Each call of `JSON.stringify` has a fixed cost of
 * a few thousand instructions, more than checking a short text for the
 * characters JSON escapes (control characters, `"`, `\`, and surrogates,
 * since a lone one is written as `\udxxx`); a text without them is only
 * quoted.
 */
function jsonString(text: string): string {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x20 || c === 0x22 || c === 0x5c || (c >= 0xd800 && c <= 0xdfff)) return JSON.stringify(text);
  }
  return `"${text}"`;
}

/** JSON texts of tables' field lists, by the list: a served table's fields do not change (`Table` is read-only). */
const fieldsJsonByList = new WeakMap<readonly FieldInfo[], string>();

function sharedFieldsJson(fields: readonly FieldInfo[]): string {
  let json = fieldsJsonByList.get(fields);
  if (json === undefined) {
    json = JSON.stringify(fields);
    fieldsJsonByList.set(fields, json);
  }
  return json;
}

/**
 * `_links.start` is the request path (no host, no language segment) with the
 * query string as sent; `next` is the same with `offset` set to
 * `offset + limit`. A POST has no query string, so its `next` is
 * `<path>?offset=N` (CKAN's shape for a POST, see
 * docs/ckan-2.11-reference.md §5).
 *
 * @example
 * linksFor('/api/action/datastore_search', 'resource_id=x&limit=5', 5)
 * // → { start: "/api/action/datastore_search?resource_id=x&limit=5",
 * //     next: "/api/action/datastore_search?resource_id=x&limit=5&offset=5" }
 */
export function linksFor(path: string, query: string, nextOffset: number): SearchLinks {
  if (query === '') return { start: path, next: `${path}?offset=${nextOffset}` };
  const kept = query.split('&').filter((pair) => pair !== '' && !isOffsetPair(pair));
  kept.push(`offset=${nextOffset}`);
  return { start: `${path}?${query}`, next: `${path}?${kept.join('&')}` };
}

function isOffsetPair(pair: string): boolean {
  const end = pair.indexOf('=');
  return (end === -1 ? pair : pair.slice(0, end)) === 'offset';
}

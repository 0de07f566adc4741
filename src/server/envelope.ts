/**
 * CKAN's response envelope, `{"help", "success", "result" | "error"}`. The
 * envelope's fixed head is built once per language segment and action; the
 * `result` text comes from `resultJson` (`src/datastore/response.ts`).
 */
import type { ErrorBody } from '../datastore/types.js';

export interface Envelopes {
  /** the success envelope around `result`'s JSON text */
  success(resultText: string): string;
  /** the success envelope's text before and after `result` (for an answer written in pieces) */
  readonly successAround: readonly [string, string];
  error(body: ErrorBody): string;
  /** the success envelope of any other action's `result` (`datastore_search_sql`) */
  raw(result: unknown): string;
}

/**
 * `help` is `<base>[/<lang>]/api/3/action/help_show?name=<action>`: always
 * version 3, and the language segment is kept (CKAN does the same).
 * @example
 * buildEnvelopes('http://127.0.0.1:8080', ['de'])('de', 'datastore_search').error({ __type: 'Not Found Error', message: 'Not found' })
 * // → '{"help":"http://127.0.0.1:8080/de/api/3/action/help_show?name=datastore_search","success":false,"error":{…}}'
 */
export function buildEnvelopes(baseUrl: string, languages: readonly string[]): (language: string | undefined, action?: string) => Envelopes {
  const base = baseUrl.replace(/\/+$/, '');
  const offered = new Set(languages);
  const made = new Map<string, Envelopes>();
  const make = (language: string | undefined, action: string): Envelopes => {
    const help = JSON.stringify(helpUrl(base, language, action));
    const successHead = `{"help":${help},"success":true,"result":`;
    const errorHead = `{"help":${help},"success":false,"error":`;
    return {
      success: (resultText) => `${successHead}${resultText}}`,
      successAround: [successHead, '}'],
      error: (body) => `${errorHead}${JSON.stringify(body)}}`,
      raw: (result) => `${successHead}${JSON.stringify(result)}}`,
    };
  };
  return (language, action = 'datastore_search') => {
    const lang = language !== undefined && offered.has(language) ? language : undefined;
    const key = `${lang ?? ''}\u0000${action}`;
    let envelopes = made.get(key);
    if (envelopes === undefined) {
      envelopes = make(lang, action);
      if (made.size < 64) made.set(key, envelopes);
    }
    return envelopes;
  };
}

/**
 * The `help` link of an answer.
 * @example
 * helpUrl('http://127.0.0.1:8080', undefined, 'status_show') // → "http://127.0.0.1:8080/api/3/action/help_show?name=status_show"
 */
export function helpUrl(base: string, language: string | undefined, action: string): string {
  return `${base}${language === undefined ? '' : `/${language}`}/api/3/action/help_show?name=${encodeURIComponent(action)}`;
}

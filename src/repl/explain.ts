/**
 * What `.explain on` prints before a result: the request as JSON, the
 * equivalent GET URL, and a curl command that sends exactly what the client
 * sends. The token never appears: the curl line reads it from `$CKQL_TOKEN`.
 */
import type { PreparedRequest } from '../client/types.js';
import { queryStringFor } from '../client/encode.js';

/** A shell word in single quotes, safe for any text. */
export function shellQuote(text: string): string {
  return /^[A-Za-z0-9_./:=@%+-]+$/.test(text) ? text : `'${text.replaceAll("'", `'\\''`)}'`;
}

/**
 * @example
 * curlCommand(client.prepare('from courses limit 1'))
 * // curl -sS -X POST http://127.0.0.1:8080/api/action/datastore_search -H 'content-type: application/json' --data-raw '{"resource_id":"courses","limit":1}'
 */
export function curlCommand(prepared: PreparedRequest): string {
  const parts = ['curl', '-sS'];
  if (prepared.method === 'POST') parts.push('-X', 'POST');
  parts.push(shellQuote(prepared.url));
  for (const [name, value] of Object.entries(prepared.headers)) {
    const lower = name.toLowerCase();
    // curl sends its own accept and user-agent; only what the server reads is shown
    if (lower === 'authorization') parts.push('-H', '"Authorization: $CKQL_TOKEN"');
    else if (lower === 'content-type') parts.push('-H', shellQuote(`${lower}: ${value}`));
  }
  if (prepared.body !== undefined) parts.push('--data-raw', shellQuote(prepared.body));
  return parts.join(' ');
}

/** The request JSON, the GET URL and the curl command, one block of lines. */
export function explainText(prepared: PreparedRequest): string {
  const base = prepared.url.split('?')[0] ?? prepared.url;
  return [
    `${prepared.method} ${base}`,
    JSON.stringify(prepared.request, null, 2),
    `GET ${base}?${queryStringFor(prepared.request)}`,
    curlCommand(prepared),
  ].join('\n');
}

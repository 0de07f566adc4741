/**
 * What `.explain on` prints before a result: the target, the request as
 * JSON, the equivalent GET URL, and a curl command that sends what the client sends
 * (the same curl line as `ckql explain`). The token never appears: curl
 * reads it from the shell (`$CKQL_TOKEN` unless the caller says otherwise).
 */
import { queryStringFor } from '../client/encode.js';
import type { Explanation } from '../client/types.js';
import { curlCommand } from '../output/curl.js';
import { format } from '../format.js';

/** Why the plan has its target, in a few words. */
const chosenText = {
  given: 'set by .target, --target or the profile',
  detected: "asked of the portal: status_show, else the 2.12 probe; CKAN 2.11 when it does not say",
  whole: "CKAN 2.11's request says the whole query",
} as const;

/**
 * The target, the request JSON, the GET URL and the curl command (or the
 * sql target's SELECT), then the residual of a plan, one block of lines.
 * @example
 * explainText(await client.explain('from courses limit 1'), undefined)
 * // target: ckan-2.11 (CKAN 2.11's request says the whole query)
 * // POST http://127.0.0.1:8080/api/action/datastore_search
 * // { "resource_id": "courses", "limit": 1 }   (indented)
 * // GET http://127.0.0.1:8080/api/action/datastore_search?resource_id=courses&limit=1
 * // curl -X POST http://127.0.0.1:8080/api/action/datastore_search -H 'content-type: application/json' --data-binary '{"resource_id":"courses","limit":1}'
 */
export function explainText(explained: Explanation, tokenShell: string | undefined): string {
  const target = explained.plan?.target ?? 'ckan-2.11';
  const lines = [`target: ${target} (${chosenText[explained.chosen]})`];
  if (explained.sql !== undefined) {
    lines.push(`POST ${explained.sql.url}`, explained.sql.text, `GET ${explained.sql.url}?${new URLSearchParams({ sql: explained.sql.text }).toString()}`);
    return lines.join('\n');
  }
  const prepared = explained.request!;
  const base = prepared.url.split('?')[0] ?? prepared.url;
  lines.push(
    `${prepared.method} ${base}`,
    JSON.stringify(prepared.request, null, 2),
    `GET ${base}?${queryStringFor(prepared.request)}`,
    curlCommand(prepared, tokenShell),
  );
  // A plan: the request above is paged through, and this runs over its records (docs/beyond-the-request.md).
  const residual = explained.plan?.residual;
  if (residual !== undefined) lines.push('then, locally, over every record it sends:', format(residual));
  return lines.join('\n');
}

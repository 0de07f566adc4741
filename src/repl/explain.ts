/**
 * What `.explain on` prints before a result: the request as JSON, the
 * equivalent GET URL, and a curl command that sends what the client sends
 * (the same curl line as `ckql explain`). The token never appears: curl
 * reads it from the shell (`$CKQL_TOKEN` unless the caller says otherwise).
 */
import { queryStringFor } from '../client/encode.js';
import type { PreparedRequest } from '../client/types.js';
import { curlCommand } from '../output/curl.js';
import type { Query } from '../ast.js';
import { format } from '../format.js';

/**
 * The request JSON, the GET URL and the curl command, one block of lines.
 * @example
 * explainText(client.prepare('from courses limit 1'), undefined)
 * // POST http://127.0.0.1:8080/api/action/datastore_search
 * // { "resource_id": "courses", "limit": 1 }   (indented)
 * // GET http://127.0.0.1:8080/api/action/datastore_search?resource_id=courses&limit=1
 * // curl -X POST http://127.0.0.1:8080/api/action/datastore_search -H 'content-type: application/json' --data-binary '{"resource_id":"courses","limit":1}'
 */
export function explainText(prepared: PreparedRequest, tokenShell: string | undefined, residual?: Query): string {
  const base = prepared.url.split('?')[0] ?? prepared.url;
  const lines = [
    `${prepared.method} ${base}`,
    JSON.stringify(prepared.request, null, 2),
    `GET ${base}?${queryStringFor(prepared.request)}`,
    curlCommand(prepared, tokenShell),
  ];
  // A plan: the request above is paged through, and this runs over its records (docs/beyond-the-request.md).
  if (residual !== undefined) lines.push('then, locally, over every record it sends:', format(residual));
  return lines.join('\n');
}

/**
 * What `.explain on` prints before a result: the target, the request as
 * JSON, the equivalent GET URL, and a curl command that sends what the client sends
 * (the same curl line as `ckql explain`). The token never appears: curl
 * reads it from the shell (`$CKQL_TOKEN` unless the caller says otherwise).
 */
import { queryStringFor } from '../client/encode.js';
import type { Explanation } from '../client/types.js';
import { curlCommand } from '../output/curl.js';

/** Why the plan has its target, in a few words. */
const chosenText = {
  given: 'set by .target, --target or the profile',
  detected: "asked of the portal: status_show, else the 2.12 probe; CKAN 2.11 when it does not say",
  whole: "CKAN 2.11's request says the whole query",
  local: 'local data: no target asked for',
  sources: "a join across sources: each side's target is its own source's",
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
  if (explained.chosen === 'local') {
    // Nothing goes over a wire: the engine answers in this process, so there is no request or curl line to show.
    return [
      `target: none (${chosenText.local}): answered in this process, nothing is sent`,
      ...(explained.steps ?? []),
      'as a portal would be asked: .target ckan-2.11, ckan-2.12 or sql, then .explain again',
    ].join('\n');
  }
  if (explained.chosen === 'sources') return sourcesText(explained).join('\n');
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
  // A plan: the request above is paged through, and the steps run over its records (docs/executor.md).
  if (explained.plan?.residual !== undefined && explained.steps !== undefined) lines.push('steps (what runs, the last step first):', ...explained.steps);
  return lines.join('\n');
}

/**
 * A join across sources: each side's source, target and first request (no
 * curl line: each source has its own token), then the steps that run.
 * @example
 * sourcesText(await client.explain('from enrolments e join b:courses c on e.course = c.code'))
 * // side e: local (ckan-2.11)
 * // POST http://127.0.0.1:8080/api/action/datastore_search {"resource_id":"enrolments","fields":["course","_id"]}
 * // side c: b (ckan-2.12)
 * // POST https://b.example.org/api/action/datastore_search {"resource_id":"courses","fields":["code","_id"]}
 * // steps (what runs, the last step first): …
 */
export function sourcesText(explained: Explanation): string[] {
  const lines = [`target: each side's own (${chosenText.sources})`];
  const sides = explained.plan?.shaped?.sides ?? explained.plan?.facets?.sides ?? [];
  for (const [i, side] of (explained.sides ?? []).entries()) {
    const base = side.request.url.split('?')[0] ?? side.request.url;
    lines.push(`side ${sides[i]?.qualifier ?? i + 1}: from ${side.source} (${side.target})`, `${side.request.method} ${base} ${JSON.stringify(side.request.request)}`);
  }
  if (explained.steps !== undefined) lines.push('steps (what runs, the last step first):', ...explained.steps);
  return lines;
}

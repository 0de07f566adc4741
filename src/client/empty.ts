/**
 * A request with an empty-list filter (`f in ()`) matches no record, but
 * CKAN 2.11 answers it with an SQL error (409 `Invalid query`, see
 * docs/ckan-2.11-reference.md §2). The client
 * answers such a request itself, with exactly what the local server (that is,
 * `evaluate`) would answer: the same result, or the same error.
 */
import type { SearchRequest, SearchResult, Table } from '../datastore/types.js';
import { evaluate } from '../engine/memory/evaluate.js';

/**
 * An offset past any table's end, so the probe's answer holds no records
 * whatever its `limit`. 2^31-1 fits PostgreSQL's `int4`. (The probe sends no
 * `sort`, and `include_total: false`, so a portal has nothing to sort or
 * count; it may still walk its `_id` index to skip the offset.)
 */
export const PAST_THE_END: number = 2 ** 31 - 1;

/**
 * Whether some filter is an empty list.
 *
 * @example
 * hasEmptyListFilter(compile('from courses where stage in () and subject = math')) // → true
 * hasEmptyListFilter(compile('from courses where stage in (active)'))              // → false
 */
export function hasEmptyListFilter(request: SearchRequest): boolean {
  if (request.filters === undefined) return false;
  for (const value of Object.values(request.filters)) if (Array.isArray(value) && value.length === 0) return true;
  return false;
}

/**
 * The probe `answerEmpty` sends: the resource alone, the request's `limit`
 * (so the server shows the cap it applies, also to its default), and an
 * offset past the end (so no records come back, whatever the limit). It
 * carries no field names: the server would check them in its own order
 * (fields, filters, sort), in which the empty-list filters, left out of the
 * probe, take part; they are checked against the fields it returns instead.
 *
 * @example
 * probeFor(compile('from courses where stage in () order by year limit 50000'))
 * // → { resource_id: "courses", limit: 50000, offset: 2147483647, include_total: false }
 */
export function probeFor(request: SearchRequest): SearchRequest {
  return {
    resource_id: request.resource_id,
    ...(request.limit === undefined ? {} : { limit: request.limit }),
    offset: PAST_THE_END,
    include_total: false,
  };
}

/**
 * Answers a request that has an empty-list filter, with one request to the
 * server (`probeFor`): that one checks the resource and the token and gives
 * the resource's fields and the server's `limit`. The rest is `evaluate`
 * over a table with those fields and no rows, capped at that `limit`: the
 * same field-name checks in the same order and words (fields, then filters,
 * the empty lists included, then sort), and the same result the local
 * server gives, since it answers with `evaluate` too.
 *
 * `evaluate` reads neither `q` nor the other filters' values for errors, so
 * they are not sent. A CKAN portal might refuse such a value (a text filter
 * on an `int` field); the whole result is empty anyway.
 *
 * @example
 * await answerEmpty(compile('from courses where stage in () select title limit 50000'), send)
 * // → { resource_id: "<id of courses>", fields: [{ id: "title", type: "text" }], records: [],
 * //     total: 0, total_was_estimated: false, limit: 32000, filters: { stage: [] },
 * //     include_total: true, records_format: "objects" }
 */
export async function answerEmpty(
  request: SearchRequest,
  send: (probe: SearchRequest) => Promise<SearchResult>,
): Promise<SearchResult> {
  const answer = await send(probeFor(request));
  const table: Table = { id: answer.resource_id, aliases: [], fields: answer.fields, rows: [] };
  // The probe's `limit` is the request's (or the default) after the server's cap: as a cap it changes nothing else.
  return evaluate(request, table, typeof answer.limit === 'number' ? { maxLimit: answer.limit } : {});
}

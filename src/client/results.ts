/**
 * A run's records as the client gives them: a search result (a plan's,
 * which ckql finished) and a record stream (docs/executor.md).
 */
import type { Query } from '../ast.js';
import type { Plan } from '../compile/plan.js';
import type { Row, SearchRequest, SearchResult } from '../datastore/types.js';
import type { Execution } from '../execute/run.js';
import type { RecordStream } from './types.js';

/**
 * A plan's records as a search result: the query's limit and offset, the
 * total only when it was counted (asked for, or every match read anyway),
 * and what was read (`read`).
 */
export function planResult(planned: Plan, query: Query, run: Execution, records: Row[]): SearchResult {
  const total = run.total();
  const limit = query.limit?.value.kind === 'number' ? query.limit.value.value : 100;
  const summary = run.summary();
  const result: Record<string, unknown> = {
    resource_id: planned.target === 'sql' ? resourceOfQuery(query) : (planned.request as SearchRequest).resource_id,
    fields: run.fields,
    records,
  };
  if (total !== undefined) result.total = total;
  result.total_was_estimated = false;
  result.limit = limit;
  if (run.facets !== undefined) result.facets = run.facets;
  if (query.offset?.value.kind === 'number') result.offset = query.offset.value.value;
  result.include_total = total !== undefined;
  result.records_format = 'objects';
  result.read = summary;
  return result as unknown as SearchResult;
}

/** A run as a client's record stream: its batches read record by record. */
export function recordStream(run: Execution): RecordStream {
  async function* records(): AsyncGenerator<Row, void, undefined> {
    for await (const batch of run.batches) yield* batch;
  }
  return { fields: run.fields, records: records(), total: () => run.total(), read: () => run.summary(), ...(run.facets === undefined ? {} : { facets: run.facets }) };
}

function resourceOfQuery(query: Query): string {
  const resource = query.from.resource;
  return resource.kind === 'param' ? '' : resource.value;
}

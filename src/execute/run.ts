/**
 * Running a tree: open its root, read its batches, and say afterwards what
 * was read and what is known of the rest (docs/executor.md, Results).
 */
import type { Facets, FieldInfo, ReadSummary, Row } from '../datastore/types.js';
import { abortedBy } from '../engine/pace.js';
import type { Operator, RunContext, RunStats } from './operator.js';

/** A run under way: its fields, its records as they come, and afterwards its summary. */
export interface Execution {
  /** the resource's id, where the source says it (an alias resolved) */
  readonly resource: string | undefined;
  readonly fields: readonly FieldInfo[];
  readonly batches: AsyncGenerator<readonly Row[], void, undefined>;
  /** once the batches have ended: the count of every match, when it was counted or given */
  total(): number | undefined;
  /** once the batches have ended: what was read */
  summary(): ReadSummary;
  /** a query with `facet`: its value counts (docs/aggregates.md) */
  readonly facets?: Facets | undefined;
}

/** Options of `execute`. */
export interface ExecuteOptions {
  readonly signal?: AbortSignal | undefined;
  readonly onPage?: RunContext['onPage'];
}

/**
 * Opens a tree: the first request (or the engine's answer) is made here,
 * each later one as the batches are read. Stopping early (`return()` on
 * the batches, or a `break` out of `for await`) stops every source.
 * @example
 * const run = await execute(portalTree(…), { signal });
 * for await (const batch of run.batches) for (const row of batch) print(row);
 * run.summary(); // → { requests: 1, records: 1000, more: true }
 */
export async function execute(tree: Operator, options: ExecuteOptions = {}): Promise<Execution> {
  const stats: RunStats = { requests: 0, read: 0 };
  const context: RunContext = { signal: options.signal, stats, ...(options.onPage === undefined ? {} : { onPage: options.onPage }) };
  if (options.signal?.aborted === true) throw abortedBy(options.signal);
  const stream = await tree.open(context);
  return {
    resource: stream.resource,
    fields: stream.fields,
    batches: stream.batches,
    facets: stream.facets,
    total: () => stream.outcome?.().matched ?? stream.total,
    summary: () => {
      const more = stream.outcome?.().more;
      return { requests: stats.requests, records: stats.read, ...(more === undefined ? {} : { more }) };
    },
  };
}

/** Every record of a run, in one list. */
export async function readAll(run: Execution): Promise<Row[]> {
  const rows: Row[] = [];
  for await (const batch of run.batches) for (const row of batch) rows.push(row);
  return rows;
}

/**
 * A tree as explain prints it: one line per operator, the root first, each
 * input indented under what reads it.
 * @example
 * describeTree(tree)
 * // ['limit 3, then stop reading', '└─ filter status != withdrawn', '   └─ scan {"resource_id":"enrolments",…}, pages by offset, …']
 */
export function describeTree(tree: Operator): string[] {
  const lines: string[] = [];
  const visit = (op: Operator, prefix: string, childPrefix: string): void => {
    lines.push(`${prefix}${op.kind} ${op.detail}`.trimEnd());
    op.inputs.forEach((input, i) => {
      const last = i === op.inputs.length - 1;
      visit(input, `${childPrefix}${last ? '└─ ' : '├─ '}`, `${childPrefix}${last ? '   ' : '│  '}`);
    });
  };
  visit(tree, '', '');
  return lines;
}

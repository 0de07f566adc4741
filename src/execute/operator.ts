/**
 * The executor's one shape (docs/executor.md): a plan is a tree of
 * operators; opening an operator gives a stream of record batches that the
 * reader pulls. Pulling is the back-pressure: nothing is fetched or computed
 * before a batch is asked for, and a reader that stops (a limit met, Ctrl-C)
 * returns the generators below it, which release what they hold.
 */
import type { Facets, FieldInfo, Row } from '../datastore/types.js';
import { abortedBy, breathe as breatheFor } from '../engine/pace.js';

/** What every operator of one run shares: the signal that cancels it, and counters for explain and footers. */
export interface RunContext {
  readonly signal: AbortSignal | undefined;
  readonly stats: RunStats;
  /** told after each page a source sends: records read so far, and the source's count when it gave one */
  readonly onPage?: ((progress: { readonly fetched: number; readonly total: number | undefined }) => void) | undefined;
}

/** Counters of one run. */
export interface RunStats {
  /** requests sent to a portal (a `limit: 0` count included) */
  requests: number;
  /** records the sources gave (a portal's pages, an engine's answer) */
  read: number;
}

/** What is known once a stream has been read to its end (or stopped by its limit). */
export interface Outcome {
  /** how many records the query matches before offset and limit, when they were all counted */
  readonly matched?: number;
  /** true: records beyond those given exist; false: none do; undefined: not known without reading on */
  readonly more?: boolean;
}

/** An opened operator: its fields, then its records in batches. */
export interface Stream {
  /** the resource's id, where the source says it (an alias resolved) */
  readonly resource?: string | undefined;
  readonly fields: readonly FieldInfo[];
  readonly batches: AsyncGenerator<readonly Row[], void, undefined>;
  /** how many records the query this stream answers matches before its offset and limit, when the source counted them up front (an engine, a portal's `total`) */
  readonly total?: number | undefined;
  /** after `batches` has ended: what the stream learnt about the rest */
  outcome?(): Outcome;
  /** a query with `facet`: the value counts of the records it keeps, known when the stream opens */
  readonly facets?: Facets | undefined;
}

/** The names explain prints; one per operator type. */
export type OperatorKind = 'request' | 'scan' | 'sql' | 'engine' | 'filter' | 'project' | 'compute' | 'distinct' | 'sort' | 'limit' | 'aggregate' | 'join' | 'window' | 'facets';

/**
 * One step of a plan. `detail` is what explain prints beside the kind;
 * `inputs` are the steps it reads (none for a source).
 */
export interface Operator {
  readonly kind: OperatorKind;
  readonly detail: string;
  readonly inputs: readonly Operator[];
  open(context: RunContext): Promise<Stream>;
}

/** Throws `ABORTED` when the run was cancelled: every operator calls it between batches. */
export function checkSignal(context: RunContext): void {
  if (context.signal?.aborted === true) throw abortedBy(context.signal);
}

/**
 * Lets the event loop run when the run has held it for a few milliseconds
 * (a Ctrl-C, a keypress, a timer), then checks the signal: the engine's
 * `breathe` (engine/pace.ts), which the memory engine's own loops share.
 */
export function breathe(context: RunContext): Promise<void> {
  return breatheFor(context.signal);
}

/**
 * Windows and `qualify` on a portal (docs/expressions.md, docs/executor.md):
 * after the tree of the query's inner query (compile/window.ts), read
 * whole, a `window` operator computes each window over its rows (a window
 * needs its partition: each is sorted by its order keys, then one pass,
 * engine/memory/window.ts); then `qualify` filters the rows as they stream,
 * `sort` orders what it kept (ties in the inner order), `limit` pages, and
 * `project` gives the answer's columns.
 */
import type { Condition } from '../ast.js';
import type { WindowSpec, WindowStep } from '../compile/window.js';
import type { Row } from '../datastore/types.js';
import { expressionText, format } from '../format.js';
import { havingTest, sortRows } from '../engine/memory/aggregate.js';
import { computeWindows } from '../engine/memory/window.js';
import { paced } from '../engine/pace.js';
import { closing } from '../engine/stream.js';
import { filter, limit, project } from './local.js';
import { breathe, checkSignal } from './operator.js';
import type { Operator, RunContext, Stream } from './operator.js';

/** The limit of a query with none, as datastore_search (`rows_default`). */
const DEFAULT_LIMIT = 100;

/**
 * The step over `input`, the tree of the step's inner query (read whole).
 * @example
 * windowTree(innerTree, windowStep(query)!, { all: false, total: false })
 * // limit 100, then stop reading
 * // └─ project subject, student, r
 * //    └─ sort subject, r, ties in the order they come
 * //       └─ filter qualify r <= 3
 * //          └─ window row_number() over (partition by subject order by grade desc) as r; …
 */
export function windowTree(input: Operator, step: WindowStep, options: { readonly all: boolean; readonly total: boolean }): Operator {
  let tree = windowOperator(input, step);
  const qualify = step.qualify;
  if (qualify !== undefined) tree = filter(tree, `qualify ${conditionText(qualify)}`, (fields) => havingTest(qualify, fields));
  if (step.order.length > 0) tree = sortOperator(tree, step);
  const wanted = step.limit ?? (options.all ? Number.POSITIVE_INFINITY : DEFAULT_LIMIT);
  tree = limit(tree, { offset: step.offset, limit: wanted, count: options.total });
  return project(tree, step.columns);
}

/** A window as the language writes it, with the column it gives. */
function windowText(spec: WindowSpec): string {
  return `${expressionText(spec.window)} as ${spec.column}`;
}

/** A condition over the rows' columns as the language writes it. */
function conditionText(condition: Condition): string {
  const span = condition.span;
  return format({ kind: 'query', span, from: { kind: 'from', span, resource: { kind: 'string', span, value: '_' } }, where: { kind: 'where', span, condition } })
    .split('\n')
    .slice(1)
    .join(' ')
    .replace(/^where\s+/, '');
}

/** Reads the input whole (breathing between batches: a long read stays cancellable). */
async function readAll(stream: Stream, context: RunContext): Promise<Row[]> {
  const rows: Row[] = [];
  for await (const batch of stream.batches) {
    checkSignal(context);
    for (const row of batch) rows.push(row);
    await breathe(context);
  }
  return rows;
}

/** The rows given again in batches of the size they came in. */
async function* batchesOf(rows: readonly Row[], context: RunContext): AsyncGenerator<readonly Row[], void, undefined> {
  for (let from = 0; from < rows.length; from += BATCH) {
    checkSignal(context);
    yield rows.slice(from, from + BATCH);
  }
}

const BATCH = 1_000;

function windowOperator(input: Operator, step: WindowStep): Operator {
  return {
    kind: 'window',
    detail: `${step.windows.map(windowText).join('; ')}: each partition sorted by its order, then one pass (holds the rows of the query before it)`,
    inputs: [input],
    open: async (context) => {
      const upstream = await input.open(context);
      const rows = await readAll(upstream, context);
      const fields = await paced(computeWindows(rows, upstream.fields, step), context.signal);
      return { fields, batches: closing(batchesOf(rows, context), () => upstream.batches.return()) };
    },
  };
}

function sortOperator(input: Operator, step: WindowStep): Operator {
  const keys = step.order.map((key) => `${key.column}${key.direction === 'desc' ? ' desc' : ''}${key.nulls === undefined ? '' : ` nulls ${key.nulls}`}`);
  return {
    kind: 'sort',
    detail: `${keys.join(', ')}, ties in the order they come`,
    inputs: [input],
    open: async (context) => {
      const upstream = await input.open(context);
      const rows = await readAll(upstream, context);
      const types = new Map(upstream.fields.map((f) => [f.id, f.type]));
      const sorted = await paced(sortRows(rows, step.order.map((key) => ({ slot: key.column, direction: key.direction, nulls: key.nulls, type: types.get(key.column) }))), context.signal);
      return { fields: upstream.fields, total: sorted.length, batches: closing(batchesOf(sorted, context), () => upstream.batches.return()) };
    },
  };
}


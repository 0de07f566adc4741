/**
 * A grouped, joined, renamed or faceted query over tables in memory
 * (`Engine.query` of the memory engine), in one pass over each table's rows
 * with the machinery of `queryTable` (query.ts: each resource's `where` and
 * `search` as its scan, equality indexes included), then a hash join of
 * row positions, then the hash aggregate (aggregate.ts). Joined rows are
 * never built as records: each stage reads a field of a side through the
 * positions of a joined row. The reference walker (`evaluateQuery`) says
 * what each step means, plainly.
 */
import type { Aggregate, Condition as QueryCondition, Expression, Field, Query } from '../../ast.js';
import { isPlainQuery } from '../../ast.js';
import { expressionFields } from '../../syntax/expressions.js';
import { expressionReader } from './computed.js';
import { bindShape, conditionFieldList, fieldRefText, mapCondition, shapeOf, sideConditions, sideSearch } from '../../compile/shape.js';
import type { BoundShape, FacetSpec, Shape } from '../../compile/shape.js';
import { bucketFunction } from '../../datastore/buckets.js';
import type { FacetResult, Facets, FieldInfo, FieldType, JsonValue, Row, Table } from '../../datastore/types.js';
import { canonicalText } from '../../datastore/values.js';
import { queryError, resourceNotFound } from '../../errors.js';
import { firstParameter } from '../../syntax/walk.js';
import { formatField } from '../../format.js';
import { DEFAULT_MAX_JOIN_ROWS } from '../../compile/plan.js';
import type { EngineQueryOptions, QueryStream } from '../types.js';
import { FacetCounter, finishGroups, makeAggregator, namedColumns, sortRows } from './aggregate.js';
import type { AggregateSpec, Read } from './aggregate.js';
import { answerSteps, DEFAULT_LIMIT } from './evaluate.js';
import { windowAnswer } from './window.js';
import type { WindowStep } from '../../compile/window.js';
import { abortedBy, paced, runSteps, SLICE } from '../pace.js';
import type { Steps } from '../pace.js';
import type { Conjunct } from './evaluate.js';
import { residualTest, withoutFacet } from './evaluate-query.js';
import { conjunctsOf, DEFAULT_BATCH_SIZE, queryTable, searchesOf } from './query.js';
import { fieldRead, joinedRecords } from './row-shape.js';
import type { FieldRead, JoinedColumn } from './row-shape.js';
import { readField, tableView } from './table-view.js';
import type { TableView } from './table-view.js';

/** Finds a table by id or alias. */
export interface TableFinder {
  find(idOrAlias: string): Table | undefined;
}

/**
 * Answers a bound query that `queryTable` does not (`isPlainQuery` false):
 * its fields, total (always counted: the pass computes it), facets and
 * records in batches. Errors are those of `evaluateQuery`, raised before a
 * record is given. Each stage pauses every few milliseconds for the event
 * loop and stops with `ABORTED` once the signal is aborted (engine/pace.ts).
 * @example
 * const stream = await queryShaped(parse('from courses group by subject select subject, count(*) as n order by n desc'), catalog);
 * for await (const batch of stream.batches) console.log(batch); // [{ subject: 'math', n: 6 }, …]
 */
export async function queryShaped(query: Query, tables: TableFinder, options: EngineQueryOptions = {}): Promise<QueryStream> {
  const unbound = firstParameter(query);
  if (unbound !== undefined) throw queryError('UNBOUND_PARAMETER', unbound.span, [unbound.name]);
  stopIfAborted(options.signal);
  const shape = shapeOf(query);
  const found = shape.sources.map((source) => {
    const table = tables.find(source.resource);
    if (table === undefined) throw resourceNotFound(source.resource);
    return table;
  });
  const records = withoutFacet(query);
  const views = found.map((table) => tableView(table));
  const bound = bindShape(shape, views.map((view) => view.fields));
  const signal = options.signal;
  const maxJoinRows = options.maxJoinRows ?? DEFAULT_MAX_JOIN_ROWS;
  // A grouped join folds its last join's rows a chunk at a time, never holding them all.
  if (shape.grouped && views.length > 1) {
    const groups = await paced(groupedJoinRows(bound, views, (visit) => joinedRows(shape, views, bound, maxJoinRows, visit)), signal);
    return answerOf(found[0]!.id, bound, groups, shape, options);
  }
  const joined = (await paced(joinedRows(shape, views, bound, maxJoinRows), signal))!;
  const facets = shape.facets.length === 0 ? undefined : await paced(facetsOf(shape.facets, joined, bound), signal);
  if (isPlainQuery(records)) {
    // The records of a facet query are those it gives without its facets.
    const answer = await queryTable(records, found[0]!, { ...options, total: true });
    return { ...answer, resource: found[0]!.id, ...(facets === undefined ? {} : { facets }) };
  }
  const rows = await paced(shape.grouped ? groupedRowsOfOne(bound, joined) : plainRows(bound, joined), signal);
  return { ...answerOf(found[0]!.id, bound, rows, shape, options), ...(facets === undefined ? {} : { facets }) };
}

/**
 * A query with windows (compile/window.ts): its inner query answered
 * whole, then the window step over its rows (engine/memory/window.ts).
 * @example
 * await queryWindowed(windowStep(parse('from g select s, rank() over (order by x desc) as r qualify r = 1'))!, catalog)
 */
export async function queryWindowed(step: WindowStep, tables: TableFinder, options: EngineQueryOptions = {}): Promise<QueryStream> {
  const inner = await queryShaped(step.inner, tables, { ...options, all: true, total: false });
  const rows: Row[] = [];
  for await (const batch of inner.batches) for (const row of batch) rows.push(row);
  const answer = await paced(windowAnswer(rows, inner.fields, step, options.all === true ? Infinity : DEFAULT_LIMIT), options.signal);
  const batchSize = Math.max(1, Math.floor(options.batchSize ?? DEFAULT_BATCH_SIZE));
  return {
    ...(inner.resource === undefined ? {} : { resource: inner.resource }),
    fields: answer.fields,
    total: answer.total,
    batches: batchesOf(answer.rows, batchSize, options.signal),
  };
}

/** The answer of the rows: their count as the total, the page of them the query asks for, in batches. */
function answerOf(resource: string, bound: BoundShape, rows: readonly Row[], shape: Shape, options: EngineQueryOptions): QueryStream {
  const offset = shape.offset;
  const limit = shape.limit ?? (options.all === true ? Infinity : DEFAULT_LIMIT);
  const page = rows.slice(offset, offset + limit);
  const batchSize = Math.max(1, Math.floor(options.batchSize ?? DEFAULT_BATCH_SIZE));
  return {
    resource,
    fields: bound.columns.map((c) => ({ id: c.name, type: c.type })),
    total: rows.length,
    batches: batchesOf(page, batchSize, options.signal),
  };
}

async function* batchesOf(rows: readonly Row[], size: number, signal: AbortSignal | undefined): AsyncGenerator<readonly Row[]> {
  for (let from = 0; from < rows.length; from += size) {
    stopIfAborted(signal);
    yield rows.slice(from, from + size);
  }
}

function stopIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted === true) throw abortedBy(signal);
}

// ---------------------------------------------------------------- the joined rows

/**
 * The rows of the query's sources that `where` and `search` keep, joined:
 * `positions[side][j]` is the row of `side` in joined row `j` (-1 where a
 * left join found none); `undefined` when that is `j` itself (every row of
 * one table, which then needs no list of a million positions). In the order
 * of the first table's rows, each with its matches in their order.
 */
interface Joined {
  readonly views: readonly TableView[];
  readonly positions: readonly Positions[];
  readonly length: number;
}

/** Row positions, ascending or as joined; `undefined`: every row, in order. */
type Positions = Int32Array | undefined;

/**
 * The joined rows (see `Joined`); with `visit`, the last join's rows are
 * given to it a chunk at a time (at most `JOIN_CHUNK`, the conditions across
 * sides tested), in no promised order, none is kept, and it gives undefined.
 */
function* joinedRows(shape: Shape, views: readonly TableView[], bound: BoundShape, maxRows: number, visit?: (chunk: Joined) => void): Steps<Joined | undefined> {
  const sideOf = (field: Field): number => bound.ref(field).side;
  const { ofSide, across } = sideConditions(shape, bound);
  // Each side's rows: its conditions and its part of the search, as queryTable runs them.
  const kept: Positions[] = [];
  for (const [side, view] of views.entries()) kept.push(yield* sideRows(shape, view, side, ofSide[side]!, bound));
  let positions: Positions[] = [kept[0]];
  let length = kept[0]?.length ?? views[0]!.rows.length;
  for (const [j, join] of shape.joins.entries()) {
    const keys = join.on.map((pair) => {
      const [mine, other] = sideOf(pair.left) === j + 1 ? [pair.left, pair.right] : [pair.right, pair.left];
      if (sideOf(other) > j) {
        throw queryError('JOIN_KEYS_ONE_SIDE', pair.span, [], { hint: 'each pair of keys names a field of the joined resource and one of a resource before it' });
      }
      return { mine: bound.ref(mine).info.id, other: { side: sideOf(other), name: bound.ref(other).info.id } };
    });
    const example = { resource: shape.sources[j + 1]!.resource, key: keys[0]!.mine, qualifier: shape.sources[j + 1]!.qualifier };
    const refuse = (rows: number, multiplying: readonly KeyProduct[]): Error =>
      queryError('JOIN_TOO_LARGE', join.span, [rows, maxRows, true], { hint: joinHint(join, example, multiplying.map((k) => ({ key: k.key, left: k.probed, right: k.hashed }))) });
    if (visit !== undefined && j === shape.joins.length - 1) {
      const before = positions;
      // Each chunk is at most JOIN_CHUNK rows, gathered and filtered at once; the join pauses between chunks.
      yield* joinSide(positions, length, j + 1, kept[j + 1], join.left, keys, views, { max: maxRows, refuse }, (outJ, outI) => {
        const chunk: Joined = { views, positions: [...before.map((list) => runSteps(gather(list, outJ))), outI.slice()], length: outJ.length };
        visit(across.length > 0 ? runSteps(filterJoined(chunk, across, bound)) : chunk);
      });
      break;
    }
    positions = (yield* joinSide(positions, length, j + 1, kept[j + 1], join.left, keys, views, { max: maxRows, refuse }))!;
    length = positions[0]!.length;
  }
  if (visit !== undefined) return undefined;
  let joined: Joined = { views, positions, length };
  if (across.length > 0) joined = yield* filterJoined(joined, across, bound);
  return joined;
}

/** The positions of a side's rows that its own conditions and search keep, ascending (`undefined`: every row). */
function* sideRows(shape: Shape, view: TableView, side: number, conditions: readonly QueryCondition[], bound: BoundShape): Steps<Positions> {
  const conjuncts: Conjunct[] = [];
  for (const condition of conditions) conjuncts.push(...conjunctsOf(condition, true, view.fieldById));
  let searches: ReturnType<typeof searchesOf>['searches'] = [];
  const part = sideSearch(shape, bound, side);
  if (part !== undefined) {
    const found = searchesOf({ ...shape.query, search: part });
    searches = found.searches;
    for (const test of found.byField) conjuncts.push({ condition: test });
  }
  // Nothing to test: every row, in order.
  if (conjuncts.length === 0 && searches.length === 0) return undefined;
  const answer = yield* answerSteps(view, { conjuncts, searches, sortItems: [], projection: undefined, distinct: false, offset: 0, limit: Infinity, count: true });
  const out = new Int32Array(answer.page.length);
  for (let j = 0; j < out.length; j++) out[j] = answer.page.at(j);
  return out;
}

/** The text a join key compares by (canonical text; null for null, which matches nothing). */
function keyText(value: JsonValue | null | undefined): string | null {
  if (value === null || value === undefined) return null;
  return typeof value === 'string' ? value : canonicalText(value);
}

/** A join's bound: the most rows it may give, and its refusal (the rows it would give, the keys that multiply the most). */
interface JoinBound {
  readonly max: number;
  readonly refuse: (rows: number, multiplying: readonly KeyProduct[]) => Error;
}

/** A key of both sides and how many rows each side has of it. */
interface KeyProduct {
  readonly key: string;
  readonly hashed: number;
  readonly probed: number;
}

/**
 * Joins `side` to the joined rows so far: a hash of the smaller of the two
 * by their keys, the other read past it. An inner join's output is put back
 * in the rows' order (by joined row, then the side's row) when the hash was
 * built over the joined rows; a left join always hashes the side. The rows
 * it gives are counted from the hash and the other side's keys before any
 * is made, so a join past `bound.max` is refused before it runs, and the
 * positions are written into lists of their exact length.
 */
function* joinSide(
  positions: readonly Positions[],
  count: number,
  side: number,
  rows: Positions,
  left: boolean,
  keys: readonly { readonly mine: string; readonly other: { readonly side: number; readonly name: string } }[],
  views: readonly TableView[],
  bound: JoinBound,
  emit?: (outJ: Int32Array, outI: Int32Array) => void,
): Steps<Int32Array[] | undefined> {
  const view = views[side]!;
  const sideCount = rows?.length ?? view.rows.length;
  const mineKey = keys.map((k): KeySource => ({ rows: view.rows as readonly Row[], through: undefined, name: k.mine, read: fieldRead(k.mine) }));
  const otherKey = keys.map(({ other }): KeySource => ({ rows: views[other.side]!.rows as readonly Row[], through: positions[other.side], name: other.name, read: fieldRead(other.name) }));
  let outJ: Int32Array;
  let outI: Int32Array;
  if (left || sideCount <= count) {
    const index = yield* hashKeys(sideCount, rows, mineKey);
    const probed = keyTexts(count, undefined, otherKey);
    const { size, found } = matchesOf(probed, index, left);
    if (size > bound.max) throw bound.refuse(size, multiplying(probed, index));
    if (emit !== undefined) {
      yield* probeChunks(count, undefined, found, left, emit);
      return undefined;
    }
    outJ = new Int32Array(size);
    outI = new Int32Array(size);
    yield* probeKeys(count, undefined, found, left, outJ, outI);
  } else {
    // The joined rows are fewer: hash them, read the side past them, then restore the rows' order.
    const index = yield* hashKeys(count, undefined, otherKey);
    const probed = keyTexts(sideCount, rows, mineKey);
    const { size, found } = matchesOf(probed, index, false);
    if (size > bound.max) throw bound.refuse(size, multiplying(probed, index));
    if (emit !== undefined) {
      // Chunks need no order: the side's rows as they probe, with their joined rows.
      yield* probeChunks(sideCount, rows, found, false, (sideRows, joinedRows) => emit(joinedRows, sideRows));
      return undefined;
    }
    const pairsI = new Int32Array(size);
    const pairsJ = new Int32Array(size);
    yield* probeKeys(sideCount, rows, found, false, pairsI, pairsJ);
    // A counting sort by joined row keeps each row's matches in the side's order.
    const starts = new Int32Array(count + 1);
    for (let k = 0; k < pairsJ.length; k++) {
      starts[pairsJ[k]! + 1]!++;
      if (k % SLICE === SLICE - 1) yield;
    }
    for (let j = 0; j < count; j++) starts[j + 1]! += starts[j]!;
    const at = starts.slice(0, count);
    outJ = new Int32Array(size);
    outI = new Int32Array(size);
    for (let k = 0; k < size; k++) {
      const j = pairsJ[k]!;
      const to = at[j]!++;
      outJ[to] = j;
      outI[to] = pairsI[k]!;
      if (k % SLICE === SLICE - 1) yield;
    }
  }
  const next: Int32Array[] = [];
  for (const list of positions) next.push(yield* gather(list, outJ));
  next.push(outI);
  return next;
}

/**
 * The hashed rows of each probing key (`found[k]`; undefined: none), and
 * the rows the join gives: their number for each (a left join: at least one).
 */
function matchesOf(probed: readonly (string | null)[], index: Map<string, number[]>, left: boolean): { size: number; found: (number[] | undefined)[] } {
  let size = 0;
  const found = new Array<number[] | undefined>(probed.length);
  for (let k = 0; k < probed.length; k++) {
    const text = probed[k]!;
    const matches = text === null ? undefined : index.get(text);
    found[k] = matches;
    size += matches === undefined ? (left ? 1 : 0) : matches.length;
  }
  return { size, found };
}

/** The keys whose rows multiply the most (the hashed rows of a key times the probing rows of it), the largest first. */
function multiplying(probed: readonly (string | null)[], index: Map<string, number[]>): KeyProduct[] {
  const counts = new Map<string, number>();
  for (const text of probed) if (text !== null && index.has(text)) counts.set(text, (counts.get(text) ?? 0) + 1);
  return [...counts]
    .map(([key, n]) => ({ key, hashed: index.get(key)!.length, probed: n }))
    .sort((a, b) => b.hashed * b.probed - a.hashed * a.probed)
    .slice(0, 3);
}

/**
 * What a refusal of a join says after its count: the keys that multiply
 * (`left` rows of one side times `right` of the other), then what to write
 * instead (`example`: the joined side's resource, a key of it, its
 * qualifier), then how to raise the bound. Shared with the plans' join
 * (execute/shaped.ts).
 * @example
 * joinHint(join, { resource: 'enrolments', key: 'status', qualifier: 'b' }, [{ key: 'completed', left: 14041, right: 14041 }])
 * // 'most of them pair rows of the same key of a.status = b.status: "completed" (14041 × 14041 = 197149681); …'
 */
export function joinHint(
  join: Shape['joins'][number],
  example: { readonly resource: string; readonly key: string; readonly qualifier: string },
  keys: readonly { readonly key: string; readonly left: number; readonly right: number }[],
): string {
  const on = join.on.map((p) => `${fieldRefText(p.left)} = ${fieldRefText(p.right)}`).join(' and ');
  const listed = keys.map((k) => `${JSON.stringify(k.key)} (${k.left} × ${k.right} = ${k.left * k.right})`).join(', ');
  return [
    listed === '' ? '' : `most of them pair rows of the same key of ${on}: ${listed}; `,
    `to count or sum over the pairs, group each side by its key first (from ${example.resource} group by ${formatField(example.key)} select ${formatField(example.key)}, count(*) as n) and multiply the counts of each key; `,
    `or pair more fields in on (on ${on} and ${example.qualifier}.… = …), or keep fewer rows with where; `,
    'or raise the bound (--max-join-rows N, .max-join-rows N in the REPL, maxJoinRows in the library)',
  ].join('');
}

/*
 * The loops of a join are small functions of their own over data (no
 * closure made per query): V8 optimizes each once and keeps it for every
 * later query. One large function run once per query, calling closures made
 * for it, started each time in the interpreter (on-stack replacement, then
 * a deoptimization on a branch it had not seen, or when the closures it had
 * inlined were collected).
 */

/** A join key's field: its rows, read at `through[p]` (or `p`; -1: no row), by `read` (or as `readField` reads `_id`). */
interface KeySource {
  readonly rows: readonly Row[];
  readonly through: Positions;
  readonly name: string;
  readonly read: FieldRead;
}

/** The text a join key compares by at position `p` (canonical text; null for null or no row, which match nothing). */
function keyAt(sources: readonly KeySource[], p: number): string | null {
  if (sources.length === 1) return keyText(valueAt(sources[0]!, p));
  const texts = sources.map((source) => keyText(valueAt(source, p)));
  return texts.includes(null) ? null : JSON.stringify(texts);
}

function valueAt(source: KeySource, p: number): JsonValue | null {
  const i = source.through === undefined ? p : source.through[p]!;
  if (i < 0) return null;
  const row = source.rows[i]!;
  return source.name === '_id' ? readField(row, '_id', i) : source.read(row);
}

/** The positions `at[k]` (or `k`) for k < n, by their key's text (null keys left out); a slice at a time (engine/pace.ts). */
function* hashKeys(n: number, at: Positions, key: readonly KeySource[]): Steps<Map<string, number[]>> {
  const index = new Map<string, number[]>();
  for (let from = 0; from < n; from += SLICE) {
    hashSlice(index, from, Math.min(n, from + SLICE), at, key);
    yield;
  }
  return index;
}

/** `hashKeys` of the positions k, `from` ≤ k < `to`. */
function hashSlice(index: Map<string, number[]>, from: number, to: number, at: Positions, key: readonly KeySource[]): void {
  for (let k = from; k < to; k++) {
    const i = at === undefined ? k : at[k]!;
    const text = keyAt(key, i);
    if (text === null) continue;
    const list = index.get(text);
    if (list === undefined) index.set(text, [i]);
    else list.push(i);
  }
}

/** The key texts of the positions `at[k]` (or `k`), k < n, in order. */
function keyTexts(n: number, at: Positions, key: readonly KeySource[]): (string | null)[] {
  const out = new Array<string | null>(n);
  for (let k = 0; k < n; k++) out[k] = keyAt(key, at === undefined ? k : at[k]!);
  return out;
}

/**

 * For each position `at[k]` (or `k`), k < n, in order, whose key's hashed
 * rows are `found[k]`: a pair (it, match) per match, in the hash's order;
 * `left`: (it, -1) when none matches. The lists hold exactly the pairs
 * (`matchesOf`). A yield after about every `SLICE` positions.
 */
function* probeKeys(n: number, at: Positions, found: readonly (number[] | undefined)[], left: boolean, outProbe: Int32Array, outMatch: Int32Array): Steps<void> {
  let to = 0;
  for (let k = 0; k < n; k++) {
    if (k % SLICE === SLICE - 1) yield;
    const p = at === undefined ? k : at[k]!;
    const matches = found[k];
    if (matches === undefined) {
      if (left) {
        outProbe[to] = p;
        outMatch[to++] = -1;
      }
      continue;
    }
    for (let m = 0; m < matches.length; m++) {
      outProbe[to] = p;
      outMatch[to++] = matches[m]!;
    }
  }
}

/** The joined rows the last join of a grouped query gives its aggregate at once. */
const JOIN_CHUNK = 65_536;

/**
 * `probeKeys` a chunk at a time: `emit(probe, match)` with at most
 * `JOIN_CHUNK` pairs, the lists reused for the next chunk (copy what is kept).
 */
function* probeChunks(n: number, at: Positions, found: readonly (number[] | undefined)[], left: boolean, emit: (outProbe: Int32Array, outMatch: Int32Array) => void): Steps<void> {
  const outProbe = new Int32Array(JOIN_CHUNK);
  const outMatch = new Int32Array(JOIN_CHUNK);
  let to = 0;
  for (let k = 0; k < n; k++) {
    const p = at === undefined ? k : at[k]!;
    const matches = found[k];
    if (matches === undefined) {
      if (!left) continue;
      outProbe[to] = p;
      outMatch[to++] = -1;
    } else {
      for (let m = 0; m < matches.length; m++) {
        outProbe[to] = p;
        outMatch[to++] = matches[m]!;
        if (to === JOIN_CHUNK) {
          emit(outProbe, outMatch);
          to = 0;
          yield;
        }
      }
    }
    if (to === JOIN_CHUNK) {
      emit(outProbe, outMatch);
      to = 0;
      yield;
    }
    if (k % SLICE === SLICE - 1) yield;
  }
  if (to > 0) emit(outProbe.subarray(0, to), outMatch.subarray(0, to));
}

/** `list[j]` (or `j` itself, without a list) for each `j` of `at`. */
function* gather(list: Positions, at: Int32Array): Steps<Int32Array> {
  const out = new Int32Array(at.length);
  for (let from = 0; from < out.length; from += SLICE) {
    const to = Math.min(out.length, from + SLICE);
    if (list === undefined) out.set(at.subarray(from, to), from);
    else for (let k = from; k < to; k++) out[k] = list[at[k]!]!;
    yield;
  }
  return out;
}

/**
 * A field of the rows of one side by joined position `j` (through
 * `positions`, or the row `j` itself without them): null where a left join
 * found no row, `_id` as `readField` gives it.
 */
function positionRead(rows: readonly Row[], positions: Positions, name: string): Read<number> {
  if (name === '_id') {
    if (positions === undefined) return (j) => readField(rows[j] as Row, name, j);
    return (j) => {
      const i = positions[j]!;
      return i < 0 ? null : readField(rows[i] as Row, name, i);
    };
  }
  // One generated read per name: a property load with a fixed name (row-shape.ts).
  const read = fieldRead(name);
  if (positions === undefined) return (j) => read(rows[j] as Row);
  return (j) => {
    const i = positions[j]!;
    return i < 0 ? null : read(rows[i] as Row);
  };
}

/** A field's value in joined row `j`. */
function reader(joined: Joined, bound: BoundShape, field: Field): Read<number> {
  const { side, info } = bound.ref(field);
  return positionRead(joined.views[side]!.rows as readonly Row[], joined.positions[side], info.id);
}

/** Keeps the joined rows that the conditions across sides hold for (the reference's test, over the fields they read). */
function* filterJoined(joined: Joined, conditions: readonly QueryCondition[], bound: BoundShape): Steps<Joined> {
  const fields = [...new Set(conditions.flatMap((c) => conditionFieldList(c)))];
  const key = (field: Field): string => {
    const ref = bound.ref(field);
    return `${ref.side}\u0000${ref.info.id}`;
  };
  const reads = fields.map((field) => ({ key: key(field), read: reader(joined, bound, field), type: bound.ref(field).info.type }));
  const infos: FieldInfo[] = [...new Map(reads.map((r) => [r.key, { id: r.key, type: r.type }])).values()];
  const span = conditions[0]!.span;
  const rewritten = conditions.map((c) => mapCondition(c, (f) => ({ ...f, name: key(f), qualifier: undefined }) as Field));
  const condition: QueryCondition = rewritten.length === 1 ? rewritten[0]! : { kind: 'and', span, conditions: rewritten };
  const test = residualTest({ kind: 'query', span, from: bound.shape.query.from, where: { kind: 'where', span, condition } }, infos);
  const kept: number[] = [];
  for (let j = 0; j < joined.length; j++) {
    const row: Record<string, JsonValue | null | undefined> = {};
    for (const { key: k, read } of reads) row[k] = read(j);
    if (test(row as Row, j)) kept.push(j);
    if (j % SLICE === SLICE - 1) yield;
  }
  return { views: joined.views, positions: joined.positions.map((list) => Int32Array.from(kept, (j) => (list === undefined ? j : list[j]!))), length: kept.length };
}

/** A field, bucket or expression of joined row `j`. */
function valueReader(joined: Joined, bound: BoundShape, value: Expression): Read<number> {
  if (value.kind === 'field') return reader(joined, bound, value);
  if (value.kind !== 'bucket') return expressionReader<number>(value, (f) => ({ read: reader(joined, bound, f), type: bound.ref(f).info.type })).read;
  const read = reader(joined, bound, value.field);
  const bucket = bucketFunction(value.fn === 'bucket' ? { width: value.width!.value } : { unit: value.fn as 'year' | 'month' | 'week' | 'day' });
  return (j) => bucket(read(j));
}

// ---------------------------------------------------------------- the answer

/**
 * A grouped join's groups: the aggregator reads each chunk of the last
 * join's rows as `joinedRows` gives it (through `current`, which holds the
 * chunk), so only the groups grow with the join.
 */
function* groupedJoinRows(bound: BoundShape, views: readonly TableView[], each: (visit: (chunk: Joined) => void) => Steps<unknown>): Steps<Row[]> {
  const shape = bound.shape;
  const current: { positions: readonly Positions[] } = { positions: [] };
  const fieldOf = (field: Field): Read<number> => chunkReader(current, views, bound, field);
  // One read per field, so aggregates of one field share their state (sum and avg).
  const reads = new Map<string, Read<number>>();
  const read = (field: Field): Read<number> => {
    const { side, info } = bound.ref(field);
    const key = `${side}\u0000${info.id}`;
    let made = reads.get(key);
    if (made === undefined) reads.set(key, (made = fieldOf(field)));
    return made;
  };
  const aggregator = makeAggregator<number>({
    keys: shape.keys.map((key) => {
      if (key.kind === 'field') return fieldOf(key);
      if (key.kind !== 'bucket') return expressionReader<number>(key, (f) => ({ read: fieldOf(f), type: bound.ref(f).info.type }), true).read;
      const value = fieldOf(key.field);
      const bucket = bucketFunction(key.fn === 'bucket' ? { width: key.width!.value } : { unit: key.fn as 'year' | 'month' | 'week' | 'day' });
      return (j) => bucket(value(j));
    }),
    aggregates: shape.aggregates.map((aggregate) => aggregateInput(aggregate, bound, read)),
  });
  // A chunk is at most JOIN_CHUNK rows, folded at once; the join's steps pause between chunks.
  yield* each((chunk) => {
    current.positions = chunk.positions;
    runSteps(aggregator.countSteps(chunk.length));
  });
  const name = namedColumns(bound);
  return (yield* finishGroups(bound, aggregator.groups())).map(name);
}

/**
 * What an aggregate folds: a field's read as it is (a property load the
 * fold writes inline, shared by the aggregates of one field), or an
 * expression's value computed from the reads of its fields (docs/expressions.md).
 */
function aggregateInput<T>(aggregate: Aggregate, bound: BoundShape, read: (field: Field) => Read<T>): AggregateSpec<T>['aggregates'][number] {
  const argument = aggregate.field;
  if (argument === undefined) return { aggregate, type: undefined };
  if (argument.kind === 'field') return { aggregate, read: read(argument), type: bound.ref(argument).info.type };
  const computed = expressionReader<T>(argument, (f) => ({ read: read(f), type: bound.ref(f).info.type }));
  return { aggregate, read: computed.read, type: bound.recordType(argument) };
}

/** A field's value in row `j` of the chunk `current` holds now: null where a left join found no row, `_id` as `readField` gives it. */
function chunkReader(current: { readonly positions: readonly Positions[] }, views: readonly TableView[], bound: BoundShape, field: Field): Read<number> {
  const { side, info } = bound.ref(field);
  const rows = views[side]!.rows as readonly Row[];
  const name = info.id;
  const read = fieldRead(name);
  return (j) => {
    const list = current.positions[side];
    const i = list === undefined ? j : list[j]!;
    if (i < 0) return null;
    return name === '_id' ? readField(rows[i] as Row, name, i) : read(rows[i] as Row);
  };
}

/**
 * One resource's groups: the aggregator reads each kept row itself, not
 * through the joined positions, each field as a property load written into
 * its fold (`fieldRead`).
 */
function* groupedRowsOfOne(bound: BoundShape, joined: Joined): Steps<Row[]> {
  const shape = bound.shape;
  const view = joined.views[0]!;
  const rows = view.rows as readonly Row[];
  const positions = joined.positions[0];
  const read = (field: Field): Read<Row> => fieldRead(bound.ref(field).info.id);
  const aggregator = makeAggregator<Row>({
    keys: shape.keys.map((key) => {
      if (key.kind === 'field') return read(key);
      if (key.kind !== 'bucket') return expressionReader<Row>(key, (f) => ({ read: read(f), type: bound.ref(f).info.type }), true).read;
      const value = read(key.field);
      const bucket = bucketFunction(key.fn === 'bucket' ? { width: key.width!.value } : { unit: key.fn as 'year' | 'month' | 'week' | 'day' });
      return (row) => bucket(value(row));
    }),
    aggregates: shape.aggregates.map((aggregate) => aggregateInput(aggregate, bound, read)),
  });
  const needsPosition = [...shape.keys.flatMap((k) => expressionFields(k)), ...shape.aggregates.flatMap((a) => (a.field === undefined ? [] : expressionFields(a.field)))]
    .some((f) => bound.ref(f).info.id === '_id');
  // `_id` may be the row's position rather than a key it holds: read it as the joined rows do.
  const items = needsPosition ? rows.map((row, i) => (Object.hasOwn(row, '_id') ? row : ({ ...row, _id: readField(row, '_id', i) } as Row))) : rows;
  yield* aggregator.addSteps(items, positions);
  const name = namedColumns(bound);
  return (yield* finishGroups(bound, aggregator.groups())).map(name);
}

/** An ungrouped shape: each joined row as a record of its columns, distinct when asked, in the order asked (then the rows'). */
function* plainRows(bound: BoundShape, joined: Joined): Steps<Row[]> {
  const shape = bound.shape;
  const columns = bound.columns.map((c): JoinedColumn => {
    const value = c.value;
    if (value.kind === 'bucket') return { key: c.name, value: valueReader(joined, bound, value) };
    if (value.kind !== 'field') {
      // an expression: its scaled path written into the records' loop where it has one
      const { read, scaled } = expressionReader<number>(value, (f) => ({ read: reader(joined, bound, f), type: bound.ref(f).info.type }));
      return { key: c.name, value: read, scaled };
    }
    const { side, info } = bound.ref(value);
    return { key: c.name, side, field: info.id };
  });
  const build = joinedRecords(columns);
  const sideRowLists = joined.views.map((view) => view.rows);
  const records = new Array<Record<string, JsonValue>>(joined.length);
  for (let from = 0; from < joined.length; from += SLICE) {
    build(sideRowLists, joined.positions, from, Math.min(joined.length, from + SLICE), records as Record<string, unknown>[]);
    yield;
  }
  // In the joined rows' order: the records alone.
  if (!shape.distinct && shape.order.length === 0) return records as Row[];
  const sortReads = shape.order.map((key) => valueReader(joined, bound, (key.by as { value: Expression }).value));
  const sortTypes: (FieldType | undefined)[] = shape.order.map((key) => {
    const value = (key.by as { value: Expression }).value;
    if (value.kind === 'field') return bound.ref(value).info.type;
    if (value.kind === 'bucket') return value.fn === 'bucket' ? 'numeric' : 'timestamp';
    return expressionReader<number>(value, (f) => ({ read: () => null, type: bound.ref(f).info.type })).type;
  });
  // Each record beside its sort values, distinct when asked.
  const seen = new Set<string>();
  const rows: Record<string, JsonValue>[] = [];
  for (let j = 0; j < records.length; j++) {
    if (j % SLICE === SLICE - 1) yield;
    const record = records[j]!;
    if (shape.distinct) {
      const key = JSON.stringify(bound.columns.map((c) => canonicalText(record[c.name])));
      if (seen.has(key)) continue;
      seen.add(key);
    }
    const entry: Record<string, JsonValue> = { '\u0000': record as unknown as JsonValue };
    sortReads.forEach((read, k) => (entry[`s${k}`] = read(j) ?? null));
    rows.push(entry);
  }
  if (shape.order.length === 0) return rows.map((r) => r['\u0000'] as unknown as Row);
  const sorted = yield* sortRows(rows, shape.order.map((key, k) => ({ slot: `s${k}`, direction: key.direction, nulls: key.nulls, type: sortTypes[k] })));
  return sorted.map((r) => r['\u0000'] as unknown as Row);
}

/** Each facet's values over the kept rows: by count, then value; nulls counted apart. */
function* facetsOf(facets: readonly FacetSpec[], joined: Joined, bound: BoundShape): Steps<Facets> {
  const out: Record<string, FacetResult> = {};
  for (const facet of facets) {
    const read = reader(joined, bound, facet.field);
    const counter = new FacetCounter(facet);
    for (let j = 0; j < joined.length; j++) {
      counter.see(read(j));
      if (j % SLICE === SLICE - 1) yield;
    }
    out[facet.name] = counter.result(bound.ref(facet.field).info.type);
  }
  return out;
}

/**
 * Grouped, joined, renamed and faceted queries on a portal that answers only
 * `datastore_search` (docs/aggregates.md, How each target answers): more
 * operators over the same sources (docs/executor.md). Each resource is read
 * in pages, its `where` pushed down and its `fields` cut to what the query
 * reads; pages are folded into a hash aggregate as they arrive (memory grows
 * with the groups, not the records); a join hashes the smaller side and
 * streams the other past it, first pushing the hashed keys to it as an
 * `in` filter when there are few. `count(*)` alone is one `limit: 0` request.
 */
import type { Condition, Expression, Field, Query } from '../ast.js';
import { isComputed } from '../ast.js';
import type { BoundShape, Shape } from '../compile/shape.js';
import { bindShape, fieldRefText, mapCondition, shapeOf, valueText } from '../compile/shape.js';
import { DEFAULT_MAX_JOIN_ROWS, memberRequest, splitSource } from '../compile/plan.js';
import type { Plan, ShapedPlan, SidePlan, Target } from '../compile/plan.js';
import { bucketFunction } from '../datastore/buckets.js';
import type { FacetResult, Facets, FieldInfo, FieldType, Filters, JsonValue, Row, SearchRequest } from '../datastore/types.js';
import { canonicalText } from '../datastore/values.js';
import { closing } from '../engine/stream.js';
import { FacetCounter, finishGroups, makeAggregator, namedColumns, sortRows } from '../engine/memory/aggregate.js';
import type { Read } from '../engine/memory/aggregate.js';
import { expressionReader } from '../engine/memory/computed.js';
import { residualTest } from '../engine/memory/evaluate-query.js';
import { fieldRead } from '../engine/memory/row-shape.js';
import { joinHint } from '../engine/memory/shaped.js';
import { queryError } from '../errors.js';
import { format, formatField } from '../format.js';
import { filter, limit } from './local.js';
import { breathe, checkSignal } from './operator.js';
import { paced, runSteps } from '../engine/pace.js';
import type { Operator, RunContext, Stream } from './operator.js';
import { keysetPageable, pageScan } from './scan.js';
import { unionScan } from './union.js';
import type { UnionScanMember } from './union.js';
import type { Paging, SendPage } from './scan.js';

/**
 * Records per request of a plan that reads a whole resource: CKAN's
 * `ckan.datastore.search.rows_max` default, so 1M records take 32 pages
 * (and one `limit: 0` count first). `fields` keeps such pages small.
 */
export const SHAPED_PAGE_SIZE = 32_000;

/** At most this many distinct keys of the hashed side are pushed to the other as an `in` filter. */
export const MAX_PUSHED_KEYS = 1_000;

/** What a shaped plan needs of a portal. */
export interface ShapedPortal {
  readonly send: SendPage;
  readonly origin: string;
  /** a join across sources: the source's name as the query writes it (`portal` in `portal:enrolments`), for explain */
  readonly name?: string;
  /** the target its requests are written for, where it differs from the plan's (a union across sources) */
  readonly target?: Exclude<Target, 'sql'>;
}

/** Options of `shapedTree`. */
export interface ShapedOptions {
  /** every group (or record), not only the first 100, unless the query says `limit` */
  readonly all: boolean;
  /** records per request; a plan that reads whole resources uses `SHAPED_PAGE_SIZE` at least */
  readonly pageSize: number;
  /** whether CKAN 2.12's cursor pages a side (a request without `q` or `offset`); `side` counts from `from`'s resource */
  readonly paging: (request: SearchRequest, side: number) => Paging;
  /** a join across sources (docs/aggregates.md): the portal of each side, in place of the one given */
  readonly portals?: readonly ShapedPortal[];
  /** a union across sources: the portal of each resource as written (`portal:crime_2023`), in place of its side's */
  readonly memberPortal?: (written: string) => ShapedPortal;
  /** explain: the portal's count of each side's request (by its JSON), to say how many pages it will take */
  readonly counts?: ReadonlyMap<string, number> | undefined;
}

/** The limit of a query with none, as datastore_search (`rows_default`). */
const DEFAULT_LIMIT = 100;

/**
 * The tree of a shaped plan (`plan.shaped`): each side's scan, the join,
 * the conditions across sides, the aggregate or the records' columns and
 * order, then offset and limit.
 */
export function shapedTree(plan: Plan, portal: ShapedPortal, options: ShapedOptions): Operator {
  const shaped = plan.shaped!;
  const shape = fetched(shapeOf(shaped.query));
  const wanted = shape.limit ?? (options.all ? Number.POSITIVE_INFINITY : DEFAULT_LIMIT);
  const bounds = { offset: shape.offset, limit: wanted, count: true };
  if (shaped.countOnly) return limit(countOnly(shaped, shape, portal), bounds);
  // A query that keeps records as they come (no group, order, distinct or join) stops reading at its limit.
  const streams = !shape.grouped && shape.order.length === 0 && !shape.distinct && shape.sources.length === 1;
  const records = recordsTree(shaped, shape, plan, portal, options, !streams);
  if (shape.grouped) return limit(aggregate(records, shape), bounds);
  return limit(columns(records, shape, !streams), { ...bounds, count: !streams });
}

/**
 * A facet plan (`plan.facets`) over the tree of the query's records: the
 * faceted fields' values are read and counted first, then the records run
 * as without `facet`.
 */
export function facetTree(records: Operator, plan: Plan, query: Query, portal: ShapedPortal, options: ShapedOptions): Operator {
  const reading = plan.facets!;
  const shape = { ...fetched(shapeOf(reading.query)), facets: shapeOf(query).facets };
  const input = recordsTree(reading, shape, plan, portal, options, true);
  return {
    kind: 'facets',
    detail: shape.facets.map((f) => `${f.name}${f.by === undefined ? '' : ` by ${'unit' in f.by ? f.by.unit : f.by.width}`} top ${f.top}`).join(', '),
    inputs: [input, records],
    open: async (context) => {
      const facets = await countFacets(await input.open(context), shape, context);
      const stream = await records.open(context);
      return { ...stream, facets };
    },
  };
}

/**
 * The shape as its operators see it: `where` and `search` were said by the
 * requests and the sides' filters, so the records need not carry the fields
 * they name (a request's `fields` has only what the steps after it read).
 */
function fetched(shape: Shape): Shape {
  const { where: _where, search: _search, ...rest } = shape.query;
  return { ...shape, query: rest };
}

// ---------------------------------------------------------------- reading the sides

/** The records the query's sources give, joined, with the conditions across sides tested: flat records (`fieldKey`). */
function recordsTree(shaped: ShapedPlan, shape: Shape, plan: Plan, portal: ShapedPortal, options: ShapedOptions, whole: boolean): Operator {
  const pageSize = whole ? Math.max(options.pageSize, SHAPED_PAGE_SIZE) : options.pageSize;
  const maxScan = plan.maxScan;
  const scan = (side: SidePlan, request: SearchRequest = side.request): Operator => {
    const index = shaped.sides.indexOf(side);
    const source = options.portals?.[index] ?? portal;
    const pages = (each: SearchRequest, from: ShapedPortal): Operator => described(each, whole ? pageSize : undefined, options.counts, from.name, pageScan({
      request: each,
      send: from.send,
      pageSize,
      // A union's resource of another source pages as its own portal can.
      paging: from.target === undefined || from === source ? options.paging(each, index) : from.target === 'ckan-2.12' && keysetPageable(each) ? 'keyset' : 'offset',
      countFirst: whole,
      origin: from.origin,
      maxScan: { max: maxScan, refuse: (count, read) => tooLarge(shape, plan, count, read) },
    }));
    let tree: Operator;
    if (side.union === undefined) tree = pages(request, source);
    else {
      const union = side.union;
      tree = unionScan(union.members.map((written): UnionScanMember => {
        const from = options.memberPortal?.(written.value) ?? source;
        const resource = options.memberPortal === undefined ? written.value : splitSource(written.value).resource;
        return {
          written,
          resource,
          send: from.send,
          request: (fields) => memberRequest(request, union.condition, resource, fields, from.target ?? union.target),
          scan: (each) => pages(each, from),
        };
      }), request.fields, union.condition === undefined ? undefined : conditionText(union.condition));
    }
    if (side.residual !== undefined) {
      const residual = side.residual;
      const test = { kind: 'query', span: residual.span, from: shape.query.from, where: { kind: 'where', span: residual.span, condition: residual } } as const;
      tree = filter(tree, conditionText(residual), (fields) => residualTest(test, fields));
    }
    return tree;
  };
  if (shape.sources.length === 1) return scan(shaped.sides[0]!);
  let tree = hashJoin(shaped, shape, plan, scan);
  if (shaped.joined !== undefined) {
    const joined = shaped.joined;
    tree = filter(tree, conditionText(joined), (fields) => joinedTest(joined, shape, fields));
  }
  return tree;
}

/**
 * A side's scan as explain shows it: the request it pages, and (when the
 * count is known) how many records and requests that takes: a `limit: 0`
 * count, then a page per `pageSize` records.
 */
function described(request: SearchRequest, pageSize: number | undefined, counts: ReadonlyMap<string, number> | undefined, source: string | undefined, scan: Operator): Operator {
  const total = counts?.get(countKey(source, request));
  const pages = total === undefined || pageSize === undefined ? undefined : Math.max(1, Math.ceil(total / pageSize));
  const predicted = pages === undefined ? '' : `; the count says ${total} records: ${pages + 1} requests (the count, then ${pages} page${pages === 1 ? '' : 's'})`;
  const from = source === undefined ? '' : `from ${source}: `;
  return { ...scan, detail: `${from}${JSON.stringify(request)}, ${scan.detail}${predicted}` };
}

/**
 * The key of a side's count in `ShapedOptions.counts`: its request's JSON, after its source's name across sources.
 * @example countKey('portal', { resource_id: 'courses' }) // 'portal\u0000{"resource_id":"courses"}'
 */
export function countKey(source: string | undefined, request: SearchRequest): string {
  return source === undefined ? JSON.stringify(request) : `${source}\u0000${JSON.stringify(request)}`;
}

function tooLarge(shape: Shape, plan: Plan, count: number, read: number | undefined): Error {
  return queryError('SCAN_TOO_LARGE', shape.query.span, [count, plan.maxScan], {
    hint: [
      read === undefined ? '' : `ckql read ${read} of them without finishing the query; `,
      'narrow it with conditions the portal answers itself',
      '; or raise the limit (--max-scan, maxScan); or, where the portal enables datastore_search_sql, use the sql target, which answers it in one request',
    ].join(''),
  });
}

/** The key a field of side `side` has in a joined record: `side` and the name, apart (a name may hold any character). */
export function joinedKey(side: number, name: string): string {
  return `${side}\u0000${name}`;
}

/**
 * The sides' fields from the fields of the records the tree gives: a joined
 * record's keys name their side; a single resource's are its own.
 */
function sideFields(fields: readonly FieldInfo[], sides: number): FieldInfo[][] {
  if (sides === 1) return [[...fields]];
  const out: FieldInfo[][] = Array.from({ length: sides }, () => []);
  for (const field of fields) {
    const cut = field.id.indexOf('\u0000');
    out[Number(field.id.slice(0, cut))]!.push({ ...field, id: field.id.slice(cut + 1) });
  }
  return out;
}

/** Reads a field of the query from the tree's records. */
function fieldReader(bound: BoundShape, field: Field): Read<Row> {
  const { side, info } = bound.ref(field);
  const key = bound.shape.sources.length === 1 ? info.id : joinedKey(side, info.id);
  if (info.type === 'timestamp') {
    // CKAN 2.12 writes a timestamp with its milliseconds (`…T00:00:00.000`); ckql's answers, as 2.11's, without a zero fraction.
    return (row) => {
      const value = Object.hasOwn(row, key) ? (row[key] ?? null) : null;
      return typeof value === 'string' ? value.replace(ZERO_FRACTION, '') : value;
    };
  }
  // A generated read with the key as a literal, which the aggregate's fold writes inline.
  return fieldRead(key);
}

const ZERO_FRACTION = /\.0+$/;

/** A field, a bucket or an expression (docs/expressions.md) of the tree's records: what the `compute` steps read. */
function valueReader(bound: BoundShape, value: Expression, key = false): Read<Row> {
  if (value.kind === 'field') return fieldReader(bound, value);
  if (value.kind !== 'bucket') return expressionReader<Row>(value, (f) => ({ read: fieldReader(bound, f), type: bound.ref(f).info.type }), key).read;
  const read = fieldReader(bound, value.field);
  const bucket = bucketFunction(value.fn === 'bucket' ? { width: value.width!.value } : { unit: value.fn as 'year' | 'month' | 'week' | 'day' });
  return (row) => bucket(read(row));
}

/** A key's text for the hash: canonical (`=` compares so); null never matches. */
function keyText(values: readonly (JsonValue | null | undefined)[]): string | undefined {
  if (values.some((v) => v === null || v === undefined)) return undefined;
  return values.length === 1 ? (canonicalText(values[0]!) ?? undefined) : JSON.stringify(values.map((v) => canonicalText(v!)));
}

/** The conditions across sides, as a test of joined records. */
function joinedTest(condition: Condition, shape: Shape, fields: readonly FieldInfo[]): (row: Row, position: number) => boolean {
  const bound = bindShape(shape, sideFields(fields, shape.sources.length));
  const rewritten = mapCondition(condition, (f: Field) => {
    const ref = bound.ref(f);
    return { kind: 'field', span: f.span, name: joinedKey(ref.side, ref.info.id) } as Field;
  });
  return residualTest({ kind: 'query', span: condition.span, from: shape.query.from, where: { kind: 'where', span: condition.span, condition: rewritten } }, fields);
}

// ---------------------------------------------------------------- join

/**
 * SQL's inner and left equality joins of the sides, in the order written.
 * The first join hashes the smaller of its two sides (by the portal's
 * `total`; a left join's left side may be hashed too: its rows that found no
 * match are given at the end); each later join hashes the side it adds.
 * Before the other side is read, the hashed keys go to it as an `in`
 * filter when they are at most `MAX_PUSHED_KEYS` and one pair joins them.
 */
function hashJoin(shaped: ShapedPlan, shape: Shape, plan: Plan, scan: (side: SidePlan, request?: SearchRequest) => Operator): Operator {
  const inputs = shaped.sides.map((side) => scan(side));
  const maxJoinRows = plan.maxJoinRows ?? DEFAULT_MAX_JOIN_ROWS;
  return {
    kind: 'join',
    detail: shape.joins
      .map((join, j) => `${join.left ? 'left join' : 'join'} ${shape.sources[j + 1]!.qualifier} on ${join.on.map((p) => `${fieldRefText(p.left)} = ${fieldRefText(p.right)}`).join(' and ')}`)
      .concat(['the smaller side hashed (by the count), its keys pushed to the other as an in filter when at most 1000'])
      .join('; '),
    inputs,
    open: async (context) => {
      const opened: (Stream | undefined)[] = [];
      const release = async (): Promise<void> => {
        for (const stream of opened) await stream?.batches.return();
      };
      try {
        // Every side is counted (a limit: 0 request each) before any record is read.
        for (const input of inputs) opened.push(await input.open(context));
        const totals = opened.map((s) => s!.total);
        const sum = totals.reduce<number>((a, b) => a + (b ?? 0), 0);
        const fields = opened.map((s) => s!.fields);
        const bound = bindShape(shape, fields.map((list) => [...list]));
        const flatFields: FieldInfo[] = fields.flatMap((list, side) => list.map((f) => ({ ...f, id: joinedKey(side, f.id) })));
        const pairs = shape.joins.map((join) =>
          join.on.map((pair) => {
            const a = bound.ref(pair.left);
            const b = bound.ref(pair.right);
            // each pair as (the side already joined, the side this join adds)
            return a.side > b.side ? { added: a, earlier: b, addedField: pair.left, earlierField: pair.right } : { added: b, earlier: a, addedField: pair.right, earlierField: pair.left };
          }),
        );
        // One pair of keys, and (in a left join) not into the side whose every record is kept: an in filter would drop its misses.
        const firstPushable = pairs[0]!.length === 1;
        const smallerLeft = totals[0] !== undefined && totals[1] !== undefined && totals[0] < totals[1];
        if (sum > plan.maxScan && !(firstPushable && !(shape.joins[0]!.left && smallerLeft === false))) throw tooLarge(shape, plan, sum, undefined);
        async function* rows(): AsyncGenerator<readonly Row[], void, undefined> {
          // The first join: hash one side, read it whole.
          const buildSide = smallerLeft ? 0 : 1;
          const probeSide = 1 - buildSide;
          const buildKeys = pairs[0]!.map((p) => (buildSide === p.added.side ? p.addedField : p.earlierField));
          const probeKeys = pairs[0]!.map((p) => (probeSide === p.added.side ? p.addedField : p.earlierField));
          const buildReads = buildKeys.map((f) => plainReader(bound, f));
          const hashed = new Map<string, Row[]>();
          const buildRows: Row[] = [];
          for await (const batch of opened[buildSide]!.batches) {
            await breathe(context);
            for (const row of batch) {
              buildRows.push(row);
              const key = keyText(buildReads.map((read) => read(row)));
              if (key === undefined) continue;
              const list = hashed.get(key);
              if (list === undefined) hashed.set(key, [row]);
              else list.push(row);
            }
          }
          // Few keys: the other side is asked only for records that can match.
          let probe = opened[probeSide]!;
          if (firstPushable && !(shape.joins[0]!.left && probeSide === 0) && hashed.size <= MAX_PUSHED_KEYS) {
            const pushed = withKeys(shaped.sides[probeSide]!.request, bound.ref(probeKeys[0]!).info.id, [...hashed.values()].map((list) => buildReads[0]!(list[0]!) as JsonValue));
            if (pushed !== undefined) {
              await probe.batches.return();
              const narrowed = scan(shaped.sides[probeSide]!, pushed);
              probe = await narrowed.open(context);
              opened[probeSide] = probe;
            }
          }
          const read = buildRows.length + (probe.total ?? 0);
          if (read > plan.maxScan) throw tooLarge(shape, plan, read, buildRows.length);
          const leftJoin = shape.joins[0]!.left;
          const matched = leftJoin && buildSide === 0 ? new Set<Row>() : undefined;
          const probeReads = probeKeys.map((f) => plainReader(bound, f));
          const probeKey = (row: Row): string | undefined => keyText(probeReads.map((r) => r(row)));
          const refuse = joinRefusal(shape, pairs, maxJoinRows);
          // The most rows the join can give, from the hash and the other side's count; past the bound, the other
          // side (at most maxScan records) is read first and the rows counted exactly, so the join is refused before it runs.
          let most = 0;
          for (const list of hashed.values()) most = Math.max(most, list.length);
          const perProbe = leftJoin && probeSide === 0 ? Math.max(1, most) : most;
          const unmatchedAtMost = matched === undefined ? 0 : buildRows.length;
          let probeBatches: AsyncIterable<readonly Row[]> | Iterable<readonly Row[]> = probe.batches;
          if ((probe.total ?? Number.POSITIVE_INFINITY) * perProbe + unmatchedAtMost > maxJoinRows) {
            const held: (readonly Row[])[] = [];
            for await (const batch of probe.batches) {
              await breathe(context);
              held.push(batch);
            }
            const counted = countJoined(held, probeKey, hashed, leftJoin && probeSide === 0, matched !== undefined, buildRows.length);
            if (counted.rows > maxJoinRows) throw refuse(0, counted.rows, true, counted.multiplying);
            probeBatches = held;
          }
          const later = shape.joins.slice(1);
          const joinLater = laterJoins(later, pairs.slice(1), opened.slice(2), bound, context, maxJoinRows, (j, rows) => refuse(j, rows, false, []));
          // The first join's rows: given on in batches of at most JOINED_BATCH, each through the later joins.
          let given = 0;
          let joined: Row[] = [];
          const add = (row: Row): void => {
            if (++given > maxJoinRows) throw refuse(0, maxJoinRows, false, []);
            joined.push(row);
          };
          const out = (left: Row | null, right: Row | null): Row => {
            const record: Record<string, JsonValue> = {};
            put(record, 0, buildSide === 0 ? left : right, fields[0]!);
            put(record, 1, buildSide === 0 ? right : left, fields[1]!);
            return record as Row;
          };
          for await (const batch of probeBatches) {
            await breathe(context);
            for (const row of batch) {
              const key = probeKey(row);
              const matches = key === undefined ? undefined : hashed.get(key);
              if (matches !== undefined) {
                for (const m of matches) {
                  matched?.add(m);
                  add(out(m, row));
                }
              } else if (leftJoin && probeSide === 0) {
                add(out(null, row));
              }
              if (joined.length >= JOINED_BATCH) {
                const next = await joinLater(joined);
                joined = [];
                await breathe(context);
                if (next.length > 0) yield next;
              }
            }
          }
          if (matched !== undefined) for (const row of buildRows) if (!matched.has(row)) add(out(row, null));
          // What is left, in batches as above.
          for (let from = 0; from < joined.length; from += JOINED_BATCH) {
            const next = await joinLater(joined.slice(from, from + JOINED_BATCH));
            if (next.length > 0) yield next;
          }
        }
        return { fields: flatFields, batches: closing(rows(), release) };
      } catch (error) {
        await release();
        throw error;
      }
    },
  };
}

/** Joined records a join gives on at once: the operators above fold or hold them a batch at a time. */
const JOINED_BATCH = 10_000;

/** A key of the join and the records of each side that have it. */
interface KeyCount {
  readonly key: string;
  readonly left: number;
  readonly right: number;
}

/**
 * The refusal of join `j` (0: the first) past the bound: `rows` counted
 * (`exact`), or the bound met while it ran; with the keys that multiply
 * and what to write instead (joinHint, as the memory engine says it).
 */
function joinRefusal(
  shape: Shape,
  pairs: readonly (readonly { added: { side: number; info: FieldInfo } }[])[],
  max: number,
): (j: number, rows: number, exact: boolean, multiplying: readonly KeyCount[]) => Error {
  return (j, rows, exact, multiplying) => {
    const join = shape.joins[j]!;
    const source = shape.sources[j + 1]!;
    const example = { resource: source.resource, key: pairs[j]![0]!.added.info.id, qualifier: source.qualifier };
    return queryError('JOIN_TOO_LARGE', join.span, [rows, max, exact], { hint: joinHint(join, example, multiplying) });
  };
}

/**
 * The records the first join gives over the other side's records (`held`):
 * for each, the hashed records of its key (a left join from it: at least
 * one), and (a left join into it) the hashed records no key met; with the
 * keys that multiply the most.
 */
function countJoined(
  held: readonly (readonly Row[])[],
  keyOf: (row: Row) => string | undefined,
  hashed: ReadonlyMap<string, readonly Row[]>,
  keepProbe: boolean,
  keepHashed: boolean,
  hashedCount: number,
): { rows: number; multiplying: KeyCount[] } {
  const hits = new Map<string, number>();
  let rows = 0;
  for (const batch of held) {
    for (const row of batch) {
      const key = keyOf(row);
      const matches = key === undefined ? undefined : hashed.get(key);
      if (matches === undefined) {
        if (keepProbe) rows += 1;
        continue;
      }
      rows += matches.length;
      hits.set(key!, (hits.get(key!) ?? 0) + 1);
    }
  }
  if (keepHashed) {
    let met = 0;
    for (const key of hits.keys()) met += hashed.get(key)!.length;
    rows += hashedCount - met;
  }
  const multiplying = [...hits]
    .map(([key, n]) => ({ key, left: n, right: hashed.get(key)!.length }))
    .sort((a, b) => b.left * b.right - a.left * a.right)
    .slice(0, 3);
  return { rows, multiplying };
}

/** A field's value in its own side's record (before joining). */
function plainReader(bound: BoundShape, field: Field): Read<Row> {
  const name = bound.ref(field).info.id;
  return (row) => (Object.hasOwn(row, name) ? (row[name] ?? null) : null);
}

/** Copies a side's record (or nulls, for a left join's missing side) into a joined record. */
function put(record: Record<string, JsonValue>, side: number, row: Row | null, fields: readonly FieldInfo[]): void {
  for (const field of fields) {
    const key = joinedKey(side, field.id);
    Object.defineProperty(record, key, { value: row === null || !Object.hasOwn(row, field.id) ? null : (row[field.id] ?? null), enumerable: true, writable: true, configurable: true });
  }
}

/** The joins after the first: each hashes the side it adds (read whole, once), then joins each batch of joined records to it. */
function laterJoins(
  joins: Shape['joins'],
  pairs: readonly { added: { side: number; info: FieldInfo }; earlier: { side: number; info: FieldInfo } }[][],
  streams: readonly (Stream | undefined)[],
  _bound: BoundShape,
  context: RunContext,
  max: number,
  refuse: (j: number, rows: number) => Error,
): (rows: Row[]) => Promise<Row[]> {
  // The rows each later join has given so far: one past `max` stops the query.
  const given = joins.map(() => 0);
  if (joins.length === 0) return (rows) => Promise.resolve(rows);
  const tables: Promise<{ hashed: Map<string, Row[]>; fields: readonly FieldInfo[] }>[] = [];
  const tableOf = (j: number) =>
    (tables[j] ??= (async () => {
      const stream = streams[j]!;
      const hashed = new Map<string, Row[]>();
      const names = pairs[j]!.map((p) => p.added.info.id);
      for await (const batch of stream.batches) {
        checkSignal(context);
        for (const row of batch) {
          const key = keyText(names.map((n) => (Object.hasOwn(row, n) ? (row[n] ?? null) : null)));
          if (key === undefined) continue;
          const list = hashed.get(key);
          if (list === undefined) hashed.set(key, [row]);
          else list.push(row);
        }
      }
      return { hashed, fields: stream.fields };
    })());
  return async (rows) => {
    let current = rows;
    for (let j = 0; j < joins.length; j++) {
      const { hashed, fields } = await tableOf(j);
      const side = j + 2;
      const keys = pairs[j]!.map((p) => joinedKey(p.earlier.side, p.earlier.info.id));
      const next: Row[] = [];
      for (const row of current) {
        const key = keyText(keys.map((k) => row[k] ?? null));
        const matches = key === undefined ? undefined : hashed.get(key);
        const adds = matches === undefined ? (joins[j]!.left ? 1 : 0) : matches.length;
        if ((given[j]! += adds) > max) throw refuse(j + 1, max);
        if (matches === undefined) {
          if (joins[j]!.left) {
            const record = { ...row } as Record<string, JsonValue>;
            put(record, side, null, fields);
            next.push(record as Row);
          }
          continue;
        }
        for (const m of matches) {
          const record = { ...row } as Record<string, JsonValue>;
          put(record, side, m, fields);
          next.push(record as Row);
        }
      }
      current = next;
    }
    return current;
  };
}

/**
 * The request with the hashed side's keys as an `in` filter on `name`
 * (a list value: `in` in 2.11's and 2.12's filters); undefined when the
 * request already filters that field or its filters are not a plain object.
 */
function withKeys(request: SearchRequest, name: string, values: readonly JsonValue[]): SearchRequest | undefined {
  const filters = request.filters;
  if (filters !== undefined && (Array.isArray(filters) || Object.hasOwn(filters, name))) return undefined;
  if (name.startsWith('$') || values.some((v) => typeof v === 'object')) return undefined;
  const added: Record<string, unknown> = { ...(filters as Record<string, unknown> | undefined) };
  Object.defineProperty(added, name, { value: values, enumerable: true, writable: true, configurable: true });
  return { ...request, filters: added as Filters };
}

// ---------------------------------------------------------------- aggregate

/**
 * The hash aggregate: each batch folded into its groups as it arrives;
 * at the end, `having`, the order (then the keys), and the columns named.
 */
function aggregate(input: Operator, shape: Shape): Operator {
  const computed = computedText(shape);
  const detail = [
    shape.keys.length === 0 ? 'one group' : `group by ${shape.keys.map((k) => valueText(k)).join(', ')}`,
    shape.aggregates.length === 0 ? '' : `: ${shape.aggregates.map((a) => valueText(a)).join(', ')}`,
    shape.query.having === undefined ? '' : `, having ${conditionText(shape.query.having.condition as Condition)}`,
    shape.order.length === 0 ? ', in key order' : ', then sorted',
    computed === '' ? '' : `; computes ${computed}`,
  ].join('');
  return {
    kind: 'aggregate',
    detail: `${detail}; pages folded in as they arrive (memory grows with groups, not records)`,
    inputs: [input],
    open: async (context) => {
      const upstream = await input.open(context);
      let bound: BoundShape;
      try {
        bound = bindShape(shape, sideFields(upstream.fields, shape.sources.length));
      } catch (error) {
        await upstream.batches.return();
        throw error;
      }
      // One read per field, so aggregates of one field share their state (sum and avg).
      const reads = new Map<string, Read<Row>>();
      const read = (field: Field): Read<Row> => {
        const { side, info } = bound.ref(field);
        const key = joinedKey(side, info.id);
        let made = reads.get(key);
        if (made === undefined) reads.set(key, (made = fieldReader(bound, field)));
        return made;
      };
      const aggregator = makeAggregator<Row>({
        keys: shape.keys.map((key) => valueReader(bound, key, true)),
        // an aggregate of an expression (sum(price * qty)) folds the value computed from each record's fields
        aggregates: shape.aggregates.map((a) => ({
          aggregate: a,
          ...(a.field === undefined ? {} : { read: a.field.kind === 'field' ? read(a.field) : valueReader(bound, a.field) }),
          type: a.field === undefined ? undefined : bound.recordType(a.field),
        })),
      });
      const fields = bound.columns.map((c) => ({ id: c.name, type: c.type }));
      // The groups are known only when the input ends: the first batch waits for them.
      const groups: Row[] = [];
      async function* batches(): AsyncGenerator<readonly Row[], void, undefined> {
        for await (const batch of upstream.batches) {
          await breathe(context);
          aggregator.addAll(batch);
        }
        groups.push(...(await paced(finishGroups(bound, aggregator.groups()), context.signal)).map(namedColumns(bound)));
        for (let from = 0; from < groups.length; from += 1000) yield groups.slice(from, from + 1000);
      }
      const stream: Stream = {
        fields,
        batches: closing(batches(), () => upstream.batches.return()),
        outcome: () => ({ matched: groups.length, more: false }),
      };
      return stream;
    },
  };
}

/** `count(*)` alone (and its `having`): the first side's `limit: 0` request says it. */
function countOnly(shaped: ShapedPlan, shape: Shape, portal: ShapedPortal): Operator {
  const request: SearchRequest = { ...shaped.sides[0]!.request, limit: 0 };
  return {
    kind: 'request',
    detail: 'count(*) alone: one request with limit 0, its total the count',
    inputs: [],
    open: async (context) => {
      checkSignal(context);
      context.stats.requests += 1;
      const answer = await portal.send(request, context.signal);
      const total = answer.total ?? 0;
      const bound = bindShape(shape, [answer.fields]);
      const row: Record<string, JsonValue> = {};
      shape.aggregates.forEach((_, i) => (row[`a${i}`] = total));
      const groups = runSteps(finishGroups(bound, [row as Row])).map(namedColumns(bound));
      async function* batches(): AsyncGenerator<readonly Row[], void, undefined> {
        if (groups.length > 0) yield groups;
      }
      return { resource: answer.resource_id, fields: bound.columns.map((c) => ({ id: c.name, type: c.type })), batches: batches(), total: groups.length };
    },
  };
}

// ---------------------------------------------------------------- the records of an ungrouped shape

/**
 * An ungrouped shape's records: each with its columns, distinct when asked,
 * in the order asked, then (for a join) in the order of the first
 * resource's records, each with its matches in theirs. Without an order,
 * distinct or join, records go on as they come.
 */
/** The select items a step computes (docs/expressions.md), as explain shows them: `price * qty as total, …`; '' for none. */
function computedText(shape: Shape): string {
  return (shape.columns ?? []).filter((c) => isComputed(c.value)).map((c) => `${valueText(c.value)} as ${formatField(c.name)}`).join(', ');
}

function columns(input: Operator, shape: Shape, holds: boolean): Operator {
  const computed = computedText(shape);
  const order = `${shape.distinct ? 'distinct, ' : ''}${shape.order.length === 0 ? "in the records' order" : 'sorted'}: holds every record`;
  return {
    kind: holds ? 'sort' : computed === '' ? 'project' : 'compute',
    // `sort computes x as y; sorted…`, and `compute x as y; …`, where the kind says it
    detail: holds ? `${computed === '' ? '' : `computes ${computed}; `}${order}` : `${computed === '' ? '' : `${computed}; `}the select list, renamed`,
    inputs: [input],
    open: async (context) => {
      const upstream = await input.open(context);
      let bound: BoundShape;
      try {
        bound = bindShape(shape, sideFields(upstream.fields, shape.sources.length));
      } catch (error) {
        await upstream.batches.return();
        throw error;
      }
      const reads = bound.columns.map((c) => ({ name: c.name, read: valueReader(bound, c.value) }));
      const fields = bound.columns.map((c) => ({ id: c.name, type: c.type }));
      const record = (row: Row): Record<string, JsonValue> => {
        const out: Record<string, JsonValue> = {};
        for (const { name, read } of reads) Object.defineProperty(out, name, { value: read(row) ?? null, enumerable: true, writable: true, configurable: true });
        return out;
      };
      if (!holds) {
        async function* stream(): AsyncGenerator<readonly Row[], void, undefined> {
          for await (const batch of upstream.batches) {
            checkSignal(context);
            yield batch.map((row) => record(row) as Row);
          }
        }
        return { fields, batches: closing(stream(), () => upstream.batches.return()) };
      }
      const sides = shape.sources.length;
      const sortReads = [
        ...shape.order.map((key) => valueReader(bound, (key.by as { value: Expression }).value)),
        ...Array.from({ length: sides }, (_, side): Read<Row> => {
          const key = sides === 1 ? '_id' : joinedKey(side, '_id');
          return (row) => row[key] ?? null;
        }),
      ];
      const sortTypes: (FieldType | undefined)[] = [
        ...shape.order.map((key) => {
          const value = (key.by as { value: Expression }).value;
          if (value.kind === 'field') return bound.ref(value).info.type;
          if (value.kind === 'bucket') return value.fn === 'bucket' ? 'numeric' : 'timestamp';
          return expressionReader<Row>(value, (f) => ({ read: () => null, type: bound.ref(f).info.type })).type;
        }),
        ...Array.from({ length: sides }, (): FieldType => 'int'),
      ];
      const kept: Record<string, JsonValue>[] = [];
      const seen = new Set<string>();
      async function* sorted(): AsyncGenerator<readonly Row[], void, undefined> {
        for await (const batch of upstream.batches) {
          await breathe(context);
          for (const row of batch) {
            const out = record(row);
            if (shape.distinct) {
              const key = JSON.stringify(bound.columns.map((c) => canonicalText(out[c.name] ?? null)));
              if (seen.has(key)) continue;
              seen.add(key);
            }
            const entry: Record<string, JsonValue> = { '\u0000': out as unknown as JsonValue };
            sortReads.forEach((read, k) => (entry[`s${k}`] = read(row) ?? null));
            kept.push(entry);
          }
        }
        const keys = sortReads.map((_, k) => ({
          slot: `s${k}`,
          direction: k < shape.order.length ? shape.order[k]!.direction : ('asc' as const),
          nulls: k < shape.order.length ? shape.order[k]!.nulls : undefined,
          type: sortTypes[k],
        }));
        const rows = (await paced(sortRows(kept, keys), context.signal)).map((entry) => entry['\u0000'] as unknown as Row);
        for (let from = 0; from < rows.length; from += 1000) yield rows.slice(from, from + 1000);
      }
      return { fields, batches: closing(sorted(), () => upstream.batches.return()), outcome: () => ({ matched: kept.length, more: false }) };
    },
  };
}

// ---------------------------------------------------------------- facets

/** Each facet's values over every record the stream gives: by count, then value; nulls apart. */
async function countFacets(stream: Stream, shape: Shape, context: RunContext): Promise<Facets> {
  const bound = bindShape({ ...shape, columns: [], grouped: false, aggregates: [], keys: [], order: [], having: undefined } as Shape, sideFields(stream.fields, shape.sources.length));
  const counters = shape.facets.map((facet) => ({ read: fieldReader(bound, facet.field), counter: new FacetCounter(facet) }));
  for await (const batch of stream.batches) {
    await breathe(context);
    for (const row of batch) for (const { read, counter } of counters) counter.see(read(row));
  }
  const out: Record<string, FacetResult> = {};
  for (const { counter } of counters) out[counter.facet.name] = counter.result(bound.ref(counter.facet.field).info.type);
  return out;
}

/** A condition as the language writes it. */
function conditionText(condition: Condition): string {
  const query = { kind: 'query', span: condition.span, from: { kind: 'from', span: condition.span, resource: { kind: 'string', span: condition.span, value: 'x' } }, where: { kind: 'where', span: condition.span, condition } } as const;
  return format(query).split('\n').slice(1).join(' ').replace(/^where\s+/, '');
}

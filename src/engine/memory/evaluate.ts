/**
 * The local evaluator: a `datastore_search` request run over a table, exactly
 * as the server answers it (docs/semantics.md). The memory engine calls this.
 *
 * One way per step, each chosen for clarity and measured (BENCHMARKS.md,
 * Evaluate): filters run as one generated pass over the row objects
 * (predicate.ts), narrowed first by an equality index where a field has one
 * (equality-index.ts); a string `q` searches a per-table normalized text
 * (text-search.ts); a small page of a sorted result comes from a bounded
 * heap, a large one from a full sort.
 */
import type { CkanVersion, FieldInfo, JsonValue, Row, SearchRequest, SearchResult, Table } from '../../datastore/types.js';
import { filtersVersion } from '../../datastore/filters.js';
import type { FilterNode } from '../../datastore/filters.js';
import { filterTreeOf, formatSort, isCanonicalRequest, normalizeRequest, parseSort, refuseUnknownListFields } from '../../datastore/validate.js';
import type { SortItem } from '../../datastore/validate.js';
import { canonicalText, compareNumberColumn, compareValues, isNumberType } from '../../datastore/values.js';
import { toolError, validationError } from '../../errors.js';
import { codesAlong, countRows, equalityIndex, keepEqual, lookupRows, wantedTexts } from './equality-index.js';
import type { EqualityIndex } from './equality-index.js';
import { bySelectivity, conditionOf, fieldReader, scanFor } from './predicate.js';
import type { Condition, Scan } from './predicate.js';
import { recordFactory } from './row-shape.js';
import type { RecordFactory } from './row-shape.js';
import { fieldSearchTest, searchRows, textQuery } from './text-search.js';
import type { TsQuery } from './text-search.js';
import { completeFields, declaredFields, refuseNonJson, tableView } from './table-view.js';
import type { FieldDeclaration, TableView } from './table-view.js';
import { runSteps, SLICE } from '../pace.js';
import type { Steps } from '../pace.js';
import { sortSteps } from './sort-steps.js';

export type { FieldDeclaration } from './table-view.js';

/**
 * Options of `evaluate`: what the server is configured with.
 * @example
 * evaluate({ resource_id: 'courses', limit: 500 }, courses, { maxLimit: 100 }).limit // 100
 */
export interface EvaluateOptions {
  /** the server's maximum `limit`; a larger one is capped silently (default 32000, as CKAN) */
  readonly maxLimit?: number;
  /**
   * the CKAN version whose reading of the request this is: how `filters` are
   * read (2.12's operators, `$or`, lists of filter dicts) and whose messages
   * a Validation Error uses (2.12 words an unknown filter field differently).
   * Default: 2.12 for filters in a form only 2.12 reads (`compile(q, { target:
   * 'ckan-2.12' })`'s `{"gte": 5}`, `$or`; `filtersVersion`), else 2.11
   */
  readonly ckan?: CkanVersion;
  /**
   * The fields of plain records, declared as CKAN's `datastore_create` takes
   * them (`[{ id, type }]`, or names; `FieldDeclaration`), in place of the
   * fields inferred from every key of every record: the answer's fields are
   * these (`_id` first), a record without one holds null, and a record's
   * other keys are no fields, as in a table made with these fields. A field
   * without a type is typed by its first non-null value. Not for a `Table`,
   * whose fields are its own. Mistakes are `DATA_INVALID` errors.
   * @example
   * evaluate(compile('from courses where year = 2021'), courses, { fields: ['title', { id: 'year', type: 'int' }] }).fields
   * // → [{ id: "_id", type: "int" }, { id: "title", type: "text" }, { id: "year", type: "int4" }]
   */
  readonly fields?: readonly FieldDeclaration[];
}

/** `limit` when the request has none (CKAN's `ckan.datastore.search.rows_default`). */
export const DEFAULT_LIMIT = 100;
/** the cap on `limit` unless configured (CKAN's `ckan.datastore.search.rows_max`). */
export const DEFAULT_MAX_LIMIT = 32000;

/**
 * A plain record the evaluator accepts: any object whose values are JSON
 * values (an `interface` works; a `Date` does not: give dates as ISO text).
 * @example
 * interface Course { title: string; year: number }
 * const courses: Course[] = [{ title: 'Algebra', year: 2020 }];
 * evaluate({ resource_id: 'courses', filters: { year: 2020 } }, courses).total // 1
 */
export type PlainRecord<R> = { readonly [K in keyof R]?: JsonValue | undefined };

/**
 * Runs a request over a table, as the server does (docs/semantics.md):
 *
 * 1. validates and normalizes the request (`normalizeRequest`); a field name
 *    in `fields`, `filters`, `q` or `sort` that the table does not have is a
 *    Validation Error (checked in that order, as CKAN does:
 *    `{"__type": "Validation Error", "filters": ["invalid value \"f\""]}`;
 *    for `sort` the message quotes the clause, `"invalid value \"f desc\""`);
 * 2. keeps the records that pass the filter tree (`=`/`in` by canonical
 *    text; `<`, `<=`, `>`, `>=` by the field's type; null compares as
 *    unknown) and `q` (a string: some field other than `_id` contains it, NFKC +
 *    lower case; an object: each named field contains its text;
 *    `plain: false`: the `to_tsquery` subset of text-search.ts);
 * 3. with `distinct`, keeps the first record of each distinct projection;
 * 4. orders them by `sort` (stable; nulls last ascending and first
 *    descending unless `nulls first|last` says otherwise), else by `_id`;
 * 5. counts them (`total`), skips `offset`, takes `limit` (default 100,
 *    capped at `options.maxLimit`; `0` gives no records but the total);
 * 6. projects them onto `fields`, in its order (CKAN's `rank` columns are
 *    the server's to add: the memory engine does not rank).
 *
 * `source` is a `Table` (its field list is authoritative) or plain records:
 * then the fields are inferred (`_id` first, then keys in order of first
 * appearance, typed by their first non-null value), a record without `_id`
 * gets its 1-based position, and an unknown name is a Validation Error, as
 * on the server. Input objects are never changed. `resource_id` is not
 * checked (the caller chose the table); the result reports the table's id,
 * or the request's for plain records. The result has no `_links`: the
 * server adds them.
 *
 * @example
 * const courses = tableFromRows([
 *   { title: 'Algebra', subject: 'math', year: 2020 },
 *   { title: 'Poetry', subject: 'arts', year: 2021 },
 *   { title: 'Geometry', subject: 'math', year: 2021 },
 * ], { alias: 'courses' });
 * evaluate(compile('from courses where subject = math order by year desc select title limit 1'), courses);
 * // → { resource_id: "<id of courses>", fields: [{ id: "title", type: "text" }],
 * //     records: [{ title: "Geometry" }], total: 2, total_was_estimated: false,
 * //     limit: 1, filters: { subject: "math" }, sort: "year desc",
 * //     include_total: true, records_format: "objects" }
 */
export function evaluate(request: SearchRequest, source: Table, options?: EvaluateOptions): SearchResult;
export function evaluate<R extends PlainRecord<R>>(request: SearchRequest, rows: readonly R[], options?: EvaluateOptions): SearchResult;
export function evaluate(request: SearchRequest, source: Table | readonly Row[], options?: EvaluateOptions): SearchResult;
export function evaluate(request: SearchRequest, source: Table | readonly object[], options: EvaluateOptions = {}): SearchResult {
  return runSteps(evaluateSteps(request, source, options));
}

/**
 * `evaluate` as steps (engine/pace.ts): the memory engine's `search` runs
 * them paced, so its signal stops a long scan, index build or sort within
 * one slice.
 * @example
 * await paced(evaluateSteps(compile('from courses where year = 2021'), courses), signal) // the result of evaluate
 */
export function* evaluateSteps(request: SearchRequest, source: Table | readonly object[], options: EvaluateOptions = {}): Steps<SearchResult> {
  const declared = options.fields === undefined ? undefined : declaredFields(options.fields);
  if (declared !== undefined && !Array.isArray(source)) {
    throw toolError('DATA_INVALID', ['fields', 'a Table has its own fields: the fields option declares the fields of plain records'], { key: 'fields' });
  }
  // A request in a form only 2.12 reads is answered as 2.12 (2.11 refuses it), without being told.
  const read = options.ckan !== undefined || request.filters === undefined || filtersVersion(request.filters) === '2.11' ? options : { ...options, ckan: '2.12' as const };
  return yield* answer(canonicalOf(request, read.ckan), tableView(source as Table | readonly Row[], declared), read);
}

/**
 * The canonical form of each deeply frozen request (as `compile` returns
 * them), per CKAN version: an embedder that runs one compiled request over
 * many arrays has it validated once. A request that can change is
 * validated on every call.
 */
const canonicalByRequest = new WeakMap<object, Map<CkanVersion | undefined, SearchRequest>>();

function canonicalOf(request: SearchRequest, ckan: CkanVersion | undefined): SearchRequest {
  if (isCanonicalRequest(request)) return request;
  const known = canonicalByRequest.get(request)?.get(ckan);
  if (known !== undefined) return known;
  if (fixedData(request, 0)) {
    const normalized = normalizeRequest(request, ckan === undefined ? {} : { ckan });
    let byVersion = canonicalByRequest.get(request);
    if (byVersion === undefined) canonicalByRequest.set(request, (byVersion = new Map()));
    byVersion.set(ckan, normalized);
    return normalized;
  }
  // A request that can change (`{ ...compiled, fields }`, made anew for each call) is known by its content when that
  // is plain JSON: the same content is the same canonical request, so its conditions and scan are made once.
  const content = plainJsonText(request);
  if (content === undefined) return normalizeRequest(request, ckan === undefined ? {} : { ckan });
  const key = `${ckan ?? ''}\n${content}`;
  const cached = canonicalByContent.get(key);
  if (cached !== undefined) return cached;
  const normalized = normalizeRequest(request, ckan === undefined ? {} : { ckan });
  if (canonicalByContent.size >= CANONICAL_BY_CONTENT_MAX) canonicalByContent.clear();
  canonicalByContent.set(key, normalized);
  return normalized;
}

/** Canonical requests by their content's JSON text (plainJsonText), for requests that can change. Bounded: cleared when full. */
const canonicalByContent = new Map<string, SearchRequest>();
const CANONICAL_BY_CONTENT_MAX = 64;
/** A request's text that is too long to be worth keying by (a long list of values): validated each time instead. */
const CONTENT_TEXT_MAX = 4_096;

/**
 * The JSON text of a value made only of strings, finite numbers (not -0),
 * booleans, null, arrays and plain objects with no accessor (what JSON says
 * exactly: two such values with one text are alike); undefined for anything
 * else or a text past CONTENT_TEXT_MAX.
 */
function plainJsonText(value: unknown): string | undefined {
  let size = 0;
  const plain = (v: unknown, depth: number): boolean => {
    if (++size > 512 || depth > 8) return false;
    if (v === null || typeof v === 'string' || typeof v === 'boolean') return true;
    if (typeof v === 'number') return Number.isFinite(v) && !Object.is(v, -0);
    if (typeof v !== 'object') return false;
    if (Array.isArray(v)) return Object.getPrototypeOf(v) === Array.prototype && v.every((item) => plain(item, depth + 1)) && Object.keys(v).length === v.length;
    const proto: unknown = Object.getPrototypeOf(v);
    if (proto !== Object.prototype && proto !== null) return false;
    for (const descriptor of Object.values(Object.getOwnPropertyDescriptors(v))) {
      if (!('value' in descriptor) || !descriptor.enumerable || !plain(descriptor.value, depth + 1)) return false;
    }
    return Object.getOwnPropertySymbols(v).length === 0;
  };
  if (!plain(value, 0)) return undefined;
  const text = JSON.stringify(value);
  return text.length > CONTENT_TEXT_MAX ? undefined : text;
}

/** Whether a value can never change: a primitive, or a frozen plain object or array of such values, without accessors (and not too deep to look at). */
function fixedData(value: unknown, depth: number): boolean {
  if (typeof value !== 'object' || value === null) return typeof value !== 'function';
  if (depth > 8 || !Object.isFrozen(value)) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== Array.prototype && proto !== null) return false;
  for (const descriptor of Object.values(Object.getOwnPropertyDescriptors(value))) {
    if (!('value' in descriptor) || !fixedData(descriptor.value, depth + 1)) return false;
  }
  return true;
}

/** What a request asks of every table, its names checked and its conditions made, before a row is read. */
interface Prepared {
  readonly sortItems: readonly SortItem[];
  readonly search: TextSearch;
  readonly projection: readonly string[] | undefined;
  readonly conjuncts: readonly Conjunct[];
}

/**
 * The prepared form of each canonical request (which cannot change), per
 * CKAN version and the fields it was checked against (their ids and types,
 * which the conditions depend on): an embedder's calls with one compiled
 * request over fresh arrays make its conditions, and the scan's code, once.
 */
const preparedByRequest = new WeakMap<SearchRequest, Map<string, Prepared>>();
const PREPARED_MAX = 16;
/** Canonical requests answered once: a request is prepared for keeps from its second use (the server's are new each time). */
const answeredOnce = new WeakSet<SearchRequest>();

function prepared(req: SearchRequest, view: TableView, options: EvaluateOptions): Prepared {
  if (!isCanonicalRequest(req)) return prepare(req, view, options);
  if (!answeredOnce.has(req)) {
    answeredOnce.add(req);
    return prepare(req, view, options);
  }
  let known = preparedByRequest.get(req);
  const key = `${options.ckan ?? ''}\n${fieldsKey(view)}`;
  const hit = known?.get(key);
  if (hit !== undefined) return hit;
  const made = prepare(req, view, options);
  if (known === undefined) preparedByRequest.set(req, (known = new Map()));
  if (known.size >= PREPARED_MAX) known.clear();
  // checked against the fields the view knows now: a list that grew while checking is keyed by what it became
  known.set(`${options.ckan ?? ''}\n${fieldsKey(view)}`, made);
  return made;
}

/** The ids and types of a view's fields, as one text. */
function fieldsKey(view: TableView): string {
  let key = '';
  for (const f of view.fields) key += `${f.id}\u0000${f.type}\u0000`;
  return key;
}

function prepare(req: SearchRequest, view: TableView, options: EvaluateOptions): Prepared {
  const sortItems = req.sort === undefined ? [] : parseSort(req.sort);
  const search = textSearchOf(req);
  const projection = req.fields === undefined ? undefined : [...new Set(req.fields)];
  const conjuncts = checked(view, () => conjunctsOfRequest(req, view, options, projection, sortItems, search));
  for (const { field, query } of search.byField) conjuncts.push({ condition: { op: 'test', field, test: fieldSearchTest(query) } });
  return { sortItems, search, projection, conjuncts };
}

function* answer(req: SearchRequest, view: TableView, options: EvaluateOptions): Steps<SearchResult> {
  const { sortItems, search, projection, conjuncts } = prepared(req, view, options);

  const maxLimit = options.maxLimit ?? DEFAULT_MAX_LIMIT;
  const requested = req.limit ?? DEFAULT_LIMIT;
  const limit = requested > maxLimit ? maxLimit : requested;
  const offset = req.offset ?? 0;
  const { keys, page, total } = yield* answerSteps(view, {
    conjuncts,
    searches: search.all === undefined ? [] : [search.all],
    sortItems,
    projection,
    distinct: req.distinct === true,
    offset,
    limit,
    count: true,
  });
  const records = buildRecords(view, keys, page);

  // Keys are set one by one so they appear in the order of `SearchResult`, optional ones only when set.
  const result: { -readonly [K in keyof SearchResult]?: SearchResult[K] } = {
    resource_id: view.tableId ?? req.resource_id,
    fields: projection === undefined ? view.fields : projection.map((name) => view.fieldById.get(name) as FieldInfo),
    records,
  };
  const includeTotal = req.include_total !== false;
  if (includeTotal) result.total = total;
  result.total_was_estimated = false;
  result.limit = limit;
  if (req.offset !== undefined) result.offset = req.offset;
  if (req.q !== undefined) result.q = req.q;
  if (req.filters !== undefined) result.filters = req.filters;
  if (req.sort !== undefined) result.sort = req.sort;
  result.include_total = includeTotal;
  result.records_format = 'objects';
  return result as SearchResult;
}

/**
 * Checks the request's field names against the view and makes its filter
 * conditions. CKAN checks names in alphabetical parameter order: fields <
 * filters < q < sort (docs/ckan-2.11-reference.md §1).
 */
function conjunctsOfRequest(
  req: SearchRequest,
  view: TableView,
  options: EvaluateOptions,
  projection: readonly string[] | undefined,
  sortItems: readonly SortItem[],
  search: TextSearch,
): Conjunct[] {
  for (const name of projection ?? []) {
    if (!view.fieldById.has(name)) throw validationError('fields', `invalid value ${JSON.stringify(name)}`);
  }
  const tree = filterTreeOf(req, view.fields, options.ckan === undefined ? {} : { ckan: options.ckan });
  if (tree !== undefined && options.ckan === '2.12') refuseUnknownListFields(tree, view.fields);
  const filters = tree === undefined ? [] : conjuncts(tree);
  const made = filters.map((node): Conjunct => {
    // an `=`/`in` on a known field cannot fail: its condition waits until a scan needs it (an index answers it without)
    if (node.op === 'eq' && view.fieldById.has(node.field)) return new EqualsConjunct(node, node.field, [node.value], view.fieldById, options.ckan);
    if (node.op === 'in' && view.fieldById.has(node.field)) return new EqualsConjunct(node, node.field, node.values, view.fieldById, options.ckan);
    return { condition: conditionOf(node, view.fieldById, options.ckan) };
  });
  checkNames(sortItems, view, search);
  return made;
}

/** An `=`/`in` of a request's filters, whose condition (its tests and wanted values) is made on first use. */
class EqualsConjunct implements Conjunct {
  private made: Condition | undefined = undefined;

  constructor(
    private readonly node: FilterNode,
    readonly field: string,
    readonly equals: readonly JsonValue[],
    private readonly fieldById: ReadonlyMap<string, FieldInfo>,
    private readonly ckan: CkanVersion | undefined,
  ) {}

  get condition(): Condition {
    return (this.made ??= conditionOf(this.node, this.fieldById, this.ckan));
  }
}

/**
 * `check()` over the view; if it fails while the view knows only the first
 * record's fields (plain records), again over every field: a name found only
 * in a later record is valid, and the error, if any, is then the real one.
 */
function checked<T>(view: TableView, check: () => T): T {
  try {
    return check();
  } catch (error) {
    if (view.pending === undefined) throw error;
    completeFields(view);
    return check();
  }
}

/** The top-level `and` of a tree as a list (an `or` or a leaf is one item). */
function conjuncts(node: FilterNode, into: FilterNode[] = []): FilterNode[] {
  // a loop, not `flatMap`, which V8 runs through its generic path (a few per cent of a server's request)
  if (node.op !== 'and') into.push(node);
  else for (const inner of node.of) conjuncts(inner, into);
  return into;
}

function checkNames(sortItems: readonly SortItem[], view: TableView, search: TextSearch): void {
  for (const { field } of search.byField) {
    if (!view.fieldById.has(field)) throw validationError('q', `invalid value ${JSON.stringify(field)}`);
  }
  for (const item of sortItems) {
    // CKAN quotes the whole sort clause, not just the field: `invalid value "nope desc"`.
    if (!view.fieldById.has(item.field)) throw validationError('sort', `invalid value ${JSON.stringify(formatSort([item]))}`);
  }
}

// ---------------------------------------------------------------------------
// Text search

interface TextSearch {
  /** a string `q` (or `full_text`): over every field but `_id` */
  readonly all: TsQuery | undefined;
  /** an object `q`: each field's text */
  readonly byField: readonly { readonly field: string; readonly query: TsQuery }[];
}

function textSearchOf(req: SearchRequest): TextSearch {
  const plain = req.plain !== false;
  const q: unknown = req.q;
  const text = req.full_text ?? (typeof q === 'string' ? q : undefined);
  const all = text === undefined ? undefined : textQuery(text, plain);
  const byField: { field: string; query: TsQuery }[] = [];
  if (typeof q === 'object' && q !== null) {
    for (const [field, value] of Object.entries(q as Readonly<Record<string, unknown>>)) {
      // as the request check refuses it (datastore/validate.ts): a per-field search needs a text
      if (typeof value !== 'string') throw validationError('q', `invalid value ${JSON.stringify(field)}`);
      const query = textQuery(value, plain);
      if (query !== undefined) byField.push({ field, query });
    }
  }
  return { all, byField };
}

// ---------------------------------------------------------------------------
// The answer: rows, distinct, order, page

/**
 * One answer's work, however it was asked: a request (`evaluate`) or a whole
 * query (`queryTable`, query.ts). Names are checked and conditions made.
 */
export interface Work {
  /** what every record must pass (an `and`) */
  readonly conjuncts: readonly Conjunct[];
  /** searches of a record's whole text; every one must hold */
  readonly searches: readonly TsQuery[];
  readonly sortItems: readonly SortItem[];
  /** the fields of each record, in order; undefined: every field */
  readonly projection: readonly string[] | undefined;
  /** keep the first record (by `_id`) of each combination of the projected values */
  readonly distinct: boolean;
  readonly offset: number;
  /** `Infinity`: every record */
  readonly limit: number;
  /** count every match (`Answer.total`); without, an unsorted page stops reading rows once it is full */
  readonly count: boolean;
}

/** A condition of `Work`, with its field and the values it wants when it is an `=`/`in` an equality index can answer. */
export interface Conjunct {
  readonly condition: Condition;
  /** with `equals`: the field they are wanted in */
  readonly field?: string;
  readonly equals?: readonly JsonValue[];
}

/** The row positions of a page, in the answer's order. */
export interface Page {
  readonly length: number;
  at(j: number): number;
}

export interface Answer {
  /** the fields of each record, in order */
  readonly keys: readonly string[];
  readonly page: Page;
  /** how many records match, before offset and limit; undefined unless `Work.count` */
  readonly total: number | undefined;
}

/**
 * Runs the work over a view: the matching rows (an equality index first,
 * then the searches, then one scan of the other conditions), distinct,
 * order and page. Records are built apart (`buildRecords`), so a caller can
 * build them a batch at a time. As steps (engine/pace.ts): `evaluate` runs
 * them to their end, a whole query (query.ts) pauses where they yield.
 */
export function* answerSteps(view: TableView, work: Work): Steps<Answer> {
  const { sortItems, projection, offset, limit } = work;
  if (work.distinct && projection !== undefined) {
    const outside = sortItems.find((item) => !projection.includes(item.field));
    // PostgreSQL refuses to order distinct records by what they do not show
    if (outside !== undefined) throw validationError('sort', `for SELECT DISTINCT, ORDER BY expressions must appear in select list: ${JSON.stringify(outside.field)}`);
  }
  // Unsorted, only the rows up to the page's end are needed; the others are only counted, if at all.
  const needed = sortItems.length === 0 && !work.distinct ? offset + limit : Infinity;
  let selection = yield* selectRows(view, work.conjuncts, work.searches, needed, !work.count);
  // A projection names the answer's fields, each found already (a name only a later record has completed
  // the list then): the other records' keys are not needed, and listing them is most of a first call.
  if (projection === undefined) completeFields(view);
  const keys = projection ?? fieldIdsOf(view.fields);
  if (work.distinct) selection = yield* distinctRows(view, selection.rows, keys);
  return { keys, page: yield* orderAndPage(view, selection, sortItems, offset, limit), total: work.count ? selection.total : undefined };
}

/**
 * The matching rows: `rows` holds their positions, ascending (or is null
 * for every row), the first `needed` of them at least; `total` counts all
 * (or, when the scan stopped early, those in `rows`).
 */
interface Selection {
  readonly rows: ArrayLike<number> | null;
  readonly total: number;
}

function allOf(rows: ArrayLike<number> | null, view: TableView): Selection {
  return { rows, total: rows === null ? view.rows.length : rows.length };
}

/**
 * The rows that pass: an equality index narrows the rows first where one of
 * the `=`/`in` conjuncts has one (the smallest list wins), then the searches,
 * then one pass tests the other conditions; with `stop`, the pass ends once
 * it has `needed` rows.
 */
function* selectRows(view: TableView, conjuncts: readonly Conjunct[], searches: readonly TsQuery[], needed: number, stop: boolean): Steps<Selection> {
  let rows: ArrayLike<number> | null = null;
  let rest = conjuncts;
  const leader = yield* indexLeader(view, conjuncts);
  if (leader !== undefined) {
    rest = conjuncts.filter((_, k) => k !== leader.position);
    // the index alone: it gives the count, and the page's rows without the rest
    if (rest.length === 0 && searches.length === 0) return { rows: lookupRows(leader.index, leader.wanted, needed), total: countRows(leader.index, leader.wanted) };
    const candidates = lookupRows(leader.index, leader.wanted);
    rows = candidates;
    // the leader's own list of one value: the first other index is read along it (codesAlong)
    const oneList = leader.wanted.length === 1 && candidates === leader.index.get(leader.wanted[0] as string | null);
    // another `=`/`in` whose field has an index is tested on the index's codes, not on the row objects
    rest = rest.filter(({ field, equals }) => {
      const index = equals !== undefined && field !== undefined ? view.indexes.get(field) : undefined;
      if (index === undefined || index === null) return true;
      const along = oneList && rows === candidates ? codesAlong(leader.index, leader.wanted[0] as string | null, index, view.rows.length) : undefined;
      rows = keepEqual(index, view.rows.length, rows ?? candidates, wantedTexts(equals as readonly JsonValue[]), along);
      return false;
    });
  }
  if (searches.length > 0) {
    // the search text holds every field
    completeFields(view);
    for (const q of searches) rows = yield* searchRows(view, q, rows);
  }
  if (rest.length === 0 || (rows !== null && rows.length === 0)) return allOf(rows, view);
  const conditions = rest.map((c) => c.condition);
  const scan = scanOf(conditions.length === 1 ? conditions : bySelectivity(conditions, view.rows, (c) => scanOf([c])));
  return yield* scanSteps(scan, view.rows, rows, needed, stop);
}

/** Rows one slice of a scan tests between two yields: a millisecond or two of work, so a cancelled scan stops soon. */
const SCAN_SLICE = 65_536;

/** `scan` over the rows (or the candidates), as steps: a slice of `SCAN_SLICE` between two yields, the slices' rows joined. */
function* scanSteps(scan: Scan, rows: readonly Row[], candidates: ArrayLike<number> | null, needed: number, stop: boolean): Steps<Selection> {
  const n = candidates === null ? rows.length : candidates.length;
  if (n <= SCAN_SLICE) return scan(rows, candidates, needed, stop);
  const parts: Int32Array[] = [];
  let kept = 0;
  let total = 0;
  for (let from = 0; from < n; from += SCAN_SLICE) {
    const slice = scan(rows, candidates, needed - kept, stop, from, Math.min(n, from + SCAN_SLICE));
    parts.push(slice.rows);
    kept += slice.rows.length;
    total += slice.total;
    if (stop && kept >= needed) break;
    yield;
  }
  const out = new Int32Array(kept);
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return { rows: out, total };
}

/** Scans made for an `and` of these conditions in this order, by its first condition (a prepared request's conditions are the same objects on every call). */
const scans = new WeakMap<Condition, { readonly of: readonly Condition[]; readonly scan: Scan }[]>();
const SCANS_PER_CONDITION = 8;

function scanOf(conditions: readonly Condition[]): Scan {
  const first = conditions[0] as Condition;
  let known = scans.get(first);
  const hit = known?.find(({ of }) => of.length === conditions.length && of.every((c, k) => c === conditions[k]));
  if (hit !== undefined) return hit.scan;
  const scan = scanFor(conditions.length === 1 ? first : { op: 'and', of: conditions });
  if (known === undefined) scans.set(first, (known = []));
  if (known.length >= SCANS_PER_CONDITION) known.shift();
  known.push({ of: conditions, scan });
  return scan;
}

interface Leader {
  readonly position: number;
  readonly index: EqualityIndex;
  readonly wanted: readonly (string | null)[];
}

/** The `=`/`in` conjunct whose field has an index and the fewest matching rows (counting each as a use of its field). */
function* indexLeader(view: TableView, conjuncts: readonly Conjunct[]): Steps<Leader | undefined> {
  let best: Leader | undefined;
  let fewest = Infinity;
  let built = false;
  for (let position = 0; position < conjuncts.length; position++) {
    const { field, equals } = conjuncts[position] as Conjunct;
    if (equals === undefined || field === undefined) continue;
    const existed = view.indexes.has(field);
    const index = yield* equalityIndex(view, field, !built);
    if (index === undefined) continue;
    built ||= !existed;
    const wanted = wantedTexts(equals);
    const count = countRows(index, wanted);
    if (count < fewest) {
      fewest = count;
      best = { position, index, wanted };
    }
  }
  return best;
}

/**
 * The first row of each distinct projection, in row order (CKAN 2.12 applies
 * `DISTINCT` before the order and the page, docs/ckan-2.12-reference.md §3.4);
 * values are equal by canonical text (docs/semantics.md, Equality).
 */
function* distinctRows(view: TableView, rows: ArrayLike<number> | null, keys: readonly string[]): Steps<Selection> {
  const seen = new Set<string>();
  const kept: number[] = [];
  const n = rows === null ? view.rows.length : rows.length;
  const reads = keys.map((key) => fieldReader(key));
  for (let j = 0; j < n; j++) {
    const i = rows === null ? j : (rows[j] as number);
    const row = view.rows[i] as Row;
    const key = JSON.stringify(reads.map((read) => canonicalText(read(row, i))));
    if (j % SLICE === SLICE - 1) yield;
    if (seen.has(key)) continue;
    seen.add(key);
    kept.push(i);
  }
  return allOf(kept, view);
}

// ---------------------------------------------------------------------------
// Order and page

/** The row positions of the page, in result order. */
function* orderAndPage(view: TableView, { rows, total }: Selection, items: readonly SortItem[], offset: number, limit: number): Steps<Page> {
  if (limit === 0 || offset >= total) return listPage([]);
  const end = Math.min(total, offset + limit);
  const at = (j: number): number => (rows === null ? j : (rows[j] as number));
  // _id order is row order (`_id` is the 1-based position): the page is a range of the matches
  if (items.length === 0) return { length: end - offset, at: (j) => at(offset + j) };
  // A sort led by `_id` (unique; a plan's paging key) is row order, or its reverse, when the rows are kept in `_id` order:
  // the keys that follow it never decide, and sorting every match for each page cost a page of 32,000 about a second.
  if (items[0]?.field === '_id' && idAscending(view)) {
    const last = total - 1;
    return items[0].direction === 'desc' ? { length: end - offset, at: (j) => at(last - offset - j) } : { length: end - offset, at: (j) => at(offset + j) };
  }
  // The sort keys of every matching row, read once; rows are then compared by their index j.
  const keys: (JsonValue | null)[][] = [];
  for (const item of items) {
    const read = fieldReader(item.field);
    const values = new Array<JsonValue | null>(total);
    for (let from = 0; from < total; from += SLICE) {
      readKeys(view.rows, rows, read, values, from, Math.min(total, from + SLICE));
      yield;
    }
    keys.push(values);
  }
  // A typed table's number column may hold numbers kept as their text: they sort by value.
  const orders = items.map((item) =>
    view.given !== undefined && isNumberType(view.fieldById.get(item.field)?.type ?? '') ? compareNumberColumn : compareValues,
  );
  const compare = sortComparator(items, keys, orders);
  const order = end * 4 <= total ? yield* topK(total, end, compare) : yield* sortSteps(total, compare);
  const page = new Array<number>(end - offset);
  for (let j = offset; j < end; j++) page[j - offset] = at(order[j] as number);
  return listPage(page);
}

/** The sort values of matches `from` … `to` − 1 (`rows[j]`, or row `j` itself), into `values`: a plain loop, apart from the steps. */
function readKeys(all: readonly Row[], rows: ArrayLike<number> | null, read: (row: Row, i: number) => JsonValue | undefined, values: (JsonValue | null)[], from: number, to: number): void {
  for (let j = from; j < to; j++) {
    const i = rows === null ? j : (rows[j] as number);
    values[j] = read(all[i] as Row, i) ?? null;
  }
}

/** Whether the rows' `_id`s ascend (checked once per view: a loader keeps rows in `_id` order, an embedder's table may not). */
function idAscending(view: TableView): boolean {
  if (view.idAscending !== undefined) return view.idAscending;
  const read = fieldReader('_id');
  let before = -Infinity;
  let ascending = true;
  for (let i = 0; i < view.length && ascending; i++) {
    const id = read(view.rows[i] as Row, i);
    ascending = typeof id === 'number' && id > before;
    if (ascending) before = id as number;
  }
  view.idAscending = ascending;
  return ascending;
}

function listPage(positions: readonly number[]): Page {
  return { length: positions.length, at: (j) => positions[j] as number };
}

type Comparator = (a: number, b: number) => number;

/** A total order on match indices: each key (nulls placed as asked), then position, which makes the sort stable. */
function sortComparator(
  items: readonly SortItem[],
  keys: readonly (readonly (JsonValue | null)[])[],
  orders: readonly ((a: unknown, b: unknown) => number)[],
): Comparator {
  const parts = items.map((item, k) => {
    const values = keys[k] as readonly (JsonValue | null)[];
    const order = orders[k] ?? compareValues;
    const desc = item.direction === 'desc';
    // PostgreSQL's default: nulls last ascending, first descending
    const nulls = (item as SortItem & { readonly nulls?: 'first' | 'last' }).nulls ?? (desc ? 'first' : 'last');
    const nullSign = nulls === 'first' ? -1 : 1;
    return (a: number, b: number): number => {
      const x = values[a];
      const y = values[b];
      if (x === null || y === null) return x === y ? 0 : x === null ? nullSign : -nullSign;
      return desc ? order(y, x) : order(x, y);
    };
  });
  return (a, b) => {
    for (const part of parts) {
      const c = part(a, b);
      if (c !== 0) return c;
    }
    return a - b;
  };
}

/**
 * The first `k` of `0 … total-1` in `compare` order, sorted: a max-heap of the
 * best `k` seen so far, so most rows cost one comparison with the heap's worst.
 */
function* topK(total: number, k: number, compare: Comparator): Steps<number[]> {
  const heap: number[] = [];
  for (let from = 0; from < total; from += SLICE) {
    pushTop(heap, k, from, Math.min(total, from + SLICE), compare);
    yield;
  }
  return heap.sort(compare);
}

/** `topK`'s heap given the positions `from` … `to` − 1. */
function pushTop(heap: number[], k: number, from: number, to: number, compare: Comparator): void {
  for (let i = from; i < to; i++) {
    if (heap.length < k) {
      let at = heap.length;
      heap.push(i);
      while (at > 0) {
        const parent = (at - 1) >> 1;
        const p = heap[parent] as number;
        if (compare(p, i) >= 0) break;
        heap[at] = p;
        at = parent;
      }
      heap[at] = i;
    } else if (compare(i, heap[0] as number) < 0) {
      let at = 0;
      for (;;) {
        const left = 2 * at + 1;
        if (left >= k) break;
        const right = left + 1;
        let child = left;
        if (right < k && compare(heap[right] as number, heap[left] as number) > 0) child = right;
        const c = heap[child] as number;
        if (compare(c, i) <= 0) break;
        heap[at] = c;
        at = child;
      }
      heap[at] = i;
    }
  }
}

// ---------------------------------------------------------------------------
// Records

/** Record factories by their keys (JSON), for every view: fresh arrays of the same records share one. Bounded: cleared when full. */
const factories = new Map<string, RecordFactory>();
const FACTORIES_MAX = 256;
/** The factory of a frozen key list (a view's own field ids, `fieldIdsOf`), found without writing its JSON. */
const factoryByKeys = new WeakMap<readonly string[], RecordFactory>();

/** A field list's ids, one array per list: a view's `fields` is replaced, never changed, when it learns more fields. */
const idsByFields = new WeakMap<readonly FieldInfo[], readonly string[]>();

function fieldIdsOf(fields: readonly FieldInfo[]): readonly string[] {
  let ids = idsByFields.get(fields);
  if (ids === undefined) {
    ids = Object.freeze(fields.map((f) => f.id));
    idsByFields.set(fields, ids);
  }
  return ids;
}

/**
 * The records of the page's positions `from` to `to`, projected onto `keys`.
 * @example
 * const { keys, page } = runSteps(answerSteps(view, work));
 * buildRecords(view, keys, page, 0, 1000) // the first batch
 */
export function buildRecords(view: TableView, keys: readonly string[], page: Page, from = 0, to: number = page.length): Row[] {
  let make = factoryByKeys.get(keys);
  if (make === undefined) {
    const cacheKey = JSON.stringify(keys);
    make = factories.get(cacheKey);
    if (make === undefined) {
      if (factories.size >= FACTORIES_MAX) factories.clear();
      factories.set(cacheKey, (make = recordFactory(keys)));
    }
    // only a list that lives on (a per-request projection would only add entries for the GC to clear)
    if (Object.isFrozen(keys)) factoryByKeys.set(keys, make);
  }
  // filled by `push`, not made with its length: a list with holes is one `JSON.stringify` writes by its slow path
  const records: Row[] = [];
  for (let j = from; j < to; j++) {
    const i = page.at(j);
    const record = make(view.rows[i] as Row, i) as Row;
    if (view.tableId === undefined) checkValues(record, i); // a Table's rows are typed JSON
    records.push(record);
  }
  return records;
}

/**
 * A record of the page holding a value that is not JSON is refused, as the
 * types refuse it: the record as built (its fields, projected), a plain
 * object of one shape per page, which `for…in` reads quickly where the
 * caller's objects may have any keys.
 */
function checkValues(record: Row, i: number): void {
  for (const key in record) refuseNonJson(record[key], key, i);
}

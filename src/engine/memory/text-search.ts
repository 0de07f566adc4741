/**
 * Text search (docs/semantics.md, Text search): `q` as a string over every
 * field but `_id`, `q` as an object (each named field contains its text),
 * and `plain: false`, the part of PostgreSQL's `to_tsquery` syntax the
 * memory engine can honour: terms, prefix terms `word:*`, `&`, `|`, `!` and
 * parentheses. A term, prefixed or not, matches a field that contains it
 * (the substring rule of `q`, which already finds every word it begins).
 *
 * A string `q` searches a per-table text, kept with the table: each row's
 * normalized field texts, joined, in chunks of 2^14 rows. Every `q` from
 * the second on builds at most a sixteenth of the chunks (the first ones it
 * meets that are not built yet) and reads the rows of the others, so no
 * call pays for the whole text: building a chunk costs a few times reading
 * its rows, and searching a built one a fraction of it (BENCHMARKS.md, the
 * first calls of `q`). The text stops growing at `MAX_SEARCH_CHARS`; the rows
 * past it are read on every `q`. The first `q` of a table builds nothing:
 * an embedder handing a fresh array to each call would otherwise pay for
 * building (and collecting) text that no later call uses.
 */
import type { Row } from '../../datastore/types.js';
import { canonicalText, normalizeQueryText, normalizeText } from '../../datastore/values.js';
import { validationError } from '../../errors.js';
import type { ValueTest } from './predicate.js';
import { rowSome, rowText } from './row-shape.js';
import type { RowSome, RowText } from './row-shape.js';
import type { SearchChunk, SearchText, TableView } from './table-view.js';
import type { Steps } from '../pace.js';

/** Rows per search chunk, as a shift (2^14 rows): keeps every chunk's text far below V8's string length limit. */
const CHUNK_SHIFT = 14;
const CHUNK_ROWS = 1 << CHUNK_SHIFT;
/** One `q` builds at most one in this many of a table's chunks. */
const SHARE = 16;
/** The most characters a table's search text holds (128 Mi: 128 MiB of Latin-1 text, twice that of other text), plus one chunk. */
export const MAX_SEARCH_CHARS: number = 2 ** 27;
// Anything but printable ASCII, \t, \n, \r and the row end \0: text that NFKC may change.
const NON_ASCII = /[^\0\t\n\r -~]/;
/** Ends each row in a chunk's text, so rows can be found again after normalizing the whole chunk. */
const ROW_END = '\0';

/**
 * An empty search text for a table; `maxChars` bounds it.
 * @example
 * emptySearchText().chunks // []
 */
export function emptySearchText(maxChars: number = MAX_SEARCH_CHARS): SearchText {
  return { chunks: [], chars: 0, maxChars };
}

/**
 * The text `q` searches with every chunk the bound allows built: the
 * normalized canonical text of every field but `_id`, each followed by
 * `\n`, each row followed by `\0`.
 *
 * A chunk of rows is normalized in one call, which is what makes building
 * it cheap. That equals normalizing each field alone: `\n` and `\0` never
 * compose or decompose under NFKC (both are starters without mappings) and
 * both end the final-sigma context of `toLowerCase`; neither is produced or
 * removed by either step, so the `\0`s still mark the rows afterwards. A
 * chunk whose data itself holds `\0` is built row by row instead.
 * @example
 * searchChunks(tableView([{ title: 'Algebra', year: 2020 }])).chunks[0].text // "algebra\n2020\n\0"
 */
export function searchChunks(view: TableView): SearchText {
  const count = chunkCount(view);
  const chunkAt = chunkSource(view, count);
  for (let c = 0; c < count; c++) chunkAt(c);
  return view.search as SearchText;
}

function chunkCount(view: TableView): number {
  return Math.ceil(view.rows.length / CHUNK_ROWS);
}

/**
 * The chunks one search reads: those built, and up to `budget` more built
 * on the way while the text is within its bound; undefined for the others
 * (their rows are read instead). With no budget, a view without a text gets none.
 */
function chunkSource(view: TableView, budget: number): (c: number) => SearchChunk | undefined {
  if (view.search === undefined && budget === 0) return () => undefined;
  const text = (view.search ??= emptySearchText());
  let left = budget;
  let textOf: RowText | undefined;
  return (c) => {
    const known = text.chunks[c];
    if (known !== undefined || left === 0 || text.chars >= text.maxChars) return known;
    left--;
    const chunk = buildChunk(view.rows, c << CHUNK_SHIFT, Math.min(view.rows.length, (c + 1) << CHUNK_SHIFT), (textOf ??= rowText(searchFields(view), canonicalText, '\n')));
    text.chunks[c] = chunk;
    text.chars += chunk.text.length;
    return chunk;
  };
}

/** The search text of rows `[first, end)`. */
function buildChunk(rows: readonly Row[], first: number, end: number, textOf: RowText): SearchChunk {
  const parts: string[] = [];
  for (let i = first; i < end; i++) parts.push(textOf(rows[i] as Row) + ROW_END);
  const raw = parts.join('');
  const rawStarts = rowStarts(raw, end - first);
  if (rawStarts === undefined) return searchChunkByRow(rows, first, end, textOf);
  return { first, ...normalizeChunk(raw, rawStarts), rowEnds: true };
}

/** Where each of `count` rows starts in `text` (rows end in `\0`), or undefined when the data holds `\0` too. */
function rowStarts(text: string, count: number): Int32Array | undefined {
  const starts = new Int32Array(count + 1);
  let at = 0;
  for (let k = 0; k < count; k++) {
    at = text.indexOf(ROW_END, at);
    if (at === -1) return undefined;
    starts[k + 1] = ++at;
  }
  return at === text.length ? starts : undefined;
}

const NON_ASCII_ALL = new RegExp(NON_ASCII.source, 'g');

/**
 * Normalizes a chunk. Most data is ASCII, where NFKC changes nothing and
 * lower-casing keeps every offset: only the rows holding other characters
 * are normalized one by one, the runs of ASCII rows between them are only
 * lower-cased. When most rows hold such characters, the whole chunk is
 * normalized at once and the rows found again by their `\0`.
 */
function normalizeChunk(raw: string, rawStarts: Int32Array): { text: string; starts: Int32Array } {
  const count = rawStarts.length - 1;
  const dirty: number[] = [];
  NON_ASCII_ALL.lastIndex = 0;
  let row = 0;
  for (let hit = NON_ASCII_ALL.exec(raw); hit !== null; hit = NON_ASCII_ALL.exec(raw)) {
    while ((rawStarts[row + 1] as number) <= hit.index) row++;
    dirty.push(row);
    NON_ASCII_ALL.lastIndex = rawStarts[row + 1] as number; // the rest of this row needs no look
    if (dirty.length * 4 > count) break;
  }
  if (dirty.length === 0) return { text: raw.toLowerCase(), starts: rawStarts };
  if (dirty.length * 4 > count) {
    const text = normalizeText(raw);
    return { text, starts: rowStarts(text, count) as Int32Array };
  }
  const pieces: string[] = [];
  const starts = new Int32Array(count + 1);
  let length = 0;
  let next = 0; // first row not yet placed
  const placeClean = (upTo: number): void => {
    if (upTo <= next) return;
    const from = rawStarts[next] as number;
    pieces.push(raw.slice(from, rawStarts[upTo] as number).toLowerCase());
    for (let k = next; k < upTo; k++) starts[k] = length + (rawStarts[k] as number) - from;
    length += (rawStarts[upTo] as number) - from;
    next = upTo;
  };
  for (const k of dirty) {
    placeClean(k);
    const normalized = normalizeText(raw.slice(rawStarts[k] as number, rawStarts[k + 1] as number));
    pieces.push(normalized);
    starts[k] = length;
    length += normalized.length;
    next = k + 1;
  }
  placeClean(count);
  starts[count] = length;
  return { text: pieces.join(''), starts };
}

/** The same text for a chunk whose data holds `\0`: each row normalized alone, no row ends. */
function searchChunkByRow(rows: readonly Row[], first: number, end: number, textOf: RowText): SearchChunk {
  const parts: string[] = [];
  const starts = new Int32Array(end - first + 1);
  let offset = 0;
  for (let i = first; i < end; i++) {
    const normalized = normalizeText(textOf(rows[i] as Row));
    parts.push(normalized);
    starts[i - first] = offset;
    offset += normalized.length;
  }
  starts[end - first] = offset;
  return { first, text: parts.join(''), starts, rowEnds: false };
}

/** Adds to `out` every row of `chunk` whose search text contains `q`: indexOf from match to match, skipping the rest of a matched row. */
function sweepChunk(chunk: SearchChunk, q: string, out: number[]): void {
  if (chunk.rowEnds && q.includes('\0')) return;
  const { text, starts, first } = chunk;
  const last = starts.length - 1;
  let low = 0;
  let at = text.indexOf(q);
  while (at !== -1) {
    // the row holding `at`: the last k with starts[k] <= at, searched from the previous hit on
    let high = last;
    while (low + 1 < high) {
      const mid = (low + high) >>> 1;
      if ((starts[mid] as number) <= at) low = mid;
      else high = mid;
    }
    out.push(first + low);
    low++;
    if (low >= last) break;
    at = text.indexOf(q, starts[low] as number);
  }
}

/** Whether row `i` (in `chunk`) has a search text containing `q`. */
function rowContains(chunk: SearchChunk, i: number, q: string): boolean {
  const k = i - chunk.first;
  const start = chunk.starts[k] as number;
  const end = chunk.starts[k + 1] as number;
  return end - start >= q.length && !(chunk.rowEnds && q.includes('\0')) && chunk.text.substring(start, end).includes(q);
}

/** Adds to `out` the positions in both ascending lists. */
function intersectInto(a: ArrayLike<number>, from: number, to: number, b: readonly number[], out: number[]): void {
  let j = 0;
  for (let i = from; i < to && j < b.length; i++) {
    const x = a[i] as number;
    while (j < b.length && (b[j] as number) < x) j++;
    if (j < b.length && b[j] === x) out.push(x);
  }
}


// ---------------------------------------------------------------------------
// to_tsquery

/** A parsed `plain: false` query. */
export type TsQuery =
  | { readonly kind: 'term'; readonly text: string }
  | { readonly kind: 'not'; readonly of: TsQuery }
  | { readonly kind: 'and' | 'or'; readonly of: readonly [TsQuery, TsQuery] };

const TOKEN = /\s*(?:([&|!()])|([^\s&|!():'<>*\\]+)(:\*)?|(\S))/gy;

/**
 * Parses the `to_tsquery` subset (see the module comment); anything else
 * (phrases `<->`, weights `:A`, quoted lexemes, two terms without an
 * operator) is a Validation Error on `q` that says what is supported.
 * @example
 * parseTsQuery('alg:* & !geo') // and(term "alg", not(term "geo"))
 */
export function parseTsQuery(source: string): TsQuery {
  const tokens: string[] = [];
  TOKEN.lastIndex = 0;
  for (let m = TOKEN.exec(source); m !== null && m[0] !== ''; m = TOKEN.exec(source)) {
    if (m[4] !== undefined) throw unsupported(source, m[4]);
    tokens.push(m[1] ?? `=${m[2] as string}`);
  }
  let at = 0;
  const peek = (): string | undefined => tokens[at];
  const parseOr = (): TsQuery => {
    let left = parseAnd();
    while (peek() === '|') {
      at++;
      left = { kind: 'or', of: [left, parseAnd()] };
    }
    return left;
  };
  const parseAnd = (): TsQuery => {
    let left = parseUnary();
    while (peek() === '&') {
      at++;
      left = { kind: 'and', of: [left, parseUnary()] };
    }
    return left;
  };
  const parseUnary = (): TsQuery => {
    const token = tokens[at++];
    if (token === '!') return { kind: 'not', of: parseUnary() };
    if (token === '(') {
      const inner = parseOr();
      if (tokens[at++] !== ')') throw unsupported(source, tokens[at - 1] ?? 'the end');
      return inner;
    }
    if (token === undefined || !token.startsWith('=')) throw unsupported(source, token ?? 'the end');
    const text = normalizeQueryText(token.slice(1));
    return { kind: 'term', text };
  };
  const query = parseOr();
  if (at < tokens.length) throw unsupported(source, (tokens[at] as string).replace(/^=/, ''));
  return query;
}

function unsupported(source: string, near: string): Error {
  return validationError(
    'q',
    `cannot read ${JSON.stringify(source)} as a text search query near ${JSON.stringify(near)}: the memory engine supports words, prefix words (word:*), &, |, ! and parentheses`,
  );
}

/**
 * Whether a normalized text satisfies a query: each term is a substring.
 * @example
 * tsQueryMatches(parseTsQuery('alg:* & !geo'), 'linear algebra') // true
 */
export function tsQueryMatches(query: TsQuery, text: string): boolean {
  switch (query.kind) {
    case 'term':
      return text.includes(query.text);
    case 'not':
      return !tsQueryMatches(query.of, text);
    case 'and':
      return tsQueryMatches(query.of[0], text) && tsQueryMatches(query.of[1], text);
    case 'or':
      return tsQueryMatches(query.of[0], text) || tsQueryMatches(query.of[1], text);
  }
}

/**
 * What one search text asks: a substring (`plain`, the default) or a query.
 * An empty text asks nothing (undefined).
 * @example
 * textQuery('  Linear  Algebra ', true) // { kind: 'term', text: 'linear algebra' }
 */
export function textQuery(text: string, plain: boolean): TsQuery | undefined {
  if (!plain) return parseTsQuery(text);
  const normalized = normalizeQueryText(text);
  return normalized === '' ? undefined : { kind: 'term', text: normalized };
}

/**
 * A test of one field's value for the per-field `q`: its normalized text satisfies the query.
 * @example
 * fieldSearchTest({ kind: 'term', text: 'alg' })('Linear Algebra') // true
 */
export function fieldSearchTest(query: TsQuery): ValueTest {
  return (v) => {
    const text = canonicalText(v);
    return text !== null && tsQueryMatches(query, normalizeText(text));
  };
}

/**
 * The searched text of row `i` (its normalized fields, each followed by `\n`), undefined while its chunk is not built.
 * @example
 * rowSearchText(searchChunks(view), 0) // "algebra\nmath\n2020\n"
 */
export function rowSearchText(text: SearchText, i: number): string | undefined {
  const chunk = text.chunks[i >>> CHUNK_SHIFT];
  return chunk === undefined ? undefined : chunkRowText(chunk, i);
}

function chunkRowText(chunk: SearchChunk, i: number): string {
  const k = i - chunk.first;
  const text = chunk.text.substring(chunk.starts[k] as number, chunk.starts[k + 1] as number);
  return chunk.rowEnds ? text.slice(0, -1) : text;
}

/**
 * The fields a string `q` searches: all but `_id`.
 * @example
 * searchFields(tableView([{ title: 'Algebra' }])) // ["title"]
 */
export function searchFields(view: TableView): string[] {
  return view.fields.map((f) => f.id).filter((id) => id !== '_id');
}

/**
 * The rows among `candidates` (ascending; all when null) whose searched
 * text satisfies `query`, as steps (engine/pace.ts): one chunk of rows
 * between two yields. Built chunks are searched in their text, the others
 * in the rows; this search builds its share of chunks on the way (see the
 * module comment).
 * @example
 * runSteps(searchRows(view, parseTsQuery('alg:* | geo:*'), null)) // [0, 2, …]
 */
export function* searchRows(view: TableView, query: TsQuery, candidates: ArrayLike<number> | null): Steps<ArrayLike<number>> {
  const count = chunkCount(view);
  const firstUse = view.search === undefined && view.searchUses++ === 0;
  const chunkAt = chunkSource(view, firstUse ? 0 : Math.ceil(count / SHARE));
  const passes = rowTest(view, query);
  const rows = view.rows;
  const out: number[] = [];
  const inChunk = (chunk: SearchChunk | undefined, i: number): boolean =>
    chunk === undefined ? passes(rows[i] as Row) : query.kind === 'term' ? rowContains(chunk, i, query.text) : tsQueryMatches(query, chunkRowText(chunk, i));
  if (candidates === null) {
    for (let c = 0; c < count; c++) {
      const chunk = chunkAt(c);
      if (chunk !== undefined && query.kind === 'term') sweepChunk(chunk, query.text, out);
      else for (let i = c << CHUNK_SHIFT, end = Math.min(rows.length, (c + 1) << CHUNK_SHIFT); i < end; i++) if (inChunk(chunk, i)) out.push(i);
      yield;
    }
    return out;
  }
  for (let j = 0; j < candidates.length; ) {
    const c = (candidates[j] as number) >>> CHUNK_SHIFT;
    let next = j + 1;
    while (next < candidates.length && (candidates[next] as number) >>> CHUNK_SHIFT === c) next++;
    const chunk = chunkAt(c);
    // Many candidates in a built chunk: one indexOf sweep and a merge is cheaper than a test per row.
    if (chunk !== undefined && query.kind === 'term' && (next - j) * 8 >= chunk.starts.length) {
      const hits: number[] = [];
      sweepChunk(chunk, query.text, hits);
      intersectInto(candidates, j, next, hits, out);
    } else {
      for (let k = j; k < next; k++) if (inChunk(chunk, candidates[k] as number)) out.push(candidates[k] as number);
    }
    j = next;
    yield;
  }
  return out;
}

/** The test of one row object for `query`: its fields' texts, read from the row (for rows whose chunk is not built). */
function rowTest(view: TableView, query: TsQuery): RowSome {
  if (query.kind === 'term') return rowSome(searchFields(view), containsTest(query.text));
  const textOf = rowText(searchFields(view), canonicalText, '\n');
  return (row) => tsQueryMatches(query, normalizeText(textOf(row)));
}

// Anything but ASCII: text that NFKC or lower-casing may change beyond ASCII's own case mapping.
const NOT_ASCII = /[^\0-\x7f]/;
/** Only these characters occur in a number's text, lower-cased (`1.5e+21`, `-infinity`, `nan`). */
const NUMBER_TEXT = /^[-+.0-9aefinty]*$/;

/**
 * The test of one value for a string `q` whose normalized text is `term`: the
 * value's canonical text, normalized, contains it. ASCII text is only
 * lower-cased (NFKC maps every ASCII character to itself), and a number's
 * text is only looked at when the term could be part of one.
 * @example
 * containsTest('chem')('ＣＨＥＭ-2') // true
 * containsTest('chem')(2) // false
 */
export function containsTest(term: string): (value: unknown) => boolean {
  const inNumbers = NUMBER_TEXT.test(term);
  return (v) => {
    if (typeof v === 'string') return (NOT_ASCII.test(v) ? normalizeText(v) : v.toLowerCase()).includes(term);
    if (typeof v === 'number') return inNumbers && (canonicalText(v) as string).toLowerCase().includes(term);
    const text = canonicalText(v);
    return text !== null && normalizeText(text).includes(term);
  };
}

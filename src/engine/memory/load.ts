/**
 * Data → tables, the memory engine's core: a `.csv`/`.tsv`, a `.json` (an
 * array of objects) or an `.ndjson`/`.jsonl` source, given as text, bytes or
 * chunks of bytes by the caller, becomes one table. Nothing here reads a
 * file or imports Node (docs/engines.md, "The memory engine's core and its
 * Node edges"): folders, files and their streams are the Node edge's
 * (src/engine/node/load-resources.ts), which hands this file chunks. The
 * text is never held whole (a JSON array is cut into its elements as it
 * arrives, each parsed on its own).
 *
 * Rows are built by one generated object literal per table (see
 * `row-shape.ts`), so all rows share one compact hidden class, and
 * repeated strings of a column share one copy: a loaded table costs little
 * more heap than `JSON.parse` of the same data.
 */
import { isLosslessNumber, parse as parseLossless } from 'lossless-json';
import type { FieldDictionary, FieldInfo, FieldType, JsonValue, ResourceMeta, Row, Table } from '../../datastore/types.js';
import { DatastoreError, toolError } from '../../errors.js';
import type { ToolError } from '../../errors.js';
import type { InvalidUtf8 } from '../types.js';
import { rowFactory, rowsFromColumns } from './row-shape.js';
import { cellText, CsvReader, CsvSyntaxError } from './csv-reader.js';
import type { CsvSink } from './csv-reader.js';
import { checkedUtf8, WEB_BYTES } from './bytes.js';
import type { ByteHost } from './bytes.js';
import { sha1, toHex } from './sha1.js';
import { exceedsDepth } from '../../datastore/values.js';
import { decimalOf, decimalText, NUMERIC_MAX_SCALE, NUMERIC_MAX_WHOLE_DIGITS, withinNumeric } from '../../datastore/decimal.js';
import type { Decimal } from '../../datastore/decimal.js';
import { CellError, cellValue, DatapusherInference, fieldTypeOf, jsonValueOf, xloaderHeader } from '../declared.js';
import type { Declaration, DeclaredField, InferMode } from '../declared.js';

/**
 * How far the reading of one data file is, for a progress bar.
 * @example
 * await loadTable({ name: 'big.csv', data: bytes }, { onProgress: (p) => console.error(`${p.resource}: ${p.rows} rows, ${Math.round((100 * p.bytes) / p.totalBytes)} %`) });
 */
export interface FileProgress {
  /** the resource's alias */
  readonly resource: string;
  /** records read so far */
  readonly rows: number;
  /** bytes read so far, of `totalBytes` */
  readonly bytes: number;
  readonly totalBytes: number;
}

/** A data source's text: whole (a string, bytes) or as chunks arrive (a file's stream, a fetch body, a dropped file's `stream()`). */
export type SourceData = string | Uint8Array | AsyncIterable<Uint8Array | string>;

/** One data source: its name, its text, and what a reader of files can add. */
export interface TableSource {
  /**
   * the file's name or path: its extension says how it is read (`.csv` and
   * `.tsv`, `.json`, `.ndjson` and `.jsonl`), messages name it, and the
   * table's `source` is it
   */
  readonly name: string;
  readonly data: SourceData;
  /** how it is read; default: as its name's extension says (`sourceKind`) */
  readonly kind?: SourceKind;
  /** bytes in all, for progress; default: the length of whole data, else the bytes read so far */
  readonly size?: number;
  /**
   * the bytes again from the start up to byte `end` (excluded), for the line
   * of a byte that is not UTF-8 (a file can be read twice); without it, the
   * lines are counted as the bytes pass
   */
  readonly again?: (end: number) => AsyncIterable<Uint8Array>;
}

/** How one source becomes a table: its names, its declaration, its reading. */
export interface TableOptions {
  /** default `resourceIdFor(aliases[0])` */
  readonly id?: string;
  /** default: the name without its folder and extension */
  readonly aliases?: readonly string[];
  /** the table needs a token on the server */
  readonly private?: boolean;
  readonly meta?: ResourceMeta;
  /** its columns' declared types (`declarationFromText` reads a fields file's text) */
  readonly declaration?: Declaration;
  /** how columns nobody declared are typed; default `ckql` */
  readonly infer?: InferMode;
  /** bytes that are not UTF-8: `refuse` (default: `DATA_INVALID` with the line and offset) or `replace` (each read as U+FFFD) */
  readonly invalidUtf8?: InvalidUtf8;
  /** told after every chunk read and once at the end (so a bar throttles its own drawing) */
  readonly onProgress?: (progress: FileProgress) => void;
  /** stops the load at the next chunk with `ABORTED`; nothing of it is kept */
  readonly signal?: AbortSignal;
  /** the host's means for bytes (`WEB_BYTES` by default; the Node edge lends quicker ones) */
  readonly bytes?: ByteHost;
}

/**
 * Loads one source as a table: alias = its name without folder and
 * extension, id = `resourceIdFor(alias)`, `source` = its name.
 *
 * CSV files are read by `CsvReader` (csv-reader.ts: quotes, `""` escapes,
 * newlines in quoted cells, CRLF, a BOM, as csv-parse read them); the delimiter is `,`, or `;` or a tab when the
 * header line holds more of those than commas.
 *
 * Column types are inferred over all values and named as CKAN names them
 * (docs/ckan-2.11-reference.md §5). CSV: an empty cell is null; a column
 * whose other cells are all integers is `int4` (all within its range) or
 * `int8` (beyond it, or `numeric` beyond int8's), all numbers `numeric`
 * (JSON number syntax, so `007` or `+5` stay text), all `true`/`false` (any
 * case) `bool`, all ISO-8601 dates `date`, dates and date-times `timestamp`,
 * else `text`; values are converted to match: an integer beyond 2^53 (or a
 * decimal with more digits than a double holds) is kept as its exact value's
 * plain digits, no trailing zeros (`exactNumber`), which the server writes as
 * a JSON number; a timestamp is kept as
 * `YYYY-MM-DDTHH:MM:SS[.fraction]` (no trailing zeros), its zone dropped (PostgreSQL's
 * `timestamp` drops it). JSON/NDJSON: values are kept as they are (a
 * record's integer beyond 2^53 as its exact text, `withExactIntegers`);
 * integers → `int4`/`int8` (`numeric` beyond int8), other numbers `numeric`, booleans → `bool`,
 * strings → `date`/`timestamp` as in CSV else `text`, arrays of texts
 * (numbers, booleans) → `_text` (`_int4`, `_numeric`, `_bool`), other
 * objects/arrays → `json`, a mix of kinds → `text` (or `json` if an object
 * or array is among them). Every table gets `_id` (type `int`) as its first
 * field: a file's own `_id` column (a datastore dump has one) is kept, as
 * CKAN's datastore keeps the `_id` a record is given, and the rows are
 * ordered by it; its values must be whole numbers in `int4`'s range, each
 * once (`FileIds`). Without one, `_id` is the 1-based row position.
 * A value nested more than `MAX_NESTING` levels deep is refused: no answer
 * could be written for it.
 *
 * Throws `ToolError`: `DATA_UNSUPPORTED` (a name with another extension),
 * `DATA_INVALID` (unparsable text, with the `line` of the bad CSV record or
 * NDJSON line; bytes that are not UTF-8; a cell that is not of its declared
 * type); `DatastoreError` `ABORTED` when `signal` stops it.
 *
 * @example
 * const table = await loadTable({ name: 'courses.csv', data: 'code,credits\nMATH-101,5\n' });
 * table.fields; // → [{ id: "_id", type: "int" }, { id: "code", type: "text" }, { id: "credits", type: "int4" }]
 * table.rows[0]; // → { _id: 1, code: "MATH-101", credits: 5 }
 */
export async function loadTable(source: TableSource, options: TableOptions = {}): Promise<Table> {
  const file = source.name;
  const kind = source.kind ?? sourceKind(file);
  if (kind === undefined) throw toolError('DATA_UNSUPPORTED', [file], { file });
  const aliases = options.aliases ?? [aliasOfName(file)];
  const where: TableMeta = {
    id: options.id ?? resourceIdFor(aliases[0] ?? ''), aliases, source: file, private: options.private === true, meta: options.meta,
  };
  const typing: Typing = { declaration: options.declaration, infer: options.infer ?? 'ckql' };
  const bytes = options.bytes ?? WEB_BYTES;
  const whole = chunksOf(source.data, kind === 'csv' ? CSV_CHUNK : JSON_CHUNK);
  const size = source.size ?? whole.size;
  const reading: Reading = {
    invalidUtf8: options.invalidUtf8 ?? 'refuse',
    bytes,
    ...(size === undefined ? {} : { size }),
    ...(source.again === undefined ? {} : { again: source.again }),
    ...(options.onProgress === undefined ? {} : { onProgress: options.onProgress }),
    ...(options.signal === undefined ? {} : { signal: options.signal }),
  };
  const { chunks } = whole;
  if (kind === 'csv') return tableFromCsv(chunks, file, where, typing, reading);
  const alias = aliases[0] ?? where.id;
  const rows = kind === 'json' ? await jsonArrayRows(chunks, file, alias, reading) : await ndjsonRows(chunks, file, alias, reading);
  stopIfAborted(options.signal, file);
  return buildTable(rows, where, typing);
}

/** How a source is read: CSV (or TSV), one JSON array of objects, or one JSON object a line. */
export type SourceKind = 'csv' | 'json' | 'ndjson';

/**
 * How a source is read, by its name's extension: `.csv` and `.tsv`, `.json`, `.ndjson` and `.jsonl`.
 * @example sourceKind('data/logs.JSONL') // → 'ndjson'
 */
export function sourceKind(name: string): SourceKind | undefined {
  switch (extensionOf(name).toLowerCase()) {
    case '.csv':
    case '.tsv':
      return 'csv';
    case '.json':
      return 'json';
    case '.ndjson':
    case '.jsonl':
      return 'ndjson';
    default:
      return undefined;
  }
}

/**
 * The bytes a reader of `name` best hands over at a time (its stream's chunk size).
 * @example chunkBytesFor('sales.csv') // → 262144
 */
export function chunkBytesFor(name: string): number {
  return sourceKind(name) === 'csv' ? CSV_CHUNK : JSON_CHUNK;
}

/** A name's last part (after its last `/`). */
function baseOf(name: string): string {
  return name.slice(name.lastIndexOf('/') + 1);
}

/** A name's extension with its dot (`.csv`), as Node's `path.extname` gives it on POSIX. */
function extensionOf(name: string): string {
  const base = baseOf(name);
  const dot = base.lastIndexOf('.');
  return dot <= 0 ? '' : base.slice(dot);
}

/**
 * A data file's alias: its name without folder and extension.
 * @example aliasOfName('data/courses.csv') // → 'courses'
 */
export function aliasOfName(name: string): string {
  const base = baseOf(name);
  return base.slice(0, base.length - extensionOf(name).length);
}

const ENCODER = new TextEncoder();

/** Whole data cut into chunks of `size` bytes (so a load still stops and tells its progress between them); chunks of text as bytes. */
function chunksOf(data: SourceData, size: number): { chunks: AsyncIterable<Uint8Array>; size?: number } {
  if (typeof data === 'string' || data instanceof Uint8Array) {
    const bytes = typeof data === 'string' ? ENCODER.encode(data) : data;
    return {
      size: bytes.length,
      chunks: (async function* () {
        for (let at = 0; at < bytes.length; at += size) yield bytes.subarray(at, at + size);
      })(),
    };
  }
  return {
    chunks: (async function* () {
      for await (const chunk of data) yield typeof chunk === 'string' ? ENCODER.encode(chunk) : chunk;
    })(),
  };
}

/** How one source is read: its bytes that are not UTF-8, its host's bytes, its progress, its signal. */
interface Reading {
  readonly invalidUtf8: InvalidUtf8;
  readonly bytes: ByteHost;
  readonly size?: number;
  readonly again?: (end: number) => AsyncIterable<Uint8Array>;
  readonly onProgress?: (progress: FileProgress) => void;
  readonly signal?: AbortSignal;
}

/** A load whose signal was aborted ends with `ABORTED`, between two chunks of its file. */
export function stopIfAborted(signal: AbortSignal | undefined, file: string): void {
  if (signal?.aborted === true) throw new DatastoreError('ABORTED', `loading ${file} was interrupted; nothing of it was kept`, { cause: signal.reason });
}

function stripBom(text: string): string {
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

/** Bytes read at a time from a JSON or NDJSON source (a Node file stream's own chunk). */
const JSON_CHUNK = 64 * 1024;

// ---------------------------------------------------------------------------
// JSON and NDJSON

/**
 * The records of a `.json` source holding one array of objects, cut into its
 * elements as the bytes stream in (each parsed by `JSON.parse` on its own),
 * so the text is never held whole: a file larger than the longest string V8
 * makes (≈ 512 MiB) loads too.
 */
async function jsonArrayRows(chunks: AsyncIterable<Uint8Array>, file: string, alias: string, reading: Reading): Promise<Row[]> {
  const rows: Row[] = [];
  const records = jsonArrayRecordsOf(chunks, file, reading);
  let reported = 0;
  for await (const { record } of records.records) {
    rows.push(record as Row);
    const bytes = records.bytesRead();
    if (bytes !== reported) {
      reported = bytes;
      reading.onProgress?.({ resource: alias, rows: rows.length, bytes, totalBytes: reading.size ?? bytes });
    }
  }
  const total = reading.size ?? records.bytesRead();
  reading.onProgress?.({ resource: alias, rows: rows.length, bytes: total, totalBytes: total });
  return rows;
}

/** How the records of one JSON source are read (`jsonArrayRecordsOf`). */
export interface RecordReading {
  /** default `refuse` */
  readonly invalidUtf8?: InvalidUtf8;
  readonly signal?: AbortSignal;
  /** default `WEB_BYTES` */
  readonly bytes?: ByteHost;
  /** as `TableSource.again` */
  readonly again?: (end: number) => AsyncIterable<Uint8Array>;
}

/**
 * The records of a `.json` source holding one array of objects, each with
 * the line it starts on, as its chunks stream in, and the bytes read so far
 * (for a progress bar). `ckql load` reads its files the same way (through
 * the Node edge's `jsonArrayRecords`). An aborted `signal` ends the reading
 * with `ABORTED`.
 * @example
 * for await (const { record, line } of jsonArrayRecordsOf(chunks, 'courses.json').records) console.log(line, record);
 */
export function jsonArrayRecordsOf(
  chunks: AsyncIterable<Uint8Array>,
  file: string,
  { invalidUtf8 = 'refuse', signal, bytes = WEB_BYTES, again }: RecordReading = {},
): { records: AsyncIterable<{ record: Record<string, unknown>; line: number }>; bytesRead: () => number } {
  let read = 0;
  const records = (async function* () {
    let count = 0;
    const ready: { record: Record<string, unknown>; line: number }[] = [];
    const splitter = new JsonArraySplitter(file, (text, line) => {
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch (error) {
        const within = lineOfJsonError(error, text);
        const at = within === undefined ? line : line + within - 1;
        throw toolError('DATA_INVALID', [file, `not valid JSON: element ${count + 1} of the array (line ${at}): ${(error as Error).message}`], {
          file, line: at, cause: error,
        });
      }
      if (!isRecord(value)) {
        throw toolError('DATA_INVALID', [file, `element ${count + 1} of the array is not an object (each record must be {"field": value, …})`], { file, line });
      }
      count++;
      ready.push({ record: withExactIntegers(value, text, { file, line }), line });
    });
    const decoder = bytes.decoder();
    try {
      for await (const chunk of checkedUtf8(chunks, file, invalidUtf8, bytes, again)) {
        stopIfAborted(signal, file);
        read += chunk.length;
        splitter.feed(decoder.write(chunk));
        yield* ready.splice(0);
      }
      splitter.feed(decoder.end());
      splitter.end();
      yield* ready.splice(0);
    } catch (error) {
      // a stream given the signal ends with its own AbortError
      if ((error as { name?: unknown }).name === 'AbortError') {
        throw new DatastoreError('ABORTED', `loading ${file} was interrupted; nothing of it was kept`, { cause: error });
      }
      throw error;
    }
  })();
  return { records, bytesRead: () => read };
}

/**
 * Cuts the text of one JSON array, given in pieces, into the texts of its
 * elements: it follows strings (and their escapes) and brackets, and hands
 * each top-level element to `emit` with the line it starts on. What is not
 * an array, an empty element (`[1,,2]`, `[1,]`), an unclosed array or text
 * after it is a `DATA_INVALID` error; an element's own syntax is
 * `JSON.parse`'s to judge.
 */
class JsonArraySplitter {
  private state: 'before' | 'inside' | 'after' = 'before';
  /** brackets open inside the current element */
  private depth = 0;
  private inString = false;
  private escaped = false;
  /** the current element's text from earlier pieces */
  private pending = '';
  private started = false;
  private afterComma = false;
  private line = 1;
  private elementLine = 1;

  constructor(
    private readonly file: string,
    private readonly emit: (text: string, line: number) => void,
  ) {}

  feed(text: string): void {
    // The state lives in locals while a piece is read (a field load per character was a third of the time).
    let { state, depth, inString, escaped, started, afterComma, line, elementLine } = this;
    let from = 0;
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c === 10) line++;
      if (inString) {
        if (escaped) escaped = false;
        else if (c === 92) escaped = true;
        else if (c === 34) inString = false;
        continue;
      }
      if (state !== 'inside') {
        if (isJsonSpace(c) || (c === 0xfeff && state === 'before' && line === 1)) continue;
        if (state === 'before' && c === 91) {
          state = 'inside';
          from = i + 1;
          continue;
        }
        this.line = line;
        throw this.invalid(state === 'before' ? 'a .json data file must hold an array of objects (one per record)' : 'not valid JSON: text after the array');
      }
      if (depth === 0 && (c === 44 || c === 93)) {
        const element = this.pending + text.slice(from, i);
        this.pending = '';
        from = i + 1;
        if (started) this.emit(element, elementLine);
        else if (c === 44 || afterComma) {
          this.line = line;
          throw this.invalid('not valid JSON: an empty element in the array');
        }
        started = false;
        afterComma = c === 44;
        if (c === 93) state = 'after';
        continue;
      }
      if (!started && !isJsonSpace(c)) {
        started = true;
        elementLine = line;
      }
      if (c === 34) inString = true;
      else if (c === 123 || c === 91) depth++;
      else if ((c === 125 || c === 93) && depth > 0) depth--;
    }
    if (state === 'inside') this.pending += text.slice(from);
    Object.assign(this, { state, depth, inString, escaped, started, afterComma, line, elementLine });
  }

  end(): void {
    if (this.state === 'before') throw this.invalid('not valid JSON: the file is empty; a .json data file holds an array of objects');
    if (this.state === 'inside') throw this.invalid('not valid JSON: the array is not closed (a "]" is missing at the end)');
  }

  private invalid(message: string): Error {
    return toolError('DATA_INVALID', [this.file, message], { file: this.file, line: this.line });
  }
}

function isJsonSpace(c: number): boolean {
  return c === 32 || c === 10 || c === 13 || c === 9;
}

/** The records of an NDJSON source, read line by line as it streams in (its text is never held whole). */
async function ndjsonRows(chunks: AsyncIterable<Uint8Array>, file: string, alias: string, { invalidUtf8, bytes, size, again, onProgress, signal }: Reading): Promise<Row[]> {
  const rows: Row[] = [];
  let lineNumber = 0;
  const take = (text: string): void => {
    lineNumber++;
    const line = text.trim();
    if (line === '') return;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (error) {
      throw toolError('DATA_INVALID', [file, `line ${lineNumber} is not valid JSON: ${(error as Error).message}`], {
        file, line: lineNumber, cause: error,
      });
    }
    if (!isRecord(value)) {
      throw toolError('DATA_INVALID', [file, `line ${lineNumber} is not a JSON object (each line must be one record {"field": value, …})`], {
        file, line: lineNumber,
      });
    }
    rows.push(withExactIntegers(value, line, { file, line: lineNumber }));
  };
  const decoder = bytes.decoder();
  let rest = '';
  let read = 0;
  for await (const chunk of checkedUtf8(chunks, file, invalidUtf8, bytes, again)) {
    stopIfAborted(signal, file);
    read += chunk.length;
    const text = rest + decoder.write(chunk);
    let start = rest === '' && lineNumber === 0 ? (text.charCodeAt(0) === 0xfeff ? 1 : 0) : 0;
    for (let end = text.indexOf('\n', start); end !== -1; end = text.indexOf('\n', start)) {
      take(text.slice(start, end));
      start = end + 1;
    }
    rest = text.slice(start);
    onProgress?.({ resource: alias, rows: rows.length, bytes: read, totalBytes: size ?? read });
  }
  take(rest + decoder.end());
  const total = size ?? read;
  onProgress?.({ resource: alias, rows: rows.length, bytes: total, totalBytes: total });
  return rows;
}

const INTEGER_DIGITS = /^-?\d+$/;

/**
 * `record`, as `JSON.parse` read it from `text`, with each top-level integer
 * that `JSON.parse` rounded (beyond 2^53, `1e400` among them, which it reads
 * as Infinity) read again exactly, as a `bigint`: the column's inference
 * counts it as the integer it is, and the table keeps its exact text, as it
 * keeps a CSV cell's and PostgreSQL's `numeric` reads it (`int8` and
 * `numeric` are exact in CKAN). A number `numeric` cannot hold (`1e131072`)
 * is `DATA_INVALID` at `where`. Numbers inside objects and arrays stay as
 * `JSON.parse` read them. `_id` is left to the `_id` check, which refuses
 * anything beyond `int4`.
 * @example withExactIntegers({ n: 9007199254740992 }, '{"n": 9007199254740993}', where) // → { n: 9007199254740993n }
 */
export function withExactIntegers<R extends Record<string, unknown>>(record: R, text: string, where: { file: string; line: number }): R {
  let exact: unknown;
  // The values first (a few ns a record), the text again only for a record that holds such a number.
  for (const key in record) {
    const value = record[key];
    if (typeof value !== 'number' || (value <= Number.MAX_SAFE_INTEGER && value >= Number.MIN_SAFE_INTEGER) || key === '_id') continue;
    try {
      exact ??= parseLossless(text);
    } catch {
      // a record the second reader refuses (a key given twice): the rounded numbers are all there is
      return record;
    }
    const digits = (exact as Record<string, unknown>)[key];
    if (!isLosslessNumber(digits)) continue;
    const refuse = (detail: string): ToolError =>
      toolError('DATA_INVALID', [where.file, `line ${where.line}, field ${JSON.stringify(key)}: ${digits.value} ${detail}`], { file: where.file, line: where.line });
    if (!withinNumeric(digits.value)) throw refuse(`is beyond PostgreSQL's numeric (${NUMERIC_MAX_WHOLE_DIGITS} digits before the point, ${NUMERIC_MAX_SCALE} after)`);
    const decimal = INTEGER_DIGITS.test(digits.value) ? { int: BigInt(digits.value), scale: 0 } : decimalOf(digits.value);
    if (decimal !== undefined && decimal.scale === 0) (record as Record<string, unknown>)[key] = decimal.int;
    else if (!Number.isFinite(value)) throw refuse('has digits after the point beyond a double, which a JSON file\'s number keeps only when it is whole');
  }
  return record;
}

function isRecord(value: unknown): value is Row {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The line of a `JSON.parse` error, from the position or line V8 puts in its message. */
function lineOfJsonError(error: unknown, text: string): number | undefined {
  const message = error instanceof Error ? error.message : '';
  const byLine = /\(line (\d+) column \d+\)/.exec(message);
  if (byLine !== null) return Number(byLine[1]);
  const byPosition = /at position (\d+)/.exec(message);
  if (byPosition === null) return undefined;
  const position = Math.min(Number(byPosition[1]), text.length);
  let line = 1;
  for (let i = 0; i < position; i++) if (text.charCodeAt(i) === 10) line++;
  return line;
}

// ---------------------------------------------------------------------------
// CSV

/**
 * A CSV source read as a stream by `CsvReader`: each record's cells go
 * straight into one `CsvColumn` per column while each column's type is
 * inferred, and rows are built once the types are known. Neither the
 * text nor a list of parsed records is ever held whole; the first
 * `HEAD_BYTES` wait until the delimiter is read from them.
 */
async function tableFromCsv(chunks: AsyncIterable<Uint8Array>, file: string, meta: TableMeta, typing: Typing, reading: Reading): Promise<Table> {
  const { invalidUtf8, bytes, size, again, onProgress, signal } = reading;
  const alias = meta.aliases[0] ?? meta.id;
  const sink = new CsvTableSink(file, typing);
  let reader: CsvReader | undefined;
  const head: Uint8Array[] = [];
  let headBytes = 0;
  let read = 0;
  // One chunk at a time: the point where a load can stop between chunks.
  const push = (chunk: Uint8Array): void => {
    stopIfAborted(signal, file);
    (reader as CsvReader).push(chunk);
    read += chunk.length;
    onProgress?.({ resource: alias, rows: sink.rows, bytes: read, totalBytes: size ?? read });
  };
  // the reader, once the head says the delimiter; the chunks held for it go first
  const start = (): CsvReader => {
    const made = new CsvReader(delimiterOf(headText(head, bytes)), sink, bytes);
    reader = made;
    for (const chunk of head.splice(0)) push(chunk);
    return made;
  };
  try {
    for await (const chunk of checkedUtf8(chunks, file, invalidUtf8, bytes, again)) {
      if (reader !== undefined) push(chunk);
      else {
        head.push(chunk);
        headBytes += chunk.length;
        if (headBytes >= HEAD_BYTES) reader = start();
      }
    }
    const last = reader ?? start();
    // and once more after the last chunk (a file of one chunk), before its rows are built
    stopIfAborted(signal, file);
    last.end();
  } catch (error) {
    if (!(error instanceof CsvSyntaxError)) throw error;
    throw toolError('DATA_INVALID', [file, `not valid CSV: ${error.message}`], { file, line: error.line, cause: error });
  }
  // No record at all: the file is empty (csvColumns says so).
  if (sink.plan === undefined) csvColumns(undefined, file);
  const { columns, idIndex } = sink.plan as CsvPlan;
  const stores = sink.columns;
  const rows = sink.rows;
  const total = size ?? read;
  onProgress?.({ resource: alias, rows, bytes: total, totalBytes: total });
  const types = columns.map((column, k) => column.declared ?? (stores[k] as CsvColumn).type());
  // A declared column's cells are read as PostgreSQL reads them; an inferred one's as its inference saw them.
  const converted = columns.map((column, k) => {
    const type = types[k] as FieldType;
    if (column.declared === undefined) return undefined;
    const values = (stores[k] as CsvColumn).cells().map((cell, r) => (cell === '' ? null : cell === QUOTED_EMPTY ? (type === 'text' ? '' : null) : declaredCell(cell, type, file, r, column.name)));
    if (type === 'int') types[k] = integerWidth(values);
    return values;
  });
  const fields: FieldInfo[] = [
    { id: '_id', type: 'int' },
    ...columns.map((c, k) => ({ id: c.name, type: types[k] as FieldType, ...(c.info === undefined ? {} : { info: c.info }) })),
  ];
  const write = rowsFromColumns(fields.map((f) => f.id));
  const keptIds = idIndex === undefined ? undefined : sink.ids.values();
  // Each column's values a block of rows at a time (one tight loop per column), then the block's rows.
  const blocks = columns.map(() => new Array<unknown>(ROW_BLOCK).fill(null));
  const out: Row[] = new Array<Row>(rows);
  for (let from = 0; from < rows; from += ROW_BLOCK) {
    const to = Math.min(rows, from + ROW_BLOCK);
    for (let k = 0; k < columns.length; k++) {
      const done = converted[k];
      const block = blocks[k] as unknown[];
      if (done === undefined) (stores[k] as CsvColumn).valuesInto(types[k] as FieldType, block, from, to);
      else for (let r = from; r < to; r++) block[r - from] = done[r] ?? null;
    }
    write(out, from, to, keptIds, blocks);
  }
  return finishTable(keptIds === undefined ? out : sink.ids.ordered(out), fields, meta);
}

/** Rows built at a time from the columns' values. */
const ROW_BLOCK = 8192;

/** Bytes read at a time: fewer, larger chunks cost less to decode and scan, and 256 KiB is little memory. */
const CSV_CHUNK = 256 * 1024;

/**
 * The memory loader's side of `CsvReader`: the header makes the plan
 * (`planCsvColumns`), then each cell goes to its column's `CsvColumn` and
 * the file's own `_id` to `FileIds`.
 */
class CsvTableSink implements CsvSink {
  plan: CsvPlan | undefined;
  columns: CsvColumn[] = [];
  readonly ids: FileIds;
  rows = 0;
  private header: string[] | undefined = [];
  /** the table column of each cell index (-1: none) */
  private slots = new Int32Array(0);
  /** the columns no cell goes to (declared, not in the file): null in every row */
  private absent: CsvColumn[] = [];
  private idCell = '';

  constructor(
    private readonly file: string,
    private readonly typing: Typing,
  ) {
    this.ids = new FileIds(file);
  }

  cell(index: number, bytes: Uint8Array, start: number, end: number, quoted: boolean, ascii: boolean): void {
    if (this.header !== undefined) {
      this.header.push(cellText(bytes, start, end, ascii));
      return;
    }
    if (index >= this.slots.length) return;
    const slot = this.slots[index] as number;
    if (slot >= 0) (this.columns[slot] as CsvColumn).add(bytes, start, end, quoted, ascii);
    if (index === this.plan?.idIndex) this.idCell = cellText(bytes, start, end, ascii);
  }

  record(): void {
    if (this.header !== undefined) {
      const header = this.header;
      this.header = undefined;
      this.start(header);
      return;
    }
    for (const column of this.absent) column.add(NO_BYTES, 0, 0, false, true);
    this.rows++;
    if (this.plan?.idIndex !== undefined) this.ids.see(this.idCell, this.rows);
  }

  private start(header: readonly string[]): void {
    const plan = planCsvColumns(header, this.file, this.typing);
    this.plan = plan;
    this.slots = new Int32Array(header.length).fill(-1);
    const quotedEmpty = this.typing.declaration !== undefined;
    this.columns = plan.columns.map((column, k) => {
      const typed = column.declared === undefined && this.typing.infer === 'ckql';
      const store = new CsvColumn(typed ? undefined : inferenceFor(column, this.typing), this.typing.infer === 'xloader', quotedEmpty && column.declared !== undefined);
      if (column.index >= 0) this.slots[column.index] = k;
      else this.absent.push(store);
      return store;
    });
  }
}

/** How a `CsvColumn` keeps its cells: the family its cells have been of so far. */
const ALL_EMPTY = 0;
const NUMBERS = 1;
const BOOLS = 2;
const TEMPORAL = 3;
const TEXTS = 4;

const NO_BYTES: Uint8Array = new Uint8Array(0);
/** Powers of ten a double holds exactly (10^0 … 10^22). */
const EXACT_TENS: readonly number[] = Array.from({ length: 23 }, (_, k) => 10 ** k);
/** the scale that says "the text is in `odd`" */
const ODD = 255;
const LOWER = 0x20;

/**
 * One CSV column's cells as they are read. A column typed by ckql's
 * inference keeps its cells in the form of the one family they can all be
 * of (`ColumnInference`: numbers, booleans, dates and timestamps, or text;
 * no cell is of two): numbers as doubles with the count of their decimals,
 * booleans as codes, each read from the cell's bytes without making a
 * string of it, and texts pooled by their bytes (`CellPool`). The first
 * cell of another family turns the column into text, its earlier cells
 * written back as they were in the file (a number's text is its value with
 * its decimals, `toFixed`; any other is kept aside in `odd`). Any other
 * column (declared, or typed by xloader's or DataPusher's rules) keeps its
 * texts and gives them to its inference.
 */
class CsvColumn {
  private mode = ALL_EMPTY;
  private rows = 0;
  private numbers = new Float64Array(0);
  /** decimals of each number (its text is `toFixed(scale)`), or ODD */
  private scales = new Uint8Array(0);
  /** bools: 0 null, 1 `true`, 2 `false`, 3 another case (its text in `odd`) */
  private codes = new Uint8Array(0);
  /** the texts of cells the other forms do not give back, by row */
  private readonly odd = new Map<number, string>();
  private texts: string[] = [];
  private readonly pool = new CellPool();
  /** numbers: every cell an integer, the widest integer type; temporal: every cell a date */
  private int = true;
  private widest: 'int4' | 'int8' | 'numeric' = 'int4';
  private dates = true;

  constructor(
    /** the inference of a column whose texts are kept (undefined: ckql's, by family) */
    private readonly inference: Inference | undefined,
    private readonly trim: boolean,
    /** a quoted empty cell is `QUOTED_EMPTY` (a declared column of a declared file) */
    private readonly quotedEmpty: boolean,
  ) {
    if (inference !== undefined) this.mode = TEXTS;
  }

  add(bytes: Uint8Array, start: number, end: number, quoted: boolean, ascii: boolean): void {
    const r = this.rows++;
    if (this.inference !== undefined) {
      this.addText(bytes, start, end, quoted, ascii);
      return;
    }
    // An empty cell is null (a quoted one too: only a declared column tells it apart).
    if (start === end) {
      this.addNull(r);
      return;
    }
    switch (this.mode) {
      case NUMBERS:
        if (this.addNumber(bytes, start, end, r)) return;
        break;
      case BOOLS:
        if (this.addBool(bytes, start, end, r)) return;
        break;
      case TEMPORAL:
        if (this.addTemporal(bytes, start, end, ascii, r)) return;
        break;
      case TEXTS:
        this.texts.push(this.pool.text(bytes, start, end, ascii));
        return;
      default:
        this.startFamily(bytes, start, end, ascii, r);
        return;
    }
    this.toTexts(r);
    this.texts.push(this.pool.text(bytes, start, end, ascii));
  }

  /** A kept text: trimmed (xloader), a quoted empty one told apart (declared), given to the inference. */
  private addText(bytes: Uint8Array, start: number, end: number, quoted: boolean, ascii: boolean): void {
    let cell = this.quotedEmpty && quoted && start === end ? QUOTED_EMPTY : this.pool.text(bytes, start, end, ascii);
    if (this.trim) cell = cell.trim();
    if (cell === QUOTED_EMPTY && !this.quotedEmpty) cell = '';
    (this.inference as Inference).see(cell);
    this.texts.push(cell === '' ? '' : this.pool.strings.intern(cell));
  }

  private addNull(r: number): void {
    switch (this.mode) {
      case NUMBERS:
        this.room(r);
        this.numbers[r] = Number.NaN;
        return;
      case BOOLS:
        this.room(r);
        this.codes[r] = 0;
        return;
      case TEMPORAL:
      case TEXTS:
        this.texts.push('');
        return;
      default:
    }
  }

  /** The first cell that is not empty says the family; the rows before it are nulls of it. */
  private startFamily(bytes: Uint8Array, start: number, end: number, ascii: boolean, r: number): void {
    this.mode = NUMBERS;
    this.room(r);
    this.numbers.fill(Number.NaN, 0, r);
    if (this.addNumber(bytes, start, end, r)) return;
    this.odd.clear();
    [this.int, this.widest] = [true, 'int4'];
    this.numbers = new Float64Array(0);
    this.scales = new Uint8Array(0);
    this.mode = BOOLS;
    this.room(r);
    if (this.addBool(bytes, start, end, r)) return;
    this.odd.clear();
    this.codes = new Uint8Array(0);
    this.mode = TEMPORAL;
    this.texts = new Array<string>(r).fill('');
    if (this.addTemporal(bytes, start, end, ascii, r)) return;
    this.mode = TEXTS;
    this.texts.push(this.pool.text(bytes, start, end, ascii));
  }

  /** Makes room for row `r` in the typed arrays of the column's family. */
  private room(r: number): void {
    const have = this.mode === NUMBERS ? this.numbers.length : this.codes.length;
    if (r < have) return;
    const size = Math.max(1024, have * 2, r + 1);
    if (this.mode === NUMBERS) {
      const numbers = new Float64Array(size);
      numbers.set(this.numbers);
      this.numbers = numbers;
      const scales = new Uint8Array(size);
      scales.set(this.scales);
      this.scales = scales;
    } else {
      const codes = new Uint8Array(size);
      codes.set(this.codes);
      this.codes = codes;
    }
  }

  /**
   * A number cell (`ColumnInference`: JSON's number syntax, one PostgreSQL's `numeric` holds), read from
   * its digits: up to 15 digits without an exponent are the digits as an
   * integer divided by a power of ten (one correctly rounded division of two
   * exact doubles: the double `Number` reads); any other is `Number`'s, its
   * text kept in `odd`. False when it is no number, or the column can no
   * longer be one.
   */
  private addNumber(bytes: Uint8Array, start: number, end: number, r: number): boolean {
    let i = start;
    let c = bytes[i] as number;
    const negative = c === 45;
    if (negative) {
      if (++i === end) return false;
      c = bytes[i] as number;
    }
    if (c < 48 || c > 57) return false;
    let digits = 0;
    let mantissa = 0;
    if (c === 48) {
      i++;
      digits = 1;
    } else {
      for (; i < end; i++) {
        c = bytes[i] as number;
        if (c < 48 || c > 57) break;
        mantissa = mantissa * 10 + (c - 48);
        digits++;
      }
    }
    let scale = 0;
    let exponent = false;
    if (i < end && bytes[i] === 46) {
      const first = ++i;
      for (; i < end; i++) {
        c = bytes[i] as number;
        if (c < 48 || c > 57) break;
        mantissa = mantissa * 10 + (c - 48);
      }
      scale = i - first;
      if (scale === 0) return false;
      digits += scale;
    }
    if (i < end && ((bytes[i] as number) | LOWER) === 101) {
      i++;
      if (i < end && (bytes[i] === 43 || bytes[i] === 45)) i++;
      const first = i;
      while (i < end && (bytes[i] as number) >= 48 && (bytes[i] as number) <= 57) i++;
      if (i === first) return false;
      exponent = true;
    }
    if (i !== end) return false;
    const integer = scale === 0 && !exponent;
    let value: number;
    if (digits <= 15 && !exponent && !(negative && mantissa === 0)) {
      value = scale === 0 ? mantissa : mantissa / (EXACT_TENS[scale] as number);
      if (negative) value = -value;
      if (integer && this.widest === 'int4' && (value < INT4_MIN || value > INT4_MAX)) this.widest = 'int8';
    } else {
      const cell = cellText(bytes, start, end, true);
      if (!withinNumeric(cell)) return false;
      value = Number(cell);
      if (integer) {
        const type = integerType(cell);
        if (INTEGER_RANK[type] > INTEGER_RANK[this.widest]) this.widest = type;
      }
      this.odd.set(r, cell);
      scale = ODD;
    }
    if (!integer) this.int = false;
    this.room(r);
    this.numbers[r] = value;
    this.scales[r] = scale;
    return true;
  }

  /** A `true` or `false` cell, in any case (`ColumnInference`). */
  private addBool(bytes: Uint8Array, start: number, end: number, r: number): boolean {
    const length = end - start;
    let code: number;
    if (length === 4 && sameLetters(bytes, start, 'true')) code = 1;
    else if (length === 5 && sameLetters(bytes, start, 'false')) code = 2;
    else return false;
    // lowercase letters have the 0x20 bit; another case keeps its text
    for (let k = start; k < end; k++) {
      if (((bytes[k] as number) & LOWER) === 0) {
        this.odd.set(r, cellText(bytes, start, end, true));
        code = 3;
        break;
      }
    }
    this.room(r);
    this.codes[r] = code;
    return true;
  }

  /** An ISO date or timestamp cell (`ColumnInference`); a text the pool has seen is not checked again. */
  private addTemporal(bytes: Uint8Array, start: number, end: number, ascii: boolean, r: number): boolean {
    const cell = this.pool.text(bytes, start, end, ascii);
    if (!this.pool.found) {
      if (!isIsoTimestamp(cell)) return false;
      if (this.dates && !DATE.test(cell)) this.dates = false;
    }
    this.texts[r] = cell;
    return true;
  }

  /** The column becomes text from row `r` on: the cells before it are written back as they were read. */
  private toTexts(r: number): void {
    const texts = new Array<string>(r);
    for (let k = 0; k < r; k++) texts[k] = this.cellAt(k);
    this.texts = texts;
    this.mode = TEXTS;
    this.numbers = new Float64Array(0);
    this.scales = new Uint8Array(0);
    this.codes = new Uint8Array(0);
    this.odd.clear();
  }

  /** Row `r`'s cell as it was read ('' for an empty one). */
  private cellAt(r: number): string {
    switch (this.mode) {
      case NUMBERS: {
        const value = this.numbers[r] as number;
        if (Number.isNaN(value)) return '';
        const scale = this.scales[r] as number;
        return scale === ODD ? (this.odd.get(r) as string) : this.pool.strings.intern(value.toFixed(scale));
      }
      case BOOLS: {
        const code = this.codes[r] as number;
        return code === 0 ? '' : code === 1 ? 'true' : code === 2 ? 'false' : (this.odd.get(r) as string);
      }
      case TEMPORAL:
      case TEXTS:
        return this.texts[r] as string;
      default:
        return '';
    }
  }

  /** Every cell as it was read, in row order ('' for an empty one). */
  cells(): string[] {
    return Array.from({ length: this.rows }, (_, r) => this.cellAt(r));
  }

  /** The column's type: what its inference says (`ColumnInference`'s rules, family by family). */
  type(): FieldType {
    if (this.inference !== undefined) return this.inference.type();
    switch (this.mode) {
      case NUMBERS:
        return this.int ? this.widest : 'numeric';
      case BOOLS:
        return 'bool';
      case TEMPORAL:
        return this.dates ? 'date' : 'timestamp';
      default:
        return 'text';
    }
  }

  /** The values of rows `from` to `to` in a column of type `type` (`convertCell`: numbers exact, a timestamp's text `timestampValue`), into `out` from 0. */
  valuesInto(type: FieldType, out: unknown[], from: number, to: number): void {
    switch (this.mode) {
      case NUMBERS: {
        const { numbers, scales, odd } = this;
        for (let r = from; r < to; r++) {
          const value = numbers[r] as number;
          out[r - from] = Number.isNaN(value) ? null : scales[r] === ODD ? exactNumber(odd.get(r) as string) : value;
        }
        return;
      }
      case BOOLS: {
        const { codes, odd } = this;
        for (let r = from; r < to; r++) {
          const code = codes[r] as number;
          out[r - from] = code === 0 ? null : code === 1 ? true : code === 2 ? false : (odd.get(r) as string).toLowerCase() === 'true';
        }
        return;
      }
      case TEMPORAL:
      case TEXTS: {
        const { texts } = this;
        const strings = this.pool.strings;
        const plain = type === 'text' || type === 'date';
        for (let r = from; r < to; r++) {
          const cell = texts[r] as string;
          out[r - from] = cell === '' ? null : plain ? cell : convertCell(cell, type, strings);
        }
        return;
      }
      default:
        out.fill(null, 0, to - from);
    }
  }
}

/**
 * A column's texts, one copy of each repeated one: an ASCII cell is found
 * by its bytes (a hash, then the bytes compared), so a repeated cell makes
 * no string at all; others go through `ColumnStrings`. Like it, a pool
 * that mostly misses (ids, names) is given up after `POOL_TRIAL` cells.
 */
class CellPool {
  readonly strings = new ColumnStrings();
  /** whether the last `text` was found in the pool */
  found = false;
  private byHash: Map<number, string> | undefined = new Map<number, string>();
  private seen = 0;

  text(bytes: Uint8Array, start: number, end: number, ascii: boolean): string {
    this.found = false;
    const pool = this.byHash;
    if (pool === undefined || !ascii || end - start > 64) return this.strings.intern(cellText(bytes, start, end, ascii));
    let hash = 0x811c9dc5;
    for (let i = start; i < end; i++) hash = Math.imul(hash ^ (bytes[i] as number), 0x01000193);
    const known = pool.get(hash);
    if (known !== undefined && known.length === end - start && sameBytes(known, bytes, start)) {
      this.found = true;
      return known;
    }
    if (++this.seen === POOL_TRIAL && pool.size > POOL_TRIAL / 2) this.byHash = undefined;
    const text = cellText(bytes, start, end, true);
    if (known === undefined && pool.size < POOL_LIMIT) pool.set(hash, text);
    return text;
  }
}

/** Whether the ASCII text `text` is `bytes` from `start` on. */
function sameBytes(text: string, bytes: Uint8Array, start: number): boolean {
  for (let k = 0; k < text.length; k++) if (text.charCodeAt(k) !== bytes[start + k]) return false;
  return true;
}

/** Whether `bytes` at `start` spell `lower` in any case (`lower`: lowercase letters). */
function sameLetters(bytes: Uint8Array, start: number, lower: string): boolean {
  for (let k = 0; k < lower.length; k++) if (((bytes[start + k] as number) | LOWER) !== lower.charCodeAt(k)) return false;
  return true;
}


/** How columns are typed: what is declared, and how the rest is inferred. */
export interface Typing {
  readonly declaration: Declaration | undefined;
  readonly infer: InferMode;
}

/** One column of a data file as it becomes a table column: its name, where its cells are, its declared type and dictionary. */
export interface ColumnPlan {
  readonly name: string;
  /** the cell index in a CSV record (-1: declared, but not in the file: every cell null) */
  readonly index: number;
  readonly declared?: FieldType;
  readonly info?: FieldDictionary;
}

/** A CSV file's columns, in the order the table has them, and where its own `_id` is when it is kept. */
export interface CsvPlan {
  readonly columns: readonly ColumnPlan[];
  /** the index of the file's own `_id` column (its values become the rows' `_id`) */
  readonly idIndex?: number;
}

/**
 * The columns of a CSV header under a typing: declared fields first in
 * their declared order, then the file's other columns in its order; with
 * xloader's inference, names as xloader makes them (blank ones dropped).
 * The file's own `_id` column is kept (as `idIndex`): it gives the rows their `_id`.
 * @example planCsvColumns(['_id', 'b', 'a'], 'x.csv', { declaration: undefined, infer: 'ckql' }).columns.map((c) => c.name) // → ['b', 'a']
 */
export function planCsvColumns(header: readonly string[], file: string, typing: Typing): CsvPlan {
  const xloader = typing.infer === 'xloader';
  const named = xloader ? header.map((name) => xloaderHeader(name)) : [...header];
  const kept = xloader ? named.map((name, index) => ({ name, index })).filter((c) => c.name !== '') : csvColumnsWithId(named, file);
  if (xloader) {
    const seen = new Set<string>();
    for (const { name } of kept) {
      if (seen.has(name)) throw toolError('DATA_INVALID', [file, `the header names the column ${JSON.stringify(name)} twice (after cutting names to 63 characters, as xloader does)`], { file, line: 1 });
      seen.add(name);
    }
  }
  const idColumn = kept.find((c) => c.name === '_id');
  const columns: ColumnPlan[] = [];
  const declared = typing.declaration?.fields ?? [];
  for (const field of declared) {
    const at = kept.find((c) => c.name === field.id);
    const type = field.type ?? overrideOf(field, typing);
    columns.push({ name: field.id, index: at?.index ?? -1, ...(type === undefined ? {} : { declared: type }), ...(field.info === undefined ? {} : { info: field.info }) });
  }
  for (const column of kept) {
    if (column.name === '_id' || declared.some((field) => field.id === column.name)) continue;
    columns.push({ name: column.name, index: column.index });
  }
  return { columns, ...(idColumn === undefined ? {} : { idIndex: idColumn.index }) };
}

/** The type a loader takes from a field's data dictionary (`type_override`), as xloader and DataPusher do. */
export function overrideOf(field: DeclaredField, typing: Typing): FieldType | undefined {
  const override = field.info?.type_override;
  if (typing.infer === 'ckql' || typeof override !== 'string' || override === '') return undefined;
  return fieldTypeOf(override);
}

/** A column's inference under a typing. */
export interface Inference {
  see(cell: string): void;
  type(): FieldType;
}

const TEXT_INFERENCE: Inference = { see: () => undefined, type: () => 'text' };

/** The inference of a CSV column that is not declared (declared ones: none needed). */
export function inferenceFor(column: ColumnPlan, typing: Typing): Inference {
  if (column.declared !== undefined) return TEXT_INFERENCE;
  switch (typing.infer) {
    case 'xloader':
      return TEXT_INFERENCE;
    case 'datapusher':
      return new DatapusherInference();
    default:
      return new ColumnInference();
  }
}

/** One cell read as its declared type; a cell that is not one is `DATA_INVALID`, naming the record and column. */
export function declaredCell(cell: string, type: FieldType, file: string, record: number, column: string): JsonValue {
  try {
    return cellValue(cell, type);
  } catch (error) {
    if (!(error instanceof CellError)) throw error;
    throw toolError('DATA_INVALID', [file, `record ${record + 1}, column ${JSON.stringify(column)}: ${error.message}, its declared type`], { file, line: record + 2 });
  }
}

/**
 * The type of a column declared a Table Schema `integer`: `int4` when every
 * value fits it, else `int8`.
 * @example integerWidth([1, 2 ** 40]) // → 'int8'
 */
export function integerWidth(values: Iterable<JsonValue | undefined>): 'int4' | 'int8' {
  for (const v of values) if (typeof v === 'string' || (typeof v === 'number' && (v > INT4_MAX || v < INT4_MIN))) return 'int8';
  return 'int4';
}

/**
 * A quoted empty cell (`""`) of a file whose types are declared: an empty
 * text, where an unquoted empty cell is null (PostgreSQL's `COPY … csv`
 * tells them apart so, and CKAN's dump writes them so). A lone surrogate:
 * no cell's text is one (UTF-8 decoding never gives one; a NUL, which the
 * memory engine keeps, can be a cell's text).
 */
export const QUOTED_EMPTY = '\uD800';

/** The bytes of a CSV source whose text the delimiter is read from: enough to hold its header line. */
const HEAD_BYTES = 1024 * 1024;

/** The text of the first `HEAD_BYTES` of `chunks` (the delimiter is read from it). */
function headText(chunks: readonly Uint8Array[], host: ByteHost): string {
  const decoder = host.decoder();
  let text = '';
  let left = HEAD_BYTES;
  for (const chunk of chunks) {
    if (left <= 0) break;
    text += decoder.write(chunk.length <= left ? chunk : chunk.subarray(0, left));
    left -= chunk.length;
  }
  return stripBom(text + decoder.end());
}

/**
 * The data columns of a CSV header, with each one's cell index; the file's
 * own `_id` column (a datastore dump has one) is not among them: it gives the
 * rows their `_id` (`FileIds`). Throws `DATA_INVALID` for a missing header,
 * an empty or a repeated name.
 * @example csvColumns(['_id', 'a', 'b'], 'x.csv') // → [{ name: 'a', index: 1 }, { name: 'b', index: 2 }]
 */
export function csvColumns(header: readonly string[] | undefined, file: string): { name: string; index: number }[] {
  return csvColumnsWithId(header, file).filter((c) => c.name !== '_id');
}

/** `csvColumns` with the file's own `_id` column kept. */
function csvColumnsWithId(header: readonly string[] | undefined, file: string): { name: string; index: number }[] {
  if (header === undefined) throw toolError('DATA_INVALID', [file, 'the file is empty: a CSV file needs a header line'], { file, line: 1 });
  const seen = new Set<string>();
  header.forEach((name, i) => {
    if (name === '') throw toolError('DATA_INVALID', [file, `column ${i + 1} of the header has no name`], { file, line: 1 });
    if (seen.has(name)) throw toolError('DATA_INVALID', [file, `the header names the column ${JSON.stringify(name)} twice`], { file, line: 1 });
    seen.add(name);
  });
  return header.map((name, index) => ({ name, index }));
}

/**
 * The cell delimiter, read from the header line: `,` unless the header holds
 * more `;` (a European spreadsheet's CSV) or tabs than commas. Characters
 * inside a quoted header cell (`"a;b;c",d`) do not count, and a quoted
 * cell may hold a line break.
 * @example delimiterOf('a;b;"c,d"\n1;2;3') // → ';'
 */
export function delimiterOf(text: string): string {
  let commas = 0;
  let semicolons = 0;
  let tabs = 0;
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 34 /* " */) quoted = !quoted;
    else if (quoted) continue;
    else if (c === 10 /* \n */) break;
    else if (c === 44) commas++;
    else if (c === 59) semicolons++;
    else if (c === 9) tabs++;
  }
  if (semicolons > commas && semicolons >= tabs) return ';';
  if (tabs > commas && tabs > semicolons) return '\t';
  return ',';
}

const INT = /^-?(?:0|[1-9]\d*)$/;
const NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;
const BOOL = /^(?:true|false)$/i;

const INT4_MIN = -2147483648;
const INT4_MAX = 2147483647;
const INT8_MIN = -9223372036854775808n;
const INT8_MAX = 9223372036854775807n;
const DATE = /^\d{4}-\d{2}-\d{2}$/;

/** The narrowest integer type of a whole-number text: `int4`, `int8`, else (beyond int8) `numeric`. */
function integerType(cell: string): 'int4' | 'int8' | 'numeric' {
  if (cell.length <= 11) {
    const n = Number(cell);
    if (n >= INT4_MIN && n <= INT4_MAX) return 'int4';
  }
  if (cell.length > 20) return 'numeric';
  const big = BigInt(cell);
  return big >= INT8_MIN && big <= INT8_MAX ? 'int8' : 'numeric';
}

const INTEGER_RANK = { int4: 0, int8: 1, numeric: 2 } as const;

/**
 * The CKAN type of CSV column `index` over `records` (the rules of
 * `loadTable`); `text` when every cell is empty.
 * @example inferCsvType([['1'], ['2.5'], ['']], 0) // → 'numeric'
 */
export function inferCsvType(records: readonly (readonly string[])[], index: number): FieldType {
  const column = new ColumnInference();
  for (const record of records) column.see(record[index] ?? '');
  return column.type();
}

/**
 * A CSV column's type, inferred as its cells go by (see `loadTable`).
 * @example
 * const column = new ColumnInference();
 * for (const cell of ['1', '', '7.50']) column.see(cell);
 * column.type(); // → 'numeric'
 */
export class ColumnInference {
  private int = true;
  private widest: 'int4' | 'int8' | 'numeric' = 'int4';
  private numeric = true;
  private bool = true;
  private date = true;
  private timestamp = true;
  private any = false;

  see(cell: string): void {
    if (cell === '') return;
    this.any = true;
    if (!this.int && !this.numeric && !this.bool && !this.timestamp) return;
    // a number PostgreSQL's numeric cannot hold (1e131072) is no number, as the memory loader's CsvColumn reads it
    const number = (this.int || this.numeric) && NUMBER.test(cell) && withinNumeric(cell);
    if (this.int) {
      if (number && INT.test(cell)) {
        const type = integerType(cell);
        if (INTEGER_RANK[type] > INTEGER_RANK[this.widest]) this.widest = type;
      } else this.int = false;
    }
    if (this.numeric && !number) this.numeric = false;
    if (this.bool && !BOOL.test(cell)) this.bool = false;
    if (this.timestamp && !isIsoTimestamp(cell)) this.timestamp = false;
    if (this.date && !(this.timestamp && DATE.test(cell))) this.date = false;
  }

  type(): FieldType {
    if (!this.any) return 'text';
    if (this.int) return this.widest;
    if (this.numeric) return 'numeric';
    return this.bool ? 'bool' : this.date ? 'date' : this.timestamp ? 'timestamp' : 'text';
  }
}

/**
 * A number as the loader keeps it: a JavaScript number when that is exact,
 * else its exact value as plain decimal text (an integer beyond 2^53, a
 * decimal with more than 15 significant digits or too small for a normal
 * double), which the server writes as a JSON number unchanged. One text per
 * value, as PostgreSQL writes a `numeric` without its scale (`1e21` and
 * `1000000000000000000000`, `0.1…010` and `0.1…01` are one value each), so
 * grouping, `distinct` and join keys, which compare canonical text, are exact.
 */
function exactNumber(cell: string): number | string {
  const n = Number(cell);
  if (INT.test(cell)) return Number.isSafeInteger(n) ? n : cell;
  const digits = cell.replace(/[eE].*$/, '').replace(/[-.]/g, '').replace(/^0+/, '').replace(/0+$/, '');
  const magnitude = Math.abs(n);
  if (digits.length <= 15 && magnitude <= Number.MAX_SAFE_INTEGER && (magnitude >= MIN_NORMAL || digits === '')) return n;
  return decimalText(decimalOf(cell) as Decimal);
}

/** The least normal double: below it a double holds fewer than 15 digits. */
const MIN_NORMAL = 2.2250738585072014e-308;

function convertCell(cell: string, type: FieldType, pool: ColumnStrings): JsonValue {
  switch (type) {
    case 'int4':
    case 'int8':
    case 'numeric':
      return exactNumber(cell);
    case 'bool':
      return cell.toLowerCase() === 'true';
    case 'timestamp':
      return pool.intern(timestampValue(cell));
    default:
      // Pooled as it was read.
      return cell;
  }
}

const TIMESTAMP_PARTS = /^(\d{4}-\d{2}-\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(\.\d+)?)?)?/;

/**
 * A timestamp as the loader keeps it: `YYYY-MM-DDTHH:MM:SS`, with the
 * fraction as written less its trailing zeros, so one moment has one text
 * (grouping, `distinct` and join keys compare text) as PostgreSQL writes it;
 * a zone is dropped, as PostgreSQL's `timestamp` drops it.
 * @example
 * timestampValue('2023-09-07') // → "2023-09-07T00:00:00"
 * timestampValue('2023-09-07 10:00:00.500') // → "2023-09-07T10:00:00.5"
 */
export function timestampValue(text: string): string {
  const m = TIMESTAMP_PARTS.exec(text);
  if (m === null) return text;
  const fraction = m[5] === undefined ? '' : m[5].replace(/\.?0+$/, '');
  return `${m[1]}T${m[2] ?? '00'}:${m[3] ?? '00'}:${m[4] ?? '00'}${fraction}`;
}

const ISO_TIMESTAMP =
  /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?(?:Z|[+-]\d{2}(?::?\d{2})?)?)?$/;

/**
 * An ISO-8601 date (`2020-01-31`) or date-time (`2020-01-31T12:30`,
 * `…:45.5Z`, `… 12:30:45+02:00`) that names a real calendar day and time.
 * @example
 * isIsoTimestamp('2020-02-29T10:00:00Z') // true
 * isIsoTimestamp('2021-02-29')           // false (no such day)
 */
export function isIsoTimestamp(text: string): boolean {
  const m = ISO_TIMESTAMP.exec(text);
  if (m === null) return false;
  const year = Number(m[1]);
  const month = Number(m[2]);
  const day = Number(m[3]);
  if (month < 1 || month > 12 || day < 1 || day > daysIn(year, month)) return false;
  if (m[4] !== undefined && (Number(m[4]) > 23 || Number(m[5]) > 59 || Number(m[6] ?? 0) > 59)) return false;
  return true;
}

function daysIn(year: number, month: number): number {
  if (month === 2) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}

/** Distinct texts pooled per column at most. */
const POOL_LIMIT = 65536;
/** Texts a column is watched for before a pool that mostly misses is given up. */
const POOL_TRIAL = 4096;

/**
 * One column's strings: shares one copy of each repeated string (CSV and
 * JSON give a new string per cell). A column whose texts mostly differ (ids,
 * names) gains nothing from a pool and pays a lookup per cell, so after
 * `POOL_TRIAL` texts a pool that missed more than half the time stops.
 */
class ColumnStrings {
  private pool: Map<string, string> | undefined = new Map<string, string>();
  private seen = 0;

  /** The pooled copy of `text`, if the pool holds one. */
  find(text: string): string | undefined {
    return this.pool?.get(text);
  }

  intern(text: string): string {
    const pool = this.pool;
    if (pool === undefined) return text;
    if (++this.seen === POOL_TRIAL && pool.size > POOL_TRIAL / 2) {
      this.pool = undefined;
      return text;
    }
    const known = pool.get(text);
    if (known !== undefined) return known;
    if (pool.size < POOL_LIMIT && text.length <= 256) pool.set(text, text);
    return text;
  }
}

// ---------------------------------------------------------------------------
// Tables from plain rows

interface TableMeta {
  readonly id: string;
  readonly aliases: readonly string[];
  readonly source?: string | undefined;
  readonly private?: boolean | undefined;
  readonly meta?: ResourceMeta | undefined;
}

/**
 * Builds a table from plain records (as a `.json` file gives them): fields
 * and types inferred as for JSON files (see `loadTable`), `_id` = 1-based
 * position first, a missing key stored as null, every row a new object with
 * the table's keys in field order (the input objects are not changed). `id`
 * defaults to `resourceIdFor(alias)`, `alias` to none.
 *
 * @example
 * const table = tableFromRows([{ title: 'Algebra', year: 2020 }, { title: 'Poetry' }], { alias: 'courses' });
 * table.fields; // → [{ id: "_id", type: "int" }, { id: "title", type: "text" }, { id: "year", type: "int" }]
 * table.rows[1]; // → { _id: 2, title: "Poetry", year: null }
 * table.id === resourceIdFor('courses'); // → true
 */
export function tableFromRows(rows: readonly Row[], options: { id?: string; alias?: string } = {}): Table {
  const id = options.id ?? resourceIdFor(options.alias ?? '');
  return buildTable(rows, { id, aliases: options.alias === undefined ? [] : [options.alias] }, { declaration: undefined, infer: 'ckql' });
}

/** A JSON column's inference under a typing (xloader: text; DataPusher: numbers, timestamps, else text). */
export interface JsonInference {
  see(value: unknown): void;
  type(): FieldType;
}

export function jsonInferenceFor(typing: Typing): JsonInference {
  if (typing.infer === 'xloader') return { see: () => undefined, type: () => 'text' };
  if (typing.infer === 'ckql') return new JsonColumnInference();
  const cells = new DatapusherInference();
  return { see: (value) => cells.see(value === null || value === undefined ? '' : typeof value === 'object' ? JSON.stringify(value) : String(value)), type: () => cells.type() };
}

function buildTable(rows: readonly Row[], meta: TableMeta, typing: Typing): Table {
  const where = meta.source ?? meta.aliases[0] ?? meta.id;
  const declared = typing.declaration?.fields ?? [];
  const names: string[] = declared.map((field) => field.id);
  const columns = new Map<string, JsonInference>();
  const ids = rows.some((row) => Object.hasOwn(row, '_id')) ? new FileIds(where) : undefined;
  for (const [r, row] of rows.entries()) {
    ids?.see(Object.hasOwn(row, '_id') ? row['_id'] : undefined, r + 1);
    for (const key in row) {
      if (!Object.hasOwn(row, key) || key === '_id') continue;
      let column = columns.get(key);
      if (column === undefined) {
        if (!names.includes(key)) names.push(key);
        column = jsonInferenceFor(typing);
        columns.set(key, column);
      }
      column.see(row[key]);
    }
  }
  const declaredType = (name: string): FieldType | undefined => {
    const field = declared.find((each) => each.id === name);
    return field === undefined ? undefined : (field.type ?? overrideOf(field, typing));
  };
  const types = names.map((name) => declaredType(name) ?? columns.get(name)?.type() ?? 'text');
  // Values are read as their types say, as PostgreSQL's COPY would read them, except a plain inferred column's (kept as given).
  const typed = names.map((name) => declaredType(name) !== undefined || typing.infer !== 'ckql');
  const converted = names.map((name, k) => {
    if (!typed[k]) return undefined;
    const type = types[k] as FieldType;
    const values = rows.map((row, r) => {
      const v = Object.hasOwn(row, name) ? row[name] : undefined;
      try {
        return jsonValueOf(v, type === 'int' ? 'int8' : type);
      } catch (error) {
        if (!(error instanceof CellError)) throw error;
        throw toolError('DATA_INVALID', [where, `record ${r + 1}, field ${JSON.stringify(name)}: ${error.message}, its declared type`], { ...(meta.source === undefined ? {} : { file: meta.source }) });
      }
    });
    if (type === 'int') types[k] = integerWidth(values);
    return values;
  });
  const infoOf = (name: string): FieldDictionary | undefined => declared.find((field) => field.id === name)?.info;
  const fields: FieldInfo[] = [
    { id: '_id', type: 'int' },
    ...names.map((name, k) => {
      const info = infoOf(name);
      return { id: name, type: types[k] as FieldType, ...(info === undefined ? {} : { info }) };
    }),
  ];
  const make = rowFactory(fields.map((f) => f.id));
  const pools = names.map(() => new ColumnStrings());
  // Generic elements from the start: a scratch array that turned into a double array would hand
  // every number to the row as a boxed double, and each row field would hold its own box.
  const values: unknown[] = new Array<unknown>(fields.length).fill(null);
  const out: Row[] = new Array<Row>(rows.length);
  const keptIds = ids?.values();
  for (let r = 0; r < rows.length; r++) {
    const row = rows[r] as Row;
    values[0] = keptIds === undefined ? r + 1 : keptIds[r];
    for (let k = 0; k < names.length; k++) {
      const name = names[k] as string;
      const done = converted[k];
      let v: unknown = done !== undefined ? done[r] : Object.hasOwn(row, name) ? row[name] : undefined;
      // an integer read exactly (`withExactIntegers`) is kept as its text, as a CSV cell's is; a json value holds numbers
      if (typeof v === 'bigint') v = types[k] === 'json' ? Number(v) : String(v);
      if (typeof v === 'string') values[k + 1] = (pools[k] as ColumnStrings).intern(types[k] === 'timestamp' ? timestampValue(v) : v);
      else {
        if (typeof v === 'object' && v !== null && exceedsDepth(v, MAX_NESTING)) {
          throw toolError('DATA_INVALID', [where, `record ${r + 1}: the value of ${JSON.stringify(name)} is nested more than ${MAX_NESTING} levels deep`], {
            ...(meta.source === undefined ? {} : { file: meta.source }),
          });
        }
        values[k + 1] = v ?? null;
      }
    }
    out[r] = make(values) as Row;
  }
  return finishTable(ids === undefined ? out : ids.ordered(out), fields, meta);
}

const INT4_TEXT = /^\s*[+-]?\d{1,10}\s*$/;

/**
 * A data file's own `_id` column, checked as its records go by: each value a
 * whole number in `int4`'s range (PostgreSQL's `serial`, CKAN's `_id`; a
 * number or its text), each value once. A record without one, or with
 * another value, is `DATA_INVALID` naming the file and the record (its
 * 1-based number among the data records); so is a repeated value, naming
 * both records.
 * @example
 * const ids = new FileIds('prices.csv');
 * ids.see('9', 1); ids.see(7, 2);
 * ids.values() // Int32Array [9, 7]
 * ids.see('7', 3) // later, values() or ordered(): throws prices.csv: record 3: _id 7 is record 2's too …
 */
export class FileIds {
  private ids = new Int32Array(1024);
  private count = 0;
  private ascending = true;

  constructor(private readonly file: string) {}

  /** Checks record `record`'s `_id` value and keeps it. */
  see(value: unknown, record: number): number {
    const id = typeof value === 'number' ? value : typeof value === 'string' && INT4_TEXT.test(value) ? Number(value) : Number.NaN;
    if (!Number.isInteger(id) || id < INT4_MIN || id > INT4_MAX) {
      const what = value === undefined || value === null || value === '' ? 'has no _id' : `has the _id ${JSON.stringify(value)}, which is no whole number from ${INT4_MIN} to ${INT4_MAX}`;
      throw toolError('DATA_INVALID', [this.file, `record ${record} ${what}: a file's own _id column gives each record its _id, so each needs a different whole number (or leave the column out, and _id is the row's position)`], { file: this.file });
    }
    if (this.count === this.ids.length) {
      const bigger = new Int32Array(this.ids.length * 2);
      bigger.set(this.ids);
      this.ids = bigger;
    }
    if (this.count > 0 && id <= (this.ids[this.count - 1] as number)) this.ascending = false;
    this.ids[this.count++] = id;
    return id;
  }

  /** Every `_id` seen, in record order, once each is known to be different. */
  values(): Int32Array {
    const ids = this.ids.subarray(0, this.count);
    if (!this.ascending) {
      const sorted = Int32Array.from(ids).sort();
      for (let k = 1; k < sorted.length; k++) {
        if (sorted[k] === sorted[k - 1]) {
          const twice = sorted[k] as number;
          const first = ids.indexOf(twice);
          const second = ids.indexOf(twice, first + 1);
          throw toolError('DATA_INVALID', [this.file, `record ${second + 1} has the _id ${twice}, as record ${first + 1} has: each record's _id must be different`], { file: this.file });
        }
      }
    }
    return ids;
  }

  /** The rows (one per `_id` seen, in record order) in `_id` order, the order a table keeps. */
  ordered(rows: Row[]): Row[] {
    if (this.ascending) return rows;
    const ids = this.values();
    const order = Array.from(rows.keys()).sort((a, b) => (ids[a] as number) - (ids[b] as number));
    return order.map((k) => rows[k] as Row);
  }
}

/** How deep a record's value may nest: deeper cannot be written as an answer (JSON.stringify recurses). */
export const MAX_NESTING = 1_000;


const STRING = 1;
const INTEGER = 2;
const FRACTION = 4;
const BOOLEAN = 8;
const STRUCTURED = 16;

function kindBits(value: unknown): number {
  switch (typeof value) {
    case 'string':
      return STRING;
    case 'number':
      return Number.isInteger(value) ? INTEGER : FRACTION;
    case 'bigint':
      return INTEGER;
    case 'boolean':
      return BOOLEAN;
    case 'object':
      return value === null ? 0 : STRUCTURED;
    default:
      return 0;
  }
}

/**
 * A JSON column's type, inferred as its values go by (see `loadTable`):
 * integers `int4` (`int8` when one is beyond int4), numbers `numeric`,
 * booleans `bool`, ISO dates `date` (with date-times `timestamp`), other
 * texts `text`, arrays of one scalar kind `_text`/`_int4`/`_numeric`/`_bool`,
 * other objects and arrays `json`; a mix of kinds is `text` (`json` when an
 * object or array is among them).
 * @example
 * const column = new JsonColumnInference();
 * for (const value of [1, null, 2 ** 40]) column.see(value);
 * column.type(); // → 'int8'
 */
export class JsonColumnInference {
  private bits = 0;
  /** an integer beyond int4; one beyond int8 (read exactly, `withExactIntegers`) */
  private wide = false;
  private huge = false;
  /** every text is an ISO timestamp; every text is a date */
  private stamps = true;
  private dates = true;
  /** every object or array is an array of scalars; the kinds of their items */
  private arrays = true;
  private itemBits = 0;

  see(value: unknown): void {
    const bits = kindBits(value);
    if (bits === 0) return;
    this.bits |= bits;
    if (bits === INTEGER) {
      if ((value as number) < INT4_MIN || (value as number) > INT4_MAX) this.wide = true;
      if (typeof value === 'bigint' && (value < INT8_MIN || value > INT8_MAX)) this.huge = true;
    } else if (bits === STRING) {
      if (this.stamps && !isIsoTimestamp(value as string)) this.stamps = false;
      if (this.dates && !DATE.test(value as string)) this.dates = false;
    } else if (bits === STRUCTURED && this.arrays) {
      if (!Array.isArray(value)) this.arrays = false;
      else {
        for (const item of value as readonly unknown[]) {
          if (item === null) continue;
          const itemBits = kindBits(item);
          if (itemBits === STRUCTURED) {
            this.arrays = false;
            break;
          }
          this.itemBits |= itemBits;
        }
      }
    }
  }

  type(): FieldType {
    const bits = this.bits;
    if (bits === 0) return 'text';
    if ((bits & STRUCTURED) !== 0) return bits === STRUCTURED ? this.arrayType() : 'json';
    if ((bits & ~(INTEGER | FRACTION)) === 0) return bits === INTEGER && !this.huge ? (this.wide ? 'int8' : 'int4') : 'numeric';
    if (bits === BOOLEAN) return 'bool';
    if (bits === STRING) return !this.stamps ? 'text' : this.dates ? 'date' : 'timestamp';
    return 'text';
  }

  /** A column of arrays of one scalar kind is CKAN's array type (`_text`, `_int4`, …); anything else is `json`. */
  private arrayType(): FieldType {
    const kinds = this.itemBits;
    if (!this.arrays) return 'json';
    if (kinds === STRING) return '_text';
    if (kinds === INTEGER) return '_int4';
    if ((kinds & ~(INTEGER | FRACTION)) === 0 && kinds !== 0) return '_numeric';
    if (kinds === BOOLEAN) return '_bool';
    return kinds === 0 ? '_text' : 'json';
  }
}

function finishTable(rows: Row[], fields: readonly FieldInfo[], meta: TableMeta): Table {
  if (meta.meta?.primaryKey !== undefined) checkUnique(rows, meta.meta.primaryKey, meta.source ?? meta.id);
  const table: Table = {
    id: meta.id,
    aliases: meta.aliases,
    fields,
    rows,
    ...(meta.private === true ? { private: true } : {}),
    ...(meta.source === undefined ? {} : { source: meta.source }),
    ...(meta.meta === undefined ? {} : { meta: meta.meta }),
  };
  return table;
}

/** A declared primary key holds: no two records share its values (PostgreSQL's unique index refuses them too). */
function checkUnique(rows: readonly Row[], key: readonly string[], where: string): void {
  const seen = new Map<string, number>();
  rows.forEach((row, r) => {
    const values = key.map((name) => row[name] ?? null);
    if (values.some((value) => value === null)) return;
    const text = JSON.stringify(values);
    const first = seen.get(text);
    if (first !== undefined) {
      throw toolError('DATA_INVALID', [where, `records ${first + 1} and ${r + 1} have the same primary key (${key.join(', ')}) ${text}`], { file: where });
    }
    seen.set(text, r);
  });
}

// ---------------------------------------------------------------------------
// Stable ids

/** The namespace of ckql resource ids (a fixed random UUID: ids stay the same across versions). */
const RESOURCE_NAMESPACE = '6f1d2c8e-3b4a-4e59-9c7d-0a8b5e2f41c3';

/**
 * The stable id of a local resource: a name-based UUID (RFC 4122 version 5,
 * SHA-1) of its alias in ckql's fixed namespace. The same alias gives the
 * same id on every machine, so queries and links that use the id keep working.
 *
 * @example
 * resourceIdFor('courses') === resourceIdFor('courses') // true, on every run
 * /^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/.test(resourceIdFor('courses')) // true
 */
export function resourceIdFor(alias: string): string {
  return uuidV5(alias, RESOURCE_NAMESPACE);
}

/** RFC 4122 §4.3: SHA-1 of namespace bytes + UTF-8 name, version and variant bits set. */
export function uuidV5(name: string, namespace: string): string {
  const hexDigits = namespace.replaceAll('-', '');
  const text = ENCODER.encode(name);
  const input = new Uint8Array(16 + text.length);
  for (let k = 0; k < 16; k++) input[k] = Number.parseInt(hexDigits.slice(2 * k, 2 * k + 2), 16);
  input.set(text, 16);
  const hash = sha1(input);
  hash[6] = ((hash[6] as number) & 0x0f) | 0x50;
  hash[8] = ((hash[8] as number) & 0x3f) | 0x80;
  const hex = toHex(hash.subarray(0, 16));
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

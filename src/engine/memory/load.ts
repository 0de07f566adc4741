/**
 * Local data → tables: `.csv`, `.json` (an array of objects) and
 * `.ndjson`/`.jsonl` files, each one resource named after its file. Every
 * file is streamed: its text is never held whole (a JSON array is cut into
 * its elements as it arrives, each parsed on its own).
 *
 * Rows are built by one generated object literal per table (see
 * `evaluate/row-shape.ts`), so all rows share one compact hidden class, and
 * repeated strings of a column share one copy: a loaded table costs little
 * more heap than `JSON.parse` of the same data.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { StringDecoder } from 'node:string_decoder';
import { open, readdir, stat } from 'node:fs/promises';
import { basename, extname, join } from 'node:path';
import { parse as csvParser } from 'csv-parse';
import type { FieldInfo, FieldType, JsonValue, Row, Table } from '../../datastore/types.js';
import { DatastoreError, ToolError, toolError } from '../../errors.js';
import { rowFactory } from './row-shape.js';
import { exceedsDepth } from '../../datastore/values.js';

/**
 * Options of `loadResources`.
 * @example
 * await loadResources('data', { private: ['salaries'] }); // the table `salaries` needs a token on the server
 */
export interface LoadOptions {
  /** ids or aliases of the resources to mark private (the server then asks for a token) */
  readonly private?: readonly string[];
  /**
   * ids or aliases of the only resources to read; the other files are found
   * (names are still checked) but not read, so a one-shot query pays for the
   * files it names only. Default: every resource.
   */
  readonly only?: readonly string[];
  /**
   * told as each file is read, for a progress bar: after every chunk read
   * (64 KiB) and once at its end (so a bar throttles its own drawing)
   */
  readonly onProgress?: (progress: FileProgress) => void;
  /**
   * told of each file that cannot be read (`DATA_INVALID` with its file and
   * line, a second file with a taken name): the file is skipped and the
   * others are read. Without it, the first such file stops the load.
   */
  readonly onBadFile?: (error: ToolError) => void;
}

/**
 * Whether an error is about one data file (its text, its name), so a loader
 * may skip that file and read the others.
 */
export function isBadFile(error: unknown): error is ToolError {
  return error instanceof ToolError && (error.code === 'DATA_INVALID' || error.code === 'DATA_DUPLICATE_ALIAS' || error.code === 'DATA_UNSUPPORTED');
}

/**
 * How far the reading of one data file is, for a progress bar.
 * @example
 * await loadResources('big.csv', { onProgress: (p) => console.error(`${p.resource}: ${p.rows} rows, ${Math.round((100 * p.bytes) / p.totalBytes)} %`) });
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

const EXTENSIONS: ReadonlySet<string> = new Set(['.csv', '.json', '.ndjson', '.jsonl']);

/**
 * Loads every resource named by `paths`: a directory gives its `.csv`,
 * `.json`, `.ndjson` and `.jsonl` files (sorted by name, not recursive,
 * others and hidden files skipped), a file gives itself. Each file is one
 * table: alias = the file name without extension, id = `resourceIdFor(alias)`,
 * `source` = the path.
 *
 * CSV files are read with a real parser (quotes, `""` escapes, newlines in
 * quoted cells, CRLF, a BOM); the delimiter is `,`, or `;` or a tab when the
 * header line holds more of those than commas.
 *
 * Column types are inferred over all values and named as CKAN names them
 * (docs/ckan-2.11-reference.md §5). CSV: an empty cell is null; a column
 * whose other cells are all integers is `int4` (all within its range) or
 * `int8` (beyond it, or `numeric` beyond int8's), all numbers `numeric`
 * (JSON number syntax, so `007` or `+5` stay text), all `true`/`false` (any
 * case) `bool`, all ISO-8601 dates `date`, dates and date-times `timestamp`,
 * else `text`; values are converted to match: an integer beyond 2^53 (or a
 * decimal with more digits than a double holds) is kept as its exact text,
 * which the server writes as a JSON number; a timestamp is kept as
 * `YYYY-MM-DDTHH:MM:SS[.fraction]`, its zone dropped (PostgreSQL's
 * `timestamp` drops it). JSON/NDJSON: values are kept as they are;
 * integers → `int4`/`int8`, other numbers `numeric`, booleans → `bool`,
 * strings → `date`/`timestamp` as in CSV else `text`, arrays of texts
 * (numbers, booleans) → `_text` (`_int4`, `_numeric`, `_bool`), other
 * objects/arrays → `json`, a mix of kinds → `text` (or `json` if an object
 * or array is among them). Every table gets `_id` (its 1-based row position,
 * type `int`) as its first field; an `_id` column in a file is replaced by it.
 * A value nested more than `MAX_NESTING` levels deep is refused: no answer
 * could be written for it.
 *
 * Throws `ToolError`: `DATA_NOT_FOUND` (no such path), `DATA_UNSUPPORTED`
 * (a file with another extension), `DATA_INVALID` (unparsable file, with the
 * `line` of the bad CSV record or NDJSON line; a directory without data
 * files), `DATA_DUPLICATE_ALIAS` (two files with one name, e.g. `a.csv` and
 * `a.json`), `USAGE` (a `private` name that no loaded resource has).
 *
 * @example
 * const tables = await loadResources('examples/data', { private: ['enrolments'] });
 * tables.map((t) => t.aliases[0]); // → ["courses", "enrolments", "schools"]
 * evaluate(compile('from courses where subject = math limit 5'), tables[0]);
 */
export async function loadResources(paths: string | readonly string[], options: LoadOptions = {}): Promise<Table[]> {
  const files: string[] = [];
  for (const path of typeof paths === 'string' ? [paths] : paths) {
    for (const file of await dataFiles(path)) files.push(file);
  }
  const byAlias = new Map<string, string>();
  const skip = (error: ToolError): void => {
    if (options.onBadFile === undefined) throw error;
    options.onBadFile(error);
  };
  const named: string[] = [];
  for (const file of files) {
    const alias = aliasOf(file);
    const first = byAlias.get(alias);
    if (first !== undefined) {
      skip(toolError('DATA_DUPLICATE_ALIAS', [alias, first, file], { file }));
      continue;
    }
    byAlias.set(alias, file);
    named.push(file);
  }
  const privateNames = new Set(options.private ?? []);
  const only = options.only === undefined ? undefined : new Set(options.only);
  const tables: Table[] = [];
  for (const file of named) {
    const alias = aliasOf(file);
    const id = resourceIdFor(alias);
    const isPrivate = privateNames.delete(alias) || privateNames.delete(id);
    if (only !== undefined && !only.has(alias) && !only.has(id)) continue;
    try {
      tables.push(await loadFile(file, { id, alias, private: isPrivate }, options.onProgress));
    } catch (error) {
      if (!isBadFile(error)) throw error;
      skip(error);
    }
  }
  const [unknown] = privateNames;
  if (unknown !== undefined) {
    throw toolError('USAGE', [
      `--private names ${JSON.stringify(unknown)}, which is not a loaded resource (loaded: ${[...byAlias.keys()].join(', ') || 'none'})`,
    ]);
  }
  return tables;
}

/**
 * Whether `file` is the file of the resource `name` (its alias or its id).
 * @example isFileOf('courses', '/data/courses.csv') // true
 */
export function isFileOf(name: string, file: string): boolean {
  const alias = aliasOf(file);
  return alias === name || resourceIdFor(alias) === name;
}

/**
 * The data files `paths` name, with the alias and id each would get, without
 * reading them (a REPL lists resources before loading any). Throws as
 * `loadResources` does for a missing path or two files with one name.
 * @example (await listDataFiles('examples/data')).map((f) => f.alias) // → ["courses", "enrolments", "schools"]
 */
export async function listDataFiles(paths: string | readonly string[]): Promise<{ file: string; alias: string; id: string }[]> {
  const found: { file: string; alias: string; id: string }[] = [];
  for (const path of typeof paths === 'string' ? [paths] : paths) {
    for (const file of await dataFiles(path)) {
      const alias = aliasOf(file);
      const first = found.find((each) => each.alias === alias);
      if (first !== undefined) throw toolError('DATA_DUPLICATE_ALIAS', [alias, first.file, file], { file });
      found.push({ file, alias, id: resourceIdFor(alias) });
    }
  }
  return found;
}

async function dataFiles(path: string): Promise<string[]> {
  let info;
  try {
    info = await stat(path);
  } catch (error) {
    throw toolError('DATA_NOT_FOUND', [path], { file: path, cause: error });
  }
  if (info.isDirectory()) {
    const names = (await readdir(path)).filter((name) => !name.startsWith('.') && EXTENSIONS.has(extname(name).toLowerCase()));
    names.sort(compareNames);
    const files: string[] = [];
    for (const name of names) {
      const file = join(path, name);
      if ((await stat(file)).isFile()) files.push(file);
    }
    if (files.length === 0) {
      throw toolError('DATA_INVALID', [path, 'this directory holds no .csv, .json, .ndjson or .jsonl file'], { file: path });
    }
    return files;
  }
  if (!EXTENSIONS.has(extname(path).toLowerCase())) throw toolError('DATA_UNSUPPORTED', [path], { file: path });
  return [path];
}

function compareNames(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function aliasOf(file: string): string {
  const name = basename(file);
  return name.slice(0, name.length - extname(name).length);
}

async function loadFile(file: string, meta: { id: string; alias: string; private: boolean }, onProgress?: (progress: FileProgress) => void): Promise<Table> {
  const ext = extname(file).toLowerCase();
  const where = { id: meta.id, alias: meta.alias, source: file, private: meta.private };
  if (ext === '.csv') return tableFromCsvFile(file, where, onProgress);
  if (ext !== '.json') return buildTable(await ndjsonFileRows(file, meta.alias, onProgress), where);
  return buildTable(await jsonArrayFileRows(file, meta.alias, onProgress), where);
}

function stripBom(text: string): string {
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

// ---------------------------------------------------------------------------
// JSON and NDJSON

/**
 * The records of a `.json` file holding one array of objects, cut into its
 * elements as the file streams in (each parsed by `JSON.parse` on its own),
 * so the file's text is never held whole: a file larger than the longest
 * string V8 makes (≈ 512 MiB) loads too.
 */
async function jsonArrayFileRows(file: string, alias: string, onProgress?: (progress: FileProgress) => void): Promise<Row[]> {
  const totalBytes = (await stat(file)).size;
  const rows: Row[] = [];
  const reading = jsonArrayRecords(file);
  let reported = 0;
  for await (const { record } of reading.records) {
    rows.push(record as Row);
    const bytes = reading.bytesRead();
    if (bytes !== reported) {
      reported = bytes;
      onProgress?.({ resource: alias, rows: rows.length, bytes, totalBytes });
    }
  }
  onProgress?.({ resource: alias, rows: rows.length, bytes: totalBytes, totalBytes });
  return rows;
}

/**
 * The records of a `.json` file holding one array of objects, each with the
 * line it starts on, as the file streams in, and the bytes read so far (for
 * a progress bar). `ckql load` reads its files the same way. An aborted
 * `signal` ends the reading with `ABORTED`.
 * @example
 * for await (const { record, line } of jsonArrayRecords('courses.json').records) console.log(line, record);
 */
export function jsonArrayRecords(
  file: string,
  signal?: AbortSignal,
): { records: AsyncIterable<{ record: Record<string, unknown>; line: number }>; bytesRead: () => number } {
  const input = createReadStream(file, signal === undefined ? {} : { signal });
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
      ready.push({ record: value, line });
    });
    const decoder = new StringDecoder('utf8');
    try {
      for await (const chunk of input) {
        splitter.feed(decoder.write(chunk as Buffer));
        yield* ready.splice(0);
      }
      splitter.feed(decoder.end());
      splitter.end();
      yield* ready.splice(0);
    } catch (error) {
      if ((error as { name?: unknown }).name === 'AbortError') {
        throw new DatastoreError('ABORTED', `loading ${file} was interrupted; nothing of it was kept`, { cause: error });
      }
      throw error;
    } finally {
      input.destroy();
    }
  })();
  return { records, bytesRead: () => input.bytesRead };
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

/** The records of an NDJSON file, read line by line as it streams in (its text is never held whole). */
async function ndjsonFileRows(file: string, alias: string, onProgress?: (progress: FileProgress) => void): Promise<Row[]> {
  const totalBytes = (await stat(file)).size;
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
    rows.push(value);
  };
  const input = createReadStream(file);
  const decoder = new StringDecoder('utf8');
  let rest = '';
  try {
    for await (const chunk of input) {
      const text = rest + decoder.write(chunk as Buffer);
      let start = rest === '' && lineNumber === 0 ? (text.charCodeAt(0) === 0xfeff ? 1 : 0) : 0;
      for (let end = text.indexOf('\n', start); end !== -1; end = text.indexOf('\n', start)) {
        take(text.slice(start, end));
        start = end + 1;
      }
      rest = text.slice(start);
      onProgress?.({ resource: alias, rows: rows.length, bytes: input.bytesRead, totalBytes });
    }
  } finally {
    input.destroy();
  }
  take(rest + decoder.end());
  onProgress?.({ resource: alias, rows: rows.length, bytes: totalBytes, totalBytes });
  return rows;
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
 * A CSV file read as a stream: each record's cells go straight into one
 * array per column (repeated texts shared) while each column's type is
 * inferred, and rows are built once the types are known. Neither the
 * file's text nor a list of parsed records is ever held whole.
 */
async function tableFromCsvFile(file: string, meta: TableMeta, onProgress?: (progress: FileProgress) => void): Promise<Table> {
  const totalBytes = (await stat(file)).size;
  const parser = csvParser({
    bom: true,
    skip_empty_lines: true,
    // relax_quotes: a stray `"` inside an unquoted cell (`5" screen`) is kept as text, as spreadsheets write it.
    relax_quotes: true,
    delimiter: delimiterOf(await headText(file)),
  });
  const input = createReadStream(file);
  let header: string[] | undefined;
  let columns: { name: string; index: number }[] = [];
  let cells: string[][] = [];
  let inference: ColumnInference[] = [];
  let pools: ColumnStrings[] = [];
  let rows = 0;
  const takeHeader = (record: string[]): void => {
    columns = csvColumns(record, file);
    header = record;
    cells = columns.map(() => []);
    inference = columns.map(() => new ColumnInference());
    pools = columns.map(() => new ColumnStrings());
  };
  const take = (record: string[]): void => {
    if (header === undefined) return takeHeader(record);
    for (let k = 0; k < columns.length; k++) {
      const cell = record[(columns[k] as { index: number }).index] ?? '';
      (inference[k] as ColumnInference).see(cell);
      (cells[k] as string[]).push(cell === '' ? '' : (pools[k] as ColumnStrings).intern(cell));
    }
    rows++;
  };
  await new Promise<void>((resolve, reject) => {
    const fail = (error: unknown): void => {
      input.destroy();
      parser.destroy();
      reject(error);
    };
    parser.on('readable', () => {
      try {
        for (let record: unknown; (record = parser.read()) !== null; ) take(record as string[]);
      } catch (error) {
        fail(error);
      }
    });
    parser.on('error', (error: Error & { lines?: unknown }) => {
      const line = typeof error.lines === 'number' ? error.lines : undefined;
      fail(toolError('DATA_INVALID', [file, `not valid CSV: ${error.message}`], { file, ...(line === undefined ? {} : { line }), cause: error }));
    });
    parser.on('end', resolve);
    input.on('error', fail);
    if (onProgress !== undefined) {
      const alias = meta.alias ?? meta.id;
      input.on('data', () => onProgress({ resource: alias, rows, bytes: input.bytesRead, totalBytes }));
    }
    input.pipe(parser);
  });
  if (header === undefined) csvColumns(undefined, file);
  onProgress?.({ resource: meta.alias ?? meta.id, rows, bytes: totalBytes, totalBytes });
  const types = inference.map((column) => column.type());
  const fields: FieldInfo[] = [{ id: '_id', type: 'int' }, ...columns.map((c, k) => ({ id: c.name, type: types[k] as FieldType }))];
  const make = rowFactory(fields.map((f) => f.id));
  // Generic elements from the start: a scratch array that turned into a double array would hand
  // every number to the row as a boxed double, and each row field would hold its own box.
  const values: unknown[] = new Array<unknown>(fields.length).fill(null);
  const out: Row[] = new Array<Row>(rows);
  for (let r = 0; r < rows; r++) {
    values[0] = r + 1;
    for (let k = 0; k < columns.length; k++) {
      const cell = (cells[k] as string[])[r] as string;
      values[k + 1] = cell === '' ? null : convertCell(cell, types[k] as FieldType, pools[k] as ColumnStrings);
    }
    out[r] = make(values) as Row;
  }
  return finishTable(out, fields, meta);
}

/** The start of a file, enough to hold its header line (the delimiter is read from it). */
async function headText(file: string): Promise<string> {
  const handle = await open(file, 'r');
  try {
    const buffer = Buffer.alloc(1024 * 1024);
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    return stripBom(buffer.subarray(0, bytesRead).toString('utf8'));
  } finally {
    await handle.close();
  }
}

/**
 * The columns of a CSV header, with each one's cell index; the file's own
 * `_id` column (a datastore dump has one) is left out, as `_id` is the row's
 * position. Throws `DATA_INVALID` for a missing header, an empty or a
 * repeated name.
 * @example csvColumns(['_id', 'a', 'b'], 'x.csv') // → [{ name: 'a', index: 1 }, { name: 'b', index: 2 }]
 */
export function csvColumns(header: readonly string[] | undefined, file: string): { name: string; index: number }[] {
  if (header === undefined) throw toolError('DATA_INVALID', [file, 'the file is empty: a CSV file needs a header line'], { file, line: 1 });
  const seen = new Set<string>();
  header.forEach((name, i) => {
    if (name === '') throw toolError('DATA_INVALID', [file, `column ${i + 1} of the header has no name`], { file, line: 1 });
    if (seen.has(name)) throw toolError('DATA_INVALID', [file, `the header names the column ${JSON.stringify(name)} twice`], { file, line: 1 });
    seen.add(name);
  });
  return header.map((name, index) => ({ name, index })).filter((c) => c.name !== '_id');
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
 * `loadResources`); `text` when every cell is empty.
 * @example inferCsvType([['1'], ['2.5'], ['']], 0) // → 'numeric'
 */
export function inferCsvType(records: readonly (readonly string[])[], index: number): FieldType {
  const column = new ColumnInference();
  for (const record of records) column.see(record[index] ?? '');
  return column.type();
}

/**
 * A CSV column's type, inferred as its cells go by (see `loadResources`).
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
    if (this.int) {
      if (INT.test(cell)) {
        const type = integerType(cell);
        if (INTEGER_RANK[type] > INTEGER_RANK[this.widest]) this.widest = type;
      } else this.int = false;
    }
    if (this.numeric && !(NUMBER.test(cell) && Number.isFinite(Number(cell)))) this.numeric = false;
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
 * else its text (an integer beyond 2^53, a decimal with more than 15
 * significant digits), which the server writes as a JSON number unchanged.
 */
function exactNumber(cell: string): number | string {
  const n = Number(cell);
  if (INT.test(cell)) return Number.isSafeInteger(n) ? n : cell;
  const digits = cell.replace(/[eE].*$/, '').replace(/[-.]/g, '').replace(/^0+/, '').replace(/0+$/, '');
  return digits.length <= 15 ? n : cell;
}

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
 * fraction as written; a zone is dropped, as PostgreSQL's `timestamp` drops it.
 * @example
 * timestampValue('2023-09-07') // → "2023-09-07T00:00:00"
 */
export function timestampValue(text: string): string {
  const m = TIMESTAMP_PARTS.exec(text);
  if (m === null) return text;
  return `${m[1]}T${m[2] ?? '00'}:${m[3] ?? '00'}:${m[4] ?? '00'}${m[5] ?? ''}`;
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
  readonly alias?: string | undefined;
  readonly source?: string | undefined;
  readonly private?: boolean | undefined;
}

/**
 * Builds a table from plain records (as a `.json` file gives them): fields
 * and types inferred as for JSON files (see `loadResources`), `_id` = 1-based
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
  return buildTable(rows, { id, alias: options.alias });
}

function buildTable(rows: readonly Row[], meta: TableMeta): Table {
  const names: string[] = [];
  const columns = new Map<string, JsonColumnInference>();
  for (const row of rows) {
    for (const key in row) {
      if (!Object.hasOwn(row, key) || key === '_id') continue;
      let column = columns.get(key);
      if (column === undefined) {
        names.push(key);
        column = new JsonColumnInference();
        columns.set(key, column);
      }
      column.see(row[key]);
    }
  }
  const types = names.map((name) => (columns.get(name) as JsonColumnInference).type());
  const fields: FieldInfo[] = [{ id: '_id', type: 'int' }, ...names.map((name, k) => ({ id: name, type: types[k] as FieldType }))];
  const make = rowFactory(fields.map((f) => f.id));
  const pools = names.map(() => new ColumnStrings());
  // Generic elements from the start: a scratch array that turned into a double array would hand
  // every number to the row as a boxed double, and each row field would hold its own box.
  const values: unknown[] = new Array<unknown>(fields.length).fill(null);
  const out: Row[] = new Array<Row>(rows.length);
  for (let r = 0; r < rows.length; r++) {
    const row = rows[r] as Row;
    values[0] = r + 1;
    for (let k = 0; k < names.length; k++) {
      const name = names[k] as string;
      const v = Object.hasOwn(row, name) ? row[name] : undefined;
      if (typeof v === 'string') values[k + 1] = (pools[k] as ColumnStrings).intern(types[k] === 'timestamp' ? timestampValue(v) : v);
      else {
        if (typeof v === 'object' && v !== null && exceedsDepth(v, MAX_NESTING)) {
          throw toolError('DATA_INVALID', [meta.source ?? meta.alias ?? meta.id, `record ${r + 1}: the value of ${JSON.stringify(name)} is nested more than ${MAX_NESTING} levels deep`], {
            ...(meta.source === undefined ? {} : { file: meta.source }),
          });
        }
        values[k + 1] = v ?? null;
      }
    }
    out[r] = make(values) as Row;
  }
  return finishTable(out, fields, meta);
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
    case 'boolean':
      return BOOLEAN;
    case 'object':
      return value === null ? 0 : STRUCTURED;
    default:
      return 0;
  }
}

/**
 * A JSON column's type, inferred as its values go by (see `loadResources`):
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
  /** an integer beyond int4 */
  private wide = false;
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
    if ((bits & ~(INTEGER | FRACTION)) === 0) return bits === INTEGER ? (this.wide ? 'int8' : 'int4') : 'numeric';
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
  const table: Table = {
    id: meta.id,
    aliases: meta.alias === undefined ? [] : [meta.alias],
    fields,
    rows,
    ...(meta.private === true ? { private: true } : {}),
    ...(meta.source === undefined ? {} : { source: meta.source }),
  };
  return table;
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
  const ns = Buffer.from(namespace.replaceAll('-', ''), 'hex');
  const hash = createHash('sha1').update(ns).update(name, 'utf8').digest();
  hash[6] = ((hash[6] as number) & 0x0f) | 0x50;
  hash[8] = ((hash[8] as number) & 0x3f) | 0x80;
  const hex = hash.subarray(0, 16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

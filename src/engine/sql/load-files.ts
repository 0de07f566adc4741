/**
 * Loading files into a PostgreSQL datastore without holding them in memory:
 * a CSV file is read twice as a stream, once to infer its column types (the
 * memory loader's `ColumnInference`) and once to `COPY` its cells in
 * batches, as written (so `7.50` keeps its scale in a `numeric` column and
 * a 19-digit integer every digit); an NDJSON file the same way, line by
 * line, and a JSON array element by element (`jsonArrayRecords`). Each
 * resource is one transaction, as in `loadTables`.
 */
import { createReadStream } from 'node:fs';
import { open, stat } from 'node:fs/promises';
import { extname } from 'node:path';
import { createInterface } from 'node:readline';
import { Readable } from 'node:stream';
import { DatastoreError, toolError } from '../../errors.js';
import type { ToolError } from '../../errors.js';
import {
  csvColumns, declaredCell, delimiterOf, FileIds, inferenceFor, integerWidth, jsonInferenceFor, MAX_NESTING, withExactIntegers,
  overrideOf, planCsvColumns, QUOTED_EMPTY, resourceIdFor,
} from '../memory/load.js';
import { isBadFile, jsonArrayRecords, listDataFiles } from '../node/load-resources.js';
import { CsvReader, CsvRecords, CsvSyntaxError } from '../memory/csv-reader.js';
import type { ColumnPlan, CsvPlan, Inference, JsonInference, Typing } from '../memory/load.js';
import { CellError, cellValue, jsonValueOf } from '../declared.js';
import type { InferMode } from '../declared.js';
import type { FieldDictionary, FieldType, JsonValue } from '../../datastore/types.js';
import { exceedsDepth } from '../../datastore/values.js';
import { ALIAS_NAME_RULE, isValidAliasName } from '../../datastore/validate.js';
import { NODE_BYTES, utf8Chunks } from '../node/files.js';
import type { InvalidUtf8 } from '../types.js';
import type { Db } from './db.js';
import { sqlTypeOf } from './layout.js';
import type { LoadTablesOptions, TableShape } from './load.js';
import { createTable, csvCell, finishTable, setUpDatastore } from './load.js';

/**
 * Options of `loadFiles`.
 * @example
 * await loadFiles(db, ['big.csv'], { replace: true, alias: 'big', onProgress: (p) => bar.update(p.rows) });
 */
export interface LoadFilesOptions extends LoadTablesOptions {
  /** the resource's alias (one file only); default: the file name without its extension */
  readonly alias?: string;
  /** mark every loaded resource private (`true`), or those named (ids or aliases) */
  readonly private?: true | readonly string[];
  /** a fields file declaring the one data file loaded (engine/declared.ts); default: a `<name>.fields.json` beside each */
  readonly fields?: string;
  /** how columns nobody declared are typed; default `ckql` */
  readonly infer?: InferMode;
  /** bytes that are not UTF-8: `refuse` (default: `DATA_INVALID` with the line and offset) or `replace` (each read as U+FFFD) */
  readonly invalidUtf8?: InvalidUtf8;
  /**
   * told of each file that cannot be loaded (its text, its column names):
   * its transaction rolls back and the other files are loaded. Without it,
   * the first such file stops the load (those before it stay loaded).
   */
  readonly onBadFile?: (error: ToolError) => void;
}

/** What one loaded resource became. */
export interface LoadedResource {
  readonly id: string;
  readonly alias: string;
  readonly rows: number;
}

/**
 * Loads every data file `paths` name (files, or folders of files) into `db`,
 * one resource per file, in CKAN's layout, with the types, data dictionary,
 * ids and `_id`s they declare (as the memory loader reads them).
 * @example
 * const db = await openPglite('./ckql-db');
 * await loadFiles(db, ['examples/data'], { replace: true }); // → [{ id: '…', alias: 'courses', rows: 12 }, …]
 */
export async function loadFiles(db: Db, paths: readonly string[], options: LoadFilesOptions = {}): Promise<LoadedResource[]> {
  const files = await listDataFiles(paths, options.fields === undefined ? {} : { fields: options.fields });
  if (options.alias !== undefined && files.length !== 1) throw toolError('USAGE', [`--alias names one resource, but ${files.length} files are loaded`]);
  if (options.alias !== undefined && !isValidAliasName(options.alias)) {
    throw toolError('USAGE', [`--alias ${JSON.stringify(options.alias)} is not a valid alias name`], { hint: ALIAS_NAME_RULE });
  }
  const privateNames = new Set(options.private === true || options.private === undefined ? [] : options.private);
  // Checked before anything is loaded.
  const unknown = [...privateNames].find((name) => !files.some((f) => f.aliases.includes(name) || f.id === name));
  if (unknown !== undefined) {
    throw toolError('USAGE', [`--private names ${JSON.stringify(unknown)}, which is not a loaded resource (loaded: ${files.map((f) => f.alias).join(', ') || 'none'})`]);
  }
  await setUpDatastore(db);
  const loaded: LoadedResource[] = [];
  for (const found of files) {
    const alias = options.alias ?? found.alias;
    const id = options.alias === undefined ? found.id : found.declaration?.resourceId ?? resourceIdFor(options.alias);
    const aliases = options.alias === undefined ? found.aliases : [options.alias];
    const isPrivate = options.private === true || privateNames.has(found.alias) || privateNames.has(found.id);
    const meta = { id, aliases, source: found.file, meta: found.meta, ...(isPrivate ? { private: true } : {}) };
    const typing: Typing = { declaration: found.declaration, infer: options.infer ?? 'ckql' };
    const ext = extname(found.file).toLowerCase();
    try {
      if (ext === '.csv' || ext === '.tsv') {
        loaded.push({ id, alias, rows: await loadCsvFile(db, found.file, meta, typing, options) });
      } else {
        // NDJSON line by line, a JSON array element by element: both streamed, in the same two passes.
        const recordsOf = ext === '.json' ? jsonArrayRecords : ndjsonRecords;
        loaded.push({ id, alias, rows: await loadJsonFile(db, found.file, meta, typing, options, recordsOf) });
      }
    } catch (error) {
      if (options.onBadFile === undefined || !isBadFile(error)) throw error;
      options.onBadFile(error);
    }
  }
  return loaded;
}

/** A declared type's PostgreSQL type (a Table Schema `integer` is `int4` or `int8` by its values). */
function declaredSqlType(type: FieldType, widest: 'int4' | 'int8'): { type: FieldType; sqlType: string } {
  const resolved = type === 'int' ? widest : type;
  return { type: resolved, sqlType: sqlTypeOf(resolved) };
}

/** Whether a declared column's cells must be converted for COPY: `json` (CKAN's `nested`) and arrays. */
function convertsForCopy(type: FieldType): boolean {
  return type === 'json' || type.startsWith('_');
}

async function loadCsvFile(db: Db, file: string, meta: Omit<TableShape, 'columns'>, typing: Typing, options: LoadFilesOptions): Promise<number> {
  const delimiter = delimiterOf(await head(file));
  const trim = typing.infer === 'xloader';
  // Pass 1: the header and each column's type, as the memory loader infers them; declared cells are checked as it reads them.
  let plan: CsvPlan | undefined;
  let inference: Inference[] = [];
  let widest: ('int4' | 'int8')[] = [];
  let rows = 0;
  // the file's own `_id` column gives the rows their `_id` (checked as the memory loader checks it)
  const ids = new FileIds(file);
  const resource = meta.aliases[0] ?? meta.id;
  const totalBytes = (await stat(file)).size;
  const quoted = typing.declaration !== undefined;
  const invalidUtf8 = options.invalidUtf8 ?? 'refuse';
  const reading = csvRecords(file, delimiter, quoted, options.signal, invalidUtf8);
  let reported = 0;
  for await (const { cells: record, line } of reading.records) {
    if (plan === undefined) {
      plan = planCsvColumns(record, file, typing);
      refuseWidth(plan.columns.length, file);
      inference = plan.columns.map((column) => inferenceFor(column, typing));
      widest = plan.columns.map(() => 'int4');
      continue;
    }
    let length = 0;
    for (let k = 0; k < plan.columns.length; k++) {
      const column = plan.columns[k] as ColumnPlan;
      let cell = column.index < 0 ? '' : (record[column.index] ?? '');
      length += cell.length;
      if (cell.includes('\u0000')) throw nulError(file, line, column.name);
      if (trim) cell = cell.trim();
      if (cell === QUOTED_EMPTY && column.declared === undefined) cell = '';
      if (column.declared === undefined) (inference[k] as Inference).see(cell);
      else if (cell !== '' && cell !== QUOTED_EMPTY) {
        const value = declaredCell(cell, column.declared === 'int' ? 'int8' : column.declared, file, rows, column.name);
        if (column.declared === 'int' && integerWidth([value]) === 'int8') widest[k] = 'int8';
      }
    }
    if (length > MAX_RECORD_LENGTH) throw longRecordError(file, line);
    rows++;
    if (plan.idIndex !== undefined) ids.see(record[plan.idIndex] ?? '', rows);
    // A report per block the stream reads: the rows are not counted yet, the bytes are.
    const bytes = reading.bytesRead();
    if (bytes !== reported) {
      reported = bytes;
      options.onProgress?.({ resource, rows, totalRows: 0, reading: { bytes, totalBytes } });
    }
  }
  // No record at all: the file is empty (csvColumns says so).
  if (plan === undefined) csvColumns(undefined, file);
  const { columns, idIndex } = plan as CsvPlan;
  if (idIndex !== undefined) ids.values();
  const shape: TableShape = {
    ...meta,
    ...(idIndex === undefined ? {} : { keepIds: true }),
    columns: columns.map((c, k) => {
      const typed = c.declared === undefined ? { type: (inference[k] as Inference).type(), sqlType: '' } : declaredSqlType(c.declared, widest[k] as 'int4' | 'int8');
      return { id: c.name, type: typed.type, sqlType: typed.sqlType || sqlTypeOf(typed.type), ...(c.info === undefined ? {} : { info: c.info }) };
    }),
  };
  // Pass 2: COPY in batches.
  async function* lines(): AsyncIterable<CopyLine> {
    let first = true;
    for await (const { cells: record, line: at } of csvRecords(file, delimiter, quoted, options.signal, invalidUtf8).records) {
      if (first) {
        first = false;
        continue;
      }
      let line = idIndex === undefined ? '' : csvCell(Number(String(record[idIndex]).trim()), 'int4');
      for (let k = 0; k < columns.length; k++) {
        const column = columns[k] as ColumnPlan;
        const { type, sqlType } = shape.columns[k] as TableShape['columns'][number];
        let cell = column.index < 0 ? '' : (record[column.index] ?? '');
        if (trim) cell = cell.trim();
        if (cell === QUOTED_EMPTY && column.declared === undefined) cell = '';
        if (k > 0 || idIndex !== undefined) line += ',';
        // An empty cell is null, as the memory loader reads it (a quoted one an empty text, where the types are declared);
        // any other is copied as written (json and arrays as PostgreSQL's text of them).
        if (cell === QUOTED_EMPTY) line += type === 'text' ? '""' : '';
        else if (cell !== '') line += column.declared !== undefined && convertsForCopy(type) ? csvCell(cellValue(cell, type), sqlType) : csvCell(cell, 'text');
      }
      yield { text: line, line: at };
    }
  }
  await copyLines(db, shape, rows, lines(), options);
  return rows;
}

/**
 * The most data columns a PostgreSQL table holds: 1,600 (`MaxHeapAttributeNumber`),
 * less CKAN's `_id` and `_full_text`.
 */
const MAX_COLUMNS = 1600 - 2;

/**
 * The longest record copied (its cells' characters): PGlite runs out of
 * memory near 100 MB in one record, and a server's COPY holds a line whole.
 */
const MAX_RECORD_LENGTH = 32 * 1024 * 1024;

/** A batch is copied once it holds this many characters, whatever its rows. */
const MAX_BATCH_LENGTH = 16 * 1024 * 1024;

function refuseWidth(columns: number, file: string): void {
  if (columns <= MAX_COLUMNS) return;
  throw toolError('DATA_INVALID', [file, `has ${columns} columns; a PostgreSQL table holds at most ${MAX_COLUMNS} beside CKAN's _id and _full_text`], {
    file, line: 1, hint: 'split the file into narrower ones, or query it as it is with the memory engine (--data FILE)',
  });
}

function nulError(file: string, line: number, column: string): ToolError {
  return toolError('DATA_INVALID', [file, `line ${line}, column ${JSON.stringify(column)}: holds a NUL byte (U+0000), which a PostgreSQL text cannot hold`], {
    file, line, hint: 'remove the NUL bytes (tr -d \'\\000\'), or query the file as it is with the memory engine (--data FILE)',
  });
}

function longRecordError(file: string, line: number): ToolError {
  return toolError('DATA_INVALID', [file, `line ${line}: the record is longer than ${MAX_RECORD_LENGTH / 1024 / 1024} MiB, more than a PostgreSQL engine loads in one record`], {
    file, line, hint: 'query the file as it is with the memory engine (--data FILE)',
  });
}

/** A JSON value PostgreSQL cannot hold for its NUL: a text, or a text in an array (a `json` value escapes it as `\u0000`). */
function holdsNul(value: unknown): boolean {
  if (typeof value === 'string') return value.includes('\u0000');
  return Array.isArray(value) && value.some((item) => typeof item === 'string' && item.includes('\u0000'));
}

/** A streamed reading of a JSON data file's records (`ndjsonRecords`, `jsonArrayRecords`). */
type RecordsOf = (file: string, signal: AbortSignal | undefined, invalidUtf8: InvalidUtf8) => { records: AsyncIterable<{ record: Record<string, unknown>; line: number }>; bytesRead: () => number };

/**
 * An NDJSON or JSON array file in two streamed passes, as a CSV file: the
 * types of its keys (the memory loader's `JsonColumnInference`, keys in the
 * order first seen, after the declared ones), then `COPY` in batches.
 */
async function loadJsonFile(
  db: Db, file: string, meta: Omit<TableShape, 'columns'>, typing: Typing, options: LoadFilesOptions, recordsOf: RecordsOf,
): Promise<number> {
  const resource = meta.aliases[0] ?? meta.id;
  const totalBytes = (await stat(file)).size;
  const declared = typing.declaration?.fields ?? [];
  const names: string[] = declared.map((field) => field.id);
  const declaredType = (name: string): FieldType | undefined => {
    const field = declared.find((each) => each.id === name);
    return field === undefined ? undefined : (field.type ?? overrideOf(field, typing));
  };
  const columns = new Map<string, JsonInference>();
  const widest = new Map<string, 'int4' | 'int8'>();
  let rows = 0;
  let reported = 0;
  // records with `_id` keep it (checked as the memory loader checks it); then every record needs one
  const ids = new FileIds(file);
  let withId = 0;
  let firstWithout: number | undefined;
  const invalidUtf8 = options.invalidUtf8 ?? 'refuse';
  const reading = recordsOf(file, options.signal, invalidUtf8);
  for await (const { record, line } of reading.records) {
    rows++;
    if (Object.hasOwn(record, '_id')) {
      withId++;
      ids.see(record['_id'], rows);
    } else firstWithout ??= rows;
    if (withId > 0 && firstWithout !== undefined) ids.see(undefined, firstWithout);
    for (const key in record) {
      if (!Object.hasOwn(record, key) || key === '_id') continue;
      const type = declaredType(key);
      if (type !== undefined) {
        const value = typedJson(record[key] as JsonValue, type, file, line, key);
        if (type === 'int' && integerWidth([value]) === 'int8') widest.set(key, 'int8');
        continue;
      }
      if (holdsNul(record[key])) throw nulError(file, line, key);
      let column = columns.get(key);
      if (column === undefined) {
        if (!names.includes(key)) names.push(key);
        column = jsonInferenceFor(typing);
        columns.set(key, column);
      }
      column.see(record[key]);
    }
    const bytes = reading.bytesRead();
    if (bytes !== reported) {
      reported = bytes;
      options.onProgress?.({ resource, rows, totalRows: 0, reading: { bytes, totalBytes } });
    }
  }
  const keepIds = withId > 0;
  if (keepIds) ids.values();
  const infoOf = (name: string): FieldDictionary | undefined => declared.find((field) => field.id === name)?.info;
  const shape: TableShape = {
    ...meta,
    ...(keepIds ? { keepIds: true } : {}),
    columns: names.map((name) => {
      const type = declaredType(name);
      const typed = type === undefined ? { type: columns.get(name)?.type() ?? 'text', sqlType: '' } : declaredSqlType(type, widest.get(name) ?? 'int4');
      const info = infoOf(name);
      return { id: name, type: typed.type, sqlType: typed.sqlType || sqlTypeOf(typed.type), ...(info === undefined ? {} : { info }) };
    }),
  };
  // Columns read as their type says (declared, or another loader's inference); a ckql-inferred one's values go as they are.
  const converted = names.map((name) => declaredType(name) !== undefined || typing.infer !== 'ckql');
  async function* lines(): AsyncIterable<CopyLine> {
    for await (const { record, line } of recordsOf(file, options.signal, invalidUtf8).records) {
      let cells = keepIds ? csvCell(Number(String(record['_id']).trim()), 'int4') : '';
      for (let k = 0; k < shape.columns.length; k++) {
        const column = shape.columns[k] as TableShape['columns'][number];
        const raw = Object.hasOwn(record, column.id) ? record[column.id] : null;
        const value = converted[k] === true ? typedJson(raw as JsonValue, column.type, file, line, column.id) : raw;
        if (typeof value === 'object' && value !== null && exceedsDepth(value, MAX_NESTING)) {
          throw toolError('DATA_INVALID', [file, `line ${line}: the value of ${JSON.stringify(column.id)} is nested more than ${MAX_NESTING} levels deep`], { file, line });
        }
        if (k > 0 || withId > 0) cells += ',';
        if (holdsNul(value)) throw nulError(file, line, column.id);
        cells += csvCell(value, column.sqlType);
      }
      if (cells.length > MAX_RECORD_LENGTH) throw longRecordError(file, line);
      yield { text: cells, line };
    }
  }
  await copyLines(db, shape, rows, lines(), options);
  return rows;
}

/** A JSON value read as its declared type, or `DATA_INVALID` naming the line and field. */
function typedJson(value: JsonValue | undefined, type: FieldType, file: string, line: number, field: string): JsonValue {
  try {
    return jsonValueOf(value, type === 'int' ? 'int8' : type);
  } catch (error) {
    if (!(error instanceof CellError)) throw error;
    throw toolError('DATA_INVALID', [file, `line ${line}, field ${JSON.stringify(field)}: ${error.message}, its declared type`], { file, line });
  }
}

/** One row's CSV line for COPY, and the line of the file it ends on. */
interface CopyLine {
  readonly text: string;
  readonly line: number;
}

/**
 * Pass 2 of a file: its table created, `lines` (one CSV line of cells per
 * row) copied in batches, and the table finished, all in the resource's one
 * transaction. A value PostgreSQL refuses is the file's error, at its line.
 */
async function copyLines(db: Db, shape: TableShape, totalRows: number, lines: AsyncIterable<CopyLine>, options: LoadTablesOptions): Promise<void> {
  const resource = shape.aliases[0] ?? shape.id;
  const file = shape.source ?? resource;
  refuseWidth(shape.columns.length, file);
  await db.transaction(async (tx) => {
    const copy = await createTable(tx, shape, options);
    const batchRows = Math.max(1, options.batchRows ?? 10_000);
    let csv = '';
    let batchLines: number[] = [];
    let done = 0;
    const flush = async (): Promise<void> => {
      try {
        await copy(csv, batchLines.length);
      } catch (error) {
        throw refusedData(error, file, batchLines);
      }
      done += batchLines.length;
      [csv, batchLines] = ['', []];
      options.onProgress?.({ resource, rows: done, totalRows });
    };
    for await (const { text, line } of lines) {
      csv += `${text}\n`;
      batchLines.push(line);
      if (batchLines.length === batchRows || csv.length >= MAX_BATCH_LENGTH) await flush();
    }
    if (batchLines.length > 0 || done === 0) await flush();
    await finishTable(tx, shape, options, done);
  });
}

/**
 * PostgreSQL's refusal of a batch (a date it has not got, a value out of
 * range) as DATA_INVALID at the file's line, which COPY's context names by
 * its row in the batch; any other error (a cancellation, a lost connection)
 * as it is.
 */
function refusedData(error: unknown, file: string, batchLines: readonly number[]): unknown {
  const { severity, code, where } = error as { severity?: unknown; code?: unknown; where?: unknown };
  if (typeof severity !== 'string' || typeof code !== 'string' || code.startsWith('57') || code.startsWith('08')) return error;
  const row = typeof where === 'string' ? /\bline (\d+)/.exec(where) : null;
  const line = row === null ? undefined : batchLines[Number(row[1]) - 1];
  const at = line === undefined ? `lines ${batchLines[0]}–${batchLines.at(-1)}` : `line ${line}`;
  return toolError('DATA_INVALID', [file, `${at}: PostgreSQL refused the data: ${(error as Error).message}`], { file, ...(line === undefined ? {} : { line }), cause: error });
}

/** The records of an NDJSON file, one per non-empty line, with their line numbers, and the bytes read so far. */
function ndjsonRecords(file: string, signal: AbortSignal | undefined, invalidUtf8: InvalidUtf8): { records: AsyncIterable<{ record: Record<string, unknown>; line: number }>; bytesRead: () => number } {
  const input = createReadStream(file, signal === undefined ? {} : { signal });
  const checked = Readable.from(utf8Chunks(input, file, invalidUtf8));
  const lines = createInterface({ input: checked, crlfDelay: Infinity });
  const records = (async function* () {
    let line = 0;
    try {
      for await (const raw of lines) {
        line++;
        const text = (line === 1 && raw.charCodeAt(0) === 0xfeff ? raw.slice(1) : raw).trim();
        if (text === '') continue;
        let value: unknown;
        try {
          value = JSON.parse(text);
        } catch (error) {
          throw toolError('DATA_INVALID', [file, `line ${line} is not valid JSON: ${(error as Error).message}`], { file, line, cause: error });
        }
        if (typeof value !== 'object' || value === null || Array.isArray(value)) {
          throw toolError('DATA_INVALID', [file, `line ${line} is not a JSON object (each line must be one record {"field": value, …})`], { file, line });
        }
        yield { record: withExactIntegers(value as Record<string, unknown>, text, { file, line }), line };
      }
    } catch (error) {
      if ((error as { name?: unknown }).name === 'AbortError') {
        throw new DatastoreError('ABORTED', `loading ${file} was interrupted; nothing of it was kept`, { cause: error });
      }
      throw error;
    } finally {
      // the checked stream first: the file's stream, destroyed under it, would fail its pending read with no one to hear it
      lines.close();
      checked.destroy();
      input.destroy();
    }
  })();
  return { records, bytesRead: () => input.bytesRead };
}

/** The CSV records of a file, as `CsvReader` reads them from a stream (the first is the header), and the bytes read so far. */
function csvRecords(file: string, delimiter: string, quotedEmpty: boolean, signal: AbortSignal | undefined, invalidUtf8: InvalidUtf8): { records: AsyncIterable<{ cells: string[]; line: number }>; bytesRead: () => number } {
  const input = createReadStream(file, signal === undefined ? {} : { signal });
  const records = (async function* () {
    const sink = new CsvRecords(quotedEmpty ? QUOTED_EMPTY : '');
    const reader = new CsvReader(delimiter, sink, NODE_BYTES);
    try {
      // One chunk at a time: the point where a load can stop between chunks.
      for await (const chunk of utf8Chunks(input, file, invalidUtf8)) {
        reader.push(chunk);
        yield* taken(sink);
      }
      reader.end();
      yield* taken(sink);
    } catch (error) {
      if ((error as { name?: unknown }).name === 'AbortError') {
        throw new DatastoreError('ABORTED', `loading ${file} was interrupted; nothing of it was kept`, { cause: error });
      }
      if (error instanceof CsvSyntaxError) throw toolError('DATA_INVALID', [file, `not valid CSV: ${error.message}`], { file, line: error.line, cause: error });
      throw error;
    } finally {
      input.destroy();
    }
  })();
  return { records, bytesRead: () => input.bytesRead };
}

/** The records `sink` has read so far, each with the line it ends on. */
function* taken(sink: CsvRecords): Iterable<{ cells: string[]; line: number }> {
  const records = sink.take();
  for (let k = 0; k < records.length; k++) yield { cells: records[k] as string[], line: sink.lines[k] as number };
}

/** The first 64 KiB of a file as text: enough for the header line the delimiter is read from. */
async function head(file: string): Promise<string> {
  const handle = await open(file, 'r');
  try {
    const buffer = Buffer.alloc(64 * 1024);
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    return buffer.subarray(0, bytesRead).toString('utf8');
  } catch (error) {
    throw toolError('DATA_INVALID', [file, `cannot be read: ${(error as Error).message}`], { file, cause: error });
  } finally {
    await handle.close();
  }
}

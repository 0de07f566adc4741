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
import { parse } from 'csv-parse';
import { DatastoreError, toolError } from '../../errors.js';
import type { ToolError } from '../../errors.js';
import {
  ColumnInference, csvColumns, delimiterOf, isBadFile, jsonArrayRecords, JsonColumnInference, listDataFiles, MAX_NESTING, resourceIdFor,
} from '../memory/load.js';
import { exceedsDepth } from '../../datastore/values.js';
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
 * one resource per file, in CKAN's layout.
 * @example
 * const db = await openPglite('./ckql-db');
 * await loadFiles(db, ['examples/data'], { replace: true }); // → [{ id: '…', alias: 'courses', rows: 12 }, …]
 */
export async function loadFiles(db: Db, paths: readonly string[], options: LoadFilesOptions = {}): Promise<LoadedResource[]> {
  const files = await listDataFiles(paths);
  if (options.alias !== undefined && files.length !== 1) throw toolError('USAGE', [`--alias names one resource, but ${files.length} files are loaded`]);
  const privateNames = new Set(options.private === true || options.private === undefined ? [] : options.private);
  // Checked before anything is loaded.
  const unknown = [...privateNames].find((name) => !files.some((f) => f.alias === name || f.id === name));
  if (unknown !== undefined) {
    throw toolError('USAGE', [`--private names ${JSON.stringify(unknown)}, which is not a loaded resource (loaded: ${files.map((f) => f.alias).join(', ') || 'none'})`]);
  }
  await setUpDatastore(db);
  const loaded: LoadedResource[] = [];
  for (const found of files) {
    const alias = options.alias ?? found.alias;
    const id = options.alias === undefined ? found.id : resourceIdFor(options.alias);
    const isPrivate = options.private === true || privateNames.has(found.alias) || privateNames.has(found.id);
    const meta = { id, aliases: [alias], source: found.file, ...(isPrivate ? { private: true } : {}) };
    const ext = extname(found.file).toLowerCase();
    try {
      if (ext === '.csv') {
        loaded.push({ id, alias, rows: await loadCsvFile(db, found.file, meta, options) });
      } else {
        // NDJSON line by line, a JSON array element by element: both streamed, in the same two passes.
        const recordsOf = ext === '.json' ? jsonArrayRecords : ndjsonRecords;
        loaded.push({ id, alias, rows: await loadJsonFile(db, found.file, meta, options, recordsOf) });
      }
    } catch (error) {
      if (options.onBadFile === undefined || !isBadFile(error)) throw error;
      options.onBadFile(error);
    }
  }
  return loaded;
}

async function loadCsvFile(db: Db, file: string, meta: Omit<TableShape, 'columns'>, options: LoadTablesOptions): Promise<number> {
  const delimiter = delimiterOf(await head(file));
  // Pass 1: the header and each column's type, as the memory loader infers them.
  let columns: { name: string; index: number }[] | undefined;
  let inference: ColumnInference[] = [];
  let rows = 0;
  const resource = meta.aliases[0] ?? meta.id;
  const totalBytes = (await stat(file)).size;
  const reading = csvRecords(file, delimiter, options.signal);
  let reported = 0;
  for await (const record of reading.records) {
    if (columns === undefined) {
      columns = csvColumns(record, file);
      inference = columns.map(() => new ColumnInference());
      continue;
    }
    rows++;
    for (let k = 0; k < columns.length; k++) (inference[k] as ColumnInference).see(record[(columns[k] as { index: number }).index] ?? '');
    // A report per block the stream reads: the rows are not counted yet, the bytes are.
    const bytes = reading.bytesRead();
    if (bytes !== reported) {
      reported = bytes;
      options.onProgress?.({ resource, rows, totalRows: 0, reading: { bytes, totalBytes } });
    }
  }
  // No record at all: the file is empty (csvColumns says so).
  const header = columns ?? csvColumns(undefined, file);
  const shape: TableShape = {
    ...meta,
    columns: header.map((c, k) => {
      const type = (inference[k] as ColumnInference).type();
      return { id: c.name, type, sqlType: sqlTypeOf(type) };
    }),
  };
  // Pass 2: COPY in batches.
  async function* lines(): AsyncIterable<string> {
    let first = true;
    for await (const record of csvRecords(file, delimiter, options.signal).records) {
      if (first) {
        first = false;
        continue;
      }
      let line = '';
      for (let k = 0; k < header.length; k++) {
        const cell = record[(header[k] as { index: number }).index] ?? '';
        if (k > 0) line += ',';
        // An empty cell is null, as the memory loader reads it; any other is copied as written.
        if (cell !== '') line += csvCell(cell, 'text');
      }
      yield line;
    }
  }
  await copyLines(db, shape, rows, lines(), options);
  return rows;
}

/** A streamed reading of a JSON data file's records (`ndjsonRecords`, `jsonArrayRecords`). */
type RecordsOf = (file: string, signal: AbortSignal | undefined) => { records: AsyncIterable<{ record: Record<string, unknown>; line: number }>; bytesRead: () => number };

/**
 * An NDJSON or JSON array file in two streamed passes, as a CSV file: the
 * types of its keys (the memory loader's `JsonColumnInference`, keys in the
 * order first seen), then `COPY` in batches.
 */
async function loadJsonFile(db: Db, file: string, meta: Omit<TableShape, 'columns'>, options: LoadTablesOptions, recordsOf: RecordsOf): Promise<number> {
  const resource = meta.aliases[0] ?? meta.id;
  const totalBytes = (await stat(file)).size;
  const names: string[] = [];
  const columns = new Map<string, JsonColumnInference>();
  let rows = 0;
  let reported = 0;
  const reading = recordsOf(file, options.signal);
  for await (const { record } of reading.records) {
    rows++;
    for (const key in record) {
      if (!Object.hasOwn(record, key) || key === '_id') continue;
      let column = columns.get(key);
      if (column === undefined) {
        names.push(key);
        column = new JsonColumnInference();
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
  const shape: TableShape = {
    ...meta,
    columns: names.map((name) => {
      const type = (columns.get(name) as JsonColumnInference).type();
      return { id: name, type, sqlType: sqlTypeOf(type) };
    }),
  };
  async function* lines(): AsyncIterable<string> {
    for await (const { record, line } of recordsOf(file, options.signal).records) {
      let cells = '';
      for (let k = 0; k < shape.columns.length; k++) {
        const column = shape.columns[k] as TableShape['columns'][number];
        const value = Object.hasOwn(record, column.id) ? record[column.id] : null;
        if (typeof value === 'object' && value !== null && exceedsDepth(value, MAX_NESTING)) {
          throw toolError('DATA_INVALID', [file, `line ${line}: the value of ${JSON.stringify(column.id)} is nested more than ${MAX_NESTING} levels deep`], { file, line });
        }
        if (k > 0) cells += ',';
        cells += csvCell(value, column.sqlType);
      }
      yield cells;
    }
  }
  await copyLines(db, shape, rows, lines(), options);
  return rows;
}

/**
 * Pass 2 of a file: its table created, `lines` (one CSV line of cells per
 * row) copied in batches, and the table finished, all in the resource's one
 * transaction.
 */
async function copyLines(db: Db, shape: TableShape, totalRows: number, lines: AsyncIterable<string>, options: LoadTablesOptions): Promise<void> {
  const resource = shape.aliases[0] ?? shape.id;
  await db.transaction(async (tx) => {
    const copy = await createTable(tx, shape, options);
    const batchRows = Math.max(1, options.batchRows ?? 10_000);
    let csv = '';
    let inBatch = 0;
    let done = 0;
    const flush = async (): Promise<void> => {
      await copy(csv, inBatch);
      done += inBatch;
      [csv, inBatch] = ['', 0];
      options.onProgress?.({ resource, rows: done, totalRows });
    };
    for await (const line of lines) {
      csv += `${line}\n`;
      if (++inBatch === batchRows) await flush();
    }
    if (inBatch > 0 || done === 0) await flush();
    await finishTable(tx, shape, options, done);
  });
}

/** The records of an NDJSON file, one per non-empty line, with their line numbers, and the bytes read so far. */
function ndjsonRecords(file: string, signal: AbortSignal | undefined): { records: AsyncIterable<{ record: Record<string, unknown>; line: number }>; bytesRead: () => number } {
  const input = createReadStream(file, signal === undefined ? {} : { signal });
  const lines = createInterface({ input, crlfDelay: Infinity });
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
        yield { record: value as Record<string, unknown>, line };
      }
    } catch (error) {
      if ((error as { name?: unknown }).name === 'AbortError') {
        throw new DatastoreError('ABORTED', `loading ${file} was interrupted; nothing of it was kept`, { cause: error });
      }
      throw error;
    } finally {
      lines.close();
      input.destroy();
    }
  })();
  return { records, bytesRead: () => input.bytesRead };
}

/** The CSV records of a file, as a parser reads them from a stream (the first is the header), and the bytes read so far. */
function csvRecords(file: string, delimiter: string, signal: AbortSignal | undefined): { records: AsyncIterable<string[]>; bytesRead: () => number } {
  const input = createReadStream(file, signal === undefined ? {} : { signal });
  // The memory loader's options: relax_quotes keeps a stray `"` inside an unquoted cell (`5" screen`) as text.
  const parser = parse({ bom: true, skip_empty_lines: true, relax_quotes: true, delimiter });
  input.on('error', (error) => parser.destroy(error));
  const piped = input.pipe(parser);
  const records = (async function* () {
    try {
      for await (const record of piped) yield record as string[];
    } catch (error) {
      if ((error as { name?: unknown }).name === 'AbortError') {
        throw new DatastoreError('ABORTED', `loading ${file} was interrupted; nothing of it was kept`, { cause: error });
      }
      const line = typeof (error as { lines?: unknown }).lines === 'number' ? (error as { lines: number }).lines : undefined;
      throw toolError('DATA_INVALID', [file, `not valid CSV: ${(error as Error).message}`], { file, ...(line === undefined ? {} : { line }), cause: error });
    } finally {
      input.destroy();
    }
  })();
  return { records, bytesRead: () => input.bytesRead };
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

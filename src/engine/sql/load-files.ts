/**
 * Loading files into a PostgreSQL datastore without holding them in memory:
 * a CSV file is read twice as a stream, once to infer its column types (the
 * rules of `loadResources`, chunk by chunk) and once to `COPY` its cells in
 * batches, as written (so `7.50` keeps its scale in a `numeric` column and
 * a 19-digit integer every digit). JSON and NDJSON files go through the
 * memory loader (`loadResources`) and `loadTables`. Each resource is one
 * transaction, as in `loadTables`.
 */
import { createReadStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { extname } from 'node:path';
import { parse } from 'csv-parse';
import type { FieldType } from '../../datastore/types.js';
import { toolError } from '../../errors.js';
import { csvColumns, delimiterOf, inferCsvType, listDataFiles, loadResources, resourceIdFor } from '../memory/load.js';
import type { Db } from './db.js';
import { sqlTypeOf } from './layout.js';
import type { LoadTablesOptions, TableShape } from './load.js';
import { createTable, csvCell, finishTable, loadTables, setUpDatastore } from './load.js';

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
  await setUpDatastore(db);
  const loaded: LoadedResource[] = [];
  for (const found of files) {
    const alias = options.alias ?? found.alias;
    const id = options.alias === undefined ? found.id : resourceIdFor(options.alias);
    const isPrivate = options.private === true || privateNames.delete(found.alias) || privateNames.delete(found.id);
    const meta = { id, aliases: [alias], source: found.file, ...(isPrivate ? { private: true } : {}) };
    if (extname(found.file).toLowerCase() === '.csv') {
      loaded.push({ id, alias, rows: await loadCsvFile(db, found.file, meta, options) });
    } else {
      const [table] = await loadResources(found.file);
      if (table === undefined) continue;
      await loadTables(db, [{ ...table, ...meta }], options);
      loaded.push({ id, alias, rows: table.rows.length });
    }
  }
  const [unknown] = privateNames;
  if (unknown !== undefined) {
    throw toolError('USAGE', [`--private names ${JSON.stringify(unknown)}, which is not a loaded resource (loaded: ${files.map((f) => f.alias).join(', ') || 'none'})`]);
  }
  return loaded;
}

/** Rows per chunk of the type pass (the types of the chunks are joined). */
const CHUNK_ROWS = 10_000;

async function loadCsvFile(db: Db, file: string, meta: Omit<TableShape, 'columns'>, options: LoadTablesOptions): Promise<number> {
  const delimiter = delimiterOf(await head(file));
  // Pass 1: the header and each column's type, chunk by chunk.
  let columns: { name: string; index: number }[] | undefined;
  let types: (FieldType | undefined)[] = [];
  let rows = 0;
  let chunk: string[][] = [];
  const settle = (): void => {
    const shown = columns ?? [];
    types = shown.map((c, k) => {
      const some = chunk.some((record) => (record[c.index] ?? '') !== '');
      return some ? widen(types[k], inferCsvType(chunk, c.index)) : types[k];
    });
    chunk = [];
  };
  for await (const record of csvRecords(file, delimiter, options.signal)) {
    if (columns === undefined) {
      columns = csvColumns(record, file);
      continue;
    }
    rows++;
    chunk.push(record);
    if (chunk.length === CHUNK_ROWS) settle();
  }
  settle();
  // No record at all: the file is empty (csvColumns says so).
  const header = columns ?? csvColumns(undefined, file);
  const shape: TableShape = {
    ...meta,
    columns: header.map((c, k) => {
      const type = types[k] ?? 'text';
      return { id: c.name, type, sqlType: sqlTypeOf(type) };
    }),
  };
  const resource = meta.aliases[0] ?? meta.id;
  // Pass 2: COPY in batches, inside the resource's one transaction.
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
      options.onProgress?.({ resource, rows: done, totalRows: rows });
    };
    let first = true;
    for await (const record of csvRecords(file, delimiter, options.signal)) {
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
      csv += `${line}\n`;
      if (++inBatch === batchRows) await flush();
    }
    if (inBatch > 0 || done === 0) await flush();
    await finishTable(tx, shape, options);
  });
  return rows;
}

/** The CSV records of a file, as a parser reads them from a stream (the first is the header). */
function csvRecords(file: string, delimiter: string, signal: AbortSignal | undefined): AsyncIterable<string[]> {
  const input = createReadStream(file, signal === undefined ? {} : { signal });
  // The memory loader's options: relax_quotes keeps a stray `"` inside an unquoted cell (`5" screen`) as text.
  const parser = parse({ bom: true, skip_empty_lines: true, relax_quotes: true, delimiter });
  input.on('error', (error) => parser.destroy(error));
  const records = input.pipe(parser);
  return (async function* () {
    try {
      for await (const record of records) yield record as string[];
    } catch (error) {
      if ((error as { name?: unknown }).name === 'AbortError') throw error;
      const line = typeof (error as { lines?: unknown }).lines === 'number' ? (error as { lines: number }).lines : undefined;
      throw toolError('DATA_INVALID', [file, `not valid CSV: ${(error as Error).message}`], { file, ...(line === undefined ? {} : { line }), cause: error });
    } finally {
      input.destroy();
    }
  })();
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

const INTEGER_RANK: Partial<Record<FieldType, number>> = { int4: 0, int8: 1, numeric: 2 };

/**
 * The type of a column whose values have types `a` and `b` (each
 * `inferCsvType` of a chunk): integers widen up to `numeric`, dates to
 * timestamps; anything else mixed is text.
 */
function widen(a: FieldType | undefined, b: FieldType): FieldType {
  if (a === undefined || a === b) return b;
  const ra = INTEGER_RANK[a];
  const rb = INTEGER_RANK[b];
  if (ra !== undefined && rb !== undefined) return ra > rb ? a : b;
  if ((a === 'date' && b === 'timestamp') || (a === 'timestamp' && b === 'date')) return 'timestamp';
  return 'text';
}

/**
 * The memory engine's Node edge for local data: paths → data files (a
 * folder's, a `datapackage.json`'s, one file), each with its alias, id,
 * declaration and place in a catalogue, then each file's stream handed to
 * the core's `loadTable` (memory/load.ts), which makes the table
 * (docs/engines.md, "The memory engine's core and its Node edges").
 */
import { createReadStream } from 'node:fs';
import { open, readdir, stat } from 'node:fs/promises';
import { basename, dirname, extname, join, resolve } from 'node:path';
import type { DatasetMeta, ResourceMeta, Table } from '../../datastore/types.js';
import { ToolError, toolError } from '../../errors.js';
import type { InvalidUtf8 } from '../types.js';
import { packageName } from '../declared.js';
import type { Declaration, InferMode } from '../declared.js';
import { chunkBytesFor, jsonArrayRecordsOf, loadTable, resourceIdFor, sourceKind, stopIfAborted } from '../memory/load.js';
import type { FileProgress } from '../memory/load.js';
import { readDataPackage, readDeclaration } from './declared-files.js';
import { fileKind, NODE_BYTES, SYMLINK_LOOP } from './files.js';

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
  /** a fields file declaring the one data file loaded (engine/declared.ts); default: a `<name>.fields.json` beside each */
  readonly fields?: string;
  /** how columns nobody declared are typed; default `ckql` */
  readonly infer?: InferMode;
  /** bytes that are not UTF-8: `refuse` (default: `DATA_INVALID` with the line and offset) or `replace` (each read as U+FFFD) */
  readonly invalidUtf8?: InvalidUtf8;
  /**
   * told of each file that cannot be read (`DATA_INVALID` with its file and
   * line, a second file with a taken name): the file is skipped and the
   * others are read. Without it, the first such file stops the load.
   */
  readonly onBadFile?: (error: ToolError) => void;
  /** stops the load at the next chunk of a file it reads (or before the next file) with `ABORTED`; nothing of it is kept */
  readonly signal?: AbortSignal;
}

/**
 * Whether an error is about one data file (its text, its name), so a loader
 * may skip that file and read the others.
 */
export function isBadFile(error: unknown): error is ToolError {
  return error instanceof ToolError && (error.code === 'DATA_INVALID' || error.code === 'DATA_DUPLICATE_ALIAS' || error.code === 'DATA_UNSUPPORTED');
}

const EXTENSIONS: ReadonlySet<string> = new Set(['.csv', '.tsv', '.json', '.ndjson', '.jsonl']);

/** A data file as found: its resource's alias and id, what is declared about it, and its place in a catalogue. */
export interface DataFile {
  readonly file: string;
  readonly alias: string;
  readonly id: string;
  /** every alias (the declared ones, then the file's name); `alias` is the first */
  readonly aliases: readonly string[];
  readonly declaration?: Declaration;
  readonly meta: ResourceMeta;
}

/**
 * Loads every resource named by `paths`: a directory gives its `.csv`,
 * `.json`, `.ndjson` and `.jsonl` files (sorted by name, not recursive,
 * others and hidden files skipped), a file gives itself. Each file is one
 * table: alias = the file name without extension, id = `resourceIdFor(alias)`,
 * `source` = the path.
 *
 * Declared types (engine/declared.ts): a `<name>.fields.json` beside a data
 * file (or `fields`, for one file) gives its columns' types, data
 * dictionary, and, when it names them, its id, aliases and `_id` values; a
 * folder with a `datapackage.json` gives the package's resources with their
 * Table Schemas; columns nobody declared are typed by `infer`.
 *
 * Each file is read by `loadTable` (memory/load.ts), which says how its
 * columns are typed and its values kept.
 *
 * Throws `ToolError`: `DATA_NOT_FOUND` (no such path), `DATA_UNSUPPORTED`
 * (a file with another extension), `DATA_INVALID` (unparsable file, with the
 * `line` of the bad CSV record or NDJSON line; a directory without data
 * files; a cell that is not of its declared type), `DATA_DUPLICATE_ALIAS`
 * (two files with one name, e.g. `a.csv` and `a.json`), `USAGE` (a
 * `private` name that no loaded resource has).
 *
 * @example
 * const tables = await loadResources('examples/data', { private: ['enrolments'] });
 * tables.map((t) => t.aliases[0]); // → ["courses", "enrolments", "schools"]
 * evaluate(compile('from courses where subject = math limit 5'), tables[0]);
 */
export async function loadResources(paths: string | readonly string[], options: LoadOptions = {}): Promise<Table[]> {
  const skip = (error: ToolError): void => {
    if (options.onBadFile === undefined) throw error;
    options.onBadFile(error);
  };
  const files = await listDataFiles(paths, { ...(options.fields === undefined ? {} : { fields: options.fields }), onDuplicate: skip });
  const privateNames = new Set(options.private ?? []);
  const only = options.only === undefined ? undefined : new Set(options.only);
  const tables: Table[] = [];
  for (const found of files) {
    stopIfAborted(options.signal, found.file);
    const isPrivate = privateNames.delete(found.alias) || privateNames.delete(found.id);
    if (only !== undefined && !found.aliases.some((alias) => only.has(alias)) && !only.has(found.id) && !only.has(datasetResourceName(found))) continue;
    try {
      tables.push(await loadFile(found, isPrivate, options));
    } catch (error) {
      if (!isBadFile(error)) throw error;
      skip(error);
    }
  }
  const [unknown] = privateNames;
  if (unknown !== undefined) {
    throw toolError('USAGE', [
      `--private names ${JSON.stringify(unknown)}, which is not a loaded resource (loaded: ${files.map((f) => f.alias).join(', ') || 'none'})`,
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
 * The data files `paths` name, with the alias, id, declaration and
 * catalogue place each gets, without reading them (a REPL lists resources
 * before loading any). Throws as `loadResources` does for a missing path or
 * two files with one name (or, given `onDuplicate`, tells it and skips the
 * second file); `fields` declares the one file given.
 * @example (await listDataFiles('examples/data')).map((f) => f.alias) // → ["courses", "enrolments", "schools"]
 */
export async function listDataFiles(
  paths: string | readonly string[],
  options: { readonly fields?: string; readonly onDuplicate?: (error: ToolError) => void } = {},
): Promise<DataFile[]> {
  const found: DataFile[] = [];
  const duplicate = (error: ToolError): void => {
    if (options.onDuplicate === undefined) throw error;
    options.onDuplicate(error);
  };
  for (const path of typeof paths === 'string' ? [paths] : paths) {
    for (const each of await dataFiles(path)) {
      const first = found.find((other) => other.aliases.some((alias) => each.aliases.includes(alias)));
      const clash = found.find((other) => other.id === each.id);
      if (first !== undefined) duplicate(toolError('DATA_DUPLICATE_ALIAS', [first.aliases.find((alias) => each.aliases.includes(alias)) as string, first.file, each.file], { file: each.file }));
      else if (clash !== undefined) duplicate(toolError('DATA_DUPLICATE_ALIAS', [each.id, clash.file, each.file], { file: each.file }));
      else found.push(each);
    }
  }
  if (options.fields !== undefined) {
    if (found.length !== 1) throw toolError('USAGE', [`--fields declares one data file, but ${found.length} are loaded`], { hint: 'or put a <name>.fields.json beside each data file' });
    const only = found[0] as DataFile;
    found[0] = withDeclaration(only, await readDeclaration(options.fields));
  }
  return found;
}

/** The data files of one path: a folder's (its `datapackage.json`'s when it has one), or the file itself. */
async function dataFiles(path: string): Promise<DataFile[]> {
  let info;
  try {
    info = await stat(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ELOOP') {
      throw toolError('DATA_INVALID', [path, SYMLINK_LOOP], { file: path, cause: error });
    }
    throw toolError('DATA_NOT_FOUND', [path], { file: path, cause: error });
  }
  // A FIFO would wait for a writer for good, and a device such as /dev/zero never ends: only files and folders are read.
  if (!info.isDirectory() && !info.isFile()) {
    throw toolError('DATA_INVALID', [path, `is ${fileKind(info)}, not a data file`], { file: path, hint: 'name a .csv, .tsv, .json, .ndjson or .jsonl file, or a folder of them' });
  }
  if (info.isDirectory()) {
    const all = await readdir(path);
    if (all.includes(DATA_PACKAGE)) return packagedFiles(join(path, DATA_PACKAGE));
    const names = all.filter((name) => !name.startsWith('.') && isDataName(name));
    names.sort(compareNames);
    const files: string[] = [];
    for (const name of names) {
      const file = join(path, name);
      // Not a regular file (a FIFO, a device, a loop of symbolic links): not data, skipped as other names are.
      if (await stat(file).then((found) => found.isFile(), () => false)) files.push(file);
    }
    if (files.length === 0) {
      throw toolError('DATA_INVALID', [path, 'this directory holds no .csv, .tsv, .json, .ndjson or .jsonl file'], { file: path });
    }
    const dataset = await folderDataset(path, files);
    return Promise.all(files.map((file) => looseFile(file, dataset)));
  }
  if (basename(path) === DATA_PACKAGE) return packagedFiles(path);
  if (!EXTENSIONS.has(extname(path).toLowerCase()) || !isDataName(basename(path))) throw toolError('DATA_UNSUPPORTED', [path], { file: path });
  // A file of a package, named on its own, is still read with its package's schema.
  const packaged = await packageOf(path);
  if (packaged !== undefined) return [packaged];
  return [await looseFile(path, await folderDataset(dirname(path), [path]))];
}

const DATA_PACKAGE = 'datapackage.json';
const FIELDS_SUFFIX = '.fields.json';

/**
 * The `dataset/resource` name a data file is found by (client/resource-names.ts), e.g. `data/courses`.
 * @example datasetResourceName((await listDataFiles('examples/data'))[0]) // → 'data/courses'
 */
export function datasetResourceName(found: Pick<DataFile, 'meta' | 'alias'>): string {
  return `${found.meta.dataset?.name ?? ''}/${found.meta.name ?? found.alias}`;
}

/** A data file's name: not a package, not a fields file. */
function isDataName(name: string): boolean {
  return EXTENSIONS.has(extname(name).toLowerCase()) && name !== DATA_PACKAGE && !name.toLowerCase().endsWith(FIELDS_SUFFIX);
}

/** A folder as a dataset: its name, its title, and the newest of its files' times. */
async function folderDataset(folder: string, files: readonly string[]): Promise<DatasetMeta> {
  let newest = 0;
  for (const file of files) newest = Math.max(newest, (await stat(file)).mtimeMs);
  const title = basename(resolve(folder));
  return { name: packageName(title), title, modified: isoTime(newest) };
}

/** A data file outside a package: named after itself, declared by a `<name>.fields.json` beside it. */
async function looseFile(file: string, dataset: DatasetMeta): Promise<DataFile> {
  const alias = aliasOf(file);
  const mtime = (await stat(file)).mtimeMs;
  const entry: DataFile = {
    file,
    alias,
    id: resourceIdFor(alias),
    aliases: [alias],
    meta: { name: alias, format: extname(file).slice(1).toUpperCase(), modified: isoTime(mtime), dataset },
  };
  const beside = join(dirname(file), `${alias}${FIELDS_SUFFIX}`);
  const declared = await stat(beside).then((found) => found.isFile(), () => false);
  return declared ? withDeclaration(entry, await readDeclaration(beside)) : entry;
}

/** The resources of a `datapackage.json`, as data files of one dataset. */
async function packagedFiles(packageFile: string): Promise<DataFile[]> {
  const resources = await readDataPackage(packageFile);
  const files: DataFile[] = [];
  let newest = 0;
  for (const resource of resources) {
    const info = await stat(resource.file).catch((error: unknown) => {
      throw toolError('DATA_NOT_FOUND', [resource.file], { file: packageFile, cause: error });
    });
    newest = Math.max(newest, info.mtimeMs);
  }
  for (const resource of resources) {
    const mtime = (await stat(resource.file)).mtimeMs;
    const dataset = { ...(resource.meta.dataset as DatasetMeta), modified: isoTime(Math.max(newest, (await stat(packageFile)).mtimeMs)) };
    const entry: DataFile = {
      file: resource.file,
      alias: resource.alias,
      id: resourceIdFor(resource.alias),
      aliases: [resource.alias],
      meta: { format: extname(resource.file).slice(1).toUpperCase(), ...resource.meta, modified: isoTime(mtime), dataset },
    };
    files.push(resource.declaration === undefined ? entry : withDeclaration(entry, resource.declaration));
  }
  return files;
}

/** The package entry of a data file whose folder holds a `datapackage.json` listing it. */
async function packageOf(file: string): Promise<DataFile | undefined> {
  const packageFile = join(dirname(file), DATA_PACKAGE);
  const exists = await stat(packageFile).then((found) => found.isFile(), () => false);
  if (!exists) return undefined;
  return (await packagedFiles(packageFile)).find((entry) => resolve(entry.file) === resolve(file));
}

/** A data file with what a declaration says: the id and aliases it names (the file's own name kept as an alias). */
function withDeclaration(entry: DataFile, declaration: Declaration): DataFile {
  const id = declaration.resourceId ?? entry.id;
  const aliases = [...new Set([...(declaration.aliases ?? []), ...entry.aliases])].filter((alias) => alias !== id);
  return {
    ...entry,
    id,
    alias: aliases[0] ?? id,
    aliases,
    declaration,
    meta: { ...entry.meta, ...(declaration.primaryKey === undefined ? {} : { primaryKey: declaration.primaryKey }) },
  };
}

function isoTime(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace(/\.000Z$/, '');
}

function compareNames(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function aliasOf(file: string): string {
  const name = basename(file);
  return name.slice(0, name.length - extname(name).length);
}

async function loadFile(found: DataFile, isPrivate: boolean, options: LoadOptions): Promise<Table> {
  const file = found.file;
  const ext = extname(file).toLowerCase();
  // A package's resource may have any extension: what is not CSV or a JSON array is read as NDJSON, as always.
  const kind = sourceKind(file) ?? (ext === '.json' ? 'json' : 'ndjson');
  // One open file for the whole load: its size and its bytes are those of one file, even if another replaces it meanwhile.
  const handle = await open(file, 'r');
  try {
    const size = (await handle.stat()).size;
    const data = handle.createReadStream({ highWaterMark: chunkBytesFor(file), autoClose: false });
    return await loadTable({ name: file, kind, data, size, again: (end) => createReadStream(file, { end: end - 1 }) }, {
      id: found.id,
      aliases: found.aliases,
      private: isPrivate,
      meta: found.meta,
      ...(found.declaration === undefined ? {} : { declaration: found.declaration }),
      ...(options.infer === undefined ? {} : { infer: options.infer }),
      ...(options.invalidUtf8 === undefined ? {} : { invalidUtf8: options.invalidUtf8 }),
      ...(options.onProgress === undefined ? {} : { onProgress: options.onProgress }),
      ...(options.signal === undefined ? {} : { signal: options.signal }),
      bytes: NODE_BYTES,
    });
  } finally {
    await handle.close();
  }
}

/**
 * The records of a `.json` file holding one array of objects, each with the
 * line it starts on, as the file streams in, and the bytes read so far (for
 * a progress bar): the core's `jsonArrayRecordsOf` over the file's stream.
 * `ckql load` reads its files so. An aborted `signal` ends the reading with `ABORTED`.
 * @example
 * for await (const { record, line } of jsonArrayRecords('courses.json').records) console.log(line, record);
 */
export function jsonArrayRecords(
  file: string,
  signal?: AbortSignal,
  invalidUtf8: InvalidUtf8 = 'refuse',
): { records: AsyncIterable<{ record: Record<string, unknown>; line: number }>; bytesRead: () => number } {
  const input = createReadStream(file, signal === undefined ? {} : { signal });
  return jsonArrayRecordsOf(input, file, { invalidUtf8, bytes: NODE_BYTES, again: (end) => createReadStream(file, { end: end - 1 }), ...(signal === undefined ? {} : { signal }) });
}

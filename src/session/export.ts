/**
 * `ckql export`: a whole resource, or every record of a query, written to a
 * file by the cheapest path that gives every record exactly once
 * (docs/portals.md, Taking it home):
 *
 * 1. `dump`: the portal's `/datastore/dump/<id>`, when the query says
 *    nothing the dump's parameters cannot (`filters`, `q`, `fields`,
 *    `sort`, `distinct`, `limit`, `offset`): one streamed request;
 * 2. `next_page`: CKAN 2.12's keyset, for a query in `_id` order;
 * 3. `sql`: `_id` keyset through `datastore_search_sql`, where the portal
 *    enables it (the sql target, or a probe that answers);
 * 4. `offset`: `datastore_search` pages whose sort ends in `_id`, so records
 *    with equal keys keep one order between requests (a sort with ties
 *    repeats and drops records across pages: docs/portals-reference.md §2.3);
 *    what the portal cannot say (a plan's residual) is applied here.
 *
 * The records go to `<file>.part`, renamed to `<file>` at the end, so an
 * interrupted export never leaves a file that looks complete; `resume`
 * continues a `.part` after its last whole record. The fields file
 * (`<name>.fields.json`, CKAN's `datastore_create` shape with the
 * resource's id and aliases) goes beside it, so `ckql load` makes the same
 * table again: types, data dictionary, aliases and `_id`s.
 */
import { createReadStream } from 'node:fs';
import { open, readFile, rename, rm, stat, truncate, writeFile } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { basename, dirname, extname, join } from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import { parse as parseLossless } from 'lossless-json';
import type { Query, SortKey } from '../ast.js';
import { isPlainQuery, selectedNames } from '../ast.js';
import type { PlainQuery } from '../ast.js';
import { bind } from '../compile/bind.js';
import type { Params } from '../compile/bind.js';
import { plan } from '../compile/compile.js';
import type { Target } from '../compile/plan.js';
import { keysetSql } from '../compile/sql.js';
import { checkedSqlResult } from '../client/response.js';
import type { DatastoreClient } from '../client/types.js';
import { delimitedText, valueText } from '../datastore/response.js';
import type { CkanVersion, FieldInfo, JsonValue, Row, SearchRequest } from '../datastore/types.js';
import { canonicalText, isNumberType } from '../datastore/values.js';
import { DatastoreError, toolError } from '../errors.js';
import { schemaError } from './schema.js';
import { residualTest } from '../engine/memory/evaluate-query.js';
import { formatScalar } from '../format.js';
import { parse } from '../syntax/parse.js';

export const EXPORT_FORMATS = ['csv', 'tsv', 'json', 'ndjson'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

export const EXPORT_PATHS = ['dump', 'next_page', 'sql', 'offset'] as const;
export type ExportPath = (typeof EXPORT_PATHS)[number];

/** Records per request on the paging paths (CKAN answers up to 32,000; smaller pages keep each answer a few MB). */
const PAGE_SIZE = 10_000;

export interface ExportOptions {
  readonly client: DatastoreClient;
  /** a resource (id, alias, `dataset/resource` name) or a query (`from …`) */
  readonly input: string;
  readonly params?: Params;
  readonly file: string;
  /** default: from the file's extension, else csv */
  readonly format?: ExportFormat;
  /** go on from the `.part` of an export cut short */
  readonly resume?: boolean;
  /** write `<name>.fields.json` beside the file; default true */
  readonly fieldsFile?: boolean;
  /** csv/tsv: a UTF-8 BOM first, for spreadsheets (the dump's `bom`) */
  readonly bom?: boolean;
  /** records per request on the paging paths; default 10 000 */
  readonly pageSize?: number;
  /** this path, not the cheapest one */
  readonly path?: ExportPath;
  readonly signal?: AbortSignal;
  readonly onProgress?: (progress: ExportProgress) => void;
}

export interface ExportProgress {
  readonly written: number;
  /** records the export will write, when known */
  readonly total: number | undefined;
  readonly path: ExportPath;
}

export interface ExportSummary {
  readonly file: string;
  readonly fieldsFile: string | undefined;
  readonly format: ExportFormat;
  readonly path: ExportPath;
  /** records in the file (with those a resumed export found there) */
  readonly records: number;
  /** requests this run sent */
  readonly requests: number;
  /** records the `.part` held when the export resumed */
  readonly resumed: number | undefined;
}

/**
 * The format a file name asks for: `.csv`, `.tsv`, `.json`, `.ndjson`/`.jsonl`; csv otherwise.
 * @example exportFormatOf('measurements.ndjson') // → 'ndjson'
 */
export function exportFormatOf(file: string): ExportFormat {
  const ext = extname(file).toLowerCase();
  return ext === '.tsv' ? 'tsv' : ext === '.json' ? 'json' : ext === '.ndjson' || ext === '.jsonl' ? 'ndjson' : 'csv';
}

/**
 * The fields file of an export: `<name>.fields.json` beside it (what the loaders read back).
 * @example fieldsFileOf('out/measurements.csv') // → 'out/measurements.fields.json'
 */
export function fieldsFileOf(file: string): string {
  const name = basename(file);
  const ext = extname(name);
  return join(dirname(file), `${ext === '' ? name : name.slice(0, -ext.length)}.fields.json`);
}

/**
 * Exports a resource or a query to a file.
 * @example
 * const summary = await exportRecords({ client, input: 'air-quality/measurements 2023', file: 'measurements.csv' });
 * // → { file: 'measurements.csv', fieldsFile: 'measurements.fields.json', path: 'dump', records: 120345, requests: 3, … }
 */
export async function exportRecords(options: ExportOptions): Promise<ExportSummary> {
  const format = options.format ?? exportFormatOf(options.file);
  const query = queryOf(options.input, options.params);
  if (!isPlainQuery(query)) {
    throw toolError('USAGE', ['export writes the records of one resource; a grouped, joined, renamed or faceted query gives other rows'], {
      hint: 'run it with ckql query … --all --format csv (or ndjson) > file',
    });
  }
  const named = query.from.resource.kind === 'string' ? query.from.resource.value : '';
  await refuseUnwritable(options.file, `${named.replace(/[^\p{L}\p{N}._-]+/gu, '-') || 'export'}.${format}`);
  // One export at a time to a file: a second one (or a second --resume) would write into the first's .part.
  const unlock = await lockExport(options.file);
  try {
    return await exportLocked(options, format, query, named);
  } finally {
    await unlock();
  }
}

async function exportLocked(options: ExportOptions, format: ExportFormat, query: PlainQuery, named: string): Promise<ExportSummary> {
  const { client, signal } = options;
  let requests = 0;
  const head = await client.search({ resource_id: named, limit: 0 }, signal === undefined ? {} : { signal });
  requests++;
  const id = head.resource_id;
  refuseUnknownFields(options.input, options.params, named, head.fields);
  const selected = query.select === undefined ? undefined : selectedNames(query.select);
  for (const name of selected ?? []) {
    if (!head.fields.some((f) => f.id === name)) throw toolError('USAGE', [`select names ${JSON.stringify(name)}, which ${named} does not have (fields: ${head.fields.map((f) => f.id).join(', ')})`]);
  }
  const fields = selected === undefined ? head.fields : selected.map((name) => head.fields.find((f) => f.id === name) as FieldInfo);
  const byId = fields[0]?.id === '_id';
  const resolved: Query = { ...query, from: { ...query.from, resource: { kind: 'string', span: query.from.resource.span, value: id } } };
  // Detection asks status_show (and, where it says nothing, the 2.12 probe): counted as one.
  if (client.target === undefined) requests++;
  const target: Target = client.target ?? (await client.detectTarget(id, signal));
  const ckan: CkanVersion = target === 'ckan-2.12' ? '2.12' : '2.11';

  const writer = writerFor(format, fields, ckan);
  const orderedById = isIdOrder(resolved.order?.keys) && resolved.select?.distinct !== true;

  // Resume: what the `.part` holds, where it ends, and that its last record is the source's, in its place.
  const part = `${options.file}.part`;
  const marker = `${options.file}.part.json`;
  const identity = JSON.stringify({ input: options.input, params: options.params ?? null, format, resource: id });
  let resumed: ResumePoint | undefined;
  if (options.resume === true) {
    const previous = await readFile(marker, 'utf8').catch(() => undefined);
    if (previous !== undefined) {
      if (previous !== identity) {
        throw toolError('USAGE', [`${part} was written by another export (${previous}); give the same resource or query and format to resume it, or leave out --resume to start again`]);
      }
      if (!byId) throw toolError('USAGE', ['--resume needs _id as the first field of the export: select it first, or leave select out']);
      resumed = await resumePoint(part, format, writer.head(), orderedById);
      requests += await verifyResume(client, resumed, { part, id, query: resolved, target, fields, writer, signal });
    }
  }

  if (options.path !== undefined) await refuseForcedPath(options.path);
  let path = options.path ?? (await choosePath(true));
  /** A path given (`--via`) that cannot give the query's records as asked: refused, not taken. */
  async function refuseForcedPath(forced: ExportPath): Promise<void> {
    const refuse = (why: string): never => {
      throw toolError('USAGE', [`--via ${forced} cannot give this export: ${why}`], { hint: 'leave out --via: ckql takes the cheapest path that gives each record once' });
    };
    if (forced === 'next_page') {
      if (target !== 'ckan-2.12') refuse(`next_page is CKAN 2.12's, and this source answers as ${target}`);
      if (!orderedById) refuse('it pages in _id order, and the query orders its records otherwise (or asks for distinct ones)');
      if (resolved.search !== undefined || resolved.offset !== undefined || !wholeOn(resolved, 'ckan-2.12')) {
        refuse('the portal must say the whole query, and CKAN 2.12 cannot say all of it (a search, an offset, or a condition ckql applies itself)');
      }
    }
    if (forced === 'sql') {
      if (!orderedById || resolved.offset !== undefined) refuse('it pages in _id order from the first record, and the query orders its records otherwise or skips some (offset)');
      if (target !== 'sql' && !(await sqlEnabled())) refuse('this source does not answer datastore_search_sql');
    }
  }
  async function choosePath(dump: boolean): Promise<ExportPath> {
    if (dump && dumpParams(resolved, target, fields, format) !== undefined) return 'dump';
    if (target === 'ckan-2.12' && orderedById && wholeOn(resolved, 'ckan-2.12') && resolved.search === undefined && resolved.offset === undefined) return 'next_page';
    if (orderedById && resolved.offset === undefined && (target === 'sql' || (await sqlEnabled()))) return 'sql';
    return 'offset';
  }
  async function sqlEnabled(): Promise<boolean> {
    requests++;
    try {
      await client.action('datastore_search_sql', { sql: `SELECT "_id" FROM ${quoteName(id)} LIMIT 0` }, { method: 'POST', ...(signal === undefined ? {} : { signal }) });
      return true;
    } catch (error) {
      if (error instanceof DatastoreError && error.code === 'ABORTED') throw error;
      return false;
    }
  }

  const wanted = limitOf(resolved);
  // How many records the export writes, for progress: the resource's count, or the query's where it filters.
  let matches = head.total;
  if (resolved.where !== undefined || resolved.search !== undefined || resolved.select?.distinct === true) {
    const planned = plan({ ...resolved, limit: undefined, offset: undefined }, { target: target === 'ckan-2.12' ? 'ckan-2.12' : 'ckan-2.11' });
    matches = undefined;
    if (planned.residual === undefined) {
      requests++;
      const counted = await client.search({ ...(planned.request as SearchRequest), limit: 0 }, signal === undefined ? {} : { signal }).catch(() => undefined);
      matches = counted?.total;
    }
  }
  const total = matches === undefined ? undefined : Math.min(Math.max(0, matches - (resolved.offset?.value.kind === 'number' ? resolved.offset.value.value : 0)), wanted);
  const handle = await open(part, resumed === undefined ? 'w+' : 'a+').catch((error: unknown) => {
    throw toolError('USAGE', [`cannot export to ${options.file}: ${part} cannot be written (${(error as { code?: string }).code ?? String(error)})`], { cause: error });
  });
  await writeFile(marker, identity);
  let written = resumed?.records ?? 0;
  const pageSize = Math.max(1, Math.floor(options.pageSize ?? PAGE_SIZE));
  const report = (): void => options.onProgress?.({ written, total: total === undefined ? undefined : Math.max(total, written), path });
  let finished = false;
  try {
    if (resumed === undefined) await handle.write((options.bom === true && (format === 'csv' || format === 'tsv') ? '\ufeff' : '') + writer.head());
    const emit = async (records: readonly Row[]): Promise<void> => {
      if (records.length === 0) return;
      await handle.write(writer.records(records, written));
      written += records.length;
      report();
    };
    const after = resumed?.lastId;
    const already = resumed?.records ?? 0;
    if (path === 'dump') {
      try {
        requests += await viaDump(client, resolved, target, fields, format, { after, already, bom: false, signal, emit, handle, onBytes: (records) => {
          written += records;
          report();
        } });
      } catch (error) {
        // A portal without the dump (or one that refuses it) before a byte came: the next cheapest path.
        const refused = error instanceof DatastoreError && ['NOT_FOUND', 'HTTP_ERROR', 'BAD_REQUEST', 'FORBIDDEN'].includes(error.code);
        if (!refused || options.path === 'dump' || written !== already) throw error;
        requests++;
        path = await choosePath(false);
      }
    }
    switch (path) {
      case 'dump':
        break;
      case 'next_page':
        requests += await viaNextPage(client, resolved, pageSize, after, wanted - already, signal, emit);
        break;
      case 'sql':
        requests += await viaSql(client, resolved, id, fields, pageSize, after, wanted - already, signal, emit);
        break;
      case 'offset':
        requests += await viaOffset(client, resolved, target, fields, pageSize, already, after, signal, emit);
        break;
    }
    if (format === 'json') await finishJson(handle);
    else await handle.write(writer.end(written));
    finished = true;
  } finally {
    await handle.close();
    // A new export that failed before its first record leaves nothing to resume: no `.part` is kept.
    if (!finished && resumed === undefined && written === 0) {
      await rm(part, { force: true });
      await rm(marker, { force: true });
    }
  }
  let fieldsFile: string | undefined;
  if (options.fieldsFile !== false) {
    fieldsFile = fieldsFileOf(options.file);
    let aliases: string[] = [];
    try {
      requests++;
      const info = (await client.action('datastore_info', { id }, signal === undefined ? {} : { signal })) as { meta?: { aliases?: unknown } };
      if (Array.isArray(info.meta?.aliases)) aliases = info.meta.aliases.filter((alias): alias is string => typeof alias === 'string');
    } catch (error) {
      if (error instanceof DatastoreError && error.code === 'ABORTED') throw error;
    }
    const declared = {
      resource_id: id,
      aliases,
      fields: fields.filter((field) => field.id !== '_id').map((field) => ({ id: field.id, type: field.type, ...(field.info === undefined ? {} : { info: field.info }) })),
    };
    await writeFile(`${fieldsFile}.part`, `${JSON.stringify(declared, null, 2)}\n`);
    await rename(`${fieldsFile}.part`, fieldsFile);
  }
  await rename(part, options.file);
  await rm(marker, { force: true });
  return { file: options.file, fieldsFile, format, path, records: written, requests, resumed: resumed?.records };
}

/**
 * Takes `<file>.lock` for this process (created only if absent), and gives
 * the function that lets it go. A lock whose process is gone (a crash, a
 * kill -9) is taken over; one whose process runs refuses the export.
 */
async function lockExport(file: string): Promise<() => Promise<void>> {
  const lock = `${file}.lock`;
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      await writeFile(lock, `${process.pid}\n`, { flag: 'wx' });
      return () => rm(lock, { force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') {
        throw toolError('USAGE', [`cannot export to ${file}: ${lock} cannot be written (${(error as NodeJS.ErrnoException).code ?? String(error)})`], { cause: error });
      }
    }
    const holder = Number((await readFile(lock, 'utf8').catch(() => '')).trim());
    if (Number.isSafeInteger(holder) && holder > 0 && isRunning(holder)) {
      throw toolError('EXPORT_LOCKED', [file, holder], { hint: `wait for it to end, or stop it; if no export runs, remove ${lock}` });
    }
    await rm(lock, { force: true });
  }
  throw toolError('EXPORT_LOCKED', [file, 0], { hint: `if no export runs, remove ${file}.lock` });
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it runs, as another user
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * An output the export could not finish, refused before anything is asked
 * or written: a file in a folder that does not exist, or a folder itself
 * (the records would go to FOLDER.part, and the rename at the end would
 * fail). `name` is the file suggested inside such a folder.
 */
async function refuseUnwritable(file: string, name: string): Promise<void> {
  if ((await stat(file).catch(() => undefined))?.isDirectory() === true) {
    throw toolError('USAGE', [`cannot export to ${file}: ${file} is a folder, and an export writes one file`], { hint: `give a file in it, such as ${join(file, name)}` });
  }
  const folder = dirname(file);
  const parent = await stat(folder).catch(() => undefined);
  if (parent === undefined) throw toolError('USAGE', [`cannot export to ${file}: the folder ${folder} does not exist`], { hint: `make it first (mkdir -p ${folder}), or write the file elsewhere` });
  if (!parent.isDirectory()) throw toolError('USAGE', [`cannot export to ${file}: ${folder} is a file, not a folder`]);
}

/** Whether an export's input is a query (`from …`, after any comment lines), not a resource's name. */
export function isQueryText(input: string): boolean {
  return /^\s*(--[^\n]*\n\s*)*from\b/i.test(input);
}

/**
 * A field the query names that the resource does not have, found before a
 * file is opened or a page asked for: the query error `ckql check --schema`
 * gives, at its place in the text, with the field meant. (The portal would
 * refuse the first page, or, for a condition ckql applies itself, every
 * record would fail it.)
 */
function refuseUnknownFields(input: string, params: Params | undefined, resource: string, fields: readonly FieldInfo[]): void {
  if (!isQueryText(input)) return;
  const unknown = schemaError(input, { resources: [{ id: resource, fields }] }, 'UNKNOWN_FIELD', params);
  if (unknown !== undefined) throw unknown;
}

/** A resource name or a query as a bound query. */
function queryOf(input: string, params: Params | undefined): Query {
  const text = isQueryText(input) ? input : `from ${formatScalar(input.trim())}`;
  const query = parse(text);
  return params === undefined ? query : bind(query, params);
}

function quoteName(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/** No sort, or `_id` ascending alone. */
function isIdOrder(keys: readonly SortKey[] | undefined): boolean {
  return keys === undefined || keys.length === 0 || (keys.length === 1 && keys[0]?.field.kind === 'field' && keys[0].field.name === '_id' && keys[0].direction === 'asc' && keys[0].nulls === undefined);
}

/** Whether the target's one request says the whole query (no residual). */
function wholeOn(query: Query, target: Target): boolean {
  return plan(query, { target: target === 'sql' ? 'ckan-2.11' : target }).residual === undefined;
}

function limitOf(query: Query): number {
  return query.limit?.value.kind === 'number' ? query.limit.value.value : Number.POSITIVE_INFINITY;
}

/** The request's sort with `_id` last, so that equal keys keep one order between pages (none under distinct: `_id` is not selected). */
function totalSort(request: SearchRequest): string | undefined {
  if (request.distinct === true) return request.sort;
  const sort = request.sort?.trim();
  if (sort === undefined || sort === '') return '_id';
  return /(^|,)\s*"?_id"?(\s+(asc|desc))?\s*$/i.test(sort) ? sort : `${sort}, _id`;
}

/**
 * The dump's parameters for a query, or undefined when the dump cannot say it whole.
 * @example dumpParams(parse('from r where a = 1'), 'ckan-2.11', fields, 'csv') // → { format: 'csv', filters: '{"a":1}', sort: '_id' }
 */
function dumpParams(query: Query, target: Target, fields: readonly FieldInfo[], format: ExportFormat): Record<string, string> | undefined {
  const dialect = target === 'ckan-2.12' ? 'ckan-2.12' : 'ckan-2.11';
  const planned = plan(query, { target: dialect });
  if (planned.residual !== undefined) return undefined;
  const request = planned.request as SearchRequest;
  if (request.fields?.some((name) => name.includes(',')) === true) return undefined;
  const params: Record<string, string> = { format: format === 'ndjson' ? 'json' : format };
  if (request.filters !== undefined) params.filters = JSON.stringify(request.filters);
  if (request.q !== undefined) params.q = typeof request.q === 'string' ? request.q : JSON.stringify(request.q);
  if (request.plain !== undefined) params.plain = String(request.plain);
  if (request.language !== undefined) params.language = request.language;
  if (request.distinct === true) params.distinct = 'true';
  if (request.fields !== undefined) params.fields = fields.map((f) => f.id).join(',');
  const sort = totalSort(request);
  if (sort !== undefined) params.sort = sort;
  if (request.limit !== undefined) params.limit = String(request.limit);
  if (request.offset !== undefined) params.offset = String(request.offset);
  return params;
}

interface DumpRun {
  /** the last `_id` the `.part` holds (a resumed export) */
  readonly after: number | undefined;
  /** records the `.part` holds */
  readonly already: number;
  readonly bom: boolean;
  readonly signal: AbortSignal | undefined;
  readonly emit: (records: readonly Row[]) => Promise<void>;
  readonly handle: FileHandle;
  /** records written as bytes (csv, tsv) */
  readonly onBytes: (records: number) => void;
}

/**
 * The dump path: csv and tsv are written as the portal sends them (its
 * header left out), json and ndjson are read from the dump's json (a
 * record per line, as CKAN's writer puts them). A resumed export asks
 * 2.12 for `_id` above the last one written, 2.11 for the records after
 * those written (`offset`; the dump is in `_id` order).
 */
async function viaDump(client: DatastoreClient, query: Query, target: Target, fields: readonly FieldInfo[], format: ExportFormat, run: DumpRun): Promise<number> {
  const params = dumpParams(query, target, fields, format);
  if (params === undefined) throw toolError('USAGE', ["the portal's dump cannot say this query whole; leave out --via dump"]);
  const id = (query.from.resource as { value: string }).value;
  if (run.after !== undefined) {
    if (target === 'ckan-2.12') {
      const filters = params.filters === undefined ? {} : (JSON.parse(params.filters) as Record<string, unknown>);
      params.filters = JSON.stringify({ ...filters, _id: { gt: run.after } });
      delete params.offset;
    } else {
      params.offset = String(Number(params.offset ?? 0) + run.already);
    }
    if (params.limit !== undefined) params.limit = String(Math.max(0, Number(params.limit) - run.already));
  }
  const download = await client.download(`datastore/dump/${id}`, params, run.signal === undefined ? {} : { signal: run.signal });
  const decoder = new StringDecoder('utf8');
  if (format === 'csv' || format === 'tsv') {
    // The portal's bytes, but its header (ours is written) and a BOM; records counted as whole lines outside quotes.
    let header = true;
    let quoted = false;
    let first = true;
    for await (const piece of download.body) {
      let text = typeof piece === 'string' ? piece : decoder.write(Buffer.from(piece));
      if (first) {
        first = false;
        if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
      }
      let from = 0;
      let records = 0;
      for (let i = 0; i < text.length; i++) {
        const c = text.charCodeAt(i);
        if (c === 34) quoted = !quoted;
        else if (c === 10 && !quoted) {
          if (header) {
            header = false;
            from = i + 1;
          } else records++;
        }
      }
      if (header) continue;
      await run.handle.write(text.slice(from));
      run.onBytes(records);
    }
    return 1;
  }
  // json → records: the dump's records are one list per line.
  let buffer = '';
  let names: readonly string[] | undefined;
  let batch: Row[] = [];
  const numbers = new Set(fields.filter((f) => isNumberType(f.type)).map((f) => f.id));
  const take = async (line: string): Promise<void> => {
    const text = line.trim().replace(/,$/, '');
    if (names === undefined) {
      const found = /^"fields":\s*(\[.*\])$/.exec(text);
      if (found !== null) names = (JSON.parse(found[1] as string) as { id: string }[]).map((f) => f.id);
      return;
    }
    if (!text.startsWith('[')) return;
    const values = exactJson(text, numbers.size > 0) as JsonValue[];
    const record: Record<string, JsonValue> = {};
    names.forEach((name, i) => {
      record[name] = values[i] ?? null;
    });
    batch.push(record);
    if (batch.length >= 1_000) {
      await run.emit(batch);
      batch = [];
    }
  };
  for await (const piece of download.body) {
    buffer += typeof piece === 'string' ? piece : decoder.write(Buffer.from(piece));
    let end: number;
    while ((end = buffer.indexOf('\n')) >= 0) {
      await take(buffer.slice(0, end));
      buffer = buffer.slice(end + 1);
    }
  }
  buffer += decoder.end();
  if (buffer.trim() !== '') await take(buffer);
  if (names === undefined) throw new DatastoreError('INVALID_RESPONSE', `the dump of ${id} is not CKAN's json dump ({"fields": […], "records": […]})`);
  await run.emit(batch);
  return 1;
}

/** JSON text, integers beyond 2^53 kept as their digits (as the client reads a page holding one). */
function exactJson(text: string, careful: boolean): unknown {
  if (!careful || !/\d{16}/.test(text)) return JSON.parse(text);
  return parseLossless(text, null, (digits) => {
    const n = Number(digits);
    return Number.isSafeInteger(n) || !/^-?\d+$/.test(digits) ? n : digits;
  });
}

/** CKAN 2.12's keyset: `next_page` added to the filters of the next request. */
async function viaNextPage(
  client: DatastoreClient, query: Query, pageSize: number, after: number | undefined, wanted: number, signal: AbortSignal | undefined, emit: (records: readonly Row[]) => Promise<void>,
): Promise<number> {
  const request = plan({ ...query, limit: undefined, offset: undefined }, { target: 'ckan-2.12' }).request as SearchRequest;
  let cursor: Record<string, unknown> | undefined = after === undefined ? undefined : { _id: { gt: after } };
  let requests = 0;
  let left = wanted;
  while (left > 0) {
    const limit = Math.min(pageSize, left);
    const filters = cursor === undefined ? request.filters : withCursor(request.filters, cursor);
    const page = await client.search(
      { ...request, ...(filters === undefined ? {} : { filters: filters as SearchRequest['filters'] }), sort: '_id', limit, include_next_page: true, include_total: false },
      signal === undefined ? {} : { signal },
    );
    requests++;
    await emit(page.records);
    left -= page.records.length;
    const next = (page as { next_page?: unknown }).next_page;
    if (page.records.length < Math.min(page.limit, limit) || typeof next !== 'object' || next === null) break;
    cursor = next as Record<string, unknown>;
  }
  return requests;
}

function withCursor(filters: SearchRequest['filters'], cursor: Record<string, unknown>): Record<string, unknown> {
  if (filters === undefined) return cursor;
  if (!Array.isArray(filters) && !Object.hasOwn(filters, '_id')) return { ...(filters as Record<string, unknown>), ...cursor };
  return { $and: [Array.isArray(filters) ? { $or: filters } : filters, cursor] };
}

/** `_id` keyset through `datastore_search_sql`: each page the records after the last `_id` read. */
async function viaSql(
  client: DatastoreClient, query: Query, id: string, fields: readonly FieldInfo[], pageSize: number, after: number | undefined,
  wanted: number, signal: AbortSignal | undefined, emit: (records: readonly Row[]) => Promise<void>,
): Promise<number> {
  const columns = fields.map((f) => f.id);
  // `_id` is read for the keyset even when the export does not write it.
  const read = columns.includes('_id') ? columns : ['_id', ...columns];
  let last = after;
  let requests = 0;
  let left = wanted;
  while (left > 0) {
    const limit = Math.min(pageSize, left);
    const answer = await client.action('datastore_search_sql', { sql: keysetSql(query, id, read, last, limit) }, { method: 'POST', ...(signal === undefined ? {} : { signal }) });
    const result = checkedSqlResult(answer, new URL(client.url).origin);
    requests++;
    const records = result.records;
    await emit(read === columns ? records : records.map((record) => Object.fromEntries(columns.map((name) => [name, record[name] ?? null])) as Row));
    left -= records.length;
    const lastId = records[records.length - 1]?._id;
    if (records.length === 0 || typeof lastId !== 'number' || (records.length < limit && (result as { records_truncated?: boolean }).records_truncated !== true)) break;
    last = lastId;
  }
  return requests;
}

/**
 * `datastore_search` pages by offset, the sort ending in `_id`; a residual
 * (what the portal cannot say) is applied to each page here: its test,
 * select, distinct, offset and limit.
 */
async function viaOffset(
  client: DatastoreClient, query: Query, target: Target, fields: readonly FieldInfo[], pageSize: number, already: number, after: number | undefined,
  signal: AbortSignal | undefined, emit: (records: readonly Row[]) => Promise<void>,
): Promise<number> {
  const planned = plan(query, { target: target === 'sql' ? 'ckan-2.11' : target });
  const request = planned.request as SearchRequest;
  const residual = planned.residual;
  const sort = totalSort(request);
  const names = fields.map((f) => f.id);
  let requests = 0;
  if (residual === undefined) {
    // The request's own offset and limit, less what a resumed export holds.
    let offset = (request.offset ?? 0) + already;
    let left = (request.limit ?? Number.POSITIVE_INFINITY) - already;
    while (left > 0) {
      const limit = Math.min(pageSize, left);
      const page = await client.search({ ...request, ...(sort === undefined ? {} : { sort }), limit, offset, include_total: false }, signal === undefined ? {} : { signal });
      requests++;
      // A resumed export in `_id` order drops what it holds already, should the table have changed meanwhile.
      const records = after === undefined || sort !== '_id' ? page.records : page.records.filter((record) => typeof record._id !== 'number' || record._id > after);
      await emit(records);
      offset += page.records.length;
      left -= page.records.length;
      if (page.records.length < Math.min(page.limit, limit) || page.records.length === 0) break;
    }
    return requests;
  }
  // A residual: every record the request selects, in the total order, tested here.
  const start = residual.offset?.value.kind === 'number' ? residual.offset.value.value : 0;
  const wanted = residual.limit?.value.kind === 'number' ? residual.limit.value.value : Number.POSITIVE_INFINITY;
  const distinct = residual.select?.distinct === true;
  const seen = new Set<string>();
  let matched = 0;
  let kept = 0;
  let offset = 0;
  let test: ((row: Row, position: number) => boolean) | undefined;
  for (;;) {
    const page = await client.search({ ...request, ...(sort === undefined ? {} : { sort }), limit: pageSize, offset, include_total: false }, signal === undefined ? {} : { signal });
    requests++;
    test ??= residualTest(residual, page.fields);
    const out: Row[] = [];
    for (const [i, record] of page.records.entries()) {
      if (!test(record, offset + i)) continue;
      const row = Object.fromEntries(names.map((name) => [name, record[name] ?? null])) as Row;
      if (distinct) {
        const key = JSON.stringify(names.map((name) => canonicalText(row[name])));
        if (seen.has(key)) continue;
        seen.add(key);
      }
      matched++;
      if (matched <= start) continue;
      kept++;
      if (kept > already) out.push(row);
      if (kept >= wanted) break;
    }
    await emit(out);
    offset += page.records.length;
    if (kept >= wanted || page.records.length < Math.min(page.limit, pageSize) || page.records.length === 0) break;
  }
  return requests;
}

/** The end of a json export: the last record's comma taken back, the list closed. */
async function finishJson(handle: FileHandle): Promise<void> {
  const { size } = await handle.stat();
  const tail = Buffer.alloc(Math.min(2, size));
  await handle.read(tail, 0, tail.length, size - tail.length);
  if (tail.toString('utf8') === ',\n') {
    await handle.truncate(size - 2);
    await handle.write('\n]\n', size - 2);
  } else {
    await handle.write(']\n', size);
  }
}

interface Writer {
  head(): string;
  /** records, `before` of them in the file already */
  records(records: readonly Row[], before: number): string;
  /** the end of the file, `count` records in it */
  end(count: number): string;
}

function writerFor(format: ExportFormat, fields: readonly FieldInfo[], ckan: CkanVersion): Writer {
  const objectText = (record: Row): string => `{${fields.map((field) => `${JSON.stringify(field.id)}:${valueText(field, record, ckan)}`).join(',')}}`;
  switch (format) {
    case 'csv':
    case 'tsv': {
      const delimiter = format === 'csv' ? ',' : '\t';
      // The header as CKAN's dump writes it (Python's csv module: `\r\n`), the records as PostgreSQL's COPY (`\n`).
      const cell = (text: string): string => (text.includes(delimiter) || text.includes('"') || text.includes('\r') || text.includes('\n') ? `"${text.replaceAll('"', '""')}"` : text);
      return { head: () => `${fields.map((f) => cell(f.id)).join(delimiter)}\r\n`, records: (records) => delimitedText(fields, records, ckan, delimiter), end: () => '' };
    }
    case 'json':
      // A record per line, each line whole with its comma (a `.part` cut anywhere ends in whole lines): the
      // last comma is taken back at the end (`finishJson`).
      return { head: () => '[\n', records: (records) => records.map((record) => `${objectText(record)},\n`).join(''), end: () => '' };
    case 'ndjson':
      return { head: () => '', records: (records) => records.map((record) => `${objectText(record)}\n`).join(''), end: () => '' };
  }
}

/** What a `.part` holds: its whole records, the last one's `_id` and text, and the line it starts on. */
interface ResumePoint {
  readonly records: number;
  readonly lastId: number | undefined;
  readonly last: { readonly text: string; readonly line: number } | undefined;
}

/**
 * Where a `.part` ends: its whole records (a record cut off at the end is
 * dropped from the file) and the last one's `_id` (the first field). Every
 * record must be one this export writes: the header the writer writes
 * first, then records whose first field is a whole `_id`, rising when the
 * export is in `_id` order. The first that is not is refused, naming its
 * line: resuming after it would keep it, or page from the wrong place.
 */
async function resumePoint(part: string, format: ExportFormat, head: string, idOrdered: boolean): Promise<ResumePoint> {
  const size = await stat(part).then((info) => info.size, () => undefined);
  if (size === undefined) throw toolError('USAGE', [`--resume: ${part} is gone; leave out --resume to start again`]);
  let records = 0;
  let lastId: number | undefined;
  let last: ResumePoint['last'];
  /** bytes of whole records (and the head) */
  let keep = 0;
  let offset = 0;
  /** the file's line the text being read starts on */
  let line = 1;
  let lines = 1;
  let text = '';
  let quoted = false;
  let headRead = format === 'ndjson';
  const delimited = format === 'csv' || format === 'tsv';
  const refuse = (at: number, why: string): never => {
    throw toolError('RESUME_MISMATCH', [part, `line ${at} ${why}`], { hint: 'leave out --resume to start the export again (the .part is replaced), or cut the file before that line' });
  };
  const take = (whole: string): void => {
    if (!headRead) {
      headRead = true;
      if (whole.replace(/^\ufeff/, '') !== head) refuse(line, `is not the ${format === 'json' ? 'opening [' : 'header'} this export writes`);
      return;
    }
    let id: unknown;
    if (delimited) {
      const first = whole.split(format === 'csv' ? ',' : '\t', 1)[0] ?? '';
      id = /^\d{1,15}$/.test(first) ? Number(first) : undefined;
    } else {
      try {
        id = (JSON.parse(whole.trimEnd().replace(/,$/, '')) as Row)._id;
      } catch {
        refuse(line, 'is not a JSON record');
      }
    }
    if (typeof id !== 'number' || !Number.isSafeInteger(id)) return refuse(line, 'does not start with a record\'s _id');
    if (idOrdered && lastId !== undefined && id <= lastId) refuse(line, `has _id ${id}, after _id ${lastId}: an export in _id order writes them rising`);
    records++;
    lastId = id;
    last = { text: whole, line };
  };
  const decoder = new StringDecoder('utf8');
  for await (const chunk of createReadStream(part)) {
    const piece = decoder.write(chunk as Buffer);
    let from = 0;
    for (let i = 0; i < piece.length; i++) {
      const c = piece.charCodeAt(i);
      if (c === 34 && delimited) quoted = !quoted;
      else if (c === 10) {
        lines++;
        if (quoted) continue;
        const whole = text + piece.slice(from, i + 1);
        take(whole);
        keep = offset + Buffer.byteLength(whole);
        offset = keep;
        text = '';
        from = i + 1;
        line = lines;
      }
    }
    text += piece.slice(from);
  }
  // What follows the last newline is a record cut off: dropped, and asked again.
  await truncate(part, keep);
  return { records, lastId, last };
}

/**
 * Before appending to a `.part`: its last record must be the source's, as
 * this export would write it, at the place it stands. A `.part` that was
 * changed (or a source whose records changed) is refused, naming the line,
 * where resuming appended duplicates or skipped records without a word.
 * The value check asks the record by its `_id`; the place check (when the
 * portal says the whole query) asks which record stands at that position.
 */
async function verifyResume(
  client: DatastoreClient,
  point: ResumePoint,
  context: { readonly part: string; readonly id: string; readonly query: Query; readonly target: Target; readonly fields: readonly FieldInfo[]; readonly writer: Writer; readonly signal: AbortSignal | undefined },
): Promise<number> {
  const { last, lastId } = point;
  if (last === undefined || lastId === undefined) return 0;
  const options = context.signal === undefined ? {} : { signal: context.signal };
  const refuse = (why: string): never => {
    throw toolError('RESUME_MISMATCH', [context.part, `line ${last.line} ${why}`], { hint: 'leave out --resume to start the export again (the .part is replaced)' });
  };
  const found = await client.search({ resource_id: context.id, filters: { _id: lastId }, fields: context.fields.map((f) => f.id), limit: 1 }, options);
  const record = found.records[0];
  if (record === undefined) refuse(`holds _id ${lastId}, which the source does not have`);
  if (context.writer.records([record!], point.records - 1) !== last.text) refuse(`does not match the source's record _id ${lastId}: the file or the source changed since`);
  const planned = plan({ ...context.query, limit: undefined, offset: undefined }, { target: context.target === 'ckan-2.12' ? 'ckan-2.12' : 'ckan-2.11' });
  if (planned.residual !== undefined) return 1;
  const request = planned.request as SearchRequest;
  const skipped = context.query.offset?.value.kind === 'number' ? context.query.offset.value.value : 0;
  const sort = totalSort(request);
  const at = await client.search(
    { ...request, ...(sort === undefined ? {} : { sort }), fields: ['_id'], offset: skipped + point.records - 1, limit: 1, include_total: false },
    options,
  );
  const there = at.records[0]?._id;
  if (there !== lastId) refuse(`is record ${point.records} of the file, but the source's record ${point.records} of this export is ${there === undefined ? 'not there' : `_id ${String(there)}`}: records were added to or taken from the file`);
  return 2;
}

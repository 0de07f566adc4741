/**
 * Where queries run: a portal URL, or local files answered in the process by
 * the project's own server API (no socket), so both paths go through the
 * client and answer alike.
 */
import { isAbsolute, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { connect, recordStream } from '../client/connect.js';
import type { DatastoreTable } from '../client/discovery.js';
import { withResourceNames } from '../client/resource-names.js';
import { clientWith } from '../client/wrap.js';
import type { DatastoreClient, Exchange, SearchInput, StreamExchange, WireRequest } from '../client/types.js';
import { datasetResourceName, isBadFile, listDataFiles, loadResources } from '../engine/node/load-resources.js';
import type { FileProgress } from '../engine/memory/load.js';
import type { InvalidUtf8 } from '../engine/types.js';
import type { InferMode } from '../engine/declared.js';
import type { TableLookup } from '../engine/memory/engine.js';
import { bind } from '../compile/bind.js';
import type { Params } from '../compile/bind.js';
import { resourceOf as queryResource } from '../compile/plan.js';
import { parse } from '../syntax/parse.js';
import { openEngine } from '../engine/open.js';
import type { Engine, EngineKind } from '../engine/types.js';
import { memoryEngine } from '../engine/memory/engine.js';
import { openApi, streamOf, wholeText } from '../server/api.js';
import { TABLE_METADATA } from '../server/metadata.js';
import type { Api } from '../server/api.js';
import type { CkanVersion, Row, SearchRequest, SearchResult, Table } from '../datastore/types.js';
import { queryResources, type Query } from '../ast.js';
import { engineTree } from '../execute/build.js';
import { describeTree, execute, readAll } from '../execute/run.js';
import type { Execution } from '../execute/run.js';
import { toolError } from '../errors.js';
import type { ToolError } from '../errors.js';
import type { Target } from '../compile/plan.js';

export type SourceSpec =
  | {
      readonly kind: 'data';
      readonly paths: readonly string[];
      readonly demo?: boolean;
      /** who answers (docs/engines.md); default `memory` */
      readonly engine?: EngineKind;
      /** `pglite`: a directory keeping the database; `postgres`: the server's URL */
      readonly db?: string;
      /** ms a request may take */
      readonly timeout?: number;
      /** the CKAN the local data is answered as (`ckan-2.12`: 2.12's; `sql`: also datastore_search_sql, on a PostgreSQL engine); default 2.11's */
      readonly target?: Target;
      /** the most records a plan may read to finish a query locally */
      readonly maxScan?: number;
      /** the most rows a join may give */
      readonly maxJoinRows?: number;
      /** a fields file declaring the one data file (engine/declared.ts) */
      readonly fields?: string;
      /** how columns nobody declared are typed; default `ckql` */
      readonly infer?: InferMode;
      /** bytes that are not UTF-8 in a data file: refused (default) or replaced by U+FFFD */
      readonly invalidUtf8?: InvalidUtf8;
    }
  | {
      readonly kind: 'url';
      readonly url: string;
      readonly token?: string;
      readonly language?: string;
      readonly method?: 'POST' | 'GET';
      /** ms a request may take (headers, then body); the client's default when absent */
      readonly timeout?: number;
      /** resource ids or aliases named in the config, offered before any search has run */
      readonly resources?: readonly string[];
      /** the portal's dialect (docs/beyond-the-request.md); detected when absent */
      readonly target?: Target;
      /** the most records a plan may read to finish a query locally */
      readonly maxScan?: number;
      /** the most rows a join may give */
      readonly maxJoinRows?: number;
      /** the header the token is sent in (CKAN's `apitoken_header_name`), the User-Agent, requests in flight at once */
      readonly tokenHeader?: string;
      readonly userAgent?: string;
      readonly maxInFlight?: number;
    };

export interface ResourceSummary {
  readonly id: string;
  readonly alias?: string;
  /** number of records, when known */
  readonly total?: number;
  /** local data: why its file could not be read (then it has no total) */
  readonly unreadable?: ToolError;
}

/**
 * A portal's resources: every table its `_table_metadata` lists (`tables`, by
 * id with its first alias), each with what `listed` knew of it by its id or
 * its alias (a total), then
 * what `listed` names that no table is (all of `listed` where the portal does
 * not let `_table_metadata` be read: `tables` undefined).
 * @example withDatastoreTables([{ id: 'courses', total: 320 }], [{ id: '5b3f…', aliases: ['courses'] }]) // → [{ id: '5b3f…', alias: 'courses', total: 320 }]
 */
export function withDatastoreTables(listed: readonly ResourceSummary[], tables: readonly DatastoreTable[] | undefined): ResourceSummary[] {
  if (tables === undefined) return [...listed];
  const matched = new Set<ResourceSummary>();
  const out = tables.map((table): ResourceSummary => {
    const alias = table.aliases[0];
    // A session may know one table twice: by the id a portal answered with and by the alias a query wrote.
    const known = listed.filter((r) => r.id === table.id || (alias !== undefined && r.id === alias));
    for (const each of known) matched.add(each);
    const total = known.find((r) => r.total !== undefined)?.total;
    return { id: table.id, ...(alias === undefined ? {} : { alias }), ...(total === undefined ? {} : { total }) };
  });
  return [...out, ...listed.filter((r) => !matched.has(r))];
}

export interface Source {
  /** one line for banners: `demo data (examples/data, 3 resources)` or the URL */
  readonly label: string;
  readonly spec: SourceSpec;
  readonly client: DatastoreClient;
  /**
   * ids and aliases the source knows (all tables for local data; configured
   * or seen ones for a portal). Local data opened `lazy` gives totals only
   * for the files read so far, unless `totals` asks for every one.
   */
  listResources(options?: { readonly totals?: boolean }): Promise<readonly ResourceSummary[]>;
  /**
   * Sets the client's target (undefined: detect it). Local data is answered
   * as the CKAN version the target speaks; `sql` there needs an engine that
   * runs SQL, and is refused otherwise.
   */
  setTarget(target: Target | undefined): Promise<void>;
  close(): Promise<void>;
}

/** The bundled demo data (`examples/data`), found from this file, so it works from any cwd, from `src/` and from `dist/`. */
export const demoDataDir: string = fileURLToPath(new URL('../../examples/data', import.meta.url));

/**
 * Opens a source. Local data is loaded once and served in-process by the
 * project's own server on 127.0.0.1 (a free port), and queried through the
 * same client as a portal, so every path runs over HTTP the same way.
 * Call `close()` when done.
 * @example
 * const source = await openSource({ kind: 'data', paths: ['examples/data'] });
 * const result = await source.client.search('from courses where stage = active limit 5');
 * await source.close();
 */
export interface OpenSourceOptions {
  /**
   * The resources about to be queried: local data reads only these files
   * (one-shot commands), and the rest only if `listResources` is asked.
   */
  readonly resources?: readonly string[];
  /**
   * Local data: read each file when a request first names it (the REPL, so
   * its prompt does not wait for files nobody has asked about yet).
   */
  readonly lazy?: boolean;
  /** told as local data files are read (a progress bar), and when reading is over */
  readonly progress?: { update(progress: FileProgress): void; done(): void };
  /**
   * Local data read whole (not `lazy`): told of each file that cannot be
   * read; it is skipped and the others are served. Without it, the first
   * such file fails the open.
   */
  readonly onBadFile?: (error: ToolError) => void;
}

export async function openSource(spec: SourceSpec, options: OpenSourceOptions = {}): Promise<Source> {
  if (spec.kind === 'url') {
    const client = connect({
      url: spec.url,
      ...(spec.token === undefined ? {} : { token: spec.token }),
      ...(spec.language === undefined ? {} : { language: spec.language }),
      ...(spec.method === undefined ? {} : { method: spec.method }),
      ...(spec.timeout === undefined ? {} : { timeout: spec.timeout }),
      ...(spec.target === undefined ? {} : { target: spec.target }),
      ...(spec.maxScan === undefined ? {} : { maxScan: spec.maxScan }),
    ...(spec.maxJoinRows === undefined ? {} : { maxJoinRows: spec.maxJoinRows }),
      ...(spec.tokenHeader === undefined ? {} : { tokenHeader: spec.tokenHeader }),
      ...(spec.userAgent === undefined ? {} : { userAgent: spec.userAgent }),
      ...(spec.maxInFlight === undefined ? {} : { maxInFlight: spec.maxInFlight }),
      onWarning: (message) => void process.stderr.write(`warning: ${message}\n`),
    });
    const seen = new Set<string>(spec.resources ?? []);
    const shown = hidePassword(spec.url);
    return {
      label: spec.language === undefined ? shown : `${shown} (${spec.language})`,
      spec,
      client: rememberResources(client, seen),
      listResources: async () => [...seen].map((id) => ({ id })),
      setTarget: async (target) => client.setTarget(target),
      close: () => client.close(),
    };
  }

  if ((spec.engine !== undefined && spec.engine !== 'memory') || spec.db !== undefined) return openEngineSource(spec, options.onBadFile);
  if (options.lazy === true) return openLazyData(spec, options.progress);
  const onProgress = options.progress?.update;
  const onBadFile = options.onBadFile;
  // The files to read now: those named, or every one (`_table_metadata` lists every table).
  const only = options.resources === undefined || options.resources.includes(TABLE_METADATA) ? undefined : options.resources;
  const tables = await loadResources(spec.paths, {
    ...typingOf(spec),
    ...(only === undefined ? {} : { only }),
    ...(onProgress === undefined ? {} : { onProgress }),
    ...(onBadFile === undefined ? {} : { onBadFile }),
  }).finally(() => options.progress?.done());
  // Every table, for listings and "did you mean"; the ones already read are not read again.
  let allTables: Promise<readonly Table[]> | undefined;
  const everyTable = (): Promise<readonly Table[]> =>
    (allTables ??= only === undefined ? Promise.resolve(tables) : everyTableBut(spec, tables, options.progress, onBadFile));
  const client = await localClient(memoryEngine(tables), spec);
  const where = spec.demo === true ? relativeLabel(demoDataDir) : spec.paths.map(relativeLabel).join(', ');
  const count = only === undefined ? `, ${tables.length} resource${tables.length === 1 ? '' : 's'}` : '';
  let closing: Promise<void> | undefined;
  return {
    label: `${spec.demo === true ? 'demo data' : 'local data'} (${where}${count})`,
    spec,
    client,
    listResources: async () =>
      (await everyTable()).map((table) => ({
        id: table.id,
        ...(table.aliases[0] === undefined ? {} : { alias: table.aliases[0] }),
        total: table.rows.length,
      })),
    setTarget: async (target) => client.setTarget(target),
    close: () => (closing ??= client.close()),
  };
}

/** Local data or a database answered by a PostgreSQL engine, served in-process like the memory engine's tables. */
async function openEngineSource(spec: Extract<SourceSpec, { kind: 'data' }>, onBadFile: OpenSourceOptions['onBadFile']): Promise<Source> {
  const engine = await openEngine({
    ...(spec.engine === undefined ? {} : { engine: spec.engine }),
    data: spec.paths,
    ...(spec.db === undefined ? {} : { db: spec.db }),
    ...typingOf(spec),
    ...(onBadFile === undefined ? {} : { onBadFile }),
  });
  const client = await localClient(engine, spec).catch(async (error: unknown) => {
    await engine.close();
    throw error;
  });
  let closing: Promise<void> | undefined;
  return {
    label: engine.label,
    spec,
    client,
    listResources: async () =>
      (await engine.resources()).map((r) => ({
        id: r.id,
        ...(r.aliases[0] === undefined ? {} : { alias: r.aliases[0] }),
        ...(r.total === undefined ? {} : { total: r.total }),
      })),
    setTarget: async (target) => client.setTarget(target),
    close: () =>
      (closing ??= (async () => {
        await client.close();
        await engine.close();
      })()),
  };
}

/**
 * Local data served as files are asked for: the server's lookup holds the
 * tables read so far, and the client reads the file a request names before
 * sending it.
 */
async function openLazyData(spec: Extract<SourceSpec, { kind: 'data' }>, progress: OpenSourceOptions['progress']): Promise<Source> {
  const files = await listDataFiles(spec.paths, typingOf(spec));
  const loaded = new Map<string, Promise<Table>>();
  const ready = new Map<string, Table>();
  const entryFor = (name: string) => files.find((each) => each.alias === name || each.id === name || datasetResourceName(each) === name);
  const lookup: TableLookup = {
    find: (name) => {
      const entry = entryFor(name);
      return entry === undefined ? undefined : ready.get(entry.id);
    },
    // In the files' order (a catalogue lists a dataset's resources so), whatever order they were read in.
    get tables() {
      return files.flatMap((each) => ready.get(each.id) ?? []);
    },
  };
  const read = (name: string): Promise<unknown> => {
    const entry = entryFor(name);
    if (entry === undefined) return Promise.resolve();
    let table = loaded.get(entry.id);
    if (table === undefined) {
      table = loadResources(entry.file, { ...typingOf(spec), ...(progress === undefined ? {} : { onProgress: progress.update }) }).finally(() => progress?.done()).then(([only]) => {
        if (only === undefined) throw new Error(`${entry.file} gave no table`);
        ready.set(entry.id, only);
        return only;
      });
      loaded.set(entry.id, table);
      table.catch(() => loaded.delete(entry.id));
    }
    return table;
  };
  const client = await localClient(memoryEngine(lookup), spec);
  const resourcesNamed = (input: SearchInput, params: Params | undefined): string[] => {
    if (typeof input === 'object' && 'resource_id' in input) return [input.resource_id];
    // Every resource the query reads: `from`'s and each join's (a query the portal cannot answer whole still names them).
    try {
      const query = typeof input === 'string' ? parse(input) : input;
      return queryResources(params === undefined ? query : bind(query, params));
    } catch {
      return [];
    }
  };
  // A cancel does not wait for the files: the query stops at once, and they go on loading for the next one.
  const before = async (input: SearchInput, params: Params | undefined, signal: AbortSignal | undefined): Promise<void> => {
    const named = resourcesNamed(input, params);
    // `_table_metadata` lists every table: every file is read for it
    const names = named.includes(TABLE_METADATA) ? [...named, ...files.map((each) => each.id)] : named;
    if (names.length > 0) await untilAborted(Promise.all(names.map(read)), signal);
  };
  const where = spec.demo === true ? relativeLabel(demoDataDir) : spec.paths.map(relativeLabel).join(', ');
  let closing: Promise<void> | undefined;
  return {
    label: `${spec.demo === true ? 'demo data' : 'local data'} (${where}, ${files.length} resource${files.length === 1 ? '' : 's'})`,
    spec,
    client: clientWith(client, (inner) => ({
      detectTarget: async (resourceId, signal) => {
        await read(resourceId);
        return inner.detectTarget(resourceId, signal);
      },
      search: async (input, searchOptions) => {
        await before(input, searchOptions?.params, searchOptions?.signal);
        return inner.search(input, searchOptions);
      },
      searchAll: async function* (input, allOptions) {
        await before(input, allOptions?.params, allOptions?.signal);
        yield* inner.searchAll(input, allOptions);
      },
      stream: async (input, streamOptions) => {
        await before(input, streamOptions?.params, streamOptions?.signal);
        return inner.stream(input, streamOptions);
      },
      explain: async (input, explainOptions) => {
        await before(input, explainOptions?.params, explainOptions?.signal);
        return inner.explain(input, explainOptions);
      },
    })),
    listResources: async (listOptions) => {
      // A file that cannot be read is listed with why; the others are still counted.
      const unreadable = new Map<string, ToolError>();
      if (listOptions?.totals === true) {
        await Promise.all(files.map((each) => read(each.id).catch((error: unknown) => {
          if (!isBadFile(error)) throw error;
          unreadable.set(each.id, error);
        })));
      }
      return files.map((each) => {
        const table = ready.get(each.id);
        const problem = unreadable.get(each.id);
        return { id: each.id, alias: each.alias, ...(table === undefined ? {} : { total: table.rows.length }), ...(problem === undefined ? {} : { unreadable: problem }) };
      });
    },
    setTarget: async (target) => client.setTarget(target),
    close: () => (closing ??= client.close()),
  };
}

/** `work`, or the signal's reason as soon as it is aborted (the work itself goes on). */
async function untilAborted<T>(work: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (signal === undefined) return work;
  signal.throwIfAborted();
  let onAbort: () => void = () => undefined;
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    return await Promise.race([work, aborted]);
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
}

/** Every table of `paths`, reading the files not read yet (only listings and "did you mean" after a partial load come here). */
async function everyTableBut(
  spec: Extract<SourceSpec, { kind: 'data' }>,
  loaded: readonly Table[],
  progress: OpenSourceOptions['progress'],
  onBadFile: OpenSourceOptions['onBadFile'],
): Promise<readonly Table[]> {
  const files = await listDataFiles(spec.paths, { ...typingOf(spec), ...(onBadFile === undefined ? {} : { onDuplicate: onBadFile }) });
  const unread = files.filter((file) => !loaded.some((table) => table.id === file.id)).map((file) => file.id);
  const read = unread.length === 0
    ? []
    : await loadResources(spec.paths, {
        ...typingOf(spec),
        only: unread,
        ...(progress === undefined ? {} : { onProgress: progress.update }),
        ...(onBadFile === undefined ? {} : { onBadFile }),
      }).finally(() => progress?.done());
  return files.flatMap((file) => loaded.find((table) => table.id === file.id) ?? read.find((table) => table.id === file.id) ?? []);
}

/** How local data is read (`--fields`, `--infer`, `--invalid-utf8`), as the loaders take it. */
function typingOf(spec: Extract<SourceSpec, { kind: 'data' }>): { fields?: string; infer?: InferMode; invalidUtf8?: InvalidUtf8 } {
  return {
    ...(spec.fields === undefined ? {} : { fields: spec.fields }),
    ...(spec.infer === undefined ? {} : { infer: spec.infer }),
    ...(spec.invalidUtf8 === undefined ? {} : { invalidUtf8: spec.invalidUtf8 }),
  };
}

/**
 * A URL as it may be shown: a password in it (`http://user:secret@host`)
 * becomes `***`, as psql and curl's verbose output hide it.
 * @example hidePassword('http://ann:s3cret@portal.example.org/') // 'http://ann:***@portal.example.org/'
 */
export function hidePassword(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password === '') return url;
    parsed.password = '***';
    return url.endsWith('/') || parsed.pathname !== '/' ? parsed.href : parsed.href.replace(/\/$/, '');
  } catch {
    return url;
  }
}

/** A path as a person would write it from here: relative when inside the working directory. */
export function relativeLabel(path: string): string {
  const relativePath = relative(process.cwd(), path);
  return relativePath !== '' && !relativePath.startsWith('..') && !isAbsolute(relativePath)
    ? relativePath.replace(/[\\/]+$/, '')
    : path.replace(/[\\/]+$/, '');
}

/** The client, noting each resource a search answered for, so `listResources` knows a portal's resources as they are used. */
function rememberResources(client: DatastoreClient, seen: Set<string>): DatastoreClient {
  return clientWith(client, (inner) => ({
    search: async (input, options) => {
      const result = await inner.search(input, options);
      // CKAN's own tables (`_table_metadata`, read to list the others) are no resource of the portal's.
      if (!result.resource_id.startsWith('_')) seen.add(result.resource_id);
      return result;
    },
  }));
}


/**
 * Where local data answers in the URLs a client shows (`explain`): the
 * address `ckql serve` listens on by default. Nothing is sent there.
 */
const LOCAL_URL = 'http://127.0.0.1:8080';

/** The CKAN version local data is answered as for a target: 2.12's for `ckan-2.12`, else 2.11's (which also answers `datastore_search_sql`). */
function ckanOf(target: Target | undefined): CkanVersion {
  return target === 'ckan-2.12' ? '2.12' : '2.11';
}

/**
 * A client for local data: requests go to the server's API in this process,
 * as they would over HTTP to `ckql serve`, without a socket or an HTTP stack
 * (a one-shot command starts in a fraction of the time; BENCHMARKS.md,
 * Start-up). `timeout` (ms) bounds each answer as the HTTP client's does.
 *
 * The API answers as the CKAN version the client's target speaks
 * (docs/beyond-the-request.md, Servers): one API per version over the same
 * engine, made when first asked for, so `setTarget` switches it as `.target`
 * does in the REPL. `sql` needs an engine that runs SQL (pglite, postgres).
 */
async function localClient(engine: Engine, spec: Extract<SourceSpec, { kind: 'data' }>): Promise<DatastoreClient> {
  const checkSql = (target: Target | undefined): void => {
    if (target === 'sql' && engine.searchSql === undefined) {
      throw toolError('USAGE', [`the sql target needs an engine that runs SQL; the ${engine.kind} engine answers datastore_search only`], {
        hint: 'add --engine pglite (or --engine postgres --db postgres://…), or choose --target ckan-2.11 or ckan-2.12',
      });
    }
  };
  checkSql(spec.target);
  const apis = new Map<CkanVersion, Promise<Api>>();
  const apiFor = (version: CkanVersion): Promise<Api> => {
    let api = apis.get(version);
    if (api === undefined) {
      api = openApi({ engine, ckan: version }, LOCAL_URL);
      apis.set(version, api);
    }
    return api;
  };
  let ckan = ckanOf(spec.target);
  await apiFor(ckan);
  const inProcess = async (wire: WireRequest, signal: AbortSignal | undefined): Promise<Exchange> => {
    const url = new URL(wire.url);
    const request = {
      method: wire.method,
      url: url.pathname + url.search,
      authorization: wire.headers.authorization,
      contentType: wire.headers['content-type'],
      ...(wire.body === undefined ? {} : { body: wire.body }),
    };
    const api = await apiFor(ckan);
    const answer = await withDeadline(spec.timeout, signal, (bounded) => api.answer(request, bounded));
    return { status: answer.status, text: wholeText(answer), retryAfter: undefined, location: undefined };
  };
  // The same API, its answer read piece by piece (a dump of a whole table).
  const inProcessStream = async (wire: WireRequest, signal: AbortSignal | undefined): Promise<StreamExchange> => {
    const url = new URL(wire.url);
    const api = await apiFor(ckan);
    const answer = await withDeadline(spec.timeout, signal, (bounded) =>
      api.answer({ method: wire.method, url: url.pathname + url.search, authorization: wire.headers.authorization }, bounded));
    return streamOf(answer);
  };
  const client = connect({
    url: LOCAL_URL,
    ...(spec.timeout === undefined ? {} : { timeout: spec.timeout }),
    ...(spec.target === undefined ? {} : { target: spec.target }),
    ...(spec.maxScan === undefined ? {} : { maxScan: spec.maxScan }),
    ...(spec.maxJoinRows === undefined ? {} : { maxJoinRows: spec.maxJoinRows }),
    inProcess,
    inProcessStream,
  });
  // No dialect asked for: the engine answers a whole query itself (docs/executor.md). A target set by
  // --target or .target pages the data through the API as that portal would be (its fidelity, its limits).
  let asked = spec.target;
  // `_table_metadata` is the API's (server/metadata.ts), not a table of the engine: a query reading it goes to the API.
  const direct = (input: SearchInput): input is Query | string => asked === undefined && !isRequest(input) && !readsTableMetadata(input);
  // The engine's own answers too take `dataset/resource` names (client/resource-names.ts).
  return withResourceNames(clientWith(client, (inner) => ({
    setTarget: (target) => {
      checkSql(target);
      ckan = ckanOf(target);
      asked = target;
      inner.setTarget(target);
    },
    search: async (input, options = {}) => {
      if (!direct(input)) return inner.search(input, options);
      const query = boundQuery(input, options.params);
      const run = await execute(engineTree(engine, query, { all: false, total: true, maxJoinRows: client.maxJoinRows }), { signal: options.signal });
      return engineResult(query, run, await readAll(run));
    },
    searchAll: async function* (input, options = {}) {
      if (!direct(input)) {
        yield* inner.searchAll(input, options);
        return;
      }
      const query = boundQuery(input, options.params);
      const run = await execute(engineTree(engine, query, { all: true, total: false, maxJoinRows: client.maxJoinRows }), { signal: options.signal, onPage: options.onPage });
      for await (const batch of run.batches) yield* batch;
    },
    stream: async (input, options = {}) => {
      if (!direct(input)) return inner.stream(input, options);
      const query = boundQuery(input, options.params);
      const all = options.all === true;
      // The memory engine counts in the pass that answers; a PostgreSQL engine counts in a statement of its own.
      const tree = engineTree(engine, query, { all, total: options.total ?? (engine.kind === 'memory' || !all), maxJoinRows: client.maxJoinRows, ...(options.pageSize === undefined ? {} : { batchSize: options.pageSize }) });
      return recordStream(await execute(tree, { signal: options.signal, onPage: options.onPage }));
    },
    explain: async (input, options = {}) => {
      if (!direct(input)) return inner.explain(input, options);
      const query = boundQuery(input, options.params);
      return { chosen: 'local', steps: describeTree(engineTree(engine, query, { all: false, total: true })) };
    },
  })));
}

function readsTableMetadata(input: Query | string): boolean {
  // A text can name it only by writing it (or with an escape): most texts are not parsed twice.
  if (typeof input === 'string' && !input.includes(TABLE_METADATA) && !input.includes('\\')) return false;
  try {
    return queryResources(typeof input === 'string' ? parse(input) : input).includes(TABLE_METADATA);
  } catch {
    // a text that does not parse is the engine's to refuse
    return false;
  }
}

function isRequest(input: SearchInput): input is SearchRequest {
  return typeof input !== 'string' && (input as { kind?: unknown }).kind !== 'query';
}

function boundQuery(input: Query | string, params: Params | undefined): Query {
  const query = typeof input === 'string' ? parse(input) : input;
  return params === undefined ? query : bind(query, params);
}

/** An engine's whole answer as a search result: its total (local engines count as they answer) and what was read. */
function engineResult(query: Query, run: Execution, records: Row[]): SearchResult {
  const total = run.total();
  const result: Record<string, unknown> = {
    resource_id: run.resource ?? queryResource(query),
    fields: run.fields,
    records,
  };
  if (total !== undefined) result.total = total;
  result.total_was_estimated = false;
  result.limit = query.limit?.value.kind === 'number' ? query.limit.value.value : records.length;
  if (query.offset?.value.kind === 'number') result.offset = query.offset.value.value;
  result.include_total = total !== undefined;
  result.records_format = 'objects';
  result.read = run.summary();
  if (run.facets !== undefined) result.facets = run.facets;
  return result as unknown as SearchResult;
}

/**
 * `run` with a signal that also aborts after `ms`; past `ms` it fails as an
 * HTTP answer that did not arrive in time does (the client reports TIMEOUT).
 * @example
 * await withDeadline(50, undefined, () => new Promise(() => {})) // throws { code: 'CKQL_BODY_DEADLINE' } after 50 ms
 */
export async function withDeadline<T>(ms: number | undefined, signal: AbortSignal | undefined, run: (signal: AbortSignal | undefined) => Promise<T>): Promise<T> {
  if (ms === undefined) return run(signal);
  const controller = new AbortController();
  const stop = (): void => controller.abort(signal?.reason);
  signal?.addEventListener('abort', stop, { once: true });
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      controller.abort();
      reject(Object.assign(new Error(`the answer did not arrive within ${ms} ms`), { code: 'CKQL_BODY_DEADLINE' }));
    }, ms);
  });
  try {
    return await Promise.race([run(controller.signal), late]);
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener('abort', stop);
  }
}

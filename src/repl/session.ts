/**
 * The state of one REPL session and what a statement does in it: the
 * source and client queries go to, the settings the dot commands change,
 * the caches completion reads (resources, fields per resource, the last
 * result), and running one statement to the text that is printed.
 *
 * Everything here returns text; node:repl wiring (input, Ctrl-C, prompts)
 * lives in `index.ts`.
 */
import type { DatastoreClient } from '../client/types.js';
import { datastoreTables, type DatasetSummary, type DatastoreTable } from '../client/discovery.js';
import { resourceName } from '../client/resource-names.js';
import { typeWarnings } from '../client/dictionary.js';
import { unknownFieldHint } from '../session/field-hint.js';
import { refusalInQuery } from '../session/schema.js';
import { serveCommand } from '../session/serve-command.js';
import { didYouMean } from '../session/nearest.js';
import { selectSource } from '../session/select-source.js';
import { namesSources, otherSources, profileNote } from '../session/sources.js';
import type { OtherSources } from '../session/sources.js';
import { withParamHint } from '../session/params.js';
import { withDatastoreTables, type ResourceSummary, type Source, type SourceSpec } from '../session/source.js';
import { compile, plan } from '../compile/compile.js';
import { bind, type Params } from '../compile/bind.js';
import { parse } from '../syntax/parse.js';
import { saysWhole, splitSource } from '../compile/plan.js';
import type { Query } from '../ast.js';
import type { Config } from '../config/types.js';
import type { FieldInfo, JsonValue, Row, SearchRequest, SearchResult } from '../datastore/types.js';
import { renderError } from '../diagnostics.js';
import { DatastoreError, QueryError } from '../errors.js';
import { facetsText, formatRecords, tableRowLimit, type OutputFormat } from '../output/format-records.js';
import { renderFacets } from '../output/facets.js';
import { ownValue } from '../output/safe-text.js';
import type { CompletionContext } from './complete.js';
import { explainText } from './explain.js';
import { footerText, layoutTable, cellOf } from '../output/table/layout.js';

/** The resource `.connect` asks a portal for, to learn that it answers (never listed). */
const connectionCheck = 'ckql-connection-check';

/** Records of the last result kept for completing values. */
const completionSample = 1_000;

export interface SessionSettings {
  format: OutputFormat;
  /** records asked for when a query has no `limit` */
  limit: number;
  timing: boolean;
  explain: boolean;
  /** language segment of the portal URL; undefined for none */
  language: string | undefined;
}

export interface SessionOptions {
  readonly source: Source;
  readonly config: Config;
  readonly settings: SessionSettings;
  readonly color: boolean;
  /** terminal columns, read at each render (the terminal may be resized) */
  readonly width: () => number;
  readonly openSource: ((spec: SourceSpec) => Promise<Source>) | undefined;
  /** how a shell produces the token, for curl lines; default `$CKQL_TOKEN` */
  readonly tokenShell?: string | undefined;
  /** the profile `source` was opened from: a query naming it (`name:resource`) reads `source`, not a second copy */
  readonly profile?: string | undefined;
}

/** How many distinct values of a field completion offers. */
const maxValues = 50;
/** Records asked for when completion samples a field's values. */
const sampleSize = 500;

function distinctValues(records: readonly Row[], field: string): JsonValue[] {
  const seen = new Map<string, JsonValue>();
  for (const record of records) {
    const value = record[field];
    if (value === undefined || (typeof value === 'object' && value !== null)) continue;
    const key = `${typeof value}:${String(value)}`;
    if (!seen.has(key)) seen.set(key, value);
    if (seen.size >= maxValues) break;
  }
  return [...seen.values()];
}

/** The sources queries may name, made for one client of the session. */
interface NamedSources {
  readonly client: DatastoreClient;
  readonly others: OtherSources;
}

export class Session {
  readonly config: Config;
  readonly settings: SessionSettings;
  readonly color: boolean;
  readonly width: () => number;
  #source: Source;
  #client: DatastoreClient;
  /** a client made here for `.lang`, closed when replaced */
  #ownClient: DatastoreClient | undefined;
  /** sources opened by `.connect`; the one given at start belongs to the caller */
  readonly #ownSources: Source[] = [];
  readonly #openSource: ((spec: SourceSpec) => Promise<Source>) | undefined;
  /** how a shell produces the current source's token, for curl lines: it changes with the source (`.connect`, `.run` on a profile) */
  #tokenShell: string;
  #resources: Promise<readonly ResourceSummary[]> | undefined;
  readonly #fields = new Map<string, Promise<readonly FieldInfo[]>>();
  /** sampled values per resource and field, for completion */
  readonly #samples = new Map<string, Promise<readonly JsonValue[]>>();
  /** resources queries have answered for, as they were named */
  readonly #seen = new Set<string>();
  /** `dataset/resource` names of the datastore resources `.datasets` showed, with their ids (for completion) */
  readonly #datasetNames = new Map<string, string>();
  #last: { readonly resource: string; readonly result: SearchResult } | undefined;
  /** the resource of the last statement, for `.fields` with no argument */
  lastResource: string | undefined;
  /** the vertical view's hint is given once per session */
  #toldAboutVertical = false;
  /** the sources queries name as `name:resource` (docs/aggregates.md), for the client they were made for */
  #others: NamedSources | undefined;
  /** the profile the session's source was opened from, until `.connect` changes the source */
  #profile: string | undefined;
  /** each other portal's tables as its `_table_metadata` lists them, asked once (undefined where it may not be read) */
  readonly #portalTables = new Map<string, Promise<readonly DatastoreTable[] | undefined>>();

  constructor(options: SessionOptions) {
    this.config = options.config;
    this.settings = options.settings;
    this.color = options.color;
    this.width = options.width;
    this.#source = options.source;
    this.#client = options.source.client;
    this.#openSource = options.openSource;
    this.#tokenShell = options.tokenShell ?? '$CKQL_TOKEN';
    this.#profile = options.profile;
    if (this.settings.language !== (this.#client.language ?? undefined)) this.#useLanguage(this.settings.language);
  }

  get source(): Source {
    return this.#source;
  }

  get client(): DatastoreClient {
    return this.#client;
  }

  /**
   * Ids and aliases of the source, asked once and kept, plus the resources
   * queries have answered for (a portal cannot list its resources).
   */
  resources(refresh = false): Promise<readonly ResourceSummary[]> {
    if (refresh || this.#resources === undefined) {
      // A refresh (`.resources`) wants every record count; completion and the banner need names only.
      const asked = this.#source.listResources(refresh ? { totals: true } : {}).then((all) => {
        const listed = all.filter((r) => r.id !== connectionCheck);
        const known = new Set(listed.flatMap((r) => [r.id, ...(r.alias === undefined ? [] : [r.alias])]));
        const named = [...this.#datasetNames].filter(([name]) => !known.has(name)).map(([name, id]) => ({ id, alias: name }));
        for (const { id } of named) known.add(id);
        return [...listed, ...named, ...[...this.#seen].filter((id) => !known.has(id)).map((id) => ({ id }))];
      });
      this.#resources = asked;
      asked.catch(() => {
        if (this.#resources === asked) this.#resources = undefined;
      });
    }
    return this.#resources;
  }

  /**
   * Keeps the `dataset/resource` names of the datastore resources of
   * datasets `.datasets` showed, so Tab completes them after `from`.
   */
  rememberDatasets(datasets: readonly DatasetSummary[]): void {
    for (const dataset of datasets) {
      for (const resource of dataset.resources) if (resource.datastoreActive) this.#datasetNames.set(resourceName(dataset.name, resource.name), resource.id);
    }
    this.#resources = undefined;
  }

  /** The fields of a resource, learned with a `limit: 0` request and kept. */
  fields(resource: string, signal?: AbortSignal): Promise<readonly FieldInfo[]> {
    let known = this.#fields.get(resource);
    if (known === undefined) {
      // `portal:courses` is asked of the source `portal`, opened if it is not yet (docs/aggregates.md).
      const asked = this.#where(resource)
        .then((where) => where.client.search({ resource_id: where.resource, limit: 0 }, signal === undefined ? {} : { signal }))
        .then((result) => result.fields);
      known = asked;
      this.#fields.set(resource, asked);
      asked.catch(() => {
        if (this.#fields.get(resource) === asked) this.#fields.delete(resource);
      });
    }
    return known;
  }

  /** Aborted by `cancelLookups` (Ctrl-C at the prompt): the requests completion started. */
  #lookups = new AbortController();

  /** Cancels the requests completion has under way (they are asked again on the next Tab). */
  cancelLookups(): void {
    this.#lookups.abort(new DatastoreError('ABORTED', 'cancelled'));
    this.#lookups = new AbortController();
  }

  /** What completion may ask: each lookup is quiet on failure, and Ctrl-C cancels its requests. */
  completionContext(): CompletionContext {
    const signal = this.#lookups.signal;
    return {
      resources: () => this.resources(),
      sources: () => this.sources(),
      resourcesOf: (source) => this.resourcesOf(source),
      fields: (resource) => this.fields(resource, signal),
      values: (field, resource) => this.#valuesOf(field, resource, signal),
    };
  }

  /**
   * Values of a field for completion: those in the last result when it came
   * from this resource and holds the field; otherwise those in a sample of
   * the resource (one request per field, kept), so `where subject = <Tab>`
   * helps before any query has run.
   */
  async #valuesOf(field: string, resource: string | undefined, signal?: AbortSignal): Promise<readonly JsonValue[]> {
    const last = this.#last;
    const fromLast =
      last !== undefined &&
      (resource === undefined || resource === last.resource || resource === last.result.resource_id) &&
      last.result.fields.some((f) => f.id === field);
    if (fromLast) return distinctValues(last.result.records, field);
    if (resource === undefined) return [];
    const key = JSON.stringify([resource, field]);
    let sample = this.#samples.get(key);
    if (sample === undefined) {
      const asked = this.#where(resource)
        .then((where) => where.client.search({ resource_id: where.resource, fields: [field], limit: sampleSize, include_total: false }, signal === undefined ? {} : { signal }))
        .then((result) => distinctValues(result.records, field));
      sample = asked;
      this.#samples.set(key, asked);
      asked.catch(() => {
        if (this.#samples.get(key) === asked) this.#samples.delete(key);
      });
    }
    return sample;
  }

  /** A statement as a query to plan: bound, with the session's page size when it sets no `limit`. */
  queryFor(text: string, params?: Params): Query {
    const query = params === undefined ? parse(text) : bind(parse(text), params);
    if (query.limit !== undefined) return query;
    const span = { start: query.span.end, end: query.span.end };
    return { ...query, limit: { kind: 'limit', span, value: { kind: 'number', span, value: this.settings.limit } } };
  }

  /** The request a statement sends: compiled, with the session's page size when it sets no `limit`. */
  requestFor(text: string, params?: Params): SearchRequest {
    const request = compile(text, params);
    if (request.limit !== undefined) return request;
    // Rebuilt rather than spread, to keep the canonical key order (limit before offset).
    const { offset, include_total: includeTotal, ...rest } = request;
    return {
      ...rest,
      limit: this.settings.limit,
      ...(offset === undefined ? {} : { offset }),
      ...(includeTotal === undefined ? {} : { include_total: includeTotal }),
    };
  }

  /**
   * Runs one statement and returns what to print: the explain block if on,
   * then the records in the session's format with a footer. Errors come back
   * rendered, not thrown; a cancelled request says so in one word.
   */
  async run(
    text: string,
    options: {
      readonly signal?: AbortSignal;
      readonly params?: Params;
      /** the hint for a parameter left without a value (`.run` says how to give one) */
      readonly unboundHint?: (name: string) => string;
    } = {},
  ): Promise<string> {
    const parts: string[] = [];
    let request: SearchRequest | undefined;
    try {
      // The client is given the query: a local engine answers it whole; a portal's client finds its dialect and
      // runs the plan (docs/executor.md). `request` is the first request a portal is sent, for hints.
      const planned = plan(text, { target: 'ckan-2.11', ...(options.params === undefined ? {} : { params: options.params }) });
      const query = this.queryFor(text, options.params);
      request = saysWhole(planned) ? this.requestFor(text, options.params) : (planned.request as SearchRequest);
      this.lastResource = request.resource_id;
      const client = this.#clientFor(query);
      if (this.settings.explain) {
        // The plan the search runs: the client asks the portal's dialect first when it needs to.
        const explained = await client.explain(query ?? request, options.signal === undefined ? {} : { signal: options.signal });
        const tokenShell = this.#client.hasToken ? this.#tokenShell : undefined;
        parts.push(this.#dim(explainText(explained, tokenShell)));
        // Local data answered as a CKAN: the URLs above are those of `ckql serve`, which is not running yet.
        const spec = this.#source.spec;
        if (spec.kind === 'data' && explained.chosen !== 'local' && explained.chosen !== 'sources') {
          parts.push(this.#dim(`these URLs are ckql serve's: start it first with: ${serveCommand(spec, explained.plan?.target ?? 'ckan-2.11')}`));
        }
      }
      const started = performance.now();
      const result = await client.search(query ?? request, options.signal === undefined ? {} : { signal: options.signal });
      const elapsedMs = performance.now() - started;
      this.#remember(request, result);
      // A query naming other sources: the session's fields are of its own source only, so no warnings are looked for.
      if (client === this.#client) for (const warning of await this.#typeWarnings(text, options)) parts.push(warning);
      parts.push(await this.render(result, elapsedMs));
    } catch (error) {
      if (error instanceof QueryError && options.unboundHint !== undefined) {
        parts.push(this.renderFailure(withParamHint(error, options.unboundHint), options.signal));
        return parts.join('\n');
      }
      // An unknown field or resource is shown at its place in the statement, as `ckql check --schema` shows it.
      const told = options.signal?.aborted === true
        ? undefined
        : await refusalInQuery(error, text, { listResources: () => this.resources(), client: this.#client }, options.params, options.signal);
      const hint = told !== undefined || request === undefined ? undefined : await this.#hintFor(error, request, options.signal);
      parts.push(this.renderFailure(told ?? error, options.signal, hint));
    }
    return parts.join('\n');
  }

  /**
   * The client a query goes to: the session's, or, for a query that names
   * other sources (`portal:enrolments`, `local:courses`), one that reads each
   * resource from its source; a profile's source is opened when first named
   * and kept until the session changes source or ends.
   */
  #clientFor(query: Query): DatastoreClient {
    return namesSources(query) ? this.#otherSources().others.client : this.#client;
  }

  /** The sources queries may name, made for the session's client (made again, the old ones closed, when it changes). */
  #otherSources(): NamedSources {
    if (this.#others?.client !== this.#client) {
      void this.#others?.others.close();
      const open = this.#openSource ?? (() => Promise.reject(new Error('this session cannot open other sources')));
      const others = otherSources({ config: this.config, current: { ...this.#source, client: this.#client }, profile: this.#profile, open });
      this.#others = { client: this.#client, others };
    }
    return this.#others;
  }

  /**
   * The names a query may write a resource's source by (`name:resource`):
   * the config's profiles, and `local` when the session has local data;
   * `current` is the session's own source's name among them, if it has one.
   * Nothing is opened to say so.
   */
  sources(): { readonly names: readonly string[]; readonly current: string | undefined; readonly notes: ReadonlyMap<string, string> } {
    const others = this.#otherSources().others;
    const notes = new Map<string, string>();
    for (const name of others.names) {
      const profile = this.config.profiles.get(name);
      notes.set(name, name === others.current && this.#source.spec.kind === 'data' ? 'local data' : profile === undefined ? 'a source' : profileNote(profile));
    }
    return { names: others.names, current: others.current, notes };
  }

  /**
   * The resources of the source `name` (a profile, `local`), for completion
   * after `name:`: the source is opened when first asked (its token read
   * then, never printed) and kept; its list is asked each time, for a
   * portal's grows as queries name its resources (the list is the source's
   * own, read in this process). The current source's are `resources()`.
   */
  async resourcesOf(name: string): Promise<readonly ResourceSummary[]> {
    const others = this.#otherSources().others;
    if (name === others.current) return this.resources();
    const source = await others.source(name);
    const listed = await source.listResources();
    if (source.spec.kind !== 'url') return listed;
    // A portal: also every table its _table_metadata lists (as `.resources` and `ckql resources` do), asked once.
    let asked = this.#portalTables.get(name);
    if (asked === undefined) this.#portalTables.set(name, (asked = datastoreTables(source.client).catch(() => undefined)));
    return withDatastoreTables(listed, await asked);
  }

  /** A resource as written, as the session's own source names it; undefined when it is another source's. */
  #ownName(written: string): string | undefined {
    const { source, resource } = splitSource(written);
    if (source === undefined) return written;
    const others = this.#otherSources().others;
    // A name that is no source: the resource's own name has `:` in it, and the session's source is asked as ever.
    if (!others.names.includes(source)) return written;
    return source === others.current ? resource : undefined;
  }

  /** The client a resource as written is read through, and its name there: `portal:courses` is `courses` of `portal`. */
  async #where(written: string): Promise<{ readonly client: DatastoreClient; readonly resource: string }> {
    const own = this.#ownName(written);
    if (own !== undefined) return { client: this.#client, resource: own };
    const { source, resource } = splitSource(written);
    return { client: (await this.#otherSources().others.source(source!)).client, resource };
  }

  /** The type warnings of a statement (compile/type-warnings.ts), rendered; the fields come from the session's cache. */
  async #typeWarnings(text: string, options: { readonly signal?: AbortSignal; readonly params?: Params }): Promise<string[]> {
    const found = await typeWarnings(this.#client, text, {
      ...(options.params === undefined ? {} : { params: options.params }),
      fields: (resource) => this.fields(resource, options.signal),
    }).catch(() => []);
    return found.map((warning) => {
      const line = `warning[${warning.code}]: ${warning.message}`;
      return this.color ? `\x1b[33m${line}\x1b[39m` : line;
    });
  }

  /**
   * `.run` of a named query with its own `profile:`: that profile's source is
   * opened for this one run and closed after it, as `ckql run` does.
   */
  async runOn(profile: string, text: string, options: Parameters<Session['run']>[1] = {}): Promise<string> {
    if (this.#openSource === undefined) return this.run(text, options);
    let source: Source;
    let tokenShell: string | undefined;
    try {
      const selected = await selectSource({ profile }, { config: async () => this.config });
      tokenShell = selected.tokenShell;
      source = await this.#openSource(selected.spec);
    } catch (error) {
      return this.renderFailure(error, options.signal);
    }
    const saved = this.#client;
    const savedProfile = this.#profile;
    const savedShell = this.#tokenShell;
    this.#client = source.client;
    this.#profile = profile;
    this.#tokenShell = tokenShell ?? '$CKQL_TOKEN';
    try {
      return await this.run(text, options);
    } finally {
      this.#client = saved;
      this.#profile = savedProfile;
      this.#tokenShell = savedShell;
      await source.close().catch(() => undefined);
    }
  }

  /** "did you mean" for an unknown field or resource, asked while the source is at hand. */
  async #hintFor(error: unknown, request: SearchRequest, signal: AbortSignal | undefined): Promise<string | undefined> {
    if (!(error instanceof DatastoreError) || signal?.aborted === true) return undefined;
    if (error.code === 'VALIDATION_ERROR') return unknownFieldHint(error, request, this.#client, signal);
    if (error.code !== 'NOT_FOUND') return undefined;
    return this.resourceHint(request.resource_id);
  }

  /** The hint for a resource the source does not have: the name meant, else where to find the names. */
  async resourceHint(resource: string): Promise<string | undefined> {
    const names = (await this.resources().catch(() => [])).flatMap((r) => (r.alias === undefined ? [r.id] : [r.alias, r.id]));
    return didYouMean(resource, names) ?? (names.length === 0 ? undefined : '.resources lists the resources');
  }

  #remember(request: SearchRequest, result: SearchResult): void {
    // Kept for completing values: a sample is enough, and a 32,000-record answer is not held after it is shown.
    this.#last = { resource: request.resource_id, result: { ...result, records: result.records.slice(0, completionSample) } };
    // Seen resources are the session's own source's: `portal:courses` is another source's (that source keeps it), and
    // `local:courses` of local data is `courses`.
    const own = this.#ownName(request.resource_id);
    if (own !== undefined && !this.#seen.has(own)) {
      this.#seen.add(own);
      this.#resources = undefined;
    }
    // A result without a projection carries every field: no need to ask again.
    if (request.fields === undefined && !this.#fields.has(request.resource_id)) {
      this.#fields.set(request.resource_id, Promise.resolve(result.fields));
    }
  }

  /** A result in the session's format, with the footer. */
  async render(result: SearchResult, elapsedMs: number | undefined): Promise<string> {
    const shownMs = this.settings.timing ? elapsedMs : undefined;
    const width = this.width();
    if (this.settings.format === 'table') {
      // ink loads with the first table, so the prompt does not wait for it.
      const { renderResultTable } = await import('../output/table/render.js');
      const text = renderResultTable(result, {
        width,
        color: this.color,
        maxRows: tableRowLimit,
        ...(shownMs === undefined ? {} : { elapsedMs: shownMs }),
      });
      const facets = result.facets === undefined ? '' : `\n\n${renderFacets(result.facets, { width, color: this.color }).replace(/\n$/, '')}`;
      return text + this.#verticalHint(result, width) + facets;
    }
    const body = await formatRecords(result, this.settings.format, { color: this.color, width, pretty: true });
    const footer = footerText({ returned: result.records.length, total: result.total, offset: result.offset, elapsedMs: shownMs, read: result.read });
    // csv and ndjson hold records only: the facets follow them as the terminal tables.
    const apart = facetsText(result, this.settings.format, { color: this.color, width });
    return `${body.replace(/\n$/, '')}\n${this.#dim(footer)}${apart === undefined ? '' : `\n\n${apart.replace(/\n$/, '')}`}`;
  }

  /** Said once: why records came out one by one, and how to get a table. */
  #verticalHint(result: SearchResult, width: number): string {
    if (this.#toldAboutVertical || result.records.length === 0) return '';
    const rows = result.records.slice(0, tableRowLimit).map((record) => result.fields.map((field) => cellOf(ownValue(record, field.id))));
    if (layoutTable(result.fields, rows, width).kind !== 'vertical') return '';
    this.#toldAboutVertical = true;
    return `\n${this.#dim(`(rows too wide for ${width} columns; \`select\` fewer fields for a table)`)}`;
  }

  /** An error as printed in the session: the caret excerpt, or `cancelled`. */
  renderFailure(error: unknown, signal?: AbortSignal, hint?: string): string {
    if (signal?.aborted === true || (error instanceof DatastoreError && error.code === 'ABORTED')) {
      return this.#dim('cancelled');
    }
    const text = renderError(error, { color: this.color }).replace(/\n+$/, '');
    return hint === undefined || text.includes(hint) ? text : `${text}\n  = hint: ${hint}`;
  }

  #dim(text: string): string {
    return this.color ? `\x1b[2m${text}\x1b[22m` : text;
  }

  /** `.lang`: queries go through a client for the same portal with another language segment. */
  #useLanguage(language: string | undefined): void {
    const next = language === this.#source.client.language ? this.#source.client : this.#source.client.withLanguage(language);
    const old = this.#ownClient;
    this.#ownClient = next === this.#source.client ? undefined : next;
    this.#client = next;
    this.settings.language = language;
    if (old !== undefined && old !== next) void old.close().catch(() => undefined);
  }

  setLanguage(language: string | undefined): void {
    this.#useLanguage(language);
  }

  /**
   * `.connect`: a new source; caches are dropped, settings kept. A portal is
   * asked once first (any answer, even "no such resource", proves it is
   * there), so an address nothing listens on is an error, not "connected".
   */
  async connectTo(spec: SourceSpec, signal?: AbortSignal, tokenShell = '$CKQL_TOKEN'): Promise<Source> {
    if (this.#openSource === undefined) throw new Error('this session cannot open other sources');
    const source = await this.#openSource(spec);
    if (spec.kind === 'url') {
      try {
        await source.client.search({ resource_id: connectionCheck, limit: 0 }, signal === undefined ? {} : { signal });
      } catch (error) {
        const reached = error instanceof DatastoreError && !['CONNECTION_FAILED', 'TIMEOUT', 'ABORTED', 'INVALID_RESPONSE', 'HTTP_ERROR'].includes(error.code);
        if (!reached) {
          await source.close().catch(() => undefined);
          throw error;
        }
      }
    }
    this.#ownSources.push(source);
    this.#source = source;
    // `.connect URL` sends CKQL_TOKEN (commands.ts): the curl line must not name the first source's token.
    this.#tokenShell = tokenShell;
    this.#profile = undefined;
    this.#resources = undefined;
    this.#fields.clear();
    this.#samples.clear();
    this.#seen.clear();
    this.#datasetNames.clear();
    this.#last = undefined;
    this.lastResource = undefined;
    const old = this.#ownClient;
    this.#ownClient = undefined;
    this.#client = source.client;
    if (old !== undefined) await old.close().catch(() => undefined);
    if (this.settings.language !== undefined && this.settings.language !== source.client.language) {
      this.#useLanguage(this.settings.language);
    } else {
      this.settings.language = source.client.language;
    }
    return source;
  }

  /** Closes what the session opened; the source given at start stays the caller's. */
  async close(): Promise<void> {
    const closing: Promise<unknown>[] = [];
    if (this.#ownClient !== undefined) closing.push(this.#ownClient.close());
    if (this.#others !== undefined) closing.push(this.#others.others.close());
    this.#others = undefined;
    for (const source of this.#ownSources) closing.push(source.close());
    this.#ownClient = undefined;
    this.#ownSources.length = 0;
    await Promise.allSettled(closing);
  }
}

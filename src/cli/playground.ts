/**
 * What the playground's endpoints do (`src/server/playground.ts` carries them
 * over HTTP): list sources and fields, run one page of a query, explain it,
 * count a field's values, and stream a download in an output format. Each
 * runs through a source's client (`client.search`, `searchAll`, `explain`),
 * as `ckql query` and `ckql explain` do, so the page and the command line
 * answer alike.
 *
 * Only the sources given here are reachable: the page names one, never a URL.
 */
import { performance } from 'node:perf_hooks';
import { stringify as yamlStringify } from 'yaml';
import type { Query } from '../ast.js';
import { valueText } from '../compile/shape.js';
import { queryStringFor } from '../client/encode.js';
import type { DatastoreClient, Explanation } from '../client/types.js';
import { bind } from '../compile/bind.js';
import type { ParamValue } from '../compile/bind.js';
import type { Target } from '../compile/plan.js';
import { targets } from '../compile/plan.js';
import type { FieldInfo, Row } from '../datastore/types.js';
import { DatastoreError, QueryError, ToolError, withHint } from '../errors.js';
import { format } from '../format.js';
import { curlCommand } from '../output/curl.js';
import { createRecordWriter } from '../output/format-records.js';
import { DOWNLOAD_FORMATS } from '../server/play-protocol.js';
import type {
  DownloadFormat, ErrorAnswer, ExplainAnswer, FacetAnswer, FieldsAnswer, QueryAnswer, ResourcesAnswer, SourceEntry, SourcesAnswer,
  TargetChoice, ValuesAnswer,
} from '../server/play-protocol.js';
import type { PlayAction, PlayDownload, PlaygroundActions, PlayResult } from '../server/playground.js';
import { readParamValue, withParamHint } from '../session/params.js';
import { refusalInQuery } from '../session/schema.js';
import { shellQuote } from '../session/select-source.js';
import type { Source } from '../session/source.js';
import { parse } from '../syntax/parse.js';
import { splitStatements } from '../syntax/statements.js';
import { parametersOf } from '../syntax/walk.js';

/** One source the page may query. */
export interface PlaySource {
  /** what the page names it by: a profile's name, or `local` */
  readonly name: string;
  readonly label: string;
  readonly kind: 'data' | 'url';
  /** the targets the page may choose; the first is the default */
  readonly targets: readonly TargetChoice[];
  /** how a shell reads the token, for curl lines (`$CKQL_TOKEN`); never the token */
  readonly tokenShell?: string;
  /** the profile's name for a config entry, when the source is a profile */
  readonly profile?: string;
  /** a portal's base URL (a password in it hidden), for the TypeScript explain gives */
  readonly url?: string;
  readonly language?: string;
  /** local data the page's URLs do not reach: explain says how to serve it */
  readonly serveHint?: string;
  /** whether queries go with a token */
  readonly hasToken: boolean;
  /** opens the source (once; later calls get the same) */
  open(): Promise<Source>;
}

export interface PlaygroundSources {
  readonly sources: readonly PlaySource[];
  /** the source the page starts on */
  readonly defaultSource: string;
  readonly version: string;
}

const DEFAULT_PAGE_SIZE = 100;
const MAX_PAGE_SIZE = 1_000;
const MAX_QUERY_CHARS = 100_000;
/** The values of a field completion offers, at most. */
const SAMPLE_VALUES = 100;
/** The most values a facet counts (one request each): enough for a bar chart, polite to a portal. */
const FACET_VALUES = 30;

type Answer = PlayResult;

/** An input the page should never send: a 400 that says which key and what would be right. */
class BadInput extends Error {}

/**
 * The actions over `sources`. Requests on one source run one at a time: the
 * target is the source client's setting, so a query never runs under
 * another's target. `close()` closes every source opened.
 */
export function playgroundActions(config: PlaygroundSources): PlaygroundActions & { close(): Promise<void> } {
  const byName = new Map(config.sources.map((source) => [source.name, source]));
  const opened = new Map<string, Promise<Source>>();
  const queues = new Map<string, Promise<unknown>>();
  const lastTarget = new Map<string, Target | undefined>();

  const sourceNamed = (input: Readonly<Record<string, unknown>>): PlaySource => {
    const name = input.source ?? config.defaultSource;
    const found = typeof name === 'string' ? byName.get(name) : undefined;
    if (found === undefined) {
      throw new BadInput(`source must name one of this server's sources (${[...byName.keys()].join(', ')}), found ${shownInput(name)}`);
    }
    return found;
  };

  const openSource = (source: PlaySource): Promise<Source> => {
    let found = opened.get(source.name);
    if (found === undefined) {
      found = source.open();
      opened.set(source.name, found);
      found.catch(() => opened.delete(source.name));
    }
    return found;
  };

  /** Runs `work` on the source's client under `choice`, after the requests before it on that source. */
  const onSource = <T>(source: PlaySource, choice: TargetChoice, work: (client: DatastoreClient, source: Source) => Promise<T>): Promise<T> => {
    const before = queues.get(source.name) ?? Promise.resolve();
    const run = before.then(async () => {
      const open = await openSource(source);
      const target = choice === 'auto' ? undefined : choice;
      if (!lastTarget.has(source.name) || lastTarget.get(source.name) !== target) {
        await open.setTarget(target);
        lastTarget.set(source.name, target);
      }
      return work(open.client, open);
    });
    const settled = run.catch(() => undefined);
    queues.set(source.name, settled);
    void settled.then(() => {
      if (queues.get(source.name) === settled) queues.delete(source.name);
    });
    return run;
  };

  const targetOf = (source: PlaySource, input: Readonly<Record<string, unknown>>): TargetChoice => {
    const target = input.target ?? source.targets[0];
    if (typeof target !== 'string' || !(source.targets as readonly string[]).includes(target)) {
      throw new BadInput(`target must be one of ${source.targets.join(', ')} for ${source.name}, found ${shownInput(target)}`);
    }
    return target as TargetChoice;
  };

  const sources = async (): Promise<Answer> => {
    const answer: SourcesAnswer = {
      sources: config.sources.map(
        (source): SourceEntry => ({
          name: source.name,
          label: source.label,
          kind: source.kind,
          targets: source.targets,
          defaultTarget: source.targets[0] ?? 'auto',
          hasToken: source.hasToken,
        }),
      ),
      defaultSource: config.defaultSource,
      version: config.version,
    };
    return { status: 200, body: answer };
  };

  const resources = async (input: Readonly<Record<string, unknown>>): Promise<Answer> => {
    const source = sourceNamed(input);
    const open = await openSource(source);
    const listed = await open.listResources({ totals: true });
    const answer: ResourcesAnswer = { resources: listed.map((each) => ({ id: each.id, ...(each.alias === undefined ? {} : { alias: each.alias }), ...(each.total === undefined ? {} : { total: each.total }) })) };
    return { status: 200, body: answer };
  };

  const fields = async (input: Readonly<Record<string, unknown>>, signal: AbortSignal): Promise<Answer> => {
    const source = sourceNamed(input);
    const resource = input.resource;
    if (typeof resource !== 'string' || resource === '') throw new BadInput('resource must be a resource id or alias');
    const result = await onSource(source, targetOf(source, input), (client) => client.search({ resource_id: resource, limit: 0 }, { signal }));
    const answer: FieldsAnswer = {
      resource,
      fields: result.fields.map((field) => ({ id: field.id, type: field.type })),
      ...(typeof result.total === 'number' ? { total: result.total } : {}),
    };
    return { status: 200, body: answer };
  };

  const values = async (input: Readonly<Record<string, unknown>>, signal: AbortSignal): Promise<Answer> => {
    const source = sourceNamed(input);
    const { resource, field } = input;
    if (typeof resource !== 'string' || resource === '') throw new BadInput('resource must be a resource id or alias');
    if (typeof field !== 'string' || field === '') throw new BadInput('field must name a field');
    const result = await onSource(source, targetOf(source, input), (client) =>
      client.search({ resource_id: resource, fields: [field], distinct: true, limit: SAMPLE_VALUES }, { signal }),
    );
    const answer: ValuesAnswer = { values: result.records.map((record) => record[field] ?? null) };
    return { status: 200, body: answer };
  };

  const query = async (input: Readonly<Record<string, unknown>>, signal: AbortSignal): Promise<Answer> => {
    const source = sourceNamed(input);
    const target = targetOf(source, input);
    const bound = boundQuery(input);
    const pageSize = integerInput(input.pageSize, 'pageSize', DEFAULT_PAGE_SIZE, 1, MAX_PAGE_SIZE);
    const page = integerInput(input.page, 'page', 0, 0, Number.MAX_SAFE_INTEGER);
    const window = pageWindow(bound, page, pageSize);
    const started = performance.now();
    const { result, ranAs } = await onSource(source, target, async (client, open) => {
      try {
        const answered = await client.search(window.query, { signal, total: true });
        return { result: answered, ranAs: client.target ?? 'ckan-2.11' };
      } catch (error) {
        // A field or resource the source lacks is told at its place in the text, with its "did you mean", as `ckql query` tells it.
        throw (await refusalInQuery(error, queryText(input), open, paramValues(input), signal)) ?? error;
      }
    });
    const elapsedMs = Math.round(performance.now() - started);
    const records = window.empty ? [] : result.records;
    const answer: QueryAnswer = {
      fields: result.fields.map((field) => ({ id: field.id, type: field.type })),
      records: records as QueryAnswer['records'],
      start: window.start,
      ...(typeof result.total === 'number' ? { size: Math.max(0, Math.min(window.limit, result.total - window.offset)) } : {}),
      elapsedMs,
      target: ranAs,
      ...(bound.order === undefined ? {} : { order: bound.order.keys.map((key) => ({ field: key.field.kind === 'field' ? key.field.name : key.field.kind === 'aggregate' || key.field.kind === 'bucket' ? valueText(key.field) : 'an expression', direction: key.direction })) }),
    };
    return { status: 200, body: answer };
  };

  const explain = async (input: Readonly<Record<string, unknown>>, signal: AbortSignal): Promise<Answer> => {
    const source = sourceNamed(input);
    const target = targetOf(source, input);
    const text = queryText(input);
    const bound = boundQuery(input);
    const explained = await onSource(source, target, (client) => client.explain(bound, { signal }));
    return { status: 200, body: explainAnswer(explained, { source, text, params: paramTexts(input) }) };
  };

  const facet = async (input: Readonly<Record<string, unknown>>, signal: AbortSignal): Promise<Answer> => {
    const source = sourceNamed(input);
    const target = targetOf(source, input);
    const bound = boundQuery(input);
    const field = input.field;
    if (typeof field !== 'string' || field === '') throw new BadInput('field must name a field of the result');
    if (bound.group !== undefined || bound.having !== undefined || bound.select?.items.some((item) => item.value.kind === 'aggregate')) {
      throw new BadInput('the bars of a grouped query are its rows: a facet counts the records of a query without group by');
    }
    const answer = await onSource(source, target, async (client): Promise<FacetAnswer> => {
      // One facet query: the portal's values of the field among the matching records, counted in one reading.
      const span = bound.span;
      const { select: _select, order: _order, ...matching } = withoutPaging(bound);
      const faceted: Query = {
        ...matching,
        facet: { kind: 'facet', span, items: [{ kind: 'facet-item', span, field: { kind: 'field', span, name: field }, top: { kind: 'number', span, value: FACET_VALUES } }] },
        limit: zero(bound),
      };
      const result = await client.search(faceted, { signal, total: true });
      const facet = result.facets?.[field];
      if (facet === undefined) throw new BadInput(`no facet of ${field} came back`);
      const counted: { value: unknown; count: number }[] = [...facet.values];
      if (facet.null_count > 0) counted.push({ value: null, count: facet.null_count });
      counted.sort((a, b) => b.count - a.count);
      return { field, values: counted.slice(0, FACET_VALUES), more: facet.more || counted.length > FACET_VALUES, ...(typeof result.total === 'number' ? { total: result.total } : {}) };
    });
    return { status: 200, body: answer };
  };

  const download = async (input: Readonly<Record<string, unknown>>, signal: AbortSignal): Promise<PlayResult | PlayDownload> => {
    try {
      const source = sourceNamed(input);
      const target = targetOf(source, input);
      const bound = boundQuery(input);
      const chosen = input.format;
      if (typeof chosen !== 'string' || !(DOWNLOAD_FORMATS as readonly string[]).includes(chosen)) {
        throw new BadInput(`format must be one of ${DOWNLOAD_FORMATS.join(', ')}, found ${shownInput(chosen)}`);
      }
      const formatName = chosen as DownloadFormat;
      // The head (fields, and any error) is read before the answer starts, so an error is still a JSON answer.
      let release!: () => void;
      const done = new Promise<void>((resolve) => (release = resolve));
      signal.addEventListener('abort', () => release(), { once: true });
      const head = await new Promise<{ client: DatastoreClient; fields: readonly FieldInfo[] }>((resolve, reject) => {
        onSource(source, target, async (client) => {
          try {
            const first = await client.search({ ...bound, limit: zero(bound), offset: undefined }, { signal });
            resolve({ client, fields: first.fields });
          } catch (error) {
            reject(error);
            return;
          }
          // The source stays this download's until it is written (or abandoned).
          await done;
        }).catch(reject);
      });
      const resource = bound.from.resource.kind === 'string' ? bound.from.resource.value : 'records';
      const extension = { csv: 'csv', json: 'json', ndjson: 'ndjson', markdown: 'md', table: 'txt' }[formatName];
      return {
        filename: `${resource}.${extension}`,
        type: { csv: 'text/csv;charset=utf-8', json: 'application/json;charset=utf-8', ndjson: 'application/x-ndjson;charset=utf-8', markdown: 'text/markdown;charset=utf-8', table: 'text/plain;charset=utf-8' }[formatName],
        chunks: downloadChunks(head.client, bound, head.fields, formatName, signal, release),
      };
    } catch (error) {
      return failure(error);
    }
  };

  const call = async (action: PlayAction, input: Readonly<Record<string, unknown>>, signal: AbortSignal): Promise<PlayResult> => {
    try {
      switch (action) {
        case 'sources':
          return await sources();
        case 'resources':
          return await resources(input);
        case 'fields':
          return await fields(input, signal);
        case 'values':
          return await values(input, signal);
        case 'query':
          return await query(input, signal);
        case 'explain':
          return await explain(input, signal);
        case 'facet':
          return await facet(input, signal);
      }
    } catch (error) {
      return failure(error);
    }
  };

  const close = async (): Promise<void> => {
    const all = await Promise.allSettled(opened.values());
    await Promise.all(all.map((each) => (each.status === 'fulfilled' ? each.value.close() : undefined)));
  };

  return { call, download, close };
}

/** The text of every record in `format`, written as the source sends pages; `release` frees the source at the end. */
async function* downloadChunks(
  client: DatastoreClient,
  query: Query,
  fields: readonly FieldInfo[],
  formatName: DownloadFormat,
  signal: AbortSignal,
  release: () => void,
): AsyncGenerator<string, void, undefined> {
  const pending: string[] = [];
  const writer = createRecordWriter(formatName, fields, (text) => void pending.push(text), { escapeFormulas: true });
  try {
    let count = 0;
    for await (const row of client.searchAll(query, { signal })) {
      await writer.write(row as Row);
      count += 1;
      if (pending.length > 0) yield pending.splice(0).join('');
    }
    await writer.end({ total: count });
    if (pending.length > 0) yield pending.splice(0).join('');
  } finally {
    release();
  }
}

/** The error answer the page shows: a query error with its span, a source's refusal, or a usage error. */
function failure(thrown: unknown): PlayResult {
  // The page has a box per parameter: the library's hint (`compile(query, …)`, `--param`) is no use there.
  const error = withParamHint(thrown, (name) => `type its value in the $${name} box under Parameters, below the editor`);
  const body = (code: string, message: string, extra: { hint?: string | undefined; span?: { start: number; end: number } } = {}): ErrorAnswer => ({
    error: { code, message, ...(extra.hint === undefined ? {} : { hint: extra.hint }), ...(extra.span === undefined ? {} : { span: extra.span }) },
  });
  if (error instanceof BadInput) return { status: 400, body: body('BAD_INPUT', error.message) };
  if (error instanceof QueryError) return { status: 400, body: body(error.code, error.message, { hint: error.hint, span: { start: error.span.start, end: error.span.end } }) };
  if (error instanceof ToolError) return { status: 400, body: body(error.code, error.message, { hint: error.hint }) };
  if (error instanceof DatastoreError) {
    const status = error.code === 'CONNECTION_FAILED' ? 502 : error.code === 'TIMEOUT' ? 504 : error.code === 'ABORTED' ? 499 : 422;
    return { status, body: body(error.code, error.message) };
  }
  throw error;
}

function queryText(input: Readonly<Record<string, unknown>>): string {
  const text = input.query;
  if (typeof text !== 'string') throw new BadInput('query must be the query text');
  if (text.length > MAX_QUERY_CHARS) throw new BadInput(`query is ${text.length} characters long; the playground takes up to ${MAX_QUERY_CHARS}`);
  return text;
}

/** `params` as sent: each parameter's text. */
function paramTexts(input: Readonly<Record<string, unknown>>): Readonly<Record<string, string>> {
  const params = input.params ?? {};
  if (typeof params !== 'object' || params === null || Array.isArray(params)) throw new BadInput('params must map parameter names to their text');
  const texts = Object.create(null) as Record<string, string>;
  for (const [name, value] of Object.entries(params)) {
    if (typeof value !== 'string') throw new BadInput(`params[${shownInput(name)}] must be text (typed as a query literal: 5, true, "text", (1, 2))`);
    texts[name] = value;
  }
  return texts;
}

/**
 * The query parsed and bound. Values are read as `--param` reads them; a
 * parameter left empty stays unbound, so the compiler names it with its span.
 */
function boundQuery(input: Readonly<Record<string, unknown>>): Query {
  const parsed = oneQuery(queryText(input));
  return bind(parsed, paramValues(input, parsed));
}

/**
 * The query of the page's text. Where the text holds more than one, the
 * error at the next says what the page can do (the parser's hint names the
 * command line's ways of running a script, of no use here).
 */
function oneQuery(text: string): Query {
  try {
    return parse(text);
  } catch (error) {
    const second = splitStatements(text)[1];
    if (!(error instanceof QueryError) || second === undefined || error.span.start < second.start) throw error;
    throw withHint(error, 'the playground runs one query at a time: delete the others, or keep them as comments (-- from …)');
  }
}

/** The values of the query's parameters given a value (one left empty is left unbound). */
function paramValues(input: Readonly<Record<string, unknown>>, parsed: Query = oneQuery(queryText(input))): Record<string, ParamValue> {
  const texts = paramTexts(input);
  const values = Object.create(null) as Record<string, ParamValue>;
  for (const parameter of parametersOf(parsed)) {
    const text = Object.hasOwn(texts, parameter.name) ? texts[parameter.name] : undefined;
    if (text !== undefined && text !== '') values[parameter.name] = readParamValue(text);
  }
  return values;
}

/**
 * A value the page sent, as a refusal shows it: a short excerpt of a text or
 * number, or its kind for anything else. The input is anyone's: it may be
 * nested past what JSON.stringify can walk, or a megabyte long.
 */
function shownInput(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value.length > 60 ? `${value.slice(0, 60)}…` : value);
  if (typeof value === 'number' || typeof value === 'boolean' || value === null || value === undefined) return String(value);
  return Array.isArray(value) ? 'a list' : 'an object';
}

function integerInput(value: unknown, name: string, fallback: number, min: number, max: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min || value > max) {
    throw new BadInput(`${name} must be a whole number from ${min} to ${max}, found ${shownInput(value)}`);
  }
  return value;
}

/** A whole number as the AST writes one, spanning `at`. */
function numberNode(value: number, at: Query): { readonly kind: 'number'; readonly span: Query['span']; readonly value: number } {
  return { kind: 'number', span: at.span, value };
}

function zero(at: Query): NonNullable<Query['limit']> {
  return { kind: 'limit', span: at.span, value: numberNode(0, at) };
}

function withoutPaging(query: Query): Query {
  const { limit: _limit, offset: _offset, order: _order, select: _select, ...rest } = query;
  return rest;
}

/**
 * One page of a query's result: the query's own `offset` and `limit`, cut
 * to `pageSize` records from `page * pageSize`.
 * @example pageWindow(parse('from t limit 250 offset 10'), 2, 100)
 * // → the query with limit 50 offset 210; start 200, limit 250, offset 10
 */
export function pageWindow(query: Query, page: number, pageSize: number): { query: Query; start: number; limit: number; offset: number; empty: boolean } {
  const limit = query.limit?.value.kind === 'number' ? query.limit.value.value : Number.POSITIVE_INFINITY;
  const offset = query.offset?.value.kind === 'number' ? query.offset.value.value : 0;
  const start = page * pageSize;
  const count = Math.max(0, Math.min(pageSize, limit - start));
  return {
    query: {
      ...query,
      // An empty page still asks the source (limit 0), so it says the total and the fields.
      limit: { kind: 'limit', span: query.limit?.span ?? query.span, value: numberNode(count, query) },
      offset: { kind: 'offset', span: query.offset?.span ?? query.span, value: numberNode(offset + start, query) },
    },
    start,
    limit,
    offset,
    empty: count === 0,
  };
}

const chosenText = {
  local: 'none: local data is answered whole by its engine in the server, and nothing is sent; choose a target to see what a portal would be asked',
  given: 'chosen in the playground, or set by the source',
  detected: 'asked of the portal: status_show, else the 2.12 probe',
  whole: "CKAN 2.11's request says the whole query; every portal answers it",
  sources: "a join across sources: each side's target is its own source's",
} as const;

/** The explain panel's content: the request, what runs locally, and the query as a config entry and as TypeScript. */
function explainAnswer(
  explained: Explanation,
  context: { readonly source: PlaySource; readonly text: string; readonly params: Readonly<Record<string, string>> },
): ExplainAnswer {
  const { source } = context;
  const planned = explained.plan;
  const target = explained.chosen === 'local' ? 'none' : (planned?.target ?? 'ckan-2.11');
  const tokenShell = source.hasToken ? (source.tokenShell ?? '$CKQL_TOKEN') : undefined;
  let portal: ExplainAnswer['portal'];
  if (explained.chosen === 'local') portal = undefined;
  else if (explained.sql !== undefined) {
    const { sql } = explained;
    const body = JSON.stringify({ sql: sql.text });
    const parts = ['curl -X POST', shellQuote(sql.url), `-H ${shellQuote('content-type: application/json')}`];
    if (tokenShell !== undefined) parts.push(`-H "Authorization: ${tokenShell.replaceAll('"', '\\"')}"`);
    parts.push(`--data-binary ${shellQuote(body)}`);
    portal = { kind: 'sql', url: sql.url, sql: sql.text, getUrl: `${sql.url}?${new URLSearchParams({ sql: sql.text }).toString()}`, curl: parts.join(' ') };
  } else {
    const prepared = explained.request!;
    const base = prepared.url.split('?')[0] ?? prepared.url;
    portal = {
      kind: 'search',
      method: prepared.method,
      url: base,
      json: JSON.stringify(prepared.request, null, 2),
      getUrl: `${base}?${queryStringFor(prepared.request)}`,
      curl: curlCommand(prepared, tokenShell),
    };
  }
  const local: string[] = [];
  // Local data with no target: its engine answers all of it (the operators below say how).
  const steps = explained.chosen === 'local' ? undefined : planned?.local;
  if (steps?.where === true) local.push('keeps the records that pass the conditions the portal cannot test (the residual below), paging through every record the request matches');
  if (steps?.select === true) local.push(planned?.residual?.select?.distinct === true ? 'picks the selected fields and drops repeated rows (distinct)' : 'picks the selected fields');
  if (steps?.limit === true) local.push('applies offset and limit to the records it keeps');
  return {
    target,
    chosen: chosenText[explained.chosen],
    ...(portal === undefined ? {} : { portal }),
    local,
    ...(planned?.residual === undefined ? {} : { residual: format(planned.residual) }),
    ...(explained.steps === undefined ? {} : { steps: explained.steps }),
    ...(source.serveHint === undefined ? {} : { note: source.serveHint }),
    configEntry: configEntry(context.text, context.params, source.profile),
    taggedTemplate: taggedTemplate(context.text, context.params, source),
  };
}

/**
 * The query as a named query of a config file.
 * @example configEntry('from courses where subject = $s', { s: 'math' }, 'portal')
 * // queries:\n  my-query:\n    query: from courses where subject = $s\n    params:\n      s: math\n    profile: portal\n
 */
export function configEntry(text: string, params: Readonly<Record<string, string>>, profile: string | undefined): string {
  const defaults: Record<string, ParamValue> = {};
  for (const [name, value] of Object.entries(params)) if (value !== '') defaults[name] = readParamValue(value);
  const entry: Record<string, unknown> = { query: text.includes('\n') ? `${text.trimEnd()}\n` : text };
  if (Object.keys(defaults).length > 0) entry.params = defaults;
  if (profile !== undefined) entry.profile = profile;
  return yamlStringify({ queries: { 'my-query': entry } }, { lineWidth: 0 });
}

/**
 * The query as TypeScript: each parameter becomes a `${…}` value of the
 * `ckql` tagged template (always data, never syntax).
 */
export function taggedTemplate(text: string, params: Readonly<Record<string, string>>, source: Pick<PlaySource, 'kind' | 'hasToken' | 'url' | 'language' | 'tokenShell'>): string {
  let parsed: Query | undefined;
  try {
    parsed = parse(text);
  } catch {
    parsed = undefined;
  }
  const parameters = parsed === undefined ? [] : parametersOf(parsed);
  const names = [...new Set(parameters.map((p) => p.name))];
  const escape = (piece: string): string => piece.replaceAll('\\', '\\\\').replaceAll('`', '\\`').replaceAll('${', '\\${');
  const access = (name: string): string => (/^[A-Za-z_$][A-Za-z0-9_$]*$/.test(name) ? `params.${name}` : `params[${JSON.stringify(name)}]`);
  let body = '';
  let at = 0;
  for (const parameter of parameters) {
    body += `${escape(text.slice(at, parameter.span.start))}\${${access(parameter.name)}}`;
    at = parameter.span.end;
  }
  body += escape(text.slice(at));
  const lines = ["import { ckql, connect } from 'ckql';", ''];
  if (source.kind === 'url' || source.url !== undefined) {
    const options = [`url: ${JSON.stringify(source.url ?? 'https://data.example.org')}`];
    if (source.language !== undefined) options.push(`language: ${JSON.stringify(source.language)}`);
    // The variable the source's token is read from (a profile's token_env), else CKQL_TOKEN for the reader to set.
    if (source.hasToken) options.push(`token: process.env.${/^\$([A-Za-z_][A-Za-z0-9_]*)$/.exec(source.tokenShell ?? '')?.[1] ?? 'CKQL_TOKEN'}`);
    lines.push(`const client = connect({ ${options.join(', ')} });`);
  } else {
    lines.push("// local data: start `ckql serve DATA` first; it listens on 127.0.0.1:8080", "const client = connect({ url: 'http://127.0.0.1:8080' });");
  }
  if (names.length > 0) {
    const values = names.map((name) => {
      const given = params[name];
      const value = given === undefined || given === '' ? null : readParamValue(given);
      return `  ${/^[A-Za-z_$][A-Za-z0-9_$]*$/.test(name) ? name : JSON.stringify(name)}: ${JSON.stringify(value)},`;
    });
    lines.push('const params = {', ...values, '};');
  }
  lines.push(`const result = await client.search(ckql\`${body}\`);`, 'console.log(result.records);', 'await client.close();');
  return `${lines.join('\n')}\n`;
}

/** The target choices of a source: `auto` first for a portal (detect when needed), then each target. */
export function portalTargets(given: Target | undefined): readonly TargetChoice[] {
  return given === undefined ? ['auto', ...targets] : [given, ...targets.filter((each) => each !== given), 'auto'];
}

export type { PlaygroundActions };

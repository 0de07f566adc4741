/**
 * Joins across sources (docs/aggregates.md): a query whose resources are
 * written `name:resource` reads each resource from its own source's client
 * (a portal's pages, or local data through its in-process API), with that
 * source's target deciding what its request says, and joins them with the
 * executor's hash join (execute/shaped.ts); the aggregate, order and limit
 * follow as for a join of one source's resources. A query whose resources
 * are all of one source goes to that source whole.
 */
import { clientWith } from './wrap.js';
import { querySources, unionMembers, type From, type Query } from '../ast.js';
import { bind } from '../compile/bind.js';
import type { Params } from '../compile/bind.js';
import { planQuery, splitSource, unknownSourceHint } from '../compile/plan.js';
import type { Plan, Target } from '../compile/plan.js';
import type { Row, SearchRequest } from '../datastore/types.js';
import { DatastoreError, queryError } from '../errors.js';
import { sourcesTree } from '../execute/build.js';
import type { SidePortal } from '../execute/build.js';
import { countKey } from '../execute/shaped.js';
import { describeTree, execute, readAll } from '../execute/run.js';
import { parse } from '../syntax/parse.js';
import { planResult, recordStream } from './results.js';
import type { DatastoreClient, Explanation, SearchInput, SourceDirectory, StreamOptions } from './types.js';

/** Options of `withSources`. */
export interface WithSourcesOptions {
  /** what explain calls the client's own source (a resource written without a source's name); default `this source` */
  readonly name?: string;
}

/** Where a query runs: one source whole, or each resource on its own source. */
type Route =
  | { readonly kind: 'one'; readonly client: DatastoreClient; readonly query: Query }
  | {
    readonly kind: 'across';
    readonly query: Query;
    readonly sides: readonly { readonly name: string; readonly client: DatastoreClient }[];
    /** each resource of a union by its name as written (`portal:crime_2023`): its source's name and client */
    readonly members: ReadonlyMap<string, { readonly name: string; readonly client: DatastoreClient }>;
  };

/**
 * A client that also answers queries naming other sources (`name:resource`);
 * a resource written without a name is `client`'s. Every other query and
 * request goes to `client` as it is. The other sources stay the caller's:
 * `close()` closes `client` only.
 *
 * @example
 * const client = withSources(connect({ url: 'https://data.example.org' }), { local: localClient });
 * await client.search('from enrolments e join local:courses c on e.course = c.code group by c.subject select c.subject, count(*)');
 * // enrolments read from the portal (its where pushed down, fields cut to e.course),
 * // courses from local data; joined, grouped and counted here
 */
export function withSources(client: DatastoreClient, sources: SourceDirectory, options: WithSourcesOptions = {}): DatastoreClient {
  const opened = new Map<string, Promise<DatastoreClient>>();
  const open = (name: string): Promise<DatastoreClient> => {
    let found = opened.get(name);
    if (found === undefined) {
      const entry = sources[name]!;
      found = typeof entry === 'function' ? entry() : Promise.resolve(entry);
      opened.set(name, found);
      found.catch(() => opened.delete(name));
    }
    return found;
  };
  return wrap(client, sources, open, options.name ?? 'this source');
}

function wrap(client: DatastoreClient, sources: SourceDirectory, open: (name: string) => Promise<DatastoreClient>, home: string): DatastoreClient {
  const route = async (input: SearchInput, params: Params | undefined): Promise<Route | undefined> => {
    if (typeof input === 'string' ? !input.includes(':') : (input as { kind?: unknown }).kind !== 'query') return undefined;
    const parsed = typeof input === 'string' ? parse(input) : (input as Query);
    const query = params === undefined ? parsed : bind(parsed, params);
    const froms = querySources(query);
    // Each resource's source, a union's resources each (docs/expressions.md, Unions).
    const named = froms.map((from) => unionMembers(from).map((member) => (member.kind === 'string' ? splitSource(member.value).source : undefined)));
    if (named.flat().every((name) => name === undefined)) return undefined;
    const clientOf = (name: string | undefined, from: From): Promise<DatastoreClient> => {
      if (name === undefined) return Promise.resolve(client);
      if (!Object.hasOwn(sources, name)) {
        const current = Object.hasOwn(sources, home) ? home : undefined;
        throw unknownSource(name, from, Object.keys(sources), current, typeof input === 'string' ? input : undefined);
      }
      return open(name);
    };
    const clients = await Promise.all(froms.map((from, i) => Promise.all(named[i]!.map((name, m) => clientOf(name, { ...from, resource: unionMembers(from)[m]! })))));
    const all = clients.flat();
    if (all.every((each) => each === all[0])) return { kind: 'one', client: all[0]!, query: withoutSources(query) };
    const members = new Map<string, { readonly name: string; readonly client: DatastoreClient }>();
    froms.forEach((from, i) => {
      if (from.union === undefined) return;
      unionMembers(from).forEach((member, m) => {
        if (member.kind === 'string') members.set(member.value, { name: named[i]![m] ?? home, client: clients[i]![m]! });
      });
    });
    return { kind: 'across', query, sides: froms.map((_, i) => ({ name: named[i]![0] ?? home, client: clients[i]![0]! })), members };
  };

  /** The target a source's requests are written for: a resource read with datastore_search is read as 2.11 reads it on an sql portal (every CKAN answers that). */
  const readingTarget = async (name: string, each: DatastoreClient, resource: string, signal: AbortSignal | undefined): Promise<Exclude<Target, 'sql'>> => {
    const target = each.target ?? (await each.detectTarget(resource, signal).catch((error: unknown) => {
      throw ofSource(error, name, each);
    }));
    return target === 'ckan-2.12' ? 'ckan-2.12' : 'ckan-2.11';
  };

  /** The plan of a join across sources: each side's request written for its own source's target. */
  const planAcross = async (across: Extract<Route, { kind: 'across' }>, signal: AbortSignal | undefined): Promise<{ plan: Plan; sides: SidePortal[]; members: Map<string, SidePortal> }> => {
    const froms = querySources(across.query);
    const targets = await Promise.all(
      across.sides.map((side, i) => readingTarget(side.name, side.client, froms[i]!.resource.kind === 'string' ? splitSource(froms[i]!.resource.value).resource : '', signal)),
    );
    const plan = planQuery(across.query, { target: targets[0]!, sideTargets: targets, maxScan: client.maxScan, maxJoinRows: client.maxJoinRows });
    const sides = across.sides.map((side, i): SidePortal => ({ name: side.name, target: targets[i]!, origin: side.client.url, send: sideSend(side.name, side.client) }));
    const members = new Map<string, SidePortal>();
    for (const [written, member] of across.members) {
      const target = await readingTarget(member.name, member.client, splitSource(written).resource, signal);
      members.set(written, { name: member.name, target, origin: member.client.url, send: sideSend(member.name, member.client) });
    }
    return { plan, sides, members };
  };

  const stream: DatastoreClient['stream'] = async (input, streamOptions: StreamOptions = {}) => {
    const found = await route(input, streamOptions.params);
    if (found === undefined) return client.stream(input, streamOptions);
    const { params: _params, ...rest } = streamOptions;
    if (found.kind === 'one') return found.client.stream(found.query, rest);
    const { plan, sides, members } = await planAcross(found, streamOptions.signal);
    const pageSize = Math.max(1, Math.floor(streamOptions.pageSize ?? PAGE_SIZE));
    const tree = sourcesTree(plan, found.query, sides, { members, all: streamOptions.all === true, total: streamOptions.total === true, pageSize });
    return recordStream(await execute(tree, { signal: streamOptions.signal, ...(streamOptions.onPage === undefined ? {} : { onPage: streamOptions.onPage }) }));
  };

  return clientWith(client, () => ({
    search: async (input, searchOptions = {}) => {
      const found = await route(input, searchOptions.params);
      if (found === undefined) return client.search(input, searchOptions);
      const { params: _params, ...rest } = searchOptions;
      if (found.kind === 'one') return found.client.search(found.query, rest);
      const { plan, sides, members } = await planAcross(found, searchOptions.signal);
      const run = await execute(sourcesTree(plan, found.query, sides, { members, all: false, total: searchOptions.total === true, pageSize: PAGE_SIZE }), { signal: searchOptions.signal });
      return planResult(plan, found.query, run, await readAll(run));
    },
    searchAll: async function* (input, allOptions = {}): AsyncGenerator<Row, void, undefined> {
      yield* (await stream(input, { ...allOptions, all: true })).records;
    },
    stream,
    explain: async (input, explainOptions = {}): Promise<Explanation> => {
      const found = await route(input, explainOptions.params);
      if (found === undefined) return client.explain(input, explainOptions);
      const { params: _params, ...rest } = explainOptions;
      if (found.kind === 'one') return found.client.explain(found.query, rest);
      const { plan, sides, members } = await planAcross(found, explainOptions.signal);
      // Each side's count (a limit: 0 request to its own source), so the steps can say how many pages it takes.
      const counts = new Map<string, number>();
      for (const reading of [plan.shaped, plan.facets]) {
        for (const [i, side] of (reading?.sides ?? []).entries()) {
          try {
            const answer = await sides[i]!.send({ ...side.request, limit: 0 }, explainOptions.signal);
            if (answer.total !== undefined) counts.set(countKey(sides[i]!.name, side.request), answer.total);
          } catch {
            // explain still shows the plan; the run will report the source's error
          }
        }
      }
      const steps = describeTree(sourcesTree(plan, found.query, sides, { members, all: false, total: false, pageSize: PAGE_SIZE, counts }));
      const first = plan.shaped ?? plan.facets!;
      const described = first.sides.map((side, i) => ({
        source: sides[i]!.name,
        target: sides[i]!.target,
        request: found.sides[i]!.client.prepare(side.request),
      }));
      return { plan, chosen: 'sources', steps, sides: described, request: described[0]!.request };
    },
    withLanguage: (language) => wrap(client.withLanguage(language), sources, open, home),
  }));
}

/** Records per request of a side that is not read whole (the client's default page). */
const PAGE_SIZE = 1_000;

/**
 * A side's requests, sent as requests to its source's client; an error of
 * the source says which source it is (and, refused access, whether a token
 * was sent there).
 */
function sideSend(name: string, client: DatastoreClient): SidePortal['send'] {
  return async (request: SearchRequest, signal: AbortSignal | undefined) => {
    try {
      return await client.search(request, signal === undefined ? {} : { signal });
    } catch (error) {
      throw ofSource(error, name, client);
    }
  };
}

/** A source's error, saying which source it is (and, refused access, whether a token was sent there); the code kept. */
function ofSource(error: unknown, name: string, client: DatastoreClient): unknown {
  if (!(error instanceof DatastoreError) || error.code === 'ABORTED') return error;
  const token = error.code === 'FORBIDDEN' && !client.hasToken ? ' (no token is configured for this source: give its profile token_env, token_file or token_cmd)' : '';
  return new DatastoreError(error.code, `source ${JSON.stringify(name)} (${client.url}): ${error.message}${token}`, {
    ...(error.status === undefined ? {} : { status: error.status }),
    ...(error.body === undefined ? {} : { body: error.body }),
    cause: error,
  });
}

function unknownSource(name: string, from: From, known: readonly string[], current: string | undefined, text: string | undefined) {
  const span = from.resource.span;
  const written = from.resource.kind === 'string' ? from.resource.value : name;
  // A bareword's span holds the name as written: the error points at `name:`; a quoted resource, at all of it.
  const bare = from.resource.kind === 'string' && span.end - span.start === from.resource.value.length;
  return queryError('UNKNOWN_SOURCE', bare ? { start: span.start, end: span.start + name.length + 1 } : span, [name], {
    found: `${name}:`,
    hint: unknownSourceHint(written, known, current),
    ...(text === undefined ? {} : { source: text }),
  });
}

/**
 * The query with each resource's source name taken off (all of them are of
 * one source). In a join, a resource without an alias keeps the name as
 * written as its alias, so fields qualified by it (`local:courses.code`)
 * still name it.
 */
function withoutSources(query: Query): Query {
  const joined = query.joins !== undefined;
  const strip = (from: From): From => {
    if (from.resource.kind !== 'string') return from;
    const { source, resource } = splitSource(from.resource.value);
    if (source === undefined) return from;
    const alias = from.alias ?? (joined || from.union !== undefined ? { kind: 'name' as const, span: from.resource.span, name: from.resource.value } : undefined);
    const union = from.union?.map((member) => (member.kind === 'string' ? { ...member, value: splitSource(member.value).resource } : member));
    return { ...from, resource: { ...from.resource, value: resource }, ...(union === undefined ? {} : { union }), ...(alias === undefined ? {} : { alias }) };
  };
  return { ...query, from: strip(query.from), ...(query.joins === undefined ? {} : { joins: query.joins.map((join) => ({ ...join, source: strip(join.source) })) }) };
}

/**
 * Resources named as a person reads them on a portal: the dataset's name,
 * a `/`, and the resource's name in it, `from "air-quality/measurements 2023"`
 * (grammar/README.md, Resources). A dataset name is CKAN's (2–100 of
 * `a-z 0-9 _ -`) and holds no `/`, so the first `/` splits the two. Such a
 * name is resolved once per client with `package_show` (or from a
 * `package_search` already read) and sent as the resource's id; a text
 * that is not of this form, or whose dataset the portal does not know, is
 * sent as it is (an alias may hold a `/`).
 */
import { clientWith } from './wrap.js';
import { querySources, unionMembers } from '../ast.js';
import type { From, Query } from '../ast.js';
import { bind } from '../compile/bind.js';
import type { Params } from '../compile/bind.js';
import type { SearchRequest } from '../datastore/types.js';
import { DatastoreError } from '../errors.js';
import { parse } from '../syntax/parse.js';
import { showDataset } from './discovery.js';
import type { DatasetSummary } from './discovery.js';
import type { DatastoreClient, SearchInput } from './types.js';

const DATASET_NAME = /^[a-z0-9_-]{2,100}$/;

/**
 * The dataset and resource parts of a `dataset/resource` name, or undefined
 * for any other text.
 * @example splitResourceName('air-quality/measurements 2023') // → { dataset: 'air-quality', resource: 'measurements 2023' }
 * @example splitResourceName('courses') // → undefined
 */
export function splitResourceName(text: string): { dataset: string; resource: string } | undefined {
  const slash = text.indexOf('/');
  if (slash < 0) return undefined;
  const dataset = text.slice(0, slash);
  const resource = text.slice(slash + 1);
  return DATASET_NAME.test(dataset) && resource.trim() !== '' ? { dataset, resource } : undefined;
}

/**
 * The name a resource of a dataset is written with.
 * @example resourceName('air-quality', 'measurements 2023') // → 'air-quality/measurements 2023'
 */
export function resourceName(dataset: string, resource: string): string {
  return `${dataset}/${resource}`;
}

/** A client's names of dataset resources: resolved ones, and those learned from searches. */
export class ResourceNames {
  readonly #resolved = new Map<string, Promise<string | undefined>>();
  readonly #known = new Map<string, string>();

  constructor(private readonly client: DatastoreClient) {}

  /** Notes the resources of datasets a search returned (each `dataset/resource` → its id), for completion and resolution. */
  remember(datasets: readonly DatasetSummary[]): void {
    for (const dataset of datasets) {
      const counts = new Map<string, number>();
      for (const resource of dataset.resources) counts.set(resource.name, (counts.get(resource.name) ?? 0) + 1);
      for (const resource of dataset.resources) {
        // A name two resources share says no one resource: it is resolved (and refused) when used.
        if (resource.datastoreActive && counts.get(resource.name) === 1) this.#known.set(resourceName(dataset.name, resource.name), resource.id);
      }
    }
  }

  /** Every `dataset/resource` name learned so far (datastore resources only), for completion. */
  names(): string[] {
    return [...this.#known.keys()];
  }

  /**
   * The id a `dataset/resource` name stands for; undefined for a text that is
   * not such a name or whose dataset the portal does not know.
   */
  resolve(text: string, signal?: AbortSignal): Promise<string | undefined> {
    const known = this.#known.get(text);
    if (known !== undefined) return Promise.resolve(known);
    const parts = splitResourceName(text);
    if (parts === undefined) return Promise.resolve(undefined);
    let resolved = this.#resolved.get(text);
    if (resolved === undefined) {
      resolved = this.#lookUp(parts.dataset, parts.resource, signal);
      this.#resolved.set(text, resolved);
      // A failure (the network, a cancel) is asked again next time.
      resolved.catch(() => this.#resolved.delete(text));
    }
    return resolved;
  }

  /**
   * `dataset/*` (docs/expressions.md, Unions): the dataset's DataStore
   * resources in its order, each with its id and its name as written
   * (`dataset/resource`); undefined for any other text.
   */
  async expand(text: string, signal?: AbortSignal): Promise<{ readonly id: string; readonly written: string }[] | undefined> {
    const parts = splitResourceName(text);
    if (parts?.resource !== '*') return undefined;
    const dataset = await this.#dataset(parts.dataset, '*', signal);
    if (dataset === undefined) throw new DatastoreError('NOT_FOUND', `${JSON.stringify(text)}: the portal has no dataset ${JSON.stringify(parts.dataset)}`);
    this.remember([dataset]);
    const resources = dataset.resources.filter((resource) => resource.datastoreActive);
    if (resources.length === 0) {
      throw new DatastoreError('NOT_FOUND', `${JSON.stringify(text)}: the dataset ${JSON.stringify(parts.dataset)} has no resource in the datastore (its files can be downloaded, not searched)`);
    }
    return resources.map((resource) => ({ id: resource.id, written: resourceName(parts.dataset, resource.name) }));
  }

  /** The dataset by `package_show`; undefined when the portal does not know it (or has no catalogue). */
  async #dataset(datasetName: string, wanted: string, signal: AbortSignal | undefined): Promise<DatasetSummary | undefined> {
    try {
      return await showDataset(this.client, datasetName, signal);
    } catch (error) {
      // No such dataset (or no catalogue at all): the text may be an alias with a `/` in it.
      if (error instanceof DatastoreError && ['NOT_FOUND', 'BAD_REQUEST'].includes(error.code)) return undefined;
      // CKAN refuses package_show of a private dataset (403); sent as it is, the name would only be "not found".
      if (error instanceof DatastoreError && error.code === 'FORBIDDEN') {
        throw new DatastoreError('FORBIDDEN', `${JSON.stringify(resourceName(datasetName, wanted))}: the dataset ${JSON.stringify(datasetName)} is not open to this request: ${error.message}`, {
          ...(error.status === undefined ? {} : { status: error.status }),
          ...(error.body === undefined ? {} : { body: error.body }),
        });
      }
      throw error;
    }
  }

  async #lookUp(datasetName: string, wanted: string, signal: AbortSignal | undefined): Promise<string | undefined> {
    const dataset = await this.#dataset(datasetName, wanted, signal);
    if (dataset === undefined) return undefined;
    this.remember([dataset]);
    const exact = dataset.resources.filter((resource) => resource.name === wanted);
    const matches = exact.length > 0 ? exact : dataset.resources.filter((resource) => resource.name.toLowerCase() === wanted.toLowerCase());
    const listed = dataset.resources.map((resource) => `${JSON.stringify(resource.name)}${resource.datastoreActive ? '' : ' (not in the datastore)'}`).join(', ');
    const named = JSON.stringify(resourceName(datasetName, wanted));
    if (matches.length === 0) {
      throw new DatastoreError('NOT_FOUND', `the dataset ${JSON.stringify(datasetName)} has no resource named ${JSON.stringify(wanted)}; its resources: ${listed || 'none'}`);
    }
    if (matches.length > 1) {
      throw new DatastoreError('NOT_FOUND', `${named} names ${matches.length} resources of the dataset; use one of their ids: ${matches.map((resource) => resource.id).join(', ')}`);
    }
    const [match] = matches as [DatasetSummary['resources'][number]];
    if (!match.datastoreActive) {
      throw new DatastoreError('NOT_FOUND', `${named} is not in the portal's datastore (datastore_active is not set): its file can be downloaded, not searched; datastore resources of the dataset: ${dataset.resources.filter((r) => r.datastoreActive).map((r) => JSON.stringify(r.name)).join(', ') || 'none'}`);
    }
    return match.id;
  }
}

/**
 * A client that sends `dataset/resource` names as the ids they stand for
 * (queries, query texts and requests alike); everything else as `client` does.
 * @example
 * const client = withResourceNames(connect({ url: 'https://data.example.org' }));
 * await client.search('from "air-quality/measurements 2023" where pm10 > 40 limit 5');
 * // package_show {"id":"air-quality"} once, then datastore_search {"resource_id":"<the resource's id>", …}
 */
export function withResourceNames(client: DatastoreClient, names: ResourceNames = new ResourceNames(client)): DatastoreClient {
  const resolved = async <T extends { readonly params?: Params; readonly signal?: AbortSignal }>(
    input: SearchInput,
    options: T | undefined,
  ): Promise<[SearchInput, T | undefined]> => {
    const signal = options?.signal;
    if (typeof input === 'object' && 'resource_id' in input) {
      const id = await names.resolve(input.resource_id, signal);
      return [id === undefined ? input : ({ ...input, resource_id: id } as SearchRequest), options];
    }
    const slashed = (value: unknown): boolean => typeof value === 'string' && value.includes('/');
    if (typeof input === 'string' && !input.includes('/') && !Object.values(options?.params ?? {}).some(slashed)) return [input, options];
    let query: Query;
    try {
      query = typeof input === 'string' ? parse(input) : input;
    } catch {
      return [input, options];
    }
    // `from`'s resource and each join's: any of them may be a `dataset/resource` name.
    const params = options?.params;
    const textOf = (resource: From['resource']): string | undefined =>
      resource.kind === 'string' ? resource.value : typeof params?.[resource.name] === 'string' ? (params[resource.name] as string) : undefined;
    /** Each resource a source reads, with the id it is sent as (undefined: as written) and, in a union, its name as written. */
    type Member = { readonly resource: From['resource']; readonly id?: string | undefined; readonly written?: string };
    const members: Member[][] = [];
    let changed = false;
    // a union's resources each, and `dataset/*` as every DataStore resource of the dataset (docs/expressions.md, Unions)
    for (const source of querySources(query)) {
      const each: Member[] = [];
      for (const resource of unionMembers(source)) {
        const text = textOf(resource);
        const expanded = text === undefined ? undefined : await names.expand(text, signal);
        if (expanded !== undefined) each.push(...expanded.map((found) => ({ resource, id: found.id, written: found.written })));
        else each.push({ resource, id: text?.includes('/') === true ? await names.resolve(text, signal) : undefined });
      }
      changed ||= each.some((member) => member.id !== undefined);
      members.push(each);
    }
    if (!changed) return [input, options];
    // The parameters are bound here, so the resources can be replaced by their ids.
    let bound: Query;
    try {
      bound = params === undefined ? query : bind(query, params);
    } catch {
      return [input, options];
    }
    const withId = (source: From, each: readonly Member[]): From => {
      if (each.every((member) => member.id === undefined)) return source;
      const first = source.resource;
      const expanded = each.some((member) => member.written !== undefined);
      if (source.union === undefined && !expanded) return { ...source, resource: { kind: 'string', span: first.span, value: each[0]!.id! } };
      // A union keeps each name as written for `_resource`, and the name its fields are qualified by.
      const written = (member: Member): From['resource'] => {
        const text = member.written ?? textOf(member.resource);
        if (member.id === undefined) return member.resource;
        return { kind: 'string', span: member.resource.span, value: member.id, ...(text === undefined ? {} : { written: text }) };
      };
      const named = textOf(first);
      const alias = source.alias ?? (named === undefined ? undefined : { kind: 'name' as const, span: first.span, name: named });
      const [head, ...tail] = each.map(written);
      return { ...source, resource: head!, union: tail, ...(alias === undefined ? {} : { alias }) };
    };
    const joins = bound.joins?.map((join, i) => ({ ...join, source: withId(join.source, members[i + 1]!) }));
    let rest: T | undefined;
    if (options !== undefined) {
      const { params: _bound, ...others } = options;
      rest = others as T;
    }
    return [{ ...bound, from: withId(bound.from, members[0]!), ...(joins === undefined ? {} : { joins }) }, rest];
  };
  const told = async (error: unknown, signal: AbortSignal | undefined): Promise<never> => {
    throw await notInDatastore(client, error, signal);
  };
  const wrapped = clientWith(client, () => ({
    detectTarget: async (resourceId, signal) => client.detectTarget((await names.resolve(resourceId, signal)) ?? resourceId, signal),
    search: async (input, options) => {
      const [next, rest] = await resolved(input, options);
      return client.search(next, rest).catch((error: unknown) => told(error, options?.signal));
    },
    searchAll: async function* (input, options) {
      const [next, rest] = await resolved(input, options);
      try {
        yield* client.searchAll(next, rest);
      } catch (error) {
        await told(error, options?.signal);
      }
    },
    stream: async (input, options) => {
      const [next, rest] = await resolved(input, options);
      return client.stream(next, rest).catch((error: unknown) => told(error, options?.signal));
    },
    // (`prepare` cannot wait: it shows the id of a name resolved already, else the name.)
    explain: async (input, options) => {
      const [next, rest] = await resolved(input, options);
      return client.explain(next, rest);
    },
    // A client for another language comes from `connect`, which gives it names of its own.
    withLanguage: (language) => client.withLanguage(language),
  }));
  return wrapped;
}

/**
 * CKAN's Not Found of a resource that is in the catalogue without a
 * DataStore table (`datastore_active` unset: a file that was never loaded,
 * or failed to load), told as such after one `resource_show`; any other
 * error as it came.
 * @example
 * await notInDatastore(client, new DatastoreError('NOT_FOUND', 'Not found: Resource "5f1e…" was not found.', { body }))
 * // → DatastoreError NOT_FOUND 'the resource 5f1e… ("report.pdf") is in the portal\'s catalogue but not in its DataStore …'
 */
async function notInDatastore(client: DatastoreClient, error: unknown, signal: AbortSignal | undefined): Promise<unknown> {
  // Only the portal's own answer (it has a body); ckql's resolving of a name says more already.
  if (!(error instanceof DatastoreError) || error.code !== 'NOT_FOUND' || error.body === undefined) return error;
  const id = /Resource "(.+)" was not found/.exec(error.message)?.[1];
  if (id === undefined) return error;
  let resource: unknown;
  try {
    resource = await client.action('resource_show', { id }, signal === undefined ? {} : { signal });
  } catch {
    return error;
  }
  if (typeof resource !== 'object' || resource === null) return error;
  const { name, url, datastore_active: active } = resource as { name?: unknown; url?: unknown; datastore_active?: unknown };
  if (active === true || active === 'True' || active === 'true') return error;
  const named = typeof name === 'string' && name !== '' ? ` (${JSON.stringify(name)})` : '';
  const file = typeof url === 'string' && url !== '' ? `; its file: ${url}` : '';
  return new DatastoreError(
    'NOT_FOUND',
    `the resource ${id}${named} is in the portal's catalogue but not in its DataStore (datastore_active is not set): it can be downloaded, not queried${file}`,
    { status: error.status ?? 404 },
  );
}

/**
 * The other sources a query may name, as `name:resource` (docs/aggregates.md,
 * joins across sources): every profile of the config file, opened when a
 * query first names it, and `local`, the session's local data (`--data`, a
 * data profile, the demo data). The client that resolves them is
 * `withSources` (client/sources.ts).
 */
import { splitSource } from '../compile/plan.js';
import { queryResources } from '../ast.js';
import type { Query } from '../ast.js';
import type { Config, Profile } from '../config/types.js';
import { withSources } from '../client/sources.js';
import type { DatastoreClient, SourceDirectory } from '../client/types.js';
import { selectSource } from './select-source.js';
import type { Source, SourceSpec } from './source.js';

/** The name `local` stands for: the session's local data. */
export const LOCAL_SOURCE = 'local';

export interface OtherSourcesOptions {
  readonly config: Config;
  /** the session's source: a resource written without a name is its, and so is `local:` when it is local data */
  readonly current: Source;
  /** the profile the current source was opened from (a query naming it is sent there, not to a second copy) */
  readonly profile?: string | undefined;
  /** opens a profile's source (local data: lazily, so only the files named are read) */
  readonly open: (spec: SourceSpec) => Promise<Source>;
  readonly env?: NodeJS.ProcessEnv;
  readonly cwd?: string;
}

/** A session's source that also answers queries naming other sources; `close` closes the sources it opened, not the current one. */
export interface OtherSources {
  readonly client: DatastoreClient;
  /** the names a query may write before `:`, in the config's order (`local` last, when the session has local data) */
  readonly names: readonly string[];
  /** the current source's own name among `names` (`local`, or its profile), if it has one */
  readonly current: string | undefined;
  /** the source `name` stands for, opened when first asked (by a query or by this); the same one each time */
  source(name: string): Promise<Source>;
  close(): Promise<void>;
}

/**
 * The current source's client, answering queries that name other sources
 * too. A profile's token is read when a query first names the profile (an
 * unset `token_env` is `TOKEN_UNAVAILABLE` then, naming the profile); it is
 * never printed.
 * @example
 * const others = otherSources({ config, current: source, open: (spec) => openSource(spec, { lazy: true }) });
 * await others.client.search('from portal:enrolments e join local:courses c on e.course = c.code limit 5');
 * await others.close();
 */
export function otherSources(options: OtherSourcesOptions): OtherSources {
  const opened = new Map<string, Promise<Source>>();
  const local = options.current.spec.kind === 'data';
  const current = local ? LOCAL_SOURCE : options.profile;
  const names = [...options.config.profiles.keys()];
  // `local` is the session's local data; with none, a profile named `local` if there is one.
  if (local && !names.includes(LOCAL_SOURCE)) names.push(LOCAL_SOURCE);
  const source = (name: string): Promise<Source> => {
    if (name === current) return Promise.resolve(options.current);
    if (!options.config.profiles.has(name)) return Promise.reject(new Error(`no source named ${JSON.stringify(name)}`));
    let found = opened.get(name);
    if (found === undefined) {
      found = selectSource({ profile: name }, {
        config: async () => options.config,
        ...(options.env === undefined ? {} : { env: options.env }),
        ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
      }).then(({ spec }) => options.open(spec));
      opened.set(name, found);
      // A source that could not be opened (an unset token variable) is tried again when next named.
      found.catch(() => opened.delete(name));
    }
    return found;
  };
  const directory: Record<string, DatastoreClient | (() => Promise<DatastoreClient>)> = {};
  for (const name of names) directory[name] = name === current ? options.current.client : async () => (await source(name)).client;
  return {
    client: withSources(options.current.client, directory as SourceDirectory, current === undefined ? {} : { name: current }),
    names,
    current,
    source,
    close: async () => {
      const sources = await Promise.allSettled(opened.values());
      await Promise.all(sources.map((each) => (each.status === 'fulfilled' ? each.value.close().catch(() => undefined) : undefined)));
    },
  };
}

/**
 * Whether a query names a resource of another source (`name:resource`).
 * @example namesSources(parse('from enrolments e join portal:courses c on e.course = c.code')) // true
 */
export function namesSources(query: Query): boolean {
  return queryResources(query).some((resource) => splitSource(resource).source !== undefined);
}

/**
 * The resources of a query that local data must read: those written
 * without a source's name, or with `local:` (without it); a resource of
 * another source is read there.
 * @example localResources(['enrolments', 'local:courses', 'portal:grades']) // → ['enrolments', 'courses']
 */
export function localResources(resources: readonly string[]): string[] {
  return resources.flatMap((written) => {
    const { source, resource } = splitSource(written);
    return source === undefined ? [written] : source === LOCAL_SOURCE ? [resource] : [];
  });
}

/**
 * What a profile reads, for completion's note beside its `name:`: a portal's
 * address without any user, password, query or fragment (a token is never
 * shown), or `local data`.
 * @example profileNote({ kind: 'url', name: 'portal', url: 'https://data.example.org/?key=x', resources: [] }) // → 'https://data.example.org/'
 */
export function profileNote(profile: Profile): string {
  if (profile.kind === 'data') return 'local data';
  try {
    const url = new URL(profile.url);
    return `${url.protocol}//${url.host}${url.pathname}`;
  } catch {
    return 'a portal';
  }
}

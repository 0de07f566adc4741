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
import type { Config } from '../config/types.js';
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
  const opened: Promise<Source>[] = [];
  const directory: Record<string, DatastoreClient | (() => Promise<DatastoreClient>)> = {};
  for (const name of options.config.profiles.keys()) {
    directory[name] =
      name === options.profile
        ? options.current.client
        : async () => {
            const source = selectSource({ profile: name }, {
              config: async () => options.config,
              ...(options.env === undefined ? {} : { env: options.env }),
              ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
            }).then(({ spec }) => options.open(spec));
            opened.push(source);
            return (await source).client;
          };
  }
  const local = options.current.spec.kind === 'data';
  // `local` is the session's local data; with none, a profile named `local` if there is one.
  if (local) directory[LOCAL_SOURCE] = options.current.client;
  const name = local ? LOCAL_SOURCE : options.profile;
  return {
    client: withSources(options.current.client, directory as SourceDirectory, name === undefined ? {} : { name }),
    close: async () => {
      const sources = await Promise.allSettled(opened);
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

/**
 * The sources a playground offers: what `ckql serve` serves (queried through
 * its own API in the process), and for `ckql ui` the chosen source and every
 * profile of the config file (each opened, and its token read, when the page
 * first uses it).
 */
import { connect } from '../client/connect.js';
import type { Target } from '../compile/plan.js';
import type { CkanVersion } from '../datastore/types.js';
import type { Engine } from '../engine/types.js';
import { openApi, wholeText } from '../server/api.js';
import type { TargetChoice } from '../server/play-protocol.js';
import type { Config } from '../config/types.js';
import { selectSource, tokenShellOf } from '../session/select-source.js';
import type { SelectedSource } from '../session/select-source.js';
import { hidePassword, openSource, relativeLabel } from '../session/source.js';
import type { Source } from '../session/source.js';
import { portalTargets } from './playground.js';
import type { PlaySource } from './playground.js';

/**
 * The data `ckql serve` serves, as the playground's `local` source: its
 * client sends each request to the server's API in this process, and shows
 * the server's address in the requests explain gives (they can be sent there
 * as they are). Its targets are the CKAN version served, and `sql` when the
 * engine runs SQL (the server answers datastore_search_sql).
 */
export function servedSource(engine: Engine, options: { readonly url: () => string; readonly ckan: CkanVersion; readonly label: string; readonly maxJoinRows?: number }): PlaySource {
  const served: Target = options.ckan === '2.12' ? 'ckan-2.12' : 'ckan-2.11';
  const choices: TargetChoice[] = [served];
  if (engine.searchSql !== undefined) choices.push('sql');
  return {
    name: 'local',
    label: options.label,
    kind: 'data',
    targets: choices,
    hasToken: false,
    get url() {
      return options.url();
    },
    open: async (): Promise<Source> => {
      const url = options.url();
      const api = await openApi({ engine, ckan: options.ckan }, url);
      const client = connect({
        url,
        target: served,
        ...(options.maxJoinRows === undefined ? {} : { maxJoinRows: options.maxJoinRows }),
        inProcess: async (wire, signal) => {
          const address = new URL(wire.url);
          const answer = await api.answer(
            {
              method: wire.method,
              url: address.pathname + address.search,
              authorization: undefined,
              contentType: wire.headers['content-type'],
              ...(wire.body === undefined ? {} : { body: wire.body }),
            },
            signal,
          );
          return { status: answer.status, text: wholeText(answer), retryAfter: undefined, location: undefined };
        },
      });
      return {
        label: options.label,
        spec: { kind: 'data', paths: [] },
        client,
        listResources: async () =>
          (await engine.resources()).map((each) => ({
            id: each.id,
            ...(each.aliases[0] === undefined ? {} : { alias: each.aliases[0] }),
            ...(each.total === undefined ? {} : { total: each.total }),
          })),
        // Only the targets offered reach here (the actions check the page's choice).
        setTarget: async (target) => client.setTarget(target ?? served),
        close: () => client.close(),
      };
    },
  };
}

/** A selected source (flags, a profile, the demo data) as a playground source named `name`. */
export function selectedSource(name: string, selected: SelectedSource, profile: string | undefined): PlaySource {
  const { spec } = selected;
  if (spec.kind === 'url') {
    const url = hidePassword(spec.url);
    return {
      name,
      label: spec.language === undefined ? url : `${url} (${spec.language})`,
      kind: 'url',
      targets: portalTargets(spec.target),
      hasToken: spec.token !== undefined,
      url,
      ...(spec.language === undefined ? {} : { language: spec.language }),
      ...(selected.tokenShell === undefined ? {} : { tokenShell: selected.tokenShell }),
      ...(profile === undefined ? {} : { profile }),
      open: () => openSource(spec),
    };
  }
  const paths = spec.paths.map(relativeLabel);
  const served: Target = spec.target ?? 'ckan-2.11';  // what `ckql serve` would answer as
  return {
    name,
    label: spec.demo === true ? `demo data (${paths.join(', ')})` : `local data (${paths.join(', ') || spec.db || 'database'})`,
    kind: 'data',
    targets: dataTargets(spec.target, spec.engine, spec.db),
    hasToken: false,
    ...(profile === undefined ? {} : { profile }),
    serveHint: `local data is answered inside this server; to send these requests yourself, start \`ckql serve ${paths.join(' ')}${served === 'ckan-2.12' ? ' --ckan 2.12' : ''}\` (it listens on 127.0.0.1:8080)`,
    open: () => openSource(spec, { lazy: true }),
  };
}

/**
 * Every profile of the config besides `except`, each selected (its token
 * read) only when the page first opens it.
 */
export function profileSources(config: Config, except: string | undefined, env: NodeJS.ProcessEnv, cwd: string): PlaySource[] {
  const sources: PlaySource[] = [];
  for (const [name, profile] of config.profiles) {
    if (name === except) continue;
    let selected: Promise<PlaySource> | undefined;
    const select = (): Promise<PlaySource> =>
      (selected ??= selectSource({ profile: name }, { config: async () => config, env, cwd }).then((chosen) => selectedSource(name, chosen, name)));
    const isUrl = profile.kind === 'url';
    sources.push({
      name,
      label: isUrl ? hidePassword(profile.url) : `local data (${profile.paths.map(relativeLabel).join(', ') || profile.db || 'database'})`,
      kind: profile.kind,
      targets: isUrl ? portalTargets(profile.target) : dataTargets(profile.target, profile.engine, profile.db),
      // A profile's own token or none: CKQL_TOKEN is --url's alone (session/select-source.ts).
      hasToken: isUrl && profile.token !== undefined,
      ...(isUrl && profile.token !== undefined ? { tokenShell: tokenShellOf(profile.token) } : {}),
      profile: name,
      ...(isUrl ? { url: hidePassword(profile.url), ...(profile.language === undefined ? {} : { language: profile.language }) } : {}),
      open: async () => (await select()).open(),
    });
  }
  return sources;
}

/**
 * The targets local data may be answered as: none (`auto`: its engine
 * answers the whole query) unless the source names one, then each CKAN as a
 * portal would be asked; `sql` only with an engine that runs SQL.
 */
function dataTargets(target: Target | undefined, engine: string | undefined, db: string | undefined): TargetChoice[] {
  const sql = engine === 'pglite' || engine === 'postgres' || db !== undefined;
  const asked = (['ckan-2.11', 'ckan-2.12', 'sql'] as const).filter((each) => each !== 'sql' || sql);
  return target === undefined ? ['auto', ...asked] : [target, ...asked.filter((each) => each !== target), 'auto'];
}

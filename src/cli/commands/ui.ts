/**
 * `ckql ui [profile]`: the playground over a portal profile (or any source
 * the source options choose), on 127.0.0.1. The page queries the portal
 * through this server, so a token stays in this process: never in the page,
 * a URL or a share link. Every other profile of the config file is offered
 * too, opened when the page first uses it; nothing else is reachable.
 */
import type { Command } from 'commander';
import { emptyConfig } from '../../config/types.js';
import { toolError } from '../../errors.js';
import { startServer } from '../../server/server.js';
import { selectSource } from '../../session/select-source.js';
import type { CommandRun } from '../context.js';
import { addSourceOptions, configLoader, integerOption, refuseTokenArgument } from '../options.js';
import type { SourceOptionValues } from '../options.js';
import { packageVersion } from '../version.js';
import { untilStopped } from '../interrupt.js';

interface UiOptions extends SourceOptionValues {
  readonly host: string;
  readonly port: number;
  readonly allowHost?: readonly string[];
  readonly log?: boolean;
}

/** Where `ckql ui` listens unless told: beside `ckql serve`'s 8080, so both can run. */
const DEFAULT_PORT = 8090;

export function registerUi(program: Command, run: CommandRun): void {
  const command = program
    .command('ui')
    .description('open the playground in a browser over a portal profile (or --url, --data, the demo data); the token stays in this process')
    .argument('[profile]', 'the config profile to start on (the default profile, else the demo data)')
    .option('--host <host>', 'address to listen on', '127.0.0.1')
    .option('--port <port>', 'port to listen on; 0 picks a free one', integerOption('--port', 0, 65_535), DEFAULT_PORT)
    .option('--allow-host <names>', 'host names the page answers to besides IP addresses and localhost (comma-separated)', (value: string) =>
      value.split(',').map((each) => each.trim()).filter((each) => each !== ''),
    )
    .option('--log', 'print one line per request on stderr (never headers or tokens)')
    .addHelpText(
      'after',
      `
Prints the page's address; open it in a browser. Other profiles of the config
file can be chosen on the page. Stop with Ctrl-C.

Examples:
  ckql ui                       # the default profile, else the demo data
  ckql ui portal                # a profile of ckql.config.yaml
  ckql ui --url https://data.example.org --token-file ~/.portal-token`,
    );
  addSourceOptions(command).action(
    run(async (profileArgument: string | undefined, options: UiOptions) => {
      const { context } = run;
      refuseTokenArgument(options);
      if (profileArgument !== undefined && options.profile !== undefined && profileArgument !== options.profile) {
        throw toolError('USAGE', [`the profile is named twice (${profileArgument} and --profile ${options.profile}); give it once`]);
      }
      const flags = profileArgument === undefined ? options : { ...options, profile: profileArgument };
      const loadConfig = configLoader(flags, context);
      const selected = await selectSource(flags, { config: loadConfig, env: context.env, cwd: context.cwd });
      const explicit = flags.url !== undefined || (flags.data ?? []).length > 0 || flags.db !== undefined;
      // Other profiles are extras: with --url or --data, a broken config only warns.
      const config = await loadConfig().catch((error: unknown) => {
        if (!explicit) throw error;
        context.err(`warning: ${(error as Error).message} (other profiles are not offered)`);
        return emptyConfig;
      });
      const profile = explicit ? undefined : (flags.profile ?? config.defaultProfile);
      const name = profile ?? (flags.url !== undefined ? 'url' : selected.spec.kind === 'data' && selected.spec.demo === true ? 'demo' : 'data');
      // The playground's actions (and yaml, for their config entries) load only for this command.
      const [{ playgroundActions }, { profileSources, selectedSource }] = await Promise.all([import('../playground.js'), import('../playground-sources.js')]);
      const actions = playgroundActions({
        sources: [selectedSource(name, selected, profile), ...profileSources(config, profile, context.env, context.cwd)],
        defaultSource: name,
        version: packageVersion(),
      });
      const server = await startServer({
        host: options.host,
        port: options.port,
        playground: { actions, ...(options.allowHost === undefined ? {} : { allowedHosts: options.allowHost }) },
        ...(options.log === true ? { log: (line: string) => context.err(line) } : {}),
      }).catch(async (error: unknown) => {
        await actions.close();
        const code = (error as NodeJS.ErrnoException).code;
        if (code === 'EADDRINUSE' || code === 'EACCES' || code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND') {
          throw toolError('USAGE', [`cannot listen on ${options.host}:${options.port}: ${code === 'EADDRINUSE' ? 'the port is in use' : code === 'EACCES' ? 'permission denied' : code === 'EADDRNOTAVAIL' ? 'no such address here' : 'unknown host'}`], {
            hint: code === 'EADDRINUSE' ? 'choose another --port, or --port 0 for a free one' : undefined,
            cause: error,
          });
        }
        throw error;
      });
      const stopped = untilStopped();
      await context.out(`playground at ${server.url}/\n`);
      await stopped;
      await server.close();
      await actions.close();
      return 0;
    }),
  );
}

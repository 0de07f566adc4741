/**
 * `ckql run NAME`: run a named query from the config file. Its `params` are
 * defaults that `--param` overrides; a parameter left without a value is an
 * error that names it. It runs on `--url`/`--data`/`--profile` if given,
 * else on the query's own `profile`, else on the default profile.
 * Without NAME, it lists the named queries.
 */
import type { Command } from 'commander';
import { plan } from '../../compile/compile.js';
import { bind } from '../../compile/bind.js';
import { parse } from '../../syntax/parse.js';
import type { Query } from '../../ast.js';
import { queryResources } from '../../ast.js';
import type { SearchRequest } from '../../datastore/types.js';
import { toolError } from '../../errors.js';
import type { OutputFormat } from '../../output/format-records.js';
import { formatRecords } from '../../output/format-records.js';
import { didYouMean } from '../../session/nearest.js';
import { isFileOf } from '../../engine/node/load-resources.js';
import type { CommandRun } from '../context.js';
import {
  addCsvOption, addFormatOption, addParamOption, addSourceOptions, configLoader, defaultFormat, integerOption, refuseTokenArgument,
} from '../options.js';
import type { SourceOptionValues } from '../options.js';
import { readParams, refuseUnknownParams } from '../../session/params.js';
import { badFileReporter, attachOrigin, withParamHint } from '../report.js';
import { printQuery } from '../print-query.js';
import { startTypeWarnings } from '../type-warnings.js';
import { selectSource } from '../../session/select-source.js';
import { openSource } from '../../session/source.js';
import { localResources, namesSources, otherSources } from '../../session/sources.js';
import { fileProgressBar } from '../../output/progress-bar.js';
import { listing } from './fields.js';

interface RunOptions extends SourceOptionValues {
  readonly param: readonly string[];
  readonly format?: OutputFormat;
  readonly all?: boolean;
  readonly pageSize?: number;
  readonly total?: boolean;
  readonly escapeFormulas: boolean;
}

export function registerRun(program: Command, run: CommandRun): void {
  const command = program
    .command('run')
    .description('run a named query from the config file (without NAME: list them)')
    .argument('[name]', 'the name under queries: in the config file');
  addParamOption(command);
  addFormatOption(command);
  addCsvOption(command);
  command
    .option('--all', 'every matching record, paging through the whole result')
    .option('--page-size <n>', 'records per request with --all (default 1000)', integerOption('--page-size', 1))
    .option('--total', 'count every matching record, even where ckql finishes the query itself (it then reads past the limit)')
    .addHelpText(
      'after',
      `
Example (ckql.config.yaml):
  queries:
    by-subject:
      query: |
        from courses
        where subject = $subject   -- bound with --param
      params: { subject: math }

  ckql run by-subject --param subject=art`,
    );
  addSourceOptions(command).action(
    run(async (name: string | undefined, options: RunOptions) => {
      const { context } = run;
      refuseTokenArgument(options);
      const loadConfig = configLoader(options, context);
      const config = await loadConfig();
      if (name === undefined) {
        const records = [...config.queries.values()].map((query) => ({
          name: query.name,
          description: query.description ?? null,
          params: Object.keys(query.params).join(', '),
        }));
        const fields = [
          { id: 'name', type: 'text' as const },
          { id: 'description', type: 'text' as const },
          { id: 'params', type: 'text' as const },
        ];
        await context.out(
          await formatRecords(listing(fields, records), options.format ?? defaultFormat(context), {
            color: context.color.stdout,
            width: context.width,
            noun: { one: 'query', many: 'queries' },
          }),
        );
        if (config.file === undefined) context.err('no config file found: see ckql run --help for one with a named query');
        return 0;
      }
      const named = config.queries.get(name);
      if (named === undefined) {
        const names = [...config.queries.keys()];
        throw toolError('UNKNOWN_QUERY', [name], {
          ...(config.file === undefined ? {} : { file: config.file }),
          hint:
            didYouMean(name, names) ??
            (config.file === undefined
              ? 'no config file was found (ckql.config.yaml, .ckqlrc*, or ~/.config/ckql/config.yaml)'
              : names.length === 0
                ? `${config.file} has no queries`
                : `queries: ${names.join(', ')}`),
        });
      }
      const given = readParams(options.param);
      refuseUnknownParams(named.query, Object.keys(given), '--param');
      let request: SearchRequest;
      let query: Query | undefined;
      try {
        // What CKAN 2.11 cannot say runs as a plan, as with `ckql query`.
        const params = { ...named.params, ...given };
        const planned = plan(named.query, { target: 'ckan-2.11', params });
        request = planned.request as SearchRequest;
        // The query itself goes to the source: a local engine answers it whole, a portal as its plan says.
        query = bind(parse(named.query), params);
      } catch (error) {
        const hint = (param: string): string => `give it a value: ckql run ${name} --param ${param}=…, or a default under params: in the config`;
        throw withParamHint(attachOrigin(error, named.origin), hint);
      }
      const { spec, profile } = await selectSource(options, {
        config: loadConfig,
        env: context.env,
        cwd: context.cwd,
        ...(named.profile === undefined ? {} : { preferredProfile: named.profile }),
      });
      // A join across sources (docs/aggregates.md): local data reads only its own resources; the others are read from their sources.
      const across = query !== undefined && namesSources(query);
      const written = [request.resource_id, ...(query === undefined ? [] : queryResources(query))];
      const resources = across ? localResources(written) : written;
      const source = await openSource(spec, {
        resources,
        progress: fileProgressBar(context.stderr, context.env),
        onBadFile: badFileReporter(context, 'the other files are read', (file) => resources.some((resource) => isFileOf(resource, file))).report,
      });
      const others = across
        ? otherSources({ config, current: source, profile, open: (each) => openSource(each, { lazy: true }), env: context.env, cwd: context.cwd })
        : undefined;
      try {
        const warnings = others === undefined ? startTypeWarnings(context, source.client, named.query, { ...named.params, ...given }) : { print: async () => undefined };
        await printQuery(context, others === undefined ? source : { ...source, client: others.client }, request, {
          ...(query === undefined ? {} : { query }),
          text: named.query,
          params: { ...named.params, ...given },
          format: options.format ?? defaultFormat(context),
          ...(options.all === true ? { all: true } : {}),
          ...(options.total === true ? { total: true } : {}),
          ...(options.pageSize === undefined ? {} : { pageSize: options.pageSize }),
          escapeFormulas: options.escapeFormulas,
        });
        await warnings.print();
      } catch (error) {
        // An unknown field or resource is told at its line in the config file.
        throw attachOrigin(error, named.origin);
      } finally {
        await others?.close();
        await source.close();
      }
      return 0;
    }),
  );
}

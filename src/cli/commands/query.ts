/** `ckql query '<query>'`: run one query and print its records. */
import type { Command } from 'commander';
import { plan, withSource } from '../../compile/compile.js';
import { QueryError } from '../../errors.js';
import { bind } from '../../compile/bind.js';
import { parse } from '../../syntax/parse.js';
import { queryResources } from '../../ast.js';
import type { SearchRequest } from '../../datastore/types.js';
import type { OutputFormat } from '../../output/format-records.js';
import { isFileOf } from '../../engine/node/load-resources.js';
import type { CommandRun } from '../context.js';
import { badFileReporter, withParamHint } from '../report.js';
import {
  addCsvOption, addFormatOption, addParamOption, addSourceOptions, configLoader, defaultFormat, integerOption, readQueryArgument,
  refuseTokenArgument,
} from '../options.js';
import type { SourceOptionValues } from '../options.js';
import { readParams, refuseUnknownParams } from '../../session/params.js';
import { printQuery } from '../print-query.js';
import { startTypeWarnings } from '../type-warnings.js';
import { selectSource } from '../../session/select-source.js';
import { openSource } from '../../session/source.js';
import { localResources, namesSources, otherSources } from '../../session/sources.js';
import { fileProgressBar } from '../../output/progress-bar.js';

interface QueryOptions extends SourceOptionValues {
  readonly param: readonly string[];
  readonly format?: OutputFormat;
  readonly all?: boolean;
  readonly pageSize?: number;
  readonly total?: boolean;
  readonly escapeFormulas: boolean;
}

export function registerQuery(program: Command, run: CommandRun): void {
  const command = program
    .command('query')
    .description('run a query and print its records')
    .argument('<query>', 'the query text (- reads it from stdin)');
  addParamOption(command);
  addFormatOption(command);
  addCsvOption(command);
  command
    .option('--all', 'every matching record, paging through the whole result (progress on stderr at a terminal)')
    .option('--page-size <n>', 'records per request with --all (default 1000)', integerOption('--page-size', 1))
    .option('--total', 'count every matching record, even where ckql finishes the query itself (it then reads past the limit)')
    .addHelpText(
      'after',
      `
Examples:
  ckql query 'from courses where stage = active limit 5'
  ckql query 'from courses where subject = $s' --param s=math --format csv > math.csv
  ckql query 'from courses' --all --format ndjson --url https://data.example.org`,
    );
  addSourceOptions(command).action(
    run(async (text: string, options: QueryOptions) => {
      const { context } = run;
      refuseTokenArgument(options);
      const loadConfig = configLoader(options, context);
      const source = await selectSource(options, { config: loadConfig, env: context.env, cwd: context.cwd });
      const queryText = await readQueryArgument(text, context);
      const params = readParams(options.param);
      refuseUnknownParams(queryText, Object.keys(params), '--param');
      // What CKAN 2.11 cannot say runs as a plan: the client finds the portal's dialect and applies the rest.
      let planned;
      try {
        planned = plan(queryText, { target: 'ckan-2.11', params });
      } catch (error) {
        throw withParamHint(error, (param) => `give it a value: --param ${param}=…`);
      }
      const request = planned.request as SearchRequest;
      const bound = bind(parse(queryText), params);
      // A join across sources (docs/aggregates.md): local data reads only its own resources; the others are read from their sources.
      const across = namesSources(bound);
      const named = [request.resource_id, ...queryResources(bound)];
      const resources = across ? localResources(named) : named;
      const opened = await openSource(source.spec, {
        resources,
        progress: fileProgressBar(context.stderr, context.env),
        onBadFile: badFileReporter(context, 'the other files are read', (file) => resources.some((resource) => isFileOf(resource, file))).report,
      });
      const others = across
        ? otherSources({
            config: await loadConfig(),
            current: opened,
            profile: source.profile,
            open: (spec) => openSource(spec, { lazy: true }),
            env: context.env,
            cwd: context.cwd,
          })
        : undefined;
      try {
        const warnings = others === undefined ? startTypeWarnings(context, opened.client, queryText, params) : { print: async () => undefined };
        await printQuery(context, others === undefined ? opened : { ...opened, client: others.client }, request, {
          // The query itself goes to the source: a local engine answers it whole, a portal as its plan says.
          query: bound,
          text: queryText,
          params,
          format: options.format ?? defaultFormat(context),
          ...(options.all === true ? { all: true } : {}),
          ...(options.total === true ? { total: true } : {}),
          ...(options.pageSize === undefined ? {} : { pageSize: options.pageSize }),
          escapeFormulas: options.escapeFormulas,
        });
        await warnings.print();
      } catch (error) {
        // A source's name the session does not know, a scan past --max-scan: shown under the query's text.
        throw error instanceof QueryError ? withSource(error, queryText) : error;
      } finally {
        await others?.close();
        await opened.close();
      }
      return 0;
    }),
  );
}

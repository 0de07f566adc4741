/**
 * `ckql explain '<query>'`: the request a query becomes, the GET URL, and a
 * curl command for the chosen source, so a query can be reproduced without
 * ckql. The token is never printed: curl reads it from where it comes from
 * (`$CKQL_TOKEN`, the profile's variable, file or command).
 */
import type { Command } from 'commander';
import { connect } from '../../client/connect.js';
import { queryStringFor } from '../../client/encode.js';
import type { Explanation } from '../../client/types.js';
import type { CommandRun } from '../context.js';
import { withParamHint } from '../report.js';
import { addParamOption, addSourceOptions, configLoader, readQueryArgument, refuseTokenArgument } from '../options.js';
import type { SourceOptionValues } from '../options.js';
import { readParams, refuseUnknownParams } from '../../session/params.js';
import { selectSource } from '../../session/select-source.js';
import { curlCommand } from '../../output/curl.js';
import { openSource } from '../../session/source.js';
import { namesSources, otherSources } from '../../session/sources.js';
import { explainText } from '../../repl/explain.js';
import { serveCommand } from '../../session/serve-command.js';
import { bind } from '../../compile/bind.js';
import { withSource } from '../../compile/compile.js';
import { QueryError } from '../../errors.js';
import { parse } from '../../syntax/parse.js';

/** Where `ckql serve` listens by default; explain's URLs for local data point there. */
export const defaultServeUrl = 'http://127.0.0.1:8080';

interface ExplainOptions extends SourceOptionValues {
  readonly param: readonly string[];
}

export function registerExplain(program: Command, run: CommandRun): void {
  const command = program
    .command('explain')
    .description('print the plan of a query: its target, the request JSON (or SELECT), the GET URL, a curl command and what runs locally')
    .argument('<query>', 'the query text (- reads it from stdin)');
  addParamOption(command).addHelpText(
    'after',
    `
Local data (--data, a data profile, the demo data) is explained against
\`ckql serve\` on ${defaultServeUrl}, as the CKAN its --target names; a portal
against its URL, for the --target given, else (when the query needs more
than CKAN 2.11's request) for the one the portal says it speaks.

Examples:
  ckql explain 'from courses where subject = math limit 5' --url https://data.example.org --lang en
  ckql explain 'from enrolments where grade >= 5 and status != withdrawn' --url https://data.example.org`,
  );
  addSourceOptions(command).action(
    run(async (text: string, options: ExplainOptions) => {
      const { context } = run;
      refuseTokenArgument(options);
      const queryText = await readQueryArgument(text, context);
      const params = readParams(options.param);
      refuseUnknownParams(queryText, Object.keys(params), '--param');
      const loadConfig = configLoader(options, context);
      const selected = await selectSource(options, { config: loadConfig, env: context.env, cwd: context.cwd });
      const { spec, tokenShell } = selected;
      let query;
      try {
        query = bind(parse(queryText), params);
      } catch (error) {
        throw withParamHint(error, (param) => `give it a value: --param ${param}=…`);
      }
      if (namesSources(query)) {
        // A join across sources: each side is explained by its own source (a portal's count asked, as a run would).
        const opened = await openSource(spec, { lazy: true });
        const others = otherSources({ config: await loadConfig(), current: opened, profile: selected.profile, open: (each) => openSource(each, { lazy: true }), env: context.env, cwd: context.cwd });
        try {
          const explained = await others.client.explain(query).catch((error: unknown) => {
            throw error instanceof QueryError ? withSource(error, queryText) : error;
          });
          // Every resource of one named source: that source's explanation (no curl line: its token is its profile's).
          await context.out(`${explainText(explained, undefined)}\n`);
        } finally {
          await others.close();
          await opened.close();
        }
        return 0;
      }
      // The plan the client would run: the target given, else (only when CKAN 2.11's request cannot say the
      // query whole) the portal's, detected as a search detects it. Local data is served as its target says.
      const client = spec.kind === 'url'
        ? connect({
            url: spec.url,
            ...(spec.language === undefined ? {} : { language: spec.language }),
            ...(spec.method === undefined ? {} : { method: spec.method }),
            ...(spec.token === undefined ? {} : { token: spec.token }),
            ...(spec.timeout === undefined ? {} : { timeout: spec.timeout }),
            ...(spec.target === undefined ? {} : { target: spec.target }),
            ...(spec.maxScan === undefined ? {} : { maxScan: spec.maxScan }),
          })
        : connect({ url: defaultServeUrl, target: spec.target ?? 'ckan-2.11', ...(spec.maxScan === undefined ? {} : { maxScan: spec.maxScan }) });
      let explained: Explanation;
      try {
        explained = await client.explain(queryText, { params });
      } catch (error) {
        throw withParamHint(error, (param) => `give it a value: --param ${param}=…`);
      } finally {
        await client.close();
      }
      const planned = explained.plan!;
      const how = {
        given: spec.kind === 'url' ? '(--target or the profile\'s target)' : spec.target === undefined ? '(local data is served as CKAN 2.11; --target for another)' : '(--target or the profile\'s target)',
        detected: '(asked of the portal: status_show, else the 2.12 probe; CKAN 2.11 when it does not say)',
        whole: '(CKAN 2.11\'s request says the whole query; every portal answers it)',
        local: '',
        sources: '',
      }[explained.chosen];
      const serveLine = (): string => (spec.kind === 'data' ? `# local data: start the server first with: ${serveCommand(spec, planned.target)}` : '');
      // Local data with no target: the engine answers the query itself; what follows is how a portal would be asked.
      const localLines = (): string[] =>
        spec.kind === 'data' && spec.target === undefined
          ? [
              `# here: the ${spec.engine ?? 'memory'} engine answers the whole query in this process (nothing is sent)`,
              `#   ${spec.engine === undefined || spec.engine === 'memory' ? 'engine the memory engine answers the whole query in one pass' : `engine the ${spec.engine} engine answers the whole query as one SQL statement`}`,
              '# below: the request CKAN 2.11 (a portal, or ckql serve) would be sent for it; --target for another',
              '',
            ]
          : [];
      if (explained.sql !== undefined) {
        const { sql } = explained;
        const lines = [
          ...localLines(),
          `# target: sql (datastore_search_sql) ${how}`,
          sql.text,
          '',
          '# GET URL',
          `${sql.url}?${new URLSearchParams({ sql: sql.text }).toString()}`,
          ...(planned.facetRequest === undefined ? [] : ['', '# facets: one more statement, sent first', planned.facetRequest.sql]),
        ];
        if (spec.kind === 'data') lines.push('', serveLine());
        await context.out(`${lines.join('\n')}\n`);
        return 0;
      }
      const chosen = explained.request!;
      const request = chosen.request;
      const lines = [
        ...localLines(),
        `# target: ${planned.target} ${how}`,
        `# request (${chosen.method === 'POST' ? 'POST body' : 'GET parameters'})`,
        JSON.stringify(request, null, 2),
        '',
        '# GET URL',
        `${chosen.url.split('?')[0]}?${queryStringFor(request)}`,
        '',
        '# curl',
        curlCommand(chosen, spec.kind === 'url' ? tokenShell : undefined),
      ];
      if (planned.shaped !== undefined || planned.facets !== undefined) {
        // A group, a join or facets: every resource is read in pages (each request in the tree) and finished here.
        if (explained.steps !== undefined) lines.push('', '# plan: each request paged in _id order, then these steps here (the last step first)', ...explained.steps);
      } else if (planned.residual !== undefined && explained.steps !== undefined) {
        lines.push('', '# steps: ckql pages through the records above and runs these over them (the last step first)', ...explained.steps);
      }
      if (spec.kind === 'data') lines.push('', serveLine());
      await context.out(`${lines.join('\n')}\n`);
      return 0;
    }),
  );
}

/**
 * `ckql explain '<query>'`: the request a query becomes, the GET URL, and a
 * curl command for the chosen source, so a query can be reproduced without
 * ckql. The token is never printed: curl reads it from where it comes from
 * (`$CKQL_TOKEN`, the profile's variable, file or command).
 */
import type { Command } from 'commander';
import { connect } from '../../client/connect.js';
import type { PreparedRequest } from '../../client/types.js';
import { plan } from '../../compile/compile.js';
import type { SqlRequest } from '../../compile/sql.js';
import type { SearchRequest } from '../../datastore/types.js';
import { format } from '../../format.js';
import type { CommandRun } from '../context.js';
import { withParamHint } from '../report.js';
import { addParamOption, addSourceOptions, configLoader, readQueryArgument, refuseTokenArgument } from '../options.js';
import type { SourceOptionValues } from '../options.js';
import { readParams, refuseUnknownParams } from '../../session/params.js';
import { selectSource, shellQuote } from '../../session/select-source.js';
import { curlCommand } from '../../output/curl.js';
import { relativeLabel } from '../../session/source.js';

/** Where `ckql serve` listens by default; explain's URLs for local data point there. */
export const defaultServeUrl = 'http://127.0.0.1:8080';

interface ExplainOptions extends SourceOptionValues {
  readonly param: readonly string[];
}

export function registerExplain(program: Command, run: CommandRun): void {
  const command = program
    .command('explain')
    .description('print the request JSON, the GET URL and a curl command for a query')
    .argument('<query>', 'the query text (- reads it from stdin)');
  addParamOption(command).addHelpText(
    'after',
    `
Local data (--data, a data profile, the demo data) is explained against
\`ckql serve\` on ${defaultServeUrl}; a portal against its URL.

Example:
  ckql explain 'from courses where subject = math limit 5' --url https://data.example.org --lang en`,
  );
  addSourceOptions(command).action(
    run(async (text: string, options: ExplainOptions) => {
      const { context } = run;
      refuseTokenArgument(options);
      const queryText = await readQueryArgument(text, context);
      const params = readParams(options.param);
      refuseUnknownParams(queryText, Object.keys(params), '--param');
      const { spec, tokenShell } = await selectSource(options, {
        config: configLoader(options, context),
        env: context.env,
        cwd: context.cwd,
      });
      // No request is sent, so the target is the one given (--target, the profile's), else CKAN 2.11's.
      const given = spec.kind === 'url' ? spec.target : undefined;
      let planned;
      try {
        planned = plan(queryText, { target: given ?? 'ckan-2.11', params });
      } catch (error) {
        throw withParamHint(error, (param) => `give it a value: --param ${param}=…`);
      }
      const base = spec.kind === 'url' ? { url: spec.url, language: spec.language } : { url: defaultServeUrl, language: undefined };
      const method = spec.kind === 'url' ? (spec.method ?? 'POST') : 'POST';
      // No request is sent: `prepare` only builds what would go over the wire.
      const prepare = async (as: 'POST' | 'GET', request: SearchRequest = { resource_id: '…' }): Promise<PreparedRequest> => {
        const client = connect({ url: base.url, method: as, ...(base.language === undefined ? {} : { language: base.language }) });
        try {
          return client.prepare(request);
        } finally {
          await client.close();
        }
      };
      if (planned.target === 'sql') {
        const { sql } = planned.request as SqlRequest;
        const endpoint = (await prepare('POST')).url.replace(/datastore_search$/, 'datastore_search_sql');
        await context.out(
          `${[
            '# target: sql (datastore_search_sql)',
            sql,
            '',
            '# GET URL',
            `${endpoint}?${new URLSearchParams({ sql }).toString()}`,
          ].join('\n')}\n`,
        );
        return 0;
      }
      const request = planned.request as SearchRequest;
      const chosen = await prepare(method, request);
      const get = method === 'GET' ? chosen : await prepare('GET', request);
      const lines = [
        `# target: ${planned.target}${given === undefined ? ' (--target or a profile\'s target: plans for another)' : ''}`,
        `# request (${method === 'POST' ? 'POST body' : 'GET parameters'})`,
        JSON.stringify(request, null, 2),
        '',
        '# GET URL',
        get.url,
        '',
        '# curl',
        curlCommand(chosen, spec.kind === 'url' ? tokenShell : undefined),
      ];
      if (planned.residual !== undefined) {
        lines.push('', '# residual: ckql pages through the records above and keeps what this query keeps', format(planned.residual));
      }
      if (spec.kind === 'data') {
        const paths = spec.paths.map((path) => shellQuote(relativeLabel(path))).join(' ');
        lines.push('', `# local data: start the server first with: ckql serve ${paths} --port 8080`);
      }
      await context.out(`${lines.join('\n')}\n`);
      return 0;
    }),
  );
}

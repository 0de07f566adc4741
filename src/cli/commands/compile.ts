/** `ckql compile '<query>'`: print the request a query compiles to. */
import type { Command } from 'commander';
import { compile } from '../../compile/compile.js';
import { parseTarget } from '../../compile/plan.js';
import { toolError } from '../../errors.js';
import type { CommandRun } from '../context.js';
import { withParamHint } from '../report.js';
import { addParamOption, readQueryArgument } from '../options.js';
import { readParams, refuseUnknownParams } from '../../session/params.js';

export function registerCompile(program: Command, run: CommandRun): void {
  const command = program
    .command('compile')
    .description('print the datastore_search request a query compiles to, as JSON')
    .argument('<query>', 'the query text (- reads it from stdin)');
  addParamOption(command)
    .option('--target <target>', 'the dialect to compile for: ckan-2.11 (default), ckan-2.12 or sql (prints the SELECT)')
    .addHelpText(
      'after',
      `
Example:
  ckql compile 'from courses where stage in (active, survey) and year = $y' --param y=2020
  ckql compile 'from enrolments where grade >= 5' --target ckan-2.12
  ckql compile 'from enrolments where grade between 4 and 5' --target sql

A query one request cannot say (a condition the target lacks; group by, an
aggregate, a join or facet on a CKAN target) is refused: ckql explain shows
the plan that runs it, and ckql query runs it.`,
    )
    .action(
      run(async (text: string, options: { param: readonly string[]; target?: string }) => {
        const queryText = await readQueryArgument(text, run.context);
        const params = readParams(options.param);
        refuseUnknownParams(queryText, Object.keys(params), '--param');
        const target = options.target === undefined ? 'ckan-2.11' : parseTarget(options.target);
        if (target === undefined) throw toolError('USAGE', [`--target must be ckan-2.11, ckan-2.12 or sql, found ${JSON.stringify(options.target)}`]);
        const hinted = <T>(make: () => T): T => {
          try {
            return make();
          } catch (error) {
            throw withParamHint(error, (param) => `give it a value: --param ${param}=…`);
          }
        };
        if (target === 'sql') {
          await run.context.out(`${hinted(() => compile(queryText, { target, params })).sql}
`);
          return 0;
        }
        const request = hinted(() => compile(queryText, { target, params }));
        await run.context.out(`${JSON.stringify(request, null, 2)}\n`);
        return 0;
      }),
    );
}

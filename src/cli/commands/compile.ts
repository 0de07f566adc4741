/** `ckql compile '<query>'`: print the request a query compiles to. */
import type { Command } from 'commander';
import { compile } from '../../compile/compile.js';
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
    .addHelpText(
      'after',
      `
Example:
  ckql compile 'from courses where stage in (active, survey) and year = $y' --param y=2020`,
    )
    .action(
      run(async (text: string, options: { param: readonly string[] }) => {
        const queryText = await readQueryArgument(text, run.context);
        const params = readParams(options.param);
        refuseUnknownParams(queryText, Object.keys(params), '--param');
        let request;
        try {
          request = compile(queryText, params);
        } catch (error) {
          throw withParamHint(error, (param) => `give it a value: --param ${param}=…`);
        }
        await run.context.out(`${JSON.stringify(request, null, 2)}\n`);
        return 0;
      }),
    );
}

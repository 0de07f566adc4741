/** `ckql format '<query>'`: print a query's canonical text. */
import type { Command } from 'commander';
import { withSource } from '../../compile/compile.js';
import { QueryError } from '../../errors.js';
import { format } from '../../format.js';
import { parse } from '../../syntax/parse.js';
import type { CommandRun } from '../context.js';
import { readQueryArgument } from '../options.js';

export function registerFormat(program: Command, run: CommandRun): void {
  program
    .command('format')
    .description('print a query in canonical form: lower-case keywords, one clause per line')
    .argument('<query>', 'the query text (- reads it from stdin)')
    .addHelpText(
      'after',
      `
Example:
  ckql format 'FROM courses LIMIT 5 WHERE stage = "active"'`,
    )
    .action(
      run(async (text: string) => {
        const source = await readQueryArgument(text, run.context);
        let canonical: string;
        try {
          canonical = format(parse(source));
        } catch (error) {
          throw error instanceof QueryError ? withSource(error, source) : error;
        }
        await run.context.out(canonical.endsWith('\n') ? canonical : `${canonical}\n`);
        return 0;
      }),
    );
}

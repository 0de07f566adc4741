/**
 * `ckql check [FILES…]`: every query in `.ckql` scripts, config files (each
 * named query, with its declared parameters) and `ckql\`…\`` templates in
 * TypeScript and JavaScript, checked by the language service without
 * running anything (check-run.ts). Problems print as `file:line:col` with
 * the caret excerpt (or as JSON for CI annotations); any error exits 3.
 */
import { Option, type Command } from 'commander';
import type { CommandRun } from '../context.js';
import type { CheckOptions } from './check-run.js';

export function registerCheck(program: Command, run: CommandRun): void {
  program
    .command('check')
    .description('check the queries in .ckql scripts, config files and ckql`…` templates, without running them')
    .argument('[files...]', 'files or folders (default: the config file ckql would read)')
    .option('--schema <source>', 'also check resources, fields and values against a source: a profile name, a data folder or file, or a portal URL')
    .option('--target <target>', 'the CKAN dialect to check for (ckan-2.11, ckan-2.12, sql); default: each query\'s profile\'s, else ckan-2.11')
    .option('--config <file>', 'the config file for --schema profiles and the default check')
    .addOption(new Option('--format <format>', 'text (file:line:col and the excerpt) or json (for CI annotations)').choices(['text', 'json']).default('text'))
    .addHelpText(
      'after',
      `
Exit status: 0 when every query passes (warnings do not fail), 3 when any has an error.

Examples:
  ckql check queries/ ckql.config.yaml src/
  ckql check --schema examples/data examples/queries.ckql
  ckql check --format json . > ckql-check.json`,
    )
    .action(
      run(async (files: string[], options: CheckOptions) => {
        // The checker reads YAML, TOML and code, and may open a source: loaded for this command only.
        const { runCheck } = await import('./check-run.js');
        return runCheck(files, options, run.context);
      }),
    );
}


/**
 * `ckql` / `ckql repl`: the interactive session (on the demo data when no
 * source is configured). With `-c` or `-f`, or with stdin not a terminal, it
 * runs the statements and prints their records instead. The REPL and ink are
 * loaded only here, with `import()`, so other commands never load them.
 */
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { emptyConfig } from '../../config/types.js';
import { toolError } from '../../errors.js';
import type { OutputFormat } from '../../output/format-records.js';
import { didYouMean } from '../../session/nearest.js';
import { badFileReporter } from '../report.js';
import type { CommandRun } from '../context.js';
import { exitCodeFor } from '../exit-codes.js';
import { interruptible } from '../interrupt.js';
import {
  addCsvOption, addFormatOption, addSourceOptions, configLoader, readOptionFile, readQueryArgument, refuseTokenArgument,
} from '../options.js';
import type { SourceOptionValues } from '../options.js';
import { selectSource } from '../../session/select-source.js';
import { openSource } from '../../session/source.js';
import { otherSources } from '../../session/sources.js';
import { fileProgressBar, fileProgressText } from '../../output/progress-bar.js';
import type { Source, SourceSpec } from '../../session/source.js';

interface ReplOptions extends SourceOptionValues {
  readonly command?: string;
  readonly file?: string;
  readonly format?: OutputFormat;
  readonly escapeFormulas: boolean;
}

export function registerRepl(program: Command, run: CommandRun): void {
  const command = program
    .command('repl', { isDefault: true })
    .description('open the interactive REPL (the default command)')
    .option('-c, --command <query>', 'run these statements (separated by ;) and exit')
    .option('-f, --file <file>', 'run the statements in this file and exit')
    // The default command receives any word that is not a command: it is reported as an unknown command below.
    .allowExcessArguments(true);
  addCsvOption(command);
  addFormatOption(command).addHelpText(
    'after',
    `
With stdin not a terminal, statements are read from it (separated by ;) and
printed as ndjson unless --format says otherwise.

Examples:
  ckql                                   # the demo data, with completion and tables
  ckql --url https://data.example.org --lang en
  ckql --data ./data -c 'from courses limit 3; from schools limit 1'
  ckql --data ./data < queries.ckql`,
  );
  addSourceOptions(command).action(
    run(async (options: ReplOptions, self: Command) => {
      const { context } = run;
      const [word] = self.args;
      if (word !== undefined) {
        const names = program.commands.map((each) => each.name());
        throw toolError('USAGE', [`unknown command ${JSON.stringify(word)}`], {
          hint: didYouMean(word, names) ?? `commands: ${names.join(', ')} (ckql --help)`,
        });
      }
      refuseTokenArgument(options);
      const loadConfig = configLoader(options, context);
      const { spec, tokenShell, profile } = await selectSource(options, { config: loadConfig, env: context.env, cwd: context.cwd });
      // Named queries are extras for the REPL: with an explicit --url or --data, a broken config only warns.
      const explicit = options.url !== undefined || (options.data ?? []).length > 0;
      const config = await loadConfig().catch((error: unknown) => {
        if (!explicit) throw error;
        context.err(`warning: ${(error as Error).message} (named queries are not available)`);
        return emptyConfig;
      });
      const script =
        options.command ??
        (options.file === undefined ? undefined : await readOptionFile('--file', resolve(context.cwd, options.file))) ??
        (context.stdin.isTTY === true ? undefined : await readQueryArgument('-', context));
      // Files are read when a statement first names them, so the prompt does not wait for them.
      // At the prompt the spinner shows a file's reading; a script gets the bar.
      const loading = fileProgressText();
      const progress = script === undefined ? loading : fileProgressBar(context.stderr, context.env);
      // A file that cannot be read is reported once it is read (at once with a PostgreSQL engine); the others are served.
      const onBadFile = badFileReporter(context, 'the other files are read').report;
      const openLazily = (each: SourceSpec): Promise<Source> => openSource(each, { lazy: true, progress, onBadFile });
      const source = await openLazily(spec);
      try {
        // The session and the script runner only: ink comes with the first table drawn.
        const [{ startRepl }, { runScript }] = await Promise.all([import('../../repl/start.js'), import('../../repl/script.js')]);
        const repl = { startRepl, runScript };
        if (script !== undefined) {
          // Statements from -c, -f or a pipe: records on stdout, each error rendered on stderr.
          // A statement may name other sources (`profile:resource`, `local:resource`; docs/aggregates.md).
          const others = otherSources({ config, current: source, profile, open: openLazily, env: context.env, cwd: context.cwd });
          const outcome = await interruptible((signal) =>
            repl.runScript(script, {
              source: { ...source, client: others.client },
              format: options.format ?? 'ndjson',
              output: context.stdout,
              errorOutput: context.stderr,
              color: context.color.stderr,
              width: context.width,
              escapeFormulas: options.escapeFormulas,
              signal,
            }),
          ).finally(() => others.close());
          const [first] = outcome.errors;
          return first === undefined ? 0 : exitCodeFor(first);
        }
        await repl.startRepl({
          source,
          config,
          openSource: openLazily,
          ...(profile === undefined ? {} : { profile }),
          status: loading.current,
          input: context.stdin,
          output: context.stdout,
          errorOutput: context.stderr,
          color: context.color.stdout,
          ...(options.format === undefined ? {} : { format: options.format }),
          ...(spec.kind === 'url' && spec.token !== undefined ? { secrets: [spec.token] } : {}),
          ...(tokenShell === undefined ? {} : { tokenShell }),
        });
        return 0;
      } finally {
        await source.close();
      }
    }),
  );
}

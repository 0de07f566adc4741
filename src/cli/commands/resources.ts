/** `ckql resources`: the resources a source knows, with aliases and record counts. */
import type { Command } from 'commander';
import type { Row } from '../../datastore/types.js';
import { formatRecords } from '../../output/format-records.js';
import type { OutputFormat } from '../../output/format-records.js';
import type { CommandRun } from '../context.js';
import { exitCodes } from '../exit-codes.js';
import { badFileReporter } from '../report.js';
import { addFormatOption, addSourceOptions, configLoader, defaultFormat, refuseTokenArgument } from '../options.js';
import type { SourceOptionValues } from '../options.js';
import { selectSource } from '../../session/select-source.js';
import { openSource, withDatastoreTables } from '../../session/source.js';
import { fileProgressBar } from '../../output/progress-bar.js';
import { listing } from './fields.js';
import { datastoreTables } from '../../client/discovery.js';
import { interruptible } from '../interrupt.js';

interface ResourcesOptions extends SourceOptionValues {
  readonly format?: OutputFormat;
}

export function registerResources(program: Command, run: CommandRun): void {
  const command = program
    .command('resources')
    .description("list the resources of the source: every local table, or on a portal the ones the profile names and every table its _table_metadata lists");
  addFormatOption(command, 'the resources').addHelpText(
    'after',
    `
Example:
  ckql resources --data examples/data`,
  );
  addSourceOptions(command).action(
    run(async (options: ResourcesOptions) => {
      const { context } = run;
      refuseTokenArgument(options);
      const { spec } = await selectSource(options, { config: configLoader(options, context), env: context.env, cwd: context.cwd });
      const progress = fileProgressBar(context.stderr, context.env);
      // Each file that cannot be read is reported, the others listed; the status says some failed.
      const bad = badFileReporter(context, 'not listed; the other files are');
      const source = await openSource(spec, {
        progress,
        onBadFile: (error) => {
          progress.done();
          bad.report(error);
        },
      });
      try {
        const listed = await source.listResources();
        // A portal: every table `_table_metadata` lists where anyone may read it, and what the profile names besides.
        const resources = spec.kind === 'url' ? withDatastoreTables(listed, await interruptible((signal) => datastoreTables(source.client, signal))) : listed;
        const records: Row[] = resources.map((each) => ({ id: each.id, alias: each.alias ?? null, total: each.total ?? null }));
        const result = listing(
          [
            { id: 'id', type: 'text' },
            { id: 'alias', type: 'text' },
            { id: 'total', type: 'int' },
          ],
          records,
        );
        await context.out(
          await formatRecords(result, options.format ?? defaultFormat(context), {
            color: context.color.stdout,
            width: context.width,
            pretty: context.stdout.isTTY === true,
            noun: { one: 'resource', many: 'resources' },
          }),
        );
        if (resources.length === 0 && spec.kind === 'url') {
          context.err("this portal does not let its _table_metadata be read: name resources under resources: in the profile, or find them with ckql datasets");
        }
      } finally {
        await source.close();
      }
      return bad.count > 0 ? exitCodes.data : exitCodes.ok;
    }),
  );
}

/** `ckql fields [resource]`: the fields (names and types) of one resource, or of every known one. */
import type { Command } from 'commander';
import type { FieldInfo, Row, SearchResult } from '../../datastore/types.js';
import { toolError } from '../../errors.js';
import { formatRecords } from '../../output/format-records.js';
import type { OutputFormat } from '../../output/format-records.js';
import { interruptible } from '../interrupt.js';
import { badFileReporter } from '../report.js';
import type { CommandRun } from '../context.js';
import { addFormatOption, addSourceOptions, configLoader, defaultFormat, refuseTokenArgument } from '../options.js';
import type { SourceOptionValues } from '../options.js';
import { selectSource } from '../../session/select-source.js';
import { openSource } from '../../session/source.js';
import { fileProgressBar } from '../../output/progress-bar.js';

interface FieldsOptions extends SourceOptionValues {
  readonly format?: OutputFormat;
}

export function registerFields(program: Command, run: CommandRun): void {
  const command = program
    .command('fields')
    .description("list a resource's fields and their types (every known resource when none is named)")
    .argument('[resource]', 'a resource id or alias');
  addFormatOption(command, 'the fields').addHelpText(
    'after',
    `
Example:
  ckql fields courses`,
  );
  addSourceOptions(command).action(
    run(async (resource: string | undefined, options: FieldsOptions) => {
      const { context } = run;
      refuseTokenArgument(options);
      const { spec } = await selectSource(options, { config: configLoader(options, context), env: context.env, cwd: context.cwd });
      const progress = fileProgressBar(context.stderr, context.env);
      const onBadFile = badFileReporter(context, 'the other files are read').report;
      const source = await openSource(spec, resource === undefined ? { progress, onBadFile } : { resources: [resource], progress, onBadFile });
      try {
        const names = resource === undefined ? (await source.listResources()).map((each) => each.alias ?? each.id) : [resource];
        if (names.length === 0) {
          throw toolError('USAGE', ['this source does not know its resources yet; name one: ckql fields RESOURCE']);
        }
        const records: Row[] = [];
        await interruptible(async (signal) => {
          for (const name of names) {
            // `limit: 0` returns the field list and the total, and no records.
            const result = await source.client.search({ resource_id: name, limit: 0 }, { signal });
            for (const field of result.fields) {
              records.push(resource === undefined ? { resource: name, field: field.id, type: field.type } : { field: field.id, type: field.type });
            }
          }
        });
        const fields: FieldInfo[] = [
          ...(resource === undefined ? [{ id: 'resource', type: 'text' as const }] : []),
          { id: 'field', type: 'text' },
          { id: 'type', type: 'text' },
        ];
        await context.out(
          await formatRecords(listing(fields, records), options.format ?? defaultFormat(context), {
            color: context.color.stdout,
            width: context.width,
            pretty: context.stdout.isTTY === true,
          }),
        );
      } finally {
        await source.close();
      }
      return 0;
    }),
  );
}

/** A listing (fields, resources) as a result, so every output format can print it. */
export function listing(fields: readonly FieldInfo[], records: readonly Row[]): SearchResult {
  return {
    resource_id: '',
    fields,
    records,
    total: records.length,
    total_was_estimated: false,
    limit: records.length,
    include_total: true,
    records_format: 'objects',
  };
}

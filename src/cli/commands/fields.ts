/** `ckql fields [resource]`: the fields (names and types) of one resource, or of every known one. */
import type { Command } from 'commander';
import type { FieldInfo, Row, SearchResult } from '../../datastore/types.js';
import { DatastoreError, toolError } from '../../errors.js';
import { formatRecords } from '../../output/format-records.js';
import type { OutputFormat } from '../../output/format-records.js';
import { interruptible } from '../interrupt.js';
import { attachHint, badFileReporter } from '../report.js';
import { unknownResourceHint } from '../../session/field-hint.js';
import type { CommandRun } from '../context.js';
import { addFormatOption, addSourceOptions, configLoader, defaultFormat, refuseTokenArgument } from '../options.js';
import type { SourceOptionValues } from '../options.js';
import { selectSource } from '../../session/select-source.js';
import { openSource } from '../../session/source.js';
import { fileProgressBar } from '../../output/progress-bar.js';
import { readDictionary } from '../../client/dictionary.js';
import type { Dictionary } from '../../client/dictionary.js';
import { shortNotes } from '../../output/dictionary.js';

interface FieldsOptions extends SourceOptionValues {
  readonly format?: OutputFormat;
}

export function registerFields(program: Command, run: CommandRun): void {
  const command = program
    .command('fields')
    .description("list a resource's fields: types, the data dictionary (label, notes, type_override where it differs) and the record count (every known resource when none is named)")
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
        const dictionaries: Dictionary[] = [];
        try {
          await interruptible(async (signal) => {
            // One `limit: 0` search per resource gives its fields, their dictionary and the count; all at once
            // (the client keeps at most 3 requests in flight to a portal).
            dictionaries.push(...(await Promise.all(names.map((name) => readDictionary(source.client, name, signal)))));
          });
        } catch (error) {
          throw resource !== undefined && error instanceof DatastoreError ? attachHint(error, await unknownResourceHint(error, resource, source)) : error;
        }
        const format = options.format ?? defaultFormat(context);
        const described = dictionaries.some((d) => d.fields.some((f) => f.label !== undefined || f.notes !== undefined || f.typeOverride !== undefined));
        const records: Row[] = dictionaries.flatMap((dictionary) =>
          dictionary.fields.map((field) => ({
            ...(resource === undefined ? { resource: dictionary.resource } : {}),
            field: field.id,
            type: field.type,
            ...(described
              ? { label: field.label ?? null, notes: field.notes === undefined ? null : format === 'table' ? shortNotes(field.notes) : field.notes, type_override: field.typeOverride ?? null }
              : {}),
          })),
        );
        const fields: FieldInfo[] = [
          ...(resource === undefined ? [{ id: 'resource', type: 'text' as const }] : []),
          { id: 'field', type: 'text' },
          { id: 'type', type: 'text' },
          ...(described ? ([{ id: 'label', type: 'text' }, { id: 'notes', type: 'text' }, { id: 'type_override', type: 'text' }] as const) : []),
        ];
        const counts = dictionaries.map((d) => `${d.resource}: ${d.fields.length} fields${d.total === undefined ? '' : `, ${d.total} records`}`).join('; ');
        const atTerminal = format === 'table' && context.stdout.isTTY === true;
        await context.out(
          await formatRecords(listing(fields, records), format, {
            color: context.color.stdout,
            width: context.width,
            pretty: context.stdout.isTTY === true,
            noun: { one: 'field', many: 'fields' },
            ...(atTerminal ? { note: counts } : {}),
          }),
        );
        if (format === 'table' && !atTerminal) context.err(counts);
      } finally {
        await source.close();
      }
      return 0;
    }),
  );
}

/**
 * A listing (fields, resources) as a result, so every output format can
 * print it. It has no total: a table counts its rows by what they are
 * (`formatRecords`'s `noun`), not as "N of N records".
 */
export function listing(fields: readonly FieldInfo[], records: readonly Row[]): SearchResult {
  return {
    resource_id: '',
    fields,
    records,
    total_was_estimated: false,
    limit: records.length,
    include_total: true,
    records_format: 'objects',
  };
}

/**
 * `ckql export RESOURCE-or-QUERY -o FILE`: every record to a file, by the
 * cheapest path that gives each exactly once (session/export.ts), with a
 * progress bar on a terminal and the fields file beside it, so `ckql load`
 * makes the same table again.
 */
import { InvalidArgumentError, Option } from 'commander';
import type { Command } from 'commander';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { EXPORT_FORMATS, EXPORT_PATHS, exportFormatOf, exportRecords, isQueryText } from '../../session/export.js';
import type { ExportFormat, ExportPath } from '../../session/export.js';
import { fileProgressBar, progressBar } from '../../output/progress-bar.js';
import type { CommandRun } from '../context.js';
import { interruptible } from '../interrupt.js';
import { addParamOption, addSourceOptions, configLoader, integerOption, readQueryArgument, refuseTokenArgument } from '../options.js';
import type { SourceOptionValues } from '../options.js';
import { readParams, refuseUnknownParams } from '../../session/params.js';
import { DatastoreError } from '../../errors.js';
import { unknownResourceHint } from '../../session/field-hint.js';
import { refusalInQuery } from '../../session/schema.js';
import { attachHint } from '../report.js';
import { selectSource } from '../../session/select-source.js';
import { openSource, relativeLabel } from '../../session/source.js';

interface ExportCommandOptions extends SourceOptionValues {
  readonly output: string;
  readonly format?: ExportFormat;
  readonly resume?: boolean;
  readonly fieldsFile: boolean;
  readonly bom?: boolean;
  readonly pageSize?: number;
  readonly via?: ExportPath;
  readonly param: readonly string[];
}

function choice<T extends string>(name: string, values: readonly T[]): (value: string) => T {
  return (value) => {
    if (!(values as readonly string[]).includes(value)) throw new InvalidArgumentError(`${name} must be one of ${values.join(', ')}.`);
    return value as T;
  };
}

export function registerExport(program: Command, run: CommandRun): void {
  const command = program
    .command('export')
    .description('write every record of a resource or a query to a file (the portal\'s dump where it can, else keyset or _id-ordered pages), and its fields file beside it')
    .argument('<resource-or-query>', 'a resource id, alias or "dataset/resource" name, or a query (from …); - reads it from stdin')
    .requiredOption('-o, --output <file>', 'the file to write (written as FILE.part, renamed at the end)')
    .addOption(new Option('--format <format>', `${EXPORT_FORMATS.join(', ')} (default: from the file's extension, else csv)`).argParser(choice('--format', EXPORT_FORMATS)))
    .option('--resume', 'go on from FILE.part, left by an export cut short, after its last whole record')
    .option('--no-fields-file', 'do not write NAME.fields.json (types, data dictionary, id and aliases) beside the file')
    .option('--bom', 'csv/tsv: start with a UTF-8 BOM, for spreadsheets')
    .option('--page-size <n>', 'records per request when paging (default 10000)', integerOption('--page-size', 1, 32_000))
    .addOption(new Option('--via <path>', `take this path instead of the cheapest, where it gives the query's records: ${EXPORT_PATHS.join(', ')}`).argParser(choice('--via', EXPORT_PATHS)));
  addParamOption(command).addHelpText(
    'after',
    `
Values are written as the portal gives them (no spreadsheet formula escaping: the file is a copy).

Examples:
  ckql export "air-quality/measurements 2023" -o measurements.csv --url https://data.example.org
  ckql export 'from courses where stage = active' -o active.ndjson --data examples/data
  ckql export courses -o courses.csv --resume           # after Ctrl-C or a dropped connection
  ckql load courses.csv --db ./ckql-db                  # the same table again (courses.fields.json beside it)`,
  );
  addSourceOptions(command).action(
    run(async (text: string, options: ExportCommandOptions) => {
      const { context } = run;
      refuseTokenArgument(options);
      const input = await readQueryArgument(text, context);
      const params = readParams(options.param);
      const isQuery = isQueryText(input);
      if (isQuery) refuseUnknownParams(input, Object.keys(params), '--param');
      const { spec } = await selectSource(options, { config: configLoader(options, context), env: context.env, cwd: context.cwd });
      const source = await openSource(spec, { progress: fileProgressBar(context.stderr, context.env) });
      const file = resolve(context.cwd, options.output);
      const format = options.format ?? exportFormatOf(file);
      const bar = progressBar(context.stderr, context.env);
      try {
        const summary = await interruptible((signal) =>
          exportRecords({
            client: source.client,
            input,
            ...(Object.keys(params).length === 0 ? {} : { params }),
            file,
            format,
            resume: options.resume === true,
            fieldsFile: options.fieldsFile,
            ...(options.bom === true ? { bom: true } : {}),
            ...(options.pageSize === undefined ? {} : { pageSize: options.pageSize }),
            ...(options.via === undefined ? {} : { path: options.via }),
            signal,
            onProgress: (progress) =>
              bar.update({
                label: `export (${progress.path})`,
                rows: progress.written,
                fraction: progress.total === undefined || progress.total === 0 ? 0 : progress.written / progress.total,
                ...(progress.total === undefined ? {} : { totalRows: progress.total }),
              }),
          }),
        ).finally(() => bar.done());
        const resumed = summary.resumed === undefined ? '' : ` (${summary.resumed} were there from before)`;
        const fields = summary.fieldsFile === undefined ? '' : `; fields: ${relativeLabel(summary.fieldsFile)}`;
        context.err(
          `exported ${summary.records.toLocaleString('en-US')} record${summary.records === 1 ? '' : 's'}${resumed} to ${relativeLabel(summary.file)} ` +
            `(${summary.format}) in ${summary.requests} request${summary.requests === 1 ? '' : 's'} by ${summary.path}${fields}`,
        );
      } catch (error) {
        // What was written stays in FILE.part for --resume.
        if (existsSync(`${file}.part`)) context.err(`the records written so far are in ${relativeLabel(`${file}.part`)}; --resume goes on from there`);
        // A resource the source does not have: the one meant, under the query as ckql query shows it, or as ckql fields hints it.
        const told = isQuery ? await refusalInQuery(error, input, source, params) : undefined;
        if (told !== undefined) throw told;
        if (!isQuery && error instanceof DatastoreError) throw attachHint(error, await unknownResourceHint(error, input.trim(), source));
        throw error;
      } finally {
        await source.close();
      }
      return 0;
    }),
  );
}

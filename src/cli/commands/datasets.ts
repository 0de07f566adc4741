/**
 * `ckql datasets [TEXT] [--org O] [--datastore] [--all]`: the portal's
 * catalogue (`package_search`): each dataset with its resources, their ids
 * and a ✓ where the datastore holds the records. The first page and the
 * count by default; `--all` pages through every match, 1,000 per request.
 */
import { InvalidArgumentError } from 'commander';
import type { Command } from 'commander';
import { allDatasets, searchDatasets } from '../../client/discovery.js';
import type { DatasetSummary } from '../../client/discovery.js';
import { datasetRecord, datasetsText } from '../../output/datasets.js';
import type { OutputFormat } from '../../output/format-records.js';
import type { CommandRun } from '../context.js';
import { interruptible } from '../interrupt.js';
import { addFormatOption, addSourceOptions, configLoader, defaultFormat, integerOption, refuseTokenArgument } from '../options.js';
import type { SourceOptionValues } from '../options.js';
import { selectSource } from '../../session/select-source.js';
import { openSource } from '../../session/source.js';
import { fileProgressBar } from '../../output/progress-bar.js';

interface DatasetsOptions extends SourceOptionValues {
  readonly org?: string;
  readonly fq?: string;
  readonly datastore?: boolean;
  readonly all?: boolean;
  readonly rows?: number;
  readonly sort?: string;
  readonly format?: OutputFormat;
}

/** An option that names something: empty (an unset shell variable) would silently mean "every one". */
function nonEmpty(name: string): (value: string) => string {
  return (value) => {
    if (value.trim() === '') throw new InvalidArgumentError(`${name} needs a name; leave it out for every one.`);
    return value;
  };
}

export function registerDatasets(program: Command, run: CommandRun): void {
  const command = program
    .command('datasets')
    .description("search the portal's catalogue (package_search): datasets, their resources and ids, ✓ where the datastore holds the records")
    .argument('[text...]', 'words to search for (every dataset when none)')
    .option('--org <name>', "only this organisation's datasets", nonEmpty('--org'))
    .option('--fq <filter>', 'a Solr filter the portal applies, e.g. res_format:CSV')
    .option('--datastore', 'only datasets with a resource in the datastore (checked after fetching: portals do not index it)')
    .option('--all', 'every match, 1,000 per request (default: the first page and the count)')
    .option('--rows <n>', 'datasets on the first page (default 20, at most 1000)', integerOption('--rows', 1, 1_000))
    .option('--sort <sort>', "the portal's sort, e.g. 'metadata_modified desc' or 'name asc'");
  addFormatOption(command, 'the datasets').addHelpText(
    'after',
    `
Examples:
  ckql datasets air quality --url https://data.example.org
  ckql datasets --org environment --datastore --all --format ndjson
  ckql query 'from "air-quality/measurements 2023" limit 5'   # a resource by dataset and name`,
  );
  addSourceOptions(command).action(
    run(async (words: readonly string[], options: DatasetsOptions) => {
      const { context } = run;
      refuseTokenArgument(options);
      const { spec } = await selectSource(options, { config: configLoader(options, context), env: context.env, cwd: context.cwd });
      const source = await openSource(spec, { progress: fileProgressBar(context.stderr, context.env) });
      const format = options.format ?? defaultFormat(context);
      const textOptions = { color: context.color.stdout, width: context.width, pretty: context.stdout.isTTY === true };
      const text = words.join(' ').trim();
      const query = {
        ...(text === '' ? {} : { text }),
        ...(options.org === undefined ? {} : { organization: options.org }),
        ...(options.fq === undefined ? {} : { filter: options.fq }),
        ...(options.sort === undefined ? {} : { sort: options.sort }),
      };
      const keep = (dataset: DatasetSummary): boolean => options.datastore !== true || dataset.resources.some((resource) => resource.datastoreActive);
      try {
        await interruptible(async (signal) => {
          if (options.all !== true) {
            const page = await searchDatasets(source.client, { ...query, ...(options.rows === undefined ? {} : { rows: options.rows }), signal });
            const shown = page.datasets.filter(keep);
            await context.out(await datasetsText(shown, format, textOptions));
            const filtered = shown.length === page.datasets.length ? '' : ` (${page.datasets.length - shown.length} without a datastore resource left out)`;
            if (page.count > page.datasets.length) context.err(`note: ${page.datasets.length} of ${page.count} datasets${filtered}; --all for every one`);
            else if (format === 'table') context.err(`${page.count} dataset${page.count === 1 ? '' : 's'}${filtered}`);
            return;
          }
          // Every match: ndjson and csv stream as pages come; the other formats need them all first.
          const streaming = format === 'ndjson';
          const found: DatasetSummary[] = [];
          let count = 0;
          const progress = progressLine(context);
          try {
            for await (const dataset of allDatasets(source.client, { ...query, signal, onPage: ({ fetched, count: all }) => progress(fetched, all) })) {
              if (!keep(dataset)) continue;
              count++;
              if (streaming) await context.out(`${JSON.stringify(datasetRecord(dataset))}\n`);
              else found.push(dataset);
            }
          } finally {
            progress();
          }
          if (!streaming) await context.out(await datasetsText(found, format, textOptions));
          if (format === 'table') context.err(`${count} dataset${count === 1 ? '' : 's'}`);
        });
      } finally {
        await source.close();
      }
      return 0;
    }),
  );
}

/** `fetched 3000 of 5000 datasets` on a terminal's stderr, rewritten in place; called with nothing, it clears the line. */
function progressLine(context: CommandRun['context']): (fetched?: number, count?: number) => void {
  if (context.stderr.isTTY !== true) return () => undefined;
  let shown = false;
  return (fetched, count) => {
    if (fetched === undefined) {
      if (shown) context.stderr.write('\r\u001b[2K');
      return;
    }
    context.stderr.write(`\r\u001b[2Kfetched ${fetched}${count === undefined ? '' : ` of ${count}`} datasets`);
    shown = true;
  };
}

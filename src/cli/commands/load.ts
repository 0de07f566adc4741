/**
 * `ckql load FILE… --db URL|DIR`: creates (or with `--replace` replaces)
 * resources in a PostgreSQL datastore, in CKAN's table layout, with `COPY`
 * in batches, one transaction per resource (Ctrl-C leaves no half-made
 * table). A progress bar on a terminal shows rows, rows/s and the ETA.
 */
import type { Command } from 'commander';
import { resolve } from 'node:path';
import type { Db } from '../../engine/sql/db.js';
import type { LoadProgress } from '../../engine/sql/load.js';
import { toolError } from '../../errors.js';
import type { CliContext, CommandRun } from '../context.js';
import { interruptible } from '../interrupt.js';
import { progressBar as terminalProgressBar } from '../../output/progress-bar.js';
import type { InferMode } from '../../engine/declared.js';
import { inferOption } from './serve.js';

interface LoadOptions {
  readonly db?: string;
  readonly replace?: boolean;
  readonly alias?: string;
  readonly private?: boolean;
  readonly indexes?: boolean;
  readonly fields?: string;
  readonly infer?: InferMode;
}

export function registerLoad(program: Command, run: CommandRun): void {
  program
    .command('load')
    .description('load .csv/.json/.ndjson files into a PostgreSQL datastore (CKAN\'s table layout)')
    .argument('<files...>', 'files, or folders of files; each file is one resource named after it')
    .option('--db <url|dir>', 'postgres://… (unset parts from PG* variables), or a directory keeping a PGlite database')
    .option('--replace', 'replace resources of the same name')
    .option('--alias <name>', 'the resource\'s alias (one file only; default: the file name)')
    .option('--private', 'mark the loaded resources private (a server asks for a token)')
    .option('--no-indexes', 'skip CKAN\'s full-text indexes (faster loads; same answers, slower q on large tables)')
    .option('--fields <file>', "the declared types of the one file (CKAN's datastore_create fields, or a Table Schema); default: NAME.fields.json beside it")
    .option('--infer <mode>', 'how columns nothing declares are typed: ckql (default), xloader (all text) or datapusher (numeric, timestamp, text)', inferOption)
    .addHelpText(
      'after',
      `
Examples:
  ckql load examples/data --db ./ckql-db             # a PGlite database kept in ./ckql-db
  ckql load big.csv --db postgres://ckan@db/datastore --replace --alias big
  ckql serve --db ./ckql-db --engine pglite`,
    )
    .action(
      run(async (files: readonly string[], options: LoadOptions) => {
        const { context } = run;
        const target = options.db ?? (context.env['PGHOST'] !== undefined || context.env['PGDATABASE'] !== undefined ? undefined : null);
        if (target === null) {
          throw toolError('USAGE', ['ckql load needs --db postgres://… or --db DIR (a PGlite database)'], { hint: 'or set PGHOST/PGDATABASE for a server' });
        }
        const isUrl = target !== undefined && /^postgres(ql)?:\/\//.test(target);
        // The drivers load on demand, so other commands do not pay for them at start-up.
        const db: Db = target === undefined || isUrl
          ? await (await import('../../engine/postgres/db.js')).openPostgres(target === undefined ? {} : { url: target })
          : await (await import('../../engine/pglite/db.js')).openPglite(resolve(context.cwd, target));
        const { loadFiles } = await import('../../engine/sql/load-files.js');
        const progress = progressBar(context);
        let loaded: Awaited<ReturnType<typeof loadFiles>>;
        try {
          // Files are streamed (CSV) into COPY, so a file larger than memory loads.
          loaded = await interruptible((signal) =>
            loadFiles(db, files.map((file) => resolve(context.cwd, file)), {
              replace: options.replace === true,
              indexes: options.indexes !== false,
              onProgress: progress.update,
              signal,
              ...(options.alias === undefined ? {} : { alias: options.alias }),
              ...(options.private === true ? { private: true as const } : {}),
              ...(options.fields === undefined ? {} : { fields: resolve(context.cwd, options.fields) }),
              ...(options.infer === undefined ? {} : { infer: options.infer }),
            }),
          );
        } finally {
          progress.done();
          await db.close();
        }
        const rows = loaded.reduce((sum, t) => sum + t.rows, 0);
        context.err(`loaded ${loaded.length} resource${loaded.length === 1 ? '' : 's'} (${rows} rows): ${loaded.map((t) => `${t.alias} ${t.id}`).join(', ')}`);
        return 0;
      }),
    );
}

/** A one-line bar on a terminal's stderr (rows, rows/s, time left); nothing when stderr is not a terminal, or in CI. */
function progressBar(context: CliContext): { update: (p: LoadProgress) => void; done: () => void } {
  const bar = terminalProgressBar(context.stderr, context.env);
  return {
    update: (p) =>
      bar.update(
        p.reading === undefined
          ? { label: p.resource, rows: p.rows, totalRows: p.totalRows, fraction: p.totalRows === 0 ? 1 : p.rows / p.totalRows }
          : // The type pass: a share of the file's bytes (the row count is not known yet).
            { label: `reading ${p.resource}`, rows: p.rows, fraction: p.reading.totalBytes === 0 ? 1 : p.reading.bytes / p.reading.totalBytes },
      ),
    done: () => bar.done(),
  };
}

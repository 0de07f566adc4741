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
import { exitCodes } from '../exit-codes.js';
import { badFileReporter } from '../report.js';
import { countText } from '../../output/count-text.js';
import { progressBar as terminalProgressBar } from '../../output/progress-bar.js';
import type { InferMode } from '../../engine/declared.js';
import type { InvalidUtf8 } from '../../engine/types.js';
import { inferOption, invalidUtf8Option } from './serve.js';

interface LoadOptions {
  readonly engine?: string;
  readonly db?: string;
  readonly dbDir?: string;
  readonly replace?: boolean;
  readonly alias?: string;
  readonly private?: boolean;
  readonly indexes?: boolean;
  readonly fields?: string;
  readonly infer?: InferMode;
  readonly invalidUtf8?: InvalidUtf8;
}

export function registerLoad(program: Command, run: CommandRun): void {
  program
    .command('load')
    .description('load .csv/.json/.ndjson files into a PostgreSQL datastore (CKAN\'s table layout)')
    .argument('<files...>', 'files, or folders of files; each file is one resource named after it')
    .option('--db <url|dir>', 'postgres://… (unset parts from PG* variables), or a directory keeping a PGlite database')
    .option('--db-dir <dir>', 'the directory keeping a PGlite database (as --db DIR)')
    .option('--engine <name>', 'pglite (a database in a directory) or postgres (a server: --db postgres://… or the PG* variables); default: what --db names')
    .option('--replace', 'replace resources of the same name')
    .option('--alias <name>', 'the resource\'s alias (one file only; default: the file name)')
    .option('--private', 'mark the loaded resources private (a server asks for a token)')
    .option('--no-indexes', 'skip CKAN\'s full-text indexes (faster loads; same answers, slower q on large tables)')
    .option('--fields <file>', "the declared types of the one file (CKAN's datastore_create fields, or a Table Schema); default: NAME.fields.json beside it")
    .option('--infer <mode>', 'how columns nothing declares are typed: ckql (default), xloader (all text) or datapusher (numeric, timestamp, text)', inferOption)
    .option('--invalid-utf8 <mode>', 'bytes that are not UTF-8: refuse (default; the error names the line and byte) or replace (each read as U+FFFD)', invalidUtf8Option)
    .addHelpText(
      'after',
      `
Examples:
  ckql load examples/data --db ./ckql-db             # a PGlite database kept in ./ckql-db
  ckql load examples/data --engine pglite --db-dir ./ckql-db   # the same, as serve and query spell it
  ckql load big.csv --db postgres://ckan@db/datastore --replace --alias big
  ckql serve --db ./ckql-db --engine pglite`,
    )
    .action(
      run(async (files: readonly string[], options: LoadOptions) => {
        const { context } = run;
        const target = loadTarget(options, context);
        // The drivers load on demand, so other commands do not pay for them at start-up.
        const db: Db = target.engine === 'postgres'
          ? await (await import('../../engine/postgres/db.js')).openPostgres(target.url === undefined ? {} : { url: target.url })
          : await (await import('../../engine/pglite/thread-db.js')).openPglite(resolve(context.cwd, target.dir));
        const { loadFiles } = await import('../../engine/sql/load-files.js');
        const progress = progressBar(context);
        // A file that cannot be loaded is reported and rolled back; the others are loaded, and the status says one failed.
        const bad = badFileReporter(context, 'not loaded; the other files are');
        let loaded: Awaited<ReturnType<typeof loadFiles>>;
        try {
          // Files are streamed (CSV) into COPY, so a file larger than memory loads.
          loaded = await interruptible((signal) =>
            loadFiles(db, files.map((file) => resolve(context.cwd, file)), {
              replace: options.replace === true,
              indexes: options.indexes !== false,
              onProgress: progress.update,
              onBadFile: (error) => {
                progress.done();
                bad.report(error);
              },
              signal,
              ...(options.alias === undefined ? {} : { alias: options.alias }),
              ...(options.private === true ? { private: true as const } : {}),
              ...(options.fields === undefined ? {} : { fields: resolve(context.cwd, options.fields) }),
              ...(options.infer === undefined ? {} : { infer: options.infer }),
              ...(options.invalidUtf8 === undefined ? {} : { invalidUtf8: options.invalidUtf8 }),
            }),
          );
        } finally {
          progress.done();
          await db.close();
        }
        const rows = loaded.reduce((sum, t) => sum + t.rows, 0);
        context.err(`loaded ${countText(loaded.length, 'resource')} (${countText(rows, 'row')}): ${loaded.map((t) => `${t.alias} ${t.id}`).join(', ')}`);
        if (bad.count > 0) {
          context.err(`${countText(bad.count, 'file')} could not be loaded (above)`);
          return exitCodes.data;
        }
        return 0;
      }),
    );
}

/**
 * Where `ckql load` writes, from `--db`, `--db-dir` and `--engine` (read as
 * every other command reads them): a PGlite database in a directory, or a
 * PostgreSQL server by URL or by the `PG*` variables.
 */
function loadTarget(options: LoadOptions, context: CliContext): { engine: 'pglite'; dir: string } | { engine: 'postgres'; url?: string } {
  if (options.engine !== undefined && !['pglite', 'postgres', 'memory'].includes(options.engine)) {
    throw toolError('USAGE', [`--engine must be one of memory, pglite, postgres, found ${JSON.stringify(options.engine)}`]);
  }
  if (options.engine === 'memory') {
    throw toolError('USAGE', ['ckql load writes into a database; the memory engine reads the files each time it starts'], {
      hint: 'query the files as they are with --data DIR, or load them with --engine pglite --db DIR (or --db postgres://…)',
    });
  }
  if (options.db !== undefined && options.dbDir !== undefined) throw toolError('USAGE', ['--db and --db-dir both name a database; give only one']);
  const url = options.db !== undefined && /^postgres(ql)?:\/\//.test(options.db) ? options.db : undefined;
  const dir = options.dbDir ?? (url === undefined ? options.db : undefined);
  const fromEnvironment = context.env['PGHOST'] !== undefined || context.env['PGDATABASE'] !== undefined;
  const engine = options.engine ?? (url !== undefined ? 'postgres' : dir !== undefined ? 'pglite' : fromEnvironment ? 'postgres' : undefined);
  if (engine === 'postgres') {
    if (dir !== undefined) throw toolError('USAGE', ['--engine postgres needs --db postgres://…, not a directory'], { hint: 'or leave --db out: the PG* environment variables say where the server is' });
    return url === undefined ? { engine } : { engine, url };
  }
  if (engine === 'pglite' && url !== undefined) throw toolError('USAGE', ['--engine pglite keeps its database in a directory: --db DIR or --db-dir DIR'], { hint: 'or --engine postgres for a server' });
  if (dir === undefined) {
    throw toolError('USAGE', ['ckql load needs a database: --db DIR (a PGlite database) or --db postgres://…'], { hint: 'or set PGHOST/PGDATABASE for a server' });
  }
  return { engine: 'pglite', dir };
}

/**
 * A one-line bar on a terminal's stderr (rows, rows/s, time left, then the
 * indexes being built, with the seconds ticking); nothing when stderr is
 * not a terminal, or in CI.
 */
function progressBar(context: CliContext): { update: (p: LoadProgress) => void; done: () => void } {
  const bar = terminalProgressBar(context.stderr, context.env);
  // An index is one statement that says nothing until it ends: the bar is redrawn each second meanwhile.
  let ticking: NodeJS.Timeout | undefined;
  const stopTicking = (): void => {
    clearInterval(ticking);
    ticking = undefined;
  };
  const update = (p: LoadProgress): void => {
    stopTicking();
    if (p.indexing !== undefined) {
      const { done, total } = p.indexing;
      const shown = {
        label: `indexing ${p.resource}`,
        rows: p.rows,
        fraction: total === 0 ? 1 : done / total,
        detail: done < total ? `full-text index ${done + 1} of ${total} (--no-indexes skips them)` : `${countText(total, 'index', 'indexes')} built`,
      };
      bar.update(shown);
      if (done < total) ticking = setInterval(() => bar.update(shown), 1000).unref();
      return;
    }
    bar.update(
      p.reading === undefined
        ? { label: p.resource, rows: p.rows, totalRows: p.totalRows, fraction: p.totalRows === 0 ? 1 : p.rows / p.totalRows }
        : // The type pass: a share of the file's bytes (the row count is not known yet).
          { label: `reading ${p.resource}`, rows: p.rows, fraction: p.reading.totalBytes === 0 ? 1 : p.reading.bytes / p.reading.totalBytes },
    );
  };
  return {
    update,
    done: () => {
      stopTicking();
      bar.done();
    },
  };
}

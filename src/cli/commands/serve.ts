/**
 * `ckql serve <dir|file>…`: the local datastore_search server, with the
 * playground page at `/`. Prints exactly one line on stdout, `listening on
 * http://HOST:PORT`, and stops cleanly on SIGINT or SIGTERM (exit 0).
 */
import { InvalidArgumentError } from 'commander';
import type { Command } from 'commander';
import { relative, resolve } from 'node:path';
import { loadResources } from '../../engine/node/load-resources.js';
import { openEngine } from '../../engine/open.js';
import type { EngineKind } from '../../engine/types.js';
import { toolError } from '../../errors.js';
import { startServer } from '../../server/server.js';
import type { PlaygroundActions } from '../../server/playground.js';
import type { CommandRun } from '../context.js';
import { countOption, integerOption, readOptionFile } from '../options.js';
import { INFER_MODES } from '../../engine/declared.js';
import type { InferMode } from '../../engine/declared.js';
import { INVALID_UTF8_MODES } from '../../engine/types.js';
import type { InvalidUtf8 } from '../../engine/types.js';
import { badFileReporter } from '../report.js';
import { fileProgressBar } from '../../output/progress-bar.js';
import { memoryEngine } from '../../engine/memory/engine.js';
import { packageVersion } from '../version.js';
import { untilStopped } from '../interrupt.js';

interface ServeOptions {
  readonly host: string;
  readonly port: number;
  readonly languages?: readonly string[];
  readonly maxLimit?: number;
  readonly maxBody?: number;
  readonly tokensFile?: string;
  readonly sqlFunctions?: string;
  readonly statementTimeout?: number;
  readonly private?: readonly string[];
  readonly log?: boolean;
  readonly engine?: string;
  readonly db?: string;
  readonly dbDir?: string;
  readonly ckan?: '2.11' | '2.12';
  readonly fields?: string;
  readonly infer?: InferMode;
  readonly invalidUtf8?: InvalidUtf8;
  readonly playground: boolean;
  readonly allowHost?: readonly string[];
  readonly maxJoinRows?: number;
}

/** PGlite's threads under `ckql serve` (engine/pglite/thread-db.ts); each holds a copy of the database. */
const PGLITE_THREADS = 2;

export function registerServe(program: Command, run: CommandRun): void {
  program
    .command('serve')
    .description('serve local .csv/.json/.ndjson files over the datastore_search HTTP API')
    .argument('[paths...]', 'files, or folders of files; each file is one resource named after it')
    .option('--engine <name>', 'who answers: memory (default), pglite (PostgreSQL in the process, answers as a portal) or postgres')
    .option('--db <url|dir>', 'serve a PostgreSQL datastore (postgres://…, read-only as it is), or a kept PGlite database')
    .option('--db-dir <dir>', 'keep the PGlite database in this directory between runs')
    .option('--host <host>', 'address to listen on', '127.0.0.1')
    .option('--port <port>', 'port to listen on; 0 picks a free one', integerOption('--port', 0, 65_535), 8080)
    .option('--languages <list>', 'language segments accepted before /api (default en,de)', listOption('--languages'))
    .option('--max-limit <n>', 'cap on a request\'s limit (default 32000)', integerOption('--max-limit', 1))
    .option('--max-body <size>', 'largest POST body, e.g. 1MiB, 512KiB or bytes (default 1MiB)', sizeOption)
    .option('--tokens-file <file>', 'API tokens, one per line, that open private resources')
    .option('--sql-functions <file>', 'functions datastore_search_sql may call, one per line, as CKAN\'s allowed_functions_file (pglite/postgres; default CKAN\'s list)')
    .option('--statement-timeout <ms>', "how long one SQL statement of a search may run before it is stopped and answered 409 as CKAN does (pglite/postgres; default 60000, CKAN's)", integerOption('--statement-timeout', 1))
    .option('--private <names>', 'resource ids or aliases that need a token (comma-separated)', listOption('--private'))
    .option('--log', 'print one line per request on stderr (never headers or tokens)')
    .option('--ckan <version>', 'answer as CKAN 2.11 (default: _links, total_estimation_threshold) or 2.12 (filter operators, next_page)', ckanOption)
    .option('--fields <file>', "the declared types of the one data file (CKAN's datastore_create fields, or a Table Schema); default: NAME.fields.json beside it")
    .option('--infer <mode>', 'how columns nothing declares are typed: ckql (default), xloader (all text) or datapusher (numeric, timestamp, text)', inferOption)
    .option('--invalid-utf8 <mode>', 'bytes that are not UTF-8: refuse (default; the error names the line and byte) or replace (each read as U+FFFD)', invalidUtf8Option)
    .option('--no-playground', 'serve the API only, without the playground page at /')
    .option('--max-join-rows <rows>', "the most rows a join of the playground's queries may give (default 10000000)", countOption('--max-join-rows', 'rows'))
    .option('--allow-host <names>', 'host names the playground answers to besides IP addresses and localhost, e.g. this machine\'s name with --host 0.0.0.0 (comma-separated)', listOption('--allow-host'))
    .addHelpText(
      'after',
      `
The playground (a page to write, run, explain and share queries) is at the
printed address, e.g. http://127.0.0.1:8080/.

Example:
  ckql serve examples/data --port 8080
  curl 'http://127.0.0.1:8080/api/action/datastore_search?resource_id=courses&limit=2'`,
    )
    .action(
      run(async (paths: readonly string[], options: ServeOptions) => {
        const { context } = run;
        const data = paths.map((path) => resolve(context.cwd, path));
        const { engine: engineName, db } = engineChoice(options, context.cwd);
        if (data.length === 0 && db === undefined && engineName !== 'postgres') {
          throw toolError('USAGE', ['ckql serve needs files or folders to serve, or --db'], { hint: 'ckql serve examples/data, or ckql serve --db postgres://…' });
        }
        const typing = {
          ...(options.fields === undefined ? {} : { fields: resolve(context.cwd, options.fields) }),
          ...(options.infer === undefined ? {} : { infer: options.infer }),
          ...(options.invalidUtf8 === undefined ? {} : { invalidUtf8: options.invalidUtf8 }),
        };
        const sqlFunctions = options.sqlFunctions === undefined ? undefined : (await readOptionFile('--sql-functions', resolve(context.cwd, options.sqlFunctions))).split(/\r?\n/);
        if (sqlFunctions !== undefined && engineName === 'memory' && db === undefined) {
          throw toolError('USAGE', ['--sql-functions applies to datastore_search_sql, which the memory engine does not serve'], { hint: 'add --engine pglite, or --db postgres://…' });
        }
        if (options.statementTimeout !== undefined && engineName === 'memory' && db === undefined) {
          throw toolError('USAGE', ['--statement-timeout bounds the SQL of the PostgreSQL engines; the memory engine runs none'], { hint: 'add --engine pglite, or --db postgres://…' });
        }
        // A file that cannot be read is reported and left out; the others are served.
        const bad = badFileReporter(context, 'the other files are served without it');
        const engine =
          engineName === 'memory' && db === undefined
            ? undefined
            : await openEngine({
                engine: engineName,
                data,
                onBadFile: bad.report,
                ...(db === undefined ? {} : { db }),
                ...(sqlFunctions === undefined ? {} : { allowedSqlFunctions: sqlFunctions }),
                ...(options.statementTimeout === undefined ? {} : { statementTimeout: options.statementTimeout }),
                // A reader beside the thread that holds the database: one long statement holds up only its own.
                threads: PGLITE_THREADS,
                ...typing,
              });
        const bar = fileProgressBar(context.stderr, context.env);
        const tables = engine === undefined ? await loadResources(data, { onProgress: bar.update, ...typing, onBadFile: (error) => {
          // the bar's line is cleared first, and drawn again under the report
          bar.done();
          bad.report(error);
        } }).finally(bar.done) : [];
        if (bad.count > 0 && (engine === undefined ? tables.length === 0 : (await engine.resources()).length === 0)) {
          await engine?.close();
          throw toolError('DATA_INVALID', [data.join(', '), 'no file could be read, so there is nothing to serve'], { hint: 'fix the files above' });
        }
        const tokens = options.tokensFile === undefined ? undefined : readTokens(await readOptionFile('--tokens-file', options.tokensFile));
        const locked = options.private ?? [];
        if (locked.length > 0 && (tokens === undefined || tokens.length === 0)) {
          // Not an error (a resource may be kept from everyone on purpose), but rarely what was meant.
          const [what, them] = locked.length === 1 ? ['resource', 'it'] : ['resources', 'them'];
          const where = tokens === undefined ? 'give the tokens with --tokens-file FILE' : `--tokens-file ${options.tokensFile} holds none`;
          context.err(`warning: no token opens the private ${what} ${locked.join(', ')}: nobody can read ${them}; ${where} (one per line)`);
        }
        // One engine for the API and the playground's queries (which go to the API in this process).
        const answering = engine ?? memoryEngine(tables);
        let publicUrl = '';
        // The playground's actions (and yaml, for their config entries) load only when it is served.
        let actions: (PlaygroundActions & { close(): Promise<void> }) | undefined;
        if (options.playground) {
          const [{ playgroundActions }, { servedSource }] = await Promise.all([import('../playground.js'), import('../playground-sources.js')]);
          actions = playgroundActions({
            sources: [servedSource(answering, { url: () => publicUrl, ckan: options.ckan ?? '2.11', ...(options.maxJoinRows === undefined ? {} : { maxJoinRows: options.maxJoinRows }), label: engine === undefined ? `local data (${data.map((path) => relativeTo(context.cwd, path)).join(', ')})` : engine.label })],
            defaultSource: 'local',
            version: packageVersion(),
          });
        }
        const server = await startServer({
          engine: answering,
          ...(actions === undefined ? {} : { playground: { actions, ...(options.allowHost === undefined ? {} : { allowedHosts: options.allowHost }) } }),
          host: options.host,
          port: options.port,
          ...(options.languages === undefined ? {} : { languages: options.languages }),
          ...(options.maxLimit === undefined ? {} : { maxLimit: options.maxLimit }),
          ...(options.maxBody === undefined ? {} : { maxBody: options.maxBody }),
          ...(tokens === undefined ? {} : { tokens }),
          ...(options.private === undefined ? {} : { privateResources: options.private }),
          ...(options.log === true ? { log: (line: string) => context.err(line) } : {}),
          ...(options.ckan === undefined ? {} : { ckan: options.ckan }),
        }).catch((error: unknown) => {
          const code = (error as NodeJS.ErrnoException).code;
          if (code === 'EADDRINUSE' || code === 'EACCES' || code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND') {
            const why = { EADDRINUSE: 'the port is in use', EACCES: 'permission denied', EADDRNOTAVAIL: 'no such address here', ENOTFOUND: 'unknown host' }[code];
            throw toolError('USAGE', [`cannot listen on ${options.host}:${options.port}: ${why}`], {
              hint: code === 'EADDRINUSE' ? 'choose another --port, or --port 0 for a free one' : undefined,
              cause: error,
            });
          }
          throw error;
        });
        publicUrl = server.url;
        const stopped = untilStopped();
        await context.out(`listening on ${server.url}\n`);
        if (actions !== undefined) context.err(`playground: ${server.url}/`);
        const served = engine === undefined
          ? tables.map((table) => `${table.aliases[0] ?? table.id} (${table.rows.length})`)
          : (await engine.resources()).map((r) => r.aliases[0] ?? r.id);
        context.err(`serving ${served.length} resource${served.length === 1 ? '' : 's'}${engine === undefined ? '' : ` with ${engine.label}`}: ${served.join(', ')}`);
        await stopped;
        await server.close();
        await actions?.close();
        await engine?.close();
        return 0;
      }),
    );
}

/** `--infer ckql|xloader|datapusher`. */
export function inferOption(value: string): InferMode {
  if (!(INFER_MODES as readonly string[]).includes(value)) throw new InvalidArgumentError(`use one of ${INFER_MODES.join(', ')}, not ${JSON.stringify(value)}`);
  return value as InferMode;
}

/** `--invalid-utf8 refuse|replace`. */
export function invalidUtf8Option(value: string): InvalidUtf8 {
  if (!(INVALID_UTF8_MODES as readonly string[]).includes(value)) throw new InvalidArgumentError(`use one of ${INVALID_UTF8_MODES.join(', ')}, not ${JSON.stringify(value)}`);
  return value as InvalidUtf8;
}

function relativeTo(cwd: string, path: string): string {
  const shown = relative(cwd, path);
  return shown === '' ? '.' : shown.startsWith('..') ? path : shown;
}

function ckanOption(value: string): '2.11' | '2.12' {
  if (value !== '2.11' && value !== '2.12') throw new InvalidArgumentError(`use 2.11 or 2.12, not ${JSON.stringify(value)}`);
  return value;
}

/** `--engine`, `--db`, `--db-dir`: a `postgres://` URL means `postgres`, a directory `pglite`. */
function engineChoice(options: ServeOptions, cwd: string): { engine: EngineKind; db?: string } {
  const kinds: readonly EngineKind[] = ['memory', 'pglite', 'postgres'];
  if (options.engine !== undefined && !kinds.includes(options.engine as EngineKind)) {
    throw toolError('USAGE', [`--engine must be one of ${kinds.join(', ')}, found ${JSON.stringify(options.engine)}`]);
  }
  if (options.db !== undefined && options.dbDir !== undefined) throw toolError('USAGE', ['--db and --db-dir both name a database; give only one']);
  const isUrl = options.db !== undefined && /^postgres(ql)?:\/\//.test(options.db);
  const dir = options.dbDir ?? (isUrl ? undefined : options.db);
  const engine = (options.engine as EngineKind | undefined) ?? (isUrl ? 'postgres' : dir !== undefined ? 'pglite' : 'memory');
  const db = isUrl ? options.db : dir === undefined ? undefined : resolve(cwd, dir);
  return { engine, ...(db === undefined ? {} : { db }) };
}

/** One token per line; blank lines and `#` comments are skipped. */
function readTokens(text: string): string[] {
  return text
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
}

function listOption(name: string): (value: string) => string[] {
  return (value) => {
    const items = value.split(',').map((item) => item.trim()).filter((item) => item !== '');
    if (items.length === 0) throw new InvalidArgumentError(`${name} needs at least one name.`);
    return items;
  };
}

const units: Record<string, number> = { '': 1, b: 1, kb: 1000, kib: 1024, mb: 1000 ** 2, mib: 1024 ** 2, gb: 1000 ** 3, gib: 1024 ** 3 };

/**
 * `1MiB`, `512KiB`, `2MB`, `65536`.
 * @example sizeOption('1MiB') // 1048576
 */
export function sizeOption(value: string): number {
  const match = /^\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*$/i.exec(value);
  const unit = units[(match?.[2] ?? 'x').toLowerCase()];
  const bytes = match?.[1] === undefined || unit === undefined ? Number.NaN : Math.floor(Number(match[1]) * unit);
  if (!Number.isSafeInteger(bytes) || bytes < 1) {
    throw new InvalidArgumentError('--max-body must be a size such as 1MiB, 512KiB, 2MB or a number of bytes.');
  }
  return bytes;
}

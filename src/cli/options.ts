/**
 * Options shared by several commands, defined once so every command spells
 * and documents them the same way.
 */
import { readFile } from 'node:fs/promises';
import { InvalidArgumentError, Option } from 'commander';
import type { Command } from 'commander';
import { loadConfig } from '../config/load.js';
import type { Config } from '../config/types.js';
import { toolError } from '../errors.js';
import { outputFormats, parseOutputFormat } from '../output/format-records.js';
import type { OutputFormat } from '../output/format-records.js';
import type { CliContext } from './context.js';
import { collect } from '../session/params.js';
import type { SourceFlags } from '../session/select-source.js';

export interface SourceOptionValues extends SourceFlags {
  readonly config?: string;
  /** the hidden `--token`, only there to refuse it with advice */
  readonly token?: string;
}

/** `--url`, `--lang`, `--get`, `--token-file`, `--data` (repeatable), `--profile`, `--config`. */
export function addSourceOptions(command: Command): Command {
  return command
    .option('--url <portal>', 'query a portal at this base URL; the token comes from CKQL_TOKEN or --token-file')
    .option('--lang <segment>', 'language segment before /api, such as en or de (with --url)')
    .option('--get', 'send GET requests instead of POST (with --url)')
    .option('--token-file <file>', 'read the API token from this file (with --url)')
    .option('--data <path>', 'query local .csv, .json, .ndjson files or folders of them (repeatable)', collect, [])
    .option('--engine <name>', 'who answers local data: memory (default), pglite (PostgreSQL in the process) or postgres')
    .option('--db <url|dir>', 'a PostgreSQL datastore (postgres://…), or a directory keeping a PGlite database')
    .option('--db-dir <dir>', 'keep the PGlite database in this directory between runs')
    .option('--profile <name>', 'use a profile from the config file')
    .option('--config <file>', 'read this config file instead of searching for one')
    .option('--timeout <seconds>', 'how long a request may take, for the headers and again for the body (default 30)', secondsOption('--timeout'))
    .option('--target <target>', "the portal's dialect: ckan-2.11, ckan-2.12 or sql (default: asked of the portal when a query needs more than 2.11); local data is served as that CKAN (sql: with --engine pglite or postgres)")
    .option('--max-scan <records>', 'the most records ckql reads to finish a query the portal cannot answer whole (default 100000)', countOption('--max-scan'))
    .option('--max-join-rows <rows>', 'the most rows a join may give; one past it is refused before it runs (default 10000000)', countOption('--max-join-rows', 'rows'))
    .option('--fields <file>', "local data: the declared types of the one data file (CKAN's datastore_create fields, or a Table Schema); default: NAME.fields.json beside it")
    .option('--infer <mode>', 'local data: how columns nothing declares are typed: ckql (default), xloader (all text) or datapusher (numeric, timestamp, text)')
    .option('--invalid-utf8 <mode>', 'local data: bytes that are not UTF-8: refuse (default; the error names the line and byte) or replace (each read as U+FFFD)')
    .addOption(new Option('--token <token>').hideHelp());
}

/** `--format <format>`, checked while parsing (a bad value is a usage error). */
export function addFormatOption(command: Command, what = 'records'): Command {
  return command.addOption(
    new Option('--format <format>', `how to print ${what}: ${outputFormats.join(', ')} (default: table on a terminal, else ndjson)`).argParser(
      (value: string): OutputFormat => {
        try {
          return parseOutputFormat(value);
        } catch (error) {
          throw new InvalidArgumentError((error as Error).message);
        }
      },
    ),
  );
}

/** `--no-escape-formulas`: csv text starting with = + - @ is written as it is. */
export function addCsvOption(command: Command): Command {
  return command.option(
    '--no-escape-formulas',
    "csv: keep text that starts with = + - @ as it is (by default it gets a leading ' so a spreadsheet cannot run it)",
  );
}

/** `--param name=value` (repeatable). */
export function addParamOption(command: Command): Command {
  return command.option(
    '--param <name=value>',
    'bind $name; the value reads like a query literal: 5, true, null, "text" or text (repeatable)',
    collect,
    [],
  );
}

/** Refuses a token given as an argument: it would end up in shell history and `ps`. */
export function refuseTokenArgument(options: SourceOptionValues): void {
  if (options.token !== undefined) {
    throw toolError('USAGE', ['a token is never taken as a command-line argument: it would show in shell history and ps'], {
      hint: 'set CKQL_TOKEN, use --token-file FILE, or token_env/token_file/token_cmd in a config profile',
    });
  }
}

/** The config, loaded once per command run, and only if something asks for it. */
export function configLoader(options: SourceOptionValues, context: CliContext): () => Promise<Config> {
  let loaded: Promise<Config> | undefined;
  return () =>
    (loaded ??= loadConfig({
      ...(options.config === undefined ? {} : { configFile: options.config }),
      cwd: context.cwd,
      env: context.env,
    }));
}

/** The default format: a table for a person at a terminal, ndjson for a pipe or a file. */
export function defaultFormat(context: CliContext): OutputFormat {
  return context.stdout.isTTY ? 'table' : 'ndjson';
}

/** A query argument; `-` reads the query from stdin (for long queries and here-documents). */
export async function readQueryArgument(text: string, context: CliContext): Promise<string> {
  if (text !== '-') return text;
  const chunks: Buffer[] = [];
  for await (const chunk of context.stdin) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer));
  return Buffer.concat(chunks).toString('utf8');
}

/** commander's parser for whole numbers in a range. */
export function integerOption(name: string, min: number, max: number = Number.MAX_SAFE_INTEGER): (value: string) => number {
  return (value) => {
    const number = /^\d+$/.test(value.trim()) ? Number(value) : Number.NaN;
    if (!Number.isSafeInteger(number) || number < min || number > max) {
      throw new InvalidArgumentError(`${name} must be a whole number from ${min}${max === Number.MAX_SAFE_INTEGER ? ' up' : ` to ${max}`}.`);
    }
    return number;
  };
}

/** commander's parser for a positive number of seconds (`--timeout 2.5`). */
export function secondsOption(name: string): (value: string) => number {
  return (value) => {
    const seconds = /^\d+(\.\d+)?$/.test(value.trim()) ? Number(value) : Number.NaN;
    if (!(seconds > 0) || seconds > 86_400) throw new InvalidArgumentError(`${name} must be a number of seconds above 0, such as 60.`);
    return seconds;
  };
}

/** A whole number of records (or rows) above 0, such as `--max-scan 500000`. */
export function countOption(name: string, what = 'records'): (value: string) => number {
  return (value) => {
    const count = /^\d+$/.test(value.trim()) ? Number(value) : Number.NaN;
    if (!(count > 0) || !Number.isSafeInteger(count)) throw new InvalidArgumentError(`${name} must be a whole number of ${what} above 0, such as 500000.`);
    return count;
  };
}

/** Reads a file's text for an option, as a usage error when it cannot be read. */
export async function readOptionFile(option: string, path: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (cause) {
    throw toolError('USAGE', [`${option}: cannot read ${path} (${(cause as NodeJS.ErrnoException).code ?? 'error'})`], {
      file: path,
      cause,
    });
  }
}

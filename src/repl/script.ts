/**
 * Statements read from a pipe, a file or `-c`: split at `;`, run in order,
 * records printed in one format (ndjson unless told otherwise), errors on
 * stderr with the line and column of the whole script. CSV takes a script of
 * one statement: a CSV stream has one header.
 */
import { once } from 'node:events';
import type { Writable } from 'node:stream';
import type { Source } from '../session/source.js';
import { plan } from '../compile/compile.js';
import { bind, type Params } from '../compile/bind.js';
import { parse } from '../syntax/parse.js';
import type { Query } from '../ast.js';
import type { SearchRequest } from '../datastore/types.js';
import { renderError } from '../diagnostics.js';
import { DatastoreError, QueryError, toolError } from '../errors.js';
import { createRecordWriter, facetsText, formatRecords, type OutputFormat } from '../output/format-records.js';
import { inPlace, splitStatements, type Statement } from './statements.js';
import { countText } from '../output/count-text.js';

export interface ScriptOptions {
  readonly source: Source;
  /** default `ndjson` */
  readonly format?: OutputFormat;
  /** records go here; default `process.stdout` */
  readonly output?: Writable;
  /** rendered errors go here; default `process.stderr` */
  readonly errorOutput?: Writable;
  /** bound to every statement's `$parameters` */
  readonly params?: Params;
  /** colour in error excerpts and the table format; default false */
  readonly color?: boolean;
  /** columns for the table format; default `Infinity` (values shown whole) */
  readonly width?: number;
  /** stop at the first statement that fails; default true */
  readonly bail?: boolean;
  /** fetch every matching record, paging, instead of one request per statement */
  readonly all?: boolean;
  /** aborts the running request and stops the script */
  readonly signal?: AbortSignal;
  /** csv: escape spreadsheet formulas (default true) */
  readonly escapeFormulas?: boolean;
}

export interface ScriptResult {
  /** statements in the script */
  readonly statements: number;
  /** statements that ran and printed their records */
  readonly succeeded: number;
  /** what failed, in order (rendered to `errorOutput` already); the CLI picks its exit code from the first */
  readonly errors: readonly unknown[];
}

async function write(stream: Writable, text: string): Promise<void> {
  if (text !== '' && !stream.write(text)) await once(stream, 'drain');
}

/**
 * Runs the statements of `script` against `options.source`.
 * @example
 * await runScript('from courses where subject = math limit 2; from schools limit 1', { source })
 * // stdout: three ndjson lines; resolves { statements: 2, succeeded: 2, errors: [] }
 */
export async function runScript(script: string, options: ScriptOptions): Promise<ScriptResult> {
  const output = options.output ?? process.stdout;
  const errorOutput = options.errorOutput ?? process.stderr;
  const format = options.format ?? 'ndjson';
  const color = options.color ?? false;
  const statements = splitStatements(script);
  if (format === 'csv' && statements.length > 1) {
    // One CSV stream has one header: several results with their own columns would read as one broken table.
    throw toolError('USAGE', [`--format csv prints one table, and this script has ${statements.length} statements`], {
      hint: 'run them one at a time, or use --format ndjson (one JSON record per line, any columns)',
    });
  }
  const csv = options.escapeFormulas === false ? { escapeFormulas: false } : {};
  const errors: unknown[] = [];
  let succeeded = 0;
  // Tables (and Markdown tables) one after another need a blank line between them, or they read as one broken table.
  const apart = format === 'table' || format === 'markdown';
  let printed = false;
  for (const statement of statements) {
    if (options.signal?.aborted === true) {
      errors.push(new DatastoreError('ABORTED', 'interrupted'));
      break;
    }
    try {
      const request = requestOf(script, statement, options.params);
      // The client is given the query, not its request: a local engine answers it whole, a portal as its plan says.
      const query = options.params === undefined ? parse(statement.text) : bind(parse(statement.text), options.params);
      if (apart && printed) await write(output, '\n');
      printed = true;
      if (options.all === true) {
        await streamAll(request, options, format, output, color, query);
      } else {
        const result = await options.source.client.search(query ?? request, options.signal === undefined ? {} : { signal: options.signal });
        await write(output, await formatRecords(result, format, { color, width: options.width ?? Infinity, ...csv }));
        // csv and ndjson hold records only: a query's facets go beside them, on stderr.
        const apart = facetsText(result, format, { color });
        if (apart !== undefined) await write(errorOutput, apart);
      }
      succeeded += 1;
    } catch (error) {
      errors.push(error);
      const where = statementPlace(script, statement, statements.indexOf(statement), statements.length);
      await write(errorOutput, `${renderError(error, { color }).replace(/\n+$/, '')}\n  = in: ${where}\n`);
      const stopping = options.bail !== false || (error instanceof DatastoreError && error.code === 'ABORTED');
      const left = statements.length - statements.indexOf(statement) - 1;
      if (stopping && left > 0) {
        await write(errorOutput, `stopped: ${countText(left, 'statement')} after it ${left === 1 ? 'was' : 'were'} not run\n`);
      }
      if (stopping) break;
    }
  }
  return { statements: statements.length, succeeded, errors };
}

/**
 * Where a statement stands, for an error's `in:` line: its number, the line
 * its first word is on, and that line's start.
 * @example statementPlace('from a;\n-- b\nfrom b where x = 1', second, 1, 2) // 'statement 2 of 2, line 3: from b where x = 1'
 */
export function statementPlace(script: string, statement: Statement, index: number, count: number): string {
  // The first character that is neither blank nor part of a `--` comment.
  let at = statement.start;
  const end = statement.start + statement.text.length;
  while (at < end) {
    if (/\s/.test(script[at] ?? '')) at += 1;
    else if (script.startsWith('--', at)) {
      const newline = script.indexOf('\n', at);
      at = newline === -1 || newline > end ? end : newline + 1;
    } else break;
  }
  const line = script.slice(0, at).split('\n').length;
  const text = (script.slice(at, end).split('\n')[0] ?? '').trim();
  const shown = text.length > 60 ? `${text.slice(0, 59)}…` : text;
  return `statement ${index + 1} of ${count}, line ${line}: ${shown}`;
}

/**
 * Compiles one statement; an error is reported against the whole script, so
 * its line and column are where the statement sits in the file.
 */
function requestOf(script: string, statement: Statement, params: Params | undefined): SearchRequest {
  try {
    // The request CKAN 2.11 is sent first; a plan's residual is applied by the client.
    return plan(statement.text, { target: 'ckan-2.11', ...(params === undefined ? {} : { params }) }).request as SearchRequest;
  } catch (error) {
    if (!(error instanceof QueryError) || statement.start === 0) throw error;
    try {
      plan(inPlace(script, statement), { target: 'ckan-2.11', ...(params === undefined ? {} : { params }) });
    } catch (placed) {
      if (placed instanceof QueryError && placed.code === error.code) throw placed;
    }
    throw error;
  }
}

/**
 * `all`: pages through every record, writing as they come. The first page
 * gives the field list the csv/markdown header needs, so the writer is made
 * once it has arrived.
 */
async function streamAll(
  request: SearchRequest,
  options: ScriptOptions,
  format: OutputFormat,
  output: Writable,
  color: boolean,
  query?: Query,
): Promise<void> {
  // The run gives its fields before any record: the csv/markdown header is written first.
  const run = await options.source.client.stream(query ?? request, { all: true, ...(options.signal === undefined ? {} : { signal: options.signal }) });
  const writer = createRecordWriter(format, run.fields, (text) => write(output, text), {
    color,
    width: options.width ?? Infinity,
    ...(options.escapeFormulas === false ? { escapeFormulas: false } : {}),
  });
  let count = 0;
  for await (const row of run.records) {
    await writer.write(row);
    count += 1;
  }
  await writer.end({ total: count });
}

/**
 * `ckql format '<query>'`: print a query's canonical text; with `--from
 * request` or `--from sql`, the query a datastore_search request (JSON) or
 * the sql target's SELECT stands for (`fromRequest`, `fromSql`).
 */
import { Option, type Command } from 'commander';
import { withSource } from '../../compile/compile.js';
import { fromRequest } from '../../compile/from-request.js';
import { fromSql } from '../../compile/from-sql.js';
import { QueryError, toolError } from '../../errors.js';
import type { Query } from '../../ast.js';
import { format } from '../../format.js';
import { format as formatText } from '../../language-service/index.js';
import { parse } from '../../syntax/parse.js';
import type { CommandRun } from '../context.js';
import { readQueryArgument } from '../options.js';

export function registerFormat(program: Command, run: CommandRun): void {
  program
    .command('format')
    .description('print a query in canonical form: lower-case keywords, one clause per line')
    .argument('<query>', 'the query text (- reads it from stdin)')
    .addOption(
      new Option('--from <kind>', 'what the argument is: a query, a datastore_search request as JSON, or the SELECT of the sql target')
        .choices(['query', 'request', 'sql'])
        .default('query'),
    )
    .addHelpText(
      'after',
      `
Examples:
  ckql format 'FROM courses LIMIT 5 WHERE stage = "active"'
  ckql format --from request '{"resource_id": "courses", "filters": {"year": {"gte": 2020}}}'
  ckql compile 'from courses where year >= 2020' --target sql | ckql format --from sql -`,
    )
    .action(
      run(async (text: string, options: { readonly from: 'query' | 'request' | 'sql' }) => {
        const source = await readQueryArgument(text, run.context);
        let canonical: string;
        try {
          canonical = format(queryOf(source, options.from));
        } catch (error) {
          throw error instanceof QueryError ? withSource(error, source) : error;
        }
        if (options.from === 'query') {
          // The query parses; its text is formatted as editors format it, so its comments are kept (the AST has none).
          const formatted = formatText(source);
          canonical = formatted.text;
          if (formatted.unchanged.length > 0) run.context.err('note: a comment inside the query keeps it as written; put comments before or after it to format it');
        }
        await run.context.out(canonical.endsWith('\n') ? canonical : `${canonical}\n`);
        return 0;
      }),
    );
}

/** The query the text stands for, read as `--from` says. */
function queryOf(source: string, from: 'query' | 'request' | 'sql'): Query {
  if (from === 'query') return parse(source);
  if (from === 'sql') return fromSql(source.trim());
  let request: unknown;
  try {
    request = JSON.parse(source);
  } catch (error) {
    throw toolError('USAGE', [`--from request reads a datastore_search request as JSON: ${(error as Error).message}`]);
  }
  return fromRequest(request);
}

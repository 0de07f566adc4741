/**
 * The command tree: `ckql [repl] | query | run | compile | format | explain |
 * serve | ui | fields | resources`. Each command lives in `commands/`, registers
 * itself here, and returns its exit status; errors it throws are reported by
 * `runCli` in one place.
 */
import { Command, CommanderError } from 'commander';
import { registerCheck } from './commands/check.js';
import { registerCompile } from './commands/compile.js';
import { registerDatasets } from './commands/datasets.js';
import { registerExport } from './commands/export.js';
import { registerExplain } from './commands/explain.js';
import { registerFields } from './commands/fields.js';
import { registerFormat } from './commands/format.js';
import { registerLoad } from './commands/load.js';
import { registerLsp } from './commands/lsp.js';
import { registerMcp } from './commands/mcp.js';
import { registerQuery } from './commands/query.js';
import { registerRepl } from './commands/repl.js';
import { registerResources } from './commands/resources.js';
import { registerRun } from './commands/run.js';
import { registerServe } from './commands/serve.js';
import { registerUi } from './commands/ui.js';
import type { CliContext, CommandRun } from './context.js';
import { processContext } from './context.js';
import { exitCodes } from './exit-codes.js';
import { reportError } from './report.js';
import { packageVersion } from './version.js';


/** Builds the program; `onExit` receives the status of the command that ran. */
export function createProgram(context: CliContext, onExit: (code: number) => void): Command {
  const program = new Command('ckql')
    .description(
      'Query CKAN datastore_search: a REPL, one-shot queries, named queries from a config file, and a local server.\n' +
        'With no command, ckql opens the REPL (on the demo data when no source is configured).',
    )
    .version(packageVersion(), '-V, --version')
    .exitOverride()
    .configureOutput({
      writeOut: (text) => void context.stdout.write(text),
      writeErr: (text) => void context.stderr.write(text),
    })
    .showHelpAfterError('(add --help for usage)')
    .showSuggestionAfterError(true)
    .addHelpText(
      'after',
      `
Exit status: 0 ok, 1 data or server error, 2 usage or config error, 3 query error
(including a request the source refuses: unknown field or resource, bad value),
4 network error (unreachable, timeout), 5 access refused (403: no token, or
one not accepted for the resource), 130 interrupted.

Environment: CKQL_TOKEN (API token), CKQL_CONFIG (config file), NO_COLOR.`,
    );
  const run = Object.assign(
    <A extends unknown[]>(action: (...args: A) => Promise<number>) =>
      async (...args: A): Promise<void> => {
        onExit(await action(...args));
      },
    { context },
  ) as CommandRun;
  registerRepl(program, run);
  registerQuery(program, run);
  registerRun(program, run);
  registerCompile(program, run);
  registerFormat(program, run);
  registerExplain(program, run);
  registerServe(program, run);
  registerUi(program, run);
  registerLoad(program, run);
  registerFields(program, run);
  registerResources(program, run);
  registerDatasets(program, run);
  registerExport(program, run);
  registerCheck(program, run);
  registerLsp(program, run);
  registerMcp(program, run);
  return program;
}

/**
 * A query may start with a `--` comment; commander would take it for an
 * option. An option never holds white space after its dashes or a line
 * break, so such an argument is a query, and a leading space (free in the
 * language) keeps commander from reading it as an option.
 */
function commentNotOption(argument: string): string {
  return /^--(?:\s|[^\n]*\n)/.test(argument) ? ` ${argument}` : argument;
}

/**
 * Runs ckql with the arguments after the program name and returns the exit
 * status (it never calls `process.exit`).
 * @example await runCli(['compile', 'from courses limit 5']) // prints the request, returns 0
 */
export async function runCli(argv: readonly string[], context: CliContext = processContext()): Promise<number> {
  let code: number = exitCodes.ok;
  const program = createProgram(context, (status) => {
    code = status;
  });
  try {
    await program.parseAsync(argv.map(commentNotOption), { from: 'user' });
    return code;
  } catch (error) {
    if (error instanceof CommanderError) {
      // commander has printed its message (and help when asked for it).
      return error.exitCode === 0 ? exitCodes.ok : exitCodes.usage;
    }
    return reportError(error, context);
  }
}

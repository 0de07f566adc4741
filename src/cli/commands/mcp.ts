/**
 * `ckql mcp`: the Model Context Protocol server for AI assistants
 * (src/mcp/server.ts) on stdin and stdout, over the profile, `--url`,
 * `--data`, or the demo data. Loaded only for this command.
 */
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { emptyConfig } from '../../config/types.js';
import type { CommandRun } from '../context.js';
import { addSourceOptions, configLoader, integerOption, refuseTokenArgument } from '../options.js';
import type { SourceOptionValues } from '../options.js';
import { badFileReporter } from '../report.js';
import { selectSource } from '../../session/select-source.js';
import { openSource } from '../../session/source.js';
import type { Source, SourceSpec } from '../../session/source.js';
import { packageVersion } from '../version.js';
import { untilStopped } from '../interrupt.js';

interface McpCommandOptions extends SourceOptionValues {
  readonly exportDir?: string;
  readonly toolTimeout?: number;
  readonly http?: boolean;
  readonly port?: number;
  readonly allowHost: readonly string[];
}

export function registerMcp(program: Command, run: CommandRun): void {
  const command = program
    .command('mcp')
    .description('run the MCP server for AI assistants (find, describe, check, query, explain, export) on stdin and stdout')
    .option('--export-dir <dir>', 'the only folder the export tool may write into (without it, export is refused)')
    .option('--tool-timeout <seconds>', 'the longest a tool may take (default 120)', integerOption('--tool-timeout', 1))
    .option('--http', 'serve Streamable HTTP on 127.0.0.1 at /mcp instead of stdio (the address is printed on stderr)')
    .option('--port <n>', 'the port of --http (default: a free one)', integerOption('--port', 0))
    .option('--allow-host <name>', 'a host name besides addresses and localhost that --http answers to (repeatable)', (value: string, all: string[]) => [...all, value], [] as string[])
    .addHelpText(
      'after',
      `
An assistant's client starts it, e.g. in its config:
  { "mcpServers": { "ckql": { "command": "ckql", "args": ["mcp", "--profile", "city"] } } }
Tokens stay in the server: no tool answer, log or error holds one.`,
    );
  addSourceOptions(command).action(
    run(async (options: McpCommandOptions) => {
      const { context } = run;
      refuseTokenArgument(options);
      const loadConfig = configLoader(options, context);
      const { spec, profile } = await selectSource(options, { config: loadConfig, env: context.env, cwd: context.cwd });
      const config = await loadConfig().catch(() => emptyConfig);
      // stdout is the protocol's: a file that cannot be read is told on stderr, as every other note.
      const onBadFile = badFileReporter(context, 'the other files are read').report;
      const open = (each: SourceSpec): Promise<Source> => openSource(each, { lazy: true, onBadFile });
      const source = await open(spec);
      const [{ createMcpServer }, { StdioServerTransport }] = await Promise.all([import('../../mcp/server.js'), import('@modelcontextprotocol/sdk/server/stdio.js')]);
      const make = () => createMcpServer({
        source,
        config,
        profile,
        openSource: open,
        exportDir: options.exportDir === undefined ? undefined : resolve(context.cwd, options.exportDir),
        timeoutMs: (options.toolTimeout ?? 120) * 1000,
        version: packageVersion(),
      });
      if (options.http === true) {
        const { serveMcpHttp } = await import('../../mcp/http.js');
        const stopped = untilStopped();
        const running = await serveMcpHttp(make, { ...(options.port === undefined ? {} : { port: options.port }), allowedHosts: options.allowHost });
        context.err(`ckql mcp: Streamable HTTP at ${running.url} (Ctrl-C stops it)`);
        await stopped;
        await running.close();
        await source.close();
        return 0;
      }
      const server = make();
      const closed = new Promise<void>((done) => {
        const closing = server.server.onclose;
        server.server.onclose = () => {
          closing?.();
          done();
        };
        context.stdin.once('end', () => done());
      });
      await server.connect(new StdioServerTransport(context.stdin, context.stdout));
      await closed;
      await server.close();
      await source.close();
      return 0;
    }),
  );
}

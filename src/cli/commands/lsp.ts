/**
 * `ckql lsp --stdio`: the language server, speaking the Language Server
 * Protocol on stdin and stdout (what editors start: VS Code's extension in
 * editors/vscode, Neovim's lspconfig, Helix, Zed, Emacs' eglot). Loaded only
 * for this command.
 */
import type { Command } from 'commander';
import { toolError } from '../../errors.js';
import type { CommandRun } from '../context.js';

export function registerLsp(program: Command, run: CommandRun): void {
  program
    .command('lsp')
    .description('run the language server (diagnostics, completion, hover, formatting) for editors')
    .option('--stdio', 'speak the protocol on stdin and stdout (the only transport)')
    .addHelpText(
      'after',
      `
The server checks .ckql scripts, the named queries of config files and ckql\`…\`
templates in TypeScript and JavaScript. Resources and fields come from the
config's default profile (or initializationOptions.profile), when one is configured.`,
    )
    .action(
      run(async (options: { readonly stdio?: boolean }) => {
        const { context } = run;
        if (options.stdio !== true) throw toolError('USAGE', ['ckql lsp speaks on stdin and stdout only: ckql lsp --stdio']);
        const { serveStreams } = await import('../../lsp/server.js');
        return serveStreams(context.stdin, context.stdout, { env: context.env });
      }),
    );
}

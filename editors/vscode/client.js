// The extension: starts `ckql lsp --stdio` (the language server in the ckql package) for .ckql
// files, ckql config files and TypeScript/JavaScript files with ckql`…` templates. Highlighting,
// the injections and the config schema are contributed in package.json; the server does the rest.
const vscode = require('vscode');
const { LanguageClient, TransportKind } = require('vscode-languageclient/node');

let client;

function activate(context) {
  const settings = vscode.workspace.getConfiguration('ckql');
  const command = settings.get('path') || 'ckql';
  const run = { command, args: ['lsp', '--stdio'], transport: TransportKind.stdio };
  const configFiles = '**/{ckql.config.{yaml,yml,json,toml},.ckqlrc,.ckqlrc.{yaml,yml,json,toml}}';
  client = new LanguageClient(
    'ckql',
    'ckql',
    { run, debug: run },
    {
      documentSelector: [
        { language: 'ckql' },
        { scheme: 'file', pattern: configFiles },
        { language: 'typescript' },
        { language: 'typescriptreact' },
        { language: 'javascript' },
        { language: 'javascriptreact' },
      ],
      initializationOptions: {
        ...(settings.get('profile') ? { profile: settings.get('profile') } : {}),
        ...(settings.get('target') ? { target: settings.get('target') } : {}),
      },
    },
  );
  context.subscriptions.push(client);
  return client.start();
}

function deactivate() {
  return client === undefined ? undefined : client.stop();
}

module.exports = { activate, deactivate };

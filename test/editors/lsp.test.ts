/**
 * The language server, spoken to with the protocol's own client
 * (vscode-jsonrpc) over a pair of streams in this process, and once as the
 * built bin over stdio: diagnostics at the right ranges in a .ckql script
 * and in a config file's named query, completion of fields with their types
 * from the configured profile, hover, formatting and quick fixes.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { pathToFileURL } from 'node:url';
import { createMessageConnection, StreamMessageReader, StreamMessageWriter, type MessageConnection } from 'vscode-jsonrpc/node';
import { createConnection, StreamMessageReader as ServerReader, StreamMessageWriter as ServerWriter } from 'vscode-languageserver/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serveLanguage } from '../../src/lsp/server.js';
import { repoRoot, startCkql } from '../cli/run-ckql.js';

interface Range {
  start: { line: number; character: number };
  end: { line: number; character: number };
}
interface LspDiagnostic {
  range: Range;
  severity: number;
  code: string;
  message: string;
}

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ckql-lsp-'));
  await writeFile(
    join(dir, 'ckql.config.yaml'),
    [
      'profiles:',
      '  demo:',
      `    data: ${JSON.stringify(join(repoRoot, 'examples', 'data'))}`,
      'queries:',
      '  fine: from courses where subject = math',
      '  broken:',
      '    query: |',
      '      from courses',
      '      where subject = limit',
      '    params:',
      '      subject: math',
      '',
    ].join('\n'),
  );
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** A client and, unless `connection` is given, a server in this process. */
function connectInProcess(): MessageConnection {
  const toServer = new PassThrough();
  const toClient = new PassThrough();
  const server = createConnection(new ServerReader(toServer), new ServerWriter(toClient));
  serveLanguage(server, { env: { HOME: dir } });
  server.listen();
  const client = createMessageConnection(new StreamMessageReader(toClient), new StreamMessageWriter(toServer));
  client.listen();
  return client;
}

/** Resolves with the next diagnostics published for `uri` that `accept` takes. */
function nextDiagnostics(client: MessageConnection, uri: string, accept: (d: LspDiagnostic[]) => boolean = () => true): Promise<LspDiagnostic[]> {
  return new Promise((resolve) => {
    const subscription = client.onNotification('textDocument/publishDiagnostics', (params: { uri: string; diagnostics: LspDiagnostic[] }) => {
      if (params.uri !== uri || !accept(params.diagnostics)) return;
      subscription.dispose();
      resolve(params.diagnostics);
    });
  });
}

async function initialize(client: MessageConnection): Promise<{ capabilities: Record<string, unknown> }> {
  const result = await client.sendRequest('initialize', { processId: null, rootUri: pathToFileURL(dir).href, capabilities: {} });
  await client.sendNotification('initialized', {});
  return result as { capabilities: Record<string, unknown> };
}

function open(client: MessageConnection, uri: string, languageId: string, text: string): Promise<void> {
  return client.sendNotification('textDocument/didOpen', { textDocument: { uri, languageId, version: 1, text } });
}

describe('the language server in process', () => {
  it('diagnoses, completes, hovers, formats and fixes a .ckql script, with the schema of the configured profile', async () => {
    const client = connectInProcess();
    const { capabilities } = await initialize(client);
    expect(capabilities).toMatchObject({ hoverProvider: true, documentFormattingProvider: true, completionProvider: expect.any(Object) });

    const uri = pathToFileURL(join(dir, 'q.ckql')).href;
    const text = 'from courses\nwhere subjet = math;\nfrom courses wher stage = active';
    // The schema arrives after the first check: wait for the diagnostics that know the fields.
    const published = nextDiagnostics(client, uri, (d) => d.some((each) => each.code === 'UNKNOWN_FIELD'));
    await open(client, uri, 'ckql', text);
    const diagnostics = await published;
    expect(diagnostics.map((d) => [d.code, d.severity, d.range])).toEqual([
      ['UNKNOWN_FIELD', 1, { start: { line: 1, character: 6 }, end: { line: 1, character: 12 } }],
      ['UNEXPECTED_TOKEN', 1, { start: { line: 2, character: 13 }, end: { line: 2, character: 17 } }],
    ]);
    expect(diagnostics[0]!.message).toBe('"courses" has no field "subjet"\nhint: did you mean "subject"?');

    const actions = (await client.sendRequest('textDocument/codeAction', {
      textDocument: { uri },
      range: diagnostics[1]!.range,
      context: { diagnostics: [diagnostics[1]] },
    })) as { title: string; edit: { changes: Record<string, { range: Range; newText: string }[]> } }[];
    expect(actions.map((a) => a.title)).toEqual(['Change to where']);
    expect(actions[0]!.edit.changes[uri]).toEqual([{ range: diagnostics[1]!.range, newText: 'where' }]);

    const completion = (await client.sendRequest('textDocument/completion', {
      textDocument: { uri },
      position: { line: 1, character: 7 },
    })) as { label: string; detail?: string; textEdit: { range: Range; newText: string } }[];
    expect(completion.map((c) => [c.label, c.detail])).toEqual([
      ['subject', 'text'],
      ['stage', 'text'],
      ['start_date', 'date'],
      ['school', 'text'],
      ['substr', 'substr(s, from [, n])'],
    ]);
    expect(completion[0]!.textEdit.range).toEqual({ start: { line: 1, character: 6 }, end: { line: 1, character: 7 } });

    // An edit: the misspelt keyword fixed; the diagnostics follow the new text.
    const fixed = nextDiagnostics(client, uri, (d) => d.length === 1);
    await client.sendNotification('textDocument/didChange', {
      textDocument: { uri, version: 2 },
      contentChanges: [{ range: diagnostics[1]!.range, text: 'where' }],
    });
    expect((await fixed).map((d) => d.code)).toEqual(['UNKNOWN_FIELD']);

    const values = (await client.sendRequest('textDocument/completion', {
      textDocument: { uri },
      position: { line: 2, character: 28 },
    })) as { label: string }[];
    expect(values.map((c) => c.label)).toContain('active');

    const hover = (await client.sendRequest('textDocument/hover', { textDocument: { uri }, position: { line: 2, character: 21 } })) as {
      contents: { kind: string; value: string };
    };
    expect(hover.contents.value).toBe('`stage: text`');


    const edits = (await client.sendRequest('textDocument/formatting', { textDocument: { uri }, options: { tabSize: 2, insertSpaces: true } })) as { newText: string }[];
    expect(edits.map((e) => e.newText)).toEqual(['from courses\nwhere subjet = math;\nfrom courses\nwhere stage = active']);

    await client.sendRequest('shutdown');
    client.dispose();
  });

  it('checks the named queries of a config file, at their lines in the file, with their declared parameters', async () => {
    const client = connectInProcess();
    await initialize(client);
    const uri = pathToFileURL(join(dir, 'ckql.config.yaml')).href;
    const { readFile } = await import('node:fs/promises');
    const text = await readFile(join(dir, 'ckql.config.yaml'), 'utf8');
    const published = nextDiagnostics(client, uri);
    await open(client, uri, 'yaml', text);
    const diagnostics = await published;
    expect(diagnostics.map((d) => [d.code, d.range])).toEqual([
      ['UNEXPECTED_TOKEN', { start: { line: 8, character: 22 }, end: { line: 8, character: 27 } }],
    ]);
    expect(diagnostics[0]!.message).toContain('a value spelled like a keyword must be quoted: "limit"');

    // Completion inside the named query's block scalar: fields of courses.
    const completion = (await client.sendRequest('textDocument/completion', { textDocument: { uri }, position: { line: 8, character: 8 } })) as { label: string }[];
    expect(completion.map((c) => c.label)).toEqual(expect.arrayContaining(['where']));
    const fields = (await client.sendRequest('textDocument/completion', { textDocument: { uri }, position: { line: 4, character: 30 } })) as { label: string; detail: string }[];
    expect(fields.find((c) => c.label === 'subject')?.detail).toBe('text');
    await client.sendRequest('shutdown');
    client.dispose();
  });

  it('knows the config\'s profiles as sources: name: completed, UNKNOWN_SOURCE for a name that is none, the profile\'s own name read as its resources', async () => {
    const client = connectInProcess();
    await initialize(client);
    const uri = pathToFileURL(join(dir, 'across.ckql')).href;
    const text = 'from courses c join nope:schools s on c.school = s.code;\nfrom demo:courses where subjet = math;\nfrom courses c join ';
    const published = nextDiagnostics(client, uri, (d) => d.some((each) => each.code === 'UNKNOWN_FIELD'));
    await open(client, uri, 'ckql', text);
    const diagnostics = await published;
    expect(diagnostics.map((d) => [d.code, d.range])).toEqual([
      ['UNKNOWN_SOURCE', { start: { line: 0, character: 20 }, end: { line: 0, character: 25 } }],
      ['UNKNOWN_FIELD', { start: { line: 1, character: 24 }, end: { line: 1, character: 30 } }],
      ['UNEXPECTED_END_OF_INPUT', expect.any(Object)],
    ]);
    // `local` too: whether a query runs on local data (--data) is not known here
    expect(diagnostics[0]!.message).toContain('hint: the sources: demo, local;');
    const completion = (await client.sendRequest('textDocument/completion', { textDocument: { uri }, position: { line: 2, character: 20 } })) as {
      label: string;
      kind: number;
      detail?: string;
    }[];
    expect(completion.find((c) => c.label === 'demo:')).toMatchObject({ kind: 19, detail: 'local data' });
    await client.sendRequest('shutdown');
    client.dispose();
  });

  it('checks ckql`…` templates in TypeScript, with ${…} standing for values', async () => {
    const client = connectInProcess();
    await initialize(client);
    const uri = pathToFileURL(join(dir, 'app.ts')).href;
    const published = nextDiagnostics(client, uri);
    await open(client, uri, 'typescript', 'const s = "x";\nconst q = ckql`from courses where subject = ${s} limt 5`;\n');
    const diagnostics = await published;
    expect(diagnostics.map((d) => [d.code, d.range])).toEqual([
      ['UNEXPECTED_TOKEN', { start: { line: 1, character: 49 }, end: { line: 1, character: 53 } }],
    ]);
    await client.sendRequest('shutdown');
    client.dispose();
  });
});

describe('the language server as a process', () => {
  it('answers over stdio from the built bin, and exits 0 after shutdown and exit', async () => {
    const child = startCkql(['lsp', '--stdio'], { cwd: dir, env: { HOME: dir } });
    const client = createMessageConnection(new StreamMessageReader(child.stdout), new StreamMessageWriter(child.stdin));
    client.listen();
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    await initialize(client);
    const uri = pathToFileURL(join(dir, 'p.ckql')).href;
    const published = nextDiagnostics(client, uri);
    await open(client, uri, 'ckql', 'from courses where subject = "math');
    expect((await published).map((d) => [d.code, d.range.start.character])).toEqual([['UNTERMINATED_STRING', 29]]);
    await client.sendRequest('shutdown');
    await client.sendNotification('exit');
    expect(await exited).toBe(0);
    client.dispose();
  });
});

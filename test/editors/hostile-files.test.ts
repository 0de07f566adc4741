/**
 * Hostile files (issue 30): generated contents (YAML alias bombs, nesting
 * thousands deep, templates nested thousands deep, bytes that are not UTF-8,
 * NULs) and special files (a FIFO, a device, a loop of symbolic links, a
 * file past the size bound) given to `ckql check`, to `ckql query` as the
 * config it finds or as data, and to the language server as documents.
 * Generated hostile data files (NUL bytes, bytes that are not UTF-8, quotes
 * and line breaks, numbers beyond a double and beyond `numeric`, dates
 * PostgreSQL has not got, more columns than a table holds, nesting past the
 * bound) go through `ckql query --data` (and through `load` on the memory
 * engine and PGlite in test/engine/sql/hostile-data.test.ts). Each outcome must be an answer or a typed error
 * naming the file, within a bound of time: never "unexpected error", a
 * crash, or a hang.
 */
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { pathToFileURL } from 'node:url';
import fc from 'fast-check';
import { createMessageConnection, StreamMessageReader, StreamMessageWriter, type MessageConnection } from 'vscode-jsonrpc/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_TEXT_FILE_BYTES } from '../../src/engine/node/files.js';
import { hostileDataFiles } from '../helpers/hostile-data.js';
import { framedMessages } from '../../src/lsp/framing.js';
import { serveStreams } from '../../src/lsp/server.js';
import { ckql, ndjson } from '../cli/run-ckql.js';
import type { RunResult } from '../cli/run-ckql.js';

let dir: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'ckql-hostile-'));
});

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

/** Rejects when `work` takes longer than `ms`: a hang is a failure, not a stuck suite. */
function bounded<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what} did not end within ${ms} ms`)), ms)));
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

/** A typed outcome: exit 0 (an answer), 2 (usage/config/file) or 3 (a query problem), and never the crash report. */
function expectTyped(result: RunResult, what: string): void {
  expect(result.stderr + result.stdout, what).not.toMatch(/unexpected error|this is a bug|Maximum call stack|RangeError|TypeError/);
  expect([0, 2, 3], `${what}: exit ${String(result.code)}\n${result.stderr}`).toContain(result.code);
}

const aliasBomb = fc.record({ depth: fc.integer({ min: 4, max: 9 }), width: fc.integer({ min: 6, max: 12 }) }).map(({ depth, width }) => {
  const lines = [`l0: &l0 [${Array.from({ length: width }, () => '"lol"').join(', ')}]`];
  for (let level = 1; level < depth; level++) lines.push(`l${level}: &l${level} [${Array.from({ length: width }, () => `*l${level - 1}`).join(', ')}]`);
  lines.push('queries:', `  q: from x where a = 1`, '');
  return lines.join('\n');
});
const deepYaml = fc.integer({ min: 500, max: 6_000 }).map((depth) => `queries:\n  q: ${'['.repeat(depth)}1${']'.repeat(depth)}\n`);
const deepJson = fc.integer({ min: 500, max: 6_000 }).map((depth) => `{"queries": {"q": ${'['.repeat(depth)}1${']'.repeat(depth)}}}`);
const nestedTemplates = fc.integer({ min: 200, max: 6_000 }).map((depth) => `const q = ckql\`from x where a = ${'${`'.repeat(depth)}${'`}'.repeat(depth)}\`;\n`);
const deepParens = fc.integer({ min: 100, max: 5_000 }).map((depth) => `from x where ${'('.repeat(depth)}a = 1${')'.repeat(depth)}\n`);
const bytes = fc.uint8Array({ minLength: 1, maxLength: 300 }).map((raw) => Buffer.concat([Buffer.from('from x where a = "'), Buffer.from(raw), Buffer.from('"\n')]));

/** Each hostile content with the file names it is given as. */
const contents: fc.Arbitrary<{ readonly name: string; readonly body: string | Buffer }> = fc.oneof(
  aliasBomb.map((body) => ({ name: 'ckql.config.yaml', body })),
  deepYaml.map((body) => ({ name: 'ckql.config.yaml', body })),
  deepJson.map((body) => ({ name: 'ckql.config.json', body })),
  nestedTemplates.map((body) => ({ name: 'queries.ts', body })),
  deepParens.map((body) => ({ name: 'q.ckql', body })),
  bytes.map((body) => ({ name: 'q.ckql', body })),
  bytes.map((body) => ({ name: 'ckql.config.yaml', body: Buffer.concat([Buffer.from('queries:\n  q: '), body]) })),
);

let runs = 0;
function freshFolder(): string {
  const folder = join(dir, `run-${runs++}`);
  mkdirSync(folder);
  return folder;
}

describe('ckql check and ckql query over generated hostile files', () => {
  it('give an answer or a typed error, in bounded time', async () => {
    await fc.assert(
      fc.asyncProperty(contents, async ({ name, body }) => {
        const folder = freshFolder();
        writeFileSync(join(folder, name), body);
        expectTyped(await bounded(ckql(['check', folder], { cwd: folder }), 20_000, `ckql check ${name}`), `check ${name}`);
        // ckql query finds a config in its folder: a hostile one is a config error, not a crash.
        if (name.startsWith('ckql.config')) expectTyped(await bounded(ckql(['query', 'from x limit 1'], { cwd: folder }), 20_000, 'ckql query'), `query with ${name}`);
      }),
      { numRuns: 14, seed: 30 },
    );
  });

  it('report each special file as unreadable, naming it, and check the others', async () => {
    const folder = freshFolder();
    writeFileSync(join(folder, 'good.ckql'), 'from courses where subject = math\n');
    symlinkSync('b.ckql', join(folder, 'a.ckql'));
    symlinkSync('a.ckql', join(folder, 'b.ckql'));
    symlinkSync('/dev/zero', join(folder, 'zero.ckql'));
    execFileSync('mkfifo', [join(folder, 'pipe.ckql')]);
    writeFileSync(join(folder, 'big.ckql'), '');
    truncateSync(join(folder, 'big.ckql'), MAX_TEXT_FILE_BYTES + 1);
    writeFileSync(join(folder, 'latin1.ckql'), Buffer.from('from caf\xe9s\n', 'latin1'));
    const result = await bounded(ckql(['check', folder, '--format', 'json'], { cwd: folder }), 20_000, 'ckql check');
    expectTyped(result, 'check of special files');
    const report = JSON.parse(result.stdout) as { files: number; problems: { file: string; code: string; message: string; line: number }[] };
    const byFile = Object.fromEntries(report.problems.map((p) => [p.file, p]));
    expect(Object.keys(byFile).sort()).toEqual(['a.ckql', 'b.ckql', 'big.ckql', 'latin1.ckql', 'pipe.ckql', 'zero.ckql']);
    expect(byFile['a.ckql']).toMatchObject({ code: 'FILE_UNREADABLE', message: expect.stringContaining('loop of symbolic links') });
    expect(byFile['pipe.ckql']).toMatchObject({ code: 'FILE_UNREADABLE', message: expect.stringContaining('named pipe') });
    expect(byFile['zero.ckql']).toMatchObject({ code: 'FILE_UNREADABLE', message: expect.stringContaining('device') });
    expect(byFile['big.ckql']).toMatchObject({ code: 'FILE_UNREADABLE', message: expect.stringContaining('at most 16.0 MiB') });
    expect(byFile['latin1.ckql']).toMatchObject({ code: 'FILE_UNREADABLE', message: expect.stringContaining('line 1') });
    // the one good file was still checked
    expect(report.files).toBe(1);
  });

  it('refuses a FIFO, a device and a loop of symbolic links as data, naming each', async () => {
    const folder = freshFolder();
    execFileSync('mkfifo', [join(folder, 'pipe.csv')]);
    symlinkSync('/dev/zero', join(folder, 'zero.csv'));
    symlinkSync('l2.csv', join(folder, 'l1.csv'));
    symlinkSync('l1.csv', join(folder, 'l2.csv'));
    for (const [file, words] of [['pipe.csv', 'named pipe'], ['zero.csv', 'device'], ['l1.csv', 'loop of symbolic links']] as const) {
      const result = await bounded(ckql(['query', 'from x limit 1', '--data', join(folder, file)]), 10_000, `--data ${file}`);
      expect(result.stderr, file).toContain('DATA_INVALID');
      expect(result.stderr, file).toContain(words);
      expect(result.stderr, file).not.toContain('unexpected error');
    }
    // In a folder they are skipped, as other files that are not data are.
    writeFileSync(join(folder, 'ok.csv'), 'a,b\n1,2\n');
    const listed = await bounded(ckql(['query', 'from ok', '--data', folder, '--format', 'ndjson']), 10_000, 'the folder');
    expect(listed.stderr).toBe('');
    expect(listed.stdout.trim()).toBe('{"_id":1,"a":1,"b":2}');
  });
});

describe('ckql query --data over generated hostile data files', () => {
  // (the PostgreSQL engines take the same option through loadFiles: test/engine/sql/hostile-data.test.ts)
  it('refuses invalid UTF-8 unless --invalid-utf8 replace says to keep U+FFFD, and refuses another mode', async () => {
    const latin = join(freshFolder(), 'latin.csv');
    writeFileSync(latin, Buffer.concat([Buffer.from('city,n\nBerlin,1\nM'), Buffer.from([0xfc]), Buffer.from('nchen,2\n')]));
    const refused = await ckql(['query', '--data', latin, 'from latin']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('error[DATA_INVALID]');
    expect(refused.stderr).toContain('line 3, byte 17: not UTF-8');
    const kept = await ckql(['query', '--invalid-utf8', 'replace', '--format', 'ndjson', '--data', latin, 'from latin select city']);
    expect(kept.code).toBe(0);
    expect(ndjson(kept.stdout)).toEqual([{ city: 'Berlin' }, { city: 'M\uFFFDnchen' }]);
    const other = await ckql(['query', '--invalid-utf8', 'latin1', '--data', latin, 'from latin']);
    expect(other.code).toBe(2);
    expect(other.stderr).toContain('--invalid-utf8 must be one of refuse, replace');
  });

  // (the same files through load on the memory engine and PGlite: test/engine/sql/hostile-data.test.ts)
  it('gives an answer or a typed error, in bounded time', async () => {
    await fc.assert(
      fc.asyncProperty(hostileDataFiles, async ({ name, body }) => {
        const file = join(freshFolder(), name);
        writeFileSync(file, body);
        const result = await bounded(ckql(['query', '--data', file, '--format', 'ndjson', 'from d limit 3']), 10_000, `query --data ${name}`);
        expect(result.stderr + result.stdout, name).not.toMatch(/unexpected error|this is a bug|Maximum call stack|RangeError|TypeError/);
        // an answer, or the data error naming the file
        expect([0, 1], `${name}: exit ${String(result.code)}\n${result.stderr}`).toContain(result.code);
        if (result.code === 1) expect(result.stderr, name).toContain(`error[DATA_INVALID]: ${file}`);
      }),
      { numRuns: 8, seed: 30 },
    );
  });
});

/** A client over `serveStreams`, the function `ckql lsp --stdio` runs, with its raw input to write to. */
function languageServer(): { client: MessageConnection; raw: PassThrough } {
  const raw = new PassThrough();
  const toClient = new PassThrough();
  void serveStreams(raw, toClient, { env: { HOME: dir } });
  const client = createMessageConnection(new StreamMessageReader(toClient), new StreamMessageWriter(raw));
  client.listen();
  return { client, raw };
}

function nextDiagnostics(client: MessageConnection, uri: string): Promise<{ code: string }[]> {
  return new Promise((resolve) => {
    const subscription = client.onNotification('textDocument/publishDiagnostics', (params: { uri: string; diagnostics: { code: string }[] }) => {
      if (params.uri !== uri) return;
      subscription.dispose();
      resolve(params.diagnostics);
    });
  });
}

describe('the language server over hostile documents and framing', () => {
  it('answers after a message without Content-Length, and skips an over-long one', async () => {
    const { client, raw } = languageServer();
    try {
      const body = JSON.stringify({ jsonrpc: '2.0', method: 'nonsense', params: {} });
      raw.write(`Content-Type: application/vscode-jsonrpc\r\n\r\n${body}`);
      const initialized = await bounded(client.sendRequest('initialize', { processId: null, rootUri: null, capabilities: {} }), 10_000, 'initialize');
      expect(initialized).toMatchObject({ capabilities: expect.any(Object) });
    } finally {
      client.dispose();
      raw.end();
    }
  });

  it('drops a body past the bound as it streams, and reads the next message', async () => {
    const out = new PassThrough();
    const problems: string[] = [];
    const framing = framedMessages((problem) => problems.push(problem), 100);
    framing.pipe(out);
    let read = '';
    out.on('data', (chunk: Buffer) => (read += chunk.toString()));
    const good = '{"jsonrpc":"2.0","method":"x"}';
    framing.write(`Content-Length: 500\r\n\r\n${'a'.repeat(200)}`);
    framing.write(`${'a'.repeat(300)}Content-Length: ${good.length}\r\n\r\n${good}`);
    await new Promise((resolve) => setImmediate(resolve));
    expect(problems).toEqual(['a message of 500 bytes (more than 100) was skipped']);
    expect(read).toBe(`Content-Length: ${good.length}\r\n\r\n${good}`);
  });

  it('checks a document once its edits pause: 100 quick edits of a 10,000-line script are one analysis, and a hover is answered after them', async () => {
    const { client, raw } = languageServer();
    try {
      await client.sendRequest('initialize', { processId: null, rootUri: null, capabilities: {} });
      await client.sendNotification('initialized', {});
      const uri = pathToFileURL(join(dir, 'big.ckql')).href;
      const lines = Array.from({ length: 10_000 }, (_, i) => `from courses where level = ${i};`);
      // One handler: the protocol library keeps one per method, so a second would replace this count.
      const published: number[] = [];
      const waiting = new Map<number, () => void>();
      client.onNotification('textDocument/publishDiagnostics', (params: { uri: string; version?: number }) => {
        if (params.uri !== uri) return;
        published.push(params.version ?? -1);
        waiting.get(params.version ?? -1)?.();
      });
      const versionPublished = (version: number): Promise<void> => new Promise((resolve) => waiting.set(version, resolve));
      const opened = versionPublished(1);
      await client.sendNotification('textDocument/didOpen', { textDocument: { uri, languageId: 'ckql', version: 1, text: lines.join('\n') } });
      await bounded(opened, 20_000, 'the first diagnostics');
      const last = versionPublished(101);
      for (let version = 2; version <= 101; version++) {
        await client.sendNotification('textDocument/didChange', {
          textDocument: { uri, version },
          contentChanges: [{ range: { start: { line: 0, character: 27 }, end: { line: 0, character: 28 } }, text: String(version % 10) }],
        });
      }
      const hover = await bounded(client.sendRequest('textDocument/hover', { textDocument: { uri }, position: { line: 5, character: 15 } }), 20_000, 'hover');
      expect(hover).toMatchObject({ contents: expect.any(Object) });
      await bounded(last, 20_000, 'the diagnostics of the last version');
      // the open, and the last edit (an edit may land after a pause the machine made): never one per edit
      expect(published.length, published.join(',')).toBeLessThanOrEqual(4);
      expect(published.at(-1)).toBe(101);
    } finally {
      client.dispose();
      raw.end();
    }
  });

  it('diagnoses hostile documents (a UNC file URI, an alias bomb, templates nested 5,000 deep) and keeps serving', async () => {
    const { client, raw } = languageServer();
    try {
      await client.sendRequest('initialize', { processId: null, rootUri: pathToFileURL(dir).href, capabilities: {} });
      await client.sendNotification('initialized', {});
      const documents = [
        { uri: 'file://server/share/q.ckql', languageId: 'ckql', text: 'from courses wher a = 1' },
        { uri: pathToFileURL(join(dir, 'bomb', 'ckql.config.yaml')).href, languageId: 'yaml', text: fc.sample(aliasBomb, { numRuns: 1, seed: 9 })[0]! },
        { uri: pathToFileURL(join(dir, 'deep.ts')).href, languageId: 'typescript', text: fc.sample(nestedTemplates, { numRuns: 1, seed: 2 })[0]! },
        { uri: pathToFileURL(join(dir, 'deeper.ts')).href, languageId: 'typescript', text: `const q = ckql\`from x where a = ${'${`'.repeat(5_000)}${'`}'.repeat(5_000)}\`;\n` },
      ];
      for (const document of documents) {
        const published = nextDiagnostics(client, document.uri);
        await client.sendNotification('textDocument/didOpen', { textDocument: { ...document, version: 1 } });
        const diagnostics = await bounded(published, 15_000, `diagnostics of ${document.uri}`);
        expect(Array.isArray(diagnostics)).toBe(true);
      }
      const hover = await bounded(client.sendRequest('textDocument/hover', { textDocument: { uri: documents[0]!.uri }, position: { line: 0, character: 2 } }), 10_000, 'hover');
      expect(hover).not.toBeUndefined();
    } finally {
      client.dispose();
      raw.end();
    }
  });
});

/**
 * Drives a real REPL session through real streams: PassThrough input and
 * output, as node:repl would get from a terminal (`terminal: true`) or a
 * pipe. Output is collected; tests wait for text to appear (never for a
 * fixed time) and read what came after the last input.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PassThrough } from 'node:stream';
import { stripVTControlCharacters } from 'node:util';
import { connect } from '../../src/client/connect.js';
import { demoDataDir, openSource, type Source, type SourceSpec } from '../../src/session/source.js';
import type { Config } from '../../src/config/types.js';
import { startRepl, type ReplOptions } from '../../src/repl/index.js';

export interface Driver {
  readonly input: PassThrough;
  /** everything written so far, escape codes removed */
  text(): string;
  /** everything written so far, as written */
  raw(): string;
  /** output since the last `send` */
  since(): string;
  send(text: string): void;
  /** resolves once `pattern` appears in the output after the last `send` */
  waitFor(pattern: RegExp | string, timeoutMs?: number): Promise<string>;
  /** resolves once the whole output so far matches `pattern` */
  waitForText(pattern: RegExp, timeoutMs?: number): Promise<string>;
  /** `.exit`, then the session's end */
  exit(): Promise<void>;
  readonly done: Promise<void>;
}

export function startDriver(options: Partial<ReplOptions> & { source: Source }): Driver {
  const input = new PassThrough();
  const output = new PassThrough();
  let raw = '';
  let mark = 0;
  const waiters = new Set<() => void>();
  output.on('data', (chunk: Buffer) => {
    raw += chunk.toString('utf8');
    for (const wake of waiters) wake();
  });
  const done = startRepl({
    input,
    output,
    errorOutput: new PassThrough(),
    terminal: true,
    historyFile: null,
    color: false,
    columns: 120,
    ...options,
  });
  const clean = (): string => stripVTControlCharacters(raw);
  /** Resolves with `read()` once `test()` holds; checked on every output chunk. */
  const until = (test: () => boolean, read: () => string, what: string, timeoutMs: number): Promise<string> =>
    new Promise((resolve, reject) => {
      if (test()) {
        resolve(read());
        return;
      }
      const timer = setTimeout(() => {
        waiters.delete(wake);
        reject(new Error(`timed out waiting for ${what}; output since the last input:\n${driver.since()}`));
      }, timeoutMs);
      const wake = (): void => {
        if (!test()) return;
        clearTimeout(timer);
        waiters.delete(wake);
        resolve(read());
      };
      waiters.add(wake);
    });
  const driver: Driver = {
    input,
    done,
    text: clean,
    raw: () => raw,
    since: () => clean().slice(mark),
    send: (text) => {
      mark = clean().length;
      input.write(text);
    },
    waitFor: (pattern, timeoutMs = 10_000) =>
      until(() => {
        const seen = driver.since();
        return typeof pattern === 'string' ? seen.includes(pattern) : pattern.test(seen);
      }, driver.since, `${String(pattern)} after the last input`, timeoutMs),
    waitForText: (pattern, timeoutMs = 10_000) =>
      until(() => pattern.test(clean()), clean, `${String(pattern)} in the whole output`, timeoutMs),
    exit: async () => {
      input.write('.exit\r');
      await done;
    },
  };
  return driver;
}

/** The prompt that ends every answer. */
export const prompt = 'ckql> ';

/** The bundled demo data, served in-process as `ckql` serves it. */
export function openDemo(): Promise<Source> {
  return openSource({ kind: 'data', paths: [demoDataDir], demo: true });
}

export function configWith(queries: Record<string, { query: string; params?: Record<string, string | number | boolean | null> }>): Config {
  return {
    file: '/tmp/ckql.config.yaml',
    defaultProfile: undefined,
    profiles: new Map(),
    queries: new Map(
      Object.entries(queries).map(([name, q]) => [name, { name, query: q.query, params: q.params ?? {} }]),
    ),
  };
}

export interface SlowPortal {
  readonly url: string;
  /** resolves when a request for the slow resource has arrived */
  readonly arrived: Promise<void>;
  /** resolves when the client closed that request's connection */
  readonly abandoned: Promise<void>;
  /** answers the requests for `slow` held so far, with one record named `slow` */
  release(): void;
  close(): Promise<void>;
}

/**
 * A portal that never answers for the resource `slow` (until the client
 * gives up) and answers anything else with one record: a real HTTP server
 * for cancel tests.
 */
export async function startSlowPortal(): Promise<SlowPortal> {
  let arrive = (): void => undefined;
  let abandon = (): void => undefined;
  const arrived = new Promise<void>((resolve) => (arrive = resolve));
  const abandoned = new Promise<void>((resolve) => (abandon = resolve));
  const held: ServerResponse[] = [];
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      const request = JSON.parse(body) as { resource_id: string; limit?: number };
      if (request.resource_id === 'slow') {
        held.push(res);
        res.on('close', () => abandon());
        arrive();
        return;
      }
      answer(res, request, 'quick');
    });
  });
  const answer = (res: ServerResponse, request: { resource_id: string; limit?: number }, name: string): void => {
    const records = request.limit === 0 ? [] : [{ _id: 1, name }];
    res.setHeader('content-type', 'application/json');
    res.end(
      JSON.stringify({
        help: 'x',
        success: true,
        result: {
          resource_id: request.resource_id,
          fields: [{ id: '_id', type: 'int' }, { id: 'name', type: 'text' }],
          records,
          total: 1,
          total_was_estimated: false,
          limit: request.limit ?? 100,
          include_total: true,
          records_format: 'objects',
        },
      }),
    );
  };
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    arrived,
    abandoned,
    release: () => {
      for (const res of held.splice(0)) answer(res, { resource_id: 'slow' }, 'slow');
    },
    close: async () => {
      for (const res of held) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A source for a portal URL, built as the CLI builds one. */
export function portalSource(url: string, token?: string): Source {
  const spec: SourceSpec = { kind: 'url', url, ...(token === undefined ? {} : { token }) };
  const client = connect({ url, retries: 0, ...(token === undefined ? {} : { token }) });
  return {
    label: url,
    spec,
    client,
    listResources: async () => [{ id: 'slow' }, { id: 'quick' }],
    setTarget: async (target) => client.setTarget(target),
    close: () => client.close(),
  };
}

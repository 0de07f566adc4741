/**
 * The memory engine's core runs with no Node built-in (docs/engines.md, "The
 * memory engine's core and its Node edges"): bundled by esbuild for a
 * browser, with the executor and the parser, it must resolve no Node module,
 * and run in a realm that has only what a browser worker has (no `Buffer`,
 * `process` or `require`), where it loads the demo data and answers queries
 * as the Node loader and the Node process do.
 */
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { runInContext, createContext } from 'node:vm';
import { build } from 'esbuild';
import { beforeAll, describe, expect, test } from 'vitest';
import { loadResources } from '../../src/engine/node/load-resources.js';
import { memoryEngine } from '../../src/engine/memory/engine.js';
import { engineTree } from '../../src/execute/build.js';
import { execute, readAll } from '../../src/execute/run.js';
import { parse } from '../../src/syntax/parse.js';
import type { Table } from '../../src/datastore/types.js';

const root = resolve(import.meta.dirname, '../..');
const data = join(root, 'examples/data');
const src = (path: string): string => JSON.stringify(join(root, 'src', path));

const entry = `
export { loadTable } from ${src('engine/memory/load.ts')};
export { memoryEngine } from ${src('engine/memory/engine.ts')};
export { engineTree } from ${src('execute/build.ts')};
export { execute, readAll } from ${src('execute/run.ts')};
export * as local from ${src('execute/local.ts')};
export * as shaped from ${src('execute/shaped.ts')};
export * as window from ${src('execute/window.ts')};
export { parse } from ${src('syntax/parse.ts')};
`;

interface Core {
  loadTable(source: { name: string; data: AsyncIterable<Uint8Array> }): Promise<Table>;
  memoryEngine(tables: readonly Table[]): unknown;
  engineTree(engine: unknown, query: unknown, options: { all: boolean; total: boolean }): unknown;
  execute(tree: unknown): Promise<unknown>;
  readAll(run: unknown): Promise<unknown[]>;
  parse(text: string): unknown;
}

let bundle: { text: string; inputs: string[] };
let core: Core;

beforeAll(async () => {
  const result = await build({
    stdin: { contents: entry, resolveDir: root, loader: 'ts' },
    bundle: true,
    platform: 'browser',
    format: 'iife',
    globalName: 'core',
    write: false,
    metafile: true,
    logLevel: 'silent',
  });
  bundle = { text: result.outputFiles[0]?.text ?? '', inputs: Object.keys(result.metafile.inputs) };
  // A browser worker's globals, and nothing of Node's.
  const context = createContext({
    TextDecoder, TextEncoder, AbortController, AbortSignal, Event, EventTarget, DOMException,
    setTimeout, clearTimeout, queueMicrotask, performance, console, URL, structuredClone,
  });
  runInContext(bundle.text, context);
  core = runInContext('core', context) as Core;
}, 60_000);

/** A file's bytes in chunks of 1 to 4,096 bytes, drawn from a seeded generator. */
async function* randomChunks(bytes: Uint8Array, seed: number): AsyncIterable<Uint8Array> {
  let state = seed >>> 0;
  for (let at = 0; at < bytes.length;) {
    state = (Math.imul(state, 1_103_515_245) + 12_345) >>> 0;
    const size = 1 + (state % 4096);
    yield bytes.subarray(at, at + size);
    at += size;
  }
}

const plain = (value: unknown): unknown => JSON.parse(JSON.stringify(value));

describe('the memory core in a browser bundle', () => {
  test('esbuild bundles it for a browser: no Node built-in, no Node edge among its inputs', () => {
    expect(bundle.text.length).toBeGreaterThan(0);
    expect(bundle.inputs.filter((input) => /^node:|src\/engine\/node\/|src\/(client|session|server|cli)\//.test(input))).toEqual([]);
    expect(bundle.inputs.some((input) => input.endsWith('src/engine/memory/load.ts'))).toBe(true);
  });

  test('without Buffer, process or require it loads the demo data as the Node loader does', async () => {
    const tables = await loadResources(data);
    for (const [k, table] of tables.entries()) {
      const file = table.source as string;
      const loaded = await core.loadTable({ name: file, data: randomChunks(readFileSync(file), 7 + k) });
      expect(plain(loaded.fields)).toEqual(plain(table.fields));
      expect(plain(loaded.rows)).toEqual(plain(table.rows));
    }
  });

  test.each([
    'from courses group by subject select subject, count(*) as n, avg(credits) as credits order by subject',
    'from enrolments e join courses c on e.course = c.code where e.grade >= 5 group by c.subject select c.subject, count(*) as n order by n desc, c.subject',
    'from courses where title like "%a%" select code, title, start_date order by start_date desc, code limit 25',
  ])('%s answers as in Node', async (query) => {
    const node = await loadResources(data);
    const worker = await Promise.all(node.map((table, k) => core.loadTable({ name: table.source as string, data: randomChunks(readFileSync(table.source as string), 31 + k) })));
    // the same names for the tables: the Node loader's come from the folder's datapackage.json
    const named = worker.map((table, k) => ({ ...table, id: (node[k] as Table).id, aliases: (node[k] as Table).aliases }));
    const inNode = await readAll(await execute(engineTree(memoryEngine(node), parse(query), { all: true, total: false })));
    const inWorker = await core.readAll(await core.execute(core.engineTree(core.memoryEngine(named), core.parse(query), { all: true, total: false })));
    expect(inNode.length).toBeGreaterThan(0);
    expect(plain(inWorker)).toEqual(plain(inNode));
  });
});

/**
 * `loadFiles`: a CSV file streamed into a PostgreSQL datastore: types
 * inferred chunk by chunk as the memory loader infers them over the whole
 * file, cells copied as written (a numeric keeps its scale), progress per
 * batch, and an interrupted load that leaves nothing (or the table it was
 * replacing) behind.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DatastoreError, ToolError } from '../../../src/errors.js';
import { loadResources } from '../../../src/engine/memory/load.js';
import { loadFiles } from '../../../src/engine/sql/load-files.js';
import { openEngine } from '../../../src/engine/open.js';
import type { LoadProgress } from '../../../src/engine/sql/load.js';
import type { TestEngines } from './engines.js';
import { engineNames, openTestEngines } from './engines.js';

const dir = mkdtempSync(join(tmpdir(), 'ckql-load-files-'));

// 10,001 rows: the type pass reads 10,000-row chunks, so the last row's values widen the first chunk's types.
const wide = join(dir, 'wide.csv');
{
  let text = 'n,maybe,when,label\n';
  for (let i = 1; i <= 10_000; i++) text += `${i},,2020-01-${String(1 + (i % 28)).padStart(2, '0')},row ${i}\n`;
  text += '7.50,TRUE,2020-02-01T10:30:00,"last, ""quoted"""\n';
  writeFileSync(wide, text);
}
const prices = join(dir, 'prices.csv');
writeFileSync(prices, '_id,item,price\n9,tea,7.50\n8,cake,2.0\n7,big,9007199254740993\n6,none,\n');
const broken = join(dir, 'broken.csv');
writeFileSync(broken, 'a,b\n1,2\n3,4,5\n');

let engines: TestEngines;
beforeAll(async () => {
  engines = await openTestEngines([]);
});
afterAll(async () => {
  await engines?.close();
});

describe.each(engineNames)('%s', (name) => {
  it('infers the types the memory loader infers over the whole file, across chunks', async () => {
    const engine = engines.get(name);
    const progress: LoadProgress[] = [];
    const loaded = await loadFiles(engine.db, [wide], { replace: true, indexes: false, batchRows: 4000, onProgress: (p) => progress.push(p) });
    await engine.refresh();
    expect(loaded).toEqual([{ id: expect.any(String), alias: 'wide', rows: 10_001 }]);
    const [memory] = await loadResources(wide);
    const fields = (await engine.resource('wide'))?.fields;
    expect(fields).toEqual(memory?.fields);
    expect(fields?.map((f) => f.type)).toEqual(['int', 'numeric', 'bool', 'timestamp', 'text']);
    expect(progress.map((p) => p.rows)).toEqual([4000, 8000, 10_001]);
    expect(progress.every((p) => p.totalRows === 10_001 && p.resource === 'wide')).toBe(true);
    const last = await engine.search({ resource_id: 'wide', sort: '_id desc', limit: 1 });
    expect(last.records).toEqual([{ _id: 10_001, n: '7.50', maybe: true, when: '2020-02-01T10:30:00', label: 'last, "quoted"' }]);
  });

  it('copies cells as written: scale and digits kept, empty cells null, the file\'s _id replaced by the position', async () => {
    const engine = engines.get(name);
    await loadFiles(engine.db, [prices], { replace: true, indexes: false, alias: 'priced' });
    await engine.refresh();
    const result = await engine.search({ resource_id: 'priced' });
    expect(result.records).toEqual([
      { _id: 1, item: 'tea', price: '7.50' },
      { _id: 2, item: 'cake', price: '2.0' },
      { _id: 3, item: 'big', price: '9007199254740993' },
      { _id: 4, item: 'none', price: null },
    ]);
  });

  it('an interrupted load keeps nothing of the new table, and the one it replaced stays', async () => {
    const engine = engines.get(name);
    await loadFiles(engine.db, [prices], { replace: true, indexes: false, alias: 'kept' });
    const controller = new AbortController();
    const error = await loadFiles(engine.db, [wide], {
      replace: true,
      indexes: false,
      alias: 'kept',
      batchRows: 1000,
      signal: controller.signal,
      onProgress: () => controller.abort(),
    }).then(() => undefined, (e: unknown) => e);
    expect(error).toBeInstanceOf(Error);
    expect(controller.signal.aborted).toBe(true);
    await engine.refresh();
    expect((await engine.search({ resource_id: 'kept' })).total).toBe(4);
    const fresh = await loadFiles(engine.db, [wide], { indexes: false, alias: 'fresh', signal: AbortSignal.abort() }).then(() => undefined, (e: unknown) => e);
    expect(fresh).toBeInstanceOf(Error);
    await engine.refresh();
    expect(await engine.resource('fresh')).toBeUndefined();
  });

  it('a malformed CSV is DATA_INVALID with its line, and no table is made', async () => {
    const engine = engines.get(name);
    const error = await loadFiles(engine.db, [broken], { indexes: false }).then(() => undefined, (e: unknown) => e);
    expect(error).toBeInstanceOf(ToolError);
    expect((error as ToolError).code).toBe('DATA_INVALID');
    expect((error as ToolError).message).toContain('broken.csv');
    await engine.refresh();
    expect(await engine.resource('broken')).toBeUndefined();
  });
});

it('openEngine loads files into PGlite through the same stream (ckql serve --engine pglite DIR)', async () => {
  const engine = await openEngine({ engine: 'pglite', data: [prices] });
  try {
    expect((await engine.search({ resource_id: 'prices', limit: 1 })).records).toEqual([{ _id: 1, item: 'tea', price: '7.50' }]);
  } finally {
    await engine.close();
  }
});

it('the abort error of an interrupted copy is ABORTED', async () => {
  const engine = engines.get('pglite');
  const controller = new AbortController();
  const error = await loadFiles(engine.db, [wide], { replace: true, indexes: false, alias: 'stopped', batchRows: 1000, signal: controller.signal, onProgress: () => controller.abort() }).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(DatastoreError);
  expect((error as DatastoreError).code).toBe('ABORTED');
});

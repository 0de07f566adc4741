import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Catalog } from '../../../src/engine/memory/catalog.js';
import { resourceIdFor, tableFromRows } from '../../../src/engine/memory/load.js';
import { loadResources } from '../../../src/engine/node/load-resources.js';
import { DatastoreError, ToolError } from '../../../src/errors.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ckql-catalog-'));
  await writeFile(join(dir, 'courses.csv'), 'title\nAlgebra\n');
  await writeFile(join(dir, 'schools.json'), '[{"name":"North"}]');
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('Catalog', () => {
  test('finds tables by id and by alias; lists them in load order', async () => {
    const catalog = new Catalog(await loadResources(dir));
    expect(catalog.list().map((t) => t.aliases[0])).toEqual(['courses', 'schools']);
    expect(catalog.find('courses')?.id).toBe(resourceIdFor('courses'));
    expect(catalog.find(resourceIdFor('schools'))).toBe(catalog.find('schools'));
    expect(catalog.find('nope')).toBeUndefined();
    expect(catalog.tables).toBe(catalog.list());
  });

  test('resolve gives the Not Found error the server sends', () => {
    const catalog = new Catalog([tableFromRows([{ a: 1 }], { alias: 'a' })]);
    try {
      catalog.resolve('nope');
      throw new Error('expected an error');
    } catch (error) {
      expect(error).toBeInstanceOf(DatastoreError);
      expect((error as DatastoreError).status).toBe(404);
      expect((error as DatastoreError).body).toEqual({ __type: 'Not Found Error', message: 'Not found: Resource "nope" was not found.' });
    }
  });

  test('an id wins over an alias spelled the same', () => {
    const first = tableFromRows([], { id: 'shared', alias: 'first' });
    const second = tableFromRows([], { id: 'other', alias: 'shared' });
    expect(new Catalog([first, second]).find('shared')).toBe(first);
  });

  test('one id or one alias on two tables is DATA_DUPLICATE_ALIAS', () => {
    const a = tableFromRows([], { alias: 'x' });
    const b = tableFromRows([], { id: 'different', alias: 'x' });
    expect(() => new Catalog([a, b])).toThrow(ToolError);
    expect(() => new Catalog([a, tableFromRows([], { alias: 'x' })])).toThrow(/"4|x/);
    try {
      new Catalog([a, b]);
    } catch (error) {
      expect((error as ToolError).code).toBe('DATA_DUPLICATE_ALIAS');
    }
  });

  test('a name like constructor or __proto__ finds nothing unless a table has it', () => {
    const catalog = new Catalog([tableFromRows([], { alias: 'a' })]);
    expect(catalog.find('constructor')).toBeUndefined();
    expect(catalog.find('__proto__')).toBeUndefined();
    expect(new Catalog([tableFromRows([], { alias: '__proto__' })]).find('__proto__')?.aliases).toEqual(['__proto__']);
  });
});

/**
 * `ckql serve` against CKAN 2.12 (and 2.11) where a port of CKAN running its
 * own tests found it answered otherwise. Each expectation is what CKAN's
 * source gives (dev-v2.12, ckanext/datastore/backend/postgres.py,
 * logic/schema.py, filters.py, plugin.py), on the PGlite engine and, where
 * the point is not one of the memory engine's listed differences (README,
 * Differences from a portal), on the memory engine too; over HTTP on
 * 127.0.0.1 port 0.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { memoryEngine } from '../../../src/engine/memory/engine.js';
import { evaluate } from '../../../src/engine/memory/evaluate.js';
import { pgliteEngine } from '../../../src/engine/pglite/engine.js';
import type { Engine } from '../../../src/engine/types.js';
import { startServer } from '../../../src/server/server.js';
import type { RunningServer } from '../../../src/server/server.js';
import { typedTable } from './engines.js';

const things = typedTable('things', [['b', 'bool'], ['d', 'date'], ['tags', '_text'], ['name', 'text']], [
  { b: true, d: '2020-01-01', tags: ['one', 'two'], name: 'x' },
  { b: false, d: '2021-01-01', tags: ['one'], name: "['x']" },
  { b: null, d: null, tags: null, name: null },
]);

type Version = '2.11' | '2.12';
type EngineName = 'pglite' | 'memory';
const servers = new Map<string, RunningServer>();
let pglite: Engine;

beforeAll(async () => {
  pglite = await pgliteEngine({ tables: [things], load: { indexes: false } });
  const memory = memoryEngine([things]);
  for (const ckan of ['2.11', '2.12'] as const) {
    for (const [name, engine] of [['pglite', pglite], ['memory', memory]] as const) {
      servers.set(`${name} ${ckan}`, await startServer({ engine, port: 0, ckan }));
      servers.set(`${name} ${ckan} max 1`, await startServer({ engine, port: 0, ckan, maxLimit: 1 }));
    }
  }
}, 60_000);

afterAll(async () => {
  for (const server of servers.values()) await server.close();
  await pglite?.close();
});

async function search(name: EngineName, ckan: Version, body: Record<string, unknown>, max = false): Promise<{ status: number; result?: Record<string, unknown>; error?: Record<string, unknown> }> {
  const server = servers.get(`${name} ${ckan}${max ? ' max 1' : ''}`)!;
  const response = await fetch(`${server.url}/api/3/action/datastore_search`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ resource_id: 'things', ...body }),
  });
  const answer = (await response.json()) as { result?: Record<string, unknown>; error?: Record<string, unknown> };
  return { status: response.status, ...answer };
}

const ids = (result: Record<string, unknown> | undefined): unknown[] => ((result?.['records'] ?? []) as { _id: unknown }[]).map((r) => r._id);
const both = ['pglite', 'memory'] as const;
const versions = ['2.11', '2.12'] as const;

describe.each(both)('%s', (name) => {
  it.each(versions)('--max-limit is the limit of a request without one, as rows_default capped at rows_max (%s)', async (ckan) => {
    const { status, result } = await search(name, ckan, { fields: ['_id'] }, true);
    expect(status).toBe(200);
    expect(result?.['limit']).toBe(1);
    expect(ids(result)).toEqual([1]);
  });

  it.each(versions)('records_format "" is CKAN\'s default, objects, and is echoed so (%s)', async (ckan) => {
    const { result } = await search(name, ckan, { records_format: '', limit: 1, fields: ['_id'] });
    expect(result?.['records_format']).toBe('objects');
    expect(result?.['records']).toEqual([{ _id: 1 }]);
  });

  it.each(versions)('a text array column sorts as PostgreSQL sorts arrays: ["one"] before ["one", "two"] (%s)', async (ckan) => {
    expect(ids((await search(name, ckan, { sort: 'tags', fields: ['_id'] })).result)).toEqual([2, 1, 3]);
    expect(ids((await search(name, ckan, { sort: 'tags desc', fields: ['_id'] })).result)).toEqual([3, 1, 2]);
  });

  it.each(versions)('a per-field q value that is no text is refused, as CKAN refuses it, however it is asked (%s)', async (ckan) => {
    for (const q of [{ name: 1 }, { b: true }, { name: { x: 1 } }, { name: null }, '{"name": 2}']) {
      expect([q, (await search(name, ckan, { q, fields: ['_id'] })).error]).toEqual([q, expect.objectContaining({ q: [expect.stringMatching(/^invalid value "(name|b)"$/)] })]);
    }
    // the library's evaluate too (it threw a TypeError from inside the text search)
    expect(() => evaluate({ resource_id: 'things', q: '{"name": 2}' }, things)).toThrow(/invalid value "name"/);
  });

  it.each(versions)('a q text holding a JSON object is a per-field search, from a JSON body too (%s)', async (ckan) => {
    const asText = await search(name, ckan, { q: '{"name": "x"}', fields: ['_id'] });
    const asObject = await search(name, ckan, { q: { name: 'x' }, fields: ['_id'] });
    expect(asText.status).toBe(200);
    expect(ids(asText.result)).toEqual(ids(asObject.result));
    expect(ids(asText.result)).toContain(1);
    expect(asText.result?.['q']).toEqual({ name: 'x' });
    // an object whose value is no text is refused, as CKAN's datastore_validate refuses it
    const numeric = await search(name, ckan, { q: '{"name": 1}' });
    expect({ status: numeric.status, error: numeric.error }).toEqual({ status: 409, error: { __type: 'Validation Error', q: ['invalid value "name"'] } });
  });

  it('2.12: a list of values on a field the table lacks is refused as datastore_validate words it', async () => {
    const { status, error } = await search(name, '2.12', { filters: { _full_text: ['x', 'y'] } });
    expect({ status, error }).toEqual({ status: 409, error: { __type: 'Validation Error', filters: ['invalid value "_full_text"'] } });
    const nested = await search(name, '2.12', { filters: { $or: [{ name: 'x' }, { nope: [1] }] } });
    expect(nested.error).toEqual({ __type: 'Validation Error', filters: ['invalid value "nope"'] });
  });

  it('2.12: a list or object operand is an array on most columns (PostgreSQL refuses it), Python text on a text column, an array on an array column', async () => {
    for (const filters of [{ d: { eq: ['2020-01-01'] } }, { b: { gt: [true] } }, { d: ['2020-01-01', ['2020-01-01']] }, { d: { lte: { a: 1 } } }]) {
      const { status, error } = await search(name, '2.12', { filters });
      expect({ filters, status, query: error?.['query'] }).toEqual({ filters, status: 409, query: ['Invalid query'] });
    }
    // str(['x']) is "['x']", which row 2 holds
    expect(ids((await search(name, '2.12', { filters: { name: { eq: ['x'] } } })).result)).toEqual([2]);
    expect(ids((await search(name, '2.12', { filters: { tags: { eq: ['one'] } } })).result)).toEqual([2]);
  });
});

describe('values a column cannot hold', () => {
  it.each(versions)('pglite: a filter value PostgreSQL cannot read as the column\'s type is CKAN\'s 409 Invalid query, not a 500 (%s)', async (ckan) => {
    const maybe = await search('pglite', ckan, { filters: { b: 'maybe' } });
    expect({ status: maybe.status, query: maybe.error?.['query'] }).toEqual({ status: 409, query: ['Invalid query'] });
    expect(JSON.stringify(maybe.error?.['info'])).toContain('invalid input syntax for type boolean');
  });

  it('pglite 2.12: an operator\'s empty text on a boolean is the same 409', async () => {
    const empty = await search('pglite', '2.12', { filters: { b: { lte: '' } } });
    expect({ status: empty.status, query: empty.error?.['query'] }).toEqual({ status: 409, query: ['Invalid query'] });
  });
});

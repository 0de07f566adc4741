/**
 * Numbers reach the client as CKAN writes them: PostgreSQL's JSON text of
 * the page, unchanged (docs/ckan-2.11-reference.md §4), so a `numeric`
 * keeps its written scale and an `int8` beyond 2^53 every digit, in
 * `datastore_search` (objects, lists, csv) and `datastore_search_sql`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer } from '../../../src/server/server.js';
import type { RunningServer } from '../../../src/server/server.js';
import type { TestEngines } from './engines.js';
import { engineNames, openTestEngines, typedTable } from './engines.js';

const amounts = typedTable(
  'amounts',
  [['price', 'numeric'], ['big', 'int8'], ['n', 'int4'], ['ratio', 'float8']],
  [
    { price: '7.50', big: '9007199254740993', n: 1, ratio: 1e20 },
    { price: '2.0', big: '-9223372036854775808', n: 2, ratio: 1.5e-7 },
    { price: '10', big: '9223372036854775807', n: 3, ratio: 0.5 },
    { price: '0.1', big: '12', n: 4, ratio: 0.1 + 0.2 },
    { price: '12345678901234567890.123', big: null, n: 5, ratio: null },
  ],
);

let engines: TestEngines;
const servers = new Map<string, RunningServer>();
beforeAll(async () => {
  engines = await openTestEngines([amounts]);
  for (const name of engineNames) servers.set(name, await startServer({ engine: engines.get(name), port: 0 }));
});
afterAll(async () => {
  for (const server of servers.values()) await server.close();
  await engines?.close();
});

const postText = async (base: string, action: string, body: unknown): Promise<string> => {
  const response = await fetch(`${base}/api/3/action/${action}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  expect(response.status).toBe(200);
  return response.text();
};

describe.each(engineNames)('%s', (name) => {
  it('keeps a numeric\'s scale and an int8\'s digits as text where a double would change them', async () => {
    const result = await engines.get(name).search({ resource_id: 'amounts', fields: ['price', 'big', 'n'] });
    expect(result.records).toEqual([
      { price: '7.50', big: '9007199254740993', n: 1 },
      { price: '2.0', big: '-9223372036854775808', n: 2 },
      { price: 10, big: '9223372036854775807', n: 3 },
      { price: 0.1, big: 12, n: 4 },
      { price: '12345678901234567890.123', big: null, n: 5 },
    ]);
  });

  it('filters numeric and int8 by PostgreSQL\'s equality, whatever the written form', async () => {
    const search = (filters: Record<string, unknown>) => engines.get(name).search({ resource_id: 'amounts', filters, fields: ['n'] });
    expect((await search({ price: '7.5' })).records).toEqual([{ n: 1 }]);
    expect((await search({ price: 2 })).records).toEqual([{ n: 2 }]);
    expect((await search({ big: '9007199254740993' })).records).toEqual([{ n: 1 }]);
    // A JSON number beyond 2^53 is rounded before it reaches ckql (2^53 + 1 → 2^53): no row holds that.
    expect((await search({ big: JSON.parse('9007199254740993') as number })).records).toEqual([]);
  });

  it('writes them on the wire as JSON numbers, as written, in objects, lists and csv', async () => {
    const base = (servers.get(name) as RunningServer).url;
    const objects = await postText(base, 'datastore_search', { resource_id: 'amounts', fields: ['price', 'big'], limit: 3 });
    expect(objects).toContain('"records":[{"price":7.50,"big":9007199254740993},{"price":2.0,"big":-9223372036854775808},{"price":10,"big":9223372036854775807}]');
    const lists = await postText(base, 'datastore_search', { resource_id: 'amounts', fields: ['price', 'big'], records_format: 'lists', offset: 4 });
    expect(lists).toContain('"records":[[12345678901234567890.123,null]]');
    const csv = await postText(base, 'datastore_search', { resource_id: 'amounts', fields: ['price', 'big'], records_format: 'csv', limit: 2 });
    expect(csv).toContain('"records":"7.50,9007199254740993\\n2.0,-9223372036854775808\\n"');
  });

  it('writes float8 values in PostgreSQL\'s own form (its exponents), as CKAN passes them through', async () => {
    const result = await engines.get(name).search({ resource_id: 'amounts', fields: ['ratio'] });
    expect(result.records).toEqual([{ ratio: '1e+20' }, { ratio: '1.5e-07' }, { ratio: 0.5 }, { ratio: 0.30000000000000004 }, { ratio: null }]);
    const base = (servers.get(name) as RunningServer).url;
    const text = await postText(base, 'datastore_search', { resource_id: 'amounts', fields: ['ratio'], limit: 2 });
    expect(text).toContain('"records":[{"ratio":1e+20},{"ratio":1.5e-07}]');
  });

  it('writes datastore_search_sql\'s numeric and int8 values as CKAN writes Decimal and int', async () => {
    const base = (servers.get(name) as RunningServer).url;
    const text = await postText(base, 'datastore_search_sql', { sql: 'SELECT price, big, n FROM amounts WHERE n < 3 ORDER BY n' });
    expect(text).toContain('"records":[{"price":7.50,"big":9007199254740993,"n":1},{"price":2.0,"big":-9223372036854775808,"n":2}]');
    expect(text).toContain('"fields":[{"id":"price","type":"numeric"},{"id":"big","type":"int8"},{"id":"n","type":"int4"}]');
  });
});

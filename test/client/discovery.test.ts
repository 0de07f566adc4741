/**
 * Discovery: `package_search` paged as CKAN caps it (a stub portal that
 * answers at most 1,000 rows whatever is asked, and counts the requests),
 * the catalogue of `ckql serve`, and `dataset/resource` names resolved once
 * with `package_show`.
 */
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect } from '../../src/client/connect.js';
import type { DatastoreClient } from '../../src/client/connect.js';
import { allDatasets, datastoreTables, searchDatasets, totalOrder } from '../../src/client/discovery.js';
import { splitResourceName } from '../../src/client/resource-names.js';
import { loadResources } from '../../src/engine/node/load-resources.js';
import { startServer } from '../../src/server/server.js';
import type { RunningServer } from '../../src/server/server.js';
import { startStubPortal } from '../helpers/stub-ckan.js';
import { exitCodeFor } from '../../src/cli/exit-codes.js';
import { makeTable } from '../server/tables.js';
import { SPENDING_ID, writePortalData } from '../helpers/portal-data.js';
import type { PortalData } from '../helpers/portal-data.js';

describe('package_search paged as CKAN caps it', () => {
  it('every one of 2,500 datasets exactly once, at most 1,000 rows per request, following start', async () => {
    const portal = await startStubPortal({ datasets: 2_500 });
    const client = connect({ url: portal.url });
    try {
      const progress: number[] = [];
      const names: string[] = [];
      for await (const dataset of allDatasets(client, { text: 'air', onPage: ({ fetched }) => progress.push(fetched) })) names.push(dataset.name);
      expect(names).toHaveLength(2_500);
      expect(new Set(names).size).toBe(2_500);
      const searches = portal.requests.filter((r) => r.action === 'package_search');
      expect(searches.map((r) => [r.body.rows, r.body.start ?? 0])).toEqual([[1000, 0], [1000, 1000], [1000, 2000]]);
      // A total order, so that pages over ties neither repeat nor skip.
      expect(searches[0]?.body.sort).toBe('score desc, metadata_modified desc, name asc');
      expect(progress).toEqual([1000, 2000, 2500]);
    } finally {
      await client.close();
      await portal.close();
    }
  });

  it('follows what came, not what was asked, on a portal whose rows_max is lower', async () => {
    const portal = await startStubPortal({ datasets: 700, rowsMax: 300 });
    const client = connect({ url: portal.url });
    try {
      let count = 0;
      for await (const _ of allDatasets(client)) count++;
      expect(count).toBe(700);
      expect(portal.requests.map((r) => r.body.start ?? 0)).toEqual([0, 300, 600]);
    } finally {
      await client.close();
      await portal.close();
    }
  });

  it('the first page with the count; the datastore mark is read from each resource', async () => {
    const portal = await startStubPortal({ datasets: 45 });
    const client = connect({ url: portal.url });
    try {
      const page = await searchDatasets(client, { organization: 'the org', rows: 5000 });
      expect(page.count).toBe(45);
      expect(page.datasets).toHaveLength(45);
      expect(portal.requests[0]?.body).toEqual({ fq: 'organization:"the org"', rows: 1000 });
      expect(page.datasets[0]).toEqual({
        id: 'id-dataset-00001', name: 'dataset-00001', title: 'Dataset 1', organization: 'The Org', modified: '2024-01-01T00:00:00',
        resources: [{ id: 'res-1', name: 'data', format: 'CSV', datastoreActive: true }],
      });
      expect(page.datasets[1]?.resources[0]?.datastoreActive).toBe(false);
    } finally {
      await client.close();
      await portal.close();
    }
  });

  it('keeps a sort that is total already', () => {
    expect(totalOrder('metadata_modified desc')).toBe('metadata_modified desc, name asc');
    expect(totalOrder('title_string asc, name desc')).toBe('title_string asc, name desc');
  });
});

describe('discovery over ckql serve', () => {
  let data: PortalData;
  let server: RunningServer;
  let client: DatastoreClient;

  beforeAll(async () => {
    data = writePortalData();
    server = await startServer({ tables: await loadResources([data.airQuality, data.cityBudget]), port: 0 });
    client = connect({ url: server.url });
  });

  afterAll(async () => {
    await client.close();
    await server.close();
    rmSync(data.root, { recursive: true, force: true });
  });

  it('finds the datasets of the served folders, with resources and ids', async () => {
    const page = await searchDatasets(client, { text: 'stations' });
    expect(page.count).toBe(1);
    expect(page.datasets[0]?.resources.map((r) => [r.name, r.datastoreActive])).toEqual([['measurements 2023', true], ['stations', true]]);
    const all = [];
    for await (const dataset of allDatasets(client)) all.push(dataset.name);
    expect(all.sort()).toEqual(['air-quality', 'city-budget']);
  });

  it('a dataset/resource name is searched as its resource, resolved once with package_show', async () => {
    const named = await client.search('from "air-quality/measurements 2023" where station = B select day, pm10');
    expect(named.records).toEqual([
      { day: '2023-01-01', pm10: 7.25 },
      { day: '2023-01-02', pm10: null },
    ]);
    const byAlias = await client.search({ resource_id: 'measurements-2023', limit: 0 });
    expect(named.resource_id).toBe(byAlias.resource_id);
    // A request and a parameter name it too; a different case of the resource's name is found.
    expect((await client.search({ resource_id: 'city-budget/spending', limit: 0 })).resource_id).toBe(SPENDING_ID);
    expect((await client.search('from $r limit 1', { params: { r: 'city-budget/Spending' } })).resource_id).toBe(SPENDING_ID);
    const explained = await client.explain('from "air-quality/stations" limit 1');
    expect(explained.request?.request.resource_id).toBe((await client.search({ resource_id: 'stations', limit: 0 })).resource_id);
  });

  it('a joined side named dataset/resource is resolved as the from side is', async () => {
    const join = 'from "air-quality/measurements 2023" m join "air-quality/stations" s on m.station = s.station where m.station = B select m.day, s.opened order by m.day';
    const byAlias = 'from "measurements-2023" m join stations s on m.station = s.station where m.station = B select m.day, s.opened order by m.day';
    const expected = (await client.search(byAlias)).records;
    expect(expected).toHaveLength(2);
    expect((await client.search(join)).records).toEqual(expected);
    // Each side's name may come from a parameter too.
    expect((await client.search('from $m m join $s s on m.station = s.station where m.station = B select m.day, s.opened order by m.day', { params: { m: 'air-quality/measurements 2023', s: 'air-quality/stations' } })).records).toEqual(expected);
  });

  it('"dataset/*" reads every DataStore resource of the dataset as one union, each named as written in _resource', async () => {
    const union = await client.search('from "air-quality/*" group by _resource select _resource, count(*) as n');
    const count = async (resource: string): Promise<number | undefined> => (await client.search({ resource_id: resource, limit: 0 })).total;
    expect(union.records).toEqual([
      { _resource: 'air-quality/measurements 2023', n: await count('measurements-2023') },
      { _resource: 'air-quality/stations', n: await count('stations') },
    ]);
    // the fields of both, null where a resource lacks one
    const rows = (await client.search('from "air-quality/*" where station = B select _resource, station, day, opened order by _resource, day')).records;
    expect(rows.length).toBeGreaterThan(1);
    expect(rows.every((row) => row.station === 'B')).toBe(true);
    expect(rows.filter((row) => row._resource === 'air-quality/stations').every((row) => row.day === null && row.opened !== null)).toBe(true);
    await expect(client.search('from "no-such-dataset/*" limit 1')).rejects.toMatchObject({ code: 'NOT_FOUND', message: '"no-such-dataset/*": the portal has no dataset "no-such-dataset"' });
  });

  it('names what a dataset holds when its resource is not found', async () => {
    await expect(client.search('from "air-quality/measurements 2024"')).rejects.toThrow(
      'the dataset "air-quality" has no resource named "measurements 2024"; its resources: "measurements 2023", "stations"',
    );
    // An unknown dataset: the name is sent as it is (it may be an alias holding a /).
    await expect(client.search('from "no-such-dataset/x"')).rejects.toMatchObject({ code: 'NOT_FOUND', message: 'Not found: Resource "no-such-dataset/x" was not found.' });
  });

  it('only a dataset name before the / makes a dataset/resource name', () => {
    expect(splitResourceName('air-quality/measurements 2023')).toEqual({ dataset: 'air-quality', resource: 'measurements 2023' });
    expect(splitResourceName('Air Quality/x')).toBeUndefined();
    expect(splitResourceName('a/x')).toBeUndefined();
    expect(splitResourceName('air-quality/')).toBeUndefined();
  });
});

describe('resolved once', () => {
  it('asks package_show once per name for the life of the client', async () => {
    const resource = { id: 'res-7', fields: [{ id: '_id', type: 'int' as const }], records: [{ _id: 1 }] };
    const portal = await startStubPortal({
      resources: [resource],
      intercept: (action) =>
        action === 'package_show'
          ? { status: 200, body: JSON.stringify({ success: true, result: { id: 'p', name: 'stats', resources: [{ id: 'res-7', name: 'Counts', datastore_active: true }] } }) }
          : undefined,
    });
    const client = connect({ url: portal.url });
    try {
      for (let i = 0; i < 3; i++) await client.search('from "stats/Counts" limit 1');
      expect(portal.requests.map((r) => r.action)).toEqual(['package_show', 'datastore_search', 'datastore_search', 'datastore_search']);
      expect(portal.requests[1]?.body.resource_id).toBe('res-7');
    } finally {
      await client.close();
      await portal.close();
    }
  });

  it('a private dataset (package_show refused, 403) is FORBIDDEN naming it, not a resource sent by its name and not found', async () => {
    const portal = await startStubPortal({
      resources: [{ id: 'res-7', fields: [{ id: '_id', type: 'int' as const }], records: [{ _id: 1 }] }],
      intercept: (action, body) =>
        action === 'package_show'
          ? { status: 403, body: JSON.stringify({ success: false, error: { __type: 'Authorization Error', message: `Access denied: User  not authorized to read package ${String(body.id)}` } }) }
          : undefined,
    });
    const client = connect({ url: portal.url, retries: 0 });
    try {
      const error = await client.search('from "stats/Counts" limit 1').then(() => undefined, (e: unknown) => e);
      expect(error).toMatchObject({ code: 'FORBIDDEN', status: 403 });
      expect(exitCodeFor(error)).toBe(5);
      expect((error as Error).message).toMatch(/^"stats\/Counts": the dataset "stats" is not open to this request: .*no token was sent/);
      expect(portal.requests.map((r) => r.action)).toEqual(['package_show']);
    } finally {
      await client.close();
      await portal.close();
    }
  });
});

describe('the datastore\'s tables (_table_metadata)', () => {
  it('every table and alias on a portal whose rows_max is below a page, each page following what came', async () => {
    const tables = Array.from({ length: 12 }, (_, i) => makeTable(`table-${String(i).padStart(2, '0')}`, [`alias-${i}`], [{ id: 'n', type: 'int' }], [{ n: i }]));
    const seen: string[] = [];
    const portal = await startServer({ tables, port: 0, maxLimit: 5, log: (line) => seen.push(line) });
    const client = connect({ url: portal.url, retries: 0 });
    try {
      const listed = await datastoreTables(client);
      expect(listed?.map((t) => [t.id, t.aliases]).sort()).toEqual(tables.map((t) => [t.id, t.aliases]).sort());
      // 24 rows, 5 a page: 5 requests, the last one short
      expect(seen).toHaveLength(5);
    } finally {
      await client.close();
      await portal.close();
    }
  });
});

describe('a resource without a DataStore table', () => {
  it('is told as in the catalogue and not in the DataStore, after one resource_show; an unknown id keeps CKAN\'s Not Found', async () => {
    const portal = await startStubPortal({
      intercept: (action, body) =>
        action === 'resource_show'
          ? body.id === 'res-pdf'
            ? { status: 200, body: JSON.stringify({ success: true, result: { id: 'res-pdf', name: 'Annual report', url: 'https://example.org/report.pdf', datastore_active: false } }) }
            : { status: 404, body: JSON.stringify({ success: false, error: { __type: 'Not Found Error', message: 'Not found: Resource was not found.' } }) }
          : undefined,
    });
    const client = connect({ url: portal.url, retries: 0, target: 'ckan-2.11' });
    try {
      for (const run of [() => client.search('from "res-pdf" limit 1'), () => client.stream('from "res-pdf"', { all: true }), () => client.searchAll({ resource_id: 'res-pdf' }).next()]) {
        const error = await run().then(() => undefined, (e: unknown) => e);
        expect(error).toMatchObject({ code: 'NOT_FOUND' });
        expect((error as Error).message).toBe(
          'the resource res-pdf ("Annual report") is in the portal\'s catalogue but not in its DataStore (datastore_active is not set): it can be downloaded, not queried; its file: https://example.org/report.pdf',
        );
      }
      expect(portal.requests.map((r) => r.action)).toEqual(Array.from({ length: 3 }, () => ['datastore_search', 'resource_show']).flat());
      await expect(client.search('from "no-such-id" limit 1')).rejects.toMatchObject({ code: 'NOT_FOUND', message: 'Not found: Resource "no-such-id" was not found.' });
    } finally {
      await client.close();
      await portal.close();
    }
  });
});


/**
 * `ckql serve`'s catalogue: `package_search`, `package_show`,
 * `resource_show` and `datastore_info` over local data laid out as a
 * portal's (a datapackage.json is a dataset; a folder of loose files is
 * another), in CKAN 2.11.5's shapes and messages, over HTTP.
 */
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadResources } from '../../src/engine/node/load-resources.js';
import { startServer } from '../../src/server/server.js';
import type { RunningServer } from '../../src/server/server.js';
import { SPENDING_ID, writePortalData } from '../helpers/portal-data.js';
import type { PortalData } from '../helpers/portal-data.js';

let data: PortalData;
let server: RunningServer;
const TOKEN = 'catalog-token-1';

beforeAll(async () => {
  data = writePortalData();
  server = await startServer({ tables: await loadResources([data.airQuality, data.cityBudget]), port: 0, tokens: [TOKEN], privateResources: ['revenue'] });
});

afterAll(async () => {
  await server.close();
  rmSync(data.root, { recursive: true, force: true });
});

interface ResourceDict {
  readonly id: string;
  readonly name: string;
  readonly format: string;
  readonly datastore_active: boolean;
  readonly position: number;
  readonly package_id: string;
  readonly url: string;
}
interface PackageDict {
  readonly id: string;
  readonly name: string;
  readonly title: string;
  readonly notes: string | null;
  readonly num_resources: number;
  readonly resources: readonly ResourceDict[];
}
interface FieldDict {
  readonly id: string;
  readonly type: string;
  readonly info?: { readonly label?: string };
  readonly schema: { readonly native_type: string; readonly is_index: boolean };
}
/** The results these tests read, typed loosely: what an action answers differs by action. */
interface Result {
  readonly count: number;
  readonly sort: string;
  readonly results: readonly PackageDict[];
  readonly name: string;
  readonly id: string;
  readonly resources: readonly ResourceDict[];
  readonly meta: { readonly id: string; readonly count: number };
  readonly fields: readonly FieldDict[];
}

async function action(name: string, params: Record<string, string> = {}, token?: string): Promise<{ status: number; body: { success: boolean; result: Result; error?: unknown } }> {
  const response = await fetch(`${server.url}/api/3/action/${name}?${new URLSearchParams(params)}`, token === undefined ? {} : { headers: { authorization: token } });
  return { status: response.status, body: (await response.json()) as { success: boolean; result: Result; error?: unknown } };
}

describe('package_search', () => {
  it('finds every dataset by default, each with its resources and the datastore mark', async () => {
    const { body } = await action('package_search');
    expect(body.result.count).toBe(2);
    expect(body.result.sort).toBe('score desc, metadata_modified desc');
    const byName = Object.fromEntries(body.result.results.map((p) => [p.name, p])) as Record<string, PackageDict>;
    expect(Object.keys(byName).sort()).toEqual(['air-quality', 'city-budget']);
    const air = byName['air-quality'] as PackageDict;
    expect(air.title).toBe('Air quality');
    expect(air.notes).toBe('Daily means at the city stations.');
    expect(air.num_resources).toBe(2);
    expect(air.resources.map((r) => [r.name, r.format, r.datastore_active, r.position, r.package_id === air.id])).toEqual([
      ['measurements 2023', 'CSV', true, 0, true],
      ['stations', 'JSON', true, 1, true],
    ]);
    expect(air.resources[0]?.url).toBe(`${server.url}/datastore/dump/${air.resources[0]?.id}`);
    // The private resource shows to a token only.
    expect(byName['city-budget']?.resources.map((r) => r.name)).toEqual(['spending']);
    const withToken = await action('package_search', { fq: 'name:city-budget' }, TOKEN);
    expect(withToken.body.result.results[0]?.resources.map((r) => r.name)).toEqual(['revenue', 'spending']);
  });

  it('matches words in names, titles, notes and resource names; field:value tests; rows and start', async () => {
    expect((await action('package_search', { q: 'stations' })).body.result.results.map((p) => p.name)).toEqual(['air-quality']);
    expect((await action('package_search', { q: 'res_name:spending' })).body.result.count).toBe(1);
    expect((await action('package_search', { q: 'res_format:JSON' })).body.result.results[0]?.name).toBe('air-quality');
    expect((await action('package_search', { q: 'nothing-like-this' })).body.result).toMatchObject({ count: 0, results: [] });
    const page = await action('package_search', { sort: 'name asc', rows: '1', start: '1' });
    expect(page.body.result).toMatchObject({ count: 2, sort: 'name asc' });
    expect(page.body.result.results.map((p) => p.name)).toEqual(['city-budget']);
  });

  it("refuses rows that are not natural numbers and sorts Solr cannot, as CKAN does", async () => {
    const rows = await action('package_search', { rows: '-1' });
    expect(rows.status).toBe(409);
    expect(rows.body.error).toEqual({ rows: ['Must be a natural number'], __type: 'Validation Error' });
    const sort = await action('package_search', { sort: 'colour asc' });
    expect(sort.status).toBe(400);
    expect(sort.body.error).toMatchObject({ __type: 'Search Query Error' });
  });
});

describe('package_show and resource_show', () => {
  it('show a dataset by name or id, and a resource by id', async () => {
    const shown = await action('package_show', { id: 'air-quality' });
    expect(shown.body.result.name).toBe('air-quality');
    const byId = await action('package_show', { id: shown.body.result.id });
    expect(byId.body.result.name).toBe('air-quality');
    const resource = shown.body.result.resources[1] as ResourceDict;
    const alone = await action('resource_show', { id: resource.id });
    expect(alone.body.result).toEqual(resource);
  });

  it("answer what is missing with CKAN's messages", async () => {
    expect(await action('package_show', { id: 'nope' })).toEqual({ status: 404, body: expect.objectContaining({ error: { __type: 'Not Found Error', message: 'Not found' } }) });
    expect((await action('package_show')).body.error).toEqual({ name_or_id: ['Missing value'], __type: 'Validation Error' });
    expect((await action('resource_show', { id: 'nope' })).status).toBe(404);
  });
});

describe('datastore_info', () => {
  it('gives meta and the fields with their data dictionary and schema; an alias is resolved', async () => {
    const { body } = await action('datastore_info', { id: 'budget-spending' });
    expect(body.result.meta).toMatchObject({ id: SPENDING_ID, count: 3, aliases: ['spending', 'budget-spending'], table_type: 'BASE TABLE' });
    expect(body.result.fields[0]).toEqual({
      id: 'year',
      type: 'text',
      info: { label: 'Year', notes: 'The budget year.', type_override: 'int' },
      schema: { native_type: 'text', notnull: false, index_name: null, is_index: false, uniquekey: false },
    });
    // The package's Table Schema: types, labels, and the primary key as CKAN's unique index.
    const air = await action('datastore_info', { id: 'measurements-2023' });
    expect(air.body.result.fields.map((f) => [f.id, f.type, f.info?.label ?? null, f.schema.native_type, f.schema.is_index])).toEqual([
      ['station', 'text', 'Station', 'text', true],
      ['day', 'date', 'Day', 'date', true],
      ['pm10', 'numeric', 'PM10', 'numeric', false],
      ['valid', 'bool', null, 'boolean', false],
      ['count', 'int8', null, 'bigint', false],
    ]);
  });

  it('takes resource_id too; a private resource needs the token; a missing one is 404', async () => {
    expect((await action('datastore_info', { resource_id: 'spending' })).body.result.meta.id).toBe(SPENDING_ID);
    expect((await action('datastore_info', { id: 'revenue' })).status).toBe(403);
    expect((await action('datastore_info', { id: 'revenue' }, TOKEN)).body.result.meta.count).toBe(2);
    expect((await action('datastore_info', { id: 'nope' })).body.error).toEqual({ __type: 'Not Found Error', message: 'Not found: Resource/Alias "nope" was not found.' });
    expect((await action('datastore_info')).body.error).toEqual({ resource_id: ['Missing value'], __type: 'Validation Error' });
  });

  it('datastore_search gives each field its info, as CKAN does', async () => {
    const response = await fetch(`${server.url}/api/action/datastore_search?resource_id=spending&limit=0`);
    const { result } = (await response.json()) as { result: { fields: unknown[] } };
    expect(result.fields).toEqual([
      { id: '_id', type: 'int' },
      { id: 'year', type: 'text', info: { label: 'Year', notes: 'The budget year.', type_override: 'int' } },
      { id: 'department', type: 'text', info: { label: 'Department' } },
      { id: 'amount', type: 'text', info: { label: 'Amount', notes: 'In euros.', type_override: 'numeric' } },
      { id: 'note', type: 'text' },
    ]);
  });
});

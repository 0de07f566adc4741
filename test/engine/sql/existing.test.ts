/**
 * A datastore database ckql did not make: tables created as CKAN (or an
 * older CKAN, or a DBA) made them, with types ckql's loader never picks,
 * are listed and answered as they are, and nothing is written to them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATASTORE_SETUP_SQL } from '../../../src/engine/sql/layout.js';
import type { TestEngines } from './engines.js';
import { engineNames, openTestEngines } from './engines.js';

const ID = '0b6c6d2e-5f1a-4f7e-9a51-1f0c2b7d9e10';

let engines: TestEngines;
beforeAll(async () => {
  engines = await openTestEngines([]);
  for (const name of engineNames) {
    const engine = engines.get(name);
    await engine.db.transaction(async (tx) => {
      for (const sql of DATASTORE_SETUP_SQL) await tx.query(sql);
      await tx.query(`CREATE TABLE "${ID}" (_id serial primary key, _full_text tsvector, "Name" varchar(40), ratio float4, small int2,
        ids int4[], doc jsonb, nested nested, day date, at timestamptz, uid uuid, "_hidden" text)`);
      await tx.query(`CREATE TRIGGER zfulltext BEFORE INSERT OR UPDATE ON "${ID}" FOR EACH ROW EXECUTE PROCEDURE populate_full_text_trigger()`);
      await tx.query(`INSERT INTO "${ID}" ("Name", ratio, small, ids, doc, nested, day, at, uid, "_hidden") VALUES
        ('Ålesund harbour', 0.5, 3, '{1,2}', '{"k": [1, "two"]}', ROW('{"a": 1}'::json, NULL), '2020-02-29', '2020-01-01 10:00:00+00', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', 'secret'),
        ('Bergen', NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)`);
      await tx.query(`CREATE VIEW "harbours" AS SELECT * FROM "${ID}"`);
    });
    await engine.refresh();
  }
});
afterAll(async () => {
  await engines?.close();
});

describe.each(engineNames)('%s serves a datastore it did not make', (name) => {
  it('lists the table under its alias with PostgreSQL type names, hiding _-columns', async () => {
    const [info] = await engines.get(name).resources();
    expect(info?.id).toBe(ID);
    expect(info?.aliases).toEqual(['harbours']);
    expect(info?.fields).toEqual([
      { id: '_id', type: 'int' }, { id: 'Name', type: 'varchar' }, { id: 'ratio', type: 'float4' }, { id: 'small', type: 'int2' },
      { id: 'ids', type: '_int4' }, { id: 'doc', type: 'jsonb' }, { id: 'nested', type: 'json' }, { id: 'day', type: 'date' },
      { id: 'at', type: 'timestamptz' }, { id: 'uid', type: 'uuid' },
    ]);
  });

  it('answers filters, q and sort over those types', async () => {
    const engine = engines.get(name);
    const result = await engine.search({ resource_id: 'harbours', q: 'harbour', filters: { small: '3', day: '2020-02-29' } });
    expect(result.total).toBe(1);
    const record = result.records[0] as Record<string, unknown>;
    expect(record).toMatchObject({ _id: 1, Name: 'Ålesund harbour', ratio: 0.5, small: 3, ids: [1, 2], doc: { k: [1, 'two'] }, nested: { a: 1 }, day: '2020-02-29', uid: 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11' });
    expect(record).not.toHaveProperty('_hidden');
    const sorted = await engine.search({ resource_id: ID, sort: '"Name" desc', fields: 'Name' });
    expect(sorted.records).toEqual([{ Name: 'Ålesund harbour' }, { Name: 'Bergen' }]);
    expect((await engine.search({ resource_id: ID, q: 'secret' })).total).toBe(0);
  });
});

/** withDatastoreTables: what .resources, ckql resources and Tab after `portal:` list for a portal. */
import { expect, it } from 'vitest';
import { withDatastoreTables } from '../../src/session/source.js';

it('lists every table with its first alias, keeps what was known of one named by alias or id (both: one row), then the names no table is', () => {
  const tables = [
    { id: 'a1', aliases: ['courses', 'c'] },
    { id: 'b2', aliases: [] },
  ];
  expect(withDatastoreTables([{ id: 'a1' }, { id: 'courses', total: 320 }, { id: 'b2', total: 8 }, { id: 'hidden' }], tables)).toEqual([
    { id: 'a1', alias: 'courses', total: 320 },
    { id: 'b2', total: 8 },
    { id: 'hidden' },
  ]);
  // a portal that does not let _table_metadata be read: what was named, as it was
  expect(withDatastoreTables([{ id: 'courses' }], undefined)).toEqual([{ id: 'courses' }]);
});

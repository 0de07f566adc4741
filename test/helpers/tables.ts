/**
 * The case suite's datasets as tables, the way the server and the evaluator
 * receive them. Kept apart from `cases.ts` so that reading case files needs
 * nothing but the file system.
 */
import type { Table } from '../../src/datastore/types.js';
import { resourceIdFor, tableFromRows } from '../../src/engine/memory/load.js';
import type { Dataset } from './cases.js';

/**
 * The dataset as a resource: alias = its name, id = its `id` or the stable id
 * derived from the name. With a declared field list the table is built here
 * (fields typed as declared); without one, `tableFromRows` infers the fields.
 */
export function tableOf(dataset: Dataset): Table {
  const id = dataset.id ?? resourceIdFor(dataset.name);
  if (dataset.fields === undefined) return tableFromRows(dataset.rows, { id, alias: dataset.name });
  return {
    id,
    aliases: [dataset.name],
    fields: [{ id: '_id', type: 'int' }, ...dataset.fields],
    rows: dataset.rows.map((row, i) => ({ _id: i + 1, ...row })),
  };
}


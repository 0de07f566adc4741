/** Loading a resource file the way `ckql serve` and `ckql query --data` do. */
import type { Table } from '../../src/datastore/types.js';
import { ckqlModules } from './ckql.js';

/** The one table in `file`, through the project's loader (alias: the file name without extension). */
export async function loadTable(file: string): Promise<Table> {
  const { loadResources } = await ckqlModules.loadResources();
  const tables = await loadResources([file]);
  const table = tables[0];
  if (table === undefined || tables.length !== 1) throw new Error(`bench: expected one table in ${file}, loadResources gave ${tables.length}`);
  return table;
}

/**
 * The set of loaded resources, found by id or alias: what the server serves
 * and what `ckql query --data` queries.
 */
import type { Table } from '../../datastore/types.js';
import { resourceNotFound, toolError } from '../../errors.js';

/**
 * Tables by id and alias. An id always wins over an alias of the same
 * spelling (CKAN resolves ids first); two tables with one id, or one alias,
 * are a `DATA_DUPLICATE_ALIAS` error rather than a silent shadowing.
 *
 * @example
 * const catalog = new Catalog(await loadResources('examples/data'));
 * catalog.find('courses')?.id;          // → resourceIdFor('courses')
 * catalog.find(resourceIdFor('courses')) === catalog.find('courses'); // → true
 * catalog.resolve('nope');              // throws DatastoreError NOT_FOUND (404)
 */
export class Catalog {
  readonly tables: readonly Table[];
  private readonly byId = new Map<string, Table>();
  private readonly byAlias = new Map<string, Table>();

  constructor(tables: readonly Table[]) {
    this.tables = [...tables];
    for (const table of tables) {
      const other = this.byId.get(table.id);
      if (other !== undefined) throw duplicate(table.id, other, table);
      this.byId.set(table.id, table);
    }
    for (const table of tables) {
      for (const alias of table.aliases) {
        const other = this.byAlias.get(alias);
        if (other !== undefined && other !== table) throw duplicate(alias, other, table);
        this.byAlias.set(alias, table);
      }
    }
  }

  /** The table with this id, else with this alias. */
  find(idOrAlias: string): Table | undefined {
    return this.byId.get(idOrAlias) ?? this.byAlias.get(idOrAlias);
  }

  /** `find`, or the 404 Not Found error the server answers with. */
  resolve(idOrAlias: string): Table {
    const table = this.find(idOrAlias);
    if (table === undefined) throw resourceNotFound(idOrAlias);
    return table;
  }

  /** Every table, in load order. */
  list(): readonly Table[] {
    return this.tables;
  }
}

function duplicate(name: string, first: Table, second: Table): Error {
  const where = (t: Table): string => t.source ?? t.aliases[0] ?? t.id;
  return toolError('DATA_DUPLICATE_ALIAS', [name, where(first), where(second)], {
    ...(second.source === undefined ? {} : { file: second.source }),
  });
}

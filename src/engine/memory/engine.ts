/**
 * The memory engine: tables held in the process and answered by the
 * evaluator (docs/semantics.md): requests by `evaluate`, whole queries by
 * `queryTable` (query.ts). The default behind `--data` and `serve DIR`.
 */
import type { CkanVersion, Table } from '../../datastore/types.js';
import { queryError, resourceNotFound } from '../../errors.js';
import type { Engine, EngineSearchOptions, ResourceInfo } from '../types.js';
import { Catalog } from './catalog.js';
import { evaluateSteps } from './evaluate.js';
import { abortedBy, paced } from '../pace.js';
import { queryTable } from './query.js';
import { queryShaped, queryWindowed } from './shaped.js';
import { withUnionTables } from './union.js';
import { windowStep } from '../../compile/window.js';
import { isPlainQuery } from '../../ast.js';
import { normalizeRequest } from '../../datastore/validate.js';

/**
 * Anything that finds a table by id or alias. A `Catalog` is one; a custom
 * lookup can serve tables that change between requests (the tests do).
 */
export interface TableLookup {
  find(idOrAlias: string): Table | undefined;
  /** every table, in load order */
  readonly tables: readonly Table[];
}

/**
 * An engine over tables already in memory (`loadTable`, `loadResources`, `tableFromRows`,
 * a `Catalog` or a custom lookup).
 * @example
 * const engine = memoryEngine(await loadResources('examples/data'));
 * (await engine.search({ resource_id: 'schools', limit: 1 })).records.length; // → 1
 */
export function memoryEngine(tables: readonly Table[] | TableLookup, label = 'memory'): Engine {
  const lookup: TableLookup = Array.isArray(tables) ? new Catalog(tables as readonly Table[]) : (tables as TableLookup);
  const info = new WeakMap<Table, ResourceInfo>();
  const describe = (table: Table): ResourceInfo => {
    let known = info.get(table);
    if (known === undefined) {
      known = {
        id: table.id,
        aliases: table.aliases,
        fields: table.fields,
        private: table.private === true,
        total: table.rows.length,
        ...(table.source === undefined ? {} : { source: table.source }),
        ...(table.meta === undefined ? {} : { meta: table.meta }),
      };
      info.set(table, known);
    }
    return known;
  };
  return {
    kind: 'memory',
    label,
    resources: () => Promise.resolve(lookup.tables.map(describe)),
    resource: (idOrAlias) => {
      const table = lookup.find(idOrAlias);
      return Promise.resolve(table === undefined ? undefined : describe(table));
    },
    search: (raw, options: EngineSearchOptions = {}) => {
      try {
        // one options object for both steps, made without spreads (this runs for every request a server answers)
        const settings: { maxLimit?: number; ckan?: CkanVersion } = {};
        if (options.maxLimit !== undefined) settings.maxLimit = options.maxLimit;
        if (options.ckan !== undefined) settings.ckan = options.ckan;
        const request = normalizeRequest(raw, settings);
        const table = lookup.find(request.resource_id);
        if (table === undefined) throw resourceNotFound(request.resource_id);
        if (options.signal?.aborted === true) throw abortedBy(options.signal);
        return paced(evaluateSteps(request, table, settings), options.signal);
      } catch (error) {
        return Promise.reject(error as Error);
      }
    },
    query: (written, options = {}) => {
      try {
        const { query, lookup: reading } = withUnionTables(written, lookup);
        const resource = query.from.resource;
        if (resource.kind === 'param') throw queryError('UNBOUND_PARAMETER', resource.span, [resource.name]);
        if (resource.value === '') throw queryError('EMPTY_RESOURCE', resource.span, []);
        const table = reading.find(resource.value);
        if (table === undefined) throw resourceNotFound(resource.value);
        const step = windowStep(query);
        if (step !== undefined) return queryWindowed(step, reading, options);
        if (!isPlainQuery(query)) return queryShaped(query, reading, options);
        return queryTable(query, table, options).then((answer) => ({ ...answer, resource: table.id }));
      } catch (error) {
        return Promise.reject(error as Error);
      }
    },
    close: () => Promise.resolve(),
  };
}

/**
 * `crosstab` in `datastore_search_sql`, as CKAN 2.11.5 checks it
 * (docs/ckan-2.12-reference.md §4.3): a literal crosstab's SQL is explained
 * in turn, so the tables it reads are checked as the statement's own
 * (system tables, private resources); any other crosstab reads
 * `_unknown_crosstab_sql`, which no one may read; and `crosstab` itself must
 * be on the allow-list, which CKAN's default list is not. CKAN reads the
 * function names of the text with sqlparse, which takes a column definition
 * list (`AS ct(region text, …)`) for a call of `ct`: a site that allows
 * crosstab allows that name too. Without the `tablefunc` extension
 * PostgreSQL does not know the function (409).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ALLOWED_FUNCTIONS } from '../../../src/engine/sql/allowed-functions.js';
import { sqlEngine } from '../../../src/engine/sql/engine.js';
import type { SqlEngine } from '../../../src/engine/sql/engine.js';
import { crosstabQuery } from '../../../src/engine/sql/search-sql.js';
import type { TestEngines } from './engines.js';
import { engineNames, openTestEngines, typedTable } from './engines.js';
import { datastoreFailure as failure } from '../../helpers/outcome.js';

const sales = typedTable('sales', [['region', 'text'], ['quarter', 'text'], ['amount', 'int4']], [
  { region: 'north', quarter: 'q1', amount: 1 },
  { region: 'north', quarter: 'q2', amount: 2 },
  { region: 'south', quarter: 'q1', amount: 3 },
]);
const secret = typedTable('secret', [['region', 'text'], ['quarter', 'text'], ['amount', 'int4']], [{ region: 'x', quarter: 'q1', amount: 9 }], { private: true });

const PIVOT = `SELECT * FROM crosstab('SELECT region, quarter, amount FROM sales ORDER BY 1, 2') AS ct(region text, q1 int, q2 int)`;

let engines: TestEngines;
beforeAll(async () => {
  engines = await openTestEngines([sales, secret]);
});
afterAll(async () => {
  await engines?.close();
});

const searchSql = (engine: SqlEngine, sql: string, token = false) => (engine.searchSql as NonNullable<SqlEngine['searchSql']>)(sql, { token });

describe('crosstabQuery', () => {
  it.each([
    ["crosstab('SELECT a FROM t'::text)", 'SELECT a FROM t'],
    ["crosstab('SELECT a FROM t WHERE b = ''x'''::text)", "SELECT a FROM t WHERE b = 'x'"],
    ["crosstab('SELECT 1'::text, 'SELECT 2'::text)", undefined], // two literals: not the simple form
    ['crosstab($0)', undefined],
    ["crosstab(upper(x))", undefined],
  ])('%s → %j', (call, expected) => {
    expect(crosstabQuery(call)).toBe(expected);
  });
});

describe.each(engineNames)('%s', (name) => {
  it('without tablefunc, crosstab is an unknown function: 409 with PostgreSQL\'s message', async () => {
    const error = await failure(searchSql(engines.get(name), PIVOT));
    expect(error.status).toBe(409);
    expect((error.body as unknown as { query: string[] }).query[0]).toContain('function crosstab(unknown) does not exist');
  });
});

// PGlite loads no extension; a server has tablefunc in PostgreSQL's contrib package.
for (const name of engineNames.filter((n) => n === 'postgres')) {
  describe(`${name} with tablefunc`, () => {
    let pivoting: SqlEngine;
    beforeAll(async () => {
      const engine = engines.get(name);
      await engine.db.transaction((tx) => tx.query('CREATE EXTENSION IF NOT EXISTS tablefunc'));
      pivoting = sqlEngine(engine.db, { kind: 'postgres', label: 'pivoting', allowedSqlFunctions: [...ALLOWED_FUNCTIONS, 'crosstab', 'ct'] });
    });

    it('CKAN\'s default allow-list refuses crosstab', async () => {
      const error = await failure(searchSql(engines.get(name), PIVOT));
      expect(error.body).toEqual({ __type: 'Authorization Error', message: 'Access denied: Not authorized to call function crosstab' });
    });

    it('a site that allows crosstab (and its column list\'s name) gets the pivot', async () => {
      const onlyCrosstab = sqlEngine(engines.get(name).db, { kind: 'postgres', label: 'crosstab only', allowedSqlFunctions: [...ALLOWED_FUNCTIONS, 'CrossTab'] });
      expect((await failure(searchSql(onlyCrosstab, PIVOT))).body).toEqual({ __type: 'Authorization Error', message: 'Access denied: Not authorized to call function ct' });
      const result = await searchSql(pivoting, PIVOT);
      expect(result.records).toEqual([
        { region: 'north', q1: 1, q2: 2 },
        { region: 'south', q1: 3, q2: null },
      ]);
    });

    it('the crosstab\'s own SQL is checked: system tables, private resources', async () => {
      const system = await failure(searchSql(pivoting, `SELECT * FROM crosstab('SELECT rolname, rolname, 1 FROM pg_roles') AS ct(a name, b int)`));
      expect(system.body).toEqual({ __type: 'Authorization Error', message: 'Access denied: Not authorized to access system tables' });
      const hidden = `SELECT * FROM crosstab('SELECT region, quarter, amount FROM secret') AS ct(region text, q1 int)`;
      expect((await failure(searchSql(pivoting, hidden))).body).toEqual({ __type: 'Authorization Error', message: 'Access denied: Not authorized to read resource.' });
      expect((await searchSql(pivoting, hidden, true)).records).toEqual([{ region: 'x', q1: 9 }]);
      // Functions inside the crosstab's SQL are checked against the list too.
      const call = await failure(searchSql(pivoting, `SELECT * FROM crosstab('SELECT region, quarter, pg_backend_pid() FROM sales') AS ct(region text, q1 int)`));
      expect(call.body).toEqual({ __type: 'Authorization Error', message: 'Access denied: Not authorized to call function pg_backend_pid' });
    });

    it('a crosstab whose SQL is not one literal reads _unknown_crosstab_sql, which no one may read', async () => {
      const error = await failure(searchSql(pivoting, `SELECT * FROM crosstab((SELECT 'SELECT region, quarter, amount FROM sales')) AS ct(region text, q1 int)`, true));
      expect(error.body).toEqual({ __type: 'Authorization Error', message: 'Access denied: Not authorized to read resource.' });
    });
  });
}

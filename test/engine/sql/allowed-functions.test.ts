/**
 * The functions `datastore_search_sql` may call, as CKAN's
 * `allowed_functions_file` sets them: `openEngine`'s `allowedSqlFunctions`
 * and `ckql serve --sql-functions FILE`.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openEngine } from '../../../src/engine/open.js';
import { ckqlInProcess } from '../../cli/run-ckql.js';
import { datastoreFailure } from '../../helpers/outcome.js';

describe('allowed functions', () => {
  it('a list given to openEngine replaces CKAN\'s: what it names runs, the rest is refused', async () => {
    const engine = await openEngine({ engine: 'pglite', data: ['examples/data/schools.json'], allowedSqlFunctions: ['lower', ''] });
    try {
      const searchSql = engine.searchSql!.bind(engine);
      expect((await searchSql('SELECT lower(name) AS n FROM schools ORDER BY n LIMIT 1')).records).toHaveLength(1);
      // upper is on CKAN's list, not on this one
      const refused = await datastoreFailure(searchSql('SELECT upper(name) AS n FROM schools LIMIT 1'));
      expect(refused.status).toBe(403);
    } finally {
      await engine.close();
    }
  }, 60_000);

  it('ckql serve --sql-functions needs an engine that serves datastore_search_sql, and a file it can read', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'ckql-fns-')), 'allowed.txt');
    writeFileSync(file, 'lower\nupper\n');
    const memory = await ckqlInProcess(['serve', 'examples/data', '--port', '0', '--sql-functions', file]);
    expect(memory.code).toBe(2);
    expect(memory.stderr).toContain('--sql-functions applies to datastore_search_sql');
    const missing = await ckqlInProcess(['serve', 'examples/data', '--engine', 'pglite', '--port', '0', '--sql-functions', join(file, 'nope')]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('--sql-functions');
  });
});

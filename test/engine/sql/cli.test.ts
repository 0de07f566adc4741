/**
 * `ckql load` and the `--db` source flag, in process: a PGlite database kept
 * in a directory is loaded once and queried by a later command; a server
 * that cannot be reached is exit 4 with no password in the message.
 */
import { mkdtempSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ckqlInProcess, ndjson } from '../../cli/run-ckql.js';

// The runs get an empty HOME; PGlite's start-up template stays in the real cache (src/engine/pglite/db.ts).
const env = { XDG_CACHE_HOME: process.env['XDG_CACHE_HOME'] ?? join(homedir(), '.cache') };

describe('ckql load and --db', () => {
  it('loads a file into a kept PGlite database, refuses to load it twice without --replace, and queries it', async () => {
    const dir = join(mkdtempSync(join(tmpdir(), 'ckql-db-')), 'db');
    const loaded = await ckqlInProcess(['load', 'examples/data/schools.json', '--db', dir, '--no-indexes'], { env });
    expect(loaded.stderr).toContain('loaded 1 resource (8 rows): schools');
    expect(loaded.code).toBe(0);
    const again = await ckqlInProcess(['load', 'examples/data/schools.json', '--db', dir], { env });
    expect(again.code).toBe(2);
    expect(again.stderr).toContain('add --replace to replace it');
    const query = await ckqlInProcess(['query', '--db', dir, '--format', 'ndjson', 'from schools select name order by name limit 2'], { env });
    expect(query.code).toBe(0);
    const names = ndjson(query.stdout).map((r) => (r as { name: string }).name);
    expect(names.length).toBe(2);
    expect([...names].sort()).toEqual(names);
  });

  it('a server that cannot be reached is exit 4, and the password is not shown', async () => {
    const result = await ckqlInProcess(['query', '--db', 'postgres://ckql:s3cret-pw@127.0.0.1:1/none', 'from x limit 1']);
    expect(result.code).toBe(4);
    expect(result.stderr).toContain('cannot connect to PostgreSQL at postgres://ckql:***@127.0.0.1:1/none');
    expect(result.stderr).not.toContain('s3cret-pw');
  });
});

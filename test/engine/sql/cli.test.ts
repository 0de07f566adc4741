/**
 * `ckql load` and the `--db` source flag, in process: a PGlite database kept
 * in a directory is loaded once and queried by a later command; a server
 * that cannot be reached is exit 4 with no password in the message.
 */
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { ckqlInProcess, ndjson } from '../../cli/run-ckql.js';
import { engineNames, serverUrl } from './engines.js';

describe('ckql load and --db', () => {
  it('loads a file into a kept PGlite database, refuses to load it twice without --replace, and queries it', async () => {
    const scratch = mkdtempSync(join(tmpdir(), 'ckql-db-'));
    const dir = join(scratch, 'db');
    // a folder with a file that cannot be loaded: it is reported with its line, the other is loaded, the status says so
    const folder = join(scratch, 'data');
    mkdirSync(folder);
    copyFileSync('examples/data/schools.json', join(folder, 'schools.json'));
    writeFileSync(join(folder, 'bad.csv'), 'a,b\n1,2\n3,4,5\n');
    // --engine and --db-dir, as serve and query spell them; a terminal's bar says when the indexes are built
    const loaded = await ckqlInProcess(['load', folder, '--engine', 'pglite', '--db-dir', dir], {
      env: { CI: undefined, NO_COLOR: '1' },
      tty: { stderr: true, columns: 120 },
    });
    expect(loaded.stderr).toContain('loaded 1 resource (8 rows): schools');
    expect(loaded.stderr).toMatch(/error\[DATA_INVALID\]: \S*bad\.csv: not valid CSV[^\n]*\n --> \S*bad\.csv:3\n/);
    expect(loaded.stderr).toContain('= skipped: not loaded; the other files are');
    expect(loaded.stderr).toContain('1 file could not be loaded (above)');
    expect(loaded.code).toBe(1);
    expect(loaded.stderr).toMatch(/indexing schools \[[#.]+\] full-text index 1 of \d+ \(--no-indexes skips them\), \d+ s/);
    expect(loaded.stderr).toMatch(/indexing schools \[#+\] \d+ indexes built/);
    const again = await ckqlInProcess(['load', 'examples/data/schools.json', '--db', dir]);
    expect(again.code).toBe(2);
    expect(again.stderr).toContain('add --replace to replace it');
    const query = await ckqlInProcess(['query', '--db', dir, '--format', 'ndjson', 'from schools select name order by name limit 2']);
    expect(query.code).toBe(0);
    const names = ndjson(query.stdout).map((r) => (r as { name: string }).name);
    expect(names.length).toBe(2);
    expect([...names].sort()).toEqual(names);
  });

  it('load takes --engine and --db-dir as the other commands do, and refuses what cannot be loaded into', async () => {
    const memory = await ckqlInProcess(['load', 'examples/data/schools.json', '--engine', 'memory', '--db-dir', 'x']);
    expect(memory.code).toBe(2);
    expect(memory.stderr).toContain('ckql load writes into a database; the memory engine reads the files each time it starts');
    const mixed = await ckqlInProcess(['load', 'examples/data/schools.json', '--engine', 'postgres', '--db-dir', 'x']);
    expect(mixed.code).toBe(2);
    expect(mixed.stderr).toContain('--engine postgres needs --db postgres://…, not a directory');
    const both = await ckqlInProcess(['load', 'examples/data/schools.json', '--db', 'x', '--db-dir', 'y']);
    expect(both.code).toBe(2);
    expect(both.stderr).toContain('--db and --db-dir both name a database');
    const none = await ckqlInProcess(['load', 'examples/data/schools.json'], { env: { PGHOST: undefined, PGDATABASE: undefined } });
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('ckql load needs a database');
  });

  it('an empty --db, or a folder of other files, is refused before PGlite writes anything there', async () => {
    const empty = await ckqlInProcess(['query', '--db', '', 'from x limit 1']);
    expect(empty.code).toBe(2);
    expect(empty.stderr).toContain('error[USAGE]: --db is empty');
    const project = mkdtempSync(join(tmpdir(), 'ckql-project-'));
    writeFileSync(join(project, 'notes.txt'), 'mine\n');
    const foreign = await ckqlInProcess(['load', 'examples/data/schools.json', '--db', project]);
    expect(foreign.code).toBe(2);
    expect(foreign.stderr).toContain('is a folder of other files, not a PGlite database (it has no PG_VERSION)');
    expect(readdirSync(project)).toEqual(['notes.txt']);
  });

  it('a server that cannot be reached is exit 4, and the password is not shown', async () => {
    const result = await ckqlInProcess(['query', '--db', 'postgres://ckql:s3cret-pw@127.0.0.1:1/none', 'from x limit 1']);
    expect(result.code).toBe(4);
    expect(result.stderr).toContain('cannot connect to PostgreSQL at postgres://ckql:***@127.0.0.1:1/none');
    expect(result.stderr).not.toContain('s3cret-pw');
  });

  // The server refusing the credentials is not a network failure: the fix is the credential (exit 5, as a portal's 403).
  it.runIf(engineNames.includes('postgres'))('a server that refuses the role or its password is exit 5, and the password is not shown', async () => {
    const admin = new pg.Client({ connectionString: serverUrl });
    await admin.connect();
    try {
      // scripts/pg-test-cluster.sh checks this role by password (scram-sha-256); every other role connects by trust.
      await admin.query(`DO $$ BEGIN
        IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'ckql_password') THEN CREATE ROLE ckql_password LOGIN PASSWORD 'right-pw'; END IF;
        IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'ckql_nologin') THEN CREATE ROLE ckql_nologin NOLOGIN; END IF;
      END $$`);
    } finally {
      await admin.end();
    }
    const at = (user: string, password: string): string => {
      const url = new URL(serverUrl as string);
      url.username = user;
      url.password = password;
      return url.toString();
    };
    const wrong = await ckqlInProcess(['query', '--db', at('ckql_password', 's3cret-wrong'), 'from x limit 1']);
    expect(wrong.stderr).toContain('error[FORBIDDEN]');
    expect(wrong.stderr).toContain('refused the connection: the password was refused');
    expect(wrong.stderr).not.toContain('s3cret-wrong');
    expect(wrong.code).toBe(5);
    const nologin = await ckqlInProcess(['query', '--db', at('ckql_nologin', ''), 'from x limit 1']);
    expect(nologin.stderr).toContain('refused the connection: the role may not connect');
    expect(nologin.code).toBe(5);
    // The right password connects: the refusal above was the password's, not the server's.
    const right = await ckqlInProcess(['query', '--db', at('ckql_password', 'right-pw'), 'from nothing_here limit 1']);
    expect(right.code).toBe(3);
  });
});

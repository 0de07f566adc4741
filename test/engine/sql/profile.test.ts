/**
 * A config profile chooses the engine: `engine:` and `db:` keys, a
 * `postgres://` URL meaning the postgres engine, a directory PGlite.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config/load.js';
import { selectSource } from '../../../src/session/select-source.js';

function configFile(text: string): { file: string; dir: string } {
  const dir = mkdtempSync(join(tmpdir(), 'ckql-profile-'));
  const file = join(dir, 'ckql.yaml');
  writeFileSync(file, text, { mode: 0o600 });
  return { file, dir };
}

describe('profiles with engine: and db:', () => {
  it('db: a directory is a PGlite database beside the config; engine: pglite over files', async () => {
    const { file, dir } = configFile('profiles:\n  kept: { db: ./ckql-db }\n  files: { data: ./data, engine: pglite }\n  server: { db: "postgres://reader@db.example.org/datastore" }\n');
    const config = () => loadConfig({ configFile: file, cwd: dir, env: {} });
    expect((await selectSource({ profile: 'kept' }, { config })).spec).toMatchObject({ kind: 'data', paths: [], engine: 'pglite', db: join(dir, 'ckql-db') });
    expect((await selectSource({ profile: 'files' }, { config })).spec).toMatchObject({ kind: 'data', paths: [join(dir, 'data')], engine: 'pglite' });
    expect((await selectSource({ profile: 'server' }, { config })).spec).toMatchObject({ engine: 'postgres', db: 'postgres://reader@db.example.org/datastore' });
  });

  it('an unknown engine is a config error naming the key', async () => {
    const { file, dir } = configFile('profiles:\n  bad: { data: ./data, engine: sqlite }\n');
    await expect(loadConfig({ configFile: file, cwd: dir, env: {} })).rejects.toThrow(/profiles.bad.engine: must be one of "memory", "pglite", "postgres", found "sqlite"/);
  });
});

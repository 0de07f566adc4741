/**
 * The server over the PostgreSQL engines, on 127.0.0.1 port 0: CKAN's
 * parameters pass through to PostgreSQL, and `datastore_search_sql` answers
 * (or, on the memory engine, is an unknown action as on a portal with it disabled).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer } from '../../../src/server/server.js';
import type { RunningServer } from '../../../src/server/server.js';
import { pgliteEngine } from '../../../src/engine/pglite/engine.js';
import { memoryEngine } from '../../../src/engine/memory/engine.js';
import { typedTable } from './engines.js';

const books = typedTable('books', [['book', 'text'], ['author', 'text']], [
  { book: 'annakarenina', author: 'tolstoy' },
  { book: 'warandpeace', author: 'tolstoy' },
]);
const secret = typedTable('secret', [['word', 'text']], [{ word: 'hidden' }], { private: true });
const quiet = typedTable('quiet', [['word', 'text']], [{ word: 'whisper' }]);

let server: RunningServer;
let memory: RunningServer;
beforeAll(async () => {
  server = await startServer({ engine: await pgliteEngine({ tables: [books, secret, quiet], load: { indexes: false } }), port: 0, tokens: ['t0ken'], privateResources: ['quiet'] });
  memory = await startServer({ engine: memoryEngine([books]), port: 0 });
});
afterAll(async () => {
  await server?.close();
  await memory?.close();
});

const post = async (base: string, action: string, body: unknown, headers: Record<string, string> = {}) => {
  const response = await fetch(`${base}/api/3/action/${action}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  return { status: response.status, body: (await response.json()) as { success: boolean; result?: Record<string, unknown>; error?: Record<string, unknown> } };
};

describe('server over pglite', () => {
  it('ranks with ts_rank when fields ask for rank', async () => {
    const { body } = await post(server.url, 'datastore_search', { resource_id: 'books', q: 'tolstoy annakarenina', fields: ['book', 'rank'] });
    expect(body.result?.['fields']).toEqual([{ id: 'book', type: 'text' }, { id: 'rank', type: 'float' }]);
    const [record] = body.result?.['records'] as { book: string; rank: number }[];
    expect(record?.book).toBe('annakarenina');
    expect(record?.rank).toBeCloseTo(0.0901673, 6); // ts_rank of two lexemes, not the memory engine's constant 0.0573088
  });

  it('answers q with plain: false and language as PostgreSQL does', async () => {
    const { status, body } = await post(server.url, 'datastore_search', { resource_id: 'books', q: 'war:*', plain: false, language: 'english' });
    expect(status).toBe(200);
    expect((body.result?.['records'] as { book: string }[]).map((r) => r.book)).toEqual(['warandpeace']);
    expect(body.result?.['_links']).toEqual({ start: '/api/3/action/datastore_search', next: '/api/3/action/datastore_search?offset=100' });
  });

  it('answers datastore_search_sql by GET and POST, and keeps private tables behind a token', async () => {
    const get = await fetch(`${server.url}/api/3/action/datastore_search_sql?sql=${encodeURIComponent('SELECT count(*) AS n FROM books')}`);
    expect(((await get.json()) as { result: unknown }).result).toEqual({ sql: 'SELECT count(*) AS n FROM books', records: [{ n: 2 }], fields: [{ id: 'n', type: 'int8' }] });
    const refused = await post(server.url, 'datastore_search_sql', { sql: 'SELECT * FROM secret' });
    expect(refused.status).toBe(403);
    expect(refused.body.error).toEqual({ __type: 'Authorization Error', message: 'Access denied: Not authorized to read resource.' });
    const allowed = await post(server.url, 'datastore_search_sql', { sql: 'SELECT word FROM secret' }, { authorization: 't0ken' });
    expect(allowed.body.result?.['records']).toEqual([{ word: 'hidden' }]);
    // A resource the server (not the database) marks private is private to SQL too.
    const serverPrivate = await post(server.url, 'datastore_search_sql', { sql: 'SELECT word FROM quiet' });
    expect(serverPrivate.status).toBe(403);
    const withToken = await post(server.url, 'datastore_search_sql', { sql: 'SELECT word FROM quiet' }, { authorization: 't0ken' });
    expect(withToken.body.result?.['records']).toEqual([{ word: 'whisper' }]);
    const missing = await post(server.url, 'datastore_search_sql', {});
    expect(missing.status).toBe(409);
    expect(missing.body.error).toEqual({ __type: 'Validation Error', sql: ['Missing value'] });
  });

  it('the memory engine has no datastore_search_sql: 400 as on a portal with it disabled', async () => {
    const { status, body } = await post(memory.url, 'datastore_search_sql', { sql: 'SELECT 1' });
    expect(status).toBe(400);
    // CKAN's 400 body is a bare JSON string, not an envelope (docs/ckan-2.11-reference.md §5)
    expect(body as unknown).toBe('Bad request - Action name not known: datastore_search_sql');
  });
});

describe('_table_metadata over a PostgreSQL engine', () => {
  it('is CKAN\'s view: each table and alias, _id typed int with md5 text values, oids as PostgreSQL writes them', async () => {
    const { status, body } = await post(server.url, 'datastore_search', { resource_id: '_table_metadata', limit: 1000 });
    expect(status).toBe(200);
    expect(body.result?.['fields']).toEqual([
      { id: '_id', type: 'int' },
      { id: 'name', type: 'name' },
      { id: 'oid', type: 'oid' },
      { id: 'alias_of', type: 'name' },
    ]);
    const records = body.result?.['records'] as { _id: string; name: string; oid: string; alias_of: string | null }[];
    expect(records.length).toBe(6);
    expect(records).toContainEqual(expect.objectContaining({ name: 'books', alias_of: books.id }));
    expect(records).toContainEqual(expect.objectContaining({ name: books.id, alias_of: null }));
    // PostgreSQL's JSON writes an oid as a string (CKAN passes it through); `_id` is the md5 prefix the view computes.
    expect(records.every((r) => /^[0-9a-f]{16}$/.test(r._id) && /^\d+$/.test(r.oid))).toBe(true);
    // In `_id` order, as CKAN's default sort gives them (text order of the md5 digits).
    const ids = records.map((r) => r._id);
    expect(ids).toEqual([...ids].sort());
    // Private resources are listed by name, as CKAN lists them.
    expect(records).toContainEqual(expect.objectContaining({ name: 'secret', alias_of: secret.id }));
  });
});

/**
 * Hostile names, values and `datastore_search_sql` texts leave the database
 * as it was and get CKAN's answers (docs/ckan-2.12-reference.md §4 for the
 * SQL rules), on both PostgreSQL engines.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestEngines } from './engines.js';
import { engineNames, openTestEngines, typedTable } from './engines.js';
import { datastoreFailure as failure } from '../../helpers/outcome.js';

const HOSTILE = ['a"b', 'x; DROP TABLE books; --', "it's", '%s', '$1', 'bük', 'a b'];
const hostile = typedTable(
  'hostile',
  HOSTILE.map((name) => [name, 'text'] as [string, string]),
  [Object.fromEntries(HOSTILE.map((name) => [name, `v ${name}`])), Object.fromEntries(HOSTILE.map((name) => [name, "'; DELETE FROM hostile; --"]))],
);
const books = typedTable('books', [['book', 'text'], ['n', 'int4']], [{ book: 'anna', n: 1 }, { book: 'war', n: 2 }]);
const secret = typedTable('secret', [['word', 'text']], [{ word: 'hidden' }], { private: true });

let engines: TestEngines;
beforeAll(async () => {
  engines = await openTestEngines([hostile, books, secret]);
});
afterAll(async () => {
  await engines?.close();
});

describe.each(engineNames)('%s', (name) => {
  const engine = () => engines.get(name);
  const totals = async (): Promise<number[]> => {
    const out: number[] = [];
    for (const id of ['hostile', 'books', 'secret']) out.push((await engine().search({ resource_id: id })).total as number);
    return out;
  };

  it.each(HOSTILE)('the field %j works in filters, q, fields and sort', async (field) => {
    const sortName = `"${field.replaceAll('"', '""')}"`;
    const result = await engine().search({ resource_id: 'hostile', filters: { [field]: `v ${field}` }, fields: [field], sort: `${sortName} desc` });
    expect(result.records).toEqual([{ [field]: `v ${field}` }]);
    const quoted = await engine().search({ resource_id: 'hostile', filters: { [field]: "'; DELETE FROM hostile; --" }, q: { [field]: 'delete' } });
    expect(quoted.total).toBe(1);
  });

  it('values with quotes, semicolons and comments are values', async () => {
    for (const value of ["' OR 1=1 --", '"; DROP TABLE books; --', '$1', '\\', "anna' --"]) {
      const result = await engine().search({ resource_id: 'books', filters: { book: value }, q: value });
      expect(result.total).toBe(0);
    }
    expect(await totals()).toEqual([2, 2, 1]);
  });

  const sql = (text: string, token = false) => engine().searchSql?.(text, { token }) ?? Promise.reject(new Error('no searchSql'));

  it.each([
    ['SELECT count(*) AS n FROM books', [{ n: 2 }]],
    ['SELECT upper(book) AS b FROM "books" ORDER BY 1', [{ b: 'ANNA' }, { b: 'WAR' }]],
    ['SELECT UpPeR(book) AS b FROM books WHERE n = 2', [{ b: 'WAR' }]],
    ['SELECT book FROM books /* ; DROP TABLE books */ WHERE book = \'anna\'', [{ book: 'anna' }]],
  ] as const)('allowed: %s', async (text, records) => {
    const result = await sql(text);
    expect(result.records).toEqual(records);
    expect(result.sql).toBe(text);
  });

  it('fields carry PostgreSQL type names; _full_text shows as text', async () => {
    const result = await sql('SELECT * FROM books WHERE n = 1');
    expect(result.fields).toEqual([{ id: '_id', type: 'int4' }, { id: '_full_text', type: 'tsvector' }, { id: 'book', type: 'text' }, { id: 'n', type: 'int4' }]);
    expect(result.records[0]).toEqual({ _id: 1, _full_text: "'1':2 'anna':1", book: 'anna', n: 1 });
  });

  it.each([
    ['SELECT pg_sleep(1)', 403, 'Access denied: Not authorized to call function pg_sleep'],
    ['SELECT pg_catalog.pg_sleep (1)', 403, 'Access denied: Not authorized to call function pg_sleep'],
    ["SELECT query_to_xml('select 1', true, true, '')", 403, 'Access denied: Not authorized to call function query_to_xml'],
    ["SELECT set_config('role', 'postgres', false)", 403, 'Access denied: Not authorized to call function set_config'],
    ['SELECT * FROM pg_roles', 403, 'Access denied: Not authorized to access system tables'],
    ['SELECT * FROM pg_catalog.pg_database', 403, 'Access denied: Not authorized to access system tables'],
    ['SELECT * FROM information_schema.tables', 403, 'Access denied: Not authorized to access system tables'],
    ['SELECT * FROM secret', 403, 'Access denied: Not authorized to read resource.'],
    ['SELECT 1; DELETE FROM books', 409, 'Query is not a single statement.'],
    ["SELECT 'a\\'b'", 409, 'Query is not a single statement.'],
    ['DELETE FROM books', 409, 'syntax error at or near "FROM"'],
    ['COPY books TO STDOUT', 409, 'syntax error at or near "TO"'],
    ['set role postgres', 409, 'syntax error at or near "postgres"'],
    // CKAN wraps the text on one line, so a trailing comment swallows the wrapper's end.
    ["SELECT book FROM books WHERE book = 'anna' -- ; DROP TABLE books", 409, 'syntax error at end of input'],
    ['SELECT 1;', 409, 'syntax error at or near ";"'],
  ] as const)('refused: %s', async (text, status, message) => {
    const error = await failure(sql(text));
    expect(error.status).toBe(status);
    const body = error.body as Record<string, unknown>;
    if (status === 403) expect(body).toEqual({ __type: 'Authorization Error', message });
    else expect((body['query'] as string[])[0]).toBe(message);
  });

  it('a private resource is readable with a token', async () => {
    expect((await sql('SELECT word FROM secret', true)).records).toEqual([{ word: 'hidden' }]);
  });

  it('writes hidden in a CTE fail, and the tables are unchanged after every hostile text', async () => {
    const error = await failure(sql('WITH d AS (DELETE FROM books RETURNING *) SELECT * FROM d'));
    expect(error.status).toBe(409);
    expect(await totals()).toEqual([2, 2, 1]);
    expect((await engine().resources()).map((r) => r.aliases[0])).toEqual(['hostile', 'books', 'secret']);
  });
});

/**
 * `datastore_search_sql`'s text as CKAN reads it through SQLAlchemy's
 * `text()` (src/datastore/sql-text.ts). The expected readings are
 * SQLAlchemy's own regular expressions applied by hand
 * (`TextClause._bind_params_regex` `(?<![:\w\\]):(\w+)(?!:)` finds the bind
 * parameters, the compiler's `BIND_PARAMS_ESC` `\\(:[\w$]*)(?![:\w$])`
 * drops the backslash), on the cases /work/shared/reference notes.
 */
import { describe, expect, test } from 'vitest';
import fc from 'fast-check';
import { escapeColons, readSqlText, unescapeColons } from '../../src/datastore/sql-text.js';

describe('readSqlText reads a statement as SQLAlchemy text() does', () => {
  test.each([
    ["SELECT * FROM t WHERE note = 'a :b'", { bindParameter: 'b' }],
    ['SELECT * FROM "x :y"', { bindParameter: 'y' }],
    ["SELECT ':start'", { bindParameter: 'start' }],
    ["SELECT ':é'", { bindParameter: 'é' }],
    ["SELECT '10:30'", { sql: "SELECT '10:30'" }],
    ['SELECT x::int FROM t', { sql: 'SELECT x::int FROM t' }],
    ["SELECT 'a::b'", { sql: "SELECT 'a::b'" }],
    ["SELECT 'a :'", { sql: "SELECT 'a :'" }],
    ["SELECT 'a \\:b'", { sql: "SELECT 'a :b'" }],
    ["SELECT 'a \\: b'", { sql: "SELECT 'a : b'" }],
    ["SELECT 'alg\\:*'", { sql: "SELECT 'alg:*'" }],
    // a backslash before the escape stays: `a\:b` is written `a\\:b`
    ["SELECT 'a\\\\:b'", { sql: "SELECT 'a\\:b'" }],
    // `\:b:` is no escape (a `:` follows the word): SQLAlchemy leaves it as it is
    ["SELECT '\\:b:'", { sql: "SELECT '\\:b:'" }],
  ])('%s', (sql, expected) => {
    expect(readSqlText(sql)).toEqual(expected);
  });
});

test('every text escapeColons writes reads back as itself, and holds no bind parameter', () => {
  const text = fc.string({ unit: fc.constantFrom(':', '\\', 'a', 'é', '1', '_', '$', ' ', "'", ':b', '::', '\\:'), maxLength: 12 });
  fc.assert(
    fc.property(text, (value) => {
      const written = `'${escapeColons(value)}'`;
      expect(readSqlText(written)).toEqual({ sql: `'${value}'` });
      expect(unescapeColons(escapeColons(value))).toBe(value);
    }),
  );
});

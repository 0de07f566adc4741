/**
 * `like` and `ilike` against PostgreSQL itself (PGlite, a UTF-8 database
 * whose character type is C.UTF-8, as ckql's PostgreSQL engines run): the
 * memory engine's matcher (like.ts) and the reference walker
 * (`evaluateQuery`) give PostgreSQL's answer for patterns and texts drawn
 * from the whole Unicode range (astral characters, `%`, `_`, `\`, the
 * characters a regular expression reads as syntax), texts made to match
 * their pattern and texts that nearly do.
 *
 * Case folding: PostgreSQL's `ILIKE` lowers both sides with `lower()`, one
 * character at a time by the C library's tables; ckql folds by Unicode's
 * simple lower-case mapping (`foldCase`). They differ only where a C
 * library's tables are older than the JavaScript engine's Unicode: the test
 * asks PGlite which characters those are, checks that each is one that
 * PostgreSQL leaves as it is, and keeps them out of the `ilike` comparison.
 */
import type { PGlite } from '@electric-sql/pglite';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Query } from '../../../src/ast.js';
import { foldCase } from '../../../src/datastore/values.js';
import { evaluateQuery } from '../../../src/engine/memory/evaluate-query.js';
import { likeTest } from '../../../src/engine/memory/like.js';
import { startPglite } from '../../../src/engine/pglite/db.js';
import { tableFromRows } from '../../../src/engine/memory/load.js';
import { DatastoreError } from '../../../src/errors.js';
import { anyCodePoint, propertyRuns, propertySeed } from '../../helpers/arbitraries.js';

let db: PGlite;
/** Characters whose lower case PGlite's C library does not know (it leaves them as they are). */
let unfolded: ReadonlySet<string>;

beforeAll(async () => {
  db = await startPglite();
  // The characters PostgreSQL lowers, as code points (the driver's UTF-8 decoding drops a leading U+FEFF).
  // Unicode has no case above U+1FFFF (the loop below checks that ckql folds nothing there).
  const { rows } = await db.query<{ i: number; lower: number }>(
    `SELECT i, ascii(lower(chr(i))) AS lower FROM generate_series(1, 131071) AS i WHERE (i < 55296 OR i > 57343) AND lower(chr(i)) <> chr(i)`,
  );
  const lowered = new Map(rows.map(({ i, lower }) => [i, lower]));
  const different = new Set<string>();
  for (let i = 1; i <= 0x10ffff; i++) {
    if (i >= 0xd800 && i <= 0xdfff) continue;
    const ch = String.fromCodePoint(i);
    if (foldCase(ch) !== String.fromCodePoint(lowered.get(i) ?? i)) different.add(ch);
  }
  unfolded = different;
}, 60_000);

afterAll(async () => {
  await db?.close();
});

test('ckql folds case as PostgreSQL lower() does, but for characters its C library does not know yet', async () => {
  // every difference is a character PostgreSQL leaves as it is and Unicode lower-cases
  for (const ch of unfolded) {
    const { rows } = await db.query<{ lower: number }>('SELECT ascii(lower($1)) AS lower', [ch]);
    expect(rows[0]!.lower, `U+${ch.codePointAt(0)!.toString(16)}`).toBe(ch.codePointAt(0));
    expect(foldCase(ch)).not.toBe(ch);
  }
  // a few hundred at most (newer Unicode letters, circled Latin letters), never the common ones
  expect(unfolded.size).toBeLessThan(400);
  for (const ch of 'AZÀÉÖÞİΣΑЖẞＡ𐐀') expect(unfolded.has(ch), ch).toBe(false);
});

/** Characters of patterns and texts: wildcards, the escape, regular-expression syntax, any code point. */
const piece = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom('%', '_', '\\', '\\%', '\\_', '\\\\', '-', '.', '*', '+', '?', '(', ')', '[', ']', '{', '}', '|', '^', '$', '/', '\\-', '\\a') },
  { weight: 3, arbitrary: fc.constantFrom('a', 'A', 'b', 'ß', 'SS', 'İ', 'i', 'Σ', 'σ', 'ς', 'é', 'E\u0301', 'ǅ', '🎉', '𐐀', '𐐨', 'Ⓐ', 'ⓐ') },
  { weight: 2, arbitrary: fc.string({ unit: anyCodePoint, minLength: 1, maxLength: 3 }) },
);

/** A text that matches the pattern: each `%` filled with some text, each `_` with one character, escapes read. */
function instance(pattern: string, fills: readonly string[]): string {
  let out = '';
  let k = 0;
  const chars = [...pattern];
  for (let i = 0; i < chars.length; i++) {
    const c = chars[i]!;
    if (c === '\\' && i + 1 < chars.length) out += chars[++i];
    else if (c === '%') out += fills[k++ % fills.length] ?? '';
    else if (c === '_') out += [...(fills[k++ % fills.length] ?? '')][0] ?? 'x';
    else out += c;
  }
  return out;
}

const pair = fc
  .tuple(
    fc.array(piece, { maxLength: 7 }).map((parts) => parts.join('')),
    fc.array(fc.string({ unit: anyCodePoint, maxLength: 3 }), { minLength: 1, maxLength: 3 }),
    fc.constantFrom('match', 'upper', 'lower', 'cut', 'any'),
    fc.string({ unit: anyCodePoint, maxLength: 8 }),
  )
  .map(([pattern, fills, how, other]) => {
    const made = instance(pattern, fills);
    const text = how === 'match' ? made
      : how === 'upper' ? made.toUpperCase()
      : how === 'lower' ? made.toLowerCase()
      : how === 'cut' ? [...made].slice(0, -1).join('')
      : other;
    // PostgreSQL's text holds no NUL
    return { pattern: pattern.replaceAll('\0', ''), text: text.replaceAll('\0', '') };
  });

/** A pattern that ends in an escape that escapes nothing. */
function endsInEscape(pattern: string): boolean {
  let escaped = false;
  for (const c of pattern) escaped = !escaped && c === '\\';
  return escaped;
}

function walked(text: string, pattern: string, ignoreCase: boolean): boolean {
  const span = { start: 0, end: 0 };
  const query: Query = {
    kind: 'query',
    span,
    from: { kind: 'from', span, resource: { kind: 'string', span, value: 't' } },
    where: {
      kind: 'where',
      span,
      condition: { kind: 'like', span, field: { kind: 'field', span, name: 's' }, pattern: { kind: 'string', span, value: pattern }, ignoreCase },
    },
  };
  return evaluateQuery(query, tableFromRows([{ s: text }], { alias: 't' })).records.length === 1;
}

describe('like and ilike give what PostgreSQL gives', () => {
  test('on generated patterns and texts from the whole Unicode range', async () => {
    const pairs = fc.sample(pair, { numRuns: Math.max(2000, propertyRuns * 2), ...(propertySeed === undefined ? {} : { seed: propertySeed }) })
      .filter(({ pattern }) => !endsInEscape(pattern));
    const { rows } = await db.query<{ l: boolean; i: boolean }>(
      'SELECT x.t LIKE x.p AS l, x.t ILIKE x.p AS i FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS x(t, p, n) ORDER BY x.n',
      [pairs.map((p) => p.text), pairs.map((p) => p.pattern)],
    );
    expect(rows).toHaveLength(pairs.length);
    let matched = 0;
    let compared = 0;
    pairs.forEach(({ pattern, text }, n) => {
      const pg = rows[n]!;
      const where = JSON.stringify({ pattern, text });
      expect(likeTest(pattern, false)(text), `like ${where}`).toBe(pg.l);
      expect(walked(text, pattern, false), `walker like ${where}`).toBe(pg.l);
      if (pg.l) matched++;
      if ([...pattern, ...text].some((ch) => unfolded.has(ch))) return;
      compared++;
      expect(likeTest(pattern, true)(text), `ilike ${where}`).toBe(pg.i);
      expect(walked(text, pattern, true), `walker ilike ${where}`).toBe(pg.i);
    });
    // the property says little unless many texts match and ilike is compared on most
    expect(matched).toBeGreaterThan(pairs.length / 5);
    expect(compared).toBeGreaterThan(pairs.length * 0.8);
  }, 60_000);

  test('a pattern that ends in a lone backslash is refused, as PostgreSQL refuses it (there once a text reaches it)', async () => {
    await expect(db.query(`SELECT 'ab' LIKE 'a\\'`)).rejects.toThrow(/must not end with escape character/);
    expect(() => likeTest('a\\', false)).toThrow(DatastoreError);
    expect(() => walked('a', 'a\\', false)).toThrow(/ends in the escape character/);
    // an escaped backslash at the end is a backslash
    expect(likeTest('a\\\\', false)('a\\')).toBe(true);
  });

  test('the patterns that crashed: "-" and other regular-expression syntax', () => {
    expect(likeTest('MATH-1%', false)('MATH-106')).toBe(true);
    expect(walked('MATH-106', 'MATH-1%', false)).toBe(true);
    expect(walked('a-b', 'a\\-b', true)).toBe(true);
    expect(walked('x(y)', '%(_)', false)).toBe(true);
  });

  test('%a%a%b on a long text does not backtrack', () => {
    const text = 'a'.repeat(200_000);
    expect(likeTest('%a%a%a%a%a%b', false)(text)).toBe(false);
    expect(likeTest('%a%a%a%a%a%', false)(text)).toBe(true);
  });
});

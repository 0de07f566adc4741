/**
 * Requests: `compile(fromRequest(r))` equals `normalizeRequest(r)` for any
 * valid request in any shape clients send (and both fail alike on an invalid
 * one); normalization is idempotent; `compile` output is deeply frozen,
 * survives a JSON round trip unchanged, and is the same from the AST and from
 * its formatted text; a bound value is data, never syntax.
 */
import fc from 'fast-check';
import { expect, test } from 'vitest';
import { compile } from '../../src/compile/compile.js';
import { fromRequest } from '../../src/compile/from-request.js';
import { hasPrefixWord, tsQueryText } from '../../src/compile/search-text.js';
import { ckql } from '../../src/compile/template.js';
import { normalizeRequest } from '../../src/datastore/validate.js';
import { format } from '../../src/format.js';
import { propertyParameters, queryArb, requestArb, scalarValue, textValue } from '../helpers/arbitraries.js';
import { outcomeOf } from '../helpers/outcome.js';
import { isDeepFrozen } from '../helpers/spans.js';

test('compile(fromRequest(r)) equals normalizeRequest(r)', () => {
  fc.assert(
    fc.property(requestArb, (raw) => {
      // A null filter value reads back as `f = null`, which means `f is null` and is no longer a
      // portal filter (docs/beyond-the-request.md); test/compile/from-request.test.ts covers it.
      const filters = (raw['filters'] ?? {}) as Record<string, unknown>;
      fc.pre(Object.values(filters).every((v) => v !== null && !(Array.isArray(v) && v.includes(null))));
      // A plain q with a word ending in * has no query (the word would be a prefix search): fromRequest says so.
      const q = raw['q'];
      if (typeof q === 'string' && hasPrefixWord(q) && raw['plain'] !== false) {
        expect(outcomeOf(() => fromRequest(raw))).toMatchObject({ error: { code: 'VALIDATION_ERROR' } });
        return;
      }
      const expected = outcomeOf(() => normalizeRequest(raw));
      const actual = outcomeOf(() => compile(fromRequest(raw)));
      expect(actual).toEqual(expected);
      if ('ok' in actual && 'ok' in expected) {
        expect(Object.keys(actual.ok)).toEqual(Object.keys(expected.ok));
        // the canonical request is a fixed point of both
        expect(normalizeRequest(expected.ok)).toEqual(expected.ok);
        expect(compile(fromRequest(expected.ok))).toEqual(expected.ok);
      }
    }),
    propertyParameters(),
  );
}, 120_000);

test('compile output is deeply frozen, JSON round-trips unchanged, and equals compile(format(q))', () => {
  fc.assert(
    fc.property(queryArb({ parameters: false }), (query) => {
      const compiled = outcomeOf(() => compile(query));
      if (!('ok' in compiled)) {
        // what does not compile from the AST does not compile from its text either
        expect(outcomeOf(() => compile(format(query)))).toEqual(compiled);
        return;
      }
      const request = compiled.ok;
      expect(isDeepFrozen(request)).toBe(true);
      // (not toStrictEqual: it compares `.constructor`, which a field named "constructor" shadows)
      const json = JSON.stringify(request);
      expect(JSON.parse(json)).toEqual(request);
      expect(JSON.stringify(JSON.parse(json))).toBe(json);
      expect(compile(format(query))).toEqual(request);
      expect(normalizeRequest(request), 'compile gives a canonical request').toEqual(request);
    }),
    propertyParameters(),
  );
}, 120_000);

test('a value interpolated with ckql`…` is data: it lands in the request unchanged', () => {
  fc.assert(
    // null is left out: `subject = null` means `subject is null`, which a portal filter cannot say.
    fc.property(scalarValue.filter((v) => v !== null), textValue, (value, text) => {
      const request = compile(ckql`from courses where subject = ${value} search ${text}`);
      expect(request.filters).toEqual({ subject: value === 0 ? 0 : value });
      // A word ending in `*` asks for a prefix (docs/beyond-the-request.md): the text is then a to_tsquery expression.
      if (hasPrefixWord(text)) {
        expect(request.q).toBe(tsQueryText(text));
        expect(request.plain).toBe(false);
      } else {
        expect(request.q).toBe(text.trim() === '' ? undefined : text);
      }
    }),
    propertyParameters(),
  );
}, 120_000);

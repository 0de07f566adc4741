/**
 * The GET query string the client writes (`queryStringFor`) and the one the
 * server reads (`requestFromQueryString`) are inverse: every request, after
 * the shared request checks, comes back as it was sent. Texts that look like
 * JSON and texts that are not well-formed UTF-16 are the hard part.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import { qNeedsJson, queryStringFor } from '../../src/client/encode.js';
import { sortText } from '../../src/datastore/sort.js';
import type { SearchRequest } from '../../src/datastore/types.js';
import { normalizeRequest } from '../../src/datastore/validate.js';
import { readQ, requestFromQueryString } from '../../src/server/params.js';
import { anyCodePoint, propertyParameters, scaledRuns } from '../helpers/arbitraries.js';

/** What the server makes of the query string the client writes for `request`. */
function roundTrip(request: SearchRequest): SearchRequest {
  return normalizeRequest(requestFromQueryString(queryStringFor(request)));
}

/** Texts with the awkward starts and characters mixed in: quotes, braces, brackets, commas, lone surrogates. */
const awkward = fc
  .tuple(
    fc.constantFrom('', '"', '{', '[', ' "', '\t{', '""', '{}', '"a"', '{"a":1}', '\ud800', '\udc00', '\u00a0"'),
    fc.string({ unit: anyCodePoint, maxLength: 12 }),
    fc.constantFrom('', '"', '}', ']', ',', '\ud83d', '\ude00', '\ud83d\ude00'),
  )
  .map(([start, middle, end]) => start + middle + end);

describe('queryStringFor and requestFromQueryString are inverse', () => {
  it('for q, fields, sort and filters with arbitrary texts', () => {
    const requestArb = fc
      .record(
        {
          filters: fc.dictionary(awkward, fc.oneof(awkward, fc.array(awkward, { maxLength: 2 })), { maxKeys: 2 }),
          q: fc.oneof(awkward, fc.string({ unit: anyCodePoint })),
          fields: fc.array(awkward, { minLength: 1, maxLength: 3 }),
          sort: fc.array(fc.tuple(awkward, fc.constantFrom('asc' as const, 'desc' as const)), { minLength: 1, maxLength: 2 }),
          limit: fc.nat(),
        },
        { requiredKeys: [] },
      )
      .map(({ sort, ...rest }) => ({
        resource_id: 'courses',
        ...rest,
        ...(sort === undefined ? {} : { sort: sort.map(([name, direction]) => sortText(name, direction)).join(', ') }),
      }));
    fc.assert(
      fc.property(requestArb, (raw) => {
        let request: SearchRequest;
        try {
          request = normalizeRequest(raw);
        } catch {
          fc.pre(false);
          return;
        }
        expect(roundTrip(request)).toEqual(request);
      }),
      propertyParameters(scaledRuns(2_000)),
    );
  });

  it('sends q as JSON text whenever plain text would not come back', () => {
    fc.assert(
      fc.property(fc.oneof(awkward, fc.string({ unit: anyCodePoint })), (q) => {
        const plain = new URLSearchParams({ q }).toString();
        const readBack = readQ(new URLSearchParams(plain).get('q') ?? '');
        // When plain text would not survive the trip, the client must not send it plain.
        if (readBack !== q) expect(qNeedsJson(q)).toBe(true);
      }),
      propertyParameters(scaledRuns(2_000)),
    );
  });

  it('keeps texts that look like JSON, or are JSON, as texts', () => {
    for (const q of ['"quoted"', '{x}', ' "a"', '"', '{', '"\\ud800"', '\ud800', 'a\udc00b', '[1]', 'plain']) {
      const request = normalizeRequest({ resource_id: 'courses', q });
      expect(roundTrip(request).q, JSON.stringify(q)).toBe(q);
    }
    // but JSON text of an object is that object (a per-field search), as CKAN reads any q text
    const request = normalizeRequest({ resource_id: 'courses', q: '{"title": "x"}' });
    expect(request.q).toEqual({ title: 'x' });
    expect(roundTrip(request).q).toEqual({ title: 'x' });
  });

  it('sends plain text as it is (as CKAN reads it) and the rest as JSON text', () => {
    expect(queryStringFor({ resource_id: 'courses', q: 'linear algebra' })).toBe('resource_id=courses&q=linear+algebra');
    const sent = (request: SearchRequest) => Object.fromEntries(new URLSearchParams(queryStringFor(request)));
    expect(sent({ resource_id: 'courses', q: '"quoted"' }).q).toBe('"\\"quoted\\""');
    expect(sent({ resource_id: 'courses', q: '{x}' }).q).toBe('"{x}"');
    expect(sent({ resource_id: 'courses', q: 'a\ud800' }).q).toBe('"a\\ud800"');
    expect(sent({ resource_id: 'courses', sort: '"a\ud800" asc' }).sort).toBe('["\\"a\\ud800\\" asc"]');
    expect(sent({ resource_id: 'courses', fields: ['a\udc00'] }).fields).toBe('["a\\udc00"]');
  });
});

describe('the server reads a GET q', () => {
  it('as JSON when it is a JSON string or object, else as the text given', () => {
    expect(readQ('"\\"quoted\\""')).toBe('"quoted"');
    expect(readQ(' "a"')).toBe('a');
    expect(readQ('"\\ud800"')).toBe('\ud800');
    expect(readQ('{"title": "x"}')).toEqual({ title: 'x' });
    expect(readQ('{x}')).toBe('{x}');
    expect(readQ('"unclosed')).toBe('"unclosed');
    expect(readQ('[1]')).toBe('[1]');
    expect(readQ('12')).toBe('12');
    expect(readQ('null')).toBe('null');
  });
});

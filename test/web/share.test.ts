/** Share links: any state survives the fragment round trip; a fragment never carries what the state does not hold. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { readFragment, shareFragment } from '../../web/src/share.js';
import type { ShareState } from '../../web/src/share.js';
import { anyCodePoint, propertyParameters, scaledRuns } from '../helpers/arbitraries.js';

const text = fc.string({ unit: anyCodePoint, maxLength: 40 });
const state: fc.Arbitrary<ShareState> = fc.record(
  {
    query: fc.string({ unit: anyCodePoint, maxLength: 200 }),
    source: text,
    target: fc.constantFrom('auto', 'ckan-2.11', 'ckan-2.12', 'sql'),
    pageSize: fc.integer({ min: 1, max: 1000 }),
    page: fc.integer({ min: 1, max: 100_000 }),
    params: fc.dictionary(fc.string({ unit: anyCodePoint, minLength: 1, maxLength: 12 }), text, { maxKeys: 5 }),
  },
  { requiredKeys: ['query', 'params'] },
);

/** Binary strings may hold lone surrogates, which URL encoding writes as U+FFFD. */
const wellFormed = (s: string): string => s.replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '\uFFFD');

describe('share links', () => {
  it('restore the exact state (encode then decode is the identity)', () => {
    fc.assert(
      fc.property(state, (given) => {
        const read = readFragment(`#${shareFragment(given)}`);
        expect('state' in read).toBe(true);
        const expected: ShareState = {
          query: wellFormed(given.query),
          params: Object.fromEntries(Object.entries(given.params).map(([k, v]) => [wellFormed(k), wellFormed(v)])),
          ...(given.source === undefined ? {} : { source: wellFormed(given.source) }),
          ...(given.target === undefined ? {} : { target: given.target }),
          ...(given.pageSize === undefined ? {} : { pageSize: given.pageSize }),
          ...(given.page === undefined ? {} : { page: given.page }),
        };
        expect((read as { state: ShareState }).state).toEqual(expected);
      }),
      propertyParameters(scaledRuns(300)),
    );
  });

  it('are versioned: another version is refused with a message, no fragment is no state', () => {
    expect(shareFragment({ query: 'from courses', params: { s: 'math' }, page: 0 })).toBe('v=1&q=from+courses&p.s=math');
    expect(readFragment('#v=2&q=from+courses')).toEqual({ error: expect.stringContaining('link version 2') });
    expect(readFragment('')).toEqual({ none: true });
    expect(readFragment('#results')).toEqual({ none: true });
    // a parameter named like an object's own property is a parameter
    const read = readFragment(`#${shareFragment({ query: 'q', params: JSON.parse('{"__proto__": "x", "constructor": "y"}') as Record<string, string> })}`) as { state: ShareState };
    expect(Object.entries(read.state.params)).toEqual([['__proto__', 'x'], ['constructor', 'y']]);
  });
});

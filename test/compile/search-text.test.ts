/**
 * `hasPrefixWord`: one pass over the text, the same answer as the regular
 * expression it replaces, `/(?:^|\s)[^\s]*[\p{L}\p{N}][^\s*]*\*(?=\s|$)/u`
 * (kept here as the reference on short texts, where its backtracking is
 * cheap); on a long word it stays linear (test/syntax/large-input.test.ts).
 */
import fc from 'fast-check';
import { expect, test } from 'vitest';
import { hasPrefixWord, tsQueryText } from '../../src/compile/search-text.js';
import { anyCodePoint, propertyParameters } from '../helpers/arbitraries.js';

const reference = /(?:^|\s)[^\s]*[\p{L}\p{N}][^\s*]*\*(?=\s|$)/u;

test('hasPrefixWord answers as the regular expression on generated texts', () => {
  const piece = fc.constantFrom('*', '**', ' ', '\u00a0', '\u2028', '\ufeff', '\t', 'a', 'Z', '7', '²', '数', '𐐀', '!', '-', ':', '_', '\u0301', '"');
  const text = fc.oneof(fc.array(piece, { maxLength: 10 }).map((p) => p.join('')), fc.string({ unit: anyCodePoint, maxLength: 8 }));
  fc.assert(
    fc.property(text, (t) => {
      expect(hasPrefixWord(t)).toBe(reference.test(t));
    }),
    propertyParameters(),
  );
});

test.each([
  ['linear alg*', true],
  ['alg* linear', true],
  ['alg*x', false],
  ['a**', false],
  ['**a*', true],
  ['!*', false],
  ['*', false],
  ['数*', true],
  ['𐐀*\u00a0', true],
])('hasPrefixWord(%j) is %s', (text, expected) => {
  expect(hasPrefixWord(text)).toBe(expected);
  expect(reference.test(text)).toBe(expected);
});

test('tsQueryText keeps its words', () => {
  expect(tsQueryText('linear alg*')).toBe('linear & alg:*');
});

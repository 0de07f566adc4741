import { describe, expect, it } from 'vitest';
import { editDistance, excerpt } from '../src/text.js';

describe('editDistance', () => {
  it('counts insertions, deletions, substitutions and neighbour swaps as one edit each', () => {
    expect(editDistance('qurey', 'query')).toBe(1);
    expect(editDistance('wher', 'where')).toBe(1);
    expect(editDistance('slect', 'select')).toBe(1);
    expect(editDistance('abc', 'xyz')).toBe(3);
    expect(editDistance('', 'abc')).toBe(3);
    expect(editDistance('same', 'same')).toBe(0);
  });

  it('gives up at once when the lengths differ by more than max', () => {
    expect(editDistance('a', 'abcd', 2)).toBe(Infinity);
    expect(editDistance('x'.repeat(1_000_000), 'where', 2)).toBe(Infinity);
    expect(editDistance('ab', 'abcd', 2)).toBe(2);
  });
});

describe('excerpt', () => {
  it('cuts long text and marks the cut', () => {
    expect(excerpt('short')).toBe('short');
    expect(excerpt('x'.repeat(500))).toBe(`${'x'.repeat(120)}…`);
    expect(excerpt('abcdef', 3)).toBe('abc…');
  });
});

/**
 * The memory core's SHA-1 (it names resources by UUID v5 where no
 * `node:crypto` exists) against Node's, on many random inputs: every
 * length around the 64-byte blocks and their 56-byte padding edge, and
 * longer ones; and the UUIDs it makes against RFC 4122's own example and
 * against `node:crypto`'s.
 */
import { createHash } from 'node:crypto';
import { describe, expect, test } from 'vitest';
import { createRandom } from '../../../scripts/generate-demo-data.js';
import { sha1, toHex } from '../../../src/engine/memory/sha1.js';
import { resourceIdFor, uuidV5 } from '../../../src/engine/memory/load.js';

const random = createRandom(20_261_202);

function randomBytes(length: number): Uint8Array {
  return Uint8Array.from({ length }, () => Math.floor(random() * 256));
}

describe('sha1', () => {
  test('equals node:crypto on every length from 0 to 300 bytes (four inputs each) and on 200 longer ones', () => {
    const lengths = [...Array.from({ length: 301 * 4 }, (_, k) => Math.floor(k / 4)), ...Array.from({ length: 200 }, () => Math.floor(random() * 70_000))];
    for (const length of lengths) {
      const bytes = randomBytes(length);
      expect(toHex(sha1(bytes)), `length ${length}`).toBe(createHash('sha1').update(bytes).digest('hex'));
    }
  });

  test('the FIPS 180 example digests', () => {
    const text = (s: string): Uint8Array => new TextEncoder().encode(s);
    expect(toHex(sha1(text('abc')))).toBe('a9993e364706816aba3e25717850c26c9cd0d89d');
    expect(toHex(sha1(text('abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq')))).toBe('84983e441c3bd26ebaae4aa1f95129e5e54670f1');
    expect(toHex(sha1(text('')))).toBe('da39a3ee5e6b4b0d3255bfef95601890afd80709');
  });
});

describe('uuidV5', () => {
  /** RFC 4122 §4.3 with node:crypto: the way ids were made before the core had its own SHA-1. */
  function nodeUuidV5(name: string, namespace: string): string {
    const hash = createHash('sha1').update(Buffer.from(namespace.replaceAll('-', ''), 'hex')).update(name, 'utf8').digest();
    hash[6] = ((hash[6] as number) & 0x0f) | 0x50;
    hash[8] = ((hash[8] as number) & 0x3f) | 0x80;
    const hex = hash.subarray(0, 16).toString('hex');
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  }

  test('the DNS namespace example (www.example.com)', () => {
    expect(uuidV5('www.example.com', '6ba7b810-9dad-11d1-80b4-00c04fd430c8')).toBe('2ed6657d-e927-568b-95e1-2665a8aea6a2');
  });

  test('equals node:crypto\'s on random names (ASCII, accents, emoji, lone surrogates) and namespaces', () => {
    const alphabet = ['a', 'Z', '0', '-', '_', ' ', 'é', 'ü', 'ß', '中', '😀', '\uD800', '\0'];
    for (let k = 0; k < 2000; k++) {
      const name = Array.from({ length: Math.floor(random() * 80) }, () => alphabet[Math.floor(random() * alphabet.length)]).join('');
      const hex = toHex(randomBytes(16));
      const namespace = `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
      expect(uuidV5(name, namespace)).toBe(nodeUuidV5(name, namespace));
    }
    expect(resourceIdFor('courses')).toBe(nodeUuidV5('courses', '6f1d2c8e-3b4a-4e59-9c7d-0a8b5e2f41c3'));
  });
});

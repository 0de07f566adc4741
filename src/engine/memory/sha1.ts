/**
 * SHA-1 (FIPS 180-4) in plain TypeScript: the memory core names resources
 * by name-based UUIDs (RFC 4122 version 5 hashes with SHA-1), and it runs
 * where neither `node:crypto` nor a synchronous Web Crypto exists (a browser
 * worker's `crypto.subtle.digest` only answers with a promise). Ids are
 * hashed once per table, so speed does not matter here; exactness does
 * (test/engine/memory/sha1.test.ts compares it with `node:crypto`).
 */

/**
 * The SHA-1 digest of `bytes`: 20 bytes.
 * @example toHex(sha1(new TextEncoder().encode('abc'))) // → 'a9993e364706816aba3e25717850c26c9cd0d89d'
 */
export function sha1(bytes: Uint8Array): Uint8Array {
  // The message, a 1 bit, zeros, and its length in bits as 64 bits: a whole number of 64-byte blocks.
  const blocks = Math.ceil((bytes.length + 9) / 64);
  const padded = new Uint8Array(blocks * 64);
  padded.set(bytes);
  padded[bytes.length] = 0x80;
  const view = new DataView(padded.buffer);
  const bits = bytes.length * 8;
  view.setUint32(padded.length - 8, Math.floor(bits / 0x1_0000_0000));
  view.setUint32(padded.length - 4, bits >>> 0);
  let h0 = 0x67452301;
  let h1 = 0xefcdab89;
  let h2 = 0x98badcfe;
  let h3 = 0x10325476;
  let h4 = 0xc3d2e1f0;
  const w = new Int32Array(80);
  for (let block = 0; block < padded.length; block += 64) {
    for (let t = 0; t < 16; t++) w[t] = view.getInt32(block + t * 4);
    for (let t = 16; t < 80; t++) w[t] = rotl((w[t - 3] as number) ^ (w[t - 8] as number) ^ (w[t - 14] as number) ^ (w[t - 16] as number), 1);
    let a = h0;
    let b = h1;
    let c = h2;
    let d = h3;
    let e = h4;
    for (let t = 0; t < 80; t++) {
      const [f, k] =
        t < 20 ? [(b & c) | (~b & d), 0x5a827999] :
        t < 40 ? [b ^ c ^ d, 0x6ed9eba1] :
        t < 60 ? [(b & c) | (b & d) | (c & d), 0x8f1bbcdc] :
        [b ^ c ^ d, 0xca62c1d6];
      const next = (rotl(a, 5) + f + e + k + (w[t] as number)) | 0;
      e = d;
      d = c;
      c = rotl(b, 30);
      b = a;
      a = next;
    }
    h0 = (h0 + a) | 0;
    h1 = (h1 + b) | 0;
    h2 = (h2 + c) | 0;
    h3 = (h3 + d) | 0;
    h4 = (h4 + e) | 0;
  }
  const digest = new Uint8Array(20);
  const out = new DataView(digest.buffer);
  [h0, h1, h2, h3, h4].forEach((h, i) => out.setInt32(i * 4, h));
  return digest;
}

function rotl(x: number, n: number): number {
  return (x << n) | (x >>> (32 - n));
}

/** Bytes as lowercase hexadecimal. */
export function toHex(bytes: Uint8Array): string {
  let hex = '';
  for (const byte of bytes) hex += byte.toString(16).padStart(2, '0');
  return hex;
}

/**
 * A data file's bytes as the memory core reads them, with no Node built-in:
 * chunks checked to be UTF-8 and decoded with the web's `TextDecoder`. A
 * host with faster native parts lends them through a `ByteHost` (the Node
 * edge lends `buffer.isUtf8`, `Buffer.allocUnsafe` and `StringDecoder`,
 * src/engine/node/files.ts); either way the same bytes give the same
 * table and the same refusal (docs/engines.md, "The memory engine's core
 * and its Node edges").
 */
import { toolError } from '../../errors.js';
import type { ToolError } from '../../errors.js';
import type { InvalidUtf8 } from '../types.js';

/** A streaming UTF-8 decoder: a character cut at a chunk's end is finished with the next chunk. */
export interface Utf8Decoder {
  write(bytes: Uint8Array): string;
  end(): string;
}

/** What the core asks of its host for bytes: a check, an allocation, a decoder. */
export interface ByteHost {
  /** whether `bytes` are well-formed UTF-8 (RFC 3629) */
  isUtf8(bytes: Uint8Array): boolean;
  /** room for `size` bytes (its contents need not be zero) */
  alloc(size: number): Uint8Array;
  /** a decoder that reads malformed bytes as U+FFFD and keeps a byte-order mark */
  decoder(): Utf8Decoder;
}

const FATAL = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** The web platform's bytes: what a browser, a worker and Node all have. */
export const WEB_BYTES: ByteHost = {
  isUtf8(bytes) {
    try {
      FATAL.decode(bytes);
      return true;
    } catch {
      return false;
    }
  },
  alloc: (size) => new Uint8Array(size),
  decoder() {
    const decoder = new TextDecoder('utf-8', { ignoreBOM: true });
    return { write: (bytes) => decoder.decode(bytes, { stream: true }), end: () => decoder.decode() };
  },
};

/** `a` then `b`, in bytes of `host`'s kind. */
export function concatBytes(a: Uint8Array, b: Uint8Array, host: ByteHost): Uint8Array {
  const both = host.alloc(a.length + b.length);
  both.set(a);
  both.set(b, a.length);
  return both;
}

/**
 * The chunks of a data file as they stream in, each checked to be UTF-8 (a
 * character cut at a chunk's end is checked with the next chunk); the first
 * byte that is not is `DATA_INVALID` naming the file, its line and its byte
 * offset. The line is counted in the bytes read `again` up to that byte when
 * the caller can read them twice (a file), else in the chunks as they pass.
 * With `replace`, or after a UTF-16LE byte-order mark (the CSV reader's own
 * decoding), the chunks pass unchecked.
 * @example for await (const chunk of checkedUtf8(chunks, 'data.csv', 'refuse', WEB_BYTES)) reader.push(chunk);
 */
export async function* checkedUtf8(
  input: AsyncIterable<Uint8Array>,
  file: string,
  mode: InvalidUtf8,
  host: ByteHost,
  again?: (end: number) => AsyncIterable<Uint8Array>,
): AsyncIterable<Uint8Array> {
  let checked = mode === 'refuse';
  let first = true;
  let offset = 0;
  let lines = 1;
  let held: Uint8Array = new Uint8Array(0);
  for await (const chunk of input) {
    if (first) {
      first = false;
      if (chunk[0] === 0xff && chunk[1] === 0xfe) checked = false;
    }
    if (checked) {
      const bytes = held.length === 0 ? chunk : concatBytes(held, chunk, host);
      const cut = completeLength(bytes);
      const whole = bytes.subarray(0, cut);
      if (!host.isUtf8(whole)) {
        const at = firstInvalidByte(whole);
        throw notUtf8(file, offset + at, again === undefined ? lines + lineBreaks(whole, at) : await linesUpTo(again, offset + at));
      }
      if (again === undefined) lines += lineBreaks(whole, whole.length);
      offset += cut;
      // a copy: the chunk's own memory may be reused by its reader once it is handed on
      held = host.alloc(bytes.length - cut);
      held.set(bytes.subarray(cut));
    }
    yield chunk;
  }
  if (held.length > 0) throw notUtf8(file, offset, again === undefined ? lines : await linesUpTo(again, offset));
}

/** The length of `bytes` without a character its end cuts short (at most 3 bytes held back). */
function completeLength(bytes: Uint8Array): number {
  for (let back = 1; back <= 3 && back <= bytes.length; back++) {
    const byte = bytes[bytes.length - back] as number;
    if ((byte & 0xc0) === 0x80) continue;
    const length = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
    return length > back ? bytes.length - back : bytes.length;
  }
  return bytes.length;
}

/** The line of the byte at `offset`, from the bytes before it read again (only a refusal pays for that). */
async function linesUpTo(again: (end: number) => AsyncIterable<Uint8Array>, offset: number): Promise<number> {
  let line = 1;
  if (offset > 0) for await (const chunk of again(offset)) line += lineBreaks(chunk, chunk.length);
  return line;
}

function lineBreaks(bytes: Uint8Array, end: number): number {
  let count = 0;
  for (let i = bytes.indexOf(0x0a); i !== -1 && i < end; i = bytes.indexOf(0x0a, i + 1)) count++;
  return count;
}

function notUtf8(file: string, offset: number, line: number): ToolError {
  return toolError('DATA_INVALID', [file, `line ${line}, byte ${offset}: not UTF-8 (a byte no UTF-8 character starts or continues with; a file saved as Latin-1 or Windows-1252?)`], {
    file, line, hint: 'save the file as UTF-8, or load it with --invalid-utf8 replace to read each such byte as U+FFFD (�)',
  });
}

/** The offset of the first byte that does not continue well-formed UTF-8 (RFC 3629: no overlongs, no surrogates, ≤ U+10FFFF). */
export function firstInvalidByte(bytes: Uint8Array): number {
  let i = 0;
  while (i < bytes.length) {
    const lead = bytes[i] as number;
    const [length, low, high] =
      lead < 0x80 ? [1, 0, 0] :
      lead >= 0xc2 && lead <= 0xdf ? [2, 0x80, 0xbf] :
      lead === 0xe0 ? [3, 0xa0, 0xbf] :
      lead === 0xed ? [3, 0x80, 0x9f] :
      lead >= 0xe1 && lead <= 0xef ? [3, 0x80, 0xbf] :
      lead === 0xf0 ? [4, 0x90, 0xbf] :
      lead === 0xf4 ? [4, 0x80, 0x8f] :
      lead >= 0xf1 && lead <= 0xf3 ? [4, 0x80, 0xbf] : [0, 0, 0];
    if (length === 0) return i;
    for (let k = 1; k < length; k++) {
      const next = bytes[i + k];
      const [from, to] = k === 1 ? [low, high] : [0x80, 0xbf];
      if (next === undefined || next < from || next > to) return i;
    }
    i += length;
  }
  return i;
}

/**
 * The line of the byte at `offset` of `bytes`.
 * @example lineOfByte(new TextEncoder().encode('a\nb'), 2) // → 2
 */
export function lineOfByte(bytes: Uint8Array, offset: number): number {
  return 1 + lineBreaks(bytes, offset);
}

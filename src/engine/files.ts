/**
 * Reading a text file ckql was pointed at (a config, a script, code to
 * check), with bounds: a regular file only (a FIFO would block for good, a
 * device such as /dev/zero never ends), at most `maxBytes`, and UTF-8
 * (invalid bytes are refused with their line, not replaced without a word).
 * A loop of symbolic links, a folder or a missing file is the same typed
 * error, `FILE_UNREADABLE`, naming the file and what would be right.
 */
import type { InvalidUtf8 } from './types.js';
import { isUtf8 } from 'node:buffer';
import { createReadStream } from 'node:fs';
import { constants, open } from 'node:fs/promises';
import type { Stats } from 'node:fs';
import { toolError } from '../errors.js';
import type { ToolError } from '../errors.js';

/** The most a config file, a script or a code file may hold: far past any real one, well short of the memory a reading takes. */
export const MAX_TEXT_FILE_BYTES: number = 16 * 1024 * 1024;

export interface ReadTextOptions {
  /** default `MAX_TEXT_FILE_BYTES` */
  readonly maxBytes?: number;
}

/**
 * The file's text, without a leading byte-order mark.
 * @example await readTextFile('ckql.config.yaml') // → 'profiles:\n  …'
 * @throws ToolError FILE_UNREADABLE: missing, not a regular file, too large, a symlink loop, not UTF-8
 */
export async function readTextFile(path: string, options: ReadTextOptions = {}): Promise<string> {
  const maxBytes = options.maxBytes ?? MAX_TEXT_FILE_BYTES;
  let handle;
  try {
    // O_NONBLOCK: opening a FIFO with no writer returns at once (then refused below) instead of waiting for one.
    handle = await open(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (cause) {
    throw unreadable(path, openFailure(cause as NodeJS.ErrnoException), cause);
  }
  try {
    const info = await handle.stat();
    if (!info.isFile()) throw unreadable(path, `is ${fileKind(info)}, not a file`);
    if (info.size > maxBytes) throw unreadable(path, `holds ${megabytes(info.size)}; ckql reads at most ${megabytes(maxBytes)} from such a file`);
    // The size read, and one byte more to see a file that grew past the bound since.
    const buffer = Buffer.alloc(Math.min(info.size, maxBytes) + 1);
    let length = 0;
    for (;;) {
      const { bytesRead } = await handle.read(buffer, length, buffer.length - length, length);
      if (bytesRead === 0) break;
      length += bytesRead;
      if (length === buffer.length) break;
    }
    if (length > maxBytes) throw unreadable(path, `holds more than ${megabytes(maxBytes)}; ckql reads at most that from such a file`);
    const bytes = buffer.subarray(0, length);
    if (!isUtf8(bytes)) throw unreadable(path, `is not UTF-8 text: line ${lineOfByte(bytes, firstInvalidByte(bytes))} has bytes that are not UTF-8`, undefined, 'save it as UTF-8');
    return bytes.toString('utf8').replace(/^\uFEFF/, '');
  } finally {
    await handle.close();
  }
}

function unreadable(path: string, detail: string, cause?: unknown, hint?: string): ToolError {
  return toolError('FILE_UNREADABLE', [path, detail], { ...(hint === undefined ? {} : { hint }), ...(cause === undefined ? {} : { cause }) });
}

function openFailure(error: NodeJS.ErrnoException): string {
  switch (error.code) {
    case 'ENOENT':
      return 'does not exist';
    case 'ELOOP':
      return SYMLINK_LOOP;
    case 'EACCES':
    case 'EPERM':
      return 'cannot be read: permission denied';
    case 'ENAMETOOLONG':
      return 'has a name too long for the system';
    default:
      return `cannot be opened (${error.code ?? error.message})`;
  }
}

/** What a path that ELOOP answers for is, in the words every refusal uses. */
export const SYMLINK_LOOP = 'is a loop of symbolic links (one points, through others, back to itself)';

/** What a path that is not a regular file is: `a folder`, `a named pipe (FIFO)`, `a device`, … */
export function fileKind(info: Stats): string {
  if (info.isDirectory()) return 'a folder';
  if (info.isFIFO()) return 'a named pipe (FIFO)';
  if (info.isCharacterDevice() || info.isBlockDevice()) return 'a device';
  if (info.isSocket()) return 'a socket';
  return 'not a regular file';
}


/**
 * The chunks of a data file as they stream in, each checked to be UTF-8 (a
 * character cut at a chunk's end is checked with the next chunk); the first
 * byte that is not is `DATA_INVALID` naming the file, its line and its byte
 * offset. With `replace`, or after a UTF-16LE byte-order mark (the CSV
 * reader's own decoding), the chunks pass unchecked.
 * @example for await (const chunk of utf8Chunks(createReadStream(file), file)) reader.push(chunk);
 */
export async function* utf8Chunks(input: AsyncIterable<Buffer>, file: string, mode: InvalidUtf8 = 'refuse'): AsyncIterable<Buffer> {
  let checked = mode === 'refuse';
  let first = true;
  let offset = 0;
  let held: Buffer = Buffer.alloc(0);
  for await (const chunk of input) {
    if (first) {
      first = false;
      if (chunk[0] === 0xff && chunk[1] === 0xfe) checked = false;
    }
    if (checked) {
      const bytes = held.length === 0 ? chunk : Buffer.concat([held, chunk]);
      const cut = completeLength(bytes);
      const whole = bytes.subarray(0, cut);
      if (!isUtf8(whole)) throw await notUtf8(file, offset + firstInvalidByte(whole));
      offset += cut;
      held = Buffer.from(bytes.subarray(cut));
    }
    yield chunk;
  }
  if (held.length > 0) throw await notUtf8(file, offset);
}

/** The length of `bytes` without a character its end cuts short (at most 3 bytes held back). */
function completeLength(bytes: Buffer): number {
  for (let back = 1; back <= 3 && back <= bytes.length; back++) {
    const byte = bytes[bytes.length - back]!;
    if ((byte & 0xc0) === 0x80) continue;
    const length = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
    return length > back ? bytes.length - back : bytes.length;
  }
  return bytes.length;
}

/** `DATA_INVALID` for the byte at `offset`, with its line (the file read again up to it: only a refusal pays for that). */
async function notUtf8(file: string, offset: number): Promise<ToolError> {
  let line = 1;
  if (offset > 0) {
    for await (const chunk of createReadStream(file, { end: offset - 1 })) {
      for (let i = (chunk as Buffer).indexOf(0x0a); i !== -1; i = (chunk as Buffer).indexOf(0x0a, i + 1)) line++;
    }
  }
  return toolError('DATA_INVALID', [file, `line ${line}, byte ${offset}: not UTF-8 (a byte no UTF-8 character starts or continues with; a file saved as Latin-1 or Windows-1252?)`], {
    file, line, hint: 'save the file as UTF-8, or load it with --invalid-utf8 replace to read each such byte as U+FFFD (�)',
  });
}

function megabytes(bytes: number): string {
  return `${(bytes / (1024 * 1024)).toFixed(bytes < 1024 * 1024 ? 3 : 1)} MiB`;
}

/** The offset of the first byte that does not continue well-formed UTF-8 (RFC 3629: no overlongs, no surrogates, ≤ U+10FFFF). */
function firstInvalidByte(bytes: Uint8Array): number {
  let i = 0;
  while (i < bytes.length) {
    const lead = bytes[i]!;
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

function lineOfByte(bytes: Uint8Array, offset: number): number {
  let line = 1;
  for (let i = 0; i < offset; i++) if (bytes[i] === 0x0a) line++;
  return line;
}

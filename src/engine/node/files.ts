/**
 * Reading a text file ckql was pointed at (a config, a script, code to
 * check), with bounds: a regular file only (a FIFO would block for good, a
 * device such as /dev/zero never ends), at most `maxBytes`, and UTF-8
 * (invalid bytes are refused with their line, not replaced without a word).
 * A loop of symbolic links, a folder or a missing file is the same typed
 * error, `FILE_UNREADABLE`, naming the file and what would be right.
 */
import { isUtf8 } from 'node:buffer';
import { createReadStream } from 'node:fs';
import { constants, open } from 'node:fs/promises';
import type { Stats } from 'node:fs';
import { StringDecoder } from 'node:string_decoder';
import type { InvalidUtf8 } from '../types.js';
import { toolError } from '../../errors.js';
import type { ToolError } from '../../errors.js';
import { checkedUtf8, firstInvalidByte, lineOfByte } from '../memory/bytes.js';
import type { ByteHost } from '../memory/bytes.js';

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
 * Node's bytes for the memory core (`ByteHost`): the SIMD UTF-8 check, Buffers (whose own decoders
 * `cellText` uses) and `StringDecoder`, each several times quicker here than the web's means.
 */
export const NODE_BYTES: ByteHost = {
  isUtf8: (bytes) => isUtf8(bytes),
  alloc: (size) => Buffer.allocUnsafe(size),
  decoder() {
    const decoder = new StringDecoder('utf8');
    return { write: (bytes) => decoder.write(bytes as Buffer), end: () => decoder.end() };
  },
};

/**
 * The chunks of a data file as they stream in, each checked to be UTF-8
 * (the core's `checkedUtf8`, with Node's bytes); the first byte that is not
 * is `DATA_INVALID` naming the file, its line (the file read again up to
 * it) and its byte offset. With `replace`, or after a UTF-16LE byte-order
 * mark (the CSV reader's own decoding), the chunks pass unchecked.
 * @example for await (const chunk of utf8Chunks(createReadStream(file), file)) reader.push(chunk);
 */
export function utf8Chunks(input: AsyncIterable<Buffer>, file: string, mode: InvalidUtf8 = 'refuse'): AsyncIterable<Buffer> {
  return checkedUtf8(input, file, mode, NODE_BYTES, (end) => createReadStream(file, { end: end - 1 })) as AsyncIterable<Buffer>;
}

function megabytes(bytes: number): string {
  return `${(bytes / (1024 * 1024)).toFixed(bytes < 1024 * 1024 ? 3 : 1)} MiB`;
}

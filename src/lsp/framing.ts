/**
 * The base protocol's framing (`Content-Length: N\r\n\r\n` then N bytes),
 * checked before the protocol library reads it. vscode-jsonrpc's reader
 * reports a header without a usable `Content-Length` and then reads the
 * rest of the stream as headers, so one bad message stopped the server for
 * good. Here a bad header is reported and skipped up to the next
 * `Content-Length:` header, and a body longer than `MAX_MESSAGE_BYTES` is dropped as it
 * streams past, so memory stays bounded.
 */
import { Transform } from 'node:stream';
import type { TransformCallback } from 'node:stream';

/** The largest message passed on: a 10,000-line document is well under 1 MiB. */
export const MAX_MESSAGE_BYTES = 64 * 1024 * 1024;
/** The longest header block read (the protocol's headers are two short lines). */
const MAX_HEADER_BYTES = 8 * 1024;

const HEADER_END = Buffer.from('\r\n\r\n');
const LENGTH_HEADER = /^content-length$/i;

/**
 * A stream of well-framed messages read from `input`; `report` hears of
 * each message dropped (never its body, which may hold a document's text).
 */
export function framedMessages(report: (problem: string) => void, maxMessageBytes = MAX_MESSAGE_BYTES): Transform {
  let buffer: Buffer = Buffer.alloc(0);
  /** bytes of an over-large body still to drop */
  let dropping = 0;

  const resync = (from: number): void => {
    // The next header line that names a length, after the bad one's start.
    const next = indexOfLengthHeader(buffer, from);
    buffer = next < 0 ? buffer.subarray(Math.max(0, buffer.length - 'content-length:'.length)) : buffer.subarray(next);
  };

  return new Transform({
    transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
      buffer = buffer.length === 0 ? chunk : Buffer.concat([buffer, chunk]);
      for (;;) {
        if (dropping > 0) {
          const dropped = Math.min(dropping, buffer.length);
          dropping -= dropped;
          buffer = buffer.subarray(dropped);
          if (dropping > 0) break;
        }
        const end = buffer.indexOf(HEADER_END);
        if (end < 0) {
          if (buffer.length > MAX_HEADER_BYTES) {
            report(`a message header longer than ${MAX_HEADER_BYTES} bytes was skipped`);
            resync(1);
          }
          break;
        }
        const length = contentLength(buffer.subarray(0, end).toString('ascii'));
        if (length === undefined) {
          report('a message without a valid Content-Length header was skipped');
          resync(1);
          continue;
        }
        const start = end + HEADER_END.length;
        if (length > maxMessageBytes) {
          report(`a message of ${length} bytes (more than ${maxMessageBytes}) was skipped`);
          buffer = buffer.subarray(start);
          dropping = length;
          continue;
        }
        if (buffer.length < start + length) break;
        this.push(Buffer.from(`Content-Length: ${length}\r\n\r\n`));
        this.push(buffer.subarray(start, start + length));
        buffer = buffer.subarray(start + length);
      }
      done();
    },
  });
}

/** The header block's Content-Length, when it has exactly one that is a whole number. */
function contentLength(headers: string): number | undefined {
  let found: number | undefined;
  for (const line of headers.split('\r\n')) {
    const colon = line.indexOf(':');
    if (colon < 0) return undefined;
    if (!LENGTH_HEADER.test(line.slice(0, colon).trim())) continue;
    const value = line.slice(colon + 1).trim();
    if (!/^\d{1,15}$/.test(value) || found !== undefined) return undefined;
    found = Number(value);
  }
  return found;
}

/**
 * Where the next `Content-Length:` (any case) begins, at or after `from`; -1
 * if none yet. Messages follow each other with nothing between, so the next
 * header starts right after a body, not on a line of its own.
 */
function indexOfLengthHeader(buffer: Buffer, from: number): number {
  const pattern = /content-length:/gi;
  pattern.lastIndex = from;
  return pattern.exec(buffer.toString('latin1'))?.index ?? -1;
}

/**
 * A CSV reader over the bytes of a file as they arrive. It finds the cells
 * in the bytes and hands each to a sink as a range of bytes (`bytes`,
 * `start`, `end`), so a cell nobody keeps as a string (a number, read from
 * its digits; a repeated text, found by its bytes) never becomes one, and
 * a cell that is kept becomes a string of its own (`cellText`): a string
 * cut from a larger one would keep the larger one alive. A cell that is
 * not one range of a chunk (a quoted cell with `""` in it, a cell across
 * two chunks) is handed as bytes of its own.
 *
 * It reads CSV as the loaders always have (the rules they pinned with
 * csv-parse's `bom`, `skip_empty_lines`, `relax_quotes` and the record
 * delimiters `\r\n`, `\n`, `\r`; test/property/csv-reader.test.ts
 * compares the two on generated files):
 * - a `"` at the start of a cell opens a quoted cell, in which delimiters
 *   and line breaks are text and `""` is one `"`; a `"` anywhere else in
 *   an unquoted cell is text (`5" screen`);
 * - a closing `"` followed by anything but a delimiter, a line break or the
 *   end keeps both quotes as text and the cell goes on unquoted
 *   (`"a"b` is `"a"b`);
 * - an empty line (no character at all) is no record; a BOM at the start is
 *   dropped (UTF-8, or UTF-16LE, whose text is then read as UTF-8);
 * - every record has as many cells as the first; one that has not, or a
 *   quote still open at the end, is a `CsvSyntaxError` with csv-parse's
 *   words and line: lines count every `\r` and `\n` (a `\r\n` ending a
 *   record once), as csv-parse counts them;
 * - texts are UTF-8, a malformed sequence read as U+FFFD.
 */

import { concatBytes, WEB_BYTES } from './bytes.js';
import type { ByteHost } from './bytes.js';

/** Where the cells of each record go, in order. */
export interface CsvSink {
  /**
   * Cell `index` of the current record: `bytes[start, end)`; `ascii`: no
   * byte of it is beyond ASCII. `quoted`: the cell was written in quotes (a
   * quoted empty cell is told apart so).
   */
  cell(index: number, bytes: Uint8Array, start: number, end: number, quoted: boolean, ascii: boolean): void;
  /** The current record is complete (its cells all told); `line` is the line it ends on. */
  record(line: number): void;
}

/**
 * Node's Buffer decoders without `toString`'s argument checks, a third of a
 * cell's cost (they are what `toString` calls). Bytes a Node edge hands in
 * (and those its `ByteHost` allocates) are Buffers and have them; plain
 * bytes (a browser's) are decoded by the web's means.
 */
interface Decoders {
  latin1Slice?: (start: number, end: number) => string;
  utf8Slice?: (start: number, end: number) => string;
}

const UTF8: InstanceType<typeof TextDecoder> = new TextDecoder('utf-8', { ignoreBOM: true });
/** The longest ASCII cell made by `String.fromCharCode` from its bytes (beyond, the decoder is quicker). */
const CHAR_CODES = 256;

/**
 * The text of a cell: a string of its own (an ASCII cell copied byte for byte, the fastest way V8 makes one).
 * @example cellText(new TextEncoder().encode('a,b'), 2, 3, true) // → 'b'
 */
export function cellText(bytes: Uint8Array, start: number, end: number, ascii: boolean): string {
  const decoders = bytes as Decoders;
  if (decoders.latin1Slice !== undefined) return ascii ? decoders.latin1Slice(start, end) : (decoders.utf8Slice as (start: number, end: number) => string)(start, end);
  if (ascii && end - start <= CHAR_CODES) return String.fromCharCode.apply(null, bytes.subarray(start, end) as unknown as number[]);
  return UTF8.decode(bytes.subarray(start, end));
}

/** Bad CSV, in csv-parse's words, with the line it was found on. */
export class CsvSyntaxError extends Error {
  constructor(
    message: string,
    readonly line: number,
  ) {
    super(message);
    this.name = 'CsvSyntaxError';
  }
}

const QUOTE = 34;
const LF = 10;
const CR = 13;
const EMPTY: Uint8Array = new Uint8Array(0);
const ENCODER = new TextEncoder();

/**
 * Reads one CSV file given in chunks of bytes.
 * @example
 * const cells: string[] = [];
 * const reader = new CsvReader(',', { cell: (_, bytes, start, end, _quoted, ascii) => cells.push(cellText(bytes, start, end, ascii)), record: () => undefined });
 * reader.push(new TextEncoder().encode('a,"b ""c"""\n1,2\n'));
 * reader.end(); // cells → ['a', 'b "c"', '1', '2']
 */
export class CsvReader {
  private readonly delimiter: number;
  /** the first bytes, until there are enough to tell a BOM */
  private head: Uint8Array | undefined = EMPTY;
  /** UTF-16LE text (a file that starts with its BOM), read as UTF-8 */
  private utf16: InstanceType<typeof TextDecoder> | undefined;
  /** a byte held back for the next chunk: a `"` or `\r` whose next byte says what it is */
  private carry = -1;
  /** the current cell's bytes so far, when it is not one range of the current chunk */
  private field: Uint8Array;
  private fieldLength = 0;
  /** whether `field` holds the cell (it may be empty so far) */
  private fieldStarted = false;
  private fieldAscii = true;
  private quoting = false;
  private wasQuoted = false;
  /** cells of the current record told so far */
  private cells = 0;
  /** cells of the first record: every record must have as many */
  private expected = -1;
  /** line breaks read, and whether the last byte read was one (its line counts from the next byte on) */
  private breaks = 0;
  private lastWasBreak = false;

  /** `host`: where the reader's own bytes come from (the Node edge's are Buffers, which `cellText` decodes fastest) */
  constructor(
    delimiter: string,
    private readonly sink: CsvSink,
    private readonly host: ByteHost = WEB_BYTES,
  ) {
    this.delimiter = delimiter.charCodeAt(0);
    this.field = host.alloc(256);
  }

  /** Reads the next chunk of the file. */
  push(chunk: Uint8Array): void {
    let bytes = chunk;
    if (this.head !== undefined) {
      bytes = this.head.length === 0 ? chunk : concatBytes(this.head, chunk, this.host);
      if (bytes.length < 3) {
        this.head = bytes;
        return;
      }
      this.head = undefined;
      bytes = this.skipBom(bytes);
    }
    if (this.utf16 !== undefined) bytes = ENCODER.encode(this.utf16.decode(bytes, { stream: true }));
    this.scan(bytes, false);
  }

  /** The file has ended: its last record is read, or it is refused as csv-parse refuses it. */
  end(): void {
    let bytes = EMPTY;
    if (this.head !== undefined) {
      bytes = this.skipBom(this.head);
      this.head = undefined;
    }
    if (this.utf16 !== undefined) bytes = ENCODER.encode(this.utf16.decode(bytes));
    this.scan(bytes, true);
    if (this.quoting) {
      throw new CsvSyntaxError(`Quote Not Closed: the parsing is finished with an opening quote at line ${this.line()}`, this.line());
    }
    if (this.wasQuoted || this.cells > 0 || this.fieldStarted) {
      this.endField(EMPTY, 0, 0, true);
      this.endRecord(this.line());
    }
  }

  private skipBom(bytes: Uint8Array): Uint8Array {
    if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) return bytes.subarray(3);
    if (bytes[0] === 0xff && bytes[1] === 0xfe) {
      this.utf16 = new TextDecoder('utf-16le', { ignoreBOM: true });
      return bytes.subarray(2);
    }
    return bytes;
  }

  /** The line being read, as csv-parse numbers it: a break counts once the byte after it is read. */
  private line(): number {
    return 1 + this.breaks - (this.lastWasBreak ? 1 : 0);
  }

  private scan(chunk: Uint8Array, last: boolean): void {
    let bytes = chunk;
    if (this.carry !== -1) {
      bytes = this.host.alloc(chunk.length + 1);
      bytes[0] = this.carry;
      bytes.set(chunk, 1);
      this.carry = -1;
    }
    const n = bytes.length;
    const delimiter = this.delimiter;
    // where the current cell's bytes in this chunk start (in a quoted cell: after the quote, or after its last `""`)
    let from = 0;
    let high = 0;
    let i = 0;
    while (i < n) {
      if (this.quoting) {
        // inside quotes: on to the next quote, counting the line breaks on the way
        for (; i < n; i++) {
          const c = bytes[i] as number;
          if (c === QUOTE) break;
          if (c === LF || c === CR) this.breaks++;
          high |= c;
        }
        if (i === n) break;
        if (i + 1 === n && !last) {
          // the byte after this quote says what it is: it waits for the next chunk
          this.keep(bytes, from, i, high);
          this.carry = QUOTE;
          return;
        }
        const next = i + 1 < n ? (bytes[i + 1] as number) : -1;
        this.keep(bytes, from, i, high);
        high = 0;
        if (next === QUOTE) {
          // `""`: one quote of the cell's text
          this.keep(bytes, i, i + 1, 0);
          i += 2;
          from = i;
          continue;
        }
        this.quoting = false;
        this.wasQuoted = true;
        if (next !== -1 && next !== delimiter && next !== LF && next !== CR && next !== 0) {
          // relax_quotes: both quotes are text, and the cell goes on unquoted (csv-parse ends the quotes at a NUL too)
          this.quoteField();
        }
        i += 1;
        from = i;
        continue;
      }
      const c = bytes[i] as number;
      if (c === delimiter) {
        this.endField(bytes, from, i, high < 0x80);
        high = 0;
        i += 1;
        from = i;
        continue;
      }
      if (c === LF || c === CR) {
        if (c === CR && i + 1 === n && !last) {
          // `\r\n` or a `\r` alone: the next chunk says
          this.keep(bytes, from, i, high);
          this.carry = CR;
          return;
        }
        const line = 1 + this.breaks;
        this.breaks++;
        if (this.cells > 0 || this.wasQuoted || this.fieldStarted || from !== i) {
          this.endField(bytes, from, i, high < 0x80);
          this.endRecord(line);
        }
        // (else an empty line: no record)
        high = 0;
        i += c === CR && i + 1 < n && bytes[i + 1] === LF ? 2 : 1;
        from = i;
        continue;
      }
      if (c === QUOTE && from === i && !this.fieldStarted && !this.wasQuoted) {
        this.quoting = true;
        i += 1;
        from = i;
        continue;
      }
      // an unquoted cell's bytes: on to the next delimiter or line break
      high |= c;
      for (i++; i < n; i++) {
        const d = bytes[i] as number;
        if (d === delimiter || d === LF || d === CR) break;
        high |= d;
      }
    }
    this.keep(bytes, from, n, high);
    if (n > 0) {
      const end = bytes[n - 1];
      this.lastWasBreak = end === LF || end === CR;
    }
  }

  /** Keeps `bytes[from, to)` as more of the current cell (it goes on in the next chunk, or is quoted). */
  private keep(bytes: Uint8Array, from: number, to: number, high: number): void {
    const length = to - from;
    if (length <= 0) return;
    if (high >= 0x80) this.fieldAscii = false;
    this.room(length);
    const field = this.field;
    const at = this.fieldLength;
    // a short cell byte by byte: cheaper than the view `set` needs
    if (length <= 32) for (let k = 0; k < length; k++) field[at + k] = bytes[from + k] as number;
    else field.set(bytes.subarray(from, to), at);
    this.fieldLength += length;
    this.fieldStarted = true;
  }

  /** relax_quotes: the cell so far becomes `"` + its text + `"`. */
  private quoteField(): void {
    this.room(2);
    this.field.copyWithin(1, 0, this.fieldLength);
    this.field[0] = QUOTE;
    this.field[this.fieldLength + 1] = QUOTE;
    this.fieldLength += 2;
    this.fieldStarted = true;
  }

  private room(more: number): void {
    if (this.fieldLength + more <= this.field.length) return;
    const bigger = this.host.alloc(Math.max(this.field.length * 2, this.fieldLength + more));
    bigger.set(this.field.subarray(0, this.fieldLength));
    this.field = bigger;
  }

  private endField(bytes: Uint8Array, from: number, to: number, ascii: boolean): void {
    const quoted = this.wasQuoted;
    if (this.fieldStarted) {
      this.keep(bytes, from, to, ascii ? 0 : 0x80);
      const length = this.fieldLength;
      const fieldAscii = this.fieldAscii;
      this.fieldLength = 0;
      this.fieldStarted = false;
      this.fieldAscii = true;
      this.sink.cell(this.cells, this.field, 0, length, quoted, fieldAscii);
    } else this.sink.cell(this.cells, bytes, from, to, quoted, ascii);
    this.wasQuoted = false;
    this.cells++;
  }

  private endRecord(line: number): void {
    if (this.expected === -1) this.expected = this.cells;
    else if (this.cells !== this.expected) {
      throw new CsvSyntaxError(`Invalid Record Length: expect ${this.expected}, got ${this.cells} on line ${line}`, line);
    }
    this.cells = 0;
    this.sink.record(line);
  }
}

/**
 * The records of a CSV file as arrays of texts, for a reader that wants
 * them whole (`ckql load`): `take()` hands over those read so far.
 * @example
 * const records = new CsvRecords();
 * const reader = new CsvReader(',', records);
 * reader.push(new TextEncoder().encode('a,b\n1,""\n'));
 * reader.end();
 * records.take(); // → [['a', 'b'], ['1', '']]
 */
export class CsvRecords implements CsvSink {
  private ready: string[][] = [];
  private readyLines: number[] = [];
  private current: string[] = [];
  /** the line each record the last `take()` handed over ends on */
  lines: number[] = [];

  /** `quotedEmpty`: the text a quoted empty cell is given (default: the empty text, as an unquoted one) */
  constructor(private readonly quotedEmpty = '') {}

  cell(_index: number, bytes: Uint8Array, start: number, end: number, quoted: boolean, ascii: boolean): void {
    this.current.push(quoted && start === end ? this.quotedEmpty : cellText(bytes, start, end, ascii));
  }

  record(line: number): void {
    this.ready.push(this.current);
    this.readyLines.push(line);
    this.current = [];
  }

  take(): string[][] {
    const ready = this.ready;
    this.ready = [];
    this.lines = this.readyLines;
    this.readyLines = [];
    return ready;
  }
}

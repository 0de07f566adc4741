/**
 * The one place errors become text for people. A `QueryError` shows the
 * line of the query with a caret run under the offending text; datastore and
 * tool errors show what the server or the file said. Never a stack trace:
 * these are the user's mistakes or the world's, not ours.
 */
import stringWidth from 'string-width';
import { DatastoreError, QueryError, ToolError } from './errors.js';
import type { Span } from './span.js';

export interface RenderOptions {
  /** ANSI colours; off unless asked for (the CLI asks when stderr is a TTY) */
  readonly color?: boolean;
  /** the query text, when the error does not carry it */
  readonly source?: string;
  /** where the query text is written, for a query kept in a config file */
  readonly origin?: { readonly file: string; readonly line?: number; readonly key: string };
}

interface Paint {
  readonly error: (s: string) => string;
  readonly bold: (s: string) => string;
  readonly gutter: (s: string) => string;
  readonly caret: (s: string) => string;
  readonly note: (s: string) => string;
}

const ansi = (open: number, close: number) => (s: string) => `\u001b[${open}m${s}\u001b[${close}m`;
const plain = (s: string) => s;
const noPaint: Paint = { error: plain, bold: plain, gutter: plain, caret: plain, note: plain };
const colorPaint: Paint = {
  error: (s) => ansi(1, 22)(ansi(31, 39)(s)),
  bold: ansi(1, 22),
  gutter: ansi(34, 39),
  caret: (s) => ansi(1, 22)(ansi(31, 39)(s)),
  note: ansi(36, 39),
};

/**
 * Renders any error as the CLI and the REPL print it.
 * @example
 * renderError(error) // for parse('from courses where subject = limit 5'):
 * // error[UNEXPECTED_TOKEN]: expected a value after "=", found "limit"
 * //  --> 1:30
 * //   |
 * // 1 | from courses where subject = limit 5
 * //   |                              ^^^^^
 * //   = hint: a value spelled like a keyword must be quoted: "limit"
 */
export function renderError(error: unknown, options: RenderOptions = {}): string {
  const paint = options.color ? colorPaint : noPaint;
  if (error instanceof QueryError) return renderQueryError(error, error.source ?? options.source, paint, options.origin);
  if (error instanceof DatastoreError) return renderDatastoreError(error, paint);
  if (error instanceof ToolError) return renderToolError(error, paint);
  return renderOther(error, paint);
}

function header(code: string | undefined, message: string, paint: Paint): string {
  const label = code === undefined ? 'error' : `error[${code}]`;
  return `${paint.error(label)}${paint.bold(`: ${message}`)}`;
}

function noteLine(indent: number, name: string, text: string, paint: Paint): string {
  return `${' '.repeat(indent)}${paint.gutter('=')} ${paint.note(`${name}:`)} ${text}`;
}

function causeOf(error: Error): string | undefined {
  const cause = (error as { cause?: unknown }).cause;
  if (cause instanceof Error) return cause.message || cause.name;
  return typeof cause === 'string' ? cause : undefined;
}

// ---------------------------------------------------------------------------
// Query errors: the excerpt with carets

/**
 * Where a span starts, in the words of an editor: 1-based line and column
 * (in code points). The line starts of the last source asked about are
 * kept, so the problems of one file (`ckql check` may report thousands)
 * cost a search each, not a scan from the file's start.
 */
export function lineAndColumn(source: string, offset: number): { line: number; column: number; lineStart: number } {
  const starts = lineStartsOf(source);
  const at = Math.min(Math.max(0, offset), source.length);
  // the last line that starts at or before the offset
  let low = 0;
  let high = starts.length - 1;
  while (low < high) {
    const middle = (low + high + 1) >> 1;
    if (starts[middle]! <= at) low = middle;
    else high = middle - 1;
  }
  const lineStart = starts[low]!;
  const column = [...source.slice(lineStart, offset)].length + 1;
  return { line: low + 1, column, lineStart };
}

let lastSource: string | undefined;
let lastStarts: readonly number[] = [0];

/** The offset each line starts at: after `\n`, or after a `\r` not followed by `\n` (the last source's, kept). */
export function lineStartsOf(source: string): readonly number[] {
  if (source === lastSource) return lastStarts;
  const starts = [0];
  for (let i = 0; i < source.length; i++) {
    const code = source.charCodeAt(i);
    if (code === 10 || (code === 13 && source.charCodeAt(i + 1) !== 10)) starts.push(i + 1);
  }
  lastSource = source;
  lastStarts = starts;
  return starts;
}

/** Longest stretch of a line shown around the span; a minified one-line query stays readable. */
const WINDOW = 160;

function visible(text: string): string {
  // Control characters and lone surrogates would move the terminal's cursor
  // or print nothing; one replacement character keeps the columns aligned.
  // eslint-disable-next-line no-control-regex
  return text.replace(/[\u0000-\u0008\u000b-\u001f\u007f]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, '\ufffd');
}

/** Spaces as wide as `text` on a terminal, tabs kept so the caret lines up under them. */
function blankLike(text: string): string {
  return text
    .split('\t')
    .map((part) => ' '.repeat(stringWidth(part)))
    .join('\t');
}

function renderQueryError(error: QueryError, source: string | undefined, paint: Paint, origin?: RenderOptions['origin']): string {
  const lines = [header(error.code, error.message, paint)];
  const place = origin === undefined ? '' : `${origin.file}${origin.line === undefined ? '' : `:${origin.line}`}, ${origin.key}`;
  if (origin !== undefined && source === undefined) lines.push(` ${paint.gutter('-->')} ${place}`);
  if (source === undefined) {
    if (error.hint) lines.push(noteLine(1, 'hint', error.hint, paint));
    return lines.join('\n');
  }
  const span = clampSpan(error.span, source.length);
  const { line, column, lineStart } = lineAndColumn(source, span.start);
  let lineEnd = source.slice(lineStart).search(/\r|\n/);
  lineEnd = lineEnd < 0 ? source.length : lineStart + lineEnd;

  // The part of the line to show, and the span's part of it.
  let from = lineStart;
  let to = lineEnd;
  if (to - from > WINDOW) {
    from = Math.max(lineStart, span.start - WINDOW / 2);
    to = Math.min(lineEnd, from + WINDOW);
  }
  const before = visible(source.slice(from, span.start));
  const under = visible(source.slice(span.start, Math.min(span.end, to)));
  const shown = `${from > lineStart ? '…' : ''}${visible(source.slice(from, to))}${to < lineEnd ? '…' : ''}`;
  const lead = from > lineStart ? '…' : '';

  const number = String(line);
  const pad = ' '.repeat(number.length);
  const bar = paint.gutter('|');
  lines.push(`${pad}${paint.gutter('-->')} ${origin === undefined ? `${line}:${column}` : `${place}, at ${line}:${column} of the query`}`);
  lines.push(`${pad} ${bar}`);
  lines.push(`${paint.gutter(`${number} |`)} ${shown}`);
  lines.push(`${pad} ${bar} ${blankLike(lead + before)}${paint.caret('^'.repeat(Math.max(1, stringWidth(under))))}`);
  if (error.hint) lines.push(noteLine(number.length + 1, 'hint', error.hint, paint));
  return lines.join('\n');
}

function clampSpan(span: Span, length: number): Span {
  const start = Math.min(Math.max(0, span.start), length);
  return { start, end: Math.min(Math.max(start, span.end), length) };
}

// ---------------------------------------------------------------------------
// Datastore, tool and other errors

/** The server's own words from an error body, one per line, without repeating `already`. */
function serverMessages(body: DatastoreError['body'], already: string): string[] {
  if (body === undefined) return [];
  if (typeof body === 'string') {
    const text = body.trim();
    return text === '' || text === already ? [] : [text.length > 500 ? `${text.slice(0, 500)}…` : text];
  }
  const out: string[] = [];
  for (const [key, value] of Object.entries(body)) {
    if (key === '__type') continue;
    const text =
      key === 'message'
        ? String(value)
        : `${key}: ${Array.isArray(value) ? value.map((v) => (typeof v === 'string' ? v : JSON.stringify(v))).join('; ') : JSON.stringify(value)}`;
    if (text !== already) out.push(text);
  }
  return out;
}

function renderDatastoreError(error: DatastoreError, paint: Paint): string {
  const lines = [header(error.code, error.message, paint)];
  const type = typeof error.body === 'object' ? error.body.__type : undefined;
  if (error.status !== undefined || type !== undefined) {
    lines.push(noteLine(2, 'status', [error.status, type && `(${type})`].filter(Boolean).join(' '), paint));
  }
  for (const message of serverMessages(error.body, error.message)) lines.push(noteLine(2, 'server', message, paint));
  const cause = causeOf(error);
  if (cause) lines.push(noteLine(2, 'cause', cause, paint));
  return lines.join('\n');
}

function renderToolError(error: ToolError, paint: Paint): string {
  const lines = [header(error.code, error.message, paint)];
  if (error.file !== undefined) {
    lines.push(` ${paint.gutter('-->')} ${error.file}${error.line === undefined ? '' : `:${error.line}`}`);
  }
  if (error.key !== undefined) lines.push(noteLine(2, 'key', error.key, paint));
  if (error.hint !== undefined) lines.push(noteLine(2, 'hint', error.hint, paint));
  const cause = causeOf(error);
  if (cause) lines.push(noteLine(2, 'cause', cause, paint));
  return lines.join('\n');
}

function renderOther(error: unknown, paint: Paint): string {
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    const lines = [header(typeof code === 'string' ? code : undefined, error.message || error.name, paint)];
    const cause = causeOf(error);
    if (cause) lines.push(noteLine(2, 'cause', cause, paint));
    return lines.join('\n');
  }
  return header(undefined, typeof error === 'string' ? error : safeString(error), paint);
}

function safeString(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

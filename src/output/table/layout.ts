/**
 * How a result fits a terminal: the text of each cell, column widths, and
 * whether rows are shown as a table or, when they cannot fit, one record at a
 * time (psql's expanded view). Pure functions over strings; the ink views in
 * `views/` only draw what is decided here.
 *
 * Widths are terminal columns measured with string-width, so CJK titles and
 * accented names line up; text is cut at grapheme boundaries.
 */
import stringWidth from 'string-width';
import type { FieldInfo, JsonValue, ReadSummary } from '../../datastore/types.js';
import { isNumberType } from '../../datastore/values.js';
import { escapeInvisible, stringifyJson } from '../safe-text.js';

export type CellKind = 'null' | 'number' | 'boolean' | 'text' | 'json';

export interface Cell {
  /** one line, safe to print: control characters replaced */
  readonly text: string;
  readonly kind: CellKind;
}

const segmenter = new Intl.Segmenter('en', { granularity: 'grapheme' });

/**
 * Control characters in data must not reach the terminal (an ESC could
 * restyle or move the cursor), and a line break would break the row: they
 * become visible symbols.
 */
function sanitize(text: string): string {
  // eslint-disable-next-line no-control-regex
  return escapeInvisible(text).replace(/\r\n|[\u0000-\u001f\u007f-\u009f]/g, (char) => {
    if (char === '\r\n' || char === '\n' || char === '\r') return '↵';
    if (char === '\t') return ' ';
    const code = char.charCodeAt(0);
    if (code < 0x20) return String.fromCharCode(0x2400 + code);
    return code === 0x7f ? '␡' : '\ufffd';
  });
}

/**
 * How null shows in a table: `null`, dimmed, with colour; `∅` without, so
 * that a null and the text "null" never look alike.
 */
export function nullText(color: boolean): string {
  return color ? 'null' : '∅';
}

/**
 * A record value as a table cell.
 * @example cellOf(null) // { text: 'null', kind: 'null' }
 * @example cellOf(null, '∅') // { text: '∅', kind: 'null' }
 * @example cellOf('a\nb') // { text: 'a↵b', kind: 'text' }
 */
export function cellOf(value: JsonValue | undefined, nullAs = 'null'): Cell {
  if (value === null || value === undefined) return { text: nullAs, kind: 'null' };
  if (typeof value === 'number') return { text: Object.is(value, -0) ? '0' : String(value), kind: 'number' };
  if (typeof value === 'boolean') return { text: String(value), kind: 'boolean' };
  if (typeof value === 'string') return { text: sanitize(value), kind: 'text' };
  return { text: sanitize(stringifyJson(value)), kind: 'json' };
}

/** Printable ASCII only: one column per character, no need to ask string-width. */
const printableAscii = /^[\x20-\x7e]*$/;

/** Terminal columns a string takes. */
export function widthOf(text: string): number {
  return printableAscii.test(text) ? text.length : stringWidth(text);
}

/**
 * Cuts `text` to at most `width` columns, ending in `…` when something was
 * cut; never splits a grapheme (an accent or a wide character stays whole).
 * @example truncate('Linear Algebra II', 10) // 'Linear Al…'
 */
export function truncate(text: string, width: number): string {
  if (width <= 0) return '';
  if (widthOf(text) <= width) return text;
  let out = '';
  let used = 0;
  for (const { segment } of segmenter.segment(text)) {
    const w = widthOf(segment);
    if (used + w > width - 1) break;
    out += segment;
    used += w;
  }
  return `${out}…`;
}

/** Pads (or cuts) `text` to exactly `width` columns. */
export function fit(text: string, width: number, align: 'left' | 'right'): string {
  const cut = truncate(text, width);
  const pad = ' '.repeat(Math.max(0, width - widthOf(cut)));
  return align === 'right' ? pad + cut : cut + pad;
}

export interface Column {
  readonly id: string;
  readonly width: number;
  readonly align: 'left' | 'right';
}

export type Layout =
  | { readonly kind: 'table'; readonly columns: readonly Column[] }
  | { readonly kind: 'vertical'; readonly labelWidth: number; readonly valueWidth: number };

/** The left margin and the ` │ ` between columns. */
export const tableMargin = 1;
export const columnGap = 3;
/** Below this a text column is not worth showing; the vertical view is used instead. */
const minTextWidth = 6;

function isNumeric(field: FieldInfo): boolean {
  return isNumberType(field.type);
}

/**
 * Column widths that fit `width`: natural widths when they fit; otherwise
 * the widest columns shrink first (numbers keep their width, so a number is
 * never cut); and when even the narrowest table would not fit, the vertical
 * view.
 * @example layoutTable([{ id: 'title', type: 'text' }], [[{ text: 'Optics', kind: 'text' }]], 80)
 * // { kind: 'table', columns: [{ id: 'title', width: 6, align: 'left' }] }
 */
export function layoutTable(fields: readonly FieldInfo[], rows: readonly (readonly Cell[])[], width: number): Layout {
  const natural = fields.map((field, i) =>
    rows.reduce((max, row) => Math.max(max, widthOf(row[i]?.text ?? '')), widthOf(field.id)),
  );
  const minimum = fields.map((field, i) => {
    const own = natural[i] ?? 0;
    return isNumeric(field) ? own : Math.min(own, Math.max(minTextWidth, Math.min(widthOf(field.id), 12)));
  });
  const overhead = tableMargin + columnGap * Math.max(0, fields.length - 1);
  const sum = (widths: readonly number[]): number => widths.reduce((a, b) => a + b, 0);
  const columns = (widths: readonly number[]): Layout => ({
    kind: 'table',
    columns: fields.map((field, i) => ({
      id: field.id,
      width: widths[i] ?? 0,
      align: isNumeric(field) ? 'right' : 'left',
    })),
  });

  if (sum(natural) + overhead <= width) return columns(natural);
  if (sum(minimum) + overhead > width) return verticalLayout(fields, width);

  // Water-filling: the largest cap that fits, so wide columns give up width first.
  const available = width - overhead;
  const capped = (cap: number): number[] => natural.map((n, i) => Math.min(n, Math.max(minimum[i] ?? 0, cap)));
  let low = 0;
  let high = Math.max(...natural);
  while (low < high) {
    const mid = Math.ceil((low + high) / 2);
    if (sum(capped(mid)) <= available) low = mid;
    else high = mid - 1;
  }
  const widths = capped(low);
  // Hand the columns left over by rounding to the ones that were cut, left to right.
  let spare = available - sum(widths);
  for (let i = 0; i < widths.length && spare > 0; i += 1) {
    const want = (natural[i] ?? 0) - (widths[i] ?? 0);
    const give = Math.min(want, spare);
    widths[i] = (widths[i] ?? 0) + give;
    spare -= give;
  }
  return columns(widths);
}

function verticalLayout(fields: readonly FieldInfo[], width: number): Layout {
  const longest = fields.reduce((max, field) => Math.max(max, widthOf(field.id)), 0);
  const labelWidth = Math.max(1, Math.min(longest, Math.floor(width / 3)));
  return { kind: 'vertical', labelWidth, valueWidth: Math.max(1, width - labelWidth - columnGap) };
}

/** What a table's rows are, singular and plural, for its footer: `3 resources`. */
export interface Noun {
  readonly one: string;
  readonly many: string;
}

const RECORDS: Noun = { one: 'record', many: 'records' };

/**
 * The footer under a result: `20 of 318 records, 12 ms`. A plan that stopped
 * at its limit without counting the rest says so, and what it read:
 * `3 records, more match (read 1000 in 1 request), 40 ms`.
 * @example footerText({ returned: 5, total: 318, elapsedMs: 3.2 }) // '5 of 318 records, 3.2 ms'
 * @example footerText({ returned: 3, read: { requests: 1, records: 1000, more: true } }) // '3 records, more match (read 1000 in 1 request)'
 */
export function footerText(summary: {
  readonly returned: number;
  /** what the rows are, when not records (a listing of fields, resources, queries) */
  readonly noun?: Noun | undefined;
  readonly total?: number | undefined;
  readonly shown?: number | undefined;
  readonly offset?: number | undefined;
  readonly elapsedMs?: number | undefined;
  readonly read?: ReadSummary | undefined;
}): string {
  const { returned, total, shown, offset, elapsedMs, read } = summary;
  const { one, many } = summary.noun ?? RECORDS;
  const noun = (total ?? returned) === 1 ? one : many;
  let text = total === undefined ? `${returned} ${noun}` : `${returned} of ${total} ${noun}`;
  if (offset !== undefined && offset > 0) text += ` from offset ${offset}`;
  if (total === undefined && read !== undefined && read.requests > 0) {
    const how = `read ${read.records} in ${read.requests} request${read.requests === 1 ? '' : 's'}`;
    text += read.more === true ? `, more match (${how})` : read.more === false ? ` (${how})` : `, more may match (${how})`;
  }
  if (shown !== undefined && shown < returned) text += `, ${shown} shown`;
  if (elapsedMs !== undefined) text += `, ${formatMs(elapsedMs)}`;
  return text;
}

/** `0.4 ms`, `12 ms`, `1.5 s` */
export function formatMs(ms: number): string {
  if (ms < 10) return `${(Math.round(ms * 10) / 10).toFixed(1)} ms`;
  if (ms < 10_000) return `${Math.round(ms)} ms`;
  return `${(ms / 1000).toFixed(1)} s`;
}

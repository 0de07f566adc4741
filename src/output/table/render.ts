/**
 * Renders a search result as text for a terminal, through ink's
 * `renderToString`: the REPL prints it, and `--format table` uses it too.
 * Lives behind `ckql/repl` (ink cannot be `require`d, so the package root
 * never imports this file).
 */
import { createElement } from 'react';
import { renderToString } from 'ink';
import type { SearchResult } from '../../datastore/types.js';
import { cellOf, footerText, layoutTable, nullText, tableMargin, columnGap, widthOf, type Layout, type Noun } from './layout.js';
import { ownValue } from '../safe-text.js';
import { InfoTable } from './views/InfoTable.js';
import { ResultView } from './views/ResultView.js';

export interface RenderResultOptions {
  /** terminal columns; `Infinity` for no limit (every value shown whole) */
  readonly width: number;
  readonly color: boolean;
  /** shown in the footer when given */
  readonly elapsedMs?: number;
  /** draw at most this many records; the footer says how many were left out */
  readonly maxRows?: number;
  /** records the source returned, when `result.records` holds only the first of them (a capped stream) */
  readonly returned?: number;
  /** a line under the footer, such as why not every record is drawn */
  readonly note?: string;
  /** what the rows are, when not records: the footer says `7 fields` */
  readonly noun?: Noun;
}

/**
 * The records of `result` as a table sized to `width` (long values cut with
 * `…`; one record at a time when rows cannot fit), with a footer
 * `N of TOTAL records, M ms`. No trailing newline.
 * @example
 * renderResultTable(await client.search('from courses select code, title limit 2'), { width: 80, color: false })
 * //  code     │ title
 * // ──────────┼──────────────────
 * //  COMP-201 │ Operating Systems
 * //  CHEM-201 │ Analytical Chemistry
 * // 2 of 318 records
 */
export function renderResultTable(result: SearchResult, options: RenderResultOptions): string {
  const width = Number.isNaN(options.width) || options.width < 1 ? 80 : options.width;
  const shown = options.maxRows === undefined ? result.records : result.records.slice(0, Math.max(0, options.maxRows));
  const fields = result.fields;
  const nullAs = nullText(options.color);
  const rows = shown.map((record) => fields.map((field) => cellOf(ownValue(record, field.id), nullAs)));
  const layout = layoutTable(fields, rows, width);
  const returned = options.returned ?? result.records.length;
  const footer = footerText({
    returned,
    noun: options.noun,
    total: result.total,
    shown: shown.length,
    offset: result.offset,
    elapsedMs: options.elapsedMs,
    read: result.read,
  });
  const element = createElement(ResultView, {
    fields,
    rows,
    layout,
    hidden: returned - shown.length,
    firstNumber: (result.offset ?? 0) + 1,
    footer: options.note === undefined ? footer : `${footer}\n${options.note}`,
    color: options.color,
  });
  return renderToString(element, { columns: inkColumns(layout, width, options.note === undefined ? footer : `${footer}  ${options.note}`) });
}

/**
 * ink wraps at `columns`: give it exactly the room the layout uses (finite
 * even when the caller asked for no limit), and never less than the footer.
 */
function inkColumns(layout: Layout, width: number, footer: string): number {
  const used =
    layout.kind === 'table'
      ? tableMargin + layout.columns.reduce((sum, c) => sum + c.width, 0) + columnGap * Math.max(0, layout.columns.length - 1)
      : layout.labelWidth + columnGap + layout.valueWidth;
  return Math.max(used, widthOf(footer), 1) + 1;
}

export interface InfoTableOptions {
  readonly width: number;
  readonly color: boolean;
  /** a line under the table */
  readonly note?: string | undefined;
  /** indexes of columns to right-align */
  readonly numeric?: readonly number[];
}

/**
 * A small table of text (the REPL's `.fields`, `.resources`, `.help`), with
 * the same layout rules as results: cut with `…` to fit `width`.
 * @example renderInfoTable(['field', 'type'], [['code', 'text']], { width: 80, color: false })
 */
export function renderInfoTable(headers: readonly string[], rows: readonly (readonly string[])[], options: InfoTableOptions): string {
  const width = Number.isNaN(options.width) || options.width < 1 ? 80 : options.width;
  const fields = headers.map((id, i) => ({ id, type: options.numeric?.includes(i) === true ? ('int' as const) : ('text' as const) }));
  const cells = rows.map((row) => headers.map((_, i) => ({ text: cellOf(row[i] ?? '').text, kind: 'text' as const })));
  let layout = layoutTable(fields, cells, width);
  if (layout.kind === 'vertical') {
    // Too narrow even for cut columns: give each column an equal share.
    const share = Math.max(1, Math.floor((width - tableMargin - columnGap * (headers.length - 1)) / headers.length));
    layout = { kind: 'table', columns: fields.map((f) => ({ id: f.id, width: share, align: 'left' })) };
  }
  const note = options.note ?? '';
  const element = createElement(InfoTable, { layout, rows: cells, note, color: options.color });
  return renderToString(element, { columns: inkColumns(layout, width, note) });
}

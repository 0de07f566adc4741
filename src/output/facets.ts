/**
 * Facets as people read them (docs/aggregates.md, Output): a small table per
 * faceted field, its values by count with a bar of `█` each, so the shape
 * of the data is seen at a glance; the same as Markdown tables.
 */
import type { FacetResult, Facets } from '../datastore/types.js';
import { cellOf, fit, nullText, widthOf } from './table/layout.js';
import { paintFor } from './table/paint.js';

/** Options of `renderFacets`. */
export interface FacetTextOptions {
  readonly color?: boolean;
  /** terminal columns; default 80 */
  readonly width?: number;
}

/** The widest a bar is drawn; the most common value gets it, the others their share. */
const MAX_BAR = 40;
/** Eighths of a block, for the end of a bar: a count a little above another shows a little longer. */
const EIGHTHS = ['', '▏', '▎', '▍', '▌', '▋', '▊', '▉'];

/**
 * Every facet as a small table, one after another.
 * @example
 * renderFacets({ subject: { field: 'subject', values: [{ value: 'math', count: 6 }, { value: 'art', count: 3 }], null_count: 0, more: false } })
 * // facet subject: 2 values
 * //  value │ count │
 * //  math  │     6 │ ████████████████████████████████████████
 * //  art   │     3 │ ████████████████████
 */
export function renderFacets(facets: Facets, options: FacetTextOptions = {}): string {
  return Object.entries(facets).map(([name, facet]) => renderFacet(name, facet, options)).join('\n');
}

function renderFacet(name: string, facet: FacetResult, options: FacetTextOptions): string {
  const paint = paintFor(options.color === true);
  const rows = facet.values.map((v) => ({ value: cellOf(v.value, nullText(options.color === true)).text, count: v.count }));
  if (facet.null_count > 0) rows.push({ value: nullText(options.color === true), count: facet.null_count });
  const valueWidth = Math.max(widthOf('value'), ...rows.map((row) => widthOf(row.value)));
  const countWidth = Math.max(widthOf('count'), ...rows.map((row) => String(row.count).length));
  // ` value │ count │ bar`: the bar gets what the terminal leaves (at least 10 columns), a long value is cut.
  const width = options.width ?? 80;
  const barWidth = Math.min(MAX_BAR, Math.max(10, width - valueWidth - countWidth - 7));
  const shownValue = Math.min(valueWidth, Math.max(5, width - countWidth - 7 - barWidth));
  const most = Math.max(1, ...rows.map((row) => row.count));
  const count = facet.values.length;
  const title = [
    `facet ${name}${facet.by === undefined ? '' : ` by ${facet.by}`}: ${count} value${count === 1 ? '' : 's'}`,
    facet.more ? ', the most common first; more exist (raise top to see them)' : '',
    facet.null_count > 0 ? `, ${facet.null_count} without a value` : '',
  ].join('');
  const lines = [paint.bold(title), ` ${paint.bold(fit('value', shownValue, 'left'))} │ ${paint.bold(fit('count', countWidth, 'right'))} │`];
  for (const row of rows) {
    lines.push(` ${fit(row.value, shownValue, 'left')} │ ${fit(String(row.count), countWidth, 'right')} │ ${bar(row.count / most, barWidth)}`.trimEnd());
  }
  return `${lines.join('\n')}\n`;
}

/**
 * A bar `share` (0 to 1) of `width` columns long, in eighths of a block;
 * any count above zero shows at least a sliver.
 * @example bar(0.5, 8) // '████'
 */
export function bar(share: number, width: number): string {
  const eighths = Math.round(share * width * 8);
  const whole = Math.floor(eighths / 8);
  const rest = EIGHTHS[eighths % 8]!;
  const text = '█'.repeat(whole) + rest;
  return text === '' && share > 0 ? '▏' : text;
}

/** Every facet as a Markdown table (value, count), under a heading line each. */
export function facetsMarkdown(facets: Facets): string {
  return Object.entries(facets).map(([name, facet]) => {
    const escape = (text: string): string => text.replaceAll('|', '\\|');
    const rows = facet.values.map((v) => `| ${escape(cellOf(v.value, 'null').text)} | ${v.count} |`);
    if (facet.null_count > 0) rows.push(`| *null* | ${facet.null_count} |`);
    const more = facet.more ? ' (more values not shown)' : '';
    return `\n**facet ${escape(name)}${facet.by === undefined ? '' : ` by ${facet.by}`}**${more}\n\n| value | count |\n| --- | ---: |\n${rows.join('\n')}\n`;
  }).join('');
}

/**
 * The results: a native table (caption with the query, "rows N–M of total"
 * and the time; a header row that stays in view; numbers right-aligned; null
 * written as the word), a bar view for grouped results (a label column and
 * one number column), and a field's value counts as bars. Bars are a table
 * too, so they read the same without the picture.
 */
import { isNumberType } from '../../src/datastore/values.js';
import type { FacetAnswer, FieldEntry, QueryAnswer } from '../../src/server/play-protocol.js';
import { fill, h } from './dom.js';

/** A cell's text: strings as they are, other values as JSON; `null` for null (shown in italics, never as blank). */
export function cellText(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'string') return value;
  return JSON.stringify(value) ?? String(value);
}

/** How a result is described: `rows 1–100 of 320`. */
export function rowsText(answer: Pick<QueryAnswer, 'start' | 'size' | 'records'>): string {
  const count = answer.records.length;
  const of = answer.size === undefined ? '' : ` of ${answer.size}`;
  if (count === 0) return answer.size === undefined ? 'no rows' : `no rows on this page${of}`;
  return `rows ${answer.start + 1}–${answer.start + count}${of}`;
}

export interface TableOptions {
  readonly query: string;
  /** the query's order, for `aria-sort` */
  readonly order?: readonly { readonly field: string; readonly direction: 'asc' | 'desc' }[];
  /** asked when a column's "count values" button is pressed */
  readonly onFacet?: (field: string) => void;
}

/** The result as a table; numbers right-aligned, nulls as the word. */
export function resultTable(answer: QueryAnswer, options: TableOptions): HTMLTableElement {
  const numbers = answer.fields.map((field) => isNumberType(field.type));
  const caption = h(
    'caption',
    {},
    h('code', { class: 'caption-query' }, options.query.trim()),
    h('span', { class: 'caption-rows' }, `${rowsText(answer)} · ${answer.elapsedMs} ms · ${answer.target}`),
  );
  const head = h(
    'tr',
    {},
    ...answer.fields.map((field, k) => {
      const sorted = options.order?.find((key) => key.field === field.id);
      return h(
        'th',
        {
          scope: 'col',
          class: numbers[k] === true ? 'num' : undefined,
          'aria-sort': sorted === undefined ? undefined : sorted.direction === 'asc' ? 'ascending' : 'descending',
        },
        h('span', { class: 'field-name' }, field.id),
        h('span', { class: 'field-type' }, field.type),
        options.onFacet === undefined || field.id === '_id'
          ? undefined
          : facetButton(field, options.onFacet),
      );
    }),
  );
  const body = h('tbody', {});
  for (const record of answer.records) {
    body.append(
      h(
        'tr',
        {},
        ...answer.fields.map((field, k) => {
          const value = Object.hasOwn(record, field.id) ? record[field.id] : null;
          const classes = [numbers[k] === true ? 'num' : '', value === null || value === undefined ? 'null' : ''].filter((c) => c !== '').join(' ');
          return h('td', { class: classes === '' ? undefined : classes }, cellText(value));
        }),
      ),
    );
  }
  return h('table', { class: 'records' }, caption, h('thead', {}, head), body);
}

function facetButton(field: FieldEntry, onFacet: (field: string) => void): HTMLButtonElement {
  const button = h('button', { type: 'button', class: 'facet-button', 'aria-label': `Count the values of ${field.id}` }, 'count');
  button.addEventListener('click', () => onFacet(field.id));
  return button;
}

/** Whether a result reads as grouped: one number column and one or more label columns. */
export function barColumns(fields: readonly FieldEntry[]): { labels: string[]; value: string } | undefined {
  const shown = fields.filter((field) => field.id !== '_id');
  const numbers = shown.filter((field) => isNumberType(field.type));
  if (numbers.length !== 1 || shown.length < 2) return undefined;
  return { labels: shown.filter((field) => !isNumberType(field.type)).map((field) => field.id), value: numbers[0]!.id };
}

/** Rows of label, value and a bar as long as the value is against the largest. */
export function barTable(caption: string, rows: readonly { readonly label: string; readonly value: number }[], valueName: string, labelName: string): HTMLTableElement {
  const largest = Math.max(0, ...rows.map((row) => Math.abs(row.value)));
  const body = h('tbody', {});
  for (const row of rows) {
    const bar = h('span', { class: 'bar', 'aria-hidden': 'true' });
    // A share of the largest, set through the style object (allowed by the page's policy, unlike a style attribute).
    bar.style.width = `${largest === 0 ? 0 : (Math.abs(row.value) / largest) * 100}%`;
    body.append(h('tr', {}, h('th', { scope: 'row' }, row.label), h('td', { class: 'num' }, String(row.value)), h('td', { class: 'bar-cell' }, bar)));
  }
  return h(
    'table',
    { class: 'bars' },
    h('caption', {}, caption),
    h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, labelName), h('th', { scope: 'col', class: 'num' }, valueName), h('th', { scope: 'col' }, h('span', { class: 'visually-hidden' }, 'bar')))),
    body,
  );
}

/** The result's rows as bars (grouped results). */
export function resultBars(answer: QueryAnswer, query: string): HTMLTableElement | undefined {
  const columns = barColumns(answer.fields);
  if (columns === undefined) return undefined;
  const rows = answer.records.map((record) => ({
    label: columns.labels.map((name) => cellText(record[name])).join(' · '),
    value: Number(record[columns.value] ?? 0),
  }));
  return barTable(`${query.trim()} — ${rowsText(answer)}`, rows, columns.value, columns.labels.join(' · '));
}

/** A field's value counts as bars, with a button to close them. */
export function facetView(target: HTMLElement, facet: FacetAnswer, onClose: () => void): void {
  const total = facet.total === undefined ? '' : ` among ${facet.total} matching records`;
  const more = facet.more ? ` (the ${facet.values.length} values counted; there are more)` : '';
  const close = h('button', { type: 'button' }, `Close the counts of ${facet.field}`);
  close.addEventListener('click', onClose);
  fill(
    target,
    barTable(`Values of ${facet.field}${total}${more}`, facet.values.map((each) => ({ label: cellText(each.value), value: each.count })), 'records', facet.field),
    close,
  );
  target.hidden = false;
}

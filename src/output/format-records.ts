/**
 * Records as text, in the formats every record-printing command offers:
 * `table` (the REPL's ink view), `json`, `ndjson`, `csv` and `markdown`.
 *
 * Two entry points share one implementation: `formatRecords` for one result
 * (the REPL, `ckql query`), and `createRecordWriter` for a stream of records
 * (`ckql query --all`), which writes as records arrive so any result size
 * stays in constant memory. A table must see its rows to size its columns,
 * so it draws the first `tableRowLimit` and counts the rest.
 *
 * Only a record's own properties are read (a field named `constructor` is a
 * field), and values nested deeper than the call stack still print.
 */
import { stringify } from 'csv-stringify/sync';
import { LosslessNumber, stringify as stringifyLossless } from 'lossless-json';
import { toolError } from '../errors.js';
import type { FieldInfo, Row, SearchResult } from '../datastore/types.js';
import { floatText } from '../datastore/number-text.js';
import { isNumberType } from '../datastore/values.js';
import { cellText } from './cell-text.js';
import { escapeInvisible, ownValue, stringifyJson } from './safe-text.js';
import { facetsMarkdown, renderFacets } from './facets.js';
import type { Noun } from './table/layout.js';

export const outputFormats = ['table', 'json', 'ndjson', 'csv', 'markdown'] as const;
export type OutputFormat = (typeof outputFormats)[number];

export interface FormatOptions {
  /** colour in the table view (decided once by the caller: TTY and `NO_COLOR`) */
  readonly color?: boolean;
  /** terminal columns for the table view; default 80 */
  readonly width?: number;
  /** shown in the table footer */
  readonly elapsedMs?: number;
  /** the table shows at most this many rows */
  readonly maxRows?: number;
  /** json: indent records (for a person at a terminal) instead of one record per line */
  readonly pretty?: boolean;
  /**
   * csv: prefix text starting with `=`, `+`, `-`, `@`, tab or CR with `'`, so
   * a spreadsheet never runs it as a formula (default true). Off keeps such
   * text as it is (`+4712345678`), for files no spreadsheet opens.
   */
  readonly escapeFormulas?: boolean;
  /** table: a line under the footer (why a result was cut short) */
  readonly note?: string;
  /** table: what the rows are, when not records (`7 fields`, `3 resources`) */
  readonly noun?: Noun;
}

/**
 * The most records a table draws (the rest are counted in the footer): a
 * terminal shows far fewer, and drawing 32,000 rows takes seconds and
 * holds them all in memory. csv, ndjson and json print every record.
 */
export const tableRowLimit = 500;

/** Receives output text in order; may return a promise to apply backpressure. */
export type TextSink = (text: string) => void | Promise<void>;

export interface RecordWriter {
  write(row: Row): Promise<void>;
  /** `total` and `elapsedMs` go into the table footer */
  end(summary?: { readonly total?: number; readonly elapsedMs?: number }): Promise<void>;
}

/**
 * Reads a `--format` value; anything else is a usage error that lists the choices.
 * @example parseOutputFormat('CSV') // 'csv'
 */
export function parseOutputFormat(text: string): OutputFormat {
  const lower = text.toLowerCase();
  const aliases: Record<string, OutputFormat> = { jsonl: 'ndjson', md: 'markdown' };
  const found = (outputFormats as readonly string[]).includes(lower) ? (lower as OutputFormat) : aliases[lower];
  if (found === undefined) {
    throw toolError('USAGE', [`unknown output format ${JSON.stringify(text)}; use one of ${outputFormats.join(', ')}`]);
  }
  return found;
}

/**
 * The records of one result as text, ending in a newline (empty csv/markdown
 * results still print their header).
 * @example
 * await formatRecords(await client.search('from courses limit 2'), 'csv')
 * // "_id,subject,stage\n1,math,active\n2,art,survey\n"
 */
export async function formatRecords(
  result: SearchResult,
  format: OutputFormat,
  options: FormatOptions = {},
): Promise<string> {
  const facets = result.facets;
  if (format === 'table') {
    const floats = floatColumns(result.fields);
    const shown = floats.length === 0 ? result : { ...result, records: result.records.map((row) => withFloatTexts(row, floats)) };
    const table = await renderTable(shown, { maxRows: tableRowLimit, ...options });
    return facets === undefined ? table : `${table}\n${renderFacets(facets, options)}`;
  }
  const parts: string[] = [];
  const writer = createRecordWriter(format, result.fields, (text) => void parts.push(text), options);
  for (const row of result.records) await writer.write(row);
  await writer.end();
  const records = parts.join('');
  if (facets === undefined) return records;
  // json: one object, the records beside their facets; markdown: a table per facet after the records.
  // csv and ndjson hold records only: their callers show facets apart (facetsText).
  if (format === 'json') return `{"records": ${records.trimEnd()},\n"facets": ${options.pretty === true ? prettyJson(facets) : stringifyJson(facets)}}\n`;
  if (format === 'markdown') return records + facetsMarkdown(facets);
  return records;
}

/**
 * The facets of a result in a format whose records cannot hold them (csv,
 * ndjson): the tables a terminal shows, for stderr; `undefined` for the
 * formats `formatRecords` writes them into, or when there are none.
 */
export function facetsText(result: Pick<SearchResult, 'facets'>, format: OutputFormat, options: FormatOptions = {}): string | undefined {
  if (result.facets === undefined || format === 'table' || format === 'json' || format === 'markdown') return undefined;
  return renderFacets(result.facets, options);
}

/**
 * A writer that prints records as they come; `fields` gives the column order
 * (csv header, markdown header, table columns).
 * @example
 * const writer = createRecordWriter('ndjson', result.fields, (t) => process.stdout.write(t));
 * for await (const row of client.searchAll('from courses')) await writer.write(row);
 * await writer.end();
 */
export function createRecordWriter(
  format: OutputFormat,
  fields: readonly FieldInfo[],
  sink: TextSink,
  options: FormatOptions = {},
): RecordWriter {
  const columns = fields.map((field) => field.id);
  const numberColumns = fields.filter((field) => isNumberType(field.type)).map((field) => field.id);
  const writer = formatWriter(format, fields, columns, numberColumns, sink, options);
  const floats = floatColumns(fields);
  return floats.length === 0 ? writer : { write: (row) => writer.write(withFloatTexts(row, floats)), end: (summary) => writer.end(summary) };
}

/** The float8 columns of a field list: their numbers print as PostgreSQL prints a float8. */
function floatColumns(fields: readonly FieldInfo[]): string[] {
  return fields.filter((field) => field.type === 'float8').map((field) => field.id);
}

/**
 * The row with each float8 number PostgreSQL writes otherwise than
 * JavaScript (`1e-07`, `2.5e+15`, `-0`) as that text, which every format
 * writes as a number; the row itself when it has none.
 */
function withFloatTexts(row: Row, floats: readonly string[]): Row {
  let out: Record<string, unknown> | undefined;
  for (const id of floats) {
    const value = ownValue(row, id);
    if (typeof value !== 'number') continue;
    const text = floatText(value);
    if (text !== String(value) && Number.isFinite(value)) (out ??= { ...row })[id] = text;
  }
  return (out ?? row) as Row;
}

function formatWriter(
  format: OutputFormat,
  fields: readonly FieldInfo[],
  columns: readonly string[],
  numberColumns: readonly string[],
  sink: TextSink,
  options: FormatOptions,
): RecordWriter {
  switch (format) {
    case 'ndjson':
      return {
        write: async (row) => sink(`${exactJson(row, numberColumns) ?? stringifyJson(row)}\n`),
        end: async () => undefined,
      };
    case 'json': {
      let count = 0;
      const render = (row: Row): string =>
        options.pretty === true
          ? `  ${(exactJson(row, numberColumns, 2) ?? prettyJson(row)).replaceAll('\n', '\n  ')}`
          : (exactJson(row, numberColumns) ?? stringifyJson(row));
      return {
        write: async (row) => {
          await sink(`${count === 0 ? '[\n' : ',\n'}${render(row)}`);
          count += 1;
        },
        end: async () => sink(count === 0 ? '[]\n' : '\n]\n'),
      };
    }
    case 'csv': {
      let headerDone = false;
      const header = async (): Promise<void> => {
        if (headerDone) return;
        headerDone = true;
        await sink(csvLine(columns, escapeFormulas));
      };
      const escapeFormulas = options.escapeFormulas !== false;
      return {
        write: async (row) => {
          await header();
          await sink(csvLine(columns.map((id, k) => exactCell(ownValue(row, id) ?? null, isNumberType((fields[k] as FieldInfo).type))), escapeFormulas));
        },
        end: header,
      };
    }
    case 'markdown': {
      let headerDone = false;
      const header = async (): Promise<void> => {
        if (headerDone) return;
        headerDone = true;
        const rule = fields.map((field) => (isNumberType(field.type) ? '---:' : '---'));
        await sink(`${markdownLine(columns)}${markdownLine(rule, false)}`);
      };
      return {
        write: async (row) => {
          await header();
          await sink(markdownLine(columns.map((id) => cellText(ownValue(row, id)))));
        },
        end: header,
      };
    }
    case 'table': {
      // Only the rows it will draw are kept; the others are counted, so a million records cost a counter.
      const limit = options.maxRows ?? tableRowLimit;
      const rows: Row[] = [];
      let count = 0;
      return {
        write: async (row) => {
          count += 1;
          if (rows.length < limit) rows.push(row);
        },
        end: async (summary = {}) => {
          const result: SearchResult = {
            resource_id: '',
            fields,
            records: rows,
            total: summary.total ?? count,
            total_was_estimated: false,
            limit: rows.length,
            include_total: true,
            records_format: 'objects',
          };
          const elapsedMs = summary.elapsedMs ?? options.elapsedMs;
          const note = count > rows.length ? `(a table draws ${limit} records; --format csv or ndjson prints all ${count})` : undefined;
          await sink(
            await renderTable(result, {
              ...options,
              maxRows: limit,
              returned: count,
              ...(elapsedMs === undefined ? {} : { elapsedMs }),
              ...(note === undefined ? {} : { note }),
            }),
          );
        },
      };
    }
  }
}

/**
 * One CSV line by RFC 4180 via csv-stringify, with spreadsheet formula
 * escaping: a text cell that starts with `=`, `+`, `-`, `@`, tab or CR gets a
 * leading `'`, so opening the file cannot run a formula. Numbers stay
 * numbers (`-3` is not escaped); booleans and JSON values become their text.
 */
function csvLine(cells: readonly unknown[], escapeFormulas = true): string {
  return stringify([cells], {
    escape_formulas: escapeFormulas,
    cast: {
      boolean: (value) => (value ? 'true' : 'false'),
      number: (value) => (Object.is(value, -0) ? '0' : String(value)),
      // a number column's exact text (`-7.50`) is a number: never formula-escaped
      object: (value) => (value instanceof LosslessNumber ? { value: value.value, escape_formulas: false } : stringifyJson(value)),
    },
  });
}

const JSON_NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;

/**
 * A row's JSON with the exact numbers of its number columns (integers beyond
 * 2^53, which the client keeps as their text) written as JSON numbers, digit
 * for digit; `undefined` when the row has none (the caller's plain path).
 */
function exactJson(row: Row, numberColumns: readonly string[], space?: number): string | undefined {
  let marked: Record<string, unknown> | undefined;
  for (const id of numberColumns) {
    const value = ownValue(row, id);
    if (typeof value === 'string' && JSON_NUMBER.test(value)) (marked ??= { ...row })[id] = new LosslessNumber(value);
  }
  if (marked === undefined) return undefined;
  try {
    return stringifyLossless(marked, null, space);
  } catch (error) {
    if (!(error instanceof RangeError)) throw error;
    // Nested too deep to write with its numbers bare: the digits, quoted.
    return undefined;
  }
}

/**
 * A CSV cell: the exact text of a number column (an integer past 2^53, a
 * numeric with its scale, `-7.50`, a float8's `-0`) goes out as a number,
 * as written and never formula-escaped.
 */
function exactCell(value: unknown, numberColumn: boolean): unknown {
  return numberColumn && typeof value === 'string' && JSON_NUMBER.test(value) ? new LosslessNumber(value) : value;
}

/** Indented JSON; a value too deep for the call stack is written on one line instead. */
function prettyJson(value: unknown): string {
  try {
    return JSON.stringify(value, null, 2);
  } catch (error) {
    if (!(error instanceof RangeError)) throw error;
    return stringifyJson(value);
  }
}

/**
 * A GitHub-flavoured Markdown table row; `|` is escaped, line breaks become
 * `<br>`, and bidi or invisible characters show as `\u202E`.
 */
function markdownLine(cells: readonly string[], escape = true): string {
  const text = escape
    ? cells.map((cell) =>
        escapeInvisible(cell).replaceAll('\\', '\\\\').replaceAll('|', '\\|').replace(/\r\n|\r|\n/g, '<br>'),
      )
    : cells;
  return `| ${text.join(' | ')} |\n`;
}

/** The ink table, loaded only when asked for, so other formats never load ink. */
async function renderTable(result: SearchResult, options: FormatOptions & { readonly returned?: number }): Promise<string> {
  const { renderResultTable } = await import('./table/render.js');
  const text = renderResultTable(result, {
    width: options.width ?? 80,
    color: options.color ?? false,
    ...(options.elapsedMs === undefined ? {} : { elapsedMs: options.elapsedMs }),
    ...(options.maxRows === undefined ? {} : { maxRows: options.maxRows }),
    ...(options.returned === undefined ? {} : { returned: options.returned }),
    ...(options.note === undefined ? {} : { note: options.note }),
    ...(options.noun === undefined ? {} : { noun: options.noun }),
  });
  return text.endsWith('\n') ? text : `${text}\n`;
}

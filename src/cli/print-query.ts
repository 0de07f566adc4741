/**
 * Running one compiled request on a source and printing its records: shared
 * by `ckql query` and `ckql run`.
 */
import { performance } from 'node:perf_hooks';
import type { Query } from '../ast.js';
import type { SearchRequest, SearchResult } from '../datastore/types.js';
import { DatastoreError } from '../errors.js';
import { createRecordWriter, facetsText, formatRecords } from '../output/format-records.js';
import { renderFacets } from '../output/facets.js';
import type { OutputFormat } from '../output/format-records.js';
import type { CliContext } from './context.js';
import { unknownFieldHint, unknownResourceHint } from '../session/field-hint.js';
import { refusalInQuery } from '../session/schema.js';
import type { ParamValue } from '../compile/bind.js';
import { interruptible } from './interrupt.js';
import { attachHint } from './report.js';
import type { Source } from '../session/source.js';

export interface PrintQueryOptions {
  readonly format: OutputFormat;
  /** every matching record, paging with `searchAll` */
  readonly all?: boolean;
  /** records per request with `all` */
  readonly pageSize?: number;
  /** csv: escape spreadsheet formulas (default true) */
  readonly escapeFormulas?: boolean;
  /** count every match even where ckql finishes the query itself (a plan reads past its limit to do so) */
  readonly total?: boolean;
  /**
   * the query: a local engine answers it whole; a portal's client runs it as
   * its plan (docs/executor.md) says, and `request` is the first request
   * that plan sends (for hints about unknown fields and resources)
   */
  readonly query?: Query;
  /** the query's text and its parameters: a source's refusal of an unknown field or resource is told at its place there */
  readonly text?: string;
  readonly params?: Readonly<Record<string, ParamValue>>;
}

/**
 * Prints the records of `request` to stdout. A source's refusal of a field
 * or resource the query's text names is thrown as the query error `ckql
 * check --schema` gives (at its place in the text); otherwise a Validation
 * Error or Not Found is thrown with a "did you mean" hint attached.
 */
export async function printQuery(
  context: CliContext,
  source: Source,
  request: SearchRequest,
  options: PrintQueryOptions,
): Promise<void> {
  const started = performance.now();
  const formatOptions = {
    color: context.color.stdout,
    width: context.width,
    pretty: context.stdout.isTTY === true,
    ...(options.escapeFormulas === false ? { escapeFormulas: false } : {}),
  };
  try {
    await interruptible(async (signal) => {
      const input = options.query ?? request;
      if (options.all !== true) {
        const result = await source.client.search(input, { signal, ...(options.total === true ? { total: true } : {}) });
        const elapsedMs = Math.round(performance.now() - started);
        // A plan's request carries no limit or offset: the query's own say what was asked.
        const limitValue = options.query?.limit?.value;
        const offsetValue = options.query?.offset?.value;
        const asked = options.query === undefined
          ? request
          : {
              ...request,
              ...(limitValue?.kind === 'number' ? { limit: limitValue.value } : {}),
              ...(offsetValue?.kind === 'number' ? { offset: offsetValue.value } : {}),
            };
        const shortBy = cutShort(asked, result);
        // At a terminal the table's footer says it; anywhere else stderr does, so `| wc -l` is not silently 100.
        const inFooter = options.format === 'table' && context.stdout.isTTY === true;
        await context.out(
          await formatRecords(result, options.format, { ...formatOptions, elapsedMs, ...(inFooter && shortBy !== undefined ? { note: shortBy } : {}) }),
        );
        if (!inFooter && shortBy !== undefined) context.err(`note: ${shortBy}`);
        const apart = facetsText(result, options.format, formatOptions);
        if (apart !== undefined) context.err(apart.trimEnd());
        return;
      }
      // The run gives its fields before any record: the header is written first, then records as they come.
      const progress = progressLine(context);
      let count = 0;
      try {
        const run = await source.client.stream(input, {
          signal,
          all: true,
          ...(options.pageSize === undefined ? {} : { pageSize: options.pageSize }),
          onPage: ({ fetched, total }) => progress.update(fetched, total),
        });
        const writer = createRecordWriter(options.format, run.fields, context.out, formatOptions);
        for await (const row of run.records) {
          await writer.write(row);
          count += 1;
        }
        progress.done();
        await writer.end({ total: count, elapsedMs: Math.round(performance.now() - started) });
        // Streamed records leave no room for facets in the records' own format: a table follows them, else stderr has them.
        if (run.facets !== undefined) {
          const text = renderFacets(run.facets, formatOptions);
          if (options.format === 'table') await context.out(`\n${text}`);
          else context.err(text.trimEnd());
        }
      } finally {
        progress.done();
      }
    });
  } catch (error) {
    const told = options.text === undefined ? undefined : await refusalInQuery(error, options.text, source, options.params);
    if (told !== undefined) throw told;
    if (error instanceof DatastoreError && error.code === 'VALIDATION_ERROR') {
      throw attachHint(error, await unknownFieldHint(error, request, source.client));
    }
    if (error instanceof DatastoreError && error.code === 'NOT_FOUND') {
      throw attachHint(error, await unknownResourceHint(error, request.resource_id, source));
    }
    throw error;
  }
}

/**
 * Why a result holds fewer records than match, when the user did not ask
 * for exactly that many: the source's default limit, or its cap on `limit`.
 * @example cutShort({ resource_id: 'courses' }, { records: [100 records], total: 320, … })
 * // '100 of 320 records: the default limit; add `limit N`, or --all for every record'
 */
export function cutShort(request: SearchRequest, result: SearchResult): string | undefined {
  const returned = result.records.length;
  const total = result.total;
  // A plan that stopped at the default limit without counting: more match, how many is not known.
  if (total === undefined && result.read?.more === true && request.limit === undefined) {
    return `${returned} records, and more match: the default limit; add \`limit N\`, or --all for every record`;
  }
  if (total === undefined || returned >= total - (request.offset ?? 0)) return undefined;
  const of = `${returned} of ${total} records`;
  if (request.limit === undefined) return `${of}: the default limit; add \`limit N\`, or --all for every record`;
  if (returned < request.limit) return `${of}: the source caps limit at ${returned} (limit ${request.limit} was asked); --all pages through every record`;
  return undefined;
}

/** `fetched 3000 of 5000 records` on stderr, rewritten in place; only on a terminal. */
function progressLine(context: CliContext): { update(fetched: number, total?: number): void; done(): void } {
  if (context.stderr.isTTY !== true) return { update: () => undefined, done: () => undefined };
  let shown = false;
  return {
    update: (fetched, of) => {
      context.stderr.write(`\r\u001b[2Kfetched ${fetched}${of === undefined ? '' : ` of ${of}`} records`);
      shown = true;
    },
    done: () => {
      if (shown) context.stderr.write('\r\u001b[2K');
      shown = false;
    },
  };
}

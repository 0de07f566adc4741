/**
 * Running one compiled request on a source and printing its records: shared
 * by `ckql query` and `ckql run`.
 */
import { performance } from 'node:perf_hooks';
import type { SearchRequest } from '../datastore/types.js';
import { DatastoreError } from '../errors.js';
import { createRecordWriter, formatRecords } from '../output/format-records.js';
import type { OutputFormat } from '../output/format-records.js';
import type { CliContext } from './context.js';
import { unknownFieldHint, unknownResourceHint } from '../session/field-hint.js';
import { interruptible } from './interrupt.js';
import { attachHint } from './report.js';
import type { Source } from '../session/source.js';

export interface PrintQueryOptions {
  readonly format: OutputFormat;
  /** every matching record, paging with `searchAll` */
  readonly all?: boolean;
  /** records per request with `all` */
  readonly pageSize?: number;
}

/**
 * Prints the records of `request` to stdout. A Validation Error about a
 * field is thrown with a "did you mean" hint attached.
 */
export async function printQuery(
  context: CliContext,
  source: Source,
  request: SearchRequest,
  options: PrintQueryOptions,
): Promise<void> {
  const started = performance.now();
  const formatOptions = { color: context.color.stdout, width: context.width, pretty: context.stdout.isTTY === true };
  try {
    await interruptible(async (signal) => {
      if (options.all !== true) {
        const result = await source.client.search(request, { signal });
        const elapsedMs = Math.round(performance.now() - started);
        await context.out(await formatRecords(result, options.format, { ...formatOptions, elapsedMs }));
        return;
      }
      // One `limit: 0` request first: it gives the field order for headers and the total for progress.
      const head = await source.client.search({ ...request, limit: 0 }, { signal });
      const writer = createRecordWriter(options.format, head.fields, context.out, formatOptions);
      const progress = progressLine(context, head.total);
      let count = 0;
      try {
        for await (const row of source.client.searchAll(request, {
          signal,
          ...(options.pageSize === undefined ? {} : { pageSize: options.pageSize }),
          onPage: ({ fetched, total }) => progress.update(fetched, total),
        })) {
          await writer.write(row);
          count += 1;
        }
      } finally {
        progress.done();
      }
      await writer.end({ total: count, elapsedMs: Math.round(performance.now() - started) });
    });
  } catch (error) {
    if (error instanceof DatastoreError && error.code === 'VALIDATION_ERROR') {
      throw attachHint(error, await unknownFieldHint(error, request, source.client));
    }
    if (error instanceof DatastoreError && error.code === 'NOT_FOUND') {
      throw attachHint(error, await unknownResourceHint(error, request.resource_id, source));
    }
    throw error;
  }
}

/** `fetched 3000 of 5000 records` on stderr, rewritten in place; only on a terminal. */
function progressLine(context: CliContext, total: number | undefined): { update(fetched: number, total?: number): void; done(): void } {
  if (context.stderr.isTTY !== true) return { update: () => undefined, done: () => undefined };
  let shown = false;
  return {
    update: (fetched, latest) => {
      const of = latest ?? total;
      context.stderr.write(`\r\u001b[2Kfetched ${fetched}${of === undefined ? '' : ` of ${of}`} records`);
      shown = true;
    },
    done: () => {
      if (shown) context.stderr.write('\r\u001b[2K');
    },
  };
}

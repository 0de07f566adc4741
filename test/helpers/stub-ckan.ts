/**
 * A small stub CKAN portal on 127.0.0.1:0 for the catalogue and the
 * client's manners, where the project's own server does not count or
 * misbehave on purpose (test/helpers/stub-portal.ts is the one for records
 * whose sort keys tie):
 *
 * - `package_search` over many generated datasets, capping `rows` at
 *   `rowsMax` (1,000, CKAN's `ckan.search.rows_max`) without a word, as CKAN does;
 * - a plain `datastore_search` over a few resources;
 * - every request noted (action, body, headers), the most in flight at
 *   once, an answer delayed or replaced (`intercept`) at will.
 *
 * Only the parameters these tests use are read: `resource_id`, `filters`
 * (equality), `fields`, `sort` (`field [asc|desc]`, comma-separated),
 * `limit` (capped at `limitMax`), `offset`, `include_total`,
 * `total_estimation_threshold` (with `estimatedTotal`).
 */
import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FieldInfo, Row } from '../../src/datastore/types.js';

export interface StubResource {
  readonly id: string;
  readonly fields: readonly FieldInfo[];
  readonly records: readonly Row[];
}

export interface StubPortalOptions {
  /** how many datasets `package_search` finds (named `dataset-00001`, …); default 0 */
  readonly datasets?: number;
  /** `package_search`'s cap on `rows`; default 1000 */
  readonly rowsMax?: number;
  /** the resources `datastore_search` answers for */
  readonly resources?: readonly StubResource[];
  /** `datastore_search`'s cap on `limit`; default 32000 */
  readonly limitMax?: number;
  /**
   * CKAN 2.11's estimate of an unfiltered count (`pg_class.reltuples`, stale
   * after inserts until the next ANALYZE): given as `total`, with
   * `total_was_estimated: true`, to a request that sends
   * `total_estimation_threshold` (docs/ckan-2.11-reference.md §1)
   */
  readonly estimatedTotal?: number;
  /** ms each answer waits before it is sent (to see requests in flight together); default 0 */
  readonly delay?: number;
  /** answers a request before the stub does (status and body), or undefined to let it */
  readonly intercept?: (action: string, body: Record<string, unknown>, seen: number) => { status: number; body: string; headers?: Record<string, string> } | undefined;
}

export interface StubPortal {
  readonly url: string;
  /** every request, in order */
  readonly requests: { readonly action: string; readonly body: Record<string, unknown>; readonly headers: IncomingMessage['headers'] }[];
  /** the most requests that were being answered at one time */
  readonly maxInFlight: number;
  close(): Promise<void>;
}

/** A stub portal on a free port. */
export async function startStubPortal(options: StubPortalOptions = {}): Promise<StubPortal> {
  const requests: StubPortal['requests'][number][] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  const server = createServer((req, res) => {
    void answer(req, res);
  });
  const answer = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    try {
      const url = new URL(req.url ?? '/', 'http://stub');
      let text = '';
      for await (const chunk of req) text += String(chunk);
      const body: Record<string, unknown> = req.method === 'POST' && text !== '' ? (JSON.parse(text) as Record<string, unknown>) : Object.fromEntries(url.searchParams);
      const action = /\/api\/(?:3\/)?action\/([\w]+)$/.exec(url.pathname)?.[1] ?? url.pathname;
      requests.push({ action, body, headers: req.headers });
      if (options.delay !== undefined) await new Promise((resolve) => setTimeout(resolve, options.delay));
      const intercepted = options.intercept?.(action, body, requests.length);
      if (intercepted !== undefined) {
        res.writeHead(intercepted.status, { 'content-type': 'application/json', ...intercepted.headers });
        res.end(intercepted.body);
        return;
      }
      const ok = (result: unknown): void => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ help: '', success: true, result }));
      };
      const fail = (status: number, error: Record<string, unknown>): void => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ help: '', success: false, error }));
      };
      switch (action) {
        case 'status_show':
          return ok({ ckan_version: '2.11.5' });
        case 'package_search':
          return ok(packageSearch(body, options));
        case 'datastore_search': {
          const resource = options.resources?.find((each) => each.id === body.resource_id);
          // CKAN's words (docs/ckan-2.11-reference.md §5, "Error envelope")
          if (resource === undefined) return fail(404, { __type: 'Not Found Error', message: `Not found: Resource "${String(body.resource_id)}" was not found.` });
          return ok(search(resource, body, options));
        }
        default:
          res.writeHead(action.startsWith('/') ? 404 : 400, { 'content-type': 'application/json' });
          res.end(JSON.stringify(`Bad request - Action name not known: ${action}`));
      }
    } finally {
      inFlight--;
    }
  };
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    get maxInFlight() {
      return maxInFlight;
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function packageSearch(body: Record<string, unknown>, options: StubPortalOptions): Record<string, unknown> {
  const count = options.datasets ?? 0;
  // CKAN: rows defaults to 10 and is cut to rows_max without a word.
  const rows = Math.min(Number(body.rows ?? 10), options.rowsMax ?? 1_000);
  const start = Number(body.start ?? 0);
  const results = [];
  for (let i = start; i < Math.min(count, start + rows); i++) {
    const name = `dataset-${String(i + 1).padStart(5, '0')}`;
    results.push({
      id: `id-${name}`,
      name,
      title: `Dataset ${i + 1}`,
      metadata_modified: '2024-01-01T00:00:00',
      organization: { name: 'org', title: 'The Org' },
      resources: [{ id: `res-${i + 1}`, name: 'data', format: 'CSV', datastore_active: i % 2 === 0 }],
    });
  }
  return { count, results, facets: {}, search_facets: {}, sort: body.sort ?? 'score desc, metadata_modified desc' };
}

function search(resource: StubResource, body: Record<string, unknown>, options: StubPortalOptions): Record<string, unknown> {
  const filters = (typeof body.filters === 'string' ? JSON.parse(body.filters) : body.filters ?? {}) as Record<string, unknown>;
  let records = resource.records.filter((record) =>
    Object.entries(filters).every(([field, value]) => (Array.isArray(value) ? value.includes(record[field]) : record[field] === value)),
  );
  const sort = typeof body.sort === 'string' && body.sort.trim() !== '' ? body.sort : '_id';
  const keys = sort.split(',').map((item) => {
    const [field = '', direction = 'asc'] = item.trim().replaceAll('"', '').split(/\s+/);
    return { field, descending: direction.toLowerCase() === 'desc' };
  });
  const compare = (a: Row, b: Row): number => {
    for (const { field, descending } of keys) {
      const x = a[field] as string | number | null;
      const y = b[field] as string | number | null;
      if (x === y) continue;
      if (x === null) return descending ? -1 : 1;
      if (y === null) return descending ? 1 : -1;
      return (x < y ? -1 : 1) * (descending ? -1 : 1);
    }
    return 0;
  };
  records = [...records].sort(compare);
  const limit = Math.min(Number(body.limit ?? 100), options.limitMax ?? 32_000);
  const offset = Number(body.offset ?? 0);
  const fields = Array.isArray(body.fields) ? (body.fields as string[]) : typeof body.fields === 'string' ? body.fields.split(',') : undefined;
  const estimated =
    options.estimatedTotal !== undefined && body.total_estimation_threshold !== undefined && body.total_estimation_threshold !== null && Object.keys(filters).length === 0;
  const page = records.slice(offset, offset + limit).map((record) => (fields === undefined ? record : Object.fromEntries(fields.map((f) => [f, record[f] ?? null]))));
  return {
    resource_id: resource.id,
    fields: fields === undefined ? resource.fields : resource.fields.filter((f) => fields.includes(f.id)),
    records: page,
    limit,
    ...(offset === 0 ? {} : { offset }),
    ...(body.include_total === false || body.include_total === 'false' ? {} : { total: estimated ? options.estimatedTotal : records.length }),
    total_was_estimated: estimated,
    include_total: body.include_total !== false,
    records_format: 'objects',
  };
}

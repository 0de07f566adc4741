/**
 * A small stub portal on 127.0.0.1 for behaviour of real CKAN portals that
 * `ckql serve` does not copy: records whose sort keys tie come back in a new
 * order on every request (PostgreSQL promises no order among ties, and a
 * busy portal's plans change), and CKAN 2.10.8–2.10.10 / 2.11.3–2.11.5's
 * `distinct`, applied to one page of records (docs/ckan-2.11-reference.md §4:
 * `SELECT DISTINCT cols FROM (SELECT * … LIMIT n OFFSET m)`, while `total`
 * counts every distinct record). Everything else is the memory evaluator's
 * answer, in CKAN's envelope. It logs every request it answers.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Row, SearchRequest, SearchResult, Table } from '../../src/datastore/types.js';
import { canonicalText } from '../../src/datastore/values.js';
import { normalizeRequest, parseSort } from '../../src/datastore/validate.js';
import { DatastoreError } from '../../src/errors.js';
import { evaluate } from '../../src/engine/memory/evaluate.js';

export interface StubPortalOptions {
  readonly tables: readonly Table[];
  /** `status_show`'s `ckan_version`; default 2.11.5 */
  readonly version?: string;
  /** records with equal sort keys come in a new order on each request */
  readonly shuffleTies?: boolean;
  /** `distinct` applied to the page's records only, as CKAN 2.11.3–2.11.5 */
  readonly distinctOnePage?: boolean;
  /** the cap on `limit` (CKAN's `ckan.datastore.search.rows_max`); default 32 000 */
  readonly maxLimit?: number;
}

export interface StubPortal {
  readonly url: string;
  /** every datastore_search request answered, as sent */
  readonly requests: SearchRequest[];
  close(): Promise<void>;
}

export async function startStubPortal(options: StubPortalOptions): Promise<StubPortal> {
  const requests: SearchRequest[] = [];
  const maxLimit = options.maxLimit ?? 32_000;
  const answer = (raw: unknown): SearchResult => {
    const request = normalizeRequest(raw, { maxLimit });
    requests.push(raw as SearchRequest);
    const table = options.tables.find((t) => t.id === request.resource_id || t.aliases.includes(request.resource_id));
    if (table === undefined) throw new DatastoreError('NOT_FOUND', `Resource "${request.resource_id}" was not found.`);
    const limit = request.limit ?? 100;
    const offset = request.offset ?? 0;
    const buggyDistinct = request.distinct === true && options.distinctOnePage === true;
    const { offset: _offset, limit: _limit, distinct: _distinct, fields: _fields, ...whole } = request;
    const names = request.fields ?? table.fields.map((f) => f.id);
    const project = (row: Row): Row => Object.fromEntries(names.map((name) => [name, row[name] ?? null])) as Row;
    let all: SearchResult;
    let records: readonly Row[];
    if (request.distinct === true && !buggyDistinct) {
      all = evaluate({ ...request, limit: 1_000_000_000, offset: 0 }, table, { maxLimit: 1_000_000_000 });
      records = all.records.slice(offset, offset + limit);
    } else {
      // Every matching record in the request's order (the evaluator's is stable: ties by _id), ties then shuffled.
      all = evaluate({ ...whole, limit: 1_000_000_000 }, table, { maxLimit: 1_000_000_000 });
      const ordered = options.shuffleTies === true ? shuffleTies(all.records, request.sort) : all.records;
      records = ordered.slice(offset, offset + limit).map(project);
    }
    if (buggyDistinct) {
      // DISTINCT over the page's rows, projected: what CKAN 2.11.5 sends.
      const seen = new Set<string>();
      records = records.filter((row) => {
        const key = JSON.stringify(names.map((name) => canonicalText(row[name])));
        if (seen.has(key)) return false;
        seen.add(key);
        return true;
      });
    }
    const total = buggyDistinct ? evaluate({ ...whole, fields: [...names], distinct: true, limit: 0 }, table).total : all.total;
    const fields = names.map((name) => table.fields.find((f) => f.id === name) ?? { id: name, type: 'text' as const });
    const result: Record<string, unknown> = { ...all, fields, records, limit };
    if (request.include_total === false) delete result['total'];
    else result['total'] = total;
    if (request.offset !== undefined) result['offset'] = request.offset;
    return result as unknown as SearchResult;
  };

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const send = (status: number, body: unknown): void => {
        res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      };
      const path = (req.url ?? '').split('?')[0] ?? '';
      if (path.endsWith('/status_show')) return send(200, { success: true, result: { ckan_version: options.version ?? '2.11.5' } });
      if (!path.endsWith('/datastore_search')) return send(404, { success: false, error: { message: 'Not found', __type: 'Not Found Error' } });
      try {
        const body = chunks.length === 0 ? {} : (JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown);
        send(200, { success: true, result: answer(body) });
      } catch (error) {
        const status = error instanceof DatastoreError ? (error.status ?? 409) : 500;
        send(status, { success: false, error: error instanceof DatastoreError ? (error.body ?? { message: error.message }) : { message: String(error) } });
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The records with each run of equal sort keys in a random order (without a sort, `_id` orders them: no ties). */
function shuffleTies(records: readonly Row[], sort: string | undefined): Row[] {
  const keys = sort === undefined ? [] : parseSort(sort).map((item) => item.field);
  if (keys.length === 0 || keys.includes('_id')) return [...records];
  const out: Row[] = [];
  let run: Row[] = [];
  const keyOf = (row: Row): string => JSON.stringify(keys.map((k) => row[k] ?? null));
  for (const row of records) {
    if (run.length > 0 && keyOf(run[0]!) !== keyOf(row)) {
      out.push(...shuffled(run));
      run = [];
    }
    run.push(row);
  }
  out.push(...shuffled(run));
  return out;
}

function shuffled<T>(items: readonly T[]): T[] {
  const copy = [...items];
  for (let i = copy.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [copy[i], copy[j]] = [copy[j]!, copy[i]!];
  }
  return copy;
}

/**
 * Property: for generated tables and requests, the records (and fields and
 * total) that come back over HTTP, by POST and by GET, equal what `evaluate`
 * gives for the same request and table. This ties the client's encoding, the
 * server's decoding and the envelope to the evaluator.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { connect } from '../../src/client/connect.js';
import type { DatastoreClient } from '../../src/client/connect.js';
import { startServer } from '../../src/server/server.js';
import type { RunningServer } from '../../src/server/server.js';
import { evaluate } from '../../src/engine/memory/evaluate.js';
import { sortText } from '../../src/datastore/sort.js';
import type { FieldInfo, Filters, Scalar, SearchRequest, SearchResult, Table } from '../../src/datastore/types.js';
import { DatastoreError } from '../../src/errors.js';
import { makeTable } from '../server/tables.js';
import { withoutRank } from '../helpers/rank.js';
import { propertyParameters } from '../helpers/arbitraries.js';

const ID = '9f8e7d6c-5b4a-4392-8170-6f5e4d3c2b1a';
let current: Table = makeTable(ID, ['gen'], [], []);
let server: RunningServer;
let post: DatastoreClient;
let get: DatastoreClient;

beforeAll(async () => {
  // One server for every run: it looks up whichever table the run generated.
  server = await startServer({
    tables: { find: (name) => (name === ID || name === 'gen' ? current : undefined), tables: [] },
  });
  post = connect({ url: server.url, method: 'POST', retries: 0 });
  get = connect({ url: server.url, method: 'GET', retries: 0, language: 'de' });
});

afterAll(async () => {
  await post.close();
  await get.close();
  await server.close();
});

const NAMES = ['a', 'b', 'school year', 'constructor', 'x,y', 'é', '"q"'] as const;
const TEXTS = ['', 'a', 'A', 'ab', 'Ab c', '"q"', 'é', 'e\u0301', 'ﬁ', '10', 'null', 'x,y', '[1]', ' b '];
const NUMBERS = [0, -0, 1, -2, 1.5, 10, 1e21, 2020];

const valueOf: Record<'text' | 'int' | 'numeric' | 'bool', fc.Arbitrary<Scalar>> = {
  text: fc.constantFrom(...TEXTS),
  int: fc.integer({ min: -3, max: 3 }),
  numeric: fc.constantFrom(...NUMBERS),
  bool: fc.boolean(),
};
type Kind = keyof typeof valueOf;

const anyScalar: fc.Arbitrary<Scalar> = fc.oneof(
  fc.constantFrom<Scalar>(...TEXTS),
  fc.constantFrom<Scalar>(...NUMBERS),
  fc.boolean(),
  fc.constant(null),
);

const tableArb = fc
  .uniqueArray(fc.record({ id: fc.constantFrom(...NAMES), type: fc.constantFrom<Kind>('text', 'int', 'numeric', 'bool') }), {
    minLength: 1,
    maxLength: 4,
    selector: (field) => field.id,
  })
  .chain((fields) =>
    fc
      .array(
        fc.tuple(...fields.map((field) => fc.option(valueOf[field.type], { freq: 5, nil: null }))),
        { maxLength: 25 },
      )
      .map((rows) =>
        makeTable(
          ID,
          ['gen'],
          fields as FieldInfo[],
          rows.map((values) => Object.fromEntries(fields.map((field, i) => [field.id, values[i] ?? null]))),
        ),
      ),
  );

/** Sometimes present: `freq` in 10 runs. */
function sometimes<T>(arb: fc.Arbitrary<T>, freq: number): fc.Arbitrary<T | undefined> {
  return fc.oneof({ arbitrary: fc.constant(undefined), weight: 10 - freq }, { arbitrary: arb, weight: freq });
}

/**
 * Requests that often match: filter values and search texts are mostly taken
 * from the table's own values, with arbitrary ones mixed in.
 */
function requestArb(table: Table): fc.Arbitrary<SearchRequest> {
  const names = table.fields.map((field) => field.id);
  const dataNames = names.filter((name) => name !== '_id');
  const present = (name: string): Scalar[] => table.rows.map((row) => (row[name] ?? null) as Scalar);
  const valueFor = (name: string): fc.Arbitrary<Scalar> => {
    const values = present(name);
    return values.length === 0 ? anyScalar : fc.oneof({ arbitrary: fc.constantFrom(...values), weight: 4 }, { arbitrary: anyScalar, weight: 1 });
  };
  const texts = table.rows.flatMap((row) => dataNames.map((name) => row[name]).filter((v) => v !== null && v !== undefined).map(String));
  const q =
    texts.length === 0
      ? fc.constantFrom('a', 'é')
      : fc
          .tuple(fc.constantFrom(...texts), fc.nat(), fc.nat(), fc.boolean())
          .map(([text, i, j, upper]) => {
            const from = i % (text.length + 1);
            const piece = text.slice(from, from + 1 + (j % 4));
            return upper ? piece.toUpperCase() : piece;
          });
  const filters = fc
    .uniqueArray(fc.constantFrom(...dataNames), { minLength: 1, maxLength: 2 })
    .chain((keys) =>
      // Lists are never empty here: the client answers those itself (the second property).
      fc.tuple(...keys.map((key) => fc.oneof(valueFor(key), fc.array(valueFor(key), { minLength: 1, maxLength: 3 })))).map((values) =>
        Object.fromEntries(keys.map((key, i) => [key, values[i]])),
      ),
    );
  const sort = fc
    .uniqueArray(fc.tuple(fc.constantFrom(...names), fc.constantFrom('asc' as const, 'desc' as const)), {
      minLength: 1,
      maxLength: 2,
      selector: ([name]) => name,
    })
    .map((items) => items.map(([name, direction]) => sortText(name, direction)).join(', '));
  return fc
    .record({
      resource_id: fc.constantFrom(ID, 'gen'),
      filters: sometimes(filters, 5),
      q: sometimes(q, 3),
      fields: sometimes(fc.uniqueArray(fc.constantFrom(...names), { minLength: 1, maxLength: names.length }), 4),
      sort: sometimes(sort, 5),
      limit: sometimes(fc.integer({ min: 0, max: 30 }), 7),
      offset: sometimes(fc.integer({ min: 0, max: 6 }), 3),
      include_total: sometimes(fc.boolean(), 2),
    })
    .map((request) => Object.fromEntries(Object.entries(request).filter(([, v]) => v !== undefined)) as unknown as SearchRequest);
}

describe('records over HTTP equal evaluate', () => {
  it('for generated tables and requests, by POST and by GET', async () => {
    let matched = 0;
    let runs = 0;
    await fc.assert(
      fc.asyncProperty(
        tableArb.chain((table) => fc.tuple(fc.constant(table), requestArb(table))),
        async ([table, request]) => {
          current = table;
          // JSON is the wire: compare with what JSON makes of the evaluator's answer (-0 travels as 0).
          const expected = JSON.parse(JSON.stringify(evaluate(request, table))) as SearchResult;
          runs++;
          if (expected.records.length > 0) matched++;
          for (const client of [post, get]) {
            const result = withoutRank(await client.search(request));
            expect(result.records).toEqual(expected.records);
            expect(result.fields).toEqual(expected.fields);
            expect(result.total).toEqual(expected.total);
            expect(result.resource_id).toBe(ID);
          }
        },
      ),
      propertyParameters(100),
    );
    // Many runs must return records, or the property says little (about 60 in 100 do; 40 is four deviations below).
    // A share of the runs made, not a count: the property's time budget ends it early on a loaded machine.
    expect(runs).toBeGreaterThanOrEqual(20);
    expect(matched / runs).toBeGreaterThan(0.4);
  });
});

/** The result as JSON carries it, without `_links`; or the error's code, status and body. */
async function outcome(run: () => SearchResult | Promise<SearchResult>): Promise<unknown> {
  try {
    const { _links: _ignored, ...result } = await run();
    return { result: JSON.parse(JSON.stringify(result)) as unknown };
  } catch (error) {
    if (!(error instanceof DatastoreError)) throw error;
    return { error: { code: error.code, status: error.status, body: error.body } };
  }
}

describe('a request with an empty-list filter, answered by the client', () => {
  it('equals evaluate, result or error, by POST and by GET', async () => {
    const arb = tableArb.chain((table) =>
      fc.tuple(
        fc.constant(table),
        requestArb(table),
        // the empty list's field: one of the table's, or one it does not have
        fc.constantFrom(...table.fields.map((field) => field.id), 'nope'),
        fc.boolean(),
        fc.option(fc.constantFrom('nope', 'zz'), { nil: undefined }),
        fc.option(fc.integer({ min: 0, max: 40_000 }), { nil: undefined }),
      ),
    );
    await fc.assert(
      fc.asyncProperty(arb, async ([table, generated, field, first, unknownSort, limit]) => {
        current = table;
        const rest: Record<string, unknown> = { ...generated.filters };
        delete rest[field];
        const filters = (first ? { [field]: [], ...rest } : { ...rest, [field]: [] }) as Filters;
        const request: SearchRequest = {
          ...generated,
          filters,
          ...(unknownSort === undefined ? {} : { sort: `${generated.sort === undefined ? '' : `${generated.sort}, `}${unknownSort} desc` }),
          ...(limit === undefined ? {} : { limit }),
        };
        const expected = await outcome(() => evaluate(request, table));
        for (const client of [post, get]) expect(await outcome(async () => withoutRank(await client.search(request)))).toEqual(expected);
      }),
      propertyParameters(100),
    );
  });
});

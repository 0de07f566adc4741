/**
 * Property: for generated CKAN 2.12 filter trees (operator dicts, mixed
 * lists, `$or`/`$and`, lists of dicts; some with unknown fields or
 * operations), `ckql serve --ckan 2.12` answers over HTTP with the records
 * and total the evaluator gives, or with the same error status and body.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { Agent, request } from 'undici';

import { evaluate } from '../../src/engine/memory/evaluate.js';
import type { JsonValue, SearchRequest } from '../../src/datastore/types.js';
import { startServer } from '../../src/server/server.js';
import type { RunningServer } from '../../src/server/server.js';
import { DatastoreError } from '../../src/errors.js';
import { propertyParameters, propertyRuns } from '../helpers/arbitraries.js';
import { courses } from '../server/tables.js';

let server: RunningServer;
let agent: Agent;

beforeAll(async () => {
  server = await startServer({ tables: [courses], port: 0, ckan: '2.12' });
  agent = new Agent({ keepAliveTimeout: 10, keepAliveMaxTimeout: 10 });
});

afterAll(async () => {
  await agent.close();
  await server.close();
});

const field = fc.constantFrom('subject', 'stage', 'title', 'year', '_id', 'nope');
const value: fc.Arbitrary<JsonValue> = fc.oneof(
  fc.constantFrom('math', 'physics', 'active', 'survey', 'Mechanics', 'Calculus', 'x'),
  fc.constantFrom(2019, 2020, 2021, 2022, 1, 3, 6),
  fc.constant(null),
);
const operator = fc.constantFrom('eq', 'gt', 'gte', 'lt', 'lte', 'ne');
const opDict = fc.dictionary(operator, value, { minKeys: 1, maxKeys: 2 });
const fieldValue: fc.Arbitrary<JsonValue> = fc.oneof(
  value,
  opDict,
  fc.array(fc.oneof(value, opDict), { maxLength: 4 }),
);
const leaf = fc.dictionary(field, fieldValue, { minKeys: 1, maxKeys: 2 });
const tree: fc.Arbitrary<JsonValue> = fc.letrec((tie) => ({
  dict: fc.oneof(
    { weight: 3, arbitrary: leaf },
    {
      weight: 1,
      arbitrary: fc
        .tuple(fc.constantFrom('$or', '$and'), fc.array(tie('dict'), { minLength: 1, maxLength: 3 }), leaf)
        .map(([op, members, rest]) => ({ ...rest, [op]: members })),
    },
  ),
})).dict as fc.Arbitrary<JsonValue>;
const filters = fc.oneof({ weight: 3, arbitrary: tree }, { weight: 1, arbitrary: fc.array(tree, { minLength: 1, maxLength: 3 }) });

type Outcome = { ok: { records: unknown; total: unknown } } | { error: { status: number | undefined; body: unknown } };

function local(body: SearchRequest): Outcome {
  try {
    const result = evaluate(body, courses, { ckan: '2.12' });
    return { ok: { records: result.records, total: result.total } };
  } catch (error) {
    if (!(error instanceof DatastoreError)) throw error;
    return { error: { status: error.status, body: error.body } };
  }
}

async function served(body: SearchRequest): Promise<Outcome> {
  const response = await request(`${server.url}/api/3/action/datastore_search`, {
    dispatcher: agent,
    method: 'POST',
    body: JSON.stringify(body),
    headers: { 'content-type': 'application/json' },
  });
  const json = (await response.body.json()) as { result?: { records: unknown; total: unknown }; error?: unknown };
  if (response.statusCode === 200 && json.result !== undefined) return { ok: { records: json.result.records, total: json.result.total } };
  return { error: { status: response.statusCode, body: json.error } };
}

test('the server answers generated 2.12 filter trees as the evaluator does', async () => {
  let answered = 0;
  await fc.assert(
    fc.asyncProperty(filters, async (f) => {
      const body = { resource_id: courses.id, filters: f, sort: '_id' } as unknown as SearchRequest;
      const expected = local(body);
      if ('ok' in expected) answered++;
      // JSON is the wire: compare with what JSON makes of the evaluator's answer.
      expect(await served(body)).toEqual(JSON.parse(JSON.stringify(expected)));
    }),
    propertyParameters(Math.max(100, Math.floor(propertyRuns / 10))),
  );
  // Many trees must be answered with records, or the property says little.
  expect(answered).toBeGreaterThan(5);
}, 120_000);

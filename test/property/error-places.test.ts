/**
 * Every error a run of a query gets that names a field or a value is told at
 * its place in the text (issue 35): generated queries over the demo's
 * courses, with misspelt fields and values of the wrong type among the right
 * ones, are run on local data, and each refusal the source gives is turned
 * into the query error the CLI, the REPL and the playground show
 * (`refusalInQuery`); its span must lie inside the text, on the word at
 * fault, with a hint.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { DatastoreError, QueryError } from '../../src/errors.js';
import { format } from '../../src/format.js';
import { parse } from '../../src/syntax/parse.js';
import { refusalInQuery } from '../../src/session/schema.js';
import { openSource, type Source } from '../../src/session/source.js';
import { queryArb, propertyParameters } from '../helpers/arbitraries.js';

const known = ['code', 'title', 'subject', 'stage', 'level', 'credits', 'online', 'start_date', 'school'];
const misspelt = ['levl', 'titel', 'subjet', 'credit', 'startdate', 'schol'];

let source: Source;
beforeAll(async () => {
  source = await openSource({ kind: 'data', paths: ['examples/data'] }, { resources: ['courses'] });
});
afterAll(async () => {
  await source.close();
});

test('a refused field or value is told at its place in the text, with a hint', async () => {
  const queries = queryArb({
    resource: fc.constant('courses'),
    fields: fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...known) }, { weight: 1, arbitrary: fc.constantFrom(...misspelt) }),
    values: fc.oneof(fc.constantFrom('math', 'high', 'x', 'true', '2021-09-04'), fc.integer({ min: -3, max: 9 }), fc.constantFrom(true, 2.5)),
    parameters: false,
    limits: fc.integer({ min: 0, max: 50 }),
    wholeWhere: true,
  });
  let refused = 0;
  await fc.assert(
    fc.asyncProperty(queries, async (query) => {
      const text = format(query);
      let error: unknown;
      try {
        await source.client.search(parse(text));
        return;
      } catch (caught) {
        error = caught;
      }
      if (!(error instanceof DatastoreError) || error.code !== 'VALIDATION_ERROR') throw error;
      refused++;
      const told = await refusalInQuery(error, text, source);
      expect(told, `${text}: ${error.message}`).toBeInstanceOf(QueryError);
      const { span, hint } = told as QueryError;
      expect(span.start, text).toBeGreaterThanOrEqual(0);
      expect(span.end, text).toBeLessThanOrEqual(text.length);
      expect(span.end, text).toBeGreaterThan(span.start);
      // The place holds what the source's refusal names: the misspelt field, the value, the field that holds no text.
      const word = text.slice(span.start, span.end).replace(/^["'`]|["'`]$/g, '');
      expect(error.message, `${text}: at ${JSON.stringify(word)}`).toContain(word);
      expect(hint, text).toBeTruthy();
    }),
    propertyParameters(),
  );
  // The generator must reach refusals, or the property says nothing.
  expect(refused).toBeGreaterThan(0);
}, 60_000);

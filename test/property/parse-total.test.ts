/**
 * The parser is total: any string either parses or throws a `QueryError`
 * whose span lies inside it (0 ≤ start ≤ end ≤ length) — never a TypeError,
 * a stack overflow or anything else. Whatever parses also compiles or gives a
 * `QueryError` inside the text, and survives the format round trip.
 */
import fc from 'fast-check';
import { expect, test } from 'vitest';
import { compile } from '../../src/compile/compile.js';
import { QueryError, queryMessages } from '../../src/errors.js';
import { format } from '../../src/format.js';
import { parse } from '../../src/syntax/parse.js';
import type { Query } from '../../src/ast.js';
import { anyText, mutatedText, propertyParameters, queryArb } from '../helpers/arbitraries.js';
import { loadCases } from '../helpers/cases.js';
import { spanInside, stripSpans } from '../helpers/spans.js';

function expectQueryErrorInside(error: unknown, source: string): void {
  expect(error).toBeInstanceOf(QueryError);
  const e = error as QueryError;
  expect(Object.keys(queryMessages)).toContain(e.code);
  expect(e.message.length).toBeGreaterThan(0);
  expect(spanInside(e.span, source.length), `span ${e.span.start}..${e.span.end} inside 0..${source.length}`).toBe(true);
}

function checkText(source: string): void {
  let query: Query;
  try {
    query = parse(source);
  } catch (error) {
    expectQueryErrorInside(error, source);
    return;
  }
  try {
    compile(source);
  } catch (error) {
    expectQueryErrorInside(error, source);
  }
  expect(stripSpans(parse(format(query)))).toEqual(stripSpans(query));
}

const caseQueries = loadCases().map((c) => c.query);

test('any text parses or gives a QueryError inside it', () => {
  fc.assert(fc.property(anyText, checkText), propertyParameters());
}, 120_000);

test('mutations of formatted queries parse or give a QueryError inside them', () => {
  fc.assert(fc.property(mutatedText(queryArb().map(format)), checkText), propertyParameters());
}, 120_000);

test('mutations of the case suite queries parse or give a QueryError inside them', () => {
  fc.assert(fc.property(mutatedText(fc.constantFrom(...caseQueries)), checkText), propertyParameters());
}, 120_000);

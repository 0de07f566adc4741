/**
 * Text ⇄ AST: `parse(format(q))` equals `q` up to spans, for generated ASTs
 * with awkward names and values (keywords, backticks, quotes, escapes,
 * unicode, lone surrogates, numbers such as 1e21 and 5e-324).
 */
import fc from 'fast-check';
import { expect, test } from 'vitest';
import { format } from '../../src/format.js';
import { parse } from '../../src/syntax/parse.js';
import { propertyParameters, queryArb, type QueryShape } from '../helpers/arbitraries.js';
import { spanProblems, stripSpans } from '../helpers/spans.js';

/** `parse(format(q))` equals `q`, spans aside; format is idempotent; spans lie inside the text: for queries of `shape`. */
function roundTrips(shape: QueryShape): void {
  fc.assert(
    fc.property(queryArb(shape), (query) => {
      const text = format(query);
      const back = parse(text);
      expect(stripSpans(back)).toEqual(stripSpans(query));
      expect(spanProblems(back, text)).toEqual([]);
      expect(format(back)).toBe(text);
    }),
    propertyParameters(),
  );
}

test('parse(format(q)) equals q, spans aside; format is idempotent; spans lie inside the text', () => roundTrips({}), 120_000);

test('the whole grammar round-trips too: comparisons, between, like, is null, not, or across fields, per-field search, language, distinct, nulls', () => roundTrips({ whole: true }), 120_000);

test('windows round-trip: window functions and aggregates over partitions and orders, named in select, tested in qualify', () => roundTrips({ windows: true }), 120_000);

test('computed select items round-trip: * beside expressions, aggregates of expressions, expression group keys', () => roundTrips({ whole: true, computed: true }), 120_000);

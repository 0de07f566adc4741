/**
 * The request surface of CKAN 2.11/2.12 as the memory engine answers it
 * (docs/semantics.md): 2.12 filter trees, per-field and `plain: false`
 * search, `full_text`, `distinct`, `nulls first|last`.
 */
import { describe, expect, test } from 'vitest';
import type { SearchRequest, SearchResult } from '../../../src/datastore/types.js';
import { DatastoreError } from '../../../src/errors.js';
import { evaluate } from '../../../src/engine/memory/evaluate.js';
import { tableFromRows } from '../../../src/engine/memory/load.js';

const courses = tableFromRows(
  [
    { title: 'Linear Algebra', subject: 'math', year: 2020, level: 1 },
    { title: 'Poetry', subject: 'arts', year: 2021, level: null },
    { title: 'Geometry', subject: 'math', year: 2021, level: 3 },
    { title: 'Algorithms', subject: 'computing', year: 2019, level: 2 },
    { title: 'Art History', subject: 'arts', year: 2020 },
  ],
  { alias: 'courses' },
);

const ids = (result: SearchResult): unknown[] => result.records.map((r) => r._id);
const run = (request: Omit<SearchRequest, 'resource_id'>, ckan?: '2.11' | '2.12') =>
  evaluate({ resource_id: 'courses', ...request }, courses, ckan === undefined ? {} : { ckan });

function failure(fn: () => unknown): { status: number | undefined; body: unknown } {
  try {
    fn();
  } catch (error) {
    if (error instanceof DatastoreError) return { status: error.status, body: error.body };
    throw error;
  }
  throw new Error('expected a DatastoreError');
}

describe('2.12 filter trees', () => {
  test.each<[SearchRequest['filters'], unknown[]]>([
    [{ year: { gte: 2021 } }, [2, 3]],
    [{ year: { gt: '2019', lt: 2021 } }, [1, 5]],
    [{ level: [{ lte: 1 }, 3] }, [1, 3]],
    [{ $or: [{ subject: 'arts' }, { level: { gte: 2 } }] }, [2, 3, 4, 5]],
    [[{ subject: 'computing' }, { year: 2021, subject: 'math' }], [3, 4]],
    [{ level: { lt: 100 } }, [1, 3, 4]], // null is unknown: Poetry and Art History are not kept
  ])('%j', (filters, expected) => {
    expect(ids(run({ filters }, '2.12'))).toEqual(expected);
  });

  test('a value the field type cannot read is a Validation Error naming both', () => {
    expect(failure(() => run({ filters: { year: { gt: 'abc' } } }, '2.12'))).toEqual({
      status: 409,
      body: { __type: 'Validation Error', filters: ['invalid value "abc" for field "year": it is not a valid int4'] },
    });
  });
});

describe('text search', () => {
  test('q as an object: each named field contains its text', () => {
    expect(ids(run({ q: { subject: 'ART', title: 'hist' } }))).toEqual([5]);
    expect(ids(run({ q: { subject: 'math' } }))).toEqual([1, 3]);
  });

  test('plain: false reads the to_tsquery subset', () => {
    expect(ids(run({ q: 'alg:* & !linear', plain: false }))).toEqual([4]);
    expect(ids(run({ q: 'poe:* | geo:*', plain: false, language: 'simple' }))).toEqual([2, 3]);
    expect(ids(run({ q: { title: 'art:* | poe:*' }, plain: false }))).toEqual([2, 5]);
    expect(failure(() => run({ q: 'linear <-> algebra', plain: false })).status).toBe(409);
  });

  test('full_text searches as a string q', () => {
    expect(ids(run({ full_text: 'ALGEBRA' }))).toEqual([1]);
  });
});

describe('distinct and nulls', () => {
  test('distinct keeps one record per distinct projection, before the page (CKAN 2.12: 5× foo + bar, limit 2/1/3/none → 2/1/2/2)', () => {
    const vals = tableFromRows([...Array.from({ length: 5 }, () => ({ val: 'foo' })), { val: 'bar' }], { alias: 'v' });
    const counts = [2, 1, 3, undefined].map((limit) => evaluate({ resource_id: 'v', fields: ['val'], distinct: true, ...(limit === undefined ? {} : { limit }) }, vals).records.length);
    expect(counts).toEqual([2, 1, 2, 2]);
    expect(evaluate({ resource_id: 'v', fields: ['val'], distinct: true }, vals).total).toBe(2);
    expect(run({ fields: ['subject'], distinct: true, sort: 'subject' }).records).toEqual([{ subject: 'arts' }, { subject: 'computing' }, { subject: 'math' }]);
    expect(failure(() => run({ fields: ['subject'], distinct: true, sort: 'year' })).status).toBe(409);
  });

  test('nulls first / last override where nulls go', () => {
    expect(ids(run({ sort: 'level asc' }))).toEqual([1, 4, 3, 2, 5]);
    expect(ids(run({ sort: 'level asc nulls first' }))).toEqual([2, 5, 1, 4, 3]);
    expect(ids(run({ sort: 'level desc' }))).toEqual([2, 5, 3, 4, 1]);
    expect(ids(run({ sort: 'level desc nulls last' }))).toEqual([3, 4, 1, 2, 5]);
  });
});

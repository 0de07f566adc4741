/**
 * The hash aggregate's fold (src/engine/memory/aggregate.ts) on its own:
 * its groups against a plain loop written here (BigInt sums, a Map of
 * texts), the states that `sum` and `avg` of one value share, integer sums
 * that cross 2^53, odd field names, and the closures that run where code
 * generation is disabled, which must answer as the generated fold does.
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Aggregate, AggregateFunction } from '../../../src/ast.js';
import type { JsonValue, Row } from '../../../src/datastore/types.js';
import { makeAggregator } from '../../../src/engine/memory/aggregate.js';
import { fieldRead } from '../../../src/engine/memory/row-shape.js';
import { cases, memoryAnswers } from '../../helpers/aggregate-fixtures.js';
import { repoRoot as root } from '../../cli/run-ckql.js';
import { runNodeProgram } from '../../helpers/node-program.js';
import { createRandom } from '../../../scripts/generate-demo-data.js';

const span = { start: 0, end: 0 };
function agg(fn: AggregateFunction, field?: string, distinct?: true): Aggregate {
  return { kind: 'aggregate', span, fn, ...(field === undefined ? {} : { field: { kind: 'field', span, name: field } }), ...(distinct ? { distinct } : {}) } as Aggregate;
}

describe('the generated fold', () => {
  it('gives a plain loop’s groups: count(*), count, count(distinct), exact sum, avg, min, max', () => {
    const next = createRandom(7);
    const rows: Row[] = Array.from({ length: 5000 }, () => ({
      k: next() < 0.1 ? null : ['a', 'b', 'c', 'd'][Math.floor(next() * 4)]!,
      n: next() < 0.2 ? null : Math.floor(next() * 2001) - 1000,
      t: next() < 0.1 ? null : `t${Math.floor(next() * 30)}`,
    }));
    const n = fieldRead('n');
    const aggregator = makeAggregator<Row>({
      keys: [fieldRead('k')],
      aggregates: [
        { aggregate: agg('count'), type: undefined },
        { aggregate: agg('count', 'n'), read: n, type: 'int4' },
        { aggregate: agg('count', 't', true), read: fieldRead('t'), type: 'text' },
        { aggregate: agg('sum', 'n'), read: n, type: 'int4' },
        { aggregate: agg('avg', 'n'), read: n, type: 'int4' },
        { aggregate: agg('min', 'n'), read: n, type: 'int4' },
        { aggregate: agg('max', 't'), read: fieldRead('t'), type: 'text' },
      ],
    });
    aggregator.addAll(rows);
    const want = new Map<JsonValue, { rows: number; values: number[]; texts: string[] }>();
    for (const row of rows) {
      const key = row['k'] ?? null;
      const group = want.get(key) ?? { rows: 0, values: [], texts: [] };
      want.set(key, group);
      group.rows++;
      if (row['n'] !== null) group.values.push(row['n'] as number);
      if (row['t'] !== null) group.texts.push(row['t'] as string);
    }
    const got = aggregator.groups();
    expect(got.length).toBe(want.size);
    for (const row of got) {
      const group = want.get(row['k0'] ?? null)!;
      const sum = group.values.reduce((a, b) => a + BigInt(b), 0n);
      // avg of integers is numeric: sum ÷ n at the scale of numeric division (its digits are checked against PostgreSQL in decimal-sum.test.ts)
      expect(Number(row['a4'])).toBeCloseTo(Number(sum) / group.values.length, 12);
      expect(row).toEqual({
        k0: row['k0'],
        a0: group.rows,
        a1: group.values.length,
        a2: new Set(group.texts).size,
        a3: Number(sum),
        a4: row['a4'],
        a5: Math.min(...group.values),
        a6: [...group.texts].sort().at(-1),
      });
    }
  });

  it('adds positions in their order, and each group keeps the first key value it saw', () => {
    const rows: Row[] = [{ k: 2020, n: 1 }, { k: '2020', n: 2 }, { k: 'x', n: 4 }, { k: 2020, n: 8 }];
    const aggregator = makeAggregator<Row>({ keys: [fieldRead('k')], aggregates: [{ aggregate: agg('sum', 'n'), read: fieldRead('n'), type: 'int4' }] });
    aggregator.addAll(rows, Int32Array.from([1, 3, 0]));
    // 2020 and "2020" are one group (PostgreSQL's `=` by canonical text); "x" was not added.
    expect(aggregator.groups()).toEqual([{ k0: '2020', a0: 11 }]);
  });

  it('sums integers past 2^53 exactly (as PostgreSQL’s numeric sum)', () => {
    const big = Number.MAX_SAFE_INTEGER - 10;
    const rows: Row[] = [{ n: big }, { n: 7 }, { n: 9 }, { n: 1 }, { n: -3 }];
    const aggregator = makeAggregator<Row>({ keys: [], aggregates: [{ aggregate: agg('sum', 'n'), read: fieldRead('n'), type: 'int8' }] });
    aggregator.addAll(rows);
    const want = rows.reduce((a, r) => a + BigInt(r['n'] as number), 0n);
    expect(String(aggregator.groups()[0]!['a0'])).toBe(String(want));
  });

  it('reads a field named after an Object.prototype member as the row’s own key only', () => {
    const rows: Row[] = [{ constructor: 'a' }, {}, { constructor: 'a' }];
    const aggregator = makeAggregator<Row>({ keys: [fieldRead('constructor')], aggregates: [{ aggregate: agg('count'), type: undefined }] });
    aggregator.addAll(rows);
    expect(aggregator.groups().sort((a, b) => String(a['k0']).localeCompare(String(b['k0'])))).toEqual([{ k0: 'a', a0: 2 }, { k0: null, a0: 1 }]);
  });
});

/**
 * The fold's program for both runs: one aggregator over odd rows (a missing key, nulls, a `constructor` field),
 * its groups sorted. It names nothing but its two arguments, so its text runs in the child as it runs here.
 */
function aggregatorGroups(make: typeof makeAggregator, read: typeof fieldRead): unknown {
  const at = { start: 0, end: 0 };
  const f = (name: string) => ({ kind: 'field', span: at, name }) as const;
  const rows: Row[] = [{ k: 'a', j: 1, n: 2 }, { k: 'b', j: 1, n: null }, { k: 'a', j: 2, n: 2.5 }, { k: 'a', j: 1, n: 4 }, { k: null, j: null, n: 1 }, { j: 1, n: 3, constructor: 'c' }];
  const n = read('n');
  const aggregator = make({
    keys: [read('k'), (row: Row) => (row['j'] === null ? null : (row['j'] as number) * 10)],
    aggregates: [
      { aggregate: { kind: 'aggregate', span: at, fn: 'count' }, type: undefined },
      { aggregate: { kind: 'aggregate', span: at, fn: 'sum', field: f('n') }, read: n, type: 'numeric' },
      { aggregate: { kind: 'aggregate', span: at, fn: 'avg', field: f('n') }, read: n, type: 'numeric' },
      { aggregate: { kind: 'aggregate', span: at, fn: 'count', field: f('constructor'), distinct: true }, read: read('constructor'), type: 'text' },
    ],
  });
  aggregator.addAll(rows);
  aggregator.addAll([{ k: 'b', j: 1, n: 5 }]);
  return aggregator.groups().sort((a, b) => JSON.stringify([a['k0'], a['k1']]).localeCompare(JSON.stringify([b['k0'], b['k1']])));
}

/** The shared cases, and joined records that read the missing side of a left join, `_id` and a bucket. */
const memoryQueries = [
  ...cases.map(([text]) => text),
  'from enrolments e left join courses c on e.course = c.code select e._id, e.student, c._id, c.code, c.credits, bucket(c.level, 2) as band',
];

/**
 * Both programs' answers from one `node --disallow-code-generation-from-strings` (each start of a node
 * program costs a bundle and half a second of CPU); the answers with code generation are this process's.
 */
let closuresRun: { aggregator: unknown; answers: { text: string; rows: Row[] }[] } | undefined;
function closures(): NonNullable<typeof closuresRun> {
  closuresRun ??= JSON.parse(runNodeProgram(`import { makeAggregator } from ${JSON.stringify(path.join(root, 'src/engine/memory/aggregate.ts'))};
import { fieldRead } from ${JSON.stringify(path.join(root, 'src/engine/memory/row-shape.ts'))};
import { memoryAnswers } from ${JSON.stringify(path.join(root, 'test/helpers/aggregate-fixtures.ts'))};
const aggregatorGroups = ${aggregatorGroups.toString()};
console.log(JSON.stringify({ aggregator: aggregatorGroups(makeAggregator, fieldRead), answers: await memoryAnswers(${JSON.stringify(memoryQueries)}) }));`, ['--disallow-code-generation-from-strings'])) as NonNullable<typeof closuresRun>;
  return closuresRun;
}

describe('without code generation', () => {
  it('the closures answer as the generated fold does (node --disallow-code-generation-from-strings)', () => {
    const generated = JSON.parse(JSON.stringify(aggregatorGroups(makeAggregator, fieldRead))) as unknown;
    expect(closures().aggregator).toEqual(generated);
    expect(generated).toEqual([
      // avg is numeric division's: 6 / 2 is 3.0000000000000000 in PostgreSQL, 1 / 1 is 1.00000000000000000000
      { k0: 'a', k1: 10, a0: 2, a1: 6, a2: '3.0000000000000000', a3: 0 },
      { k0: 'a', k1: 20, a0: 1, a1: 2.5, a2: '2.5000000000000000', a3: 0 },
      { k0: 'b', k1: 10, a0: 2, a1: 5, a2: '5.0000000000000000', a3: 0 },
      { k0: null, k1: 10, a0: 1, a1: 3, a2: '3.0000000000000000', a3: 1 },
      { k0: null, k1: null, a0: 1, a1: 1, a2: '1.00000000000000000000', a3: 0 },
    ]);
  });
});

describe('the memory engine without code generation', () => {
  const queries = memoryQueries;
  it('answers every shared aggregate and join case as with it (node --disallow-code-generation-from-strings)', async () => {
    const closed = closures().answers;
    // with code generation: this process
    const generated = await memoryAnswers(queries);
    expect(closed.length).toBe(queries.length);
    expect(closed).toEqual(generated);
    // The last query against the fixtures, by hand: cy's XX and dé's null course find no course.
    expect(generated.at(-1)!.rows.filter((row) => row['c._id'] === null).map((row) => row['student'])).toEqual(['cy', 'dé']);
    expect(generated.at(-1)!.rows[0]).toEqual({ 'e._id': 1, student: 'ana', 'c._id': 1, code: 'M1', credits: 0.1, band: 0 });
  });
});

/**
 * The window step (compile/window.ts, engine/memory/window.ts,
 * execute/window.ts): its values against a hand-written loop (each
 * partition sorted on its own), its steps (a long window yields, and stops
 * when its run is cancelled), and the executor's operators over a source.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { windowStep } from '../../src/compile/window.js';
import type { FieldInfo, Row } from '../../src/datastore/types.js';
import { DatastoreError } from '../../src/errors.js';
import { paced, runSteps } from '../../src/engine/pace.js';
import { windowAnswer } from '../../src/engine/memory/window.js';
import { memoryEngine } from '../../src/engine/memory/engine.js';
import { tableFromRows } from '../../src/engine/memory/load.js';
import { windowTree } from '../../src/execute/window.js';
import type { Operator } from '../../src/execute/operator.js';
import { describeTree, execute, readAll } from '../../src/execute/run.js';
import { parse } from '../../src/syntax/parse.js';
import { propertyParameters } from '../helpers/arbitraries.js';

const fields: FieldInfo[] = [
  { id: 'g', type: 'text' },
  { id: 'x', type: 'int4' },
  { id: 'n', type: 'int4' },
];

/** The windows of the property, over the inner query's own columns. */
const query = parse(
  'from t select g, x, n, row_number() over (partition by g order by x desc, n) as rn, rank() over (partition by g order by x desc) as rk, ' +
    'dense_rank() over (partition by g order by x desc) as dr, lag(n) over (partition by g order by n) as lg, lead(n, 2) over (partition by g order by n) as ld, ' +
    'sum(x) over (partition by g order by x) as run, count(x) over (partition by g) as c',
);

/** The same by hand: rows grouped by g (null one group), each group sorted, then counted along. */
function byHand(rows: readonly Row[]): Row[] {
  const groups = new Map<unknown, Row[]>();
  for (const row of rows) groups.set(row['g'], [...(groups.get(row['g']) ?? []), row]);
  const out = new Map<Row, Record<string, unknown>>(rows.map((row) => [row, { g: row['g'], x: row['x'], n: row['n'] }]));
  // PostgreSQL's order: nulls last ascending, first descending
  const asc = (a: unknown, b: unknown): number => (a === b ? 0 : a === null ? 1 : b === null ? -1 : (a as number) - (b as number));
  for (const group of groups.values()) {
    const desc = [...group].sort((a, b) => asc(b['x'], a['x']) || (a['n'] as number) - (b['n'] as number));
    desc.forEach((row, i) => (out.get(row)!['rn'] = i + 1));
    const byX = [...group].sort((a, b) => asc(b['x'], a['x']));
    byX.forEach((row) => {
      out.get(row)!['rk'] = byX.findIndex((other) => other['x'] === row['x']) + 1;
      out.get(row)!['dr'] = new Set(byX.filter((other) => asc(other['x'], row['x']) > 0).map((other) => other['x'])).size + 1;
    });
    const byN = [...group].sort((a, b) => (a['n'] as number) - (b['n'] as number));
    byN.forEach((row, i) => {
      out.get(row)!['lg'] = i >= 1 ? byN[i - 1]!['n'] : null;
      out.get(row)!['ld'] = i + 2 < byN.length ? byN[i + 2]!['n'] : null;
    });
    for (const row of group) {
      // the running sum: every row up to this one and its peers, in x's order (nulls last, and their sum the whole)
      const upTo = group.filter((other) => asc(other['x'], row['x']) <= 0 && other['x'] !== null);
      const sum = upTo.reduce((s, other) => s + (other['x'] as number), 0);
      out.get(row)!['run'] = upTo.length === 0 ? null : sum;
      out.get(row)!['c'] = group.filter((other) => other['x'] !== null).length;
    }
  }
  return rows.map((row) => out.get(row) as Row);
}

describe('the window step', () => {
  it('gives what a loop over each partition, sorted on its own, gives (ties, nulls in the partition key and the order key)', () => {
    const step = windowStep({ ...query, limit: { kind: 'limit', span: query.span, value: { kind: 'number', span: query.span, value: 10_000 } } })!;
    const row = fc.record({ g: fc.constantFrom('a', 'b', 'c', null), x: fc.option(fc.integer({ min: 0, max: 4 }), { nil: null }) });
    fc.assert(
      fc.property(fc.array(row, { maxLength: 40 }), (generated) => {
        // n is unique: lag and lead's order has no ties, so their answer is one
        const rows = generated.map((r, i): Row => ({ ...r, n: i }));
        const inner = rows.map((r): Row => ({ g: r['g'] ?? null, x: r['x'] ?? null, n: r['n'] ?? null, _ckql_0: r['g'] ?? null, _ckql_1: r['x'] ?? null, _ckql_2: r['n'] ?? null }));
        const answer = runSteps(windowAnswer(inner, [...fields, ...['_ckql_0', '_ckql_1', '_ckql_2'].map((id, i) => ({ id, type: fields[i]!.type }))], step, Infinity));
        expect(answer.rows).toEqual(byHand(rows));
      }),
      propertyParameters(),
    );
  });

  it('works in slices: a long window yields between them, and a cancelled run stops at the next with ABORTED', async () => {
    const step = windowStep(parse('from t select g, row_number() over (partition by g order by x) as r'))!;
    const rows = (): Row[] => Array.from({ length: 50_000 }, (_, i) => ({ g: i % 7, _ckql_0: i % 7, _ckql_1: (i * 7919) % 1000 }));
    const types: FieldInfo[] = [{ id: 'g', type: 'int4' }, { id: '_ckql_0', type: 'int4' }, { id: '_ckql_1', type: 'int4' }];
    let yields = 0;
    const steps = windowAnswer(rows(), types, step, Infinity);
    for (let next = steps.next(); next.done !== true; next = steps.next()) yields++;
    expect(yields).toBeGreaterThan(10);
    const controller = new AbortController();
    controller.abort(new DatastoreError('ABORTED', 'interrupted'));
    await expect(paced(windowAnswer(rows(), types, step, Infinity), controller.signal)).rejects.toMatchObject({ code: 'ABORTED' });
  });

  it('the executor: window, qualify, sort, limit and project over a source, as explain prints them, cancellable', async () => {
    const step = windowStep(parse('from t select g, x, rank() over (partition by g order by x desc) as r qualify r = 1 order by g'))!;
    const rows: Row[] = [
      { g: 'b', x: 1, _ckql_0: 'b', _ckql_1: 1 }, { g: 'a', x: 3, _ckql_0: 'a', _ckql_1: 3 }, { g: 'b', x: 5, _ckql_0: 'b', _ckql_1: 5 },
      { g: 'a', x: 3, _ckql_0: 'a', _ckql_1: 3 }, { g: null, x: 2, _ckql_0: null, _ckql_1: 2 },
    ];
    const source: Operator = {
      kind: 'engine',
      detail: 'five rows',
      inputs: [],
      open: () => Promise.resolve({ fields: [{ id: 'g', type: 'text' }, { id: 'x', type: 'int4' }, { id: '_ckql_0', type: 'text' }, { id: '_ckql_1', type: 'int4' }], batches: (async function* () { yield rows.map((r) => ({ ...r })); })() }),
    };
    const tree = windowTree(source, step, { all: false, total: true });
    expect(describeTree(tree)).toEqual([
      'project g, x, r',
      '└─ limit 100, then count the rest',
      '   └─ sort g, ties in the order they come',
      '      └─ filter qualify r = 1',
      '         └─ window rank() over (partition by g order by x desc) as r: each partition sorted by its order, then one pass (holds the rows of the query before it)',
      '            └─ engine five rows',
    ]);
    const run = await execute(tree);
    expect(await readAll(run)).toEqual([{ g: 'a', x: 3, r: 1 }, { g: 'a', x: 3, r: 1 }, { g: 'b', x: 5, r: 1 }, { g: null, x: 2, r: 1 }]);
    expect(run.total()).toBe(4);
    // cancelled while the window reads its input: it stops there, before computing anything
    const controller = new AbortController();
    const slow: Operator = {
      ...source,
      open: async (context) => ({
        ...(await source.open(context)),
        batches: (async function* () {
          yield rows.slice(0, 2).map((r) => ({ ...r }));
          controller.abort(new DatastoreError('ABORTED', 'interrupted'));
          yield rows.slice(2).map((r) => ({ ...r }));
        })(),
      }),
    };
    await expect(execute(windowTree(slow, step, { all: false, total: false }), { signal: controller.signal }).then(readAll)).rejects.toMatchObject({ code: 'ABORTED' });
  });

  it('the memory engine answers a window query through the same step (the top 2 of each group)', async () => {
    const table = tableFromRows([{ s: 'a', v: 1 }, { s: 'a', v: 3 }, { s: 'b', v: 2 }, { s: 'a', v: 2 }, { s: 'b', v: 9 }, { s: 'b', v: 4 }], { alias: 't' });
    const stream = await memoryEngine([table]).query(parse('from t select s, v, row_number() over (partition by s order by v desc) as r qualify r <= 2 order by s, r'), { total: true });
    const records: Row[] = [];
    for await (const batch of stream.batches) records.push(...batch);
    expect(records).toEqual([{ s: 'a', v: 3, r: 1 }, { s: 'a', v: 2, r: 2 }, { s: 'b', v: 9, r: 1 }, { s: 'b', v: 4, r: 2 }]);
    expect(stream.total).toBe(4);
  });
});

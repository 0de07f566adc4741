/**
 * The join bound on the SQL engines (docs/executor.md, Counting and limits):
 * a join whose output would pass `maxJoinRows` is refused before it runs,
 * with the memory engine's code, count, span and hint; one at the bound runs.
 * The counts are a hand-written nested loop's over the same rows.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { memoryEngine } from '../../../src/engine/memory/engine.js';
import type { Engine } from '../../../src/engine/types.js';
import type { Row } from '../../../src/datastore/types.js';
import { parse } from '../../../src/syntax/parse.js';
import { engineNames, openTestEngines, typedTable } from './engines.js';
import type { TestEngines } from './engines.js';

/** Keys of different multiplicities (200, 150, 100, 50 rows), 25 rows without one; tags alternate x, y. */
const rows: Record<string, unknown>[] = [];
for (const [key, n] of [['a', 200], ['b', 150], ['c', 100], ['d', 50], [null, 25]] as const) {
  for (let i = 0; i < n; i++) rows.push({ key, tag: rows.length % 2 === 0 ? 'x' : 'y', n: rows.length });
}
const table = typedTable('pairs', [['key', 'text'], ['tag', 'text'], ['n', 'int4']], rows);

/** The pairs a join on `key` gives, by nested loops: rows kept by `keepA`/`keepB`; `left`: each kept row of a once at least. */
function nestedLoop(left: boolean, keepA: (row: Record<string, unknown>) => boolean = () => true, keepB = keepA): number {
  let out = 0;
  for (const a of rows.filter(keepA)) {
    let matched = 0;
    for (const b of rows.filter(keepB)) if (a['key'] !== null && a['key'] === b['key']) matched++;
    out += left ? Math.max(1, matched) : matched;
  }
  return out;
}

let engines: TestEngines;
let memory: Engine;
beforeAll(async () => {
  engines = await openTestEngines([table]);
  memory = memoryEngine([table]);
});
afterAll(async () => {
  await engines?.close();
});

async function answer(engine: Engine, text: string, maxJoinRows: number): Promise<Row[]> {
  const stream = await engine.query(parse(text), { all: true, maxJoinRows });
  const out: Row[] = [];
  for await (const batch of stream.batches) out.push(...batch);
  return out;
}

async function refusal(engine: Engine, text: string, maxJoinRows: number): Promise<unknown> {
  return answer(engine, text, maxJoinRows).then(
    () => 'answered',
    (error: unknown) => {
      const { code, message, span, hint } = error as { code: string; message: string; span: unknown; hint: string };
      return { code, message, span, hint };
    },
  );
}

describe.each(engineNames)('the join bound on %s', (name) => {
  it('refuses a many-to-many self-join as the memory engine does: code, count, span and hint', async () => {
    const text = 'from pairs a join pairs b on a.key = b.key select count(*) as n';
    const pairs = nestedLoop(false);
    expect(pairs).toBe(200 * 200 + 150 * 150 + 100 * 100 + 50 * 50);
    const mine = await refusal(engines.get(name), text, 25_000);
    expect(mine).toEqual(await refusal(memory, text, 25_000));
    expect(mine).toMatchObject({ code: 'JOIN_TOO_LARGE', message: `this join gives ${pairs} rows, more than the 25000 a join may give` });
    expect((mine as { hint: string }).hint).toContain('"a" (200 × 200 = 40000), "b" (150 × 150 = 22500), "c" (100 × 100 = 10000)');
  });

  it('counts exactly: a bound of the count answers, one less refuses (each side kept by its own where)', async () => {
    const text = "from pairs a join pairs b on a.key = b.key where a.tag = 'x' and b.n < 250 select count(*) as n";
    const want = nestedLoop(false, (row) => row['tag'] === 'x', (row) => (row['n'] as number) < 250);
    expect(await answer(engines.get(name), text, want)).toEqual([{ n: want }]);
    const refused = await refusal(engines.get(name), text, want - 1);
    expect(refused).toEqual(await refusal(memory, text, want - 1));
    expect(refused).toMatchObject({ code: 'JOIN_TOO_LARGE', message: expect.stringContaining(`gives ${want} rows`) });
  });

  it('counts a left join with the rows that found none', async () => {
    const text = 'from pairs a left join pairs b on a.key = b.key select count(*) as n';
    const want = nestedLoop(true);
    expect(want).toBe(75_000 + 25);
    expect(await answer(engines.get(name), text, want)).toEqual([{ n: want }]);
    const refused = await refusal(engines.get(name), text, want - 1);
    expect(refused).toEqual(await refusal(memory, text, want - 1));
  });

  it('bounds each join of a chain by its own rows, as the memory engine does', async () => {
    const text = "from pairs a join pairs b on a.tag = b.tag join pairs c on b.key = c.key where a.key = 'd' select count(*) as n";
    // The first join's rows: each row of key d with every row of its tag.
    const first = rows.filter((a) => a['key'] === 'd').reduce((sum, a) => sum + rows.filter((b) => b['tag'] === a['tag']).length, 0);
    const refused = await refusal(engines.get(name), text, first);
    expect(refused).toEqual(await refusal(memory, text, first));
    expect(refused).toMatchObject({ code: 'JOIN_TOO_LARGE', span: { start: text.indexOf('join pairs c') } });
    expect(await refusal(engines.get(name), text, first - 1)).toMatchObject({ code: 'JOIN_TOO_LARGE', span: { start: text.indexOf('join pairs b') } });
  });
});

/**
 * Numbers beyond a double in a loaded file (README, "Differences in meaning":
 * kept, compared and sorted exactly): the memory engine's order, grouping,
 * distinct, join keys and comparisons on them, each path (the whole query,
 * a request's sort, the reference walker) judged by a hand reference over
 * BigInt. test/property/postgres-differential.test.ts checks the same
 * against PostgreSQL on generated tables.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Row, Table } from '../../../src/datastore/types.js';
import { memoryEngine } from '../../../src/engine/memory/engine.js';
import { evaluate } from '../../../src/engine/memory/evaluate.js';
import { evaluateQuery } from '../../../src/engine/memory/evaluate-query.js';
import { loadResources } from '../../../src/engine/memory/load.js';
import { parse } from '../../../src/syntax/parse.js';

// The column of the report: 2^53 − 2 … 2^53 + 17 (the odd ones no double holds), 1, and two beyond int8.
const integers = [...Array.from({ length: 20 }, (_, i) => 9007199254740990n + BigInt(i)), 1n, 12345678901234567890n, 18446744073709551616n];

let dir: string;
let big: Table;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ckql-exact-'));
  // shuffled by a fixed step, so no path can pass by keeping the file's order; k names each row
  const rows = integers.map((_, i) => integers[(i * 7) % integers.length] as bigint);
  await writeFile(join(dir, 'big.csv'), ['k,v', ...rows.map((v, i) => `r${i},${v}`)].join('\n'));
  [big] = (await loadResources(join(dir, 'big.csv'))) as [Table];
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function records(text: string, tables: readonly Table[] = [big]): Promise<Row[]> {
  const stream = await memoryEngine(tables).query(parse(text), { all: true });
  const rows: Row[] = [];
  for await (const batch of stream.batches) rows.push(...batch);
  return rows;
}
const sorted = (values: readonly bigint[]): string[] => [...values].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)).map(String);
const texts = (rows: readonly Row[], name: string): string[] => rows.map((row) => String(row[name]));

describe('integers beyond 2^53 in a numeric column', () => {
  test('the loader types the column numeric (the report\'s case)', () => {
    expect(big.fields.find((f) => f.id === 'v')?.type).toBe('numeric');
  });

  test('order by sorts them by value, ascending and descending, on every path', async () => {
    const want = sorted(integers);
    expect(texts(await records('from big order by v select v'), 'v')).toEqual(want);
    expect(texts(await records('from big order by v desc select v'), 'v')).toEqual([...want].reverse());
    expect(texts(evaluate({ resource_id: big.id, sort: 'v asc', limit: 100 }, big).records, 'v')).toEqual(want);
    expect(texts(evaluate({ resource_id: big.id, sort: 'v desc', limit: 3 }, big).records, 'v')).toEqual([...want].reverse().slice(0, 3));
    expect(texts(evaluateQuery('from big order by v select v', big).records, 'v')).toEqual(want);
  });

  test('groups come in key order, min and max are exact', async () => {
    expect(texts(await records('from big group by v select v, count(*) as n'), 'v')).toEqual(sorted(integers));
    expect(await records('from big select min(v) as lo, max(v) as hi')).toEqual([{ lo: 1, hi: '18446744073709551616' }]);
    const above = integers.filter((v) => v > 9007199254740993n);
    expect(texts(await records('from big where v > "9007199254740993" order by v select v'), 'v')).toEqual(sorted(above));
  });
});

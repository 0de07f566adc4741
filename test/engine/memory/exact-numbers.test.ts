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
import { loadResources } from '../../../src/engine/node/load-resources.js';
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

describe('one value, several spellings', () => {
  // each line: a cell, and the value it spells (PostgreSQL's numeric text)
  const spellings: readonly [string, string][] = [
    ['0.1000000000000000000001', '0.1000000000000000000001'],
    ['0.10000000000000000000010', '0.1000000000000000000001'],
    ['1.000000000000000000001e-1', '0.1000000000000000000001'],
    ['0.1', '0.1'],
    ['1e21', '1000000000000000000000'],
    ['1000000000000000000000', '1000000000000000000000'],
    ['12345678901234567890.50', '12345678901234567890.5'],
    ['1.23456789012345678905E19', '12345678901234567890.5'],
    ['-0.00000000000000000000100', '-0.000000000000000000001'],
    ['-1e-21', '-0.000000000000000000001'],
  ];
  let spelled: Table;
  beforeAll(async () => {
    await writeFile(join(dir, 'spelled.csv'), ['k,v', ...spellings.map(([cell], i) => `s${i},${cell}`)].join('\n'));
    [spelled] = (await loadResources(join(dir, 'spelled.csv'))) as [Table];
  });
  // the hand reference: the rows of each value, in the values' order
  const values = [...new Set(spellings.map(([, value]) => value))];
  const byValue = values.map((value) => ({ value, keys: spellings.flatMap(([, v], i) => (v === value ? [`s${i}`] : [])) }));
  // a loaded value as PostgreSQL writes the number: a kept text is already that; a double is its shortest text, digits spelled out
  const exact = (v: unknown): string => (typeof v === 'number' ? plainDigits(v) : String(v));

  test('the loader keeps one text per value: its plain digits, as PostgreSQL writes it', () => {
    expect(spelled.fields.find((f) => f.id === 'v')?.type).toBe('numeric');
    expect(spelled.rows.map((row) => exact(row['v']))).toEqual(spellings.map(([, value]) => value));
  });

  test('group by, distinct, count(distinct) and join keys see one value', async () => {
    const groups = await records('from spelled group by v select v, count(*) as n', [spelled]);
    const order = [...byValue].sort((a, b) => compareExact(a.value, b.value));
    expect(groups.map((g) => [exact(g['v']), g['n']])).toEqual(order.map(({ value, keys }) => [value, keys.length]));
    expect((await records('from spelled select distinct v', [spelled])).length).toBe(values.length);
    expect(await records('from spelled select count(distinct v) as n', [spelled])).toEqual([{ n: values.length }]);
    const pairs = await records('from spelled a join spelled b on a.v = b.v select a.k, b.k', [spelled]);
    const want = byValue.flatMap(({ keys }) => keys.flatMap((a) => keys.map((b) => `${a}=${b}`)));
    expect(pairs.map((p) => `${String(p['a.k'])}=${String(p['b.k'])}`).sort()).toEqual(want.sort());
  });

  test('a quoted value finds every spelling of it', async () => {
    const found = await records('from spelled where v = "0.1000000000000000000001" select k', [spelled]);
    expect(found.map((r) => r['k'])).toEqual(byValue.find((g) => g.value === '0.1000000000000000000001')?.keys);
  });
});

/** Two plain decimal texts by value (the reference: BigInt over a common scale). */
function compareExact(a: string, b: string): number {
  const scale = Math.max(a.split('.')[1]?.length ?? 0, b.split('.')[1]?.length ?? 0);
  const scaled = (t: string): bigint => {
    const [whole = '0', fraction = ''] = t.replace('-', '').split('.');
    const n = BigInt(whole + fraction.padEnd(scale, '0'));
    return t.startsWith('-') ? -n : n;
  };
  const x = scaled(a);
  const y = scaled(b);
  return x < y ? -1 : x > y ? 1 : 0;
}

/** A double's shortest text with its exponent spelled out (`-1e-21` → `-0.000000000000000000001`), by hand. */
function plainDigits(n: number): string {
  const [mantissa = '', exponent = '0'] = String(n).split('e');
  const negative = mantissa.startsWith('-');
  const [whole = '', fraction = ''] = mantissa.replace('-', '').split('.');
  const point = whole.length + Number(exponent);
  const digits = whole + fraction;
  const text = point <= 0 ? `0.${'0'.repeat(-point)}${digits}` : point >= digits.length ? digits + '0'.repeat(point - digits.length) : `${digits.slice(0, point)}.${digits.slice(point)}`;
  return negative ? `-${text}` : text;
}

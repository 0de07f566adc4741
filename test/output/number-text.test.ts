/**
 * Numbers as their type says, in every output format and on every engine
 * (docs/engines.md, Numbers in the output): generated numeric expressions
 * and aggregates, run by the memory engine, PGlite and PostgreSQL (the CI
 * cluster when `CKQL_TEST_PG_URL` names one), printed as csv, ndjson, json,
 * markdown and the table, give in each cell PostgreSQL's own `::text` of
 * the same SQL text: a numeric with its scale (`2.0`, `0.33333333333333333333`),
 * a float8 as its shortest text (`1e+20`).
 */
import { parse as parseLossless, isLosslessNumber } from 'lossless-json';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FieldInfo, Row } from '../../src/datastore/types.js';
import { memoryEngine } from '../../src/engine/memory/engine.js';
import type { Engine } from '../../src/engine/types.js';
import { createRecordWriter, formatRecords, type OutputFormat } from '../../src/output/format-records.js';
import { parse } from '../../src/syntax/parse.js';
import { postgresAnswers } from '../helpers/postgres-answers.js';
import { engineNames, openTestEngines, typedTable, type TestEngines } from '../engine/sql/engines.js';
import { createRandom } from '../../scripts/generate-demo-data.js';

/** Rows of a group `g`, an int4 `i`, a numeric `n` (no trailing zeros as stored: docs/engines.md) and a float8 `f`. */
const rows = [
  { g: 'a', i: 7, n: 1.5, f: 0.5 },
  { g: 'a', i: -3, n: -2.25, f: -1.25 },
  { g: 'b', i: 0, n: 0, f: 3 },
  { g: 'b', i: null, n: '12345678901234567890.123', f: null },
  { g: 'c', i: 2147483647, n: null, f: 1e-7 },
  { g: 'c', i: 10, n: 0.1, f: 2.5e15 },
  { g: 'c', i: 4, n: 3, f: 1 / 3 },
];
const table = typedTable('r', [['g', 'text'], ['i', 'int4'], ['n', 'numeric'], ['f', 'float8']], rows);

/** A number expression that reads the same in ckql and in PostgreSQL. */
function numberExpression(next: () => number, depth: number): string {
  const pick = <T,>(list: readonly T[]): T => list[Math.floor(next() * list.length)]!;
  if (depth <= 0 || next() < 0.25) return pick(['i', 'n', 'f', 'n', 'i', '2', '3', '100.0', '0.25', '1.50', '7', '2.000']);
  const a = (): string => numberExpression(next, depth - 1);
  return pick([
    () => `${a()} ${pick(['+', '-', '*'])} ${a()}`,
    () => `${a()} / ${pick(['3', '7.0', '0.5', '4', 'nullif(i, 0)', 'nullif(n, 0)'])}`,
    () => `round(${a()})`,
    () => `round((${a()})::numeric, ${pick(['0', '1', '2', '3'])})`,
    () => `abs(${a()})`,
    () => `- ${a()}`,
    () => `(${a()})::${pick(['numeric', 'float8', 'int8'])}`,
    () => `coalesce(${a()}, 0)`,
    () => `case when ${pick(['i', 'n', 'f'])} > 1 then ${a()} else ${a()} end`,
  ])();
}

/** An aggregate expression over the groups. */
function aggregateExpression(next: () => number): string {
  const pick = <T,>(list: readonly T[]): T => list[Math.floor(next() * list.length)]!;
  const x = (): string => pick(['i', 'n', 'f']);
  return pick([
    () => `${pick(['sum', 'avg'])}(${x()})`,
    () => `round(avg(${pick(['i', 'n'])}), ${pick(['0', '1', '2'])})`,
    () => `count(*) * 100.0 / 7`,
    () => `sum(${x()}) / count(*)`,
    () => `avg(${pick(['i', 'n'])}) * 2`,
    () => `min(${x()}) + 0.50`,
  ])();
}

const next = createRandom(7);
const rowTexts = ['f', 'n', 'n * 2', 'f / 3', ...Array.from({ length: 60 }, () => numberExpression(next, 3))];
const groupTexts = Array.from({ length: 25 }, () => aggregateExpression(next));

/** PostgreSQL's `::text` of each statement's `v`, ordered by `k`, joined by `|`; `error` where it errs. */
async function theirs(statements: readonly string[]): Promise<string[][]> {
  const values = (r: (typeof rows)[number], k: number): string =>
    `(${k + 1}, '${r.g}', ${r.i ?? 'NULL'}, ${r.n === null ? 'NULL' : `'${r.n}'`}, ${r.f === null ? 'NULL' : `'${r.f}'`})`;
  const setup = `
    CREATE TEMP TABLE r (_id int, g text, i int4, n numeric, f float8);
    INSERT INTO r VALUES ${rows.map(values).join(', ')};
    CREATE FUNCTION pg_temp.ckql_texts(sql text) RETURNS text AS $$
      DECLARE out text;
      BEGIN
        EXECUTE 'SELECT string_agg(coalesce(v::text, ''null''), ''|'' ORDER BY k) FROM (' || sql || ') AS q(k, v)' INTO out;
        RETURN out;
      EXCEPTION WHEN others THEN RETURN 'error';
      END $$ LANGUAGE plpgsql;`;
  return postgresAnswers(setup, 'SELECT pg_temp.ckql_texts(s) AS v FROM unnest($1::text[]) WITH ORDINALITY AS x(s, o) ORDER BY o', statements, 'DROP TABLE r');
}

/** The text of column `v` in each line of a format's output, `null` for an empty cell or null. */
function cells(text: string, format: OutputFormat, fields: readonly FieldInfo[]): string[] {
  const at = fields.findIndex((f) => f.id === 'v');
  const lines = text.split('\n').filter((line) => line !== '');
  switch (format) {
    case 'csv':
      return lines.slice(1).map((line) => line.split(',')[at] || 'null');
    case 'markdown':
      return lines.slice(2).map((line) => line.split('|')[at + 1]!.trim() || 'null');
    case 'table':
      // the rows between the rule and the footer; null shows as ∅
      return lines.slice(2, -1).map((line) => line.split('│')[at]!.trim().replace('∅', 'null'));
    case 'ndjson':
    case 'json': {
      const records = format === 'json' ? (parseLossless(text) as Record<string, unknown>[]) : lines.map((line) => parseLossless(line) as Record<string, unknown>);
      return records.map((record) => {
        const v = record['v'];
        return v === null ? 'null' : isLosslessNumber(v) ? v.value : `not a JSON number: ${JSON.stringify(v)}`;
      });
    }
  }
}

const formats: readonly OutputFormat[] = ['csv', 'ndjson', 'json', 'markdown', 'table'];

/** Each format's text of column `v` for a query on an engine, joined by `|`; `error` where the engine refuses it. */
async function ours(engine: Engine, query: string): Promise<Record<OutputFormat, string> | 'error'> {
  let fields: readonly FieldInfo[];
  const records: Row[] = [];
  try {
    const stream = await engine.query(parse(query), { total: true });
    fields = stream.fields;
    for await (const batch of stream.batches) records.push(...batch);
  } catch {
    return 'error';
  }
  const out = {} as Record<OutputFormat, string>;
  for (const format of formats) {
    let text: string;
    if (format === 'table') {
      const result = { resource_id: 'r', fields: [...fields], records, total: records.length, total_was_estimated: false, limit: 100, include_total: true, records_format: 'objects' as const };
      text = await formatRecords(result, 'table', { width: 400 });
    } else {
      const parts: string[] = [];
      const writer = createRecordWriter(format, fields, (t) => void parts.push(t), { escapeFormulas: true });
      for (const row of records) await writer.write(row);
      await writer.end();
      text = parts.join('');
    }
    out[format] = cells(text, format, fields).join('|');
  }
  return out;
}

let engines: TestEngines;
let wanted: string[][];
const statements = [
  ...rowTexts.map((e) => ({ ckql: `from r select _id, ${e} as v order by _id`, sql: `SELECT _id, ${e} FROM r` })),
  ...groupTexts.map((e) => ({ ckql: `from r group by g select g, ${e} as v order by g`, sql: `SELECT g, ${e} FROM r GROUP BY g` })),
];
// n * 2.0 is 3.00 for 1.5, the other small ones give 3: one value, two scales
const groupKey = 'greatest(n * 2.0, 3)';
/** Each PostgreSQL's counts of the groups of `groupKey`, in ascending order. */
let keyCounts: number[][];
beforeAll(async () => {
  engines = await openTestEngines([table]);
  // one batch for each PostgreSQL: the group key's statement goes last
  const answers = await theirs([...statements.map((s) => s.sql), `SELECT (${groupKey}), count(*)::int FROM r GROUP BY ${groupKey}`]);
  wanted = answers.map((answer) => answer.slice(0, -1));
  keyCounts = answers.map((answer) => answer.at(-1)!.split('|').map(Number).sort((a, b) => a - b));
}, 60_000);
afterAll(async () => {
  await engines?.close();
});

describe.each(['memory', ...engineNames] as const)('numbers printed from the %s engine', (name) => {
  it("are PostgreSQL's ::text in every format: a numeric with its scale, a float8 as its shortest text", async () => {
    const engine = name === 'memory' ? memoryEngine([table]) : engines.get(name);
    let compared = 0;
    // each statement runs once on the engine, and its text is judged against every PostgreSQL's answer
    for (const [k, statement] of statements.entries()) {
      const got = await ours(engine, statement.ckql);
      for (const answer of wanted) {
        const want = answer[k]!;
        if (want === 'error' || got === 'error') {
          expect(got === 'error', `${statement.ckql}: PostgreSQL says ${want}`).toBe(want === 'error');
          continue;
        }
        for (const format of formats) expect(`${statement.ckql} (${format}) → ${got[format]}`).toBe(`${statement.ckql} (${format}) → ${want}`);
        compared++;
      }
    }
    // most statements have values to compare, and some of them keep a scale a number would lose
    expect(compared).toBeGreaterThan(statements.length * 0.7 * wanted.length);
    expect(wanted[0]!.some((v) => /\.\d*0(\||$)/.test(v))).toBe(true);
  }, 120_000);
});

describe.each(['memory', ...engineNames] as const)('a computed group key on the %s engine', (name) => {
  it('is one group for equal numbers of two scales (3.0 and 3), as in PostgreSQL', async () => {
    const engine = name === 'memory' ? memoryEngine([table]) : engines.get(name);
    const stream = await engine.query(parse(`from r group by ${groupKey} select ${groupKey} as k, count(*) as c order by c`), { total: true });
    const records: Row[] = [];
    for await (const batch of stream.batches) records.push(...batch);
    for (const counts of keyCounts) {
      expect(records.map((r) => r['c'])).toEqual(counts);
      expect(counts).toContain(5);
    }
  });
});

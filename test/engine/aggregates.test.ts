/**
 * Grouping, aggregates, buckets, facets and joins on every local engine
 * (docs/aggregates.md): the memory engine's hash aggregate and hash join,
 * and the PostgreSQL engines' one statement, give the same rows, and those
 * rows are PostgreSQL's own answer to SQL written here by hand (not by
 * ckql's compiler). `avg` is compared within a relative 1e-9: PostgreSQL's
 * is exact (`numeric`), the memory engine's a double.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Engine } from '../../src/engine/types.js';
import type { Facets, Row } from '../../src/datastore/types.js';
import { memoryEngine } from '../../src/engine/memory/engine.js';
import { parse } from '../../src/syntax/parse.js';
import { openCkanSql } from '../helpers/ckan-sql.js';
import type { CkanSql } from '../helpers/ckan-sql.js';
import { engineNames, openTestEngines } from './sql/engines.js';
import { cases, courses, expectSameRows, tables } from '../helpers/aggregate-fixtures.js';
import type { TestEngines } from './sql/engines.js';

let engines: TestEngines;
let reference: CkanSql;
const memory: Engine = memoryEngine(tables);

beforeAll(async () => {
  engines = await openTestEngines(tables);
  reference = await openCkanSql(tables);
});

afterAll(async () => {
  await engines?.close();
  await reference?.close();
});

async function answer(engine: Engine, text: string): Promise<{ rows: Row[]; total: number | undefined; facets: Facets | undefined }> {
  const stream = await engine.query(parse(text), { total: true });
  const rows: Row[] = [];
  for await (const batch of stream.batches) rows.push(...batch);
  return { rows, total: stream.total, facets: stream.facets };
}

describe.each(cases)('%s', (text, sql) => {
  it.each(['memory', ...engineNames] as const)('on %s, PostgreSQL’s own answer', async (name) => {
    const engine = name === 'memory' ? memory : engines.get(name);
    const got = await answer(engine, text);
    const want = sql === null ? await answer(memory, text) : { rows: (await reference.run(sql.replaceAll(':', '\\:'), courses)).records };
    expectSameRows(got.rows, want.rows, `${name}: ${text}`);
  });
});

describe('totals, exact sums, output types', () => {
  it('counts the groups as the total, before limit and offset', async () => {
    for (const name of ['memory', ...engineNames] as const) {
      const engine = name === 'memory' ? memory : engines.get(name);
      const got = await answer(engine, 'from courses group by subject limit 2');
      expect(got.total, name).toBe(6);
      expect(got.rows.length, name).toBe(2);
    }
  });

  it('sums decimals exactly (0.1 + 0.2 + 0.3 is 0.6, not 0.6000000000000001)', async () => {
    const got = await answer(memory, 'from courses where subject = math select sum(credits)');
    expect(String(got.rows[0]!['sum_credits'])).toBe('0.6');
  });

  it('keeps the key field’s type and gives counts as int8', async () => {
    const stream = await memory.query(parse('from courses group by level, month(day) select level, month(day), count(*), avg(level)'), {});
    expect(stream.fields.map((f) => `${f.id}:${f.type}`)).toEqual(['level:int4', 'month_day:timestamp', 'count:int8', 'avg_level:numeric']);
  });

  it('names a clash _2 and a joined field alias.field', async () => {
    const stream = await memory.query(parse('from enrolments e join courses c on e.course = c.code select c.code, e.course, count(*), count(*) group by c.code, e.course limit 1'), {});
    expect(stream.fields.map((f) => f.id)).toEqual(['code', 'course', 'count', 'count_2']);
  });
});

describe('facets', () => {
  const text = 'from courses where level < 4 facet subject top 2, start by month, credits by 2.5';

  it('give the same counts on every engine, and the records as without facet', async () => {
    const plain = await answer(memory, 'from courses where level < 4');
    const mine = await answer(memory, text);
    expect(mine.rows).toEqual(plain.rows);
    expect(mine.facets?.['subject']).toEqual({ field: 'subject', values: [{ value: 'math', count: 3 }, { value: 'Ökonomie', count: 1 }], null_count: 1, more: true });
    for (const name of engineNames) {
      const theirs = await answer(engines.get(name), text);
      expect(theirs.facets, name).toEqual(mine.facets);
    }
  });

  it('count values as PostgreSQL does', async () => {
    const { records } = await reference.run(
      "SELECT date_trunc('month', start) AS v, count(*) AS n FROM courses WHERE level < 4 AND start IS NOT NULL GROUP BY 1 ORDER BY 2 DESC, 1",
      courses,
    );
    const mine = await answer(memory, text);
    expect(mine.facets?.['start']?.values).toEqual(records.map((r) => ({ value: r['v'], count: Number(r['n']) })));
    expect(mine.facets?.['start']?.null_count).toBe(1);
  });

  it('refuse a group by in the same query', () => {
    expect(() => parse('from courses group by subject facet level')).toThrow(expect.objectContaining({ code: 'FACET_WITH_GROUP' }));
  });
});

/**
 * Queries that compute (docs/expressions.md) on every engine: the memory
 * engine's evaluator, and PGlite and PostgreSQL running the statement the
 * sql writer makes of the same query (`CKQL_TEST_PG_URL` for the server),
 * give the same records and column types; the README's examples among them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decimalOf, decimalText } from '../../../src/datastore/decimal.js';
import { memoryEngine } from '../../../src/engine/memory/engine.js';
import type { Engine } from '../../../src/engine/types.js';
import { parse } from '../../../src/syntax/parse.js';
import type { TestEngines } from './engines.js';
import { engineNames, openTestEngines, typedTable } from './engines.js';

const grades = typedTable(
  'grades',
  [['student', 'text'], ['subject', 'text'], ['grade', 'numeric'], ['credits', 'int'], ['taken', 'date'], ['weight', 'float8']],
  [
    { student: 'ana', subject: 'math', grade: 3.5, credits: 5, taken: '2021-03-04', weight: 0.5 },
    { student: 'ben', subject: 'math', grade: 4, credits: 5, taken: '2022-05-01', weight: 1.5 },
    { student: 'cai', subject: 'art', grade: 2.25, credits: 3, taken: '2022-01-01', weight: null },
    { student: 'dev', subject: 'art', grade: null, credits: 7, taken: '2023-09-30', weight: 2 },
    { student: 'eve', subject: 'Physics', grade: 1.125, credits: 4, taken: null, weight: 0.25 },
  ],
);

const queries = [
  // the README's examples
  'from grades group by subject select subject, round(avg(grade), 1) as mean order by subject',
  'from grades group by subject select subject, count(*) * 100.0 / 5 as share order by subject',
  "from grades select student, date_part('year', taken) as year order by student",
  // arithmetic, text, case, casts, functions
  'from grades select student, grade * credits as points, credits / 2 as half, credits % 2 as odd, - credits as negative order by student',
  "from grades select student || ' (' || subject || ')' as who, upper(subject) as up, length(student) as n, substr(subject, 2, 3) as part order by student",
  "from grades select student, case when grade >= 3 then 'pass' when grade is null then 'none' else 'fail' end as result order by student",
  'from grades select student, coalesce(grade, 0) as g, nullif(credits, 5) as c, greatest(grade, 2) as hi, least(credits, 4) as lo order by student',
  'from grades select student, cast(grade as int) as whole, credits::numeric / 3 as third, round(weight) as w, abs(grade - 3) as off order by student',
  // where and order by an expression
  'from grades where grade * credits > 10 select student order by student',
  "from grades where lower(subject) = physics select student",
  'from grades select student, grade * credits as points order by grade * credits desc nulls last, student',
  // a group key and having that compute
  "from grades group by date_part('year', taken) select date_part('year', taken) as year, count(*) as n order by year",
  'from grades group by subject select subject, sum(credits) as credits having sum(credits) * 2 > 12 order by subject',
];

let engines: TestEngines;
let memory: Engine;
beforeAll(async () => {
  engines = await openTestEngines([grades]);
  memory = memoryEngine([grades]);
});
afterAll(async () => {
  await engines?.close();
});

async function answer(engine: Engine, text: string): Promise<{ fields: unknown; records: unknown[] }> {
  const stream = await engine.query(parse(text), { total: true });
  const records: unknown[] = [];
  // a numeric by its value: the PostgreSQL engines keep its scale as text (7.50), the memory engine a number
  // where a double holds it (docs/engines.md, the differences table)
  const numeric = new Set(stream.fields.filter((f) => f.type === 'numeric').map((f) => f.id));
  for await (const batch of stream.batches) {
    for (const row of batch) {
      records.push(Object.fromEntries(Object.entries(row).map(([key, value]) => [key, numeric.has(key) && value !== null ? decimalText(decimalOf(value)!) : value])));
    }
  }
  return { fields: stream.fields.map((f) => `${f.id}:${f.type}`), records };
}

describe.each(engineNames)('expressions on the memory engine and %s', (name) => {
  it.each(queries)('%s', async (text) => {
    const theirs = await answer(engines.get(name), text);
    const ours = await answer(memory, text);
    expect(ours).toEqual(theirs);
    expect(ours.records.length).toBeGreaterThan(0);
  });
});

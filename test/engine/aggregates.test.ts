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
import { engineNames, openTestEngines, typedTable } from './sql/engines.js';
import type { TestEngines } from './sql/engines.js';

const courses = typedTable(
  'courses',
  [['code', 'text'], ['subject', 'text'], ['credits', 'numeric'], ['level', 'int4'], ['start', 'timestamp'], ['day', 'date'], ['online', 'bool']],
  [
    { code: 'M1', subject: 'math', credits: 0.1, level: 1, start: '2024-01-15T10:00:00', day: '2024-01-15', online: true },
    { code: 'M2', subject: 'math', credits: 0.2, level: 2, start: '2024-01-31T23:59:59', day: '2024-02-01', online: false },
    { code: 'M3', subject: 'math', credits: 0.3, level: 2, start: '2024-03-01T00:00:00', day: '2024-03-04', online: null },
    { code: 'E1', subject: 'Ökonomie', credits: 5, level: 1, start: '2023-12-31T12:00:00', day: '2023-12-31', online: true },
    { code: 'E2', subject: 'économie', credits: 7.5, level: 3, start: null, day: null, online: false },
    { code: 'Z1', subject: '数学', credits: 2.5, level: 3, start: '2022-06-06T06:06:06', day: '2022-06-06', online: true },
    { code: 'N1', subject: null, credits: null, level: 1, start: '2024-01-01T00:00:00', day: '2024-01-01', online: null },
    { code: 'N2', subject: null, credits: 1234567.25, level: 4, start: '2024-02-29T12:00:00', day: '2024-02-29', online: true },
    { code: 'B1', subject: 'biology', credits: -2.5, level: 4, start: '2021-01-01T00:00:00', day: '2021-01-04', online: false },
  ],
);

const enrolments = typedTable(
  'enrolments',
  [['student', 'text'], ['course', 'text'], ['grade', 'int4'], ['enrolled', 'date']],
  [
    { student: 'ana', course: 'M1', grade: 5, enrolled: '2024-01-10' },
    { student: 'ana', course: 'M2', grade: 4, enrolled: '2024-01-20' },
    { student: 'bo', course: 'M1', grade: 6, enrolled: '2024-02-01' },
    { student: 'bo', course: 'E1', grade: null, enrolled: '2024-02-03' },
    { student: 'cy', course: 'Z1', grade: 3, enrolled: '2024-02-10' },
    { student: 'cy', course: 'XX', grade: 2, enrolled: '2024-03-01' },
    { student: 'dé', course: null, grade: 1, enrolled: null },
    { student: 'ana', course: 'N1', grade: 6, enrolled: '2024-03-15' },
    { student: 'ed', course: 'M1', grade: 5, enrolled: '2024-01-10' },
  ],
);

const tables = [courses, enrolments];

/** Each query, and PostgreSQL's own SQL for it where one is written (`null`: the engines only compare among themselves). */
const cases: readonly (readonly [string, string | null])[] = [
  ['from courses group by subject', 'SELECT subject, count(*) AS count FROM courses GROUP BY subject ORDER BY subject'],
  [
    'from courses group by subject select subject, count(*) as n, avg(credits), sum(credits), min(credits), max(credits) order by n desc, subject',
    'SELECT subject, count(*) AS n, avg(credits) AS avg_credits, sum(credits) AS sum_credits, min(credits) AS min_credits, max(credits) AS max_credits FROM courses GROUP BY subject ORDER BY count(*) DESC, subject',
  ],
  [
    'from courses select count(*), count(subject), count(distinct subject), sum(credits), count(distinct online)',
    'SELECT count(*) AS count, count(subject) AS count_subject, count(DISTINCT subject) AS count_distinct_subject, sum(credits) AS sum_credits, count(DISTINCT online) AS count_distinct_online FROM courses',
  ],
  // with no group by, no input gives one row; with a group by, none
  ['from courses where level > 100 select count(*), sum(credits), avg(credits), min(code)', 'SELECT count(*) AS count, sum(credits) AS sum_credits, avg(credits) AS avg_credits, min(code) AS min_code FROM courses WHERE level > 100'],
  ['from courses where level > 100 group by subject', 'SELECT subject, count(*) AS count FROM courses WHERE level > 100 GROUP BY subject'],
  [
    'from courses group by month(start) select month(start) as m, count(*) as n',
    "SELECT date_trunc('month', start) AS m, count(*) AS n FROM courses GROUP BY date_trunc('month', start) ORDER BY 1",
  ],
  [
    'from courses group by week(day), year(start) select week(day), year(start), count(*)',
    "SELECT date_trunc('week', day::timestamp) AS week_day, date_trunc('year', start) AS year_start, count(*) AS count FROM courses GROUP BY 1, 2 ORDER BY 1, 2",
  ],
  [
    'from courses group by bucket(credits, 2.5) select bucket(credits, 2.5), count(*)',
    'SELECT floor(credits / 2.5) * 2.5 AS bucket_credits, count(*) AS count FROM courses GROUP BY 1 ORDER BY 1',
  ],
  [
    'from courses group by subject having count(*) > 1 or subject is null order by subject desc nulls last',
    'SELECT subject, count(*) AS count FROM courses GROUP BY subject HAVING count(*) > 1 OR subject IS NULL ORDER BY subject DESC NULLS LAST',
  ],
  [
    'from courses group by subject, online select subject, online, count(*) as n having n >= 1 order by n desc, subject, online limit 3 offset 1',
    'SELECT subject, online, count(*) AS n FROM courses GROUP BY subject, online ORDER BY count(*) DESC, subject, online LIMIT 3 OFFSET 1',
  ],
  ['from courses select min(subject), max(start), min(day), max(online), min(online), min(level)', 'SELECT min(subject) AS min_subject, max(start) AS max_start, min(day)::text AS min_day, bool_or(online) AS max_online, bool_and(online) AS min_online, min(level) AS min_level FROM courses'],
  [
    'from enrolments e join courses c on e.course = c.code select e.student, c.subject, e.grade order by e.student, c.subject, e.grade',
    'SELECT e.student, c.subject, e.grade FROM enrolments e JOIN courses c ON e.course = c.code ORDER BY e.student, c.subject, e.grade',
  ],
  [
    'from enrolments e left join courses c on e.course = c.code group by c.subject select c.subject, count(*), count(c.code), avg(e.grade)',
    'SELECT c.subject, count(*) AS count, count(c.code) AS count_code, avg(e.grade) AS avg_grade FROM enrolments e LEFT JOIN courses c ON e.course = c.code GROUP BY c.subject ORDER BY c.subject',
  ],
  [
    'from enrolments e join courses c on e.course = c.code where c.subject = math group by c.subject, month(e.enrolled) select c.subject, month(e.enrolled) as month, count(*), count(distinct e.student)',
    "SELECT c.subject, date_trunc('month', e.enrolled::timestamp) AS month, count(*) AS count, count(DISTINCT e.student) AS count_distinct_student FROM enrolments e JOIN courses c ON e.course = c.code WHERE c.subject = 'math' GROUP BY 1, 2 ORDER BY 1, 2",
  ],
  [
    'from enrolments e left join courses c on e.course = c.code where c.code is null select e.student, e.course order by e.student',
    'SELECT e.student, e.course FROM enrolments e LEFT JOIN courses c ON e.course = c.code WHERE c.code IS NULL ORDER BY e.student',
  ],
  ['from courses c join enrolments e on c.code = e.course group by c.code select c.code, count(*) as n order by n desc, c.code limit 2', null],
  ['from courses group by online select online, sum(level), avg(level) order by online nulls first', null],
];

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

const NUMBER = /^-?\d+(\.\d+)?(e[+-]?\d+)?$/i;

/** Rows with numbers (and numeric text, as PostgreSQL gives `numeric`) as numbers, for a comparison within 1e-9. */
function expectSameRows(actual: readonly Row[], expected: readonly Row[], what: string): void {
  expect(actual.length, `${what}: row count`).toBe(expected.length);
  expected.forEach((want, i) => {
    const got = actual[i]!;
    expect(Object.keys(got), `${what}: row ${i} names`).toEqual(Object.keys(want));
    for (const key of Object.keys(want)) {
      const a = got[key];
      const b = want[key];
      const an = typeof a === 'number' || (typeof a === 'string' && NUMBER.test(a)) ? Number(a) : undefined;
      const bn = typeof b === 'number' || (typeof b === 'string' && NUMBER.test(b)) ? Number(b) : undefined;
      if (an !== undefined && bn !== undefined) {
        expect(Math.abs(an - bn) <= 1e-9 * Math.max(1, Math.abs(bn)), `${what}: row ${i} ${key}: ${String(a)} vs ${String(b)}`).toBe(true);
      } else {
        expect(a, `${what}: row ${i} ${key}`).toEqual(b);
      }
    }
  });
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

/**
 * Two small tables for grouping, buckets, facets and joins (nulls, mixed
 * case and unicode keys, exact decimals, ties, a left join's misses), and
 * queries over them with PostgreSQL's own SQL for each where one is
 * written: shared by the engine, plan and sql-target tests.
 */
import { expect } from 'vitest';
import type { JsonValue, Row } from '../../src/datastore/types.js';
import { memoryEngine } from '../../src/engine/memory/engine.js';
import { parse } from '../../src/syntax/parse.js';
import { typedTable } from '../engine/sql/engines.js';

export const courses = typedTable(
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

export const enrolments = typedTable(
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

export const tables = [courses, enrolments];

/** Each query, and PostgreSQL's own SQL for it where one is written (`null`: the engines only compare among themselves). */
export const cases: readonly (readonly [string, string | null])[] = [
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
  ['from courses select min(subject), max(start), min(day), min(level), max(credits)', 'SELECT min(subject) AS min_subject, max(start) AS max_start, min(day)::text AS min_day, min(level) AS min_level, max(credits) AS max_credits FROM courses'],
  // PostgreSQL has no max(boolean): the engines, knowing the type, say bool_or (the sql target, not knowing it, cannot)
  ['from courses group by level select level, max(online), min(online)', 'SELECT level, bool_or(online) AS max_online, bool_and(online) AS min_online FROM courses GROUP BY level ORDER BY level'],
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

const NUMBER = /^-?\d+(\.\d+)?(e[+-]?\d+)?$/i;

/** Rows with numbers (and numeric text, as PostgreSQL gives `numeric`) as numbers, for a comparison within 1e-9. */
export function expectSameRows(actual: readonly Row[], expected: readonly Row[], what: string): void {
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

/**
 * Every record (and the facets) the memory engine answers each query with over `tables`, as JSON would
 * carry it: run here and, by test/engine/memory/aggregate.test.ts, in a node without code generation.
 */
export async function memoryAnswers(queries: readonly string[]): Promise<{ text: string; rows: Row[]; facets: JsonValue }[]> {
  const engine = memoryEngine(tables);
  const out: { text: string; rows: Row[]; facets: unknown }[] = [];
  for (const text of queries) {
    const stream = await engine.query(parse(text), { all: true });
    const rows: Row[] = [];
    for await (const batch of stream.batches) rows.push(...batch);
    out.push({ text, rows, facets: stream.facets ?? null });
  }
  return JSON.parse(JSON.stringify(out)) as { text: string; rows: Row[]; facets: JsonValue }[];
}


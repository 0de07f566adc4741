/**
 * Every query of the aggregates design's examples (docs/aggregates-design.md,
 * Language additions) over tables with its field names, answered everywhere:
 * the memory, PGlite and PostgreSQL engines, plans against `ckql serve` as
 * CKAN 2.11 and 2.12, the sql target through a PGlite `ckql serve`'s
 * `datastore_search_sql` (with CKAN's allow-list), and the text `ckql compile
 * --target sql` prints, sent as it is. The rows every one of them must give
 * are PostgreSQL's answer to SQL written here by hand; the facets, its
 * counts of each value (helpers/shaped-cases.ts runs the comparisons).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FacetResult, Facets, Row } from '../../src/datastore/types.js';
import { parse } from '../../src/syntax/parse.js';
import type { Case } from '../helpers/cases.js';
import { openCkanSql } from '../helpers/ckan-sql.js';
import type { CkanSql } from '../helpers/ckan-sql.js';
import { openShapedTargets, runShapedCase } from '../helpers/shaped-cases.js';
import type { ShapedTargets } from '../helpers/shaped-cases.js';
import { typedTable } from '../engine/sql/engines.js';

const courses = typedTable(
  'courses',
  [['code', 'text'], ['subject', 'text'], ['credits', 'numeric'], ['stage', 'text'], ['start_date', 'date']],
  [
    { code: 'C01', subject: 'math', credits: 7.5, stage: 'active', start_date: '2024-01-08' },
    { code: 'C02', subject: 'math', credits: 8, stage: 'active', start_date: '2024-01-15' },
    { code: 'C03', subject: 'math', credits: 10, stage: 'survey', start_date: '2024-02-05' },
    { code: 'C04', subject: 'math', credits: 7, stage: 'active', start_date: '2024-02-12' },
    { code: 'C05', subject: 'math', credits: 6, stage: 'active', start_date: '2024-03-04' },
    { code: 'C06', subject: 'physics', credits: 9, stage: 'active', start_date: '2024-01-22' },
    { code: 'C07', subject: 'physics', credits: 7, stage: 'archived', start_date: '2024-03-11' },
    { code: 'C08', subject: 'physics', credits: 12, stage: 'active', start_date: null },
    { code: 'C09', subject: 'physics', credits: 7.25, stage: 'active', start_date: '2024-02-19' },
    { code: 'C10', subject: 'history', credits: 3, stage: 'active', start_date: '2024-01-29' },
    { code: 'C11', subject: 'history', credits: 8, stage: 'survey', start_date: '2024-02-26' },
    { code: 'C12', subject: null, credits: 9, stage: 'active', start_date: '2024-03-18' },
    { code: 'C13', subject: 'chemistry', credits: 7, stage: 'active', start_date: '2024-01-08' },
    { code: 'C14', subject: 'chemistry', credits: 2.5, stage: null, start_date: '2024-04-01' },
    { code: 'C15', subject: 'Math', credits: 11, stage: 'active', start_date: '2024-02-05' },
    { code: 'C16', subject: 'math', credits: null, stage: 'active', start_date: '2024-03-25' },
  ],
);

const enrolments = typedTable(
  'enrolments',
  [['student', 'text'], ['course', 'text'], ['enrolled', 'date']],
  [
    { student: 'ana', course: 'C01', enrolled: '2024-01-10' },
    { student: 'ana', course: 'C02', enrolled: '2024-01-20' },
    { student: 'bo', course: 'C01', enrolled: '2024-02-01' },
    { student: 'bo', course: 'C06', enrolled: '2024-02-03' },
    { student: 'cy', course: 'C03', enrolled: '2024-02-10' },
    { student: 'cy', course: 'XX', enrolled: '2024-03-01' },
    { student: 'dé', course: null, enrolled: null },
    { student: 'ana', course: 'C16', enrolled: '2024-03-15' },
    { student: 'ed', course: 'C01', enrolled: '2024-01-10' },
    { student: 'ed', course: 'C04', enrolled: '2024-03-02' },
    { student: 'fi', course: 'C15', enrolled: '2024-02-20' },
    { student: 'gu', course: 'C10', enrolled: '2024-01-05' },
  ],
);

const tables = [courses, enrolments];

interface Example {
  readonly query: string;
  /** PostgreSQL's SQL for the query's rows */
  readonly sql: string;
  /** per facet: its top, and SQL giving each value (null too) with its count, commonest first, ties by value */
  readonly facets?: Readonly<Record<string, { readonly field: string; readonly by?: string; readonly top: number; readonly sql: string }>>;
  /** at least this many rows, so an example cannot pass by giving none */
  readonly rows: number;
}

/** The design's examples, in its order. */
const examples: readonly Example[] = [
  {
    query: 'from courses where credits >= 7 group by subject\nselect subject, count(*) as n, avg(credits) having n > 3 order by n desc limit 10',
    sql: 'SELECT subject, count(*) AS n, avg(credits) AS avg_credits FROM courses WHERE credits >= 7 GROUP BY subject HAVING count(*) > 3 ORDER BY count(*) DESC, subject LIMIT 10',
    rows: 2,
  },
  {
    query: 'from courses group by subject',
    sql: 'SELECT subject, count(*) AS count FROM courses GROUP BY subject ORDER BY subject NULLS LAST',
    rows: 6,
  },
  {
    query:
      'from enrolments e join courses c on e.course = c.code\nwhere c.subject = math group by c.subject, month(e.enrolled)\nselect c.subject, month(e.enrolled) as month, count(*), count(distinct e.student)',
    sql: "SELECT c.subject, date_trunc('month', e.enrolled::timestamp) AS month, count(*) AS count, count(DISTINCT e.student) AS count_distinct_student FROM enrolments e JOIN courses c ON e.course = c.code WHERE c.subject = 'math' GROUP BY 1, 2 ORDER BY 1, 2",
    rows: 3,
  },
  {
    query: 'from courses where stage = active facet subject top 20, start_date by month',
    sql: "SELECT _id, code, subject, credits, stage, start_date::text AS start_date FROM courses WHERE stage = 'active' ORDER BY _id",
    facets: {
      subject: { field: 'subject', top: 20, sql: "SELECT subject AS value, count(*) AS count FROM courses WHERE stage = 'active' GROUP BY 1 ORDER BY 2 DESC, 1" },
      start_date: {
        field: 'start_date',
        by: 'month',
        top: 30,
        sql: "SELECT date_trunc('month', start_date::timestamp) AS value, count(*) AS count FROM courses WHERE stage = 'active' GROUP BY 1 ORDER BY 2 DESC, 1",
      },
    },
    rows: 12,
  },
];

let reference: CkanSql;
let targets: ShapedTargets;

beforeAll(async () => {
  reference = await openCkanSql(tables);
  targets = await openShapedTargets(tables, reference);
}, 120_000);

afterAll(async () => {
  await targets?.close();
  await reference?.close();
});

/** A facet as PostgreSQL's rows count it: the top values, the null count, whether more exist. */
function facetOf(spec: NonNullable<Example['facets']>[string], rows: readonly Row[]): FacetResult {
  const present = rows.filter((r) => r['value'] !== null);
  const nulls = rows.find((r) => r['value'] === null);
  return {
    field: spec.field,
    ...(spec.by === undefined ? {} : { by: spec.by }),
    values: present.slice(0, spec.top).map((r) => ({ value: r['value'] as FacetResult['values'][number]['value'], count: Number(r['count']) })),
    null_count: nulls === undefined ? 0 : Number(nulls['count']),
    more: present.length > spec.top,
  };
}

describe.each(examples)('$query', (example) => {
  it('gives PostgreSQL’s rows on every engine and target', async () => {
    const data = example.query.split(/\s+/)[1]!;
    const { records } = await reference.run(example.sql.replaceAll(':', '\\:'), tables.find((t) => t.aliases[0] === data)!);
    expect(records.length, 'the example has rows to compare').toBeGreaterThanOrEqual(example.rows);
    let facets: Facets | undefined;
    if (example.facets !== undefined) {
      const out: Record<string, FacetResult> = {};
      for (const [name, spec] of Object.entries(example.facets)) out[name] = facetOf(spec, (await reference.run(spec.sql, courses)).records);
      facets = out;
    }
    const c: Case = {
      id: 'spec-examples',
      topic: 'spec-examples',
      query: example.query,
      data,
      mode: 'shaped',
      postgres: example.sql,
      records,
      total: records.length,
      ...(facets === undefined ? {} : { facets }),
    };
    await runShapedCase(c, parse(example.query), targets, tables);
  });
});

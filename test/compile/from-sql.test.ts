import { describe, expect, it } from 'vitest';
import { compile } from '../../src/compile/compile.js';
import { fromRequest } from '../../src/compile/from-request.js';
import { fromSql } from '../../src/compile/from-sql.js';
import { format } from '../../src/format.js';
import { DatastoreError, QueryError } from '../../src/errors.js';

const sqlOf = (query: string): string => compile(query, { target: 'sql' }).sql;
const back = (query: string): string => format(fromSql(sqlOf(query))).replace(/\n/g, ' ');

describe('fromSql reads the sql target back', () => {
  it.each([
    ['from courses where year >= 2020 and stage != retired limit 5', 'from courses where year >= 2020 and stage != retired limit 5'],
    // The limit is always written: a query without one reads back with CKAN's default.
    ['from courses', 'from courses limit 100'],
    [
      'from enrolments where (course = MATH-106 or term = "2024-autumn") and grade between 4 and 5 order by grade desc, student select student, grade limit 6 offset 3',
      'from enrolments select student, grade where (course = MATH-106 or term = "2024-autumn") and grade between 4 and 5 order by grade desc, student limit 6 offset 3',
    ],
    [
      'from e select distinct student, status where status not in (completed, withdrawn) and enrolled_on is not null order by status desc nulls last limit 4',
      'from e select distinct student, status where status not in (completed, withdrawn) and enrolled_on is not null order by status desc nulls last limit 4',
    ],
    ['from e where not (a = 1 or b like "x\\\\_%") order by _id desc', 'from e where not (a = 1 or b like "x\\\\_%") order by _id desc limit 100'],
    // What untyped SQL text cannot keep: "007" stays text, "2020" and "true" are read as the values they spell.
    ['from e where a in ("007", "2020", "true") and b ilike "it\'s"', 'from e where a in ("007", 2020, true) and b ilike "it\'s" limit 100'],
    ['from e where n between 2.5 and 1e21 and m in () and not (k in ())', 'from e where n between 2.5 and 1e+21 and m in () and k not in () limit 100'],
    // Null tests in every spelling come back as `is [not] null`.
    ['from e where a = null and b != null and c in (null, 1) and d in (null)', 'from e where a is null and b is not null and c in (1, null) and d in (null) limit 100'],
    ['from e search "linear alg*" language german', 'from e search "linear alg*" language german limit 100'],
    ['from e where x = 1 search title "linear", code "ma*"', 'from e where x = 1 search title "linear", code "ma*" limit 100'],
    // english is the configuration the sql target writes when a query names none.
    ['from e search "x" language english', 'from e search "x" limit 100'],
    ['from "say \\"hi\\"" where `a"b` = "x\'y" and `_full_text` = z', 'from "say \\"hi\\"" where `a"b` = "x\'y" and _full_text = z limit 100'],
  ])('%s', (query, expected) => {
    expect(back(query)).toBe(expected);
    // Written again, the SQL is the same text.
    expect(sqlOf(format(fromSql(sqlOf(query))))).toBe(sqlOf(query));
  });

  it('reads keywords in any case and any white space', () => {
    const sql = `select  *,COUNT(*) over() as "_ckql_total"\n from "t"\twhere "a" between '1' and '5' order by "_id" limit 3`;
    expect(format(fromSql(sql)).replace(/\n/g, ' ')).toBe('from t where a between 1 and 5 limit 3');
  });

  it('fromRequest reads a datastore_search_sql request', () => {
    expect(format(fromRequest({ sql: sqlOf('from t where a >= 2 limit 1') })).replace(/\n/g, ' ')).toBe('from t where a >= 2 limit 1');
  });

  it('fromRequest refuses a sql request with other keys, or sql that is not text', () => {
    expect(() => fromRequest({ sql: sqlOf('from t'), limit: 5 })).toThrow(DatastoreError);
    expect(() => fromRequest({ sql: 5 })).toThrow(/is text/);
  });
});

describe('fromSql reads back a query that computes', () => {
  it.each([
    [
      'from grades where grade * credits > 10 select student, round(grade / 3.0, 1) as third, upper(subject) || "-" || credits as label order by grade * credits desc nulls last',
      'from grades select student, round(grade / 3.0, 1) as third, upper(subject) || "-" || credits as label where grade * credits > 10 order by grade * credits desc nulls last limit 100',
    ],
    [
      'from t select case when a > 1 then "big" else "small" end as size, cast(a as int) as whole, b::float8 as f, extract(year from d) as y, -3 as m, - a as na',
      'from t select case when a > 1 then "big" else "small" end as size, a::int4 as whole, b::float8 as f, date_part("year", d) as y, -3 as m, -a as na limit 100',
    ],
    // the CASE forms of coalesce, nullif, greatest and least read as the calls; trim is written btrim
    [
      'from t r select coalesce(a, b, 0) as c, nullif(a, 0) as n, greatest(a, b, 3) as g, least(a, 2) as l, trim(s) as s2, concat(s, "!") as e',
      'from t r select coalesce(a, b, 0) as c, nullif(a, 0) as n, greatest(a, b, 3) as g, least(a, 2) as l, trim(s) as s2, concat(s, "!") as e limit 100',
    ],
    [
      'from t group by s, month(d) select s, month(d) as m, round(avg(a), 1) as mean, count(*) * 100.0 / 7 as share, min(a) as lo, count(distinct b) as nb having sum(a) > 2 order by mean desc limit 5',
      'from t select s, month(d) as m, round(avg(a), 1) as mean, count(*) * 100.0 / 7 as share, min(a) as lo, count(distinct b) as nb group by s, month(d) having sum(a) > 2 order by round(avg(a), 1) desc limit 5',
    ],
  ])('%s', (query, expected) => {
    expect(back(query)).toBe(expected);
    expect(compile(fromSql(sqlOf(query)), { target: 'sql' }).sql).toBe(sqlOf(query));
    expect(sqlOf(format(fromSql(sqlOf(query))))).toBe(sqlOf(query));
  });

  it('refuses a join and a distinct of expressions, which it does not read yet', () => {
    expect(() => fromSql(sqlOf('from e a join c b on a.k = b.k select a.x, b.y'))).toThrow(/UNREADABLE_SQL|cannot read/);
    expect(() => fromSql(sqlOf('from t select distinct a + 1 as z'))).toThrow(/cannot read/);
  });
});

describe('fromSql refuses SQL that ckql did not write', () => {
  const total = 'count(*) OVER () AS "_ckql_total"';
  it.each([
    ['SELECT * FROM t', 'FROM', /expected ","/],
    ['DROP TABLE "t"', 'DROP', /expected SELECT/],
    [`SELECT *, ${total} FROM "t" WHERE "a" ~ 'x' ORDER BY "_id" LIMIT 5`, '~', /found "~"/],
    [`SELECT *, ${total} FROM "t" WHERE ("a" = '1' AND "b" = '2' OR "c" = '3') ORDER BY "_id" LIMIT 5`, 'OR', /one of AND, OR/],
    [`SELECT *, ${total} FROM "t" ORDER BY "_id" LIMIT 5; DELETE FROM "t"`, ';', /found ";"/],
    [`SELECT *, ${total} FROM "t" ORDER BY "a" ASC LIMIT 5`, 'LIMIT', /end with "_id"/],
    [`SELECT *, ${total} FROM "t" ORDER BY "_id" LIMIT 50000`, '50000', /at most 32000/],
    [`SELECT *, count(*) OVER () AS "total" FROM "t" ORDER BY "_id" LIMIT 5`, '"total"', /"_ckql_total"/],
    [`SELECT *, ${total} FROM "t" WHERE "a" = 'x ORDER BY "_id" LIMIT 5`, `'x ORDER BY "_id" LIMIT 5`, /closing '/],
    [`SELECT *, ${total} FROM "t" WHERE "_full_text" @@ to_tsquery('english', 'a | b') ORDER BY "_id" LIMIT 5`, "'a | b'", /joined by &/],
    [`SELECT *, ${total} FROM "t" WHERE "_full_text" @@ plainto_tsquery('english', 'alg*') ORDER BY "_id" LIMIT 5`, "'alg*'", /ending in \*/],
    [`SELECT *, ${total} FROM "t" WHERE "a" = NULL ORDER BY "_id" LIMIT 5`, 'NULL', /IS \[NOT\] NULL/],
    [`SELECT *, ${total} FROM "t" WHERE "_full_text" @@ plainto_tsquery('english', 'a') AND "a" = '1' ORDER BY "_id" LIMIT 5`, '"a"', /condition comes before the search/],
  ])('%s', (sql, token, message) => {
    let error: unknown;
    try {
      fromSql(sql);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(QueryError);
    const e = error as QueryError;
    expect(e.code).toBe('UNREADABLE_SQL');
    expect(e.message).toMatch(message);
    expect(e.source).toBe(sql);
    expect(sql.slice(e.span.start, e.span.end)).toBe(token);
    expect(e.hint).toMatch(/--target sql/);
  });
});

describe('fromRequest with the CKAN version', () => {
  it('reads a $$ key as 2.12 does when told so, as 2.11 does by default', () => {
    const request = compile('from t where `$p` in (1)', { target: 'ckan-2.12' });
    expect(request.filters).toEqual({ $$p: [1] });
    expect(format(fromRequest(request, { ckan: '2.12' })).replace(/\n/g, ' ')).toBe('from t where `$p` in (1)');
    expect(format(fromRequest(request)).replace(/\n/g, ' ')).toBe('from t where `$$p` in (1)');
  });
});

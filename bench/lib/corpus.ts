/**
 * Realistic queries for the parse + compile benchmark, each beside the
 * nearest Lucene-style query liqe can read. liqe has no `from`, `select`,
 * `order by`, `limit` or `offset` and no `in` list, so its side is only the
 * filter and the text term (`in` becomes an OR group): it parses less text
 * than we do, which favours liqe.
 */
export interface CorpusQuery {
  readonly ckql: string;
  readonly liqe: string;
}

export const CORPUS: readonly CorpusQuery[] = [
  {
    ckql: 'from courses where subject = math limit 10',
    liqe: 'subject:"math"',
  },
  {
    ckql: 'from 5b3f1c0a-9d2e-4f6b-8a1c-2e7d9b0c4f11 where stage in (active, survey) and subject = math search "linear algebra" limit 10',
    liqe: '(stage:"active" OR stage:"survey") AND subject:"math" AND "linear algebra"',
  },
  {
    ckql: 'from courses where stage in (active, survey, archived) and level = 2 order by start_date desc limit 20',
    liqe: '(stage:"active" OR stage:"survey" OR stage:"archived") AND level:=2',
  },
  {
    ckql: 'from enrolments search "chem-2" limit 50',
    liqe: 'chem-2',
  },
  {
    ckql: 'from movies where `Major Genre` = Drama and `MPAA Rating` in (R, "PG-13") order by `IMDB Rating` desc limit 10',
    liqe: '"Major Genre":"Drama" AND ("MPAA Rating":"R" OR "MPAA Rating":"PG-13")',
  },
  {
    ckql: 'from flights where distance = 1452 and delay in (0, 5, 10) select delay, distance, time',
    liqe: 'distance:=1452 AND (delay:=0 OR delay:=5 OR delay:=10)',
  },
  {
    ckql: 'from courses where (subject = math or subject = physics or subject = computing) and online = true',
    liqe: '(subject:"math" OR subject:"physics" OR subject:"computing") AND online:true',
  },
  {
    ckql: 'from airports where state = CA and country = USA select iata, name, city order by name offset 100 limit 50',
    liqe: 'state:"CA" AND country:"USA"',
  },
  {
    ckql: [
      '-- this year\'s graded chemistry enrolments',
      'from enrolments',
      'where status in (completed, failed)',
      '  and term = "2025-spring"',
      "search 'chem'",
      'order by grade desc, enrolled_on',
      'limit 25 offset 50',
    ].join('\n'),
    liqe: '(status:"completed" OR status:"failed") AND term:"2025-spring" AND chem',
  },
  {
    ckql: 'FROM courses WHERE subject = "physics" AND credits = 5 LIMIT 5',
    liqe: 'subject:"physics" AND credits:=5',
  },
  {
    ckql: 'from courses where subject in (math, biology, chemistry, computing, history, physics, economics, languages) limit 100',
    liqe: 'subject:"math" OR subject:"biology" OR subject:"chemistry" OR subject:"computing" OR subject:"history" OR subject:"physics" OR subject:"economics" OR subject:"languages"',
  },
  {
    ckql: 'from courses where stage = active and level = 4 and subject = history and school = harbour search "empires and their"',
    liqe: 'stage:"active" AND level:=4 AND subject:"history" AND school:"harbour" AND "empires and their"',
  },
];

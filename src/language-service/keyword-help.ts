/**
 * One line of help per keyword, for hover and completion details; the words
 * of docs/language.md, shortened. `test/language-service/hover.test.ts`
 * fails when a keyword of the lexer has no line here.
 */
const help: Readonly<Record<string, string>> = {
  from: 'from <resource>: the resource (an id or alias) to search; every query starts with it',
  where: 'where <conditions>: keep the records that match; join conditions with and / or',
  and: 'and: both conditions must hold (in where), or the upper bound of between',
  or: 'or: either condition may hold; a group mixing and and or needs parentheses',
  order: 'order by <field> [asc|desc] [nulls first|last], …: the order of the records',
  by: 'order by <field>, …, group by <key>, …, facet <field> by <unit>',
  in: 'field in (a, b, …): the field equals one of the values; in () matches nothing',
  search: 'search "text" or search field "text", …: full-text search (CKAN\'s q); a word ending in * matches as a prefix',
  select: 'select [distinct] <field or aggregate> [as name], …: the fields to return, in this order',
  asc: 'asc: ascending order (the default)',
  desc: 'desc: descending order',
  limit: 'limit <n>: at most n records (CKAN caps a request at rows_max, 32000 by default)',
  offset: 'offset <n>: skip the first n records (give an order by for stable pages)',
  true: 'true: the boolean value',
  false: 'false: the boolean value',
  null: 'null: no value; f = null means f is null',
  not: 'not <condition>, f not in (…), f not like …, f is not null: the opposite',
  is: 'f is null, f is not null: whether the field has no value',
  between: 'f between low and high: low <= f <= high, both included',
  like: 'f like "a%": a pattern, % any run of characters, _ one character, \\ escapes',
  ilike: 'f ilike "a%": like, ignoring case',
  distinct: 'select distinct <field>, …: each combination of values once',
  nulls: 'nulls first / nulls last: where records without a value sort',
  first: 'nulls first: records without a value sort before the others',
  last: 'nulls last: records without a value sort after the others',
  language: 'language <name>: the text search configuration (german, english, simple, …)',
  as: 'as <name>: the name of a select item (count(*) as n), or the alias of a resource (from courses as c)',
  join: 'join <resource> [as] <alias> on a.k = b.k: records of both resources whose keys are equal',
  left: 'left join …: every record of the left side, with nulls where the right has no match',
  on: 'on a.k = b.k [and …]: the keys a join matches by equality; null keys never match',
  group: 'group by <field or bucket>, …: one record per distinct key, with aggregates over its records',
  having: 'having <conditions>: keep the groups that match; tests output names and aggregates',
  facet: 'facet <field> [by month|<width>] [top n], …: the top values of each field and their counts',
  top: 'facet <field> top n: how many values a facet gives (default 30, at most 1000)',
  count: 'count(*): the number of records; count(f): non-null values; count(distinct f): distinct non-null values',
  sum: 'sum(f): the sum of the non-null numbers (null when there are none)',
  avg: 'avg(f): the mean of the non-null numbers (null when there are none)',
  min: 'min(f): the smallest non-null value',
  max: 'max(f): the largest non-null value',
  year: "year(f): the bucket: the start of the year a date or timestamp falls in (date_part('year', f) is the year as a number)",
  month: 'month(f): the start of the month a date or timestamp falls in',
  week: 'week(f): the start (Monday) of the ISO week a date or timestamp falls in',
  day: 'day(f): the start of the day a timestamp falls in',
  bucket: 'bucket(f, w): floor(f / w) * w, the start of the width-w range a number falls in',
  case: "case when <condition> then <value> … [else <value>] end: the value of the first condition that holds, else the else value or null",
  when: 'when <condition> then <value>: one branch of a case',
  then: 'then <value>: what a case gives when its when holds',
  else: 'else <value>: what a case gives when no when holds (null without it)',
  end: 'end: closes a case',
  cast: 'cast(x as type): x as text, int, int8, numeric, float8, bool, date or timestamp (also written x::type)',
  extract: "extract(unit from d): date_part('unit', d), a part of a date as a number (year(d) is the bucket)",
  over: 'f(…) over ([partition by e, …] [order by k, …]): a window: the value of f over the rows of the partition, in its order (row_number, rank, dense_rank, lag, lead, count, sum, avg, min, max)',
  partition: "over (partition by e, …): the rows a window counts over are those with the row's values of e, …",
  union: 'from a union b: both as one table (UNION ALL); _resource names each record\'s',
  qualify: 'qualify <conditions>: keep the rows that match once their windows are computed (qualify r <= 3 keeps the top 3 per partition)',
};

/** The help line of a keyword (any case), or a plain one for a keyword not described yet. */
export function keywordHelp(word: string): string {
  const lower = word.toLowerCase();
  return help[lower] ?? `${lower}: a keyword of ckql`;
}

/** Whether `word` has its own help line (checked for every keyword by a test). */
export function hasKeywordHelp(word: string): boolean {
  return Object.hasOwn(help, word.toLowerCase());
}

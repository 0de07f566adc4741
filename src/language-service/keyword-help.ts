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
  by: 'order by <field>, …: the order of the records',
  in: 'field in (a, b, …): the field equals one of the values; in () matches nothing',
  search: 'search "text" or search field "text", …: full-text search (CKAN\'s q); a word ending in * matches as a prefix',
  select: 'select [distinct] <field>, …: the fields to return, in this order',
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

/**
 * The closed list of functions an expression may call (docs/expressions.md):
 * each is on CKAN's default `datastore_search_sql` allow-list, or is written
 * as an SQL construct there (`coalesce`, `nullif`, `greatest`, `least` as
 * `CASE`; `trim` as `btrim`). What the parser, the language service, the SQL
 * writer and the evaluator know of a function is here.
 */
import type { CastType, FunctionName, WindowFunctionName } from '../ast.js';

export interface FunctionInfo {
  readonly name: FunctionName;
  /** the fewest and most arguments (`Infinity`: any number more) */
  readonly min: number;
  readonly max: number;
  /** how it is called, for completion and hover */
  readonly signature: string;
  /** what it gives, PostgreSQL's meaning */
  readonly meaning: string;
  readonly example: string;
}

const info = (name: FunctionName, min: number, max: number, signature: string, meaning: string, example: string): FunctionInfo => ({
  name, min, max, signature, meaning, example,
});

/** Every function, by name. */
export const functions: Readonly<Record<FunctionName, FunctionInfo>> = {
  round: info('round', 1, 2, 'round(x [, n])', 'x rounded to n decimal places (0 unless given); a numeric rounds half away from zero', 'round(avg(grade), 1)'),
  abs: info('abs', 1, 1, 'abs(x)', 'the absolute value of x', 'abs(balance)'),
  floor: info('floor', 1, 1, 'floor(x)', 'the largest whole number not above x', 'floor(price)'),
  ceil: info('ceil', 1, 1, 'ceil(x)', 'the smallest whole number not below x', 'ceil(price)'),
  lower: info('lower', 1, 1, 'lower(s)', 's in lower case', "lower(name) = 'smith'"),
  upper: info('upper', 1, 1, 'upper(s)', 's in upper case', 'upper(code)'),
  length: info('length', 1, 1, 'length(s)', 'the number of characters of s', 'length(title)'),
  trim: info('trim', 1, 1, 'trim(s)', 's without its leading and trailing spaces', 'trim(name)'),
  substr: info('substr', 2, 3, 'substr(s, from [, n])', 'the n characters of s from position from (1 is the first); to the end without n', 'substr(code, 1, 4)'),
  concat: info('concat', 1, Infinity, 'concat(a, b, …)', 'the texts of its arguments one after another, nulls skipped', "concat(first, ' ', last)"),
  coalesce: info('coalesce', 1, Infinity, 'coalesce(a, b, …)', 'the first argument that is not null', 'coalesce(phone, email)'),
  nullif: info('nullif', 2, 2, 'nullif(a, b)', 'null when a equals b, else a', 'nullif(score, 0)'),
  greatest: info('greatest', 1, Infinity, 'greatest(a, b, …)', 'the largest argument, nulls skipped', 'greatest(low, high)'),
  least: info('least', 1, Infinity, 'least(a, b, …)', 'the smallest argument, nulls skipped', 'least(low, high)'),
  date_part: info('date_part', 2, 2, "date_part('unit', d)", "a part of a date as a number: 'year', 'month', 'day', 'hour', …; extract(year from d) is the same (year(d) is the bucket: the year's first day)", "date_part('year', start_date)"),
  date_trunc: info('date_trunc', 2, 2, "date_trunc('unit', d)", "d cut to the start of its 'year', 'month', 'week', 'day', 'hour', …", "date_trunc('month', start_date)"),
};

/** Other spellings a call may use, and the function each names. */
export const functionAliases: Readonly<Record<string, FunctionName>> = { substring: 'substr', ceiling: 'ceil' };

/** The function a name calls, in any case, or undefined. */
export function functionNamed(name: string): FunctionInfo | undefined {
  const lower = name.toLowerCase();
  const fn = Object.hasOwn(functions, lower) ? (lower as FunctionName) : functionAliases[lower];
  return fn === undefined ? undefined : functions[fn];
}

/** The units `date_part` and `date_trunc` take. */
export const dateUnits: readonly string[] = ['year', 'quarter', 'month', 'week', 'day', 'hour', 'minute', 'second', 'dow', 'doy', 'epoch'];

/** Every type `cast` and `::` take, by name; `int` is `int4`, `integer`, `bigint`, … are PostgreSQL's other names. */
export const castTypes: Readonly<Record<string, CastType>> = {
  text: 'text', int: 'int', int4: 'int4', integer: 'int4', int8: 'int8', bigint: 'int8', numeric: 'numeric', decimal: 'numeric',
  float8: 'float8', float: 'float8', bool: 'bool', boolean: 'bool', date: 'date', timestamp: 'timestamp',
};

/** A window function (docs/expressions.md): its arguments, how it is called, what it gives. */
export interface WindowFunctionInfo {
  readonly name: WindowFunctionName;
  readonly min: number;
  readonly max: number;
  readonly signature: string;
  readonly meaning: string;
  readonly example: string;
}

const windowInfo = (name: WindowFunctionName, min: number, max: number, signature: string, meaning: string, example: string): WindowFunctionInfo => ({
  name, min, max, signature, meaning, example,
});

/** The window functions that are no aggregate; `count`, `sum`, `avg`, `min` and `max` take `over` too. */
export const windowFunctions: Readonly<Record<WindowFunctionName, WindowFunctionInfo>> = {
  row_number: windowInfo('row_number', 0, 0, 'row_number() over (…)', "the row's position in its partition, 1 for the first in the window's order (ties numbered in no set order)", 'row_number() over (partition by subject order by grade desc)'),
  rank: windowInfo('rank', 0, 0, 'rank() over (…)', "the row's rank in its partition: ties share a rank, and the next rank skips (1, 1, 3)", 'rank() over (order by points desc)'),
  dense_rank: windowInfo('dense_rank', 0, 0, 'dense_rank() over (…)', "the row's rank in its partition without gaps: ties share a rank (1, 1, 2)", 'dense_rank() over (order by points desc)'),
  lag: windowInfo('lag', 1, 2, 'lag(x [, n]) over (…)', "x of the row n rows before this one in its partition (n is 1 unless given), null where there is none", 'lag(price) over (partition by item order by day)'),
  lead: windowInfo('lead', 1, 2, 'lead(x [, n]) over (…)', "x of the row n rows after this one in its partition (n is 1 unless given), null where there is none", 'lead(price) over (partition by item order by day)'),
};

/** The window function a name calls, in any case, or undefined. */
export function windowFunctionNamed(name: string): WindowFunctionInfo | undefined {
  const lower = name.toLowerCase();
  return Object.hasOwn(windowFunctions, lower) ? windowFunctions[lower as WindowFunctionName] : undefined;
}

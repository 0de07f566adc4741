/**
 * `--param name=value`: the value is read as a query literal would be, so
 * `5` is a number, `true`/`false`/`null` are those values, a quoted
 * `"text"` is that text, and anything else (`math`, `high school`, `007`) is
 * text as typed. The query's own parser decides, so the command line and
 * the language agree on what a literal is.
 */
import { parametersOf } from '../syntax/walk.js';
import type { Scalar } from '../datastore/types.js';
import type { ParamValue } from '../compile/bind.js';
import { literal } from '../compile/dict-filters.js';
import { QueryError, toolError, withHint } from '../errors.js';
import { parse } from '../syntax/parse.js';
import { didYouMean } from './nearest.js';

const PREFIX = 'from x where v = ';

const LIST_PREFIX = 'from x where v in ';

/**
 * A parameter's value from the command line, read like a query literal; a
 * list is written as the language writes one, in parentheses, and binds a
 * parameter that stands in an `in (…)` list.
 * @example readParamValue('2020') // 2020
 * @example readParamValue('"2020"') // "2020"
 * @example readParamValue('linear algebra') // "linear algebra"
 * @example readParamValue('(3, 4)') // [3, 4]
 */
export function readParamValue(text: string): ParamValue {
  if (text.trimStart().startsWith('(')) return readListValue(text) ?? text;
  return readScalarValue(text);
}

function readListValue(text: string): Scalar[] | undefined {
  let condition;
  try {
    condition = parse(LIST_PREFIX + text).where?.condition;
  } catch {
    return undefined;
  }
  if (condition?.kind !== 'in' || condition.span.end !== LIST_PREFIX.length + text.trimEnd().length) return undefined;
  if (condition.values.some((value) => value.kind === 'param')) return undefined;
  return condition.values.map(literal);
}

function readScalarValue(text: string): Scalar {
  let condition;
  try {
    condition = parse(PREFIX + text).where?.condition;
  } catch {
    return text;
  }
  // The literal must be the whole text: `5 limit 1` is text, not 5.
  if (condition?.kind !== 'eq' || condition.value.span.end !== PREFIX.length + text.length) return text;
  return condition.value.kind === 'param' ? text : literal(condition.value);
}

/**
 * Collects `--param name=value` options. A name given twice is an error: the
 * two values cannot both be meant; a list is one value, written in
 * parentheses as the language writes one (`--param "levels=(3, 4)"`).
 * @example readParams(['subject=math', 'year=2020']) // { subject: "math", year: 2020 }
 */
export function readParams(options: readonly string[]): Record<string, ParamValue> {
  const params = Object.create(null) as Record<string, ParamValue>;
  for (const option of options) {
    const equals = option.indexOf('=');
    const name = equals < 0 ? option : option.slice(0, equals);
    const bare = name.startsWith('$') ? name.slice(1) : name;
    if (equals < 0 || !/^[A-Za-z_][A-Za-z0-9_.:-]*$/.test(bare)) {
      throw toolError('USAGE', [`--param expects name=value, found ${JSON.stringify(option)}`], {
        hint: 'for example --param subject=math (a value is read like a query literal: 5, true, null, "text" or text; a list in parentheses: --param "levels=(3, 4)")',
      });
    }
    if (Object.hasOwn(params, bare)) {
      throw toolError('USAGE', [`--param ${bare} is given twice; give each parameter once`]);
    }
    params[bare] = readListedValue(option.slice(equals + 1), `--param ${bare}`);
  }
  return params;
}

/**
 * A value as `readParamValue` reads it, where one that starts with `(` and
 * is no list (`(1,`, `(a b)`) is a usage error naming `where`: it was meant
 * as a list, and bound as text it would match nothing, silently.
 * @example readListedValue('(3, 4)', '--param levels') // [3, 4]
 * @example readListedValue('(3,', '--param levels') // throws USAGE: --param levels: "(3," is not a list of values
 */
export function readListedValue(text: string, where: string): ParamValue {
  const value = readParamValue(text);
  if (text.trimStart().startsWith('(') && !Array.isArray(value)) {
    throw toolError('USAGE', [`${where}: ${JSON.stringify(text)} is not a list of values`], {
      hint: 'write a list as (3, 4) or ("high school", college), closed with ")"; a text that starts with "(" is quoted: "(text)"',
    });
  }
  return value;
}

/**
 * Refuses a value for a parameter the query does not have (a misspelt
 * `--param subjet=…` would otherwise be ignored while a default is used).
 * A query that does not parse is left to the compiler to report.
 * @example refuseUnknownParams('from courses where subject = $subject', ['subjet'], '--param')
 * // throws USAGE: --param subjet: the query has no parameter $subjet (did you mean "subject"?)
 */
export function refuseUnknownParams(text: string, names: Iterable<string>, option: string): void {
  let known: Set<string>;
  try {
    known = new Set(parametersOf(parse(text)).map((parameter) => parameter.name));
  } catch {
    return;
  }
  for (const name of names) {
    if (known.has(name)) continue;
    const listed = [...known].map((each) => `$${each}`).join(', ');
    throw toolError('USAGE', [`${option} ${name}: the query has no parameter $${name}`], {
      hint: didYouMean(name, known) ?? (known.size === 0 ? 'the query has no parameters' : `its parameters: ${listed}`),
    });
  }
}

/** commander's collector for repeatable options. */
export function collect(value: string, previous: readonly string[] = []): string[] {
  return [...previous, value];
}

/**
 * A parameter left without a value, retold with the hint of the place it was
 * run from (`--param s=…`, `.run NAME s=…`) instead of the library's
 * (`compile(query, { s: … })`). Any other error comes back as it is.
 * @example throw withParamHint(error, (name) => `give it a value: --param ${name}=…`)
 */
export function withParamHint(error: unknown, hint: (name: string) => string): unknown {
  if (!(error instanceof QueryError) || error.code !== 'UNBOUND_PARAMETER') return error;
  const name = /\$([A-Za-z_][A-Za-z0-9_.:-]*)/.exec(error.message)?.[1] ?? 'name';
  return withHint(error, hint(name));
}

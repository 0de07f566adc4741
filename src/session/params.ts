/**
 * `--param name=value`: the value is read as a query literal would be, so
 * `5` is a number, `true`/`false`/`null` are those values, a quoted
 * `"text"` is that text, and anything else (`math`, `high school`, `007`) is
 * text as typed. The query's own parser decides, so the command line and
 * the language agree on what a literal is.
 */
import type { Scalar } from '../datastore/types.js';
import { toolError } from '../errors.js';
import { parse } from '../syntax/parse.js';

const PREFIX = 'from x where v = ';

/**
 * @example readParamValue('2020') // 2020
 * @example readParamValue('"2020"') // "2020"
 * @example readParamValue('linear algebra') // "linear algebra"
 */
export function readParamValue(text: string): Scalar {
  let condition;
  try {
    condition = parse(PREFIX + text).where?.condition;
  } catch {
    return text;
  }
  // The literal must be the whole text: `5 limit 1` is text, not 5.
  if (condition?.kind !== 'eq' || condition.value.span.end !== PREFIX.length + text.length) return text;
  const value = condition.value;
  switch (value.kind) {
    case 'string':
    case 'number':
    case 'boolean':
      return value.value;
    case 'null':
      return null;
    case 'param':
      return text;
  }
}

/**
 * Collects repeated `--param name=value` options; a later one wins.
 * @example readParams(['subject=math', 'year=2020']) // { subject: "math", year: 2020 }
 */
export function readParams(options: readonly string[]): Record<string, Scalar> {
  const params = Object.create(null) as Record<string, Scalar>;
  for (const option of options) {
    const equals = option.indexOf('=');
    const name = equals < 0 ? option : option.slice(0, equals);
    const bare = name.startsWith('$') ? name.slice(1) : name;
    if (equals < 0 || !/^[A-Za-z_][A-Za-z0-9_.:-]*$/.test(bare)) {
      throw toolError('USAGE', [`--param expects name=value, found ${JSON.stringify(option)}`], {
        hint: 'for example --param subject=math (a value is read like a query literal: 5, true, null, "text" or text)',
      });
    }
    params[bare] = readParamValue(option.slice(equals + 1));
  }
  return params;
}

/** commander's collector for repeatable options. */
export function collect(value: string, previous: readonly string[] = []): string[] {
  return [...previous, value];
}

/**
 * The `ckql` tagged template: query text with `${…}` values that are always
 * data. Each value becomes a generated parameter in the text, the text is
 * parsed, and the values are bound into the AST, so no value ever reaches the
 * lexer and none can add syntax.
 */
import type { Query } from '../ast.js';
import { QueryError, queryError } from '../errors.js';
import type { Span } from '../span.js';
import { parse } from '../syntax/parse.js';
import { bind } from './bind.js';
import { describeValue } from './parameters.js';
import { parametersOf } from '../syntax/walk.js';
import type { ParamValue } from './bind.js';

/** The generated text's placeholder of one `${…}`. */
interface Placeholder {
  readonly name: string;
  /** where `$name` stands in the generated text */
  readonly span: Span;
  /** 1-based position among the template's values, for messages */
  readonly position: number;
}

const VALUE_TYPES = 'a string, number, boolean or null, or a list of them';

/**
 * Builds a query from a template whose interpolated values are data, never
 * syntax: a value may stand wherever the language takes a value, a resource
 * (`from`), a search text, a `limit` or an `offset`. Strings, numbers,
 * booleans, `null`, and lists of them are accepted; a list stands for the
 * values of `in`, with or without the parentheses (`year in ${years}` and
 * `year in (${years})` are the same; `year in (2019, ${years})` spreads the
 * list among the others).
 *
 * The text between values is read as an ordinary template literal reads it
 * (escapes such as `\`` already resolved), so `` ckql`…` `` means the same as
 * `parse(`…`)` with the values bound. Spans in the result point into the
 * generated text, in which each value stands as a parameter `$__p0`,
 * `$__p1`, …; an error shows the template's own text instead, with `${…}`
 * where each value stands (its `source` and span), and never names `$__p0`.
 *
 * Throws `QueryError`: a parse error (e.g. a value where a field name or a
 * keyword must be, with a hint saying so), `INVALID_PARAMETER` for a value of
 * the wrong type for its place (`limit ${'ten'}`, a list after `=`), and
 * `MISPLACED_INTERPOLATION` for a value inside a quoted string, a backtick
 * field or a comment, where it would silently become part of the text.
 *
 * @example
 * const subject = 'x" or 1=1';
 * compile(ckql`from ${'courses'} where subject = ${subject} and year in ${[2020, 2021]} limit ${10}`);
 * // → { resource_id: "courses",
 * //     filters: { subject: "x\" or 1=1", year: [2020, 2021] }, limit: 10 }
 */
export function ckql(strings: TemplateStringsArray, ...values: readonly ParamValue[]): Query {
  const prefix = placeholderPrefix(strings);
  const params: Record<string, ParamValue> = {};
  const placeholders: Placeholder[] = [];
  let text = chunk(strings, 0);
  values.forEach((value, index) => {
    const name = `${prefix}${index}`;
    const list = /(?:^|[^A-Za-z0-9_.:$`-])in\s*$/i.test(text);
    const start = text.length + (list ? 1 : 0);
    const placeholder: Placeholder = { name, span: { start, end: start + name.length + 1 }, position: index + 1 };
    if (value === undefined) {
      throw templateError(queryError('INVALID_PARAMETER', placeholder.span, [name, VALUE_TYPES, 'undefined'], {
        expected: [VALUE_TYPES],
        found: 'undefined',
        hint: hintFor(placeholder),
      }), text + `$${name}`, [...placeholders, placeholder]);
    }
    params[name] = value;
    placeholders.push(placeholder);
    const next = chunk(strings, index + 1);
    // A space keeps the next text from running on into the parameter's name (`${x}abc`).
    text += (list ? `($${name})` : `$${name}`) + (/^[A-Za-z0-9_.:-]/.test(next) ? ' ' : '') + next;
  });

  let query: Query;
  try {
    query = parse(text);
  } catch (error) {
    if (!(error instanceof QueryError)) throw error;
    const at = placeholders.find((p) => overlaps(p.span, error.span));
    throw templateError(error, text, placeholders, at === undefined ? undefined : hintFor(at, 'syntax'));
  }

  const used = new Set(parametersOf(query).map((param) => param.name));
  const lost = placeholders.find((p) => !used.has(p.name));
  if (lost !== undefined) {
    throw templateError(queryError('MISPLACED_INTERPOLATION', lost.span, [lost.position], {
      found: describeValue(params[lost.name]),
      hint: 'write ${…} where a value goes, without quotes around it: `subject = ${s}`, not `subject = "${s}"`',
    }), text, placeholders);
  }

  try {
    return bind(query, params);
  } catch (error) {
    if (!(error instanceof QueryError)) throw error;
    const at = placeholders.find((p) => overlaps(p.span, error.span));
    throw templateError(error, text, placeholders, at === undefined ? undefined : hintFor(at));
  }
}

/** The text between values as an untagged template reads it (raw where an escape is invalid). */
function chunk(strings: TemplateStringsArray, index: number): string {
  return strings[index] ?? strings.raw[index] ?? '';
}

/** `__p`, with more underscores while the template's own text already uses `$__p`. */
function placeholderPrefix(strings: TemplateStringsArray): string {
  let prefix = '__p';
  while (strings.raw.some((s) => s.includes(`$${prefix}`))) prefix = `_${prefix}`;
  return prefix;
}

function hintFor(placeholder: Placeholder, problem: 'syntax' | 'value' = 'value'): string {
  const which = `this is the value interpolated as \${…} number ${placeholder.position}`;
  return problem === 'syntax'
    ? `${which}; an interpolated value is always a value, so field names and keywords must be written in the template text`
    : which;
}

/** How a value stands in the text an error shows: as the template wrote it. */
const SHOWN = '${…}';

/**
 * The error as the template's author sees it: the source with `${…}` where
 * each value stands (never the generated `$__p0`), spans moved to match, and
 * the placeholder names in the message, hint and found text replaced.
 */
function templateError(error: QueryError, text: string, placeholders: readonly Placeholder[], hint?: string): QueryError {
  const sorted = [...placeholders].sort((a, b) => a.span.start - b.span.start);
  let source = '';
  let from = 0;
  for (const p of sorted) {
    source += text.slice(from, p.span.start) + SHOWN;
    from = p.span.end;
  }
  source += text.slice(from);
  const move = (offset: number): number => {
    let shift = 0;
    for (const p of sorted) {
      if (offset >= p.span.end) shift += SHOWN.length - (p.span.end - p.span.start);
      else if (offset > p.span.start) return p.span.start + shift + (offset === p.span.end ? SHOWN.length : 0);
    }
    return offset + shift;
  };
  const rename = (words: string): string => {
    let out = words;
    for (const p of sorted) {
      out = out
        .replaceAll(`the parameter $${p.name}`, `the value interpolated as ${SHOWN} number ${p.position}`)
        .replaceAll(`parameter $${p.name}`, `the value interpolated as ${SHOWN} number ${p.position}`)
        .replaceAll(`$${p.name}`, SHOWN);
    }
    return out;
  };
  const combined = hint === undefined ? error.hint : error.hint === undefined ? hint : `${error.hint}; ${hint}`;
  return new QueryError(error.code, rename(error.message), { start: move(error.span.start), end: move(error.span.end) }, {
    expected: error.expected.map(rename),
    ...(error.found === undefined ? {} : { found: rename(error.found) }),
    ...(combined === undefined ? {} : { hint: rename(combined) }),
    source,
  });
}

function overlaps(a: Span, b: Span): boolean {
  return a.start < b.end && b.start < a.end || (b.start === b.end && a.start <= b.start && b.start <= a.end);
}

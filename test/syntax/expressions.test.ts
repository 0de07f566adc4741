/**
 * Expressions in the language (docs/expressions.md): the AST they parse
 * to, `parse(format(q))` round trips over generated expressions, the
 * errors at their spans, and precedence checked against PostgreSQL's own
 * reading of the same text (PGlite always; the CI cluster too when
 * `CKQL_TEST_PG_URL` names one).
 */
import { describe, expect, it } from 'vitest';
import type { Expression, Query } from '../../src/ast.js';
import { assertNever } from '../../src/ast.js';
import { QueryError } from '../../src/errors.js';
import { format } from '../../src/format.js';
import { parse } from '../../src/syntax/parse.js';
import { postgresAnswers } from '../helpers/postgres-answers.js';
import { createRandom } from '../../scripts/generate-demo-data.js';

/** The AST without spans: what a round trip must keep. */
function strip(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(strip);
  if (node !== null && typeof node === 'object') {
    return Object.fromEntries(Object.entries(node).filter(([key]) => key !== 'span').map(([key, value]) => [key, strip(value)]));
  }
  return node;
}

function item(text: string): Expression {
  const value = parse(`from t select ${text}`).select!.items[0]!.value;
  if (value.kind === 'star') throw new Error('a star');
  return value;
}

function failure(text: string): QueryError {
  try {
    parse(text);
  } catch (error) {
    if (error instanceof QueryError) return error;
    throw error;
  }
  throw new Error(`expected ${JSON.stringify(text)} not to parse`);
}

/** Expression text over numbers (and text, for `||`), in the syntax ckql and PostgreSQL share. */
function generate(next: () => number, depth: number): string {
  const pick = <T,>(list: readonly T[]): T => list[Math.floor(next() * list.length)]!;
  if (depth <= 0 || next() < 0.25) return pick(['1', '2', '3', '7', '10', '2.5', '0.5', '100.0']);
  switch (pick(['binary', 'binary', 'binary', 'negate', 'paren', 'cast', 'call', 'concat'] as const)) {
    case 'binary':
      return `${generate(next, depth - 1)} ${pick(['+', '-', '*', '/', '%'])} ${generate(next, depth - 1)}`;
    case 'negate':
      return `- ${generate(next, depth - 1)}`;
    case 'paren':
      return `(${generate(next, depth - 1)})`;
    case 'cast':
      return `${pick(['(', ''])}${generate(next, 0)}${''}::${pick(['int', 'numeric', 'int8'])}`.replace(/^\((.*)$/, '($1)');
    case 'call':
      return pick([`abs(${generate(next, depth - 1)})`, `round(${generate(next, depth - 1)})`, `floor(${generate(next, depth - 1)})`]);
    case 'concat':
      return `'n' || ${generate(next, depth - 1)} || 'm'`;
    default:
      throw new Error('unknown choice');
  }
}

/** A generated expression that is not a value alone (a select item never is: `select 7` names no column). */
function generateItem(next: () => number): string {
  for (;;) {
    const text = generate(next, 4);
    if (!/^\(*[\d.]+\)*$/.test(text)) return text;
  }
}

/** PostgreSQL's text of an AST, every operation in parentheses: its meaning without precedence. */
function parenthesised(e: Expression): string {
  switch (e.kind) {
    case 'number':
      return `(${e.text ?? String(e.value)})`;
    case 'string':
      return `'${e.value.replaceAll("'", "''")}'`;
    case 'binary':
      return `(${parenthesised(e.left)} ${e.op} ${parenthesised(e.right)})`;
    case 'negate':
      return `(- ${parenthesised(e.operand)})`;
    case 'cast':
      return `(${parenthesised(e.operand)})::${e.type}`;
    case 'call':
      return `${e.fn}(${e.args.map(parenthesised).join(', ')})`;
    case 'field':
    case 'boolean':
    case 'null':
    case 'param':
    case 'aggregate':
    case 'bucket':
    case 'case':
    case 'window':
      throw new Error(`not generated: ${e.kind}`);
    default:
      return assertNever(e, 'expression');
  }
}

describe('expressions: the AST', () => {
  it('reads precedence as PostgreSQL does: || loosest, then + -, then * / %, then unary -, then ::', () => {
    expect(strip(item('a + b * c'))).toEqual(strip(item('a + (b * c)')));
    expect(strip(item('a - b - c'))).toEqual(strip(item('(a - b) - c')));
    expect(strip(item("a || b + 1"))).toEqual(strip(item('a || (b + 1)')));
    expect(strip(item('-x::int'))).toEqual({ kind: 'negate', operand: { kind: 'cast', operand: { kind: 'field', name: 'x' }, type: 'int', shorthand: true } });
    expect(strip(item('count(*) * 100.0 / 5'))).toEqual({
      kind: 'binary',
      op: '/',
      left: { kind: 'binary', op: '*', left: { kind: 'aggregate', fn: 'count' }, right: { kind: 'number', value: 100, text: '100.0' } },
      right: { kind: 'number', value: 5, text: '5' },
    });
  });

  it('keeps a bareword with a dash one name, and a comparison with a value the node it always was', () => {
    expect(strip(item('MATH-106'))).toEqual({ kind: 'field', name: 'MATH-106' });
    expect(strip(parse('from t where region = north').where!.condition)).toEqual({ kind: 'eq', field: { kind: 'field', name: 'region' }, value: { kind: 'string', value: 'north' } });
    expect(strip(parse('from t where lower(region) = north').where!.condition)).toEqual({
      kind: 'comparison',
      op: 'eq',
      left: { kind: 'call', fn: 'lower', args: [{ kind: 'field', name: 'region' }] },
      right: { kind: 'string', value: 'north' },
    });
    expect(strip(item('qty::int'))).toEqual({ kind: 'cast', operand: { kind: 'field', name: 'qty' }, type: 'int', shorthand: true });
  });

  it('reads extract(unit from d) as date_part, and a case with its conditions', () => {
    expect(strip(item('extract(year from d)'))).toEqual(strip(item("date_part('year', d)")));
    expect(strip(item("case when a > 1 and b = x then 'big' else 'small' end"))).toMatchObject({ kind: 'case', whens: [{ condition: { kind: 'and' } }], else: { kind: 'string', value: 'small' } });
  });
});

describe('expressions: errors at their spans', () => {
  it.each([
    ['from t select roundd(x, 1)', 'UNKNOWN_FUNCTION', 'roundd', 'round'],
    ['from t select round(x, 1, 2)', 'WRONG_ARGUMENT_COUNT', 'round(x, 1, 2)', 'round(x [, n])'],
    ['from t select x::integr', 'UNKNOWN_TYPE', 'integr', 'integer'],
    ["from t select date_part('yaer', d)", 'UNKNOWN_UNIT', "'yaer'", 'year'],
    ['from t where count(*) * 2 > 3', 'AGGREGATE_IN_WHERE', 'count(*)', 'having'],
    ['from t where a + 1 in (1, 2)', 'EXPRESSION_TEST', 'a + 1', 'or'],
  ])('%s → %s', (text, code, token, hint) => {
    const error = failure(text);
    expect(error.code).toBe(code);
    expect(text.slice(error.span.start, error.span.end)).toBe(token);
    expect(error.hint ?? '').toContain(hint);
  });
});

describe('expressions: parse(format(q)) is q', () => {
  const cases = [
    'from t select round(avg(grade), 1) as g, subject group by subject order by round(avg(grade), 1) desc',
    'from t select *, price * qty as total where price * qty > 100 and region = north',
    "from t select date_part('year', d) as y, qty::int, cast(x as numeric), - x, a - -3, (a + b)::text",
    "from t select case when a = 1 and b > 2 then 'x' when c is null then 'y' else 'z' end",
    'from t where (a + b) * 2 > 3 or (c = 1) ',
    'from t where a = `b` and lower(name) = smith',
    "from t select coalesce(a, b, 0), nullif(a, 0), greatest(a, b), least(a, b), concat(a, '-', b), substr(s, 2, 3), trim(s), length(s), upper(s)",
  ];
  it.each(cases)('%s', (text) => {
    const query = parse(text);
    expect(strip(parse(format(query)))).toEqual(strip(query));
  });

  it('holds for generated expressions', () => {
    const next = createRandom(31);
    for (let i = 0; i < 300; i++) {
      const text = `from t select ${generateItem(next)} as v`;
      const query: Query = parse(text);
      expect(strip(parse(format(query))), text).toEqual(strip(query));
    }
  });
});

/** PostgreSQL's value of each SQL expression as text (or its error), from PGlite and, when one is named, the CI cluster. */
async function answers(texts: readonly string[]): Promise<string[][]> {
  // One statement for all: a function evaluates each text, and a failure is its message.
  const define = `CREATE OR REPLACE FUNCTION pg_temp.ckql_eval(sql text) RETURNS text AS $$
    DECLARE r text; BEGIN EXECUTE 'SELECT (' || sql || ')::text' INTO r; RETURN coalesce(r, 'null');
    EXCEPTION WHEN others THEN RETURN 'error: ' || SQLERRM; END $$ LANGUAGE plpgsql`;
  const select = 'SELECT pg_temp.ckql_eval(x) AS v FROM unnest($1::text[]) WITH ORDINALITY AS t(x, i) ORDER BY i';
  return postgresAnswers(define, select, texts);
}

describe("expressions: precedence is PostgreSQL's", () => {
  it('gives the value PostgreSQL gives the same text, for generated expressions', async () => {
    const next = createRandom(7);
    const texts = Array.from({ length: 300 }, () => generateItem(next));
    const both = await answers([...texts.map((text) => parenthesised(item(text))), ...texts]);
    for (const answer of both) {
      const ours = answer.slice(0, texts.length);
      const theirs = answer.slice(texts.length);
      texts.forEach((text, i) => expect(ours[i], text).toBe(theirs[i]));
      // most of them have a value (a division by zero is the same error on both)
      expect(theirs.filter((v) => !v.startsWith('error')).length).toBeGreaterThan(200);
    }
  });
});

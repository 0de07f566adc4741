/**
 * The memory engine's expressions against PostgreSQL's own evaluation of
 * the same text (docs/expressions.md): generated expressions over
 * generated rows (nulls, integers, decimals beyond a double, floats,
 * Unicode text), value and type equal, an error where PostgreSQL errs.
 * A record's value (`output`, by the scaled path where it has one) is the
 * exact path's (`run`), error included.
 * PostgreSQL is PGlite, and the CI cluster too when `CKQL_TEST_PG_URL`
 * names one.
 */
import { describe, expect, it } from 'vitest';
import type { Expression } from '../../../src/ast.js';
import type { ValueType } from '../../../src/compile/expression-types.js';
import { compileExpression, outputValue, valueText, type Compiled, type Computed } from '../../../src/engine/memory/expression.js';
import { parse } from '../../../src/syntax/parse.js';
import { postgresAnswers } from '../../helpers/postgres-answers.js';

/** The rows, as PostgreSQL reads them and as the memory engine holds them (a numeric beyond a double as its text). */
const rows = [
  { id: 1, i: 7, n: '1.50', d: 32.41, f: 0.5, t: 'abc' },
  { id: 2, i: -3, n: '-2.25', d: -0.07, f: -1.25, t: ' Äb ' },
  { id: 3, i: 0, n: '0', d: 0, f: 3, t: '' },
  { id: 4, i: null, n: '12345678901234567890.123', d: 9007199254740991, f: null, t: null },
  { id: 5, i: 2147483647, n: null, d: null, f: 1e-7, t: 'x y' },
  { id: 6, i: 10, n: '0.1', d: 123456.785, f: 2.5, t: 'Zürich' },
] as const;
type Row = (typeof rows)[number];
const types: Readonly<Record<string, ValueType>> = { i: 'int4', n: 'numeric', d: 'numeric', f: 'float8', t: 'text' };
const pgTypes: Readonly<Record<ValueType, string>> = {
  int4: 'integer', int8: 'bigint', numeric: 'numeric', float8: 'double precision', text: 'text', bool: 'boolean', date: 'date',
  timestamp: 'timestamp without time zone', json: 'json', unknown: 'unknown',
};

function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function numberExpression(next: () => number, depth: number): string {
  const pick = <T,>(list: readonly T[]): T => list[Math.floor(next() * list.length)]!;
  if (depth <= 0 || next() < 0.3) return pick(['i', 'n', 'f', 'i', 'n', 'd', 'd', '2', '3', '100.0', '0.25', '7']);
  const a = (): string => numberExpression(next, depth - 1);
  return pick([
    () => `${a()} ${pick(['+', '-', '*', '/', '%'])} ${a()}`,
    () => `${a()} ${pick(['+', '-', '*', '/'])} ${a()}`,
    () => `- ${a()}`,
    () => `abs(${a()})`,
    () => `round(${a()})`,
    () => `round(${a()}, ${pick(['0', '1', '2', '-1'])})`,
    () => `floor(${a()})`,
    () => `ceil(${a()})`,
    () => `coalesce(${a()}, ${a()})`,
    () => `nullif(${a()}, ${a()})`,
    () => `${pick(['greatest', 'least'])}(${a()}, ${a()})`,
    // a bareword alone on the right of a comparison is a value in ckql, so the right side is never one
    () => `case when ${pick(['i', 'n', 'f'])} > ${a()} + 0 then ${a()} else ${a()} end`,
    () => `(${a()})::${pick(['numeric', 'int', 'int8', 'float8'])}`,
    () => `length(${textExpression(next, depth - 1)})`,
  ])();
}

function textExpression(next: () => number, depth: number): string {
  const pick = <T,>(list: readonly T[]): T => list[Math.floor(next() * list.length)]!;
  if (depth <= 0 || next() < 0.4) return pick(['t', "'q'", 't']);
  const s = (): string => textExpression(next, depth - 1);
  return pick([
    () => `lower(${s()})`,
    () => `upper(${s()})`,
    () => `trim(${s()})`,
    () => `substr(${s()}, ${pick(['0', '1', '2'])}${pick(['', ', 2', ', 0'])})`,
    () => `${s()} || ${numberExpression(next, depth - 1)}`,
    () => `concat(${s()}, ${numberExpression(next, depth - 1)})`,
    () => `coalesce(${s()}, 'none')`,
  ])();
}

/** Ours: each expression at each row, as `value|type`, or `error`. */
function ours(text: string, row: Row): string {
  let expression: Expression;
  let compiled: Compiled<Row>;
  try {
    const value = parse(`from r select ${text}`).select!.items[0]!.value;
    if (value.kind === 'star') throw new Error('star');
    expression = value;
    compiled = compileExpression<Row>(expression, {
      read: (leaf) => (leaf.kind === 'field' ? (r) => r[leaf.name as 'i'] : () => null),
      type: (leaf) => (leaf.kind === 'field' ? types[leaf.name]! : 'unknown'),
    });
  } catch {
    return 'error';
  }
  let value2: Computed;
  try {
    value2 = compiled.run(row);
  } catch {
    expect(() => compiled.output(row)).toThrow();
    return 'error';
  }
  // what a record holds reads back as the same value, by either path
  expect(outputValue(value2) === null).toBe(value2 === null);
  expect(compiled.output(row)).toEqual(outputValue(value2));
  return `${valueText(value2, compiled.type) ?? 'null'}|${pgTypes[compiled.type]}`;
}

/** PostgreSQL's: the same text over the same row, as `value|type`, or `error`. */
async function theirs(texts: readonly string[]): Promise<string[][]> {
  const setup = `
    CREATE TEMP TABLE r (id int, i int4, n numeric, d numeric, f float8, t text);
    INSERT INTO r VALUES ${rows.map((r) => `(${r.id}, ${r.i ?? 'NULL'}, ${r.n === null ? 'NULL' : `'${r.n}'`}, ${r.d ?? 'NULL'}, ${r.f ?? 'NULL'}, ${r.t === null ? 'NULL' : `'${r.t}'`})`).join(', ')};
    CREATE FUNCTION pg_temp.ckql_eval(sql text, row_id int) RETURNS text AS $$
      DECLARE v text; ty text;
      BEGIN
        EXECUTE 'SELECT (' || sql || ')::text, pg_typeof(' || sql || ')::text FROM r WHERE id = $1' INTO v, ty USING row_id;
        RETURN coalesce(v, 'null') || '|' || ty;
      EXCEPTION WHEN others THEN RETURN 'error';
      END $$ LANGUAGE plpgsql;`;
  const select = 'SELECT pg_temp.ckql_eval(e, r.id) AS v FROM unnest($1::text[]) WITH ORDINALITY AS x(e, k), (SELECT id FROM r) AS r ORDER BY k, r.id';
  return postgresAnswers(setup, select, texts, 'DROP TABLE r');
}

describe("the memory engine's expressions are PostgreSQL's", () => {
  it('gives the value and type PostgreSQL gives, or an error where it errs', async () => {
    const next = random(31);
    const texts = [
      ...Array.from({ length: 120 }, () => numberExpression(next, 3)),
      ...Array.from({ length: 30 }, () => textExpression(next, 3)),
      'count_star_share', // a field no row has: null in both
    ].filter((text) => text !== 'count_star_share' && text !== "'q'"); // a string alone is no select item
    const expected = await theirs(texts);
    const mine = texts.flatMap((text) => rows.map((row) => `${text} → ${ours(text, row)}`));
    for (const answer of expected) {
      const wanted = texts.flatMap((text, k) => rows.map((_, j) => `${text} → ${answer[k * rows.length + j]!}`));
      expect(mine).toEqual(wanted);
      // most have a value
      expect(answer.filter((v) => v !== 'error').length).toBeGreaterThan(answer.length / 2);
    }
  });
});

/**
 * The memory engine's expressions against PostgreSQL's own evaluation of
 * the same text (docs/expressions.md): generated expressions over
 * generated rows (nulls, integers, decimals beyond a double, floats,
 * Unicode text), value and type equal, an error where PostgreSQL errs;
 * and aggregates of generated expressions (`sum(i * n)`, `count(distinct
 * lower(t))`) over the rows, answered by the memory engine's whole query.
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
import { memoryEngine } from '../../../src/engine/memory/engine.js';
import type { FieldType, JsonValue } from '../../../src/datastore/types.js';
import { QueryError } from '../../../src/errors.js';
import { postgresAnswers } from '../../helpers/postgres-answers.js';
import { tableOf } from '../../helpers/tables.js';
import { createRandom } from '../../../scripts/generate-demo-data.js';

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
    const next = createRandom(31);
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

/** The rows as a resource of the memory engine, its fields typed as PostgreSQL's table holds them. */
const table = tableOf({
  name: 'r',
  fields: [{ id: 'i', type: 'int4' }, { id: 'n', type: 'numeric' }, { id: 'd', type: 'numeric' }, { id: 'f', type: 'float8' }, { id: 't', type: 'text' }],
  rows: rows.map(({ i, n, d, f, t }) => ({ i, n, d, f, t })),
});
const pgFieldTypes: Readonly<Record<string, string>> = { int4: 'integer', int: 'integer', int8: 'bigint', numeric: 'numeric', float8: 'double precision', text: 'text' };

/** A generated aggregate of a generated expression, in the syntax ckql and PostgreSQL share. */
function aggregateText(next: () => number): string {
  const pick = <T,>(list: readonly T[]): T => list[Math.floor(next() * list.length)]!;
  const number = numberExpression(next, 2);
  const text = textExpression(next, 2);
  return pick([
    `sum(${number})`, `sum(${number})`, `avg(${number})`, `avg(${number})`, `min(${number})`, `max(${number})`,
    `count(${number})`, `count(distinct ${number})`, `min(${text})`, `max(${text})`, `count(distinct ${text})`, `sum(${text})`,
  ]);
}

/** Ours: the memory engine's answer to `from r select <aggregate> as v`, as `value|type`, or `error`. */
async function ourAggregate(text: string): Promise<string> {
  try {
    const stream = await memoryEngine([table]).query(parse(`from r select ${text} as v`), {});
    const records: JsonValue[] = [];
    for await (const batch of stream.batches) for (const record of batch) records.push(record['v'] ?? null);
    const type = stream.fields.find((f) => f.id === 'v')!.type;
    return `${records[0] === null ? 'null' : String(records[0])}|${pgFieldTypes[type as FieldType] ?? type}`;
  } catch (error) {
    if (!(error instanceof QueryError) && !(error instanceof Error && 'status' in error)) throw error;
    return 'error';
  }
}

/** Two answers agree: the same type, and the same value (a numeric by its value, whatever its scale; avg's to 1e-12 relative). */
function sameAnswer(ours: string, theirs: string, text: string): boolean {
  if (ours === 'error' || theirs === 'error') return ours === theirs;
  const [a, typeA] = ours.split('|') as [string, string];
  const [b, typeB] = theirs.split('|') as [string, string];
  if (typeA !== typeB) return false;
  if (a === 'null' || b === 'null' || typeA === 'text') return a === b;
  if (text.startsWith('avg(') && typeA === 'numeric') return Math.abs(Number(a) - Number(b)) <= 1e-12 * Math.max(1, Math.abs(Number(b)));
  return typeA === 'numeric' ? exactDecimal(a) === exactDecimal(b) : Number(a) === Number(b);
}

/** A decimal's text without its scale's trailing zeros. */
function exactDecimal(text: string): string {
  return text.includes('.') ? text.replace(/0+$/, '').replace(/\.$/, '') : text;
}

describe("the memory engine's aggregates of expressions are PostgreSQL's", () => {
  it('gives the value and type PostgreSQL gives, or an error where it errs', async () => {
    const next = createRandom(47);
    // an argument that reads no field (count(7)) is refused by ckql on purpose (docs/expressions.md)
    const texts = Array.from({ length: 150 }, () => aggregateText(next)).filter((text) => /\b[indft]\b/.test(text));
    const setup = `
      CREATE TEMP TABLE r (id int, i int4, n numeric, d numeric, f float8, t text);
      INSERT INTO r VALUES ${rows.map((r) => `(${r.id}, ${r.i ?? 'NULL'}, ${r.n === null ? 'NULL' : `'${r.n}'`}, ${r.d ?? 'NULL'}, ${r.f ?? 'NULL'}, ${r.t === null ? 'NULL' : `'${r.t}'`})`).join(', ')};
      CREATE FUNCTION pg_temp.ckql_aggregate(sql text) RETURNS text AS $$
        DECLARE v text; ty text;
        BEGIN
          EXECUTE 'SELECT (' || sql || ')::text, pg_typeof(' || sql || ')::text FROM r' INTO v, ty;
          RETURN coalesce(v, 'null') || '|' || ty;
        EXCEPTION WHEN others THEN RETURN 'error';
        END $$ LANGUAGE plpgsql;`;
    const select = 'SELECT pg_temp.ckql_aggregate(e) AS v FROM unnest($1::text[]) WITH ORDINALITY AS x(e, k) ORDER BY k';
    const expected = await postgresAnswers(setup, select, texts, 'DROP TABLE r');
    const mine = await Promise.all(texts.map(ourAggregate));
    for (const answer of expected) {
      texts.forEach((text, k) => expect(sameAnswer(mine[k]!, answer[k]!, text), `${text}: ours ${mine[k]}, PostgreSQL's ${answer[k]}`).toBe(true));
      // most have a value, and errors are among them (sum of text, a division by zero)
      expect(answer.filter((v) => v !== 'error').length).toBeGreaterThan(answer.length / 2);
    }
  });
});

/**
 * Small literal tables for the server and client tests: a public one, a
 * private one, one with awkward field names, and one larger than a page.
 */
import type { FieldInfo, Row, Table } from '../../src/datastore/types.js';

type Values = Record<string, string | number | boolean | null>;

export function makeTable(
  id: string,
  aliases: readonly string[],
  fields: readonly FieldInfo[],
  rows: readonly Values[],
  extra: Partial<Table> = {},
): Table {
  return {
    id,
    aliases,
    fields: [{ id: '_id', type: 'int' }, ...fields],
    rows: rows.map((row, index): Row => ({ _id: index + 1, ...row })),
    ...extra,
  };
}

export const COURSES_ID = '5b3f1c0a-9d2e-4f6b-8a1c-2e7d9b0c4f11';
export const GRADES_ID = '0c2d1e8f-3b4a-4c5d-9e6f-7a8b9c0d1e2f';
export const ODD_ID = '7e6d5c4b-3a29-4817-9605-f4e3d2c1b0a9';
export const BIG_ID = '1a2b3c4d-5e6f-4a8b-9c0d-1e2f3a4b5c6d';

export const courses = makeTable(
  COURSES_ID,
  ['courses'],
  [
    { id: 'subject', type: 'text' },
    { id: 'stage', type: 'text' },
    { id: 'title', type: 'text' },
    { id: 'year', type: 'int' },
  ],
  [
    { subject: 'math', stage: 'active', title: 'Linear Algebra', year: 2021 },
    { subject: 'math', stage: 'survey', title: 'Abstract Algebra', year: 2022 },
    { subject: 'physics', stage: 'active', title: 'Mechanics', year: 2021 },
    { subject: 'chemistry', stage: 'archived', title: 'Organic Chemistry', year: 2019 },
    { subject: 'math', stage: 'archived', title: 'Calculus', year: 2020 },
    { subject: 'physics', stage: 'survey', title: 'Quantum Algebra', year: null },
  ],
);

/** Private: its values must never show up in an answer without the token. */
export const grades = makeTable(
  GRADES_ID,
  ['grades'],
  [
    { id: 'student', type: 'text' },
    { id: 'grade', type: 'text' },
  ],
  [
    { student: 'SECRET-ada', grade: 'A+' },
    { student: 'SECRET-bob', grade: 'C' },
  ],
  { private: true },
);

/** Field names that are JavaScript's own property names, or need quoting. */
export const odd = makeTable(
  ODD_ID,
  ['odd'],
  [
    { id: 'constructor', type: 'text' },
    { id: 'toString', type: 'text' },
    { id: 'school, year', type: 'text' },
    { id: 'note', type: 'text' },
  ],
  [
    { constructor: 'a', toString: 'x', 'school, year': '2020/21', note: '"quoted" text' },
    { constructor: 'b', toString: 'y', 'school, year': '2021/22', note: 'plain' },
  ],
);

/** 2 500 rows: more than one page of 1 000. */
export const big = makeTable(
  BIG_ID,
  ['big'],
  [
    { id: 'n', type: 'int' },
    { id: 'parity', type: 'text' },
  ],
  Array.from({ length: 2_500 }, (_, i) => ({ n: i, parity: i % 2 === 0 ? 'even' : 'odd' })),
);

export const TOKEN = 'tok-3f9a1c77e0b24d5e';

export const TEXTS_ID = '3c4d5e6f-7a8b-4c9d-8e0f-1a2b3c4d5e6f';

/**
 * Texts that a GET query string cannot carry as they are: a leading quote or
 * brace (the server reads `q` that looks like JSON as JSON) and a lone
 * surrogate (percent-encoding turns it into U+FFFD).
 */
export const texts = makeTable(
  TEXTS_ID,
  ['texts'],
  [{ id: 'note', type: 'text' }],
  [
    { note: '"quoted" at the start' },
    { note: '{x} braces' },
    { note: '{"title": "x"} as JSON' },
    { note: 'a lone \ud800 half' },
    { note: 'replacement \ufffd char' },
    { note: ' "spaced quote' },
    { note: 'plain' },
  ],
);

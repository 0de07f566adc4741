/**
 * The committed demo data is exactly what the committed script writes, and
 * it has the shape the README's examples rely on.
 */
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadResources } from '../../src/engine/node/load-resources.js';
import type { Table } from '../../src/datastore/types.js';
import { createRandom, defaultDemoDataOptions, generateDemoData, main } from '../../scripts/generate-demo-data.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const committed = join(root, 'examples', 'data');
let scratch: string;

beforeAll(() => {
  scratch = mkdtempSync(join(tmpdir(), 'ckql-demo-'));
});

afterAll(() => {
  rmSync(scratch, { recursive: true, force: true });
});

describe('scripts/generate-demo-data.ts', () => {
  it('reproduces the committed files byte for byte', async () => {
    const out = join(scratch, 'again');
    await generateDemoData({ ...defaultDemoDataOptions, out });
    const names = readdirSync(committed).sort();
    expect(names).toEqual(['courses.csv', 'datapackage.json', 'enrolments.csv', 'schools.json']);
    for (const name of names) {
      expect(readFileSync(join(out, name)).equals(readFileSync(join(committed, name))), name).toBe(true);
    }
  });

  it('writes a scaled enrolments file from the command line', async () => {
    const out = join(scratch, 'scaled');
    // Its command line in this process (a tsx child spent most of a second of CPU transpiling the script again).
    let said = '';
    await main(['--rows', '1234', '--out', out], (text) => (said += text));
    expect(said).toBe(`wrote courses.csv, enrolments.csv (1234 rows), schools.json and datapackage.json to ${out}\n`);
    const lines = readFileSync(join(out, 'enrolments.csv'), 'utf8').trimEnd().split('\n');
    expect(lines[0]).toBe('student,course,term,status,grade,enrolled_on');
    expect(lines).toHaveLength(1235);
    // courses do not depend on the row count
    expect(readFileSync(join(out, 'courses.csv')).equals(readFileSync(join(committed, 'courses.csv')))).toBe(true);
  });

  it('draws from a seeded generator: same seed, same numbers', () => {
    const a = createRandom(7);
    const b = createRandom(7);
    const c = createRandom(8);
    const first = Array.from({ length: 5 }, a);
    expect(Array.from({ length: 5 }, b)).toEqual(first);
    expect(Array.from({ length: 5 }, c)).not.toEqual(first);
    for (const value of first) expect(value >= 0 && value < 1).toBe(true);
  });
});

describe('the demo data', () => {
  let tables: Map<string, Table>;

  beforeAll(async () => {
    const loaded = await loadResources([committed]);
    tables = new Map(loaded.map((table) => [table.aliases[0] ?? table.id, table]));
  });

  it('has courses with typed fields, empty cells and titles beyond ASCII', () => {
    const courses = tables.get('courses');
    expect(courses).toBeDefined();
    if (courses === undefined) return;
    expect(courses.rows.length).toBeGreaterThanOrEqual(200);
    expect(courses.rows.length).toBeLessThanOrEqual(500);
    const types = Object.fromEntries(courses.fields.map((field) => [field.id, field.type]));
    expect(types).toEqual({
      _id: 'int',
      code: 'text',
      title: 'text',
      subject: 'text',
      stage: 'text',
      level: 'int4',
      credits: 'numeric',
      online: 'bool',
      start_date: 'date',
      school: 'text',
      instructor: 'text',
    });
    const values = (field: string): Set<unknown> => new Set(courses.rows.map((row) => row[field]));
    expect(values('stage')).toEqual(new Set(['active', 'survey', 'archived', 'planned']));
    for (const subject of ['math', 'physics', 'biology', 'history']) expect(values('subject')).toContain(subject);
    for (const field of ['credits', 'online', 'start_date', 'instructor']) expect(values(field)).toContain(null);
    expect(values('title')).toContain("Éléments d'algèbre linéaire");
    expect([...values('code')]).toHaveLength(courses.rows.length);
    const linearAlgebra = courses.rows.filter((row) => String(row.title).toLowerCase().includes('linear algebra'));
    expect(linearAlgebra.length).toBeGreaterThanOrEqual(5);
  });

  it('has about 20 000 enrolments in courses that exist, and schools that the courses name', () => {
    const enrolments = tables.get('enrolments');
    const courses = tables.get('courses');
    const schools = tables.get('schools');
    if (enrolments === undefined || courses === undefined || schools === undefined) throw new Error('a demo table is missing');
    expect(enrolments.rows).toHaveLength(20_000);
    const codes = new Set(courses.rows.map((row) => row.code));
    expect(enrolments.rows.every((row) => codes.has(row.course))).toBe(true);
    const schoolIds = new Set(schools.rows.map((row) => row.id));
    expect(courses.rows.every((row) => schoolIds.has(row.school))).toBe(true);
    expect(readFileSync(join(committed, 'enrolments.csv')).length).toBeLessThan(2 * 1024 * 1024);
  });
});

/**
 * Writes the demo data in `examples/data/`: the resources every README
 * example and `npm start` run against, offline.
 *
 *   tsx scripts/generate-demo-data.ts                         # the committed files
 *   tsx scripts/generate-demo-data.ts --rows 1000000 --out /tmp/big   # benchmark scale
 *
 * Output is a pure function of `--seed` and `--rows`: a seeded PRNG and a
 * fixed reference date, never `Math.random` or the clock, so running it again
 * reproduces the committed files byte for byte (a test checks this).
 *
 * - `courses.csv`: a few hundred courses (subject, stage, level, credits,
 *   online, start date, school, instructor), some cells empty, some titles
 *   and names outside ASCII, including wide CJK characters.
 * - `enrolments.csv`: students enrolled in courses, `--rows` of them.
 * - `schools.json`: the schools the courses belong to, as a JSON array.
 * - `datapackage.json`: the three as one dataset (`university`), so the
 *   catalogue of `ckql serve` and `ckql datasets` have a name and a title to show.
 */
import { createWriteStream, mkdirSync, writeFileSync } from 'node:fs';
import { once } from 'node:events';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { stringify } from 'csv-stringify/sync';

export interface DemoDataOptions {
  /** directory to write into; created when missing */
  readonly out: string;
  /** number of enrolment records */
  readonly rows: number;
  readonly seed: number;
}

export const defaultDemoDataOptions: DemoDataOptions = {
  out: fileURLToPath(new URL('../examples/data/', import.meta.url)),
  rows: 20_000,
  seed: 20_240_902,
};

/** A small, fast, seedable PRNG (mulberry32): the same seed gives the same sequence everywhere. */
export function createRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

interface Picker {
  readonly random: () => number;
  int(min: number, max: number): number;
  pick<T>(items: readonly T[]): T;
  weighted<T>(items: readonly (readonly [T, number])[]): T;
  chance(p: number): boolean;
}

function createPicker(seed: number): Picker {
  const random = createRandom(seed);
  return {
    random,
    int: (min, max) => min + Math.floor(random() * (max - min + 1)),
    pick: (items) => {
      const item = items[Math.floor(random() * items.length)];
      if (item === undefined) throw new Error('pick from an empty list');
      return item;
    },
    weighted: (items) => {
      const total = items.reduce((sum, [, weight]) => sum + weight, 0);
      let point = random() * total;
      for (const [item, weight] of items) {
        point -= weight;
        if (point < 0) return item;
      }
      const last = items.at(-1);
      if (last === undefined) throw new Error('weighted pick from an empty list');
      return last[0];
    },
    chance: (p) => random() < p,
  };
}

interface School {
  readonly id: string;
  readonly name: string;
  readonly city: string;
  readonly country: string;
  readonly founded: number;
  readonly students: number;
}

const schools: readonly School[] = [
  { id: 'aurora', name: 'Aurora University', city: 'Tromsø', country: 'NO', founded: 1968, students: 17_400 },
  { id: 'lumiere', name: 'Université Lumière du Rhône', city: 'Lyon', country: 'FR', founded: 1896, students: 29_800 },
  { id: 'suedstadt', name: 'Technische Hochschule Südstadt', city: 'Köln', country: 'DE', founded: 1971, students: 12_100 },
  { id: 'valle-alto', name: 'Universidad del Valle Alto', city: 'Córdoba', country: 'AR', founded: 1613, students: 41_000 },
  { id: 'harbour', name: 'Harbour City College', city: 'Wellington', country: 'NZ', founded: 1899, students: 8_300 },
  { id: 'tokai', name: '東海科学大学 (Tōkai Science University)', city: '名古屋', country: 'JP', founded: 1949, students: 15_600 },
  { id: 'vistula', name: 'Uniwersytet Nadwiślański', city: 'Kraków', country: 'PL', founded: 1919, students: 22_900 },
  { id: 'lakeside', name: 'Lakeside Institute of Technology', city: 'Madison', country: 'US', founded: 1952, students: 9_700 },
];

/**
 * Titles per subject, from introductory to advanced: a title's position sets
 * the course level, so "Calculus I" is level 1 and "Functional Analysis" 4.
 */
const titles: Readonly<Record<string, readonly string[]>> = {
  math: [
    'Calculus I', 'Linear Algebra I', 'Discrete Mathematics', 'Éléments d\'algèbre linéaire',
    'Calculus II', 'Linear Algebra II', 'Probability', 'Lineare Algebra für Ingenieure',
    'Applied Linear Algebra', 'Ordinary Differential Equations', 'Graph Theory', 'Análisis matemático',
    'Real Analysis', 'Abstract Algebra', 'Number Theory', 'Einführung in die Zahlentheorie',
    'Numerical Linear Algebra', 'Complex Analysis', 'Topology', 'Functional Analysis',
  ],
  physics: [
    'Mechanics and Waves', 'Physics Laboratory I', 'Classical Mechanics', 'Electricity and Magnetism',
    'Thermodynamics', 'Optics', 'Mécanique quantique', 'Quantum Mechanics I',
    'Statistical Physics', 'Computational Physics', '量子力学入門', 'Quantenmechanik II',
    'Solid State Physics', 'Astrophysics', 'Fluid Dynamics, Turbulence and Chaos',
    'Particle Physics', 'General Relativity',
  ],
  biology: [
    'Introduction to Biology', 'Cell Biology', 'Genetics', 'Biologie cellulaire',
    'Ecology', 'Plant Biology', 'Microbiology', 'Ökologie der Binnengewässer',
    'Molecular Biology', 'Evolution', 'Marine Biology', 'Rivers, Lakes and Wetlands',
    'Biochemistry', 'Immunology', 'Bioinformatics', 'Neuroscience',
  ],
  chemistry: [
    'General Chemistry', 'Chemistry Laboratory', 'Organic Chemistry I', 'Chimie organique',
    'Analytical Chemistry', 'Organic Chemistry II', 'Inorganic Chemistry', 'Physical Chemistry',
    'Spectroscopy', 'Polymer Chemistry', 'Química computacional', 'Catalysis',
  ],
  history: [
    'World History', 'Ancient Rome', 'Ιστορία της αρχαίας Ελλάδας', 'Medieval Europe',
    'Histoire de l\'Europe médiévale', 'The French Revolution', '日本史入門', 'History of Science',
    'Geschichte der Weimarer Republik', 'Modern East Asia', 'Historia de América Latina',
    'The Cold War', 'Historiography', 'Empires and Their Ends',
  ],
  computing: [
    'Programming in Python', 'Algorithms and Data Structures', 'Computer Architecture',
    'Linear Algebra for Machine Learning', 'Databases', 'Operating Systems', 'Computer Networks',
    'Functional Programming', 'Machine Learning', 'Compilers', 'Distributed Systems',
    'Programmiersprachen und Übersetzer', 'Cryptography', 'Information Retrieval',
  ],
  economics: [
    'Principles of Economics', 'Microeconomics', 'Macroeconomics', 'Mathematics for Economists',
    'Econometrics', 'Économie du développement', 'Game Theory', 'Public Finance',
    'Behavioural Economics', 'Matrix Methods and Linear Algebra in Economics', 'Economic History',
  ],
};

const subjectCodes: Readonly<Record<string, string>> = {
  math: 'MATH', physics: 'PHYS', biology: 'BIOL', chemistry: 'CHEM',
  history: 'HIST', computing: 'COMP', economics: 'ECON',
};

const instructors: readonly string[] = [
  'Ada Whitfield', 'Zoë Müller', 'José Álvarez', 'Ngozi Okafor', '王芳', 'Åsa Lindqvist',
  'Søren Kierkegaard-Holm', 'Priya Raghunathan', 'Mateusz Wiśniewski', 'Camille Durand',
  'Kenji Watanabe', 'Fatima El Amrani', 'Liam O\'Connor', 'Björk Sigurðardóttir', 'Hannah Schmidt',
  'Oluwaseun Adeyemi', 'María José Pérez', 'Chen Jing', 'Noah Campbell', 'Élodie Marchand',
];

const stages = [['active', 55], ['survey', 15], ['archived', 20], ['planned', 10]] as const;
const credits = [[2.5, 10], [3, 15], [4, 10], [5, 35], [6, 10], [7.5, 15], [10, 5]] as const;

/** Dates are computed from this fixed day, never from the clock. */
const referenceDay = Date.UTC(2025, 8, 1);
const dayMs = 86_400_000;

function isoDay(time: number): string {
  return new Date(time).toISOString().slice(0, 10);
}

/** A semester start (early February or September) in the given year. */
function semesterStart(pick: Picker, year: number): string {
  const autumn = pick.chance(0.6);
  const start = Date.UTC(year, autumn ? 8 : 1, 1) + pick.int(0, 6) * dayMs;
  return isoDay(start);
}

export interface Course {
  readonly code: string;
  readonly title: string;
  readonly subject: string;
  readonly stage: string;
  readonly level: number;
  readonly credits: number | null;
  readonly online: boolean | null;
  readonly start_date: string | null;
  readonly school: string;
  readonly instructor: string | null;
}

export function generateCourses(seed: number, count = 320): Course[] {
  const pick = createPicker(seed);
  const subjects = Object.keys(titles);
  const nextNumber = new Map<string, number>();
  const courses: Course[] = [];
  for (let i = 0; i < count; i += 1) {
    const subject = pick.weighted(subjects.map((s) => [s, s === 'math' || s === 'computing' ? 1.4 : 1] as const));
    const list = titles[subject] ?? [];
    const index = pick.int(0, list.length - 1);
    const title = list[index] ?? subject;
    const level = Math.min(4, 1 + Math.floor((4 * index) / list.length));
    const prefix = `${subjectCodes[subject] ?? subject.toUpperCase()}-${level}`;
    const number = (nextNumber.get(prefix) ?? 0) + 1;
    nextNumber.set(prefix, number);
    const stage = pick.weighted(stages);
    const referenceYear = new Date(referenceDay).getUTCFullYear();
    const year =
      stage === 'archived' ? pick.int(2012, 2021)
      : stage === 'planned' ? referenceYear + 1
      : stage === 'survey' ? pick.int(referenceYear - 1, referenceYear)
      : pick.int(2019, referenceYear);
    courses.push({
      code: `${prefix}${String(number).padStart(2, '0')}`,
      title,
      subject,
      stage,
      level,
      credits: pick.chance(0.05) ? null : pick.weighted(credits),
      online: pick.chance(0.06) ? null : pick.chance(0.3),
      start_date: stage === 'planned' && pick.chance(0.4) ? null : semesterStart(pick, year),
      school: pick.pick(schools).id,
      instructor: pick.chance(0.04) ? null : pick.pick(instructors),
    });
  }
  return courses;
}

const enrolmentColumns = ['student', 'course', 'term', 'status', 'grade', 'enrolled_on'] as const;

/**
 * Enrolment rows for courses that have run (not planned ones), written in
 * chunks so a million rows never sit in memory as one string.
 */
async function writeEnrolments(path: string, courses: readonly Course[], rows: number, seed: number): Promise<void> {
  const pick = createPicker(seed ^ 0x5eed);
  const taught = courses.filter((course) => course.stage !== 'planned' && course.start_date !== null);
  const students = Math.max(50, Math.round(rows / 4));
  const stream = createWriteStream(path);
  stream.write(stringify([enrolmentColumns]));
  const chunk: (string | number | null)[][] = [];
  const flush = async (): Promise<void> => {
    if (!stream.write(stringify(chunk))) await once(stream, 'drain');
    chunk.length = 0;
  };
  for (let i = 0; i < rows; i += 1) {
    const course = pick.pick(taught);
    const start = Date.parse(course.start_date ?? '2020-01-01');
    const autumn = new Date(start).getUTCMonth() >= 6;
    const term = `${new Date(start).getUTCFullYear()}-${autumn ? 'autumn' : 'spring'}`;
    const status =
      course.stage === 'archived' || start < referenceDay - 200 * dayMs
        ? pick.weighted([['completed', 78], ['failed', 9], ['withdrawn', 13]] as const)
        : pick.weighted([['enrolled', 85], ['withdrawn', 15]] as const);
    const graded = status === 'completed' || status === 'failed';
    const grade = !graded ? null : status === 'failed' ? pick.pick([1, 1.5, 2, 2.5, 3]) : pick.int(8, 12) / 2;
    chunk.push([
      `S-${String(pick.int(1, students)).padStart(6, '0')}`,
      course.code,
      term,
      status,
      graded && pick.chance(0.02) ? null : grade,
      isoDay(start - pick.int(3, 60) * dayMs),
    ]);
    if (chunk.length === 10_000) await flush();
  }
  await flush();
  stream.end();
  await once(stream, 'finish');
}

/** The demo data as a Frictionless data package: one dataset, its resources described (their types are inferred). */
export const demoDataPackage = {
  name: 'university',
  title: 'University demo data',
  description: 'Courses, enrolments and schools of an imaginary university: the demo data ckql opens with nothing configured.',
  resources: [
    { name: 'courses', path: 'courses.csv', title: 'courses', description: 'Every course: code, title, subject, stage, level, credits, start date, school and instructor.' },
    { name: 'enrolments', path: 'enrolments.csv', title: 'enrolments', description: 'Students enrolled in courses, with their grades and status.' },
    { name: 'schools', path: 'schools.json', title: 'schools', description: 'The schools courses are given at, with their city and country.' },
  ],
};

/** Writes `courses.csv`, `enrolments.csv`, `schools.json` and `datapackage.json` into `options.out`. */
export async function generateDemoData(options: DemoDataOptions = defaultDemoDataOptions): Promise<void> {
  mkdirSync(options.out, { recursive: true });
  const courses = generateCourses(options.seed);
  const columns = ['code', 'title', 'subject', 'stage', 'level', 'credits', 'online', 'start_date', 'school', 'instructor'];
  // null becomes an empty cell, which the loader reads back as null; booleans
  // are spelled out (csv-stringify's default writes false as an empty cell).
  const cast = { boolean: (value: boolean) => (value ? 'true' : 'false') };
  writeFileSync(join(options.out, 'courses.csv'), stringify(courses, { header: true, columns, cast }));
  writeFileSync(join(options.out, 'schools.json'), `${JSON.stringify(schools, null, 2)}\n`);
  writeFileSync(join(options.out, 'datapackage.json'), `${JSON.stringify(demoDataPackage, null, 2)}\n`);
  await writeEnrolments(join(options.out, 'enrolments.csv'), courses, options.rows, options.seed);
}

/** The command line (`args`: what follows `tsx scripts/generate-demo-data.ts`); test/repl/demo-data.test.ts calls it in the test's process. */
export async function main(args: readonly string[] = process.argv.slice(2), write: (text: string) => void = (text) => void process.stdout.write(text)): Promise<void> {
  const { values } = parseArgs({
    args: [...args],
    options: {
      rows: { type: 'string' },
      out: { type: 'string' },
      seed: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help === true) {
    write('usage: tsx scripts/generate-demo-data.ts [--rows N] [--out DIR] [--seed N]\n');
    return;
  }
  const rows = values.rows === undefined ? defaultDemoDataOptions.rows : Number(values.rows.replaceAll('_', ''));
  const seed = values.seed === undefined ? defaultDemoDataOptions.seed : Number(values.seed);
  if (!Number.isInteger(rows) || rows < 0) throw new Error(`--rows must be a whole number, found ${values.rows}`);
  if (!Number.isInteger(seed)) throw new Error(`--seed must be a whole number, found ${values.seed}`);
  const out = values.out === undefined ? defaultDemoDataOptions.out : resolve(values.out);
  await generateDemoData({ out, rows, seed });
  write(`wrote courses.csv, enrolments.csv (${rows} rows), schools.json and datapackage.json to ${out}\n`);
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((error: unknown) => {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  });
}

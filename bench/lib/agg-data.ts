/**
 * Rows for the aggregates section, made in the process from a seeded
 * generator (no file to read, so every figure is the query's): enrolments
 * with a subject (20 values), a grade (0-100, 5 % null), a course key
 * (`C-0000` … of `courses` courses) and a student; and the courses.
 */
import { createRandom } from '../../scripts/generate-demo-data.js';

export interface EnrolmentRow {
  readonly _id: number;
  readonly subject: string;
  readonly grade: number | null;
  readonly credits: number;
  readonly course: string;
  readonly student: string;
}

const SUBJECTS = Array.from({ length: 20 }, (_, i) => `subject-${String(i).padStart(2, '0')}`);

export function courseCode(i: number): string {
  return `C-${String(i).padStart(4, '0')}`;
}

export function enrolmentRows(n: number, courses = 2_000): EnrolmentRow[] {
  const next = createRandom(17);
  const rows: EnrolmentRow[] = new Array(n);
  for (let i = 0; i < n; i++) {
    rows[i] = {
      _id: i + 1,
      subject: SUBJECTS[Math.floor(next() * SUBJECTS.length)]!,
      grade: next() < 0.05 ? null : Math.floor(next() * 101),
      credits: Math.floor(next() * 20) / 2,
      course: courseCode(Math.floor(next() * courses)),
      student: `S-${String(Math.floor(next() * 50_000)).padStart(5, '0')}`,
    };
  }
  return rows;
}

export function courseRows(n: number): { _id: number; code: string; title: string; level: number }[] {
  return Array.from({ length: n }, (_, i) => ({ _id: i + 1, code: courseCode(i), title: `Course ${i}`, level: 1 + (i % 4) }));
}

export interface SaleRow {
  readonly _id: number;
  readonly category: string;
  readonly price: number | null;
}

const CATEGORIES = Array.from({ length: 20 }, (_, i) => `category-${String(i).padStart(2, '0')}`);

/**
 * Sales with a category (20 values) and a price of 2 decimals (0.01–999.99,
 * 5 % null), as a CSV of prices reads: most such doubles are not a whole
 * number of cents times 0.01 (32.41 * 100 is 3240.9999999999995), which is
 * the case the exact sum must find by a round trip.
 */
export function saleRows(n: number): SaleRow[] {
  const next = createRandom(29);
  const rows: SaleRow[] = new Array(n);
  for (let i = 0; i < n; i++) {
    rows[i] = {
      _id: i + 1,
      category: CATEGORIES[Math.floor(next() * CATEGORIES.length)]!,
      price: next() < 0.05 ? null : (1 + Math.floor(next() * 99_999)) / 100,
    };
  }
  return rows;
}

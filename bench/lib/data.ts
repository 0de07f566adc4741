/**
 * Bench data: the real vega-datasets files (nobody here made them) and the
 * project's own demo data, scaled: `scripts/generate-demo-data.ts --rows N`
 * writes `enrolments.csv` with N records (student, course, term, status,
 * grade, enrolled_on). Scaled copies are generated once into bench/.cache
 * (git-ignored); the generator is seeded, so every run sees the same records.
 */
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const benchDir = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
export const rootDir = path.dirname(benchDir);
export const cacheDir = path.join(benchDir, '.cache');
export const vegaDir = path.join(rootDir, 'node_modules', 'vega-datasets', 'data');

export type PlainRow = Record<string, string | number | boolean | null>;

/**
 * `enrolments.csv` with `rows` records from the project's generator, made on
 * first use. The directory holds only that file, so it can be served or
 * loaded as one resource (alias `enrolments`).
 */
export function enrolmentsFile(rows: number): string {
  const dir = path.join(cacheDir, `enrolments-${rows}`);
  const file = path.join(dir, 'enrolments.csv');
  if (existsSync(file)) return file;
  const scratch = path.join(cacheDir, `generate-${rows}-${process.pid}`);
  mkdirSync(scratch, { recursive: true });
  try {
    execFileSync(
      process.execPath,
      ['--import', 'tsx', path.join(rootDir, 'scripts', 'generate-demo-data.ts'), '--rows', String(rows), '--out', scratch],
      { cwd: rootDir, stdio: ['ignore', 'ignore', 'inherit'] },
    );
    mkdirSync(dir, { recursive: true });
    renameSync(path.join(scratch, 'enrolments.csv'), file);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
  return file;
}

/**
 * The records of `enrolmentsFile(rows)` as `enrolments.ndjson`, one JSON
 * object per line (empty cells null, `grade` a number), made on first use.
 */
export function enrolmentsNdjsonFile(rows: number): string {
  const file = path.join(cacheDir, `enrolments-${rows}-ndjson`, 'enrolments.ndjson');
  if (existsSync(file)) return file;
  const lines = readFileSync(enrolmentsFile(rows), 'utf8').split('\n');
  const header = (lines[0] as string).split(',');
  const out: string[] = [];
  for (let i = 1; i < lines.length; i++) {
    if (lines[i] === '') continue;
    const cells = (lines[i] as string).split(',');
    const record: PlainRow = {};
    header.forEach((name, k) => {
      const cell = cells[k] ?? '';
      record[name] = cell === '' ? null : name === 'grade' ? Number(cell) : cell;
    });
    out.push(JSON.stringify(record));
  }
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(`${file}.tmp`, `${out.join('\n')}\n`);
  renameSync(`${file}.tmp`, file);
  return file;
}

export function vegaJson<T = PlainRow>(name: string): T[] {
  return JSON.parse(readFileSync(path.join(vegaDir, name), 'utf8')) as T[];
}

export function vegaPath(name: string): string {
  return path.join(vegaDir, name);
}

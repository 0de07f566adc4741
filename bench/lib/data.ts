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

const CATEGORIES = ['books', 'garden', 'electronics', 'toys', 'grocery', 'sports', 'music', 'health', 'tools', 'office', 'kitchen', 'outdoor'] as const;
const WORDS = ['red', 'blue', 'small', 'large', 'steel', 'wooden', 'lamp', 'chair', 'kettle', 'café', 'set', 'pack', 'deluxe', 'mini', 'classic', 'über'] as const;
const CODE_CHARS = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789';

/**
 * `sales.csv`: `rows` records of 8 columns (id, category, price with two
 * decimals, qty, date, text, bool, code), about 66 bytes a record, made on
 * first use from a seeded generator (mulberry32), so every run reads the
 * same bytes. Some texts need quotes (a comma, a doubled quote), some are
 * not ASCII; a few cells are empty (null).
 */
export function salesFile(rows: number): string {
  const file = path.join(cacheDir, `sales-${rows}`, 'sales.csv');
  if (existsSync(file)) return file;
  let seed = 20_261_201;
  const random = (): number => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
  const day0 = Date.UTC(2020, 0, 1);
  const lines: string[] = ['id,category,price,qty,date,text,bool,code'];
  for (let i = 1; i <= rows; i++) {
    const price = (Math.floor(random() * 99_999) + 1) / 100;
    const date = new Date(day0 + Math.floor(random() * 1500) * 86_400_000).toISOString().slice(0, 10);
    let text = `${pick(WORDS)} ${pick(WORDS)} ${Math.floor(random() * 10_000)}`;
    const shape = random();
    if (shape < 0.04) text = `"${text}, ${pick(WORDS)}"`;
    else if (shape < 0.05) text = `"${text} ""${pick(WORDS)}"""`;
    let code = '';
    for (let k = 0; k < 7; k++) code += CODE_CHARS[Math.floor(random() * CODE_CHARS.length)];
    const qty = random() < 0.01 ? '' : String(Math.floor(random() * 500) + 1);
    lines.push(`${i},${pick(CATEGORIES)},${price.toFixed(2)},${qty},${date},${text},${random() < 0.5 ? 'true' : 'false'},${code}`);
  }
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(`${file}.tmp`, `${lines.join('\n')}\n`);
  renameSync(`${file}.tmp`, file);
  return file;
}

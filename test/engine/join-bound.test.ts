/**
 * The join bound (docs/executor.md, Counting and limits): a join whose
 * output would pass `maxJoinRows` is refused before it runs, with its count
 * and the keys that multiply; one under it runs, and its count is a
 * hand-written nested loop's over the same file.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { openEngine } from '../../src/engine/open.js';
import type { Engine } from '../../src/engine/types.js';
import type { Row } from '../../src/datastore/types.js';
import { QueryError } from '../../src/errors.js';
import { parse } from '../../src/syntax/parse.js';

/** The demo's enrolments, read by hand (no quoted fields in this file). */
const lines = readFileSync('examples/data/enrolments.csv', 'utf8').trim().split('\n');
const names = lines[0]!.split(',');
const enrolments = lines.slice(1).map((line) => Object.fromEntries(line.split(',').map((value, i) => [names[i]!, value])));

/** Rows of the demo with each value of `key`, squared and summed: the pairs a self-join on it gives (empty values pair with none). */
function squares(key: string): number {
  const counts = new Map<string, number>();
  for (const row of enrolments) if (row[key] !== '') counts.set(row[key]!, (counts.get(row[key]!) ?? 0) + 1);
  return [...counts.values()].reduce((sum, n) => sum + n * n, 0);
}

/** The first 1,500 enrolments, small enough for nested loops. */
const few = enrolments.slice(0, 1500);

/** The pairs of `few` with equal, non-empty values of `key`: a nested loop (`left`: each row once at least). */
function nestedLoop(key: string, left = false): number {
  let n = 0;
  for (const a of few) {
    let matched = 0;
    for (const b of few) if (a[key] !== '' && a[key] === b[key]) matched++;
    n += left ? Math.max(1, matched) : matched;
  }
  return n;
}

let engine: Engine;
let small: Engine;
beforeAll(async () => {
  engine = await openEngine({ data: ['examples/data/enrolments.csv'] });
  const dir = mkdtempSync(join(tmpdir(), 'ckql-join-'));
  writeFileSync(join(dir, 'enrolments.csv'), lines.slice(0, few.length + 1).join('\n'));
  small = await openEngine({ data: [join(dir, 'enrolments.csv')] });
  rmSync(dir, { recursive: true });
});

async function rows(text: string, maxJoinRows?: number): Promise<Row[]> {
  const stream = await small.query(parse(text), { all: true, ...(maxJoinRows === undefined ? {} : { maxJoinRows }) });
  const out: Row[] = [];
  for await (const batch of stream.batches) out.push(...batch);
  return out;
}

describe('the join bound on the memory engine', () => {
  it("refuses the demo's many-to-many join before it runs, with its exact count and the keys that multiply", async () => {
    const text = 'from enrolments a join enrolments b on a.status = b.status select count(*)';
    const error = await engine.query(parse(text)).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(QueryError);
    const refused = error as QueryError;
    expect(refused.code).toBe('JOIN_TOO_LARGE');
    // 14041² + 2616² + 1692² + 1651²: each status's rows times its rows.
    expect(refused.message).toContain(`gives ${squares('status')} rows, more than the 10000000`);
    expect(text.slice(refused.span.start, refused.span.end)).toBe('join enrolments b on a.status = b.status');
    expect(refused.hint).toContain('"completed" (14041 × 14041 = 197149681)');
    expect(refused.hint).toContain('from enrolments group by status select status, count(*) as n');
    expect(refused.hint).toContain('--max-join-rows');
  });

  it('runs a join just under the bound, its count a nested loop’s', async () => {
    const want = nestedLoop('term');
    const text = 'from enrolments a join enrolments b on a.term = b.term select count(*) as n';
    expect(await rows(text, want)).toEqual([{ n: want }]);
    await expect(rows(text, want - 1)).rejects.toMatchObject({ code: 'JOIN_TOO_LARGE', message: expect.stringContaining(`gives ${want} rows, more than the ${want - 1}`) });
  });

  it('bounds each join of a chain by its own rows, and a left join counts the rows that found none', async () => {
    const byCourse = nestedLoop('course');
    const chain = 'from enrolments a join enrolments b on a.course = b.course join enrolments c on b.student = c.student select count(*) as n';
    // The first join gives `byCourse` rows; the second more: refused at the second, with its own count.
    await expect(rows(chain, byCourse)).rejects.toMatchObject({ code: 'JOIN_TOO_LARGE', span: { start: chain.indexOf('join enrolments c') } });
    await expect(rows('from enrolments a join enrolments b on a.course = b.course select count(*) as n', byCourse - 1)).rejects.toMatchObject({ code: 'JOIN_TOO_LARGE' });
    // A left join: each row once at least, with nulls where no row matches (an empty grade matches none).
    const left = nestedLoop('grade', true);
    const text = 'from enrolments a left join enrolments b on a.grade = b.grade select count(*) as n';
    expect(await rows(text, left)).toEqual([{ n: left }]);
    await expect(rows(text, left - 1)).rejects.toMatchObject({ code: 'JOIN_TOO_LARGE', message: expect.stringContaining(`gives ${left} rows`) });
  });
});

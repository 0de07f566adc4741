import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fileProgressBar, fileProgressText, progressBar, progressLine } from '../../src/output/progress-bar.js';
import { loadResources } from '../../src/engine/node/load-resources.js';
import type { FileProgress } from '../../src/engine/memory/load.js';
import { ckql } from '../cli/run-ckql.js';

/** A terminal's stderr as far as the bar can tell. */
function fakeTerminal(isTTY = true): { isTTY: boolean; columns: number; written: string[]; write(text: string): boolean } {
  return { isTTY, columns: 100, written: [], write(text) { this.written.push(text); return true; } };
}

let dir: string;
let bigCsv: string;
const ROWS = 30_000;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'ckql-progress-'));
  bigCsv = join(dir, 'big.csv');
  const lines = ['n,word'];
  for (let i = 0; i < ROWS; i++) lines.push(`${i},w${i % 97}`);
  writeFileSync(bigCsv, `${lines.join('\n')}\n`);
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('progressLine', () => {
  it('shows the label, a bar, rows, rows/s and the time left', () => {
    expect(progressLine({ label: 'big', rows: 500_000, fraction: 0.5 }, 2)).toBe('big [############............] 500,000 rows, 250,000 rows/s, 2 s left');
    expect(progressLine({ label: 'big', rows: 250, totalRows: 1_000, fraction: 0.25 }, 1)).toBe('big [######..................] 250/1,000 rows, 250 rows/s, 3 s left');
    expect(progressLine({ label: 'big', rows: 0, fraction: 0 }, 0)).toBe('big [........................] 0 rows');
    expect(progressLine({ label: 'one', rows: 1, fraction: 1 }, 0)).toBe('one [########################] 1 row');
    expect(progressLine({ label: 'one', rows: 1, totalRows: 1, fraction: 1 }, 0)).toBe('one [########################] 1/1 row');
  });
});

describe('progressBar', () => {
  it('rewrites one line in place, at most every 100 ms, and clears it when done', () => {
    const stream = fakeTerminal();
    let now = 1_000;
    const bar = progressBar(stream, {}, () => now);
    bar.update({ label: 'a', rows: 10, fraction: 0.1 });
    now += 50;
    bar.update({ label: 'a', rows: 20, fraction: 0.2 }); // too soon: not drawn
    now += 100;
    bar.update({ label: 'a', rows: 30, fraction: 0.3 });
    bar.update({ label: 'a', rows: 100, fraction: 1 }); // the end is always drawn
    bar.done();
    expect(stream.written).toHaveLength(4);
    expect(stream.written.slice(0, 3).every((text) => text.startsWith('\r') && text.endsWith('\u001b[K'))).toBe(true);
    expect(stream.written[1]).toContain(' 30 rows, 200 rows/s');
    expect(stream.written[3]).toBe('\r\u001b[K');
  });

  it('draws nothing when stderr is not a terminal, or in CI', () => {
    for (const [stream, env] of [[fakeTerminal(false), {}], [fakeTerminal(true), { CI: 'true' }]] as const) {
      const bar = progressBar(stream, env);
      bar.update({ label: 'a', rows: 10, fraction: 0.5 });
      bar.done();
      expect(stream.written).toEqual([]);
    }
  });

  it('fits the terminal width', () => {
    const stream = { ...fakeTerminal(), columns: 20 };
    progressBar(stream, {}).update({ label: 'a-very-long-resource-name', rows: 1, fraction: 0.5 });
    expect((stream.written[0] as string).replace('\r', '').replace('\u001b[K', '').length).toBeLessThan(20);
  });

  it('a terminal that reports 0 columns still gets the bar', () => {
    const stream = { ...fakeTerminal(), columns: 0 };
    progressBar(stream, {}).update({ label: 'big', rows: 1, fraction: 0.5 });
    expect(stream.written[0]).toContain('big [');
  });
});

describe('reading a CSV file with a progress bar', () => {
  it('loadResources reports rows and bytes as the file streams in, up to the whole file', async () => {
    const seen: FileProgress[] = [];
    const [table] = await loadResources(bigCsv, { onProgress: (p) => seen.push(p) });
    expect(table?.rows).toHaveLength(ROWS);
    expect(seen.length).toBeGreaterThan(1);
    expect(seen.every((p) => p.resource === 'big')).toBe(true);
    const last = seen[seen.length - 1] as FileProgress;
    expect(last).toEqual({ resource: 'big', rows: ROWS, bytes: last.totalBytes, totalBytes: last.totalBytes });
    for (let i = 1; i < seen.length; i++) {
      expect((seen[i] as FileProgress).bytes).toBeGreaterThanOrEqual((seen[i - 1] as FileProgress).bytes);
      expect((seen[i] as FileProgress).rows).toBeGreaterThanOrEqual((seen[i - 1] as FileProgress).rows);
    }
    expect((seen[0] as FileProgress).bytes).toBeLessThan(last.totalBytes);
  });

  it('an NDJSON file streams in the same way, line numbers of bad lines kept', async () => {
    const file = join(dir, 'lines.ndjson');
    writeFileSync(file, `\ufeff${Array.from({ length: 20_000 }, (_, i) => JSON.stringify({ n: i, text: 'é'.repeat(i % 7) })).join('\r\n')}\n\n`);
    const seen: FileProgress[] = [];
    const [table] = await loadResources(file, { onProgress: (p) => seen.push(p) });
    expect(table?.rows).toHaveLength(20_000);
    expect(table?.rows[19_999]).toEqual({ _id: 20_000, n: 19_999, text: 'é'.repeat(19_999 % 7) });
    expect(seen.length).toBeGreaterThan(2);
    expect(seen.at(-1)).toEqual({ resource: 'lines', rows: 20_000, bytes: seen.at(-1)?.totalBytes, totalBytes: seen.at(-1)?.totalBytes });
    writeFileSync(file, `${'{"n":1}\n'.repeat(30_000)}{"n":\n`);
    await expect(loadResources(file)).rejects.toMatchObject({ code: 'DATA_INVALID', line: 30_001 });
  });

  it('fileProgressBar draws "reading <resource>" with the share of the file read', async () => {
    const stream = fakeTerminal();
    let now = 0;
    const bar = fileProgressBar(stream, {}, () => (now += 200));
    await loadResources(bigCsv, { onProgress: bar.update });
    bar.done();
    expect(stream.written[0]).toMatch(/^\rreading big \[[#.]{24}\] [\d,]+ rows/);
    expect(stream.written.at(-2)).toMatch(/\[#{24}\] 30,000 rows/);
    expect(stream.written.at(-1)).toBe('\r\u001b[K');
  });

  it('fileProgressText keeps the latest line for the REPL\'s spinner, and nothing once reading is over', async () => {
    let now = 0;
    const loading = fileProgressText(() => (now += 100));
    const lines: (string | undefined)[] = [];
    await loadResources(bigCsv, { onProgress: (p) => { loading.update(p); lines.push(loading.current()); } });
    expect(lines.at(-1)).toMatch(/^reading big \[#{24}\] 30,000 rows, [\d,]+ rows\/s$/);
    loading.done();
    expect(loading.current()).toBeUndefined();
  });

  it('ckql query --data draws it on a terminal\'s stderr and clears it before the answer; not when piped', async () => {
    // as a person's terminal: CI's variable (which silences the bar) is not set there
    const onTerminal = await ckql(['query', '--data', bigCsv, '--format', 'csv', 'from big where n = 7'], { tty: { stderr: true }, env: { CI: undefined } });
    expect(onTerminal.code).toBe(0);
    expect(onTerminal.stdout).toBe('_id,n,word\n8,7,w7\n');
    expect(onTerminal.stderr).toContain('\rreading big [');
    expect(onTerminal.stderr).toContain('\r\u001b[K');
    const piped = await ckql(['query', '--data', bigCsv, '--format', 'csv', 'from big where n = 7']);
    expect(piped.stderr).not.toContain('reading big');
  });
});

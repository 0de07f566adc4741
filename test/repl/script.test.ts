/**
 * Script mode: statements from a pipe or file, against the demo data over
 * the project's own server, written to real streams.
 */
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Source } from '../../src/session/source.js';
import { runScript, type ScriptOptions } from '../../src/repl/index.js';
import { openDemo, portalSource, startSlowPortal } from './driver.js';

let demo: Source;

beforeAll(async () => {
  demo = await openDemo();
});

afterAll(async () => {
  await demo.close();
});

async function run(script: string, options: Partial<ScriptOptions> = {}) {
  const output = new PassThrough();
  const errorOutput = new PassThrough();
  let out = '';
  let err = '';
  output.on('data', (chunk: Buffer) => (out += chunk.toString()));
  errorOutput.on('data', (chunk: Buffer) => (err += chunk.toString()));
  const result = await runScript(script, { source: demo, output, errorOutput, ...options });
  return { result, out, err };
}

describe('runScript', () => {
  it('runs statements separated by semicolons and prints ndjson by default', async () => {
    const expected = await demo.client.search('from schools where country in (NO, FR) select id, country');
    const { result, out, err } = await run(`
      -- schools in Norway and France; then nothing
      from schools where country in (NO, FR) select id, country;
      from courses where subject = nothing;
    `);
    expect(err).toBe('');
    expect(result).toEqual({ statements: 2, succeeded: 2, errors: [] });
    expect(out.split('\n').filter((line) => line !== '').map((line) => JSON.parse(line))).toEqual(expected.records);
  });

  it('runs a statement the portal cannot answer whole as a plan, also with all', async () => {
    const script = 'from enrolments where grade >= 5.5 and status != withdrawn order by student select student, grade limit 3';
    const { result, out, err } = await run(script);
    expect(err).toBe('');
    expect(result.succeeded).toBe(1);
    const records = out.split('\n').filter((line) => line !== '').map((line) => JSON.parse(line) as { grade: number });
    expect(records).toHaveLength(3);
    expect(records.every((r) => r.grade >= 5.5)).toBe(true);
    const all = await run(script, { all: true, format: 'csv' });
    expect(all.err).toBe('');
    expect(all.out.split('\n')[0]).toBe('student,grade');
    expect(all.out.trim().split('\n')).toHaveLength(4);
  });

  it('prints csv, json, markdown and table when asked', async () => {
    const query = 'from schools where id = aurora select id, city';
    expect((await run(query, { format: 'csv' })).out).toBe('id,city\naurora,Tromsø\n');
    expect(JSON.parse((await run(query, { format: 'json' })).out)).toEqual([{ id: 'aurora', city: 'Tromsø' }]);
    expect((await run(query, { format: 'markdown' })).out).toBe('| id | city |\n| --- | --- |\n| aurora | Tromsø |\n');
    expect((await run(query, { format: 'table' })).out).toBe(' id     │ city\n────────┼───────\n aurora │ Tromsø\n1 of 1 record\n');
  });

  it('puts a blank line between the tables of several statements, which would otherwise read as one table (GFM ends a table at a blank line)', async () => {
    const script = 'from schools where id = aurora select id, city; from schools where id = vistula select id';
    for (const all of [false, true]) {
      expect((await run(script, { format: 'markdown', all })).out).toBe('| id | city |\n| --- | --- |\n| aurora | Tromsø |\n\n| id |\n| --- |\n| vistula |\n');
      const table = (await run(script, { format: 'table', all })).out;
      expect(table.split('\n\n')).toHaveLength(2);
    }
    // ndjson is one record per line whatever the statements: no line is empty.
    expect((await run(script)).out).toBe('{"id":"aurora","city":"Tromsø"}\n{"id":"vistula"}\n');
  });

  it('binds parameters in every statement', async () => {
    const { out } = await run('from schools where country = $c select id', { params: { c: 'PL' } });
    expect(out).toBe('{"id":"vistula"}\n');
  });

  it('reports an error with the line and column in the whole script, and stops there', async () => {
    const script = 'from schools where id = aurora select id;\nfrom schools\nwhere id = limit 1;\nfrom schools limit 1;';
    const { result, out, err } = await run(script);
    expect(out).toBe('{"id":"aurora"}\n');
    expect(result.statements).toBe(3);
    expect(result.succeeded).toBe(1);
    expect(result.errors).toHaveLength(1);
    expect(err).toContain('error[UNEXPECTED_TOKEN]');
    expect(err).toContain(' --> 3:12');
    expect(err).toContain('3 | where id = limit 1');
    expect(err).toMatch(/\n +\| {12}\^{5}\n/);
    expect(err).toContain('  = in: statement 2 of 3, line 2: from schools\n');
    expect(err).toContain('stopped: 1 statement after it was not run\n');
  });

  it('names the statement and its line for an error the source gives, too', async () => {
    const script = 'from schools limit 1;\n\n-- a typo in a field\nfrom courses where subjet = math;\nfrom schools limit 1;\nfrom schools limit 2';
    const { result, err } = await run(script);
    expect(result.succeeded).toBe(1);
    expect(err).toContain('error[VALIDATION_ERROR]');
    expect(err).toContain('  = in: statement 2 of 4, line 4: from courses where subjet = math\n');
    expect(err).toContain('stopped: 2 statements after it were not run\n');
  });

  it('goes on after an error with bail: false, and reports each', async () => {
    const { result, out, err } = await run('from nowhere; from schools where id = harbour select id; from courses where x = 1', { bail: false });
    expect(result.succeeded).toBe(1);
    expect(result.errors.map((e) => (e as { code?: string }).code)).toEqual(['NOT_FOUND', 'VALIDATION_ERROR']);
    expect(out).toBe('{"id":"harbour"}\n');
    expect(err).toContain('error[NOT_FOUND]');
    expect(err).toContain('  = in: statement 1 of 3, line 1: from nowhere');
    expect(err).toContain('error[VALIDATION_ERROR]');
    expect(err).toContain('  = in: statement 3 of 3, line 1: from courses where x = 1');
    expect(err).not.toContain('stopped');
  });

  it('pages through every record with all: true', async () => {
    const total = (await demo.client.search('from enrolments where status = failed limit 0')).total ?? -1;
    expect(total).toBeGreaterThan(1000);
    const { out } = await run('from enrolments where status = failed select student', { all: true });
    expect(out.trimEnd().split('\n')).toHaveLength(total);
    const limited = await run('from enrolments where status = failed select student limit 1500', { all: true, format: 'csv' });
    expect(limited.out.trimEnd().split('\n')).toHaveLength(1501);
  });

  it('stops when its signal is aborted, with the request cancelled', async () => {
    const portal = await startSlowPortal();
    const source = portalSource(portal.url);
    try {
      const controller = new AbortController();
      void portal.arrived.then(() => controller.abort());
      const output = new PassThrough();
      const errorOutput = new PassThrough();
      const result = await runScript('from slow; from quick', { source, output, errorOutput, signal: controller.signal });
      expect(result.succeeded).toBe(0);
      expect((result.errors[0] as { code?: string }).code).toBe('ABORTED');
      await portal.abandoned;
    } finally {
      await source.close();
      await portal.close();
    }
  });
});

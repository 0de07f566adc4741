/**
 * The README's path through a portal, run as written (in process, against
 * `ckql serve` on the demo data on a free port instead of 8080): find a
 * dataset by a word, read its fields, query it, export it, load the file
 * and query the copy. And the commands' own promises: the warning about a
 * text field compared with a number, `datasets --all` in every format, an
 * export's summary and its `--resume`.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadResources } from '../../src/engine/node/load-resources.js';
import { startServer } from '../../src/server/server.js';
import type { RunningServer } from '../../src/server/server.js';
import { ckql, ndjson, repoRoot } from './run-ckql.js';

let server: RunningServer;
let work: string;

beforeAll(async () => {
  server = await startServer({ tables: await loadResources([join(repoRoot, 'examples', 'data')]), port: 0 });
  work = mkdtempSync(join(tmpdir(), 'ckql-portals-'));
});

afterAll(async () => {
  await server.close();
  rmSync(work, { recursive: true, force: true });
});

/** The words of a shell line: single and double quotes, no escapes (the README's lines need no more). */
function shellWords(line: string): string[] {
  return [...line.matchAll(/'([^']*)'|"([^"]*)"|(\S+)/g)].map((m) => m[1] ?? m[2] ?? m[3] ?? '');
}

describe("the README's path through a portal", () => {
  it('runs every step as written, offline against ckql serve', async () => {
    const readme = readFileSync(join(repoRoot, 'README.md'), 'utf8');
    const section = readme.slice(readme.indexOf('## Portals: find the data'));
    const block = /```sh\n([\s\S]*?)```/.exec(section)?.[1] ?? '';
    const lines = block.split('\n').map((line) => line.replace(/\s+#.*$/, '').trim()).filter((line) => line.startsWith('ckql '));
    expect(lines[0]).toMatch(/^ckql serve examples\/data --port 8080 &$/);
    const outputs: string[] = [];
    for (const line of lines.slice(1)) {
      const args = shellWords(line.replace('http://127.0.0.1:8080', server.url)).slice(1);
      const result = await ckql(args, { cwd: work });
      expect(result.code, `${line}\n${result.stderr}`).toBe(0);
      outputs.push(result.stdout);
    }
    const [datasets, fields, query, , , copy] = outputs;
    expect(ndjson(datasets ?? '')).toEqual([expect.objectContaining({ name: 'university', title: 'University demo data' })]);
    expect(ndjson(fields ?? '')).toContainEqual({ field: 'level', type: 'int4' });
    expect(ndjson(query ?? '')).toHaveLength(5);
    expect(copy).toBe(query);
    expect(JSON.parse(readFileSync(join(work, 'courses.fields.json'), 'utf8'))).toMatchObject({ aliases: ['courses'] });
  }, 180_000);
});

describe('the commands on a portal', () => {
  it('ckql fields shows the data dictionary, and a query comparing a text field with a number is warned about', async () => {
    const data = join(work, 'budget');
    rmSync(data, { recursive: true, force: true });
    const { mkdirSync } = await import('node:fs');
    mkdirSync(data);
    writeFileSync(join(data, 'spending.csv'), 'year,amount\n2019,10\n900,20\n2021,30\n');
    writeFileSync(join(data, 'spending.fields.json'), JSON.stringify([{ id: 'year', type: 'text', info: { label: 'Year', notes: 'The **budget** year.\n\nMore.', type_override: 'int' } }]));
    const fields = await ckql(['fields', 'spending', '--data', data]);
    expect(ndjson(fields.stdout)).toEqual([
      { field: '_id', type: 'int', label: null, notes: null, type_override: null },
      { field: 'year', type: 'text', label: 'Year', notes: 'The **budget** year.\n\nMore.', type_override: 'int' },
      { field: 'amount', type: 'int4', label: null, notes: null, type_override: null },
    ]);
    const table = await ckql(['fields', 'spending', '--data', data, '--format', 'table']);
    expect(table.stdout).toContain('The budget year.');
    expect(table.stderr).toContain('spending: 3 fields, 3 records');
    const warned = await ckql(['query', 'from spending where year >= 2020', '--data', data]);
    expect(ndjson(warned.stdout).map((r) => (r as { year: string }).year)).toEqual(['900', '2021']);
    expect(warned.stderr).toContain('warning[TEXT_COMPARED]: year >= 2020 compares text: the portal stores "year" as text (its data dictionary says int)');
    const quiet = await ckql(['query', 'from spending where year = 2021', '--data', data]);
    expect(quiet.stderr).not.toContain('warning');
  });

  it("ckql resources on a portal: every table and alias its _table_metadata lists", async () => {
    const listed = await ckql(['resources', '--url', server.url]);
    expect(ndjson(listed.stdout).map((r) => (r as { alias: string }).alias).sort()).toEqual(['courses', 'enrolments', 'schools']);
    const nothing = await ckql(['resources', '--url', 'http://127.0.0.1:9']);
    expect(nothing.code).toBe(4);
  });

  it('ckql datasets --all in every format', async () => {
    const all = await ckql(['datasets', '--all', '--url', server.url]);
    expect(ndjson(all.stdout)).toHaveLength(1);
    const csv = await ckql(['datasets', 'enrolments', '--url', server.url, '--format', 'csv']);
    expect(csv.stdout.split('\n')[0]).toBe('dataset,title,organization,modified,resource,resource_id,format,datastore_active');
    expect(csv.stdout).toContain('university,University demo data,,');
    const none = await ckql(['datasets', 'no-such-words', '--url', server.url, '--format', 'json']);
    expect(JSON.parse(none.stdout)).toEqual([]);
    // an empty --org (an unset shell variable) listed every dataset
    const empty = await ckql(['datasets', '--org', '', '--url', server.url]);
    expect([empty.code, empty.stdout]).toEqual([2, '']);
    expect(empty.stderr).toContain('--org needs a name');
  });

  it('ckql export says what it wrote, and by which path', async () => {
    const result = await ckql(['export', 'from courses where subject = math', '-o', join(work, 'math.ndjson'), '--url', server.url]);
    expect(result.code).toBe(0);
    expect(result.stderr).toMatch(/^exported \d+ records to .*math\.ndjson \(ndjson\) in \d+ requests by dump; fields: .*math\.fields\.json\n$/);
    const bad = await ckql(['export', 'courses', '-o', join(work, 'x.csv'), '--format', 'xls', '--url', server.url]);
    expect(bad.code).toBe(2);
  });

  it('a "dataset/resource" name whose dataset lacks the resource keeps what the dataset has', async () => {
    // it was retold as 'no resource named "university/corses" in this source', with no hint at all
    const result = await ckql(['query', 'from "university/corses" limit 1', '--url', server.url]);
    expect(result.code).toBe(3);
    expect(result.stderr).toContain('the dataset "university" has no resource named "corses"; its resources: "courses", "enrolments", "schools"');
  });

  it('ckql export of a resource the source does not have names the one meant, as ckql query and ckql fields do', async () => {
    // local data knows its resources (a portal's are known as they are used)
    const data = join(repoRoot, 'examples', 'data');
    const named = await ckql(['export', 'corses', '-o', join(work, 'c.csv'), '--data', data]);
    expect(named.code).toBe(3);
    expect(named.stderr).toContain('hint: did you mean "courses"?');
    const query = await ckql(['export', 'from corses where level >= 3', '-o', join(work, 'c.csv'), '--data', data]);
    expect(query.code).toBe(3);
    expect(query.stderr).toContain('error[UNKNOWN_RESOURCE]: no resource named "corses" in this source');
    expect(query.stderr).toContain('1 | from corses where level >= 3\n  |      ^^^^^^');
    expect(query.stderr).toContain('hint: did you mean "courses"?');
  });
});

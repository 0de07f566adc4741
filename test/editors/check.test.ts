/**
 * `ckql check` over fixtures of each kind (test/editors/fixtures/check):
 * good queries report nothing, broken ones report their exact line and
 * column in the file with the caret under the offending text, and the exit
 * status says whether any failed. Run in this process (runCli), and once as
 * the built bin for the exit status a CI job sees.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ckql, ckqlProcess, repoRoot } from '../cli/run-ckql.js';

const fixtures = 'test/editors/fixtures/check';

interface Problem {
  file: string;
  line: number;
  column: number;
  endLine: number;
  endColumn: number;
  severity: string;
  code: string;
  message: string;
  hint?: string;
  query?: string;
}

async function checkJson(args: readonly string[]): Promise<{ code: number | null; report: { files: number; queries: number; errors: number; warnings: number; problems: Problem[] } }> {
  const result = await ckql(['check', '--format', 'json', ...args]);
  return { code: result.code, report: JSON.parse(result.stdout) as never };
}

const where = (p: Problem): string => `${p.file}:${p.line}:${p.column}-${p.endLine}:${p.endColumn} ${p.code}`;

describe('ckql check', () => {
  it('reports nothing and exits 0 when every query passes, in each kind of file', async () => {
    const { code, report } = await checkJson([`${fixtures}/good.ckql`]);
    expect(code).toBe(0);
    expect(report).toMatchObject({ files: 1, queries: 2, errors: 0, warnings: 0, problems: [] });
    const text = await ckql(['check', `${fixtures}/good.ckql`]);
    expect(text.stdout).toBe('');
    expect(text.stderr).toBe('2 queries in 1 file: 0 errors, 0 warnings\n');
  });

  it('finds each broken query at its line and column in scripts, configs (YAML and TOML) and templates', async () => {
    const { code, report } = await checkJson([fixtures, `${fixtures}/queries.toml`]);
    expect(code).toBe(3);
    expect(report.problems.filter((p) => p.severity === 'error').map(where)).toEqual([
      `${fixtures}/app.mjs:2:50-2:55 UNTERMINATED_STRING`,
      `${fixtures}/app.ts:11:9-11:19 UNEXPECTED_TOKEN`,
      `${fixtures}/app.ts:13:53-13:57 UNEXPECTED_TOKEN`,
      `${fixtures}/bad.ckql:5:17-5:22 UNEXPECTED_TOKEN`,
      `${fixtures}/bad.ckql:7:14-7:18 UNEXPECTED_TOKEN`,
      `${fixtures}/ckql.config.yaml:16:21-16:22 UNEXPECTED_TOKEN`,
      `${fixtures}/queries.toml:11:14-11:15 UNEXPECTED_TOKEN`,
    ]);
    // Good queries beside them report nothing: one error per broken query, none for the rest.
    expect(report.queries).toBe(16);
    const template = report.problems.find((p) => p.file.endsWith('app.ts') && p.line === 11)!;
    expect(template.message).toBe('expected "not", a field name or "(" after "where", found the value interpolated as ${…} number 1');
    expect(template.hint).toContain('field names and keywords must be written in the template text');
    expect(report.problems.find((p) => p.file.endsWith('ckql.config.yaml'))).toMatchObject({
      query: 'queries.broken',
      hint: 'to match any of several values write in: f in (a, b)',
    });
  });

  it('prints file:line:col, the line of the file with carets under the span, and the hint', async () => {
    const result = await ckql(['check', `${fixtures}/bad.ckql`]);
    expect(result.code).toBe(3);
    expect(result.stdout).toBe(
      [
        `${fixtures}/bad.ckql:5:17: error[UNEXPECTED_TOKEN]: expected a value after "=", found "limit"`,
        '  |',
        '5 | where subject = limit',
        '  |                 ^^^^^',
        '  = hint: a value spelled like a keyword must be quoted: "limit"',
        '',
        `${fixtures}/bad.ckql:7:14: error[UNEXPECTED_TOKEN]: expected an alias, "left", "join", "where", "search", "select", "group by", "having", "qualify", "facet", "order by", "limit", "offset" or end of input after "courses", found "wher"`,
        '  |',
        '7 | from courses wher stage = active',
        '  |              ^^^^',
        '  = hint: did you mean "where"?',
        '',
      ].join('\n'),
    );
    expect(result.stderr).toBe('3 queries in 1 file: 2 errors, 0 warnings\n');
  });

  it('with --schema, checks resources, fields and values against a source', async () => {
    const config = `${fixtures}/ckql.config.yaml`;
    const { code, report } = await checkJson(['--schema', 'demo', '--config', config, config]);
    expect(code).toBe(3);
    expect(report.problems.filter((p) => p.severity !== 'information').map(where)).toEqual([
      `${config}:16:21-16:22 UNEXPECTED_TOKEN`,
      `${config}:18:32-18:38 UNKNOWN_FIELD`,
    ]);
    expect(report.problems[1]!.hint).toBe('did you mean "subject"?');
    // Without the schema, the misspelt field cannot be known.
    expect((await checkJson([config])).report.problems.map((p) => p.code)).toEqual(['UNEXPECTED_TOKEN']);
  });

  describe('files it makes up', () => {
    let dir: string;
    beforeAll(async () => {
      dir = await mkdtemp(join(tmpdir(), 'ckql-check-'));
    });
    afterAll(async () => {
      await rm(dir, { recursive: true, force: true });
    });

    it('reports a config file that is not valid at its line, and an unknown resource from a data folder', async () => {
      await writeFile(join(dir, 'ckql.config.yaml'), 'profiles:\n  p:\n    url: https://x.org\n    methd: GET\n');
      const invalid = await checkJson([join(dir, 'ckql.config.yaml')]);
      expect(invalid.code).toBe(3);
      expect(invalid.report.problems).toMatchObject([{ line: 4, code: 'CONFIG_INVALID', severity: 'error' }]);
      expect(invalid.report.problems[0]!.message).toContain('unknown key "methd"');

      await writeFile(join(dir, 'q.ckql'), 'from corses limit 1;\nfrom courses where credits = lots');
      const checked = await checkJson(['--schema', join(repoRoot, 'examples/data'), join(dir, 'q.ckql')]);
      expect(checked.code).toBe(3);
      expect(checked.report.problems.map((p) => [p.line, p.column, p.code, p.severity])).toEqual([
        [1, 6, 'UNKNOWN_RESOURCE', 'error'],
        [2, 30, 'VALUE_TYPE_MISMATCH', 'warning'],
      ]);
      expect(checked.report.problems[0]!.hint).toBe('did you mean "courses"?');
    });

    it("checks the fields of a joined resource as of the first", async () => {
      await writeFile(
        join(dir, 'join.ckql'),
        'from enrolments e join courses c on e.course = c.code where c.subjet = math select c.title;\nfrom enrolments e join courses c on e.course = c.code select e.grde',
      );
      const checked = await checkJson(['--schema', join(repoRoot, 'examples/data'), join(dir, 'join.ckql')]);
      expect(checked.code).toBe(3);
      expect(checked.report.problems.filter((p) => p.severity === 'error').map((p) => [p.line, p.column, p.code, p.hint])).toEqual([
        [1, 61, 'UNKNOWN_FIELD', 'did you mean "subject"?'],
        [2, 62, 'UNKNOWN_FIELD', 'did you mean "grade"?'],
      ]);
    });

    it('passes with warnings only, and refuses a file it cannot read as any kind', async () => {
      await writeFile(join(dir, 'w.ckql'), 'from courses where credits = lots');
      const warned = await ckql(['check', '--schema', join(repoRoot, 'examples/data'), join(dir, 'w.ckql')]);
      expect(warned.code).toBe(0);
      expect(warned.stdout).toContain('w.ckql:1:30: warning[VALUE_TYPE_MISMATCH]');
      await writeFile(join(dir, 'notes.txt'), 'hello');
      const refused = await ckql(['check', join(dir, 'notes.txt')]);
      expect(refused.code).toBe(2);
      expect(refused.stderr).toContain('not a .ckql script, a config file');
    });

    it('a --schema that is no profile, file, folder or URL says so, not only that no profile has the name', async () => {
      await writeFile(join(dir, 'ok.ckql'), 'from courses limit 1');
      const typo = await ckql(['check', '--schema', 'examples/dta', join(dir, 'ok.ckql')], { cwd: repoRoot });
      expect(typo.code).toBe(2);
      expect(typo.stderr).toContain('error[USAGE]: --schema "examples/dta" is no profile, and no file or folder is there');
      expect(typo.stderr).toContain('hint: give a profile name, a data folder or file, or a portal URL (https://…)');
      expect(typo.stderr).not.toContain('add them under profiles:');
    });
  });

  it('exits 3 from the built bin when a query fails, and 0 when all pass', async () => {
    expect((await ckqlProcess(['check', `${fixtures}/bad.ckql`])).code).toBe(3);
    expect((await ckqlProcess(['check', `${fixtures}/good.ckql`])).code).toBe(0);
  });
});

/**
 * Every command of the CLI (in process, through `runCli`): stdout, stderr and
 * the exit status for success and for each class of error; the built bin for
 * what only a process shows (its exit status, SIGINT).
 */
import { serveCommand } from '../../src/session/serve-command.js';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdir, readdir, readlink, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer } from '../../src/server/server.js';
import { loadResources } from '../../src/engine/node/load-resources.js';
import { ckql, ckqlInProcess, ckqlProcess, ndjson, startCkql } from './run-ckql.js';
import { makeWorkspace } from './fixtures.js';


let root: string;
let data: string;

beforeAll(async () => {
  root = await makeWorkspace();
  data = join(root, 'data');
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

/** No stack trace ever reaches a user for an expected error. */
function expectNoStack(stderr: string): void {
  expect(stderr).not.toMatch(/\n\s+at .+:\d+:\d+/);
}

describe('compile and format (no source needed)', () => {
  it('compile prints the request JSON, reading --param values like query literals', async () => {
    const result = await ckql([
      'compile',
      'from courses where stage in (active, survey) and credits = $c and code = $code and online = $o search $q limit $n',
      '--param', 'c=2.5', '--param', 'code="5"', '--param', 'o=true', '--param', 'q=linear algebra', '--param', 'n=10',
    ]);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({
      resource_id: 'courses',
      filters: { stage: ['active', 'survey'], credits: 2.5, code: '5', online: true },
      q: 'linear algebra',
      limit: 10,
    });
  });

  it('format prints the canonical text, and keeps the comments (they were dropped), as the language service formats', async () => {
    const result = await ckql(['format', 'FROM courses LIMIT 5 WHERE stage = "active" -- comment']);
    expect(result.code).toBe(0);
    expect(result.stdout).toBe('from courses\nwhere stage = active\nlimit 5 -- comment\n');
    const before = await ckql(['format', '-'], { input: '-- weekly\nFROM courses LIMIT 5\n' });
    expect(before.stdout).toBe('-- weekly\nfrom courses\nlimit 5\n');
    // a comment inside the query: the text is printed as written, and stderr says why
    const inside = await ckql(['format', 'FROM courses -- math only\nWHERE subject = math']);
    expect([inside.code, inside.stdout]).toEqual([0, 'FROM courses -- math only\nWHERE subject = math\n']);
    expect(inside.stderr).toContain('a comment inside the query keeps it as written');
  });

  it('format --from request and --from sql read a request and the sql target\'s SELECT back into a query', async () => {
    const request = await ckql(['format', '--from', 'request', '{"resource_id": "courses", "filters": {"year": {"gte": 2020}}, "limit": 5}']);
    expect(request.stdout).toBe('from courses\nwhere year >= 2020\nlimit 5\n');
    const sql = (await ckql(['compile', 'from courses where year >= 2020 and stage != retired', '--target', 'sql'])).stdout;
    const back = await ckql(['format', '--from', 'sql', '-'], { input: sql });
    expect(back.stdout).toBe('from courses\nwhere year >= 2020 and stage != retired\nlimit 100\n');
    const notOurs = await ckql(['format', '--from', 'sql', 'SELECT * FROM x']);
    expect(notOurs.code).not.toBe(0);
    expect(notOurs.stderr).toContain('error[UNREADABLE_SQL]');
    expect(notOurs.stderr).toContain('1 | SELECT * FROM x');
    const badJson = await ckql(['format', '--from', 'request', '{bad']);
    expect(badJson.stderr).toContain('--from request reads a datastore_search request as JSON');
    const unknown = await ckql(['format', '--from', 'yaml', 'x']);
    expect(unknown.code).not.toBe(0);
  });

  it('a query that starts with a -- comment is a query, not an option', async () => {
    const result = await ckql(['compile', '-- the first course\nfrom courses limit 1']);
    expect(result.stderr).toBe('');
    expect(JSON.parse(result.stdout)).toEqual({ resource_id: 'courses', limit: 1 });
    const inline = await ckql(['query', '--no newline after the dashes\nfrom courses where code = C1 select code', '--data', data]);
    expect(ndjson(inline.stdout)).toEqual([{ code: 'C1' }]);
  });

  it('reads the query from stdin with -', async () => {
    const result = await ckql(['compile', '-'], { input: 'from courses\n-- two lines\nlimit 2\n' });
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({ resource_id: 'courses', limit: 2 });
  });

  it('a query error exits 3 with one rendered error: code, caret under the span, no stack', async () => {
    const result = await ckql(['compile', 'from courses where subject = limit 5']);
    expect(result.code).toBe(3);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain('error[UNEXPECTED_TOKEN]');
    expect(result.stderr).toContain('1 | from courses where subject = limit 5');
    expect(result.stderr).toMatch(/\|\s{30}\^{5}/);
    expect(result.stderr.match(/error\[/g)).toHaveLength(1);
    expectNoStack(result.stderr);
  });

  it('an unbound parameter exits 3 and names it', async () => {
    const result = await ckql(['compile', 'from courses where subject = $subject']);
    expect(result.code).toBe(3);
    expect(result.stderr).toContain('UNBOUND_PARAMETER');
    expect(result.stderr).toContain('$subject');
  });
});

describe('usage errors exit 2', () => {
  const cases: [string, string[], RegExp][] = [
    ['an unknown command, with a suggestion', ['qurey', 'from x'], /unknown command "qurey"[\s\S]*did you mean "query"\?/],
    ['an unknown flag', ['query', 'from x', '--bogus'], /unknown option '--bogus'/],
    ['a bad --format value', ['query', 'from x', '--format', 'xml'], /unknown output format "xml"/],
    ['a --param without =', ['compile', 'from x', '--param', 'oops'], /--param expects name=value/],
    ['a --param list not closed (bound as the text "(1," it matched nothing)', ['compile', 'from x where a in ($l)', '--param', 'l=(1,'], /--param l: "\(1," is not a list of values/],
    ['a token as an argument', ['query', 'from x', '--token', 's3cret'], /never taken as a command-line argument/],
    ['two sources', ['query', 'from x', '--data', 'a', '--url', 'http://x.org'], /give only one/],
    ['--lang with local data', ['query', 'from x', '--data', 'a', '--lang', 'en'], /--lang only applies to a portal/],
    ['--lang and --get with local data', ['query', 'from x', '--data', 'a', '--lang', 'en', '--get'], /--lang, --get only apply to a portal/],
    ['--engine with a portal (it was ignored)', ['query', 'from x', '--url', 'http://127.0.0.1:9', '--engine', 'pglite'], /--engine chooses who answers local data, not --url/],
    ['--db with a portal (it was ignored)', ['query', 'from x', '--url', 'http://127.0.0.1:9', '--db', 'postgres://u@h/d'], /--db chooses who answers local data, not --url/],
    ['a URL that is not http', ['query', 'from x', '--url', 'ftp://x.org'], /http\(s\) URL/],
    ['a bad port', ['serve', '.', '--port', '99999'], /--port must be a whole number/],
    ['a bad --max-body', ['serve', '.', '--max-body', 'lots'], /--max-body must be a size/],
    ['a --statement-timeout of 0', ['serve', '.', '--engine', 'pglite', '--statement-timeout', '0'], /--statement-timeout must be a whole number from 1 up/],
    ['--statement-timeout with the memory engine, which runs no SQL', ['serve', 'examples/data', '--statement-timeout', '100'], /--statement-timeout bounds the SQL of the PostgreSQL engines/],
    ['an unknown profile', ['query', 'from x', '--profile', 'nope'], /no profile named "nope"/],
    ['a missing argument', ['compile'], /missing required argument 'query'/],
  ];
  // In process: the same runCli as the bin, without a process start per case.
  for (const [name, args, pattern] of cases) {
    it(name, async () => {
      const result = await ckqlInProcess(args, { cwd: root });
      expect(result.stderr).toMatch(pattern);
      expect(result.code).toBe(2);
      expect(result.stdout).toBe('');
      expect(result.stderr).not.toContain('s3cret');
      expectNoStack(result.stderr);
    });
  }

  it('the bin itself exits 2 for an unknown command and an unknown flag', async () => {
    const command = await ckqlProcess(['qurey', 'from x']);
    expect(command.code).toBe(2);
    expect(command.stderr).toContain('did you mean "query"?');
    const flag = await ckqlProcess(['compile', 'from x', '--nope']);
    expect(flag.code).toBe(2);
    expect(flag.stderr).toContain("unknown option '--nope'");
  });

  it('every command has --help (exit 0)', async () => {
    for (const command of ['repl', 'query', 'run', 'compile', 'format', 'explain', 'serve', 'fields', 'resources']) {
      const result = await ckqlInProcess([command, '--help']);
      expect(result.code, command).toBe(0);
      expect(result.stdout).toContain(`Usage: ckql ${command}`);
    }
    const top = await ckql(['--help']);
    expect(top.code).toBe(0);
    expect(top.stdout).toContain('Exit status: 0 ok, 1 data or server error, 2 usage or config error, 3 query error');
  });
});

describe('query --data', () => {
  it('prints ndjson when stdout is not a terminal', async () => {
    const result = await ckql(['query', 'from courses where subject = math order by code desc', '--data', data]);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(ndjson(result.stdout).map((row) => (row as { code: string }).code)).toEqual(['C4', 'C3', 'C1']);
  });

  it('--format json prints one JSON array; csv escapes formulas but not numbers; markdown escapes pipes', async () => {
    const json = await ckql(['query', 'from courses select code, credits', '--data', data, '--format', 'json']);
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual([
      { code: 'C1', credits: 5 },
      { code: 'C2', credits: -3 },
      { code: 'C3', credits: 2.5 },
      { code: 'C4', credits: null },
      { code: 'C5', credits: 4 },
    ]);

    const csv = await ckql(['query', 'from courses select code, title, credits', '--data', data, '--format', 'csv']);
    expect(csv.code).toBe(0);
    expect(csv.stdout).toBe(
      [
        'code,title,credits',
        'C1,Linear Algebra,5',
        "C2,'=SUM(A1:A2),-3",
        'C3,pipes | here,2.5',
        "C4,'-2+3,",
        "C5,'@mention,4",
        '',
      ].join('\n'),
    );

    const markdown = await ckql(['query', 'from courses where code = C3 select code, title, credits', '--data', data, '--format', 'markdown']);
    expect(markdown.stdout).toBe('| code | title | credits |\n| --- | --- | ---: |\n| C3 | pipes \\| here | 2.5 |\n');
  });

  it('--format table renders the ink table with a footer', async () => {
    const result = await ckql(['query', 'from courses where subject = math select code, title', '--data', data, '--format', 'table']);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('Linear Algebra');
    expect(result.stdout).toMatch(/3 of 3 records/);
    expect(result.stdout).not.toContain('\u001b[');
  });

  it('--all pages through everything in the chosen format, with no progress text when stderr is not a terminal', async () => {
    const result = await ckql(['query', 'from numbers where even = true', '--all', '--page-size', '5', '--data', data, '--format', 'csv']);
    expect(result.code).toBe(0);
    expect(result.stderr).toBe('');
    const lines = result.stdout.trim().split('\n');
    expect(lines[0]).toBe('_id,n,even');
    expect(lines.slice(1).map((line) => Number(line.split(',')[1]))).toEqual(Array.from({ length: 12 }, (_, i) => 2 * (i + 1)));
  });

  it('a result cut short by the default limit says so on stderr when stdout is a pipe, and in the footer at a terminal', async () => {
    const piped = await ckql(['query', 'from numbers', '--data', data, '--format', 'csv']);
    expect(piped.code).toBe(0);
    expect(piped.stdout.trim().split('\n')).toHaveLength(26);
    expect(piped.stderr).toBe('');
    const limited = await ckql(['query', 'from numbers', '--data', data], { env: {} });
    expect(limited.stderr).toBe('');
    const server = await startServer({ tables: await loadResources([data]), maxLimit: 10 });
    try {
      const capped = await ckql(['query', 'from numbers limit 20', '--url', server.url]);
      expect(ndjson(capped.stdout)).toHaveLength(10);
      expect(capped.stderr).toContain('note: 10 of 25 records: the source caps limit at 10 (limit 20 was asked)');
      const exact = await ckql(['query', 'from numbers limit 5', '--url', server.url]);
      expect(exact.stderr).toBe('');
      const terminal = await ckql(['query', 'from numbers limit 20', '--url', server.url], { tty: { stdout: true, columns: 100 } });
      expect(terminal.stderr).toBe('');
      expect(terminal.stdout).toContain('10 of 25 records');
      expect(terminal.stdout).toContain('the source caps limit at 10');
    } finally {
      await server.close();
    }
  });

  it('the default limit (100) is named when it cuts a result short', async () => {
    const big = join(root, 'big');
    await mkdir(big, { recursive: true });
    await writeFile(join(big, 'many.json'), JSON.stringify(Array.from({ length: 150 }, (_, n) => ({ n }))));
    const result = await ckql(['query', 'from many', '--data', big]);
    expect(ndjson(result.stdout)).toHaveLength(100);
    expect(result.stderr).toBe('note: 100 of 150 records: the default limit; add `limit N`, or --all for every record\n');
  });

  it('--no-escape-formulas keeps csv text as it is; a script of several statements is refused with --format csv', async () => {
    const raw = await ckql(['query', 'from courses where code = C2 select title', '--data', data, '--format', 'csv', '--no-escape-formulas']);
    expect(raw.stdout).toBe('title\n=SUM(A1:A2)\n');
    const script = await ckql(['--data', data, '-c', 'from courses limit 1; from numbers limit 1', '--format', 'csv']);
    expect(script.code).toBe(2);
    expect(script.stdout).toBe('');
    expect(script.stderr).toContain('--format csv prints one table, and this script has 2 statements');
  });

  it('an unknown field is a query error (exit 3) that suggests the nearest field', async () => {
    const result = await ckql(['query', 'from courses where subjet = math', '--data', data]);
    expect(result.code).toBe(3);
    expect(result.stderr).toContain('error[UNKNOWN_FIELD]: "courses" has no field "subjet"');
    expect(result.stderr).toContain('did you mean "subject"?');
    expectNoStack(result.stderr);
  });

  // A range filter, a joined resource's field: the request the source refuses does not name the field as written,
  // so the field is found in the query's text, as `ckql check --schema` finds it, and shown there.
  it.each([
    ['from courses where credts >= 3', 'courses', 'credts', 'credits'],
    ['from courses a join courses b on a.code = b.code where b.subjet = math select b.title', 'courses', 'b.subjet', 'subject'],
  ])('an unknown field in %j is shown under the query at its place, with the nearest field', async (query, resource, written, meant) => {
    const result = await ckql(['query', query, '--data', data]);
    expect(result.code).toBe(3);
    const lines = result.stderr.split('\n');
    expect(lines[0]).toBe(`error[UNKNOWN_FIELD]: "${resource}" has no field "${written.replace(/^\w+\./, '')}"`);
    const excerpt = lines.findIndex((line) => line === `1 | ${query}`);
    expect(excerpt).toBeGreaterThan(0);
    const caret = lines[excerpt + 1] ?? '';
    expect(caret.indexOf('^') - '1 | '.length).toBe(query.indexOf(written));
    expect(caret.trim().replace(/^\|\s*/, '')).toBe('^'.repeat(written.length));
    expect(result.stderr).toContain(`did you mean "${meant}"?`);
  });

  it('a value the field\'s type cannot read, refused by the source, is shown under the query at the value (exit 3)', async () => {
    const query = 'from courses where credits >= high';
    const result = await ckql(['query', query, '--data', data]);
    expect(result.code).toBe(3);
    const lines = result.stderr.split('\n');
    expect(lines[0]).toMatch(/^error\[VALUE_TYPE_MISMATCH\]: "credits" is of type \w+, and "high" is not an? \w+ value/);
    const excerpt = lines.findIndex((line) => line === `1 | ${query}`);
    expect(excerpt).toBeGreaterThan(0);
    expect(lines[excerpt + 1]).toBe(`  | ${' '.repeat(query.indexOf('high'))}^^^^`);
    expect(result.stderr).toContain('hint: compare the field with a value of its type');
    expectNoStack(result.stderr);
  });

  it('an unknown field in order by or select is found too', async () => {
    const result = await ckql(['query', 'from courses order by credit desc', '--data', data]);
    expect(result.code).toBe(3);
    expect(result.stderr).toContain('did you mean "credits"?');
  });

  it('an unknown resource exits 3 and suggests a known one', async () => {
    const result = await ckql(['query', 'from corses', '--data', data]);
    expect(result.code).toBe(3);
    expect(result.stderr).toContain('error[UNKNOWN_RESOURCE]: no resource named "corses"');
    expect(result.stderr).toContain('1 | from corses\n  |      ^^^^^^');
    expect(result.stderr).toContain('did you mean "courses"?');
  });

  it('a missing data path exits 1 naming it', async () => {
    const result = await ckql(['query', 'from courses', '--data', join(root, 'nope')]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('DATA_NOT_FOUND');
    expect(result.stderr).toContain(join(root, 'nope'));
    expectNoStack(result.stderr);
  });
});

describe('fields, resources, explain', () => {
  it('resources lists every local table with alias and total', async () => {
    const result = await ckql(['resources', '--data', data, '--format', 'json']);
    expect(result.code).toBe(0);
    const rows = JSON.parse(result.stdout) as { alias: string; total: number; id: string }[];
    expect(rows.map(({ alias, total }) => ({ alias, total }))).toEqual([
      { alias: 'courses', total: 5 },
      { alias: 'numbers', total: 25 },
    ]);
    expect(rows[0]?.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
  });

  it('a --timeout below a millisecond is taken as one (it was refused as "timeout must be a positive number, not 0")', async () => {
    const result = await ckql(['query', 'from courses limit 1', '--data', data, '--timeout', '0.0001']);
    expect(result.stderr).not.toContain('must be a positive number');
    // in time, or timed out: not a usage error
    expect([0, 4]).toContain(result.code);
  });

  it('a table of resources, of fields or of named queries counts them by what they are, not as records', async () => {
    // `courses` of this data has 5 records; its fields' table said "N of N records" above "courses: N fields, 5 records"
    const resources = await ckql(['resources', '--data', data, '--format', 'table']);
    expect(resources.stdout).toMatch(/\n2 resources\n$/);
    const fields = await ckql(['fields', 'courses', '--data', data, '--format', 'table']);
    const count = /courses: (\d+) fields, 5 records/.exec(fields.stderr)?.[1];
    expect(fields.stdout).toMatch(new RegExp(`\\n${count} fields\\n$`));
    expect(fields.stdout).not.toContain('records');
    const one = await ckql(['resources', '--data', join(data, 'numbers.json'), '--format', 'table']);
    expect(one.stdout).toMatch(/\n1 resource\n$/);
  });

  it('resources lists the files it can read beside those it cannot, reports each bad one with its line, and exits 1', async () => {
    const mixed = join(root, 'mixed');
    await mkdir(mixed, { recursive: true });
    await writeFile(join(mixed, 'good.csv'), 'x\n1\n2\n');
    await writeFile(join(mixed, 'bad.csv'), 'a,b\n1,2\n3,4,5\n');
    await writeFile(join(mixed, 'worse.ndjson'), '{"a": 1}\n{"a": 2}\n{oops\n');
    const result = await ckql(['resources', '--data', mixed, '--format', 'json']);
    expect((JSON.parse(result.stdout) as { alias: string; total: number }[]).map(({ alias, total }) => ({ alias, total }))).toEqual([{ alias: 'good', total: 2 }]);
    expect(result.stderr).toMatch(/ --> \S*bad\.csv:3\n/);
    expect(result.stderr).toMatch(/ --> \S*worse\.ndjson:3\n/);
    expect(result.stderr.match(/= skipped: not listed; the other files are/g)).toHaveLength(2);
    expect(result.code).toBe(1);
    // a query of the good file does not read the bad ones
    const good = await ckql(['query', 'from good', '--data', mixed]);
    expect(good.code).toBe(0);
    expect(good.stderr).toBe('');
  });

  it('fields lists one resource, or every resource when none is named', async () => {
    const one = await ckql(['fields', 'courses', '--data', data]);
    expect(one.code).toBe(0);
    expect(ndjson(one.stdout)).toEqual([
      { field: '_id', type: 'int' },
      { field: 'code', type: 'text' },
      { field: 'title', type: 'text' },
      { field: 'subject', type: 'text' },
      { field: 'stage', type: 'text' },
      { field: 'credits', type: 'numeric' },
    ]);
    const all = await ckql(['fields', '--data', data, '--format', 'csv']);
    expect(all.stdout.split('\n')).toContain('numbers,even,bool');
    expect(all.stdout.split('\n')).toContain('courses,subject,text');
    const misspelt = await ckql(['fields', 'corses', '--data', data]);
    expect(misspelt.code).toBe(3);
    expect(misspelt.stderr).toContain('did you mean "courses"?');
  });

  it('explain prints the request, the GET URL and a curl line with the token redacted', async () => {
    const result = await ckql(
      ['explain', 'from courses where subject = $s limit 5', '--param', 's=math', '--url', 'https://data.example.org/', '--lang', 'de'],
      { env: { CKQL_TOKEN: 'tok-very-secret' } },
    );
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('"filters": {\n    "subject": "math"\n  }');
    expect(result.stdout).toContain(
      'https://data.example.org/de/api/action/datastore_search?resource_id=courses&filters=%7B%22subject%22%3A%22math%22%7D&limit=5',
    );
    expect(result.stdout).toContain(
      `curl -X POST https://data.example.org/de/api/action/datastore_search -H 'content-type: application/json' -H "Authorization: $CKQL_TOKEN" --data-binary '{"resource_id":"courses","filters":{"subject":"math"},"limit":5}'`,
    );
    expect(result.stdout + result.stderr).not.toContain('tok-very-secret');
  });

  it('explain --get gives a GET curl line; local data is explained against ckql serve', async () => {
    const get = await ckql(['explain', 'from courses limit 1', '--url', 'http://portal.test', '--get']);
    expect(get.stdout).toContain("curl 'http://portal.test/api/action/datastore_search?resource_id=courses&limit=1'");
    const local = await ckql(['explain', 'from courses limit 1', '--data', data]);
    expect(local.stdout).toContain('http://127.0.0.1:8080/api/action/datastore_search');
    expect(local.stdout).toMatch(/^# local data: start the server first with: ckql serve \S*\/data --port 8080$/m);
    // a kept database: the command names it (it lost the path once: "ckql serve  --port 8080")
    const kept = await ckql(['explain', 'from courses limit 1', '--db', '/srv/ckql db'], { cwd: '/' });
    expect(kept.stdout).toContain("# local data: start the server first with: ckql serve --db '/srv/ckql db' --port 8080");
    const sql = await ckql(['explain', 'from courses where level > 1', '--data', data, '--engine', 'pglite', '--target', 'sql']);
    expect(sql.stdout).toMatch(/ckql serve \S*\/data --engine pglite --port 8080$/m);
  });

  it('explain names a server database without its password', () => {
    expect(serveCommand({ kind: 'data', paths: [], db: 'postgres://reader:pw@db.example.org/datastore', engine: 'postgres' }, 'ckan-2.12')).toBe(
      'ckql serve --db postgres://reader@db.example.org/datastore --ckan 2.12 --port 8080   # the password from PGPASSWORD',
    );
  });
});

describe('network and interruption', () => {
  it('an unreachable portal exits 4', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const { port } = closed.address() as AddressInfo;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const result = await ckql(['query', 'from courses', '--url', `http://127.0.0.1:${port}`]);
    expect(result.code).toBe(4);
    expect(result.stderr).toContain('CONNECTION_FAILED');
    expectNoStack(result.stderr);
  });

  it('a resource the portal refuses (403) exits 5, with a token or without; the right token reads it', async () => {
    const server = await startServer({ tables: await loadResources([data]), privateResources: ['courses'], tokens: ['s3cret-right'] });
    try {
      const none = await ckql(['query', 'from courses limit 1', '--url', server.url]);
      expect(none.stderr).toContain('FORBIDDEN');
      expect(none.stderr).toContain('no token was sent; this resource needs one');
      expect(none.code).toBe(5);
      const wrong = await ckql(['query', 'from courses limit 1', '--url', server.url], { env: { CKQL_TOKEN: 's3cret-wrong' } });
      expect(wrong.stderr).toContain('the token that was sent is not accepted for this resource');
      expect(wrong.stderr).not.toContain('s3cret-wrong');
      expect(wrong.code).toBe(5);
      const right = await ckql(['query', 'from courses limit 1', '--url', server.url], { env: { CKQL_TOKEN: 's3cret-right' } });
      expect(right.code).toBe(0);
    } finally {
      await server.close();
    }
  });

  it('a request a portal refuses as invalid exits 3, as it does on local data; a 5xx exits 1', async () => {
    const server = await startServer({ tables: await loadResources([data]) });
    try {
      const field = await ckql(['query', 'from courses where subjet = math', '--url', server.url]);
      expect(field.stderr).toContain('error[UNKNOWN_FIELD]: "courses" has no field "subjet"');
      expect(field.stderr).toContain('did you mean "subject"?');
      expect(field.code).toBe(3);
      // a portal cannot list its resources, so there is no guess at the name meant
      const resource = await ckql(['query', 'from corses', '--url', server.url]);
      expect(resource.stderr).toContain('error[UNKNOWN_RESOURCE]: no resource named "corses"');
      expect(resource.stderr).not.toContain('hint');
      expect(resource.code).toBe(3);
    } finally {
      await server.close();
    }
    const broken = createServer((_request, response) => {
      response.writeHead(500, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ success: false, error: { __type: 'Internal Server Error', message: 'boom' } }));
    });
    await new Promise<void>((resolve) => broken.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = broken.address() as AddressInfo;
      expect((await ckql(['query', 'from courses', '--url', `http://127.0.0.1:${port}`])).code).toBe(1);
    } finally {
      broken.closeAllConnections();
      await new Promise<void>((resolve) => broken.close(() => resolve()));
    }
  });

  it("--timeout (and a profile's timeout:) bounds the wait for a portal that never answers: TIMEOUT, exit 4", async () => {
    const server = createServer(() => undefined);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const url = `http://127.0.0.1:${port}`;
      const flag = await ckql(['query', 'from courses', '--url', url, '--timeout', '0.2']);
      expect(flag.code).toBe(4);
      expect(flag.stderr).toContain('TIMEOUT');
      expect(flag.stderr).toContain('within 200 ms');
      expect(flag.stderr).toContain('--timeout');
      const config = join(root, 'timeout.yaml');
      await writeFile(config, `default: slow\nprofiles:\n  slow:\n    url: ${url}\n    timeout: 0.25\n`);
      const profile = await ckql(['query', 'from courses', '--config', config]);
      expect(profile.code).toBe(4);
      expect(profile.stderr).toContain('within 250 ms');
      const bad = await ckql(['query', 'from courses', '--url', url, '--timeout', 'soon']);
      expect(bad.code).toBe(2);
      expect(bad.stderr).toContain('--timeout must be a number of seconds');
    } finally {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  it('SIGINT during a query aborts it and exits 130', async () => {
    let requests = 0;
    let arrived: () => void = () => undefined;
    const requestArrived = new Promise<void>((resolve) => (arrived = resolve));
    // A portal that never answers.
    const server = createServer(() => {
      requests += 1;
      arrived();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const child = startCkql(['query', 'from courses', '--url', `http://127.0.0.1:${port}`]);
      child.stdin.end();
      let stderr = '';
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
      const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
      await requestArrived;
      child.kill('SIGINT');
      expect(await exited).toBe(130);
      expect(stderr).toContain('interrupted');
      expect(requests).toBe(1);
    } finally {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  it('SIGINT while local data is printed with --all stops it and exits 130', async () => {
    const file = join(root, 'many.csv');
    const rows = 200_000;
    await writeFile(file, ['n,word', ...Array.from({ length: rows }, (_, i) => `${i},w${i % 97}`)].join('\n'));
    const child = startCkql(['query', '--data', file, 'from many where word != w3', '--all', '--format', 'ndjson']);
    child.stdin.end();
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    let lines = 0;
    let signalled = false;
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    child.stdout.on('data', (chunk: Buffer) => {
      lines += chunk.toString('utf8').split('\n').length - 1;
      if (signalled) return;
      signalled = true;
      // Records are coming: stop reading (the pipe fills, so the run cannot finish first), interrupt, read on.
      child.stdout.pause();
      child.kill('SIGINT');
      setTimeout(() => child.stdout.resume(), 200);
    });
    expect(await exited).toBe(130);
    expect(stderr).toContain('interrupted');
    expect(lines).toBeGreaterThan(0);
    expect(lines).toBeLessThan(rows - rows / 97);
  });

  it('SIGINT during a long self-join, grouping or sort of local data exits 130 at once', async () => {
    // A many-to-many self-join on `k` (3 values): 9 million pairs of 3000 rows, many seconds of work for each query.
    const file = join(root, 'pairs.csv');
    await writeFile(file, ['k,g,x', ...Array.from({ length: 3000 }, (_, i) => `${i % 3},g${i % 40},${(i * 7919) % 3000}`)].join('\n'));
    const queries = [
      'from pairs a join pairs b on a.k = b.k select a.x, b.x limit 5',
      'from pairs a join pairs b on a.k = b.k group by a.g, b.g select a.g, b.g, count(*) as n',
      'from pairs a join pairs b on a.k = b.k select a.x, b.x order by b.x, a.x limit 5',
    ];
    const outcomes = await Promise.all(queries.map(async (query) => {
      const child = startCkql(['query', '--data', file, query, '--format', 'ndjson']);
      child.stdin.end();
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
      const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
      // The file is read inside the query (its SIGINT handler is set by then); once it is closed again, the join runs.
      await untilFile(child.pid!, file, true);
      await untilFile(child.pid!, file, false);
      await new Promise((resolve) => setTimeout(resolve, 300));
      const signalled = performance.now();
      child.kill('SIGINT');
      const code = await exited;
      return { query, code, stdout, stderr: stderr.trim(), exitMs: performance.now() - signalled };
    }));
    for (const outcome of outcomes) {
      expect({ query: outcome.query, code: outcome.code, stdout: outcome.stdout, stderr: outcome.stderr }).toEqual({ query: outcome.query, code: 130, stdout: '', stderr: 'interrupted' });
      // Bounded generously (the machine is shared); the work itself would run on for many seconds.
      expect(outcome.exitMs).toBeLessThan(2000);
    }
  });
});

/** Waits until the process `pid` has `file` open (`open`), or no longer has it open (Linux: its /proc/PID/fd links). */
async function untilFile(pid: number, file: string, open: boolean): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    const links = await readdir(`/proc/${pid}/fd`).then((fds) => Promise.all(fds.map((fd) => readlink(`/proc/${pid}/fd/${fd}`).catch(() => ''))), (): string[] => []);
    if (links.includes(file) === open) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`process ${pid} never ${open ? 'opened' : 'closed'} ${file}`);
}

describe('the interactive REPL started by the CLI', () => {
  it(".explain names the token the way the CLI's explain does: $(cat FILE) for a token file, never the token", async () => {
    const server = await startServer({ tables: await loadResources([data]) });
    const tokenFile = join(root, 'repl-token');
    await writeFile(tokenFile, 'tok-repl-secret-9\n', { mode: 0o600 });
    try {
      const result = await ckql(['--url', server.url, '--token-file', tokenFile], {
        tty: { stdin: true, stdout: true, columns: 120 },
        input: '.explain on\rfrom courses limit 1\r.exit\r',
        env: { XDG_STATE_HOME: join(root, 'state') },
      });
      expect(result.stdout).toContain(`Authorization: $(cat ${tokenFile})`);
      expect(result.stdout).not.toContain('tok-repl-secret-9');
      expect(result.stdout).not.toContain('$CKQL_TOKEN');
    } finally {
      await server.close();
    }
  });
});

describe('colour', () => {
  it('errors are plain when stderr is not a terminal, coloured with FORCE_COLOR, and plain again with NO_COLOR', async () => {
    const query = ['compile', 'from courses where'];
    expect((await ckql(query)).stderr).not.toContain('\u001b[');
    expect((await ckql(query, { env: { FORCE_COLOR: '1' } })).stderr).toContain('\u001b[');
    expect((await ckql(query, { env: { FORCE_COLOR: '1', NO_COLOR: '1' } })).stderr).not.toContain('\u001b[');
  });
});

describe('the REPL command in script mode', () => {
  it('runs -c statements, and statements piped on stdin, as ndjson', async () => {
    const inline = await ckql(['--data', data, '-c', 'from courses where code = C1 select code; from numbers limit 1 select n']);
    expect(inline.code).toBe(0);
    expect(ndjson(inline.stdout)).toEqual([{ code: 'C1' }, { n: 1 }]);
    const piped = await ckql(['repl', '--data', data], { input: 'from courses where code = C5 select code;\n' });
    expect(piped.code).toBe(0);
    expect(ndjson(piped.stdout)).toEqual([{ code: 'C5' }]);
  });

  it('the demo data is the source when nothing is configured, from any working directory', async () => {
    const result = await ckql(['resources', '--format', 'json'], { cwd: root });
    expect(result.code).toBe(0);
    const aliases = (JSON.parse(result.stdout) as { alias: string }[]).map((row) => row.alias);
    expect(aliases).toContain('courses');
  });
});

/**
 * Every command and example in README.md runs here, as it is written. The
 * first test reads the README's commands (each line of a ```sh block, and
 * each inline `ckql …`/`npm …`/`npx …`/`curl …` with arguments that is not a
 * synopsis with placeholders) and checks that `readmeCommands` below says
 * how each is run, so a command added to the README without a test, or a
 * test left for a command the README dropped, fails.
 *
 * What changes between the README and the run, and why:
 * - `ckql serve … --port 8080` listens on `--port 0` (8080 may be taken on a
 *   shared machine), and the curl lines that follow go to the port it printed;
 * - files the README assumes (`broken.json`, `big.csv`, `tokens.txt`, a kept
 *   database `./ckql-db`) are made in a scratch folder that is the working
 *   directory, with `examples/` linked into it;
 * - `postgres://…@db/datastore` is a fresh database of the test cluster
 *   (`CKQL_TEST_PG_URL`), as the other PostgreSQL tests use;
 * - `ckql …` runs in this process (`runCli`, the bin's code path), except the
 *   servers, which run as the built bin;
 * - curl lines are sent with `fetch`, after reading their method, URL,
 *   headers and body as curl would.
 * Commands the test cannot run (installing, linking, the whole suite) are
 * checked to be what CI runs or a script package.json defines.
 */
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { Agent, fetch as undiciFetch } from 'undici';
import { parse as parseCsv } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from '../src/syntax/parse.js';
import { renderError } from '../src/diagnostics.js';
import { readConfigFile } from '../src/config/load.js';
import { ckql, ndjson, repoRoot, startCkql, waitForLine, type RunResult } from './cli/run-ckql.js';
import { startDriver, prompt } from './repl/driver.js';

const readme = readFileSync(join(repoRoot, 'README.md'), 'utf8');
const pgUrl = process.env.CKQL_TEST_PG_URL;
const inCi = process.env.CI !== undefined && process.env.CI !== '' && process.env.CI !== 'false';

// ---------------------------------------------------------------------------
// The README's commands

/** Each command the README shows, in order: lines of ```sh blocks and inline examples. */
function commandsInReadme(): string[] {
  const found: string[] = [];
  for (const block of readme.matchAll(/^```(\w*)\n([\s\S]*?)^```/gm)) {
    if (block[1] !== 'sh') continue;
    for (const line of (block[2] ?? '').replace(/\\\n\s*/g, ' ').split('\n')) {
      const command = line.replace(/\s+#.*$/, '').trim();
      if (command !== '' && !command.startsWith('#')) found.push(command);
    }
  }
  const prose = readme.replace(/^```[\s\S]*?^```/gm, '');
  for (const span of prose.matchAll(/`([^`\n]+)`/g)) {
    const text = span[1] ?? '';
    if (!/^(ckql|npm|npx|curl|node) /.test(text)) continue;
    const unquoted = text.replace(/\$?'[^']*'|"[^"]*"/g, '');
    // a synopsis (`ckql serve <dir|file>…`, `ckql serve DIR`) or a command's bare name (`ckql query`) is not an example
    if (text.includes('…') || /[<[|]|\b[A-Z]{2,}\b/.test(unquoted)) continue;
    if (text.startsWith('ckql ') && shellWords(text).length < 3) continue;
    if (text.startsWith('curl ') && !text.includes('http')) continue;
    found.push(text);
  }
  return found;
}

/** Splits a command as a POSIX shell would: `'…'`, `"…"` (with `\` escapes) and `$'…'` (with `\n`). */
export function shellWords(command: string): string[] {
  const words: string[] = [];
  let word: string | undefined;
  for (let i = 0; i < command.length; i++) {
    const c = command[i] as string;
    if (/\s/.test(c)) {
      if (word !== undefined) words.push(word);
      word = undefined;
    } else if (c === "'") {
      const end = command.indexOf("'", i + 1);
      word = (word ?? '') + command.slice(i + 1, end);
      i = end;
    } else if (c === '$' && command[i + 1] === "'") {
      const end = command.indexOf("'", i + 2);
      word = (word ?? '') + command.slice(i + 2, end).replace(/\\n/g, '\n').replace(/\\t/g, '\t').replace(/\\'/g, "'").replace(/\\\\/g, '\\');
      i = end;
    } else if (c === '"') {
      let j = i + 1;
      let text = '';
      while (j < command.length && command[j] !== '"') {
        if (command[j] === '\\' && j + 1 < command.length) j += 1;
        text += command[j];
        j += 1;
      }
      word = (word ?? '') + text;
      i = j;
    } else {
      word = (word ?? '') + c;
    }
  }
  if (word !== undefined) words.push(word);
  return words;
}

/**
 * How each README command is run: `here` (by the test named), `ci` (the
 * CI script runs it: the text it must hold), or `script` (a package.json
 * script, named, with what checks it).
 */
type How =
  | { readonly here: string }
  | { readonly ci: string }
  | { readonly script: string; readonly checkedBy: string }
  /** run by a bench section (not in CI): the text its source must hold */
  | { readonly bench: string; readonly runs: string }
  /** run by another test file: the text that file must hold */
  | { readonly testedIn: string; readonly runs: string }
  /** not run by any test, and why (the README says so too) */
  | { readonly notRun: string };

const readmeCommands: Readonly<Record<string, How>> = {
  'npm ci && npm start': { ci: 'npm ci' },
  'npm test': { ci: 'npm test' },
  'npm start': { here: 'npm start' },
  "npm start -- query 'from courses limit 3'": { here: 'npm start' },
  "node dist/bin/ckql.js query 'from courses limit 3'": { here: 'npm start' },
  'npm run build': { script: 'build', checkedBy: 'test/global-setup.ts builds the bundles, test/cli/package.test.ts the declarations' },
  'npm link': { script: 'prepack', checkedBy: 'npm links the package; test/cli/package.test.ts checks the bin and the files it ships' },
  'npm run grammar': { script: 'grammar', checkedBy: 'test/syntax/grammar-diagrams.test.ts: the committed output is what it writes' },
  'npm run lint': { ci: 'npm run lint' },
  'npm run typecheck': { ci: 'npm run typecheck' },
  'npm run bench': { script: 'bench', checkedBy: 'BENCHMARKS.md, by hand: a full run takes minutes' },
  'node -e 0': { here: 'tests and benchmarks' },
  'npx tsx examples/embed.ts': { here: 'examples' },
  'ckql < examples/queries.ckql': { here: 'a session' },
  'ckql -f examples/queries.ckql --format markdown': { here: 'a session' },
  "ckql --data examples/data -c 'from schools where country = NO; from courses limit 2'": { here: 'a session' },
  "ckql explain 'from enrolments where grade >= 5 and status != withdrawn' --url https://data.example.org --target ckan-2.12": { here: 'the language' },
  "ckql compile 'from enrolments where grade between 4 and 5' --target sql": { here: 'the language' },
  "ckql --data examples/data -c 'from courses limit 3; from schools limit 1'": { here: 'command line' },
  "ckql query 'from courses where stage = active limit 5' --format csv": { here: 'command line' },
  'ckql run by-subject --param subject=physics --config examples/ckql.config.yaml': { here: 'command line' },
  "ckql compile 'from courses where level = $l' --param l=2": { here: 'command line' },
  'ckql format \'FROM courses LIMIT 5 WHERE stage = "active"\'': { here: 'command line' },
  "ckql explain 'from courses where subject = math' --url https://data.example.org --lang en": { here: 'command line' },
  'ckql serve examples/data --port 8080': { here: 'the local server' },
  'ckql fields courses': { here: 'command line' },
  'ckql resources --data examples/data': { here: 'command line' },
  "ckql query $'-- weekly\\nfrom courses'": { here: 'command line' },
  "ckql query 'from courses limit 1'": { here: 'exit statuses' },
  "ckql query 'from broken' --data broken.json": { here: 'exit statuses' },
  "ckql query 'from x' --format xml": { here: 'exit statuses' },
  "ckql query 'from courses where subjet = math'": { here: 'exit statuses' },
  "ckql query 'from x' --url http://127.0.0.1:9": { here: 'exit statuses' },
  "ckql query 'from courses' --url http://127.0.0.1:8080": { here: 'the local server' },
  'ckql serve examples/data --private courses --tokens-file tokens.txt': { here: 'the local server' },
  'ckql run by-subject --param subject=physics': { here: 'config files' },
  'curl -s -X POST http://127.0.0.1:8080/en/api/action/datastore_search  -H \'content-type: application/json\'  -d \'{"resource_id": "courses", "limit": 2, "q": "algebra"}\'': { here: 'the local server' },
  'curl -s -X POST http://127.0.0.1:8080/en/api/action/datastore_search  -H \'content-type: application/json\'  -d \'{"resource_id": "courses", "filters": {"stage": ["active", "survey"], "subject": "math"}}\'': { here: 'the local server' },
  "curl -s 'http://127.0.0.1:8080/de/api/action/datastore_search?resource_id=courses&limit=2'": { here: 'the local server' },
  "curl -s 'http://127.0.0.1:8080/de/api/action/datastore_search?resource_id=courses&q=algebra'": { here: 'the local server' },
  'ckql serve examples/data --ckan 2.12 &': { here: 'the local server' },
  'curl -s -X POST http://127.0.0.1:8080/api/3/action/datastore_search  -d \'{"resource_id": "courses", "filters": {"level": {"gte": 3}}, "include_next_page": true, "limit": 2}\'': { here: 'the local server' },
  'ckql serve --engine pglite examples/data/courses.csv': { here: 'engines' },
  'ckql load examples/data/courses.csv --db ./ckql-db': { here: 'engines' },
  'ckql query --db ./ckql-db \'from courses search "linear algebra" limit 3\'': { here: 'engines' },
  'ckql load big.csv --db postgres://ckan@db/datastore --replace --alias big': { here: 'engines' },
  'ckql serve --db postgres://reader@db/datastore': { here: 'engines' },
  'pg_basebackup -h primary.example.org -U replicator -D /srv/pg/replica -R -X stream': { bench: 'replica', runs: "'-D', replicaData, '-R', '-X', 'stream'" },
  "pg_ctl -D /srv/pg/replica -o '-c port=5433' start": { bench: 'replica', runs: "'-D', replicaData, '-l'" },
  'ckql serve --db postgres://reader@primary.example.org/datastore --host 0.0.0.0 --port 8081': { bench: 'replica', runs: "startChild('serve.ts', ['db', url])" },
  'ckql serve --db postgres://reader@replica.example.org:5433/datastore --host 0.0.0.0 --port 8082': { bench: 'replica', runs: "startChild('serve.ts', ['db', url])" },
  'npm run bench -- --only replica': { bench: 'replica', runs: "replica: { title: '10." },
  "ckql serve examples/data --port 8080 &": { testedIn: 'test/cli/portals.test.ts', runs: "readme.indexOf('## Portals: find the data')" },
  "ckql datasets course --url http://127.0.0.1:8080": { testedIn: 'test/cli/portals.test.ts', runs: "readme.indexOf('## Portals: find the data')" },
  "ckql fields \"university/courses\" --url http://127.0.0.1:8080": { testedIn: 'test/cli/portals.test.ts', runs: "readme.indexOf('## Portals: find the data')" },
  "ckql query 'from \"university/courses\" where level >= 3 limit 5' --url http://127.0.0.1:8080": { testedIn: 'test/cli/portals.test.ts', runs: "readme.indexOf('## Portals: find the data')" },
  "ckql export \"university/courses\" -o courses.csv --url http://127.0.0.1:8080": { testedIn: 'test/cli/portals.test.ts', runs: "readme.indexOf('## Portals: find the data')" },
  "ckql load courses.csv --db ./ckql-db": { testedIn: 'test/cli/portals.test.ts', runs: "readme.indexOf('## Portals: find the data')" },
  "ckql query 'from courses where level >= 3 limit 5' --db ./ckql-db": { testedIn: 'test/cli/portals.test.ts', runs: "readme.indexOf('## Portals: find the data')" },
  'ckql datasets course --data examples/data': { here: 'command line' },
  'ckql export courses -o courses.csv --data examples/data': { here: 'command line' },
  "ckql query --data examples/data 'from courses group by subject select subject, count(*) as n, avg(credits) order by n desc, subject limit 3'": { here: 'the language' },
  "ckql query --data examples/data 'from courses where credits >= 5 select code, credits, round(credits / 3.0, 1) as per_term, upper(subject) || \"-\" || level as label order by credits desc, code limit 3'": { here: 'the language' },
  "ckql query --data examples/data 'from enrolments e join courses c on e.course = c.code where e.grade is not null select c.subject, e.student, e.grade, row_number() over (partition by c.subject order by e.grade desc, e.student) as r qualify r <= 3 order by subject, r'": { here: 'the language' },
  "ckql query --data examples/yearly 'from permits_2023 union permits_2024 where kind = residential group by _resource select _resource, count(*) as permits, sum(cost) as cost'": { here: 'the language' },
  "ckql query --data examples/data 'from courses group by subject select subject, sum(credits * level) as load, count(distinct lower(instructor)) as teachers order by load desc, subject limit 3'": { here: 'the language' },
  "ckql query --data examples/data 'from courses where subject = chemistry select *, credits * 2 as double order by code limit 2'": { here: 'the language' },
  'ckql check examples': { here: 'editors and CI' },
  'ckql check --schema examples/data examples': { here: 'editors and CI' },
  'ckql check --format json examples/queries.ckql': { here: 'editors and CI' },
  'ckql check broken.ckql': { here: 'editors and CI' },
  'ckql lsp --stdio': { testedIn: 'test/editors/lsp.test.ts', runs: "startCkql(['lsp', '--stdio']" },
  'npm install': { notRun: 'in editors/vscode, to build the extension: it downloads from the npm registry' },
  'npx @vscode/vsce package --allow-missing-repository': { notRun: 'packages the VS Code extension; @vscode/vsce comes from the npm registry' },
  'npm start -- serve examples/data': { here: 'npm start' },
  'ckql ui portal': { testedIn: 'test/cli/ui.test.ts', runs: "startCkql(['ui', 'portal'" },
  'ckql serve --ckan 2.11': { testedIn: 'test/cli/serve.test.ts', runs: "'--ckan'" },
  'scripts/pg-test-cluster.sh install': { ci: 'scripts/pg-test-cluster.sh install' },
  'eval "$(scripts/pg-test-cluster.sh start)"': { ci: 'scripts/pg-test-cluster.sh start' },
  'npx vitest run test/engine/sql': { ci: 'npm test' },
  'scripts/pg-test-cluster.sh stop "$CKQL_TEST_PG_DIR"': { ci: 'scripts/pg-test-cluster.sh stop' },
};

/** The README command `text`, checked to be there (a renamed example fails here, not silently). */
function command(text: string): string {
  expect(commandsInReadme(), 'the README still shows this command').toContain(text);
  return text;
}

// ---------------------------------------------------------------------------
// Running them

let scratch: string;

beforeAll(() => {
  scratch = mkdtempSync(join(tmpdir(), 'ckql-readme-'));
  symlinkSync(join(repoRoot, 'examples'), join(scratch, 'examples'), 'dir');
});

afterAll(() => {
  rmSync(scratch, { recursive: true, force: true });
});

/** Runs a `ckql …` line in this process, in the scratch folder unless told otherwise. */
function run(text: string, options: { cwd?: string; input?: string; env?: Record<string, string | undefined> } = {}): Promise<RunResult> {
  const [program, ...args] = shellWords(text);
  expect(program).toBe('ckql');
  return ckql(args, { cwd: options.cwd ?? scratch, ...(options.input === undefined ? {} : { input: options.input }), ...(options.env === undefined ? {} : { env: options.env }) });
}

/** Starts a `ckql serve …` line as the built bin on a free port; resolves with its URL and a stop. */
async function serve(text: string, options: { cwd?: string; env?: Record<string, string | undefined> } = {}): Promise<{ url: string; stderr: () => string; stop: () => Promise<number | null> }> {
  const [program, ...args] = shellWords(text.replace(/\s*&$/, ''));
  expect(program).toBe('ckql');
  const port = args.indexOf('--port');
  const child = startCkql(port === -1 ? [...args, '--port', '0'] : args.map((arg, i) => (i === port + 1 ? '0' : arg)), {
    cwd: options.cwd ?? scratch,
    ...(options.env === undefined ? {} : { env: options.env }),
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const closed = new Promise<number | null>((resolve) => child.on('close', resolve));
  const [, url] = await waitForLine(child, /^listening on (http:\/\/127\.0\.0\.1:\d+)$/);
  return {
    url: url ?? '',
    stderr: () => stderr,
    stop: async () => {
      child.kill('SIGTERM');
      return closed;
    },
  };
}

/** Sends a curl line with fetch, to `base` instead of the README's `http://127.0.0.1:8080`. */
async function curl(text: string, base: string): Promise<{ status: number; body: { success: boolean; result: Record<string, unknown> } }> {
  const [program, ...args] = shellWords(text);
  expect(program).toBe('curl');
  let method = 'GET';
  let url: string | undefined;
  let body: string | undefined;
  const headers: Record<string, string> = {};
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    if (arg === '-s') continue;
    if (arg === '-X') method = args[++i] as string;
    else if (arg === '-H') {
      const [name, ...value] = (args[++i] as string).split(':');
      headers[(name as string).trim().toLowerCase()] = value.join(':').trim();
    } else if (arg === '-d') {
      body = args[++i];
      // curl -d sends a form unless a header says otherwise
      headers['content-type'] ??= 'application/x-www-form-urlencoded';
      if (method === 'GET') method = 'POST';
    } else if (arg.startsWith('-')) throw new Error(`curl option ${arg} is not read by this test`);
    else url = arg;
  }
  expect(url).toMatch(/^http:\/\/127\.0\.0\.1:8080\//);
  // Each curl is its own process with its own connection. A connection kept alive between them would race the
  // server's keep-alive timeout whenever this busy test process's timers run late ("other side closed").
  const agent = new Agent({ pipelining: 0 });
  try {
    const answer = await undiciFetch((url as string).replace('http://127.0.0.1:8080', base), { method, headers, dispatcher: agent, ...(body === undefined ? {} : { body }) });
    return { status: answer.status, body: (await answer.json()) as { success: boolean; result: Record<string, unknown> } };
  } finally {
    await agent.close();
  }
}

// ---------------------------------------------------------------------------

describe('README.md', () => {
  it('every command it shows is run by a test here, and every command here is in it', () => {
    const shown = [...new Set(commandsInReadme())];
    expect(shown.filter((text) => readmeCommands[text] === undefined), 'commands in the README that no test runs').toEqual([]);
    expect(Object.keys(readmeCommands).filter((text) => !shown.includes(text)), 'commands here that the README no longer shows').toEqual([]);
    const ciScript = readFileSync(join(repoRoot, '.ci', 'run'), 'utf8');
    const scripts = (JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
    for (const [text, how] of Object.entries(readmeCommands)) {
      if ('ci' in how) expect(ciScript, `.ci/run runs ${text}`).toContain(how.ci);
      if ('script' in how) expect(scripts[how.script], `package.json has the script of ${text}`).toBeDefined();
      if ('testedIn' in how) expect(readFileSync(join(repoRoot, how.testedIn), 'utf8'), `${how.testedIn} runs ${text}`).toContain(how.runs);
      if ('bench' in how) {
        const source = readFileSync(join(repoRoot, 'bench', how.runs.startsWith('replica:') ? 'run.ts' : `${how.bench}.ts`), 'utf8');
        expect(source, `the ${how.bench} bench runs ${text}`).toContain(how.runs);
      }
    }
  });

  it('a session: the transcript at the top is what the REPL shows, typed line by line', async () => {
    const block = /```\n(ckql \d+\.\d+ — [\s\S]*?)```/.exec(readme)?.[1];
    expect(block, 'the README shows a REPL session').toBeDefined();
    const { openSource, demoDataDir } = await import('../src/session/source.js');
    const source = await openSource({ kind: 'data', paths: [demoDataDir], demo: true }, { lazy: true });
    const driver = startDriver({ source, columns: 120 });
    try {
      await driver.waitFor(prompt);
      const lines = (block ?? '').trimEnd().split('\n');
      expect(driver.text().split('\n')[0]).toBe(lines[0]);
      // Turns: an input (a `ckql>` line and its `...` continuations) and what follows it up to the next.
      let i = 1;
      while (i < lines.length) {
        const input = [(lines[i] as string).slice('ckql> '.length)];
        i += 1;
        while ((lines[i] ?? '').startsWith('... ')) input.push((lines[i++] as string).slice(4));
        const expected: string[] = [];
        while (i < lines.length && !(lines[i] as string).startsWith('ckql> ')) expected.push(lines[i++] as string);
        const typed = input.join('\n');
        if (typed.endsWith('<Tab><Tab>')) {
          // Tab twice, as a person presses it: the values listed are the README's
          driver.send(typed.replace('<Tab><Tab>', '\t'));
          await new Promise((resolve) => setTimeout(resolve, 600));
          driver.send('\t');
          const words = (expected.join(' ').match(/\S+/g) ?? []) as string[];
          const listed = await driver.waitFor(new RegExp(words.map((word) => `\\b${word}\\b`).join('[\\s\\S]*')));
          expect(listed.match(/\b[A-Z]{2}\b/g)).toEqual(words);
          driver.send('\x15'); // Ctrl-U: the line is dropped
          continue;
        }
        for (const [k, line] of input.entries()) driver.send(`${line}${k === input.length - 1 ? '\r' : '\r'}`);
        const answer = await driver.waitFor(/ckql> $/);
        const shown = answer
          .split(/\r?\n/)
          .slice(0, -1)
          .filter((line) => !line.startsWith('... ') && !input.includes(line))
          .map((line) => line.replace(/, [\d.]+ m?s$/, ''));
        expect(shown).toEqual(expected.map((line) => line.replace(/, [\d.]+ m?s$/, '')));
      }
    } finally {
      await driver.exit();
      await source.close();
    }
  });

  it('a session: scripts from stdin, -f and -c', async () => {
    const piped = await run(command('ckql < examples/queries.ckql').replace(' < examples/queries.ckql', ''), {
      input: readFileSync(join(repoRoot, 'examples', 'queries.ckql'), 'utf8'),
    });
    expect(piped.stderr).toBe('');
    expect(piped.code).toBe(0);
    expect(ndjson(piped.stdout)).toHaveLength(2 + 5 + 3);
    const file = await run(command('ckql -f examples/queries.ckql --format markdown'));
    expect(file.stderr).toBe('');
    expect(file.code).toBe(0);
    expect(file.stdout.match(/^\| [-| ]+\|$/gm)).toHaveLength(3);
    const inline = await run(command("ckql --data examples/data -c 'from schools where country = NO; from courses limit 2'"));
    expect(inline.code).toBe(0);
    expect(ndjson(inline.stdout).length).toBeGreaterThan(2);
  });

  it('the language: explain and compile, and the error it shows', async () => {
    const explained = await run(command("ckql explain 'from enrolments where grade >= 5 and status != withdrawn' --url https://data.example.org --target ckan-2.12"));
    expect(explained.code).toBe(0);
    expect(explained.stdout).toContain('"grade": {');
    const compiled = await run(command("ckql compile 'from enrolments where grade between 4 and 5' --target sql"));
    expect(compiled.code).toBe(0);
    expect(compiled.stdout).toContain('BETWEEN');
    const block = /```\n(error\[UNEXPECTED_TOKEN\][\s\S]*?)```/.exec(readme)?.[1] ?? '';
    const query = /^1 \| (.*)$/m.exec(block)?.[1] ?? '';
    let rendered = '';
    try {
      parse(query);
    } catch (error) {
      rendered = renderError(error, { color: false });
    }
    expect(rendered.trimEnd()).toBe(block.trimEnd());
    // a group by, against a count made here from the CSV itself
    const grouped = await run(command("ckql query --data examples/data 'from courses group by subject select subject, count(*) as n, avg(credits) order by n desc, subject limit 3'"));
    expect(grouped.code).toBe(0);
    const rows = parseCsv(readFileSync(join(repoRoot, 'examples', 'data', 'courses.csv'), 'utf8'), { columns: true }) as { subject: string; credits: string }[];
    const bySubject = new Map<string, { n: number; sum: number; count: number }>();
    for (const row of rows) {
      const g = bySubject.get(row.subject) ?? { n: 0, sum: 0, count: 0 };
      g.n += 1;
      if (row.credits !== '') {
        g.sum += Number(row.credits);
        g.count += 1;
      }
      bySubject.set(row.subject, g);
    }
    const top = [...bySubject].sort(([a, x], [b, y]) => y.n - x.n || (a < b ? -1 : 1)).slice(0, 3);
    const got = ndjson(grouped.stdout) as { subject: string; n: number; avg_credits: number }[];
    expect(got.map((r) => [r.subject, r.n])).toEqual(top.map(([subject, g]) => [subject, g.n]));
    got.forEach((r, i) => expect(r.avg_credits).toBeCloseTo(top[i]![1].sum / top[i]![1].count, 9));
    // expressions, against the same rows computed here from the CSV
    const computed = await run(command(`ckql query --data examples/data 'from courses where credits >= 5 select code, credits, round(credits / 3.0, 1) as per_term, upper(subject) || "-" || level as label order by credits desc, code limit 3'`));
    expect(computed.code).toBe(0);
    const all = parseCsv(readFileSync(join(repoRoot, 'examples', 'data', 'courses.csv'), 'utf8'), { columns: true }) as { code: string; credits: string; subject: string; level: string }[];
    // round half away from zero at one place, as PostgreSQL rounds a numeric
    const roundOne = (x: number): number => Math.sign(x) * Math.round(Math.abs(x) * 10 + 1e-9) / 10;
    const want = all
      .filter((row) => row.credits !== '' && Number(row.credits) >= 5)
      .sort((a, b) => Number(b.credits) - Number(a.credits) || (a.code < b.code ? -1 : a.code > b.code ? 1 : 0))
      .slice(0, 3)
      .map((row) => ({ code: row.code, credits: Number(row.credits), per_term: roundOne(Number(row.credits) / 3), label: `${row.subject.toUpperCase()}-${row.level}` }));
    expect(ndjson(computed.stdout)).toEqual(want);
    // windows: the top 3 per subject, against the CSVs joined and each subject's enrolments sorted here
    const top3 = await run(command(`ckql query --data examples/data 'from enrolments e join courses c on e.course = c.code where e.grade is not null select c.subject, e.student, e.grade, row_number() over (partition by c.subject order by e.grade desc, e.student) as r qualify r <= 3 order by subject, r'`));
    expect(top3.code).toBe(0);
    const enrolments = parseCsv(readFileSync(join(repoRoot, 'examples', 'data', 'enrolments.csv'), 'utf8'), { columns: true }) as { student: string; course: string; grade: string }[];
    const subjectOf = new Map(all.map((row) => [row.code, row.subject]));
    const perSubject = new Map<string, { student: string; grade: number }[]>();
    for (const row of enrolments) {
      const subject = subjectOf.get(row.course);
      if (subject === undefined || row.grade === '') continue;
      perSubject.set(subject, [...(perSubject.get(subject) ?? []), { student: row.student, grade: Number(row.grade) }]);
    }
    const wantTop = [...perSubject.keys()].sort().flatMap((subject) =>
      perSubject.get(subject)!
        .sort((a, b) => b.grade - a.grade || (a.student < b.student ? -1 : a.student > b.student ? 1 : 0))
        .slice(0, 3)
        .map((row, i) => ({ subject, student: row.student, grade: row.grade, r: i + 1 })));
    expect(ndjson(top3.stdout)).toEqual(wantTop);
    // a union of two yearly files, against the two CSVs concatenated and summed here (cents, so that the sum is exact)
    const union = await run(command(`ckql query --data examples/yearly 'from permits_2023 union permits_2024 where kind = residential group by _resource select _resource, count(*) as permits, sum(cost) as cost'`));
    expect(union.code).toBe(0);
    const wantUnion = ['permits_2023', 'permits_2024'].map((name) => {
      const rows = (parseCsv(readFileSync(join(repoRoot, 'examples', 'yearly', `${name}.csv`), 'utf8'), { columns: true }) as { kind: string; cost: string }[]).filter((row) => row.kind === 'residential');
      return { _resource: name, permits: rows.length, cost: rows.reduce((sum, row) => sum + Math.round(Number(row.cost) * 100), 0) / 100 };
    });
    expect(wantUnion.every((g) => g.permits > 0)).toBe(true);
    expect(ndjson(union.stdout)).toEqual(wantUnion);
    // an aggregate of an expression, against sums made here from the CSV
    const loads = await run(command("ckql query --data examples/data 'from courses group by subject select subject, sum(credits * level) as load, count(distinct lower(instructor)) as teachers order by load desc, subject limit 3'"));
    expect(loads.code).toBe(0);
    const rowsOf = all as unknown as { subject: string; credits: string; level: string; instructor: string }[];
    const bySubjectLoad = new Map<string, { load: number; teachers: Set<string> }>();
    for (const row of rowsOf) {
      const g = bySubjectLoad.get(row.subject) ?? { load: 0, teachers: new Set<string>() };
      if (row.credits !== '' && row.level !== '') g.load += Number(row.credits) * Number(row.level);
      if (row.instructor !== '') g.teachers.add(row.instructor.toLowerCase());
      bySubjectLoad.set(row.subject, g);
    }
    const heaviest = [...bySubjectLoad].sort(([a, x], [b, y]) => y.load - x.load || (a < b ? -1 : 1)).slice(0, 3);
    expect((ndjson(loads.stdout) as { subject: string; load: number | string; teachers: number }[]).map((r) => [r.subject, Number(r.load), r.teachers]))
      .toEqual(heaviest.map(([subject, g]) => [subject, g.load, g.teachers.size]));
    // select *, …: every field of the CSV in its order, after _id, then the computed item
    const starred = await run(command("ckql query --data examples/data 'from courses where subject = chemistry select *, credits * 2 as double order by code limit 2'"));
    expect(starred.code).toBe(0);
    const header = readFileSync(join(repoRoot, 'examples', 'data', 'courses.csv'), 'utf8').split('\n')[0]!.split(',');
    const chemistry = all.filter((row) => row.subject === 'chemistry').sort((a, b) => (a.code < b.code ? -1 : 1)).slice(0, 2);
    const got2 = ndjson(starred.stdout) as Record<string, unknown>[];
    expect(got2.map((r) => Object.keys(r))).toEqual(chemistry.map(() => ['_id', ...header, 'double']));
    expect(got2.map((r) => [r['code'], Number(r['double'])])).toEqual(chemistry.map((row) => [row.code, Number(row.credits) * 2]));
    // the join on the first screen runs on the demo data
    const first = /```\n(from enrolments e join[\s\S]*?)```/.exec(readme)?.[1] ?? '';
    const joined = await ckql(['query', '--data', 'examples/data', first.trim()], { cwd: scratch });
    expect([joined.code, ndjson(joined.stdout).length]).toEqual([0, 3]);
  });

  it('editors and CI: ckql check on the examples, and what it prints for a broken file', async () => {
    const json = await run(command('ckql check --format json examples/queries.ckql'));
    expect([json.code, JSON.parse(json.stdout)]).toEqual([0, expect.anything()]);
    for (const text of ['ckql check examples', 'ckql check --schema examples/data examples']) {
      const checked = await run(command(text));
      expect([text, checked.code, checked.stderr]).toEqual([text, 0, expect.stringMatching(/: 0 errors/)]);
    }
    const broken = /```ckql\n(from courses\nwhere subject = limit;[\s\S]*?)```/.exec(readme)?.[1] ?? '';
    writeFileSync(join(scratch, 'broken.ckql'), broken);
    const shown = /`ckql check broken\.ckql` prints\n\n```\n([\s\S]*?)```/.exec(readme)?.[1] ?? '';
    const result = await run(command('ckql check broken.ckql'), { env: { NO_COLOR: '1' } });
    expect(result.code).toBe(3);
    expect(result.stdout.trimEnd()).toBe(shown.trimEnd());
    expect(result.stderr).toContain('2 queries in 1 file: 2 errors, 0 warnings');
  });

  it('command line: the examples of the command table', async () => {
    const home = mkdtempSync(join(tmpdir(), 'ckql-readme-home-'));
    try {
      const env = { HOME: home };
      const repl = await run(command("ckql --data examples/data -c 'from courses limit 3; from schools limit 1'"));
      expect([repl.code, ndjson(repl.stdout).length]).toEqual([0, 4]);
      const query = await run(command("ckql query 'from courses where stage = active limit 5' --format csv"));
      expect([query.code, query.stdout.trimEnd().split('\n').length]).toEqual([0, 6]);
      const named = await run(command('ckql run by-subject --param subject=physics --config examples/ckql.config.yaml'));
      expect(named.code).toBe(0);
      expect(ndjson(named.stdout).length).toBeGreaterThan(0);
      const compiled = await run(command("ckql compile 'from courses where level = $l' --param l=2"));
      expect(JSON.parse(compiled.stdout)).toEqual({ resource_id: 'courses', filters: { level: 2 } });
      const formatted = await run(command('ckql format \'FROM courses LIMIT 5 WHERE stage = "active"\''));
      expect(formatted.stdout).toBe('from courses\nwhere stage = active\nlimit 5\n');
      const explained = await run(command("ckql explain 'from courses where subject = math' --url https://data.example.org --lang en"));
      expect(explained.stdout).toContain('https://data.example.org/en/api/action/datastore_search');
      const fields = await run(command('ckql fields courses'), { env });
      expect([fields.code, ndjson(fields.stdout).some((row) => (row as { field: string }).field === 'credits')]).toEqual([0, true]);
      const resources = await run(command('ckql resources --data examples/data'));
      expect(ndjson(resources.stdout).map((row) => (row as { alias: string }).alias)).toEqual(['courses', 'enrolments', 'schools']);
      const datasets = await run(command('ckql datasets course --data examples/data'));
      expect(ndjson(datasets.stdout)).toEqual([expect.objectContaining({ name: 'university' })]);
      const exported = await run(command('ckql export courses -o courses.csv --data examples/data'));
      expect([exported.code, readFileSync(join(scratch, 'courses.csv'), 'utf8').split('\n')[0]]).toEqual([0, expect.stringContaining('code')]);
      const commented = await run(command("ckql query $'-- weekly\\nfrom courses'"), { env });
      expect([commented.code, ndjson(commented.stdout).length]).toEqual([0, 100]);
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });

  it('exit statuses: each example exits as the table says', async () => {
    writeFileSync(join(scratch, 'broken.json'), '[{"a": 1},');
    const statuses = await Promise.all([
      run(command("ckql query 'from courses limit 1'")),
      run(command("ckql query 'from broken' --data broken.json")),
      run(command("ckql query 'from x' --format xml")),
      run(command("ckql query 'from courses where subjet = math'")),
      run(command("ckql query 'from x' --url http://127.0.0.1:9")),
    ]);
    expect(statuses.map((each) => each.code)).toEqual([0, 1, 2, 3, 4]);
    for (const [code, row] of [[0, '| 0 |'], [1, '| 1 |'], [2, '| 2 |'], [3, '| 3 |'], [4, '| 4 |'], [5, '| 5 |'], [130, '| 130 |']] as const) {
      expect(readme, `the table has exit status ${code}`).toContain(row);
    }
  });

  it('config files: the YAML example loads, and its named query runs', async () => {
    const yaml = /```yaml\n([\s\S]*?)```/.exec(readme)?.[1] ?? '';
    const file = join(scratch, 'ckql.config.yaml');
    writeFileSync(file, yaml);
    const config = await readConfigFile(file);
    expect(config.defaultProfile).toBe('demo');
    expect([...config.queries.keys()]).toEqual(['by-subject', 'active-in', 'all-schools']);
    const named = await run(command('ckql run by-subject --param subject=physics'), { cwd: join(repoRoot, 'examples') });
    expect(named.code).toBe(0);
    expect(ndjson(named.stdout).length).toBeGreaterThan(0);
    // the error shown for a broken query in that file is the one ckql gives for it
    const shown = /```\n(error\[UNEXPECTED_TOKEN\][^\n]*\n --> ckql\.config\.yaml[\s\S]*?)```/.exec(readme)?.[1] ?? '';
    const broken = yaml.replace('where subject = $subject   -- comments are fine inside a query', 'where subject = limit 5');
    writeFileSync(file, broken);
    const result = await run('ckql run by-subject', { env: { NO_COLOR: '1' } });
    expect(result.stderr.trimEnd()).toBe(shown.trimEnd().replace('ckql.config.yaml', file));
  });

  it.concurrent('the local server: the curl lines, 2.12 with next_page, and a private resource (exit 5)', { timeout: 120_000 }, async () => {
    writeFileSync(join(scratch, 'tokens.txt'), 'tok-readme\n', { mode: 0o600 });
    const [plain, v212, privately] = await Promise.all([
      serve(command('ckql serve examples/data --port 8080')),
      serve(command('ckql serve examples/data --ckan 2.12 &')),
      serve(command('ckql serve examples/data --private courses --tokens-file tokens.txt')),
    ]);
    try {
      const lines = [
        command('curl -s -X POST http://127.0.0.1:8080/en/api/action/datastore_search  -H \'content-type: application/json\'  -d \'{"resource_id": "courses", "limit": 2, "q": "algebra"}\''),
        command('curl -s -X POST http://127.0.0.1:8080/en/api/action/datastore_search  -H \'content-type: application/json\'  -d \'{"resource_id": "courses", "filters": {"stage": ["active", "survey"], "subject": "math"}}\''),
        command("curl -s 'http://127.0.0.1:8080/de/api/action/datastore_search?resource_id=courses&limit=2'"),
        command("curl -s 'http://127.0.0.1:8080/de/api/action/datastore_search?resource_id=courses&q=algebra'"),
      ];
      for (const line of lines) {
        const answer = await curl(line, plain.url);
        expect([line, answer.status, answer.body.success]).toEqual([line, 200, true]);
        expect((answer.body.result.records as unknown[]).length).toBeGreaterThan(0);
      }
      const next = await curl(
        command('curl -s -X POST http://127.0.0.1:8080/api/3/action/datastore_search  -d \'{"resource_id": "courses", "filters": {"level": {"gte": 3}}, "include_next_page": true, "limit": 2}\''),
        v212.url,
      );
      expect(next.status).toBe(200);
      expect((next.body.result.records as { level: number }[]).map((record) => record.level >= 3)).toEqual([true, true]);
      expect(next.body.result.next_page).toMatchObject({ _id: { gt: expect.any(Number) } });
      const refused = await run(command("ckql query 'from courses' --url http://127.0.0.1:8080").replace('http://127.0.0.1:8080', privately.url));
      expect(refused.code).toBe(5);
      const allowed = await run(`ckql query 'from courses limit 1' --url ${privately.url}`, { env: { CKQL_TOKEN: 'tok-readme' } });
      expect(allowed.code).toBe(0);
    } finally {
      expect(await Promise.all([plain.stop(), v212.stop(), privately.stop()])).toEqual([0, 0, 0]);
    }
  });

  it.concurrent('engines: PGlite served and kept', { timeout: 120_000 }, async () => {
    const pglite = serve(command('ckql serve --engine pglite examples/data/courses.csv'));
    const loaded = await run(command('ckql load examples/data/courses.csv --db ./ckql-db'));
    expect(loaded.stderr).toContain('loaded 1 resource (320 rows): courses');
    expect(loaded.code).toBe(0);
    const kept = await run(command('ckql query --db ./ckql-db \'from courses search "linear algebra" limit 3\''));
    expect(kept.code).toBe(0);
    expect(ndjson(kept.stdout)).toHaveLength(3);
    const server = await pglite;
    try {
      const answer = await fetch(`${server.url}/api/3/action/datastore_search`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ resource_id: 'courses', q: 'linear algebra', limit: 3 }),
      });
      // the same three courses (in memory and kept; which comes first is the engines' rank order)
      const ids = (records: unknown[]): number[] => records.map((record) => (record as { _id: number })._id).sort((a, b) => a - b);
      expect(ids(((await answer.json()) as { result: { records: unknown[] } }).result.records)).toEqual(ids(ndjson(kept.stdout)));
    } finally {
      expect(await server.stop()).toBe(0);
    }
  });

  it.concurrent('engines: a PostgreSQL server loaded and served', { timeout: 120_000 }, async () => {
    if (pgUrl === undefined) {
      expect(inCi, 'CKQL_TEST_PG_URL is set under CI').toBe(false);
      return;
    }
    // a fresh database of the test cluster stands for the README's datastore
    const name = `ckql_readme_${process.pid}`;
    const admin = new pg.Client({ connectionString: pgUrl });
    await admin.connect();
    await admin.query(`DROP DATABASE IF EXISTS ${name}`);
    await admin.query(`CREATE DATABASE ${name}`);
    const url = new URL(pgUrl);
    url.pathname = `/${name}`;
    try {
      // the first 5,000 enrolments stand for the README's big file (the whole 20,000 cost the suite seconds of CPU)
      const lines = readFileSync(join(repoRoot, 'examples', 'data', 'enrolments.csv'), 'utf8').split('\n');
      writeFileSync(join(scratch, 'big.csv'), `${lines.slice(0, 5_001).join('\n')}\n`);
      const big = await run(command('ckql load big.csv --db postgres://ckan@db/datastore --replace --alias big').replace('postgres://ckan@db/datastore', url.href));
      expect(big.stderr).toContain('loaded 1 resource (5,000 rows): big');
      expect(big.code).toBe(0);
      const served = await serve(command('ckql serve --db postgres://reader@db/datastore').replace('postgres://reader@db/datastore', url.href));
      try {
        const answer = await fetch(`${served.url}/api/3/action/datastore_search?resource_id=big&limit=0`);
        expect(((await answer.json()) as { result: { total: number } }).result.total).toBe(5_000);
      } finally {
        expect(await served.stop()).toBe(0);
      }
    } finally {
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.end();
    }
  });

  it.concurrent('npm start: the REPL on the demo data, and the command line after --', { timeout: 120_000 }, async () => {
    const npm = promisify(execFile);
    const started = await npm('npm', ['start', '--silent', '--', ...shellWords(command("npm start -- query 'from courses limit 3'")).slice(3)], { cwd: repoRoot });
    expect(ndjson(started.stdout)).toHaveLength(3);
    // Without npm link: the built bin itself, as the README gives it.
    const direct = await npm('node', shellWords(command("node dist/bin/ckql.js query 'from courses limit 3'")).slice(1), { cwd: repoRoot });
    expect(ndjson(direct.stdout)).toEqual(ndjson(started.stdout));
    command('npm start');
    // With no terminal, the REPL reads statements from stdin: one, then the end of input.
    const child = execFile('npm', ['start', '--silent'], { cwd: repoRoot });
    child.stdin?.end('from schools limit 1;');
    let out = '';
    child.stdout?.on('data', (chunk: Buffer) => (out += chunk.toString()));
    expect(await new Promise((resolve) => child.on('close', resolve))).toBe(0);
    expect(ndjson(out)).toHaveLength(1);
    // The playground: npm start -- serve, on a free port here; the page is at /.
    const words = shellWords(command('npm start -- serve examples/data'));
    const server = spawn('npm', [...words.slice(1), '--port', '0'], { cwd: repoRoot, detached: true, stdio: ['ignore', 'pipe', 'ignore'] });
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let seen = '';
        server.stdout.on('data', (chunk: Buffer) => {
          seen += chunk.toString();
          const found = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(seen)?.[1];
          if (found !== undefined) resolve(found);
        });
        server.once('close', () => reject(new Error(`npm start -- serve ended: ${seen}`)));
      });
      const page = await fetch(`${url}/`);
      expect([page.status, page.headers.get('content-type')]).toEqual([200, expect.stringMatching(/^text\/html/)]);
    } finally {
      // npm runs ckql as its child: the whole group is stopped
      process.kill(-(server.pid as number), 'SIGTERM');
    }
  });

  it.concurrent('tests and benchmarks: the start-up floor is a plain node', async () => {
    const [node, ...args] = shellWords(command('node -e 0'));
    expect(node).toBe('node');
    await promisify(execFile)(process.execPath, args);
  });
});

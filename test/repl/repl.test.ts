/**
 * The REPL through real streams, against the demo data served by the
 * project's own server: what a person types (Tab, Enter, Ctrl-C, dot
 * commands) and what they see.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadResources } from '../../src/engine/node/load-resources.js';
import { startServer } from '../../src/server/server.js';
import { demoDataDir, openSource, type Source } from '../../src/session/source.js';
import { startSpinner } from '../../src/repl/spinner.js';
import { configWith, openDemo, portalSource, prompt, startDriver, startSlowPortal, type Driver } from './driver.js';

const root = fileURLToPath(new URL('../../', import.meta.url));

let demo: Source;
let totals: { math: number; activeOrSurvey: number; courses: number };

beforeAll(async () => {
  demo = await openDemo();
  // Expected counts come from the data, through the client, not from this file.
  const count = async (query: string): Promise<number> => (await demo.client.search(`${query} limit 0`)).total ?? -1;
  totals = {
    math: await count('from courses where subject = math'),
    activeOrSurvey: await count('from courses where stage in (active, survey)'),
    courses: await count('from courses'),
  };
});

afterAll(async () => {
  await demo.close();
});

/** Sends a line and waits for the answer and the next prompt. */
async function ask(driver: Driver, line: string, expected: RegExp | string): Promise<string> {
  driver.send(`${line}\r`);
  const seen = await driver.waitFor(expected);
  await driver.waitFor(new RegExp(`${expected instanceof RegExp ? expected.source : escape(expected)}[\\s\\S]*${escape(prompt)}`));
  return seen;
}

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

describe('a session on the demo data', () => {
  it('answers a group by as a table, and draws the facets of a query with bars', async () => {
    const active = (await demo.client.search('from courses where stage = active limit 0')).total;
    const driver = startDriver({ source: demo });
    await driver.waitFor(prompt);
    const grouped = await ask(driver, 'from courses group by subject select subject, count(*) as n order by n desc, subject limit 7', /of 7 records/);
    expect(grouped).toMatch(new RegExp(`\\n math +│ +${totals.math}\\n`));
    const faceted = await ask(driver, 'from courses facet stage top 2 limit 0', /facet stage: 2 values[^\n]*\n[^\n]*\n[^\n]*\n/);
    expect(faceted).toMatch(new RegExp(`\\n active +│ +${active} │ █{40}\\n`));
    await driver.exit();
  });

  it('prints a banner naming the source and a query to try, then runs it as a table', async () => {
    const driver = startDriver({ source: demo });
    await driver.waitFor(prompt);
    const banner = driver.text().split('\n')[0] ?? '';
    expect(banner).toMatch(/^ckql \d+\.\d+ — /);
    expect(banner).toContain('demo data');
    expect(banner).toContain('courses, enrolments, schools');
    const example = /try: (.*?)(?: — |$)/.exec(banner)?.[1];
    expect(example).toBe('from courses where subject = math limit 5');

    const answer = await ask(driver, example ?? '', `5 of ${totals.math} records`);
    const rows = answer.split('\n').filter((line) => /^\s+\d+ │ MATH-/.test(line));
    expect(rows).toHaveLength(5);
    expect(answer).toMatch(/ _id │ code\s+│ title/);
    expect(answer).toMatch(new RegExp(`5 of ${totals.math} records, [\\d.]+ m?s`));
    await driver.exit();
  });

  it('runs a statement with a trailing semicolon, and several on one line', async () => {
    const driver = startDriver({ source: demo });
    await driver.waitFor(prompt);
    await ask(driver, 'from schools limit 1;', '1 of 8 records');
    const both = await ask(driver, 'from schools limit 2; from courses select code limit 1', `1 of ${totals.courses} records`);
    expect(both).toContain('2 of 8 records');
    await driver.exit();
  });

  it('continues an unfinished statement on the next line and runs it when complete', async () => {
    const driver = startDriver({ source: demo });
    await driver.waitFor(prompt);
    driver.send('from courses where stage in (active,\r');
    await driver.waitFor('... ');
    expect(driver.since()).not.toContain('error');
    driver.send('survey)\r');
    await driver.waitFor(`of ${totals.activeOrSurvey} records`);

    // A `;` ends a statement even when the parser wants more: that is an error, not a continuation.
    const early = await ask(driver, 'from courses where;', 'UNEXPECTED_END_OF_INPUT');
    expect(early).toMatch(/\^/);

    // Ctrl-C drops the unfinished statement; the next line starts afresh.
    driver.send('from courses where\r');
    await driver.waitFor('... ');
    driver.send('\x03');
    await driver.waitFor(prompt);
    await ask(driver, 'from schools limit 1', '1 of 8 records');
    await driver.exit();
  });

  it('shows a parse error with a caret under the offending text', async () => {
    const driver = startDriver({ source: demo });
    await driver.waitFor(prompt);
    const error = await ask(driver, 'from courses where subject = limit 5', 'error[UNEXPECTED_TOKEN]');
    const lines = error.split('\n');
    const source = lines.findIndex((line) => line.includes('| from courses where subject = limit 5'));
    expect(source).toBeGreaterThan(0);
    const caretLine = lines[source + 1] ?? '';
    const column = (lines[source] ?? '').indexOf('limit');
    expect(caretLine.indexOf('^')).toBe(column);
    await driver.exit();
  });

  it('says "did you mean" for an unknown field and an unknown resource', async () => {
    const driver = startDriver({ source: demo });
    await driver.waitFor(prompt);
    const field = await ask(driver, 'from courses where subjet = math', 'did you mean "subject"?');
    expect(field).toContain('error[UNKNOWN_FIELD]: "courses" has no field "subjet"');
    expect(field).toMatch(/1 \| from courses where subjet = math\r?\n +\| {20}\^{6}\r?\n/);
    // as the README's session shows it
    const readme = readFileSync(join(root, 'README.md'), 'utf8');
    const shown = /ckql> from courses where subjet = math\n([\s\S]*?)\n```/.exec(readme)?.[1];
    expect(shown).toBeDefined();
    expect(field.replaceAll('\r\n', '\n')).toContain(shown);
    expect(await ask(driver, 'from course', 'did you mean "courses"?')).toContain('error[UNKNOWN_RESOURCE]');
    // a range filter: the request the source refuses does not name the field as written, the statement does
    expect(await ask(driver, 'from courses where levle >= 3', 'did you mean "level"?')).toContain('error[UNKNOWN_FIELD]');
    await driver.exit();
  });

  it('works with terminal: false (a pipe into the REPL), multi-line included', async () => {
    const driver = startDriver({ source: demo, terminal: false });
    await driver.waitFor(prompt);
    driver.send('from courses where subject =\n');
    await driver.waitFor('...');
    driver.send('math limit 2\n');
    await driver.waitFor(`2 of ${totals.math} records`);
    await driver.exit();
  });
});

describe('Tab completion', () => {
  /**
   * Types `keys`, each Tab in a write of its own: readline completes only on
   * a Tab that ends a chunk (a Tab inside pasted text is inserted as text),
   * and a person's key presses arrive one by one.
   */
  async function typeWithTabs(driver: Driver, keys: string): Promise<void> {
    for (const part of keys.split(/(\t)/)) {
      if (part === '') continue;
      driver.send(part);
      await new Promise((resolve) => setImmediate(resolve));
    }
  }

  /** Waits until the input line reads `line` (echo and completion together). */
  async function lineReads(driver: Driver, line: string, linePrompt = prompt): Promise<void> {
    await driver.waitForText(new RegExp(`${escape(linePrompt)}${escape(line)}$`));
  }

  it('completes keywords, resources, fields and values, so the completed query runs', async () => {
    const driver = startDriver({ source: demo });
    await driver.waitFor(prompt);
    await typeWithTabs(driver, 'fr\t');
    await lineReads(driver, 'from ');
    await typeWithTabs(driver, 'cou\t');
    await lineReads(driver, 'from courses ');
    await typeWithTabs(driver, 'wh\t');
    await lineReads(driver, 'from courses where ');
    await typeWithTabs(driver, 'subj\t');
    await lineReads(driver, 'from courses where subject ');
    await typeWithTabs(driver, '= ma\t');
    await lineReads(driver, 'from courses where subject = math ');
    await typeWithTabs(driver, 'lim\t');
    await lineReads(driver, 'from courses where subject = math limit ');
    await ask(driver, '3', `3 of ${totals.math} records`);
    await driver.exit();
  });

  it('completes a resource id from its first characters, digits included, and the query runs', async () => {
    const courses = (await demo.listResources()).find((resource) => resource.alias === 'courses');
    if (courses === undefined) throw new Error('the demo data has no courses resource');
    const driver = startDriver({ source: demo });
    await driver.waitFor(prompt);
    await typeWithTabs(driver, `from ${courses.id.slice(0, 6)}\t`);
    await lineReads(driver, `from ${courses.id} `);
    await ask(driver, 'limit 1', `1 of ${totals.courses} records`);
    await driver.exit();
  });

  it('lists the choices on a second Tab when several fit', async () => {
    const driver = startDriver({ source: demo });
    await driver.waitFor(prompt);
    await typeWithTabs(driver, 'from courses where st\t');
    await lineReads(driver, 'from courses where sta');
    driver.send('\t');
    const listing = await driver.waitFor(/start_date/);
    expect(listing).toMatch(/\bstage\b/);
    expect(listing).not.toMatch(/\btitle\b/);
    driver.send('\x03');
    await driver.waitFor(prompt);
    await driver.exit();
  });

  it('offers the values of the last result for the field being compared', async () => {
    const driver = startDriver({ source: demo });
    await driver.waitFor(prompt);
    // The last result holds only schools in Norway and Poland (founded before 1950).
    await ask(driver, 'from schools where country in (NO, PL)', '2 of 2 records');
    await typeWithTabs(driver, 'from schools where country = \t');
    driver.send('\t');
    const listing = await driver.waitFor(/PL/);
    expect(listing).toMatch(/\bNO\b/);
    expect(listing).not.toMatch(/\bFR\b/);
    driver.send('\x03');
    await driver.waitFor(prompt);
    await driver.exit();
  });

  it('keeps the case of a keyword being typed, quotes values that need it, lists resource ids', async () => {
    const driver = startDriver({ source: demo });
    await driver.waitFor(prompt);
    await typeWithTabs(driver, 'from courses WH\t');
    await lineReads(driver, 'from courses WHERE ');
    driver.send('\x03');
    await driver.waitFor(prompt);

    await typeWithTabs(driver, 'from schools where name = "Université\t');
    await lineReads(driver, 'from schools where name = "Université Lumière du Rhône" ');
    await ask(driver, '', '1 of 1 record');

    // After `from`, a first Tab finds no common start of aliases and ids; the second lists them all.
    await typeWithTabs(driver, 'from \t');
    driver.send('\t');
    const listing = await driver.waitFor('enrolments');
    for (const resource of await demo.listResources()) expect(listing).toContain(resource.id);
    driver.send('\x03');
    await driver.waitFor(prompt);
    await driver.exit();
  });

  it('completes across the lines of a continued statement', async () => {
    const driver = startDriver({ source: demo });
    await driver.waitFor(prompt);
    driver.send('from courses where\r');
    await driver.waitFor('... ');
    await typeWithTabs(driver, 'subj\t');
    await lineReads(driver, 'subject ', '... ');
    await ask(driver, '= math', `of ${totals.math} records`);
    await driver.exit();
  });

  it('completes dot commands and their arguments', async () => {
    const driver = startDriver({ source: demo });
    await driver.waitFor(prompt);
    await typeWithTabs(driver, '.form\t');
    await lineReads(driver, '.format ');
    await typeWithTabs(driver, 'nd\t');
    await lineReads(driver, '.format ndjson ');
    await ask(driver, '', 'format ndjson');
    await driver.exit();
  });
});

describe('dot commands', () => {
  it('.help lists every command', async () => {
    const driver = startDriver({ source: demo });
    await driver.waitFor(prompt);
    const help = await ask(driver, '.help', '.exit');
    for (const name of ['help', 'connect', 'lang', 'format', 'explain', 'fields', 'resources', 'timing', 'limit', 'queries', 'run', 'exit']) {
      expect(help).toMatch(new RegExp(`^\\.${name}\\b`, 'm'));
    }
    await driver.exit();
  });

  it('.resources and .fields describe the source', async () => {
    const driver = startDriver({ source: demo });
    await driver.waitFor(prompt);
    const resources = await ask(driver, '.resources', 'schools');
    for (const listed of await demo.listResources()) {
      expect(resources).toMatch(new RegExp(`${listed.alias} +│ ${listed.id} +│ +${listed.total}`));
    }
    const fields = await ask(driver, '.fields courses', 'fields of courses');
    expect(fields).toMatch(/level +│ int/);
    expect(fields).toMatch(/credits +│ numeric/);
    expect(fields).toMatch(/online +│ bool/);

    // With no argument: the resource of the last query; before any query, a usage error.
    const fresh = startDriver({ source: demo });
    await fresh.waitFor(prompt);
    expect(await ask(fresh, '.fields', 'error[USAGE]')).toContain('.fields courses');
    expect(await ask(fresh, '.fields corses', 'NOT_FOUND')).toContain('did you mean "courses"?');
    await ask(fresh, 'from schools limit 1', '1 of 8 records');
    expect(await ask(fresh, '.fields', 'fields of schools')).toMatch(/founded +│ int/);
    await fresh.exit();
    await driver.exit();
  });

  it('.format switches between table, json, ndjson, csv and markdown', async () => {
    const driver = startDriver({ source: demo });
    await driver.waitFor(prompt);
    const query = 'from schools select id, country where id = aurora';
    await ask(driver, '.format json', 'format json');
    expect(await ask(driver, query, '1 of 1 record')).toContain('"country": "NO"');
    await ask(driver, '.format ndjson', 'format ndjson');
    expect(await ask(driver, query, '1 of 1 record')).toContain('{"id":"aurora","country":"NO"}');
    await ask(driver, '.format csv', 'format csv');
    expect(await ask(driver, query, '1 of 1 record')).toMatch(/id,country\r?\naurora,NO/);
    await ask(driver, '.format markdown', 'format markdown');
    expect(await ask(driver, query, '1 of 1 record')).toContain('| aurora | NO |');
    await ask(driver, '.format table', 'format table');
    expect(await ask(driver, query, '1 of 1 record')).toMatch(/aurora │ NO/);
    expect(await ask(driver, '.format yaml', 'error[USAGE]')).toContain('table, json, ndjson, csv, markdown');
    await driver.exit();
  });

  it('.limit sets the page for queries without a limit; .timing drops the milliseconds', async () => {
    const driver = startDriver({ source: demo });
    await driver.waitFor(prompt);
    await ask(driver, '.limit 3', 'limit 3');
    await ask(driver, 'from courses', `3 of ${totals.courses} records`);
    await ask(driver, 'from courses limit 4', `4 of ${totals.courses} records`);
    expect(await ask(driver, '.limit -1', 'error[USAGE]')).toContain('whole number');
    await ask(driver, '.timing off', 'timing off');
    const answer = await ask(driver, 'from courses limit 1', `1 of ${totals.courses} records`);
    expect(answer).toMatch(new RegExp(`1 of ${totals.courses} records\\s*\\n`));
    expect(answer).not.toMatch(/\d ms/);
    expect(await ask(driver, '.timing maybe', 'error[USAGE]')).toContain('on or off');
    await driver.exit();
  });

  it('runs a range and a negation as a plan; .explain shows the residual; .target sets the dialect', async () => {
    const driver = startDriver({ source: demo });
    await driver.waitFor(prompt);
    await ask(driver, '.explain on', 'explain on');
    // No target asked for: the memory engine answers the whole query in the process, and counts as it goes.
    const local = await ask(driver, 'from enrolments where grade >= 5.5 and status != withdrawn select grade limit 2', '2 of');
    expect(local).toContain('target: none (local data: no target asked for): answered in this process, nothing is sent');
    expect(local).toContain('engine the memory engine answers the whole query in one pass');
    await ask(driver, '.target ckan-2.11', 'target ckan-2.11');
    // As a 2.11 portal would be asked: a plan that stops at the page holding its last record.
    const answer = await ask(driver, 'from enrolments where grade >= 5.5 and status != withdrawn select grade limit 2', '2 records, more match (read 1000 in 1 request)');
    expect(answer).toContain('steps (what runs, the last step first):');
    expect(answer).toContain('filter grade >= 5.5 and status != withdrawn');
    await ask(driver, '.explain off', 'explain off');
    await ask(driver, 'from enrolments where grade between 1 and 1.5 limit 1', '1 record');
    expect(await ask(driver, '.target 2.13', 'error[USAGE]')).toContain('ckan-2.11, ckan-2.12, sql or auto');
    await ask(driver, '.target auto', 'target auto');
    await driver.exit();
  });

  it('.target ckan-2.12 serves the local data as CKAN 2.12, and .explain shows that plan', async () => {
    const own = await openDemo();
    try {
      const driver = startDriver({ source: own });
      await driver.waitFor(prompt);
      await ask(driver, '.target ckan-2.12', 'target ckan-2.12');
      await ask(driver, '.explain on', 'explain on');
      const query = 'from enrolments where grade >= 5.5 and status != withdrawn select grade limit 2';
      const on212 = await ask(driver, query, '2 records, more match');
      expect(on212).toContain('target: ckan-2.12 (set by .target');
      expect(on212).toContain('"gte": 5.5');
      expect(on212).toContain('filter status != withdrawn');
      // Its URLs are those of a server over the same data, which nothing has started: the line says how.
      expect(on212).toMatch(/these URLs are ckql serve's: start it first with: ckql serve \S.* --ckan 2\.12 --port 8080/);
      await ask(driver, '.target ckan-2.11', 'target ckan-2.11');
      const on211 = await ask(driver, query, '2 records, more match');
      expect(on211).toContain('target: ckan-2.11');
      expect(on211).not.toContain('"gte"');
      expect(on211).toContain('filter grade >= 5.5 and status != withdrawn');
      expect(await ask(driver, '.target sql', 'error[USAGE]')).toContain('needs an engine that runs SQL');
      await driver.exit();
    } finally {
      await own.close();
    }
  });

  it('.max-scan bounds what a plan reads, and says how to change it where SCAN_TOO_LARGE is met', async () => {
    const own = await openDemo();
    try {
      const driver = startDriver({ source: own });
      await driver.waitFor(prompt);
      await ask(driver, '.target ckan-2.11', 'target ckan-2.11');
      expect(await ask(driver, '.max-scan', 'max-scan 100000')).toContain('records a plan may read');
      await ask(driver, '.max-scan 500', 'max-scan 500');
      const refused = await ask(driver, 'from enrolments where status != withdrawn limit 1000', 'SCAN_TOO_LARGE');
      expect(refused).toContain('read 500 of them');
      expect(refused).toContain('.max-scan N in the REPL');
      expect(refused).toContain('.target sql');
      expect(await ask(driver, '.max-scan lots', 'error[USAGE]')).toContain('whole number');
      await ask(driver, '.max-scan default', 'max-scan 100000');
      await ask(driver, 'from enrolments where status != withdrawn limit 1000', '1000 records, more match');
      await driver.exit();
    } finally {
      await own.close();
    }
  });

  it("refuses the demo's many-to-many join with its count and keeps the session; .max-join-rows sets the bound and round trips", async () => {
    const own = await openDemo();
    try {
      const driver = startDriver({ source: own });
      await driver.waitFor(prompt);
      const refused = await ask(driver, 'from enrolments a join enrolments b on a.status = b.status select count(*)', /error\[JOIN_TOO_LARGE\][\s\S]*in the library\)/);
      // 14041² + 2616² + 1692² + 1651²: each status's enrolments times its enrolments.
      expect(refused).toContain('this join gives 209581802 rows, more than the 10000000 a join may give');
      expect(refused).toContain('.max-join-rows N in the REPL');
      // The session goes on: the next query is answered.
      await ask(driver, 'from enrolments group by status select status, count(*) as n order by n desc limit 1', /completed[^\n]*14041/);
      expect(await ask(driver, '.max-join-rows', 'max-join-rows 10000000')).toContain('rows a join may give');
      // The course self-join gives 1386408 rows: refused under that bound, answered at it.
      await ask(driver, '.max-join-rows 1386407', 'max-join-rows 1386407');
      expect(await ask(driver, 'from enrolments a join enrolments b on a.course = b.course select count(*) as n', 'JOIN_TOO_LARGE')).toContain('more than the 1386407');
      await ask(driver, '.max-join-rows 1386408', 'max-join-rows 1386408');
      await ask(driver, 'from enrolments a join enrolments b on a.course = b.course select count(*) as n', /1386408/);
      expect(await ask(driver, '.max-join-rows lots', 'error[USAGE]')).toContain('whole number of rows');
      await ask(driver, '.max-join-rows default', 'max-join-rows 10000000');
      await driver.exit();
    } finally {
      await own.close();
    }
  });

  it('.explain asks a portal its target before the first query that needs it', async () => {
    const portal = await startServer({ tables: await loadResources(demoDataDir, { only: ['enrolments'] }), ckan: '2.12' });
    const source = portalSource(portal.url);
    try {
      const driver = startDriver({ source });
      await driver.waitFor(prompt);
      await ask(driver, '.explain on', 'explain on');
      const answer = await ask(driver, 'from enrolments where grade >= 5.5 and status != withdrawn select grade limit 2', '2 records, more match');
      expect(answer).toContain('target: ckan-2.12 (asked of the portal');
      expect(answer).toContain('"gte": 5.5');
      expect(answer).not.toContain('ckql serve');
      await driver.exit();
    } finally {
      await source.close();
      await portal.close();
    }
  });

  it('.explain shows the request JSON, the GET URL and a curl line without the token', async () => {
    const portal = await startSlowPortal();
    const source = portalSource(portal.url, 'tok-SECRET-42');
    try {
      const driver = startDriver({ source });
      await driver.waitFor(prompt);
      await ask(driver, '.explain on', 'explain on');
      const answer = await ask(driver, 'from quick where name = quick limit 1', '1 of 1 record');
      expect(answer).toContain(`POST ${portal.url}/api/action/datastore_search`);
      expect(answer).toContain('"resource_id": "quick"');
      expect(answer).toContain(`GET ${portal.url}/api/action/datastore_search?resource_id=quick&filters=`);
      const curl = answer.split('\n').find((line) => line.startsWith('curl ')) ?? '';
      expect(curl).toMatch(new RegExp(`^curl -X POST '?${escape(portal.url)}/api/action/datastore_search'? `));
      expect(curl).toContain(` -H 'content-type: application/json'`);
      // The token is never shown: the curl line reads it from the environment.
      expect(curl).toContain(' -H "Authorization: $CKQL_TOKEN"');
      expect(curl).toMatch(/ --data-binary '\{"resource_id":"quick","filters":\{"name":"quick"\},"limit":1\}'$/);
      expect(driver.text()).not.toContain('tok-SECRET-42');
      await ask(driver, '.explain off', 'explain off');
      expect(await ask(driver, 'from quick limit 1', '1 of 1 record')).not.toContain('curl');
      await driver.exit();
    } finally {
      await source.close();
      await portal.close();
    }
  });

  it('.lang puts a language segment into the URL, and none takes it out', async () => {
    const driver = startDriver({ source: demo, explain: true });
    await driver.waitFor(prompt);
    expect(await ask(driver, '.lang de', 'language de')).toMatch(/\/de\/api\/action\/datastore_search/);
    // Local data is answered in the process (nothing is sent); as a portal would be asked, the URL has the segment.
    expect(await ask(driver, 'from schools limit 1', '1 of 8 records')).toContain('answered in this process, nothing is sent');
    await ask(driver, '.target ckan-2.11', 'target ckan-2.11');
    expect(await ask(driver, 'from schools limit 1', '1 of 8 records')).toMatch(/POST http:\/\/127\.0\.0\.1:\d+\/de\/api\/action/);
    await ask(driver, '.target auto', 'target auto');
    expect(await ask(driver, '.lang none', 'language none')).not.toContain('/de/');
    expect(await ask(driver, '.lang x y', 'error[USAGE]')).toContain('en or de');
    await driver.exit();
  });

  it('.queries lists the named queries and .run binds and runs one', async () => {
    const config = configWith({
      'by-subject': { query: 'from courses\n-- one subject\nwhere subject = $subject\nlimit $n', params: { n: 2 } },
      'schools-in': { query: 'from schools where country = $country' },
      spaced: { query: 'from schools\n  where name != "a  b"' },
    });
    const driver = startDriver({ source: demo, config });
    await driver.waitFor(prompt);
    const listed = await ask(driver, '.queries', 'schools-in');
    // On one line, a comment would seem to comment out the rest: it is left out, and the gaps are one space.
    expect(listed).toMatch(/by-subject +│ n=2 +│ from courses where subject = \$subject limit \$n/);
    expect(listed).not.toContain('one subject');
    // A string keeps its own spaces.
    expect(listed).toMatch(/spaced +│ +│ from schools where name != "a {2}b"/);
    await ask(driver, '.run by-subject subject=math', `2 of ${totals.math} records`);
    await ask(driver, '.run by-subject subject=math n=3', `3 of ${totals.math} records`);
    await ask(driver, '.run schools-in country="NO"', '1 of 1 record');
    expect(await ask(driver, '.run schools-in', 'UNBOUND_PARAMETER')).toContain('$country');
    expect(await ask(driver, '.run by-subjekt', 'UNKNOWN_QUERY')).toContain('did you mean "by-subject"?');
    expect(await ask(driver, '.run by-subject subject', 'error[USAGE]')).toContain('name=value');
    await driver.exit();
  });

  it('.connect switches to another directory of files, and to a portal URL', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ckql-connect-'));
    writeFileSync(join(dir, 'birds.csv'), 'name,wingspan\nalbatross,3.4\nwren,0.15\n');
    const portal = await startSlowPortal();
    try {
      const driver = startDriver({ source: demo });
      await driver.waitFor(prompt);
      expect(await ask(driver, `.connect ${dir}`, 'connected to')).toContain('birds');
      expect(await ask(driver, 'from birds where name = wren', '1 of 1 record')).toContain('0.15');
      expect(await ask(driver, 'from courses', 'UNKNOWN_RESOURCE')).toContain('"courses"');
      expect(await ask(driver, `.connect ${portal.url}`, 'connected to')).toContain(portal.url);
      expect(await ask(driver, 'from quick', '1 of 1 record')).toContain('quick');
      expect(await ask(driver, `.connect ${join(dir, 'nothing-here')}`, 'error[DATA_NOT_FOUND]')).toContain('nothing-here');
      await driver.exit();
    } finally {
      await portal.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('an unknown dot command suggests the nearest one; .exit ends the session', async () => {
    const driver = startDriver({ source: demo });
    await driver.waitFor(prompt);
    expect(await ask(driver, '.frmat csv', 'unknown command .frmat')).toContain('did you mean .format?');
    driver.send('.break\r');
    await driver.waitFor(prompt);
    driver.send('.exit\r');
    await driver.done;
  });
});

describe('words from other shells', () => {
  it('.tables and .schema are .resources and .fields; help points at .help', async () => {
    const driver = startDriver({ source: demo });
    await driver.waitFor(prompt);
    expect(await ask(driver, '.tables', 'enrolments')).toMatch(/schools +│ [0-9a-f-]{36} +│ +8/);
    expect(await ask(driver, '.schema schools', 'fields of schools')).toMatch(/country +│ text/);
    expect(await ask(driver, 'help', '.help')).not.toContain('error');
    await driver.exit();
  });

  for (const word of ['exit', 'quit', '\\q']) {
    it(`${word} on its own leaves, as .exit does`, async () => {
      const driver = startDriver({ source: demo });
      await driver.waitFor(prompt);
      driver.send(`${word}\r`);
      await driver.done;
      expect(driver.since()).not.toContain('error');
    });
  }
});

describe('Ctrl-C', () => {
  it('cancels a running query at once, keeps the session, and does not arm node’s exit', async () => {
    const portal = await startSlowPortal();
    const source = portalSource(portal.url);
    try {
      const driver = startDriver({ source });
      await driver.waitFor(prompt);
      driver.send('from slow\r');
      await portal.arrived;
      driver.send('\x03');
      await driver.waitFor('cancelled');
      // The request was aborted, not left running: the server saw the connection close.
      await portal.abandoned;
      await ask(driver, 'from quick', '1 of 1 record');

      // The first Ctrl-C at an empty prompt is node's own: it warns, and the session goes on.
      driver.send('\x03');
      await driver.waitFor('(To exit, press Ctrl+C again or Ctrl+D or type .exit)');
      await ask(driver, 'from quick', '1 of 1 record');
      driver.send('\x03');
      await driver.waitFor('(To exit, press Ctrl+C again');
      driver.send('\x03');
      await driver.done;
    } finally {
      await source.close();
      await portal.close();
    }
  });

  it('cancels a query on local data at once, while its file is still being read, and the next query gets the file', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ckql-repl-big-'));
    const file = join(dir, 'many.csv');
    // 80,000 records: long enough to read that Ctrl-C lands first, and each record is read again below
    await writeFile(file, ['n,word', ...Array.from({ length: 80_000 }, (_, i) => `${i},w${i % 97}`)].join('\n'));
    let reading: () => void = () => undefined;
    const started = new Promise<void>((resolve) => (reading = resolve));
    let read = false;
    const source = await openSource({ kind: 'data', paths: [file] }, { lazy: true, progress: { update: () => reading(), done: () => (read = true) } });
    try {
      const driver = startDriver({ source });
      await driver.waitFor(prompt);
      driver.send('from many where word != w3\r');
      await started;
      driver.send('\x03');
      await driver.waitFor('cancelled');
      // Cancelled before the file was read: the query did not wait for it.
      expect(read).toBe(false);
      await ask(driver, 'from many where word != w3 limit 2', '2 of 79175 records');
      await driver.exit();
    } finally {
      await source.close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('shows a spinner on stderr while a query runs when stderr is a terminal, and clears it', async () => {
    const portal = await startSlowPortal();
    const source = portalSource(portal.url);
    const stderr = Object.assign(new PassThrough(), { isTTY: true });
    let written = '';
    const spun = new Promise<void>((resolve) =>
      stderr.on('data', (chunk: Buffer) => {
        written += chunk.toString();
        if (written.includes('running')) resolve();
      }),
    );
    try {
      const driver = startDriver({ source, errorOutput: stderr });
      await driver.waitFor(prompt);
      driver.send('from slow\r');
      await portal.arrived;
      await spun;
      expect(written).toMatch(/[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] running \d+\.\ds \(Ctrl-C cancels\)/);
      driver.send('\x03');
      await driver.waitFor('cancelled');
      expect(written.endsWith('\r\u001b[2K')).toBe(true);
      // nothing of the spinner reaches the results
      expect(driver.text()).not.toContain('running');
      await driver.exit();
    } finally {
      await source.close();
      await portal.close();
    }
  });

  it('reads its label at each frame (a file being read shows its progress), cut to the terminal width', async () => {
    const stream = Object.assign(new PassThrough(), { isTTY: true, columns: 60 });
    let written = '';
    stream.on('data', (chunk: Buffer) => (written += chunk.toString()));
    let label = 'reading big [##......] 1,000 rows';
    const spinner = startSpinner(stream, () => label, 0);
    await new Promise((resolve) => setTimeout(resolve, 100));
    label = 'running';
    await new Promise((resolve) => setTimeout(resolve, 200));
    spinner.stop();
    expect(written).toContain('reading big [##......] 1,000 rows');
    expect(written).toMatch(/ running \d+\.\ds \(Ctrl-C cancels\)/);
    const frames = written.split('\r\u001b[2K').filter((frame) => frame !== '');
    expect(frames.every((frame) => frame.length < 60)).toBe(true);
  });

  it('never draws the spinner on a stream that is not a terminal', async () => {
    const plain = new PassThrough();
    let written = '';
    plain.on('data', (chunk: Buffer) => (written += chunk.toString()));
    const spinner = startSpinner(plain, 'running', 0);
    await new Promise((resolve) => setTimeout(resolve, 50));
    spinner.stop();
    expect(written).toBe('');
  });

  it('cancels a running .run the same way', async () => {
    const portal = await startSlowPortal();
    const source = portalSource(portal.url);
    try {
      const driver = startDriver({ source, config: configWith({ wait: { query: 'from slow' } }) });
      await driver.waitFor(prompt);
      driver.send('.run wait\r');
      await portal.arrived;
      driver.send('\x03');
      await driver.waitFor('cancelled');
      await portal.abandoned;
      await ask(driver, 'from quick', '1 of 1 record');
      await driver.exit();
    } finally {
      await source.close();
      await portal.close();
    }
  });
});

describe('dot commands say what went wrong', () => {
  it('.run: the hint for a missing parameter is .run NAME k=v; an extra or repeated parameter is an error', async () => {
    const config = configWith({ 'schools-in': { query: 'from schools where country = $country' } });
    const driver = startDriver({ source: demo, config });
    await driver.waitFor(prompt);
    const missing = await ask(driver, '.run schools-in', 'UNBOUND_PARAMETER');
    expect(missing).toContain('hint: give it a value: .run schools-in country=…');
    expect(missing).not.toContain('compile(');
    expect(await ask(driver, '.run schools-in country=NO extra=1', 'error[USAGE]')).toContain('.run schools-in extra: the query has no parameter $extra');
    expect(await ask(driver, '.run schools-in country=NO country=DE', 'error[USAGE]')).toContain('country is given twice');
    await driver.exit();
  });

  it('.run takes a list with spaces and a single-quoted text, as --param does', async () => {
    const config = configWith({
      'in-countries': { query: 'from schools where country in ($countries) select name order by name' },
      'named': { query: 'from schools where name = $name select country' },
    });
    const driver = startDriver({ source: demo, config });
    await driver.waitFor(prompt);
    // the README writes a list as (3, 4); a word split at its space was "found \"DE)\""
    const listed = await ask(driver, '.run in-countries countries=(NO, DE)', '2 of 2 records');
    expect(listed).toContain('Aurora University');
    expect(listed).toContain('Technische Hochschule Südstadt');
    expect(await ask(driver, ".run named name='Harbour City College'", '1 of 1 record')).toContain('NZ');
    expect(await ask(driver, '.run named name="Harbour City College"', '1 of 1 record')).toContain('NZ');
    // a list not closed is refused (as text it matched nothing)
    expect(await ask(driver, '.run in-countries countries=(NO, DE', 'error[USAGE]')).toContain('.run: countries: "(NO, DE" is not a list of values');
    await driver.exit();
  });

  it('.run honours the named query\'s profile:, as ckql run does', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ckql-profile-'));
    writeFileSync(join(dir, 'birds.csv'), 'name,wingspan\nalbatross,3.4\nwren,0.15\n');
    try {
      const config = {
        ...configWith({}),
        profiles: new Map([['birds', { kind: 'data' as const, name: 'birds', paths: [dir] }]]),
        queries: new Map([['wide', { name: 'wide', query: 'from birds where wingspan = 3.4 select name', params: {}, profile: 'birds' }]]),
      };
      const driver = startDriver({ source: demo, config });
      await driver.waitFor(prompt);
      expect(await ask(driver, '.run wide', '1 of 1 record')).toContain('albatross');
      // The session's own source is unchanged.
      await ask(driver, 'from schools limit 1', '1 of 8 records');
      await driver.exit();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('.queries puts a description under its own heading', async () => {
    const config = configWith({ plain: { query: 'from schools' } });
    const described = new Map(config.queries);
    described.set('about', { name: 'about', query: 'from courses', params: {}, description: 'every course' });
    const driver = startDriver({ source: demo, config: { ...config, queries: described } });
    await driver.waitFor(prompt);
    const listed = await ask(driver, '.queries', 'every course');
    expect(listed).toMatch(/name +│ params +│ description +│ query/);
    expect(listed).toMatch(/about +│ +│ every course +│ from courses/);
    await driver.exit();
  });

  it('.connect refuses a URL that is not http(s), says when nothing answers, and never shows a password', async () => {
    const driver = startDriver({ source: demo });
    await driver.waitFor(prompt);
    const ftp = await ask(driver, '.connect ftp://x', 'error[USAGE]');
    expect(ftp).toContain('http(s) URL or a local path, found a ftp: URL');
    expect(ftp).not.toContain('no such file');
    expect(await ask(driver, '.connect http://127.0.0.1:9', 'CONNECTION_FAILED')).not.toContain('connected to');
    await ask(driver, 'from schools limit 1', '1 of 8 records');
    const portal = await startSlowPortal();
    try {
      const url = portal.url.replace('http://', 'http://ann:S3CRET@');
      const connected = await ask(driver, `.connect ${url}`, 'connected to');
      expect(connected).toContain('ann:***@127.0.0.1');
      // Only the line the person typed holds it; nothing ckql prints does.
      expect(connected.split('\n').filter((line) => !line.includes('.connect'))).not.toContainEqual(expect.stringContaining('S3CRET'));
      expect(connected).not.toContain('ckql-connection-check');
    } finally {
      await driver.exit();
      await portal.close();
    }
  });

  it('.lang on local data takes en, de or none (what its server offers)', async () => {
    const driver = startDriver({ source: demo });
    await driver.waitFor(prompt);
    expect(await ask(driver, '.lang fr', 'error[USAGE]')).toContain('local data is served under /en and /de only');
    // local data has no address: the path its server API answers under, not a host where nothing listens
    expect(await ask(driver, '.lang', 'language')).toContain('language none: /api/action/datastore_search (local data, answered in this process)');
    // local data under /de is the same data, read as it is first named
    expect(await ask(driver, '.lang de', 'language de')).toContain('language de: /de/api/action/datastore_search (local data');
    expect(await ask(driver, 'from schools limit 1', 'of 8 records')).toContain('1 of 8 records');
    await driver.exit();
  });
});

describe('completion never holds the prompt', () => {
  it('Tab against a portal that does not answer returns at once; typing goes on; Ctrl-C cancels the lookup', async () => {
    const portal = await startSlowPortal();
    const source = portalSource(portal.url);
    try {
      const driver = startDriver({ source, completionWaitMs: 50 });
      await driver.waitFor(prompt);
      driver.send('from slow where name = q');
      await driver.waitFor('name = q');
      driver.send('\t');
      await portal.arrived;
      driver.send('\t');
      // The line takes more keys while the sample is still asked for, and no tab lands in it.
      driver.send('uick');
      await driver.waitForText(/name = quick$/);
      expect(driver.text()).not.toContain('\t');
      driver.send('\x03');
      await portal.abandoned;
      await driver.waitFor(prompt);
      await ask(driver, 'from quick', '1 of 1 record');
      await driver.exit();
    } finally {
      await source.close();
      await portal.close();
    }
  });
});

describe('completion without the opening quote', () => {
  it('a field that needs backticks and a value that needs quotes complete from their bare start', async () => {
    const { completeQuery } = await import('../../src/repl/complete.js');
    const context = {
      resources: async () => [{ id: 'places', alias: 'places' }],
      fields: async () => [
        { id: 'school year', type: 'text' as const },
        { id: 'city', type: 'text' as const },
      ],
      values: async () => ['Köln', 'Kiel', 'Bonn'],
    };
    const field = await completeQuery('from places where sch', 21, context);
    expect(field).toEqual({ completions: ['`school year` '], prefix: 'sch' });
    const one = await completeQuery('from places where city = K', 26, { ...context, values: async () => ['Köln', 'Bonn'] });
    expect(one).toEqual({ completions: ['"Köln" '], prefix: 'K' });
    const both = await completeQuery('from places where city = K', 26, context);
    expect(both.completions).toEqual(['"Köln"', 'Kiel']);
  });
});

describe('local data read on demand (the REPL\'s source)', () => {
  it('lists names before reading any file, reads a file when a statement names it, and counts all on .resources', async () => {
    const { openSource, demoDataDir } = await import('../../src/session/source.js');
    const lazy = await openSource({ kind: 'data', paths: [demoDataDir], demo: true }, { lazy: true });
    try {
      const names = await lazy.listResources();
      expect(names.map((each) => each.alias)).toEqual(['courses', 'enrolments', 'schools']);
      expect(names.every((each) => each.total === undefined)).toBe(true);
      const driver = startDriver({ source: lazy });
      await driver.waitFor(prompt);
      expect(driver.text()).toContain('demo data');
      await ask(driver, 'from schools limit 1', '1 of 8 records');
      expect((await lazy.listResources()).find((each) => each.alias === 'schools')?.total).toBe(8);
      expect((await lazy.listResources()).find((each) => each.alias === 'enrolments')?.total).toBeUndefined();
      const listed = await ask(driver, '.resources', 'enrolments');
      expect(listed).toMatch(/courses +│ [0-9a-f-]{36} +│ +\d+/);
      expect(listed).toMatch(/enrolments +│ [0-9a-f-]{36} +│ +\d+/);
      expect(await ask(driver, 'from corses', 'UNKNOWN_RESOURCE')).toContain('did you mean "courses"?');
      await driver.exit();
    } finally {
      await lazy.close();
    }
  });

  it('.resources lists a file that cannot be read as unreadable, with why, and the others as usual', async () => {
    const { openSource } = await import('../../src/session/source.js');
    const folder = mkdtempSync(join(tmpdir(), 'ckql-repl-bad-'));
    writeFileSync(join(folder, 'good.csv'), 'x\n1\n2\n');
    writeFileSync(join(folder, 'bad.csv'), 'a,b\n1,2\n3,4,5\n');
    const lazy = await openSource({ kind: 'data', paths: [folder] }, { lazy: true });
    try {
      const driver = startDriver({ source: lazy, timing: false });
      await driver.waitFor(prompt);
      const listed = await ask(driver, '.resources', 'error[DATA_INVALID]');
      expect(listed).toMatch(/bad +│ [0-9a-f-]{36} +│ unreadable/);
      expect(listed).toMatch(/good +│ [0-9a-f-]{36} +│ +2/);
      expect(listed).toMatch(/ --> \S*bad\.csv:3/);
      await ask(driver, 'from good', '2 of 2 records');
      await driver.exit();
    } finally {
      await lazy.close();
      rmSync(folder, { recursive: true, force: true });
    }
  });

  it('reads the file of a query that runs as a plan (a range the portal cannot say whole)', async () => {
    const { openSource, demoDataDir } = await import('../../src/session/source.js');
    const lazy = await openSource({ kind: 'data', paths: [demoDataDir], demo: true }, { lazy: true });
    try {
      const driver = startDriver({ source: lazy, timing: false });
      await driver.waitFor(prompt);
      const answer = await ask(driver, 'from schools where _id >= 7', '2 of 2 records');
      expect(answer).not.toContain('NOT_FOUND');
      await driver.exit();
    } finally {
      await lazy.close();
    }
  });
});

describe('a large answer in the REPL', () => {
  it('draws 500 records of 20,000 and says how many it left out', async () => {
    const driver = startDriver({ source: demo, timing: false });
    await driver.waitFor(prompt);
    const answer = await ask(driver, 'from enrolments limit 20000', '20000 of 20000 records, 500 shown');
    expect(answer).toContain('… 19500 more records not shown');
    expect(answer.split('\n').filter((line) => /^\s+\d+ │/.test(line))).toHaveLength(500);
    await driver.exit();
  });
});

describe('pasted blocks and the order of answers', () => {
  it('runs a pasted block of several lines as one input (bracketed paste), also without a line break at its end', async () => {
    const driver = startDriver({ source: demo });
    await driver.waitFor(prompt);
    // The terminal is asked to mark pastes.
    expect(driver.raw()).toContain('\x1b[?2004h');
    // The README's first query, pasted with its line breaks: `from courses` alone is a whole query too.
    const block = 'from enrolments\rwhere grade >= 5 and status != withdrawn and (course = MATH-106 or term = "2024-autumn")\rorder by grade desc limit 10\r';
    driver.send(`\x1b[200~${block}\x1b[201~`);
    const answer = await driver.waitFor(/\b10 (of \d+ )?records\b[\s\S]*ckql> $/);
    expect(answer).not.toContain('error');
    expect(answer.match(/\brecords?\b/g)).toHaveLength(1);
    // Without the final line break, the block waits for Enter as a typed statement would.
    driver.send('\x1b[200~from schools\rwhere country = NO\x1b[201~');
    await driver.waitFor('where country = NO');
    expect(driver.since()).not.toMatch(/\brecords?\b/);
    driver.send('\r');
    const second = await driver.waitFor(/\brecords?\b[\s\S]*ckql> $/);
    expect(second).not.toContain('error');
    await driver.exit();
    expect(driver.raw().endsWith('\x1b[?2004l')).toBe(true);
  });

  it('prints answers in the order the lines were entered: a dot command or an error typed while a query runs waits for it', async () => {
    const portal = await startSlowPortal();
    const source = portalSource(portal.url);
    try {
      const driver = startDriver({ source });
      await driver.waitFor(prompt);
      driver.send('from slow\r');
      await portal.arrived;
      // typed while `from slow` runs: a format change (which must not reach the slow answer) and a broken query
      driver.send('.format json\r');
      driver.send('from quick where = 1\r');
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(driver.text()).not.toMatch(/[\r\n]format json\r?\n/);
      expect(driver.text()).not.toContain('error[');
      portal.release();
      const after = await driver.waitFor(/error\[[\s\S]*ckql> $/);
      const table = after.indexOf('│ slow');
      const format = after.search(/[\r\n]format json\r?\n/);
      const error = after.indexOf('error[');
      expect(table).toBeGreaterThanOrEqual(0);
      expect(format).toBeGreaterThan(table);
      expect(error).toBeGreaterThan(format);
      await driver.exit();
    } finally {
      await source.close();
      await portal.close();
    }
  });

  it('Ctrl-C cancels the running query and the lines waiting behind it', async () => {
    const portal = await startSlowPortal();
    const source = portalSource(portal.url);
    try {
      const driver = startDriver({ source });
      await driver.waitFor(prompt);
      driver.send('from slow\r');
      await portal.arrived;
      driver.send('from quick\r');
      driver.send('\x03');
      await driver.waitFor(/cancelled[\s\S]*cancelled/);
      expect(driver.since()).not.toContain('1 of 1 record');
      await ask(driver, 'from quick', '1 of 1 record');
      await driver.exit();
    } finally {
      await source.close();
      await portal.close();
    }
  });
});

describe('dot commands that say where things stand', () => {
  it('.help shows the current target, and .target sql on the memory engine says what to do at the prompt', async () => {
    const driver = startDriver({ source: demo });
    await driver.waitFor(prompt);
    const help = await ask(driver, '.help', 'Source:');
    expect(help).toMatch(/^\.target \S+ +.*\(now (auto \(not yet asked\)|ckan-2\.11)\)\r?$/m);
    expect(help).toMatch(/^Source: demo data .*, target (auto \(not yet asked\)|ckan-2\.11)\r?$/m);
    await ask(driver, '.target ckan-2.12', 'target ckan-2.12');
    expect(await ask(driver, '.help', 'Source:')).toMatch(/\(now ckan-2\.12\)/);
    const refused = await ask(driver, '.target sql', 'error[USAGE]');
    expect(refused).toContain('start ckql with --engine pglite for sql, or stay here with .target ckan-2.12');
    expect(refused).not.toMatch(/hint: add --engine/);
    await ask(driver, '.target ckan-2.11', 'target ckan-2.11');
    await driver.exit();
  });

  it('.connect with no argument says where queries go and how to change that; it connects nothing', async () => {
    const driver = startDriver({ source: demo });
    await driver.waitFor(prompt);
    const said = await ask(driver, '.connect', 'changes that');
    expect(said).toContain('queries go to demo data');
    expect(said).toContain('.connect URL or .connect DIR changes that');
    expect(said).not.toContain('connected to');
    await driver.exit();
  });
});

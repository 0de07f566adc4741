/**
 * The REPL at a portal (`ckql serve` on the demo data, over HTTP): `.datasets`
 * shows the catalogue, and afterwards Tab completes a resource by its
 * dataset and name, `from "university/courses"`, and the query runs;
 * `.fields` shows the data dictionary and the count; a text field compared
 * with a number is warned about above the result.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadResources } from '../../src/engine/node/load-resources.js';
import { startServer } from '../../src/server/server.js';
import type { RunningServer } from '../../src/server/server.js';
import { demoDataDir, openSource } from '../../src/session/source.js';
import { portalSource, prompt, startDriver } from './driver.js';
import type { Driver } from './driver.js';

let server: RunningServer;
let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'ckql-repl-datasets-'));
  writeFileSync(join(dir, 'spending.csv'), 'year,amount\n2019,10\n900,20\n2021,30\n');
  writeFileSync(join(dir, 'spending.fields.json'), JSON.stringify([{ id: 'year', type: 'text', info: { label: 'Year', notes: 'The **budget** year.\n\nMore.', type_override: 'int' } }]));
  server = await startServer({ tables: await loadResources([demoDataDir, dir]), port: 0 });
});

afterAll(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

async function ask(driver: Driver, line: string, expected: RegExp | string): Promise<string> {
  driver.send(`${line}\r`);
  const seen = await driver.waitFor(expected);
  await driver.waitFor(prompt);
  return seen;
}

describe('the REPL at a portal', () => {
  it('.datasets shows the catalogue; Tab then completes "dataset/resource", and the query runs', async () => {
    const source = await portalSource(server.url);
    const driver = startDriver({ source });
    try {
      await driver.waitFor(prompt);
      driver.send('.datasets enrolments\r');
      const shown = await driver.waitFor('query one:', 5000);
      await driver.waitFor(prompt, 5000);
      expect(shown).toMatch(/university\s+University demo data/);
      expect(shown).toMatch(/✓ enrolments\s+[0-9a-f-]{36}\s+CSV/);
      expect(shown).toContain('1 of 1 datasets — query one: from "university/courses"');
      // The three names share "university/": the first Tab writes that much, with the quote put in.
      driver.send('from univ');
      await new Promise((resolve) => setImmediate(resolve));
      driver.send('\t');
      await driver.waitForText(/from "university\/$/, 5000);
      driver.send('sch');
      await new Promise((resolve) => setImmediate(resolve));
      driver.send('\t');
      await driver.waitForText(/from "university\/schools" $/, 5000);
      await ask(driver, 'limit 1', '1 of 8 records');
    } finally {
      await driver.exit();
      await source.close();
    }
  });

  it('.fields shows the dictionary and the count, and a query comparing text with a number is warned about', async () => {
    const source = await portalSource(server.url);
    const driver = startDriver({ source });
    try {
      await driver.waitFor(prompt);
      const fields = await ask(driver, '.fields spending', 'fields of spending');
      expect(fields).toMatch(/year\s+│ text\s+│ Year\s+│ The budget year\.\s+│ int/);
      expect(fields).toContain('3 fields of spending, 3 records');
      const warned = await ask(driver, 'from spending where year >= 2020', 'records');
      expect(warned).toContain('warning[TEXT_COMPARED]: year >= 2020 compares text');
    } finally {
      await driver.exit();
      await source.close();
    }
  });

  it('on local data read as it is asked for (the REPL\'s way), .datasets reads every file first', async () => {
    const source = await openSource({ kind: 'data', paths: [demoDataDir], demo: true }, { lazy: true });
    const driver = startDriver({ source });
    try {
      await driver.waitFor(prompt);
      driver.send('.datasets\r');
      const shown = await driver.waitFor('query one:', 10_000);
      expect(shown).toMatch(/✓ courses[\s\S]*✓ enrolments[\s\S]*✓ schools/);
      await ask(driver, 'from "university/schools" where country = NO limit 1', /1 of \d+ records?/);
    } finally {
      await driver.exit();
      await source.close();
    }
  });

  it('.datasets refuses an option it does not have and an empty org:, instead of searching for them (it said "0 of 0 datasets")', async () => {
    const source = await openSource({ kind: 'data', paths: [demoDataDir], demo: true }, { lazy: true });
    const driver = startDriver({ source });
    try {
      await driver.waitFor(prompt);
      expect(await ask(driver, '.datasets --al', 'error[USAGE]')).toContain('.datasets takes words, org:NAME and --all, found "--al"');
      expect(await ask(driver, '.datasets --al', 'hint')).toContain('did you mean "--all"?');
      expect(await ask(driver, '.datasets course org:', 'error[USAGE]')).toContain('org: needs the name of an organization');
      expect(await ask(driver, '.datasets course --all', 'query one:')).toContain('1 of 1 datasets');
    } finally {
      await driver.exit();
      await source.close();
    }
  });
});

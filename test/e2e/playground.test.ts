/**
 * The playground in a real browser: Debian's Chromium driven by
 * playwright-core (no browser download), against `ckql serve`'s own wiring
 * in this process over the demo data. One browser and one server for the
 * file; each flow is a test, in the order a person would go.
 *
 * Under CI=true a missing browser fails the run; elsewhere the file is
 * skipped with a message. Screenshots of each state go to
 * test/e2e/screenshots/ (git-ignored); CKQL_SCREENSHOT_DOCS=1 also writes the
 * README's docs/playground.png.
 */
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AxeBuilder } from '@axe-core/playwright';
import { chromium } from 'playwright-core';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { playgroundActions } from '../../src/cli/playground.js';
import { servedSource } from '../../src/cli/playground-sources.js';
import { memoryEngine } from '../../src/engine/memory/engine.js';
import { loadResources } from '../../src/engine/node/load-resources.js';
import { startServer } from '../../src/server/server.js';
import type { RunningServer } from '../../src/server/server.js';

// What the functions run in the page read there (this file compiles without the DOM library).
declare const document: { readonly activeElement: { readonly id: string; readonly classList: { contains(name: string): boolean }; closest(selector: string): unknown } | null };
declare const navigator: { readonly clipboard: { readText(): Promise<string> } };
declare function addEventListener(
  type: 'securitypolicyviolation',
  listener: (event: { target: unknown; effectiveDirective: string; blockedURI: string; sourceFile: string; lineNumber: number; columnNumber: number; sample: string }) => void,
): void;
declare const Element: { new (): { tagName: string; className: string; closest(selector: string): unknown } };
declare function getComputedStyle(element: unknown): { readonly position: string; readonly textAlign: string };

const root = fileURLToPath(new URL('../..', import.meta.url));
const browserPath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const ci = process.env.CI === 'true' || process.env.CI === '1';
const screenshots = join(root, 'test', 'e2e', 'screenshots');
// Each screenshot is a PNG that Chromium encodes (CPU the suite's 60 s on two cores has not to spare) and that no
// test reads, so they are taken when asked for.
const takeShots = process.env.CKQL_SCREENSHOTS === '1' || process.env.CKQL_SCREENSHOT_DOCS === '1';
const haveBrowser = existsSync(browserPath);

// A browser on a busy two-core machine (the whole suite beside it) may take a while per step.
vi.setConfig({ testTimeout: 60_000 });

if (!haveBrowser && !ci) {
  console.warn(`skipping the playground's browser tests: no Chromium at ${browserPath} (apt-get install chromium, or set CHROMIUM_PATH)`);
}

describe.skipIf(!haveBrowser && !ci)('the playground in Chromium', () => {
  let server: RunningServer;
  let actions: ReturnType<typeof playgroundActions>;
  let context: BrowserContext;
  let profileDir: string;
  let page: Page;
  const problems: string[] = [];

  /** A picture of the page for a person to look at (nothing reads it), taken with CKQL_SCREENSHOTS=1. */
  const shot = async (name: string): Promise<void> => {
    if (!takeShots) return;
    await page.screenshot({ path: join(screenshots, `${name}.png`) });
  };
  const editor = (): ReturnType<Page['getByRole']> => page.getByRole('textbox', { name: 'ckql query' });
  /** Replaces the editor's text by typing, as a person would. */
  const typeQuery = async (text: string): Promise<void> => {
    await editor().click();
    await page.keyboard.press('Control+KeyA');
    await page.keyboard.press('Backspace');
    await page.keyboard.type(text);
  };

  beforeAll(async () => {
    if (!haveBrowser) throw new Error(`no Chromium at ${browserPath}: .ci/run installs it with apt (apt-get install chromium)`);
    if (takeShots) await mkdir(screenshots, { recursive: true });
    const engine = memoryEngine(await loadResources([join(root, 'examples', 'data')]));
    let url = '';
    actions = playgroundActions({
      sources: [servedSource(engine, { url: () => url, ckan: '2.11', label: 'demo data' })],
      defaultSource: 'local',
      version: 'test',
    });
    server = await startServer({ engine, port: 0, playground: { actions } });
    url = server.url;
    profileDir = await mkdtemp(join(tmpdir(), 'ckql-chromium-'));
    context = await chromium.launchPersistentContext(profileDir, {
      executablePath: browserPath,
      headless: true,
      args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
      viewport: { width: 1280, height: 900 },
      acceptDownloads: true,
    });
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.url });
    // Every refusal of the page's Content-Security-Policy is reported with what was refused and where.
    await context.addInitScript(() => {
      addEventListener('securitypolicyviolation', (event) => {
        const where = event.target instanceof Element ? `${event.target.tagName.toLowerCase()}.${event.target.className} in ${event.target.closest('.cm-content') === null ? 'the page' : 'the editor'}` : 'the page';
        console.error(`CSP refused ${event.effectiveDirective} (${where}): ${event.blockedURI} at ${event.sourceFile}:${event.lineNumber}:${event.columnNumber} ${event.sample}`);
      });
    });
    page = context.pages()[0] ?? (await context.newPage());
    page.on('console', (message) => {
      if (message.type() !== 'error') return;
      const text = message.text();
      // A query the server refuses (a test's own error case) is a 400 the page shows.
      if (text.includes('status of 400')) return;
      // Chrome's own line for a refused style duplicates the report above, which says where.
      if (text.startsWith('Applying inline style violates')) return;
      // Typing over highlighted text, Chrome's contenteditable editing adds a styled span to a line of the
      // editor; the policy refuses it and CodeMirror redraws the line from its state. Nothing of ours.
      if (/^CSP refused style-src-attr \(div\.cm-line[^)]* in the editor\)/.test(text)) return;
      problems.push(`${expect.getState().currentTestName ?? 'before'}: ${text}`);
    });
    page.on('pageerror', (error) => problems.push(error.message));
    await page.goto(`${server.url}/-/play`);
    await page.locator('#source option').first().waitFor({ state: 'attached' });
  });

  afterAll(async () => {
    await context?.close();
    await server?.close();
    await actions?.close();
    if (profileDir !== undefined) await rm(profileDir, { recursive: true, force: true });
  });

  it('loads with nothing from elsewhere and no error (the CSP refuses nothing the page needs)', async () => {
    await shot('initial');
    expect(await page.locator('#source').inputValue()).toBe('local');
    expect(await editor().getAttribute('aria-describedby')).toBe('editor-help');
    expect(problems).toEqual([]);
  });

  it('the keyboard path: Tab reaches the editor, Ctrl+Enter gives a table, Escape then Tab leaves', async () => {
    await page.goto(`${server.url}/`);
    await expect.poll(() => page.locator('#source option').count()).toBeGreaterThan(0);
    let reached = false;
    for (let presses = 0; presses < 8 && !reached; presses += 1) {
      await page.keyboard.press('Tab');
      reached = await page.evaluate(() => document.activeElement?.classList.contains('cm-content') === true);
    }
    expect(reached).toBe(true);
    await page.keyboard.press('Control+KeyA');
    await page.keyboard.type('from courses where subject = math order by credits desc limit 5');
    await page.keyboard.press('Control+Enter');
    const table = page.locator('#table-region table.records');
    await expect.poll(() => table.count()).toBe(1);
    expect(await table.locator('caption').innerText()).toMatch(/from courses where subject = math order by credits desc limit 5[\s\S]*rows 1–5 of 5/);
    expect(await table.locator('tbody tr').count()).toBe(5);
    // numbers right-aligned, the sort marked, the header kept in view
    const credits = table.locator('thead th', { hasText: 'credits' });
    expect(await credits.getAttribute('class')).toContain('num');
    expect(await credits.getAttribute('aria-sort')).toBe('descending');
    expect(await credits.evaluate((th) => getComputedStyle(th).position)).toBe('sticky');
    expect(await table.locator('tbody td.num').first().evaluate((td) => getComputedStyle(td).textAlign)).toBe('right');
    // Tab inside the editor indents; Escape, then Tab, moves on
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.classList.contains('cm-content'))).toBe(true);
    await page.keyboard.press('Escape');
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.closest('.cm-editor') === null)).toBe(true);
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('run');
    await shot('after-run');
  });

  it('Shift+Enter runs too, and a null reads as the word', async () => {
    await typeQuery('from courses where instructor is null limit 3');
    await page.keyboard.press('Shift+Enter');
    await expect.poll(() => page.locator('#table-region caption').innerText()).toContain('instructor is null');
    const nulls = page.locator('#table-region td.null');
    expect(await nulls.count()).toBeGreaterThan(0);
    expect(await nulls.first().innerText()).toBe('null');
  });

  it('type and get a diagnostic at the right span, with its fix', async () => {
    await typeQuery('from courses where subjet = math');
    const mark = page.locator('.cm-lintRange-error');
    await expect.poll(() => mark.count()).toBeGreaterThan(0);
    expect(await mark.first().innerText()).toBe('subjet');
    await expect.poll(() => page.locator('#problems').innerText()).toMatch(/^Error at line 1, column 20: .*subjet.*did you mean "subject"/);
    // highlighting comes from the lexer: the keywords, and the rest by their token classes
    expect(await page.locator('.tok-keyword').allInnerTexts()).toEqual(['from', 'where']);
    expect(await page.locator('.tok-operator').allInnerTexts()).toEqual(['=']);
    await shot('diagnostic');
    await mark.first().hover();
    await page.getByRole('button', { name: 'Change to subject' }).click();
    expect(await editor().innerText()).toBe('from courses where subject = math');
    await expect.poll(() => mark.count()).toBe(0);
  });

  it('complete a field and see its type', async () => {
    await typeQuery('from courses where cre');
    const listbox = page.getByRole('listbox');
    await expect.poll(() => listbox.count()).toBe(1);
    const option = listbox.getByRole('option', { name: /credits/ });
    expect(await option.innerText()).toMatch(/credits\s*numeric/);
    await shot('completion');
    // CodeMirror takes no Enter for 75 ms after a list opens or changes (its interactionDelay, against
    // accepting an option that appeared under a finger): a person, or a slower machine, is past it.
    await page.waitForTimeout(100);
    await page.keyboard.press('Enter');
    expect(await editor().innerText()).toBe('from courses where credits');
  });

  it('a query error the server finds shows at its span in the editor', async () => {
    await typeQuery('from courses where subject = $subject');
    // run once the live check of the text typed is done: the server's error is still marked
    await page.waitForTimeout(600);
    await page.keyboard.press('Control+Enter');
    const mark = page.locator('.cm-lintRange-error');
    await expect.poll(() => mark.count()).toBeGreaterThan(0);
    expect(await mark.first().innerText()).toBe('$subject');
    expect(await page.locator('#status').innerText()).toMatch(/\$subject is not bound \(type its value in the \$subject box under Parameters/);
    // the live check that follows keeps it (the text is the one that ran)
    await page.waitForTimeout(600);
    expect(await mark.first().innerText()).toBe('$subject');
    await shot('error-shown');
    // given its value, the same text runs, and the server's mark goes with the error
    await page.getByRole('textbox', { name: '$subject', exact: true }).fill('math');
    await page.getByRole('textbox', { name: '$subject', exact: true }).press('Enter');
    await expect.poll(() => page.locator('#table-region caption').innerText()).toContain('subject = $subject');
    await expect.poll(() => mark.count()).toBe(0);
  });

  it('a parameter gets an input; explain shows the request, the local part and copies', async () => {
    await page.getByRole('textbox', { name: '$subject', exact: true }).fill('math');
    await typeQuery('from courses where subject = $subject and credits > 5');
    await page.keyboard.press('Control+Enter');
    await expect.poll(() => page.locator('#table-region caption').innerText()).toContain('credits > 5');
    await page.getByRole('button', { name: 'Explain' }).click();
    const panel = page.locator('#explain-panel');
    await expect.poll(() => panel.getByText('What ckql finishes locally').count()).toBe(1);
    expect(await page.getByRole('button', { name: 'Explain' }).getAttribute('aria-expanded')).toBe('true');
    const json = await panel.locator('pre.json').innerText();
    expect(JSON.parse(json)).toEqual({ resource_id: 'courses', filters: { subject: 'math' }, sort: '_id asc' });
    expect(await panel.locator('pre.ckql').innerText()).toContain('credits > 5');
    expect(await panel.locator('pre.shell').innerText()).toMatch(/^curl -X POST http:\/\/127\.0\.0\.1:\d+\/api\/action\/datastore_search/);
    expect(await panel.locator('pre.yaml').innerText()).toContain('subject: math');
    expect(await panel.locator('pre.ts').innerText()).toContain('ckql`from courses where subject = ${params.subject} and credits > 5`');
    await panel.getByRole('button', { name: 'Copy curl command' }).click();
    await expect.poll(() => page.locator('#status').innerText()).toBe('Copied the curl command.');
    expect(await page.evaluate(() => navigator.clipboard.readText())).toMatch(/^curl -X POST/);
    await shot('explain-open');
  });

  it('a share link restores the exact state in a new page, and holds no token', async () => {
    await page.locator('#page-size').selectOption('25');
    await page.getByRole('button', { name: 'Copy share link' }).click();
    await expect.poll(() => page.locator('#status').innerText()).toBe('Copied the share link.');
    const link = await page.evaluate(() => navigator.clipboard.readText());
    expect(link).toBe(page.url());
    expect(link).toMatch(/#v=1&/);
    expect(link.toLowerCase()).not.toContain('token');
    const other = await context.newPage();
    await other.goto(link);
    await expect.poll(() => other.locator('#table-region caption').innerText()).toContain('credits > 5');
    expect(await other.getByRole('textbox', { name: 'ckql query' }).innerText()).toBe('from courses where subject = $subject and credits > 5');
    expect(await other.getByRole('textbox', { name: '$subject', exact: true }).inputValue()).toBe('math');
    expect(await other.locator('#page-size').inputValue()).toBe('25');
    const withoutTime = (text: string): string => text.replace(/ · \d+ ms/, '');
    expect(withoutTime(await other.locator('#table-region caption').innerText())).toBe(withoutTime(await page.locator('#table-region caption').innerText()));
    // the history kept the run, in this browser's storage; a saved query is there for the next page too
    expect(await other.locator('#history li').first().innerText()).toContain('from courses where subject = $subject and credits > 5');
    await other.getByLabel('Name').fill('maths above 5');
    await other.getByRole('button', { name: 'Save this query' }).click();
    await other.close();
    await page.reload();
    await page.getByRole('button', { name: 'Open maths above 5' }).click();
    expect(await editor().innerText()).toBe('from courses where subject = $subject and credits > 5');
    expect(await page.getByRole('textbox', { name: '$subject', exact: true }).inputValue()).toBe('math');
  });

  it('pages, counts a field into bars, and downloads every record as CSV', async () => {
    await typeQuery('from courses where credits > 3');
    await page.keyboard.press('Control+Enter');
    await expect.poll(() => page.locator('#page-info').innerText()).toMatch(/^Page 1 of \d+/);
    await page.getByRole('button', { name: 'Next page' }).click();
    await expect.poll(() => page.locator('#table-region caption').innerText()).toMatch(/rows 26–50 of 231/);
    await page.getByRole('button', { name: 'Count the values of subject' }).click();
    const bars = page.locator('#facet table.bars');
    await expect.poll(() => bars.count()).toBe(1);
    expect(await bars.locator('caption').innerText()).toContain('among 231 matching records');
    expect(await bars.locator('tbody tr').first().innerText()).toMatch(/^math\s+51/);
    await shot('facet');
    const downloading = page.waitForEvent('download');
    await page.getByRole('button', { name: 'Download' }).click();
    const file = await downloading;
    expect(file.suggestedFilename()).toBe('courses.csv');
    const text = await readFile((await file.path())!, 'utf8');
    expect(text.split('\n')[0]).toBe('_id,code,title,subject,stage,level,credits,online,start_date,school,instructor');
    expect(text.trimEnd().split('\n')).toHaveLength(232);
    // labels and one number: the result itself as bars
    await typeQuery('from schools select name, students order by students desc');
    await page.keyboard.press('Control+Enter');
    await page.getByRole('radio', { name: 'Bars' }).check();
    const grouped = page.locator('#table-region table.bars');
    await expect.poll(() => grouped.count()).toBe(1);
    expect(await grouped.locator('tbody tr').count()).toBe(8);
  });

  it('has no WCAG A/AA violations (axe), with results, counts and explain open', async () => {
    // axe walks the DOM in several steps and fails inside itself (`nthChild` of a removed node) when the page
    // changes under it: the live diagnostics and completion of the query typed last land a moment after it ran.
    // (Text, not a function: the tests are type-checked without the DOM's types.)
    await page.evaluate(`new Promise((resolve) => {
      const done = () => { observer.disconnect(); clearTimeout(cap); resolve(); };
      let quiet = setTimeout(done, 300);
      const observer = new MutationObserver(() => { clearTimeout(quiet); quiet = setTimeout(done, 300); });
      observer.observe(document, { subtree: true, childList: true, attributes: true, characterData: true });
      const cap = setTimeout(done, 5000);
    })`);
    const result = await new AxeBuilder({ page }).withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']).analyze();
    expect(result.violations.map((violation) => `${violation.id}: ${violation.nodes.map((node) => node.target.join(' ')).join(', ')}`)).toEqual([]);
    expect(problems).toEqual([]);
  });

  it('the overview the README shows: a query, its table and explain', async () => {
    await page.goto(`${server.url}/#v=1&source=local&target=ckan-2.11&size=25&q=${encodeURIComponent('from courses\nselect code, title, subject, credits, instructor\nwhere subject in (math, computing) and credits >= 6\norder by credits desc')}`);
    await expect.poll(() => page.locator('#table-region caption').innerText()).toContain('rows 1–');
    await page.getByRole('button', { name: 'Explain' }).click();
    await expect.poll(() => page.locator('#explain-panel').getByText('What ckql finishes locally').count()).toBe(1);
    await shot('overview');
    if (process.env.CKQL_SCREENSHOT_DOCS === '1') await page.screenshot({ path: join(root, 'docs', 'playground.png') });
  });

  it('a link opened in a fresh page is checked against the fields the source sends after it loads, and says what of it the server lacks', async () => {
    await page.goto('about:blank'); // a fresh page: only the fragment would change, and the page stay as it was
    await page.goto(`${server.url}/#v=1&source=portal&target=sql&q=${encodeURIComponent('from courses where subjet = math')}`);
    await expect.poll(() => page.locator('#problems').innerText()).toMatch(/^Error at line 1, column 20: .*subjet.*did you mean "subject"/);
    expect(await page.locator('.cm-lintRange-error').first().innerText()).toBe('subjet');
    // the run's own answer does not hide that the link asked for what this server has not
    await expect.poll(() => page.locator('#status').innerText()).toMatch(
      /^This link names the source portal, which this server does not offer; using local\. This link names the target sql, which local does not offer; using ckan-2\.11\. .*subjet/,
    );
  });
});

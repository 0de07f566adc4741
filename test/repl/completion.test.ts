/**
 * Tab completion on the language service, through real streams: a value
 * sample that arrives after Tab's half second is said to be loading and then
 * listed (never keywords in its place), and dot commands that take a
 * resource complete resource names, aliases included.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDemo, portalSource, prompt, startDriver, type Driver } from './driver.js';
import type { Source } from '../../src/session/source.js';

/** A portal whose record samples answer only when `release()` is called; `limit: 0` answers at once. */
async function startHeldPortal(): Promise<{ url: string; release: () => void; asked: Promise<void>; close: () => Promise<void> }> {
  let release = (): void => undefined;
  const released = new Promise<void>((resolve) => (release = resolve));
  let sawSample = (): void => undefined;
  const asked = new Promise<void>((resolve) => (sawSample = resolve));
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      const request = JSON.parse(body) as { resource_id: string; limit?: number };
      const answer = (): void => {
        res.setHeader('content-type', 'application/json');
        res.end(
          JSON.stringify({
            help: 'x',
            success: true,
            result: {
              resource_id: request.resource_id,
              fields: [{ id: '_id', type: 'int' }, { id: 'school', type: 'text' }],
              records: request.limit === 0 ? [] : [{ _id: 1, school: 'lakeside' }, { _id: 2, school: 'lumiere' }, { _id: 3, school: 'north' }],
              total: 3,
              total_was_estimated: false,
              limit: request.limit ?? 100,
              include_total: true,
              records_format: 'objects',
            },
          }),
        );
      };
      if (request.limit === 0) answer();
      else {
        sawSample();
        void released.then(answer);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    release,
    asked,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

async function typeWithTabs(driver: Driver, keys: string): Promise<void> {
  for (const part of keys.split(/(\t)/)) {
    if (part === '') continue;
    driver.send(part);
    await new Promise((resolve) => setImmediate(resolve));
  }
}

describe('a value sample slower than Tab', () => {
  it('says it is loading, then lists the values when they arrive, and never keywords', async () => {
    const portal = await startHeldPortal();
    const source = portalSource(portal.url);
    try {
      const driver = startDriver({ source, completionWaitMs: 100 });
      await driver.waitFor(prompt);
      await typeWithTabs(driver, 'from slow where school = l\t');
      await portal.asked;
      await driver.waitFor('(the values of school: still loading; listed when they arrive)');
      driver.send('\t');
      portal.release();
      const listing = await driver.waitFor(/lakeside\s+lumiere/);
      expect(listing).not.toMatch(/\b(and|or|limit|order by|where)\b/);
      expect(listing).not.toContain('north');
      // Said once, listed once.
      expect(driver.text().match(/still loading/g)).toHaveLength(1);
      expect(driver.text().match(/lakeside/g)).toHaveLength(1);
      // The line is as it was, and the next Tab completes at once from what was learned.
      await typeWithTabs(driver, 'a\t');
      await driver.waitForText(/school = lakeside $/);
      driver.send('\x03');
      await driver.waitFor(prompt);
      await driver.exit();
    } finally {
      await source.close();
      await portal.close();
    }
  });
});

describe('dot commands that take a resource', () => {
  let demo: Source;
  beforeAll(async () => {
    demo = await openDemo();
  });
  afterAll(async () => {
    await demo.close();
  });

  for (const command of ['.fields', '.schema']) {
    it(`${command} completes resource names`, async () => {
      const driver = startDriver({ source: demo });
      await driver.waitFor(prompt);
      await typeWithTabs(driver, `${command} \t`);
      driver.send('\t');
      const listing = await driver.waitFor(/schools/);
      expect(listing).toMatch(/courses\s+enrolments\s+schools/);
      driver.send('\x03');
      await driver.waitFor(prompt);
      await typeWithTabs(driver, `${command} enr\t`);
      await driver.waitForText(new RegExp(`${command.replace('.', '\\.')} enrolments $`));
      driver.send('\x03');
      await driver.waitFor(prompt);
      await driver.exit();
    });
  }
});

describe("the README's first Tab", () => {
  it('from schools where country = N<Tab><Tab> lists NO and NZ on a fresh session over the demo data read on demand', async () => {
    const { openSource, demoDataDir } = await import('../../src/session/source.js');
    // As `ckql` opens it: nothing read until a statement or a Tab needs a file.
    const lazy = await openSource({ kind: 'data', paths: [demoDataDir], demo: true }, { lazy: true });
    try {
      const driver = startDriver({ source: lazy });
      await driver.waitFor(prompt);
      await typeWithTabs(driver, 'from schools where country = N\t');
      driver.send('\t');
      const listing = await driver.waitFor(/NO\s+NZ/);
      expect(listing).not.toMatch(/\b(and|or|limit|where)\b/);
      driver.send('\x03');
      await driver.waitFor(prompt);
      await driver.exit();
    } finally {
      await lazy.close();
    }
  });
});

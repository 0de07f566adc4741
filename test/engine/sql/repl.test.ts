/**
 * The REPL over a PGlite source: `.engine` says who answers, and a search
 * runs PostgreSQL's full text (whole words, not substrings).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSource } from '../../../src/session/source.js';
import type { Source } from '../../../src/session/source.js';
import { prompt, startDriver } from '../../repl/driver.js';

let source: Source;
beforeAll(async () => {
  source = await openSource({ kind: 'data', paths: ['examples/data/schools.json'], engine: 'pglite' });
});
afterAll(async () => {
  await source?.close();
});

describe('REPL on the pglite engine', () => {
  it('.engine names the engine; search finds whole words only', async () => {
    const driver = startDriver({ source });
    try {
      await driver.waitFor(prompt);
      driver.send('.engine\r');
      expect(await driver.waitFor(/engine pglite: pglite \(in memory\)/)).toContain('engine pglite');
      driver.send('from schools search "aur" select name\r');
      await driver.waitFor(/0 records|no records|0 of 0/);
      expect(driver.since()).not.toContain('Aurora');
      driver.send('from schools search "aurora" select name\r');
      expect(await driver.waitFor(/Aurora University/)).toContain('Aurora University');
    } finally {
      await driver.exit();
    }
  });
});

/**
 * The history file: where it lives, that it is written through a real
 * session, read back by the next one, mode 0600, and never holds a token.
 */
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { defaultHistoryFile, redactSecrets } from '../../src/repl/history.js';
import { portalSource, prompt, startDriver, startSlowPortal, type SlowPortal } from './driver.js';

describe('defaultHistoryFile', () => {
  it('lives in the XDG state directory', () => {
    expect(defaultHistoryFile({ XDG_STATE_HOME: '/state', HOME: '/home/ada' })).toBe('/state/ckql/history');
    expect(defaultHistoryFile({ HOME: '/home/ada' })).toBe('/home/ada/.local/state/ckql/history');
    expect(defaultHistoryFile({ XDG_STATE_HOME: '', HOME: '/home/ada' })).toBe('/home/ada/.local/state/ckql/history');
  });
});

describe('redactSecrets', () => {
  it('replaces known secrets wherever they stand', () => {
    expect(redactSecrets('from x search "tok-123456"', ['tok-123456'])).toBe('from x search "[redacted]"');
  });

  it('replaces Authorization values, token settings, URL passwords and JWTs', () => {
    expect(redactSecrets(`curl -H "Authorization: abc123" https://x`, [])).toBe(`curl -H "Authorization: [redacted]" https://x`);
    expect(redactSecrets('{"authorization": "abc"}', [])).toBe('{"authorization": [redacted]}');
    expect(redactSecrets('ckql --token s3cret --url x', [])).toBe('ckql --token [redacted] --url x');
    expect(redactSecrets('apikey=abc&x=1', [])).toBe('apikey=[redacted]&x=1');
    expect(redactSecrets('.connect https://ada:hunter2@data.example.org', [])).toBe('.connect https://ada:[redacted]@data.example.org');
    const jwt = 'eyJhbGciOiJIUzI1NiJ9.eyJqdGkiOiJhYmMifQ.c2lnbmF0dXJlLXBhcnQ';
    expect(redactSecrets(`x ${jwt} y`, [])).toBe('x [redacted] y');
  });

  it('leaves queries that only mention such words alone', () => {
    for (const line of ['from courses search "token bucket"', 'from courses where subject = math', 'from t search "password reset"']) {
      expect(redactSecrets(line, [])).toBe(line);
    }
  });
});

describe('the history file of a session', () => {
  let dir: string;
  let portal: SlowPortal;
  const token = 'tok-SECRET-7f3a9c';

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'ckql-history-'));
    portal = await startSlowPortal();
  });

  afterEach(async () => {
    await portal.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('keeps every line, without the configured token or an Authorization value, mode 0600', async () => {
    const historyFile = join(dir, 'state', 'ckql', 'history');
    const source = portalSource(portal.url, token);
    try {
      const driver = startDriver({ source, historyFile });
      await driver.waitFor(prompt);
      for (const line of [
        'from quick limit 1',
        `from quick search "${token}"`,
        'from quick search "Authorization: pasted-value-123"',
        '.format csv',
      ]) {
        driver.send(`${line}\r`);
        await driver.waitFor(/(records?|format csv)[\s\S]*ckql> $/);
      }
      await driver.exit();
      const text = readFileSync(historyFile, 'utf8');
      expect(text).not.toContain(token);
      expect(text).not.toContain('pasted-value-123');
      expect(text.split('\n').filter((line) => line !== '')).toEqual([
        'from quick limit 1',
        'from quick search "[redacted]"',
        'from quick search "Authorization: [redacted]"',
        '.format csv',
        '.exit',
      ]);
      expect(statSync(historyFile).mode & 0o777).toBe(0o600);
    } finally {
      await source.close();
    }
  });

  it('a statement typed over several lines comes back from history whole, its comments dropped', async () => {
    const historyFile = join(dir, 'history');
    const source = portalSource(portal.url);
    try {
      const driver = startDriver({ source, historyFile });
      await driver.waitFor(prompt);
      driver.send('from quick where -- the field comes next\r');
      await driver.waitFor('... ');
      driver.send('name = "a -- b"\r');
      await driver.waitFor(/records?[\s\S]*ckql> $/);
      driver.send('\u001b[A');
      await driver.waitForText(/ckql> from quick where name = "a -- b"$/);
      driver.send('\r');
      await driver.waitFor(/records?[\s\S]*ckql> $/);
      await driver.exit();
      const lines = readFileSync(historyFile, 'utf8').split('\n').filter((line) => line !== '');
      expect(lines).toEqual(['from quick where name = "a -- b"', '.exit']);
    } finally {
      await source.close();
    }
  });

  it('is read by the next session: the up arrow brings back the last line', async () => {
    const historyFile = join(dir, 'history');
    writeFileSync(historyFile, 'from quick limit 1\nfrom quick where name = quick\n', { mode: 0o600 });
    const source = portalSource(portal.url);
    try {
      const driver = startDriver({ source, historyFile });
      await driver.waitFor(prompt);
      driver.send('\u001b[A');
      await driver.waitForText(/ckql> from quick where name = quick$/);
      driver.send('\u001b[A');
      await driver.waitForText(/ckql> from quick limit 1$/);
      driver.send('\r');
      await driver.waitFor('1 of 1 record');
      await driver.exit();
    } finally {
      await source.close();
    }
  });

  it('is not kept with historyFile: null, and a file that cannot be written costs only the history', async () => {
    const source = portalSource(portal.url);
    try {
      const none = startDriver({ source, historyFile: null });
      await none.waitFor(prompt);
      await none.exit();

      const blocked = join(dir, 'not-a-dir');
      writeFileSync(blocked, '');
      const driver = startDriver({ source, historyFile: join(blocked, 'history') });
      await driver.waitForText(/history is not kept: .*not-a-dir[\s\S]*ckql> $/);
      driver.send('from quick\r');
      await driver.waitFor('1 of 1 record');
      await driver.exit();
    } finally {
      await source.close();
    }
  });
});

/**
 * Data files PostgreSQL cannot take as they are, on every engine: a NUL
 * byte (PostgreSQL's text holds none), more columns than a table holds
 * (1,600 with CKAN's `_id` and `_full_text`), a record too long to copy,
 * a value PostgreSQL refuses during COPY, and bytes that are not UTF-8.
 * The memory engine keeps what it can (a NUL, any width); the SQL engines
 * say what is wrong with DATA_INVALID naming the file and the line, never
 * PostgreSQL's words as "a bug". Numbers beyond a double (`1e400`) are read
 * as PostgreSQL's `numeric` reads them, on every engine, PostgreSQL judging.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { DatastoreError, ToolError } from '../../../src/errors.js';
import { loadResources } from '../../../src/engine/node/load-resources.js';
import { loadFiles } from '../../../src/engine/sql/load-files.js';
import type { LoadFilesOptions } from '../../../src/engine/sql/load-files.js';
import type { TestEngines } from './engines.js';
import { engineNames, openTestEngines } from './engines.js';
import { hostileDataFiles } from '../../helpers/hostile-data.js';

const dir = mkdtempSync(join(tmpdir(), 'ckql-hostile-data-'));
function file(name: string, content: string | Buffer): string {
  const path = join(dir, name);
  writeFileSync(path, content);
  return path;
}

const nulInText = file('nul.csv', 'a,b\n1,ok\n2,x\u0000y\n');
const nulAlone = file('nulcell.csv', 'a,b\n1,\u0000\n');
const nulJson = file('nuljson.ndjson', '{"a":1}\n{"a":2,"b":"x\\u0000y"}\n');
const tooWide = file('wide.csv', `${Array.from({ length: 1700 }, (_, k) => `c${k}`).join(',')}\n${Array.from({ length: 1700 }, () => '1').join(',')}\n`);
const longLine = file('long.csv', `a,b\n1,short\n2,${'x'.repeat(33 * 1024 * 1024)}\n`);
const latin = file('latin.csv', Buffer.concat([Buffer.from('city,n\nBerlin,1\nM'), Buffer.from([0xfc]), Buffer.from('nchen,2\n')]));
const latinJson = file('latin.ndjson', Buffer.concat([Buffer.from('{"city":"Berlin"}\n{"city":"M'), Buffer.from([0xfc]), Buffer.from('nchen"}\n')]));
// a three-byte character cut at the end of the first chunk a stream reads (64 KiB), and valid
const euro = file('euro.csv', `s\n${'a'.repeat(65536 - 4)}\u20ac\n`);
const huge = file('huge.csv', 'a,n\nx,1e400\ny,-1.5e400\nz,2.5\n');
const hugeJson = file('huge.ndjson', '{"n":1e400}\n{"n":-1.5e400}\n{"n":2.5}\n');
const beyond = file('beyond.csv', 'n\n1e131072\n');
const beyondJson = file('beyond.ndjson', '{"n":1e131072}\n');
// declared a date, with a year PostgreSQL has not got: only PostgreSQL can say so, during COPY
const yearZero = file('year0.csv', 'd\n2020-01-01\n0000-01-01\n');
file('year0.fields.json', JSON.stringify({ fields: [{ id: 'd', type: 'date' }] }));

let engines: TestEngines;
beforeAll(async () => {
  engines = await openTestEngines([]);
});
afterAll(async () => {
  await engines?.close();
});

/** The error `run` ends with (it must end with one). */
async function failure(run: Promise<unknown>): Promise<ToolError> {
  const error = await run.then(() => undefined, (e: unknown) => e);
  expect(error).toBeInstanceOf(ToolError);
  return error as ToolError;
}

async function memoryRecords(path: string, options: Parameters<typeof loadResources>[1] = {}): Promise<unknown[]> {
  const [table] = await loadResources(path, options);
  return table!.rows.map((row) => ({ ...row }) as unknown);
}

describe('the memory engine', () => {
  it('keeps a NUL in a text, and a cell of a NUL alone is that text, not null', async () => {
    expect(await memoryRecords(nulInText)).toEqual([{ _id: 1, a: 1, b: 'ok' }, { _id: 2, a: 2, b: 'x\u0000y' }]);
    expect(await memoryRecords(nulAlone)).toEqual([{ _id: 1, a: 1, b: '\u0000' }]);
  });

  it('refuses bytes that are not UTF-8, naming the line and the byte; --invalid-utf8 replace keeps U+FFFD on purpose', async () => {
    for (const [path, line, offset] of [[latin, 3, 17], [latinJson, 2, 28]] as const) {
      const error = await failure(loadResources(path));
      expect(error.code).toBe('DATA_INVALID');
      expect(error.file).toBe(path);
      expect(error.line).toBe(line);
      expect(error.message).toContain(`line ${line}, byte ${offset}`);
      expect(error.message).toContain('not UTF-8');
      expect(error.hint).toContain('--invalid-utf8 replace');
    }
    expect(await memoryRecords(latin, { invalidUtf8: 'replace' })).toEqual([{ _id: 1, city: 'Berlin', n: 1 }, { _id: 2, city: 'M\uFFFDnchen', n: 2 }]);
    expect(((await memoryRecords(euro)) as { s: string }[])[0]!.s.endsWith('\u20ac')).toBe(true);
  });

  it('refuses a number beyond PostgreSQL\'s numeric in a CSV column it would call numeric, and in JSON', async () => {
    expect(await memoryRecords(beyond)).toEqual([{ _id: 1, n: '1e131072' }]);
    const error = await failure(loadResources(beyondJson));
    expect(error.code).toBe('DATA_INVALID');
    expect(error.message).toContain('line 1');
  });
});

describe.each(engineNames)('%s', (name) => {
  const load = async (path: string, options: LoadFilesOptions = {}): Promise<unknown[]> => {
    const engine = engines.get(name);
    const [loaded] = await loadFiles(engine.db, [path], { replace: true, indexes: false, ...options });
    await engine.refresh();
    return [...(await engine.search({ resource_id: loaded!.id, sort: '_id' })).records];
  };

  it('refuses a NUL with DATA_INVALID naming the file, line and column, before PostgreSQL sees it', async () => {
    for (const [path, line, column] of [[nulInText, 3, 'b'], [nulAlone, 2, 'b'], [nulJson, 2, 'b']] as const) {
      const error = await failure(load(path));
      expect(error.code).toBe('DATA_INVALID');
      expect(error.file).toBe(path);
      expect(error.line).toBe(line);
      expect(error.message).toContain(`line ${line}, column "${column}"`);
      expect(error.message).toContain('NUL');
    }
  });

  it('refuses more columns than a PostgreSQL table holds, saying how many it holds', async () => {
    const error = await failure(load(tooWide));
    expect(error.code).toBe('DATA_INVALID');
    expect(error.file).toBe(tooWide);
    expect(error.message).toContain('1700 columns');
    expect(error.message).toContain('1598');
  });

  it('tells a value PostgreSQL refuses during COPY as DATA_INVALID with the file and line, in PostgreSQL\'s words', async () => {
    const error = await failure(load(yearZero));
    expect(error.code).toBe('DATA_INVALID');
    expect(error.file).toBe(yearZero);
    expect(error.line).toBe(3);
    expect(error.message).toContain('out of range');
  });

  it('refuses bytes that are not UTF-8 as the memory engine does, and replaces them when told to', async () => {
    for (const [path, line] of [[latin, 3], [latinJson, 2]] as const) {
      const error = await failure(load(path));
      expect(error.code).toBe('DATA_INVALID');
      expect(error.line).toBe(line);
      expect(error.message).toContain('not UTF-8');
      const replaced = await load(path, { invalidUtf8: 'replace' });
      expect(replaced).toEqual(await memoryRecords(path, { invalidUtf8: 'replace' }));
    }
  });

  it('reads 1e400 as PostgreSQL\'s numeric does, and as the memory engine does', async () => {
    const engine = engines.get(name);
    // the judge: PostgreSQL's own reading of the texts
    const said = await engine.db.transaction((tx) => tx.query(`SELECT '1e400'::numeric::text AS a, '-1.5e400'::numeric::text AS b`));
    const [a, b] = [said.rows[0]!['a'], said.rows[0]!['b']] as [string, string];
    expect(a).toBe(`1${'0'.repeat(400)}`);
    expect(await load(huge)).toEqual([{ _id: 1, a: 'x', n: a }, { _id: 2, a: 'y', n: b }, { _id: 3, a: 'z', n: 2.5 }]);
    expect(await memoryRecords(huge)).toEqual([{ _id: 1, a: 'x', n: a }, { _id: 2, a: 'y', n: b }, { _id: 3, a: 'z', n: 2.5 }]);
    expect((await engine.resource('huge'))?.fields.find((f) => f.id === 'n')?.type).toBe('numeric');
    expect(await load(hugeJson)).toEqual([{ _id: 1, n: a }, { _id: 2, n: b }, { _id: 3, n: 2.5 }]);
    expect(await memoryRecords(hugeJson)).toEqual([{ _id: 1, n: a }, { _id: 2, n: b }, { _id: 3, n: 2.5 }]);
    // beyond numeric: a text column on every engine (a CSV), refused (JSON)
    expect(await load(beyond)).toEqual([{ _id: 1, n: '1e131072' }]);
    expect((await failure(load(beyondJson))).code).toBe('DATA_INVALID');
  });
});

describe('pglite', () => {
  // checked before PostgreSQL is asked, so one engine says it for both
  it('refuses a record longer than the bound, naming its line, before PostgreSQL sees it', async () => {
    const engine = engines.get('pglite');
    const error = await failure(loadFiles(engine.db, [longLine], { replace: true, indexes: false }));
    expect(error.code).toBe('DATA_INVALID');
    expect(error.line).toBe(3);
    expect(error.message).toContain('line 3');
    expect(error.message).toContain('32 MiB');
  });
});

describe('generated hostile data files', () => {
  // (the same files through ckql query --data: test/editors/hostile-files.test.ts)
  it.each(engineNames)('load on the memory engine and on %s: an answer or a typed error naming the file, in bounded time', async (name) => {
    const engine = engines.get(name);
    let runs = 0;
    await fc.assert(
      fc.asyncProperty(hostileDataFiles, async ({ name: fileName, body }) => {
        const path = join(dir, `${name}-run-${runs++}`);
        mkdirSync(path);
        const file = join(path, fileName);
        writeFileSync(file, body);
        for (const [who, load] of [
          ['memory', () => loadResources(file)],
          [name, () => loadFiles(engine.db, [file], { replace: true, indexes: false })],
        ] as const) {
          const outcome = await bounded(load().then(() => undefined, (error: unknown) => error), 10_000, `${who}: ${fileName}`);
          if (outcome === undefined) continue;
          expect(outcome instanceof ToolError || outcome instanceof DatastoreError, `${who}, ${fileName}: ${String(outcome)}`).toBe(true);
          if (outcome instanceof ToolError) expect(outcome.message, `${who}, ${fileName}`).toContain(file);
        }
      }),
      { numRuns: 8, seed: 30 },
    );
  });
});

/** Rejects when `work` takes longer than `ms`: a hang is a failure, not a stuck suite. */
function bounded<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what} did not end within ${ms} ms`)), ms)));
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

/**
 * The memory core's `loadTable`, fed a file's bytes in chunks of random
 * sizes (cut inside multi-byte UTF-8 characters too) with the web's bytes
 * (`WEB_BYTES`: TextDecoder, no Buffer), gives the table the Node loader
 * (`loadResources`, Node's bytes, a file stream) gives for the same file:
 * fields, types and rows; and the same refusals, word for word.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createRandom } from '../../../scripts/generate-demo-data.js';
import { loadTable } from '../../../src/engine/memory/load.js';
import type { TableOptions } from '../../../src/engine/memory/load.js';
import { WEB_BYTES } from '../../../src/engine/memory/bytes.js';
import { declarationFromText } from '../../../src/engine/declared.js';
import { loadResources } from '../../../src/engine/node/load-resources.js';
import type { LoadOptions } from '../../../src/engine/node/load-resources.js';
import type { Table } from '../../../src/datastore/types.js';
import { ToolError } from '../../../src/errors.js';

const demo = resolve(import.meta.dirname, '../../../examples/data');
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ckql-load-table-'));
  // The demo data's files on their own (no datapackage.json), and NDJSON, JSON and semicolon variants of them.
  for (const name of ['courses.csv', 'enrolments.csv', 'schools.json']) await writeFile(join(dir, name), await readFile(join(demo, name)));
  const schools = JSON.parse(await readFile(join(demo, 'schools.json'), 'utf8')) as unknown[];
  await writeFile(join(dir, 'schools.ndjson'), schools.map((school) => JSON.stringify(school)).join('\r\n'));
  const courses = await loadResources(join(dir, 'courses.csv'));
  const records = (courses[0] as Table).rows.map(({ _id, ...rest }) => rest);
  await writeFile(join(dir, 'courses-records.json'), JSON.stringify(records, null, 1));
  await writeFile(join(dir, 'courses-records.jsonl'), `\uFEFF${records.map((record) => JSON.stringify(record)).join('\n')}\n`);
  await writeFile(join(dir, 'courses-semicolons.csv'), (await readFile(join(demo, 'courses.csv'), 'utf8')).replaceAll(',', ';'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/**
 * `bytes` in chunks: random sizes from 1 byte to 8 KiB, and every so often a
 * cut just after the first byte of a multi-byte character.
 */
async function* chunks(bytes: Uint8Array, seed: number): AsyncIterable<Uint8Array> {
  const random = createRandom(seed);
  let at = 0;
  while (at < bytes.length) {
    let end = Math.min(bytes.length, at + 1 + Math.floor(random() * (random() < 0.3 ? 16 : 8192)));
    if (random() < 0.5) {
      // on to the next lead byte of a multi-byte character, and cut after it
      let k = end;
      while (k < bytes.length && k < end + 4096 && (bytes[k] as number) < 0xc0) k++;
      if (k < bytes.length && (bytes[k] as number) >= 0xc0) end = k + 1;
    }
    yield bytes.subarray(at, end);
    at = end;
  }
}

const plain = (table: Table): unknown => JSON.parse(JSON.stringify({ fields: table.fields, rows: table.rows }));

async function nodeTable(file: string, options: LoadOptions = {}): Promise<Table> {
  const [table] = await loadResources(file, options);
  return table as Table;
}

async function refusal(load: () => Promise<unknown>): Promise<{ code: string; message: string; line: unknown }> {
  try {
    await load();
  } catch (error) {
    if (!(error instanceof ToolError)) throw error;
    return { code: error.code, message: error.message, line: (error as { line?: unknown }).line };
  }
  throw new Error('expected a refusal');
}

const files = ['courses.csv', 'enrolments.csv', 'schools.json', 'schools.ndjson', 'courses-records.json', 'courses-records.jsonl', 'courses-semicolons.csv'];

describe('loadTable over chunks equals the Node loader over the file', () => {
  test.each(files)('%s, in chunks of random sizes (three seeds), whole as bytes and as text', async (name) => {
    const file = join(dir, name);
    const expected = plain(await nodeTable(file));
    const bytes = new Uint8Array(await readFile(file));
    for (const seed of [1, 2, 3]) {
      expect(plain(await loadTable({ name: file, data: chunks(bytes, seed * 7919) }, { bytes: WEB_BYTES }))).toEqual(expected);
    }
    expect(plain(await loadTable({ name: file, data: bytes }))).toEqual(expected);
    expect(plain(await loadTable({ name: file, data: new TextDecoder().decode(bytes) }))).toEqual(expected);
  });

  test('ids, aliases and source are those of the file; a chunk of text is read as its UTF-8 bytes', async () => {
    const file = join(dir, 'schools.json');
    const node = await nodeTable(file);
    const text = await readFile(file, 'utf8');
    const core = await loadTable({ name: file, data: (async function* () { yield text.slice(0, 100); yield text.slice(100); })() });
    expect({ id: core.id, aliases: core.aliases, source: core.source }).toEqual({ id: node.id, aliases: node.aliases, source: node.source });
    expect(plain(core)).toEqual(plain(node));
  });

  test.each(['xloader', 'datapusher'] as const)('with declared fields (a fields file\'s text) and --infer %s', async (infer) => {
    const fields = JSON.stringify([
      { id: 'credits', type: 'numeric', info: { label: 'Credits' } },
      { id: 'start_date', type: 'timestamp' },
      { id: 'level', type: 'text' },
    ]);
    const fieldsFile = join(dir, `courses-${infer}.fields.json`);
    await writeFile(fieldsFile, fields);
    const file = join(dir, 'courses.csv');
    const expected = plain(await nodeTable(file, { fields: fieldsFile, infer }));
    const options: TableOptions = { declaration: declarationFromText(fields, fieldsFile), infer };
    expect(plain(await loadTable({ name: file, data: chunks(await readFile(file), 11) }, options))).toEqual(expected);
  });

  test.each(['courses.csv', 'schools.json', 'schools.ndjson'])('%s with a byte that is not UTF-8: the same refusal (line, byte), and the same table with replace', async (name) => {
    const random = createRandom(name.length * 104_729);
    const good = await readFile(join(dir, name));
    for (let round = 0; round < 4; round++) {
      const at = Math.floor(random() * good.length);
      const bad = Buffer.concat([good.subarray(0, at), Buffer.from([0xc3, 0x28].slice(0, 1 + (round % 2))), good.subarray(at)]);
      const file = join(dir, `bad-${round}-${name}`);
      await writeFile(file, bad);
      const expected = await refusal(() => nodeTable(file));
      expect(expected.message).toMatch(/not UTF-8/);
      expect(await refusal(() => loadTable({ name: file, data: chunks(bad, round + 1) }))).toEqual(expected);
      const replaced = await nodeTable(file, { invalidUtf8: 'replace' }).then(plain, (error: unknown) => error);
      const core = await loadTable({ name: file, data: chunks(bad, round + 5) }, { invalidUtf8: 'replace' }).then(plain, (error: unknown) => error);
      // (a U+FFFD inside a JSON token makes a refusal of its own: the same one)
      expect(core).toEqual(replaced);
    }
  });

  test.each([
    ['short.csv', 'a,b\n1,2\n3\n'],
    ['unclosed.csv', 'a,b\n1,"2\n'],
    ['empty.csv', ''],
    ['twice.csv', 'a,a\n1,2\n'],
    ['bad.ndjson', '{"a":1}\n{"a":\n'],
    ['list.ndjson', '{"a":1}\n[1]\n'],
    ['object.json', '{"a":1}'],
    ['open.json', '[{"a":1},'],
    ['hole.json', '[{"a":1},,{"a":2}]'],
    ['element.json', '[{"a":1},\n{"a":}]'],
    ['ids.csv', '_id,a\n1,x\n1,y\n'],
    ['huge.json', '[{"n": 1e131072}]'],
  ])('%s: the same refusal', async (name, text) => {
    const file = join(dir, name);
    await writeFile(file, text);
    const expected = await refusal(() => nodeTable(file));
    expect(await refusal(() => loadTable({ name: file, data: chunks(Buffer.from(text), 3) }))).toEqual(expected);
  });

  test('a name of another kind is DATA_UNSUPPORTED; an aborted signal ABORTED between chunks', async () => {
    expect((await refusal(() => loadTable({ name: 'notes.txt', data: 'a' }))).code).toBe('DATA_UNSUPPORTED');
    const controller = new AbortController();
    const bytes = await readFile(join(dir, 'enrolments.csv'));
    const stopping = (async function* () {
      let n = 0;
      for await (const chunk of chunks(bytes, 9)) {
        if (++n === 50) controller.abort();
        yield chunk;
      }
    })();
    await expect(loadTable({ name: 'enrolments.csv', data: stopping }, { signal: controller.signal })).rejects.toMatchObject({ code: 'ABORTED' });
  });

  test('progress is told per chunk and ends at the size', async () => {
    const bytes = await readFile(join(dir, 'courses-records.jsonl'));
    const told: number[] = [];
    await loadTable({ name: 'courses-records.jsonl', data: chunks(bytes, 4) }, { onProgress: (progress) => told.push(progress.bytes) });
    expect(told.length).toBeGreaterThan(2);
    expect(told.at(-1)).toBe(bytes.length);
    expect([...told].sort((a, b) => a - b)).toEqual(told);
  });
});

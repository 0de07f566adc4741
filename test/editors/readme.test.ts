/**
 * The README's "Editors and CI" section runs as written: its commands exit
 * as it says, its broken script prints exactly the output shown, and its
 * config snippets (with the comments that name the schema) load.
 */
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { readConfigFile } from '../../src/config/load.js';
import { ckql, repoRoot } from '../cli/run-ckql.js';

const readme = readFileSync(join(repoRoot, 'README.md'), 'utf8');
const section = readme.slice(readme.indexOf('## Editors and CI'), readme.indexOf('\n## ', readme.indexOf('## Editors and CI') + 3));
/** The fenced blocks of the section, with their info strings. */
const blocks = [...section.matchAll(/```(\w*)\n([\s\S]*?)```/g)].map((m) => ({ lang: m[1]!, body: m[2]! }));

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ckql-readme-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

it('runs the section\'s commands, each exiting 0 on the examples', async () => {
  const commands = blocks.find((b) => b.lang === 'sh')!.body.split('\n').map((line) => line.replace(/#.*$/, '').trim()).filter((line) => line !== '');
  expect(commands).toHaveLength(3);
  for (const command of commands) {
    const [name, ...args] = command.split(/\s+/);
    expect(name).toBe('ckql');
    const result = await ckql(args, { cwd: repoRoot });
    expect(result.code, `${command}\n${result.stdout}${result.stderr}`).toBe(0);
    if (args.includes('json')) expect(JSON.parse(result.stdout)).toMatchObject({ errors: 0 });
  }
});

it('prints exactly what the section shows for its broken script, and exits 3', async () => {
  const script = blocks.find((b) => b.lang === 'ckql')!.body;
  const shown = blocks.find((b) => b.lang === '' && b.body.startsWith('broken.ckql:'))!.body;
  await writeFile(join(dir, 'broken.ckql'), script);
  const result = await ckql(['check', 'broken.ckql'], { cwd: dir });
  expect(result.code).toBe(3);
  expect(result.stdout).toBe(shown);
  expect(section).toContain(`\`${result.stderr.trim()}\` on stderr`);
});

it('loads the config snippets that name the schema in a comment', async () => {
  for (const [lang, file] of [['yaml', 'ckql.config.yaml'], ['toml', 'ckql.config.toml']] as const) {
    const body = blocks.find((b) => b.lang === lang)!.body;
    expect(body).toContain('node_modules/ckql/schema/ckql-config.schema.json');
    await writeFile(join(dir, file), body);
    const config = await readConfigFile(join(dir, file));
    expect([...config.profiles.keys()]).toEqual(['demo']);
  }
});

/**
 * The config file's JSON Schema: what the build writes, and a judge that
 * agrees with the loader. Ajv (a validator ckql did not write) checks each
 * config against the published schema; the loader reads the same file.
 * Both accept or both refuse, except for what a schema cannot know (a URL's
 * scheme, names that must refer to a defined profile).
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Ajv2020 from 'ajv/dist/2020.js';
import { parse as parseToml } from 'smol-toml';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { schemaText } from '../../scripts/generate-schema.js';
import { readConfigFile } from '../../src/config/load.js';
import { configSchemaPath } from '../../src/config/json-schema.js';

const root = new URL('../../', import.meta.url);
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ckql-schema-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

it('the committed schema is what the build writes', async () => {
  expect(await readFile(new URL(configSchemaPath, root), 'utf8'), `${configSchemaPath} is stale: run npm run build`).toBe(schemaText());
});

const configs: { name: string; file: string; text: string }[] = [
  { name: 'the example config', file: 'a.yaml', text: '' },
  {
    name: 'every key of both profile kinds and of a named query',
    file: 'b.yaml',
    text: [
      'default: local',
      'profiles:',
      '  local: { data: [./a, ./b], engine: pglite, db: ./db, target: ckan-2.12, max_scan: 10 }',
      '  portal: { url: "https://x.org", language: en, method: get, timeout: 5, token_env: T, resources: [a], target: sql, max_scan: 5 }',
      'queries:',
      '  plain: from a limit 1',
      '  full: { query: "from a where x in $xs", params: { xs: [1, "b", null, true] }, description: d, profile: portal }',
    ].join('\n'),
  },
  { name: 'a bad enum value', file: 'c.yaml', text: 'profiles:\n  p: { url: "https://x.org", method: PUT }\n' },
  { name: 'an unknown key', file: 'd.yaml', text: 'profiles:\n  p: { url: "https://x.org", tokn_env: X }\n' },
  { name: 'a profile with neither url nor data', file: 'e.yaml', text: 'profiles:\n  p: { language: en }\n' },
  { name: 'a data profile with only an engine', file: 'f.yaml', text: 'profiles:\n  p: { engine: pglite }\n' },
  { name: 'two token sources', file: 'g.yaml', text: 'profiles:\n  p: { url: "https://x.org", token_env: A, token_cmd: b }\n' },
  { name: 'a param that is a mapping', file: 'h.yaml', text: 'queries:\n  q: { query: from x, params: { a: { b: 1 } } }\n' },
  { name: 'a query that is a number', file: 'i.json', text: '{ "queries": { "q": { "query": 5 } } }' },
  { name: 'an empty query text', file: 'j.json', text: '{ "queries": { "q": "" } }' },
  { name: 'a TOML config', file: 'k.toml', text: 'default = "a"\n[profiles.a]\ndata = "d"\n[queries.q]\nquery = "from x"\n' },
  { name: 'an unknown top-level key in TOML', file: 'l.toml', text: '[querys.q]\nquery = "from x"\n' },
  { name: 'a JSON config naming its schema', file: 'n.json', text: '{ "$schema": "./node_modules/ckql/schema/ckql-config.schema.json", "queries": { "q": "from x" } }' },
  { name: 'a max_scan that is not whole', file: 'm.yaml', text: 'profiles:\n  p: { data: d, max_scan: 2.5 }\n' },
];

it('accepts and refuses the same configs as the loader', async () => {
  const schema = JSON.parse(await readFile(new URL(configSchemaPath, root), 'utf8')) as object;
  const validate = new Ajv2020.default({ allErrors: true, strict: false }).compile(schema);
  let accepted = 0;
  let refused = 0;
  for (const each of configs) {
    const text = each.text === '' ? await readFile(new URL('examples/ckql.config.yaml', root), 'utf8') : each.text;
    const file = join(dir, each.file);
    await writeFile(file, text, { mode: 0o600 });
    const data: unknown = file.endsWith('.toml') ? parseToml(text) : parseYaml(text);
    const bySchema = validate(data);
    const byLoader = await readConfigFile(file).then(
      () => true,
      () => false,
    );
    expect(bySchema, `${each.name}: the schema says ${bySchema}, the loader ${byLoader}; ${JSON.stringify(validate.errors)}`).toBe(byLoader);
    if (byLoader) accepted++;
    else refused++;
  }
  expect([accepted, refused]).toEqual([4, 10]);
});

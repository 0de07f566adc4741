/**
 * Writes the config file's JSON Schema (src/config/json-schema.ts) to
 * schema/ckql-config.schema.json; run by `npm run build`, and
 * `test/editors/config-schema.test.ts` fails when the committed file is stale.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { configJsonSchema, configSchemaPath } from '../src/config/json-schema.js';

export function schemaText(): string {
  return `${JSON.stringify(configJsonSchema(), null, 2)}\n`;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const root = fileURLToPath(new URL('..', import.meta.url));
  mkdirSync(`${root}schema`, { recursive: true });
  writeFileSync(`${root}${configSchemaPath}`, schemaText());
}

/**
 * The config file's JSON Schema, generated from the zod schema the loader
 * uses (`configFileSchema`), for editors: the YAML language server, Taplo
 * for TOML and VS Code's JSON support validate and complete a config with
 * it. `npm run build` writes it to schema/ckql-config.schema.json.
 */
import { z } from 'zod';
import { configFileSchema } from './schema.js';

/** Where the schema is published inside the package. */
export const configSchemaPath = 'schema/ckql-config.schema.json';

type JsonObject = Record<string, unknown>;

/**
 * The JSON Schema (draft 2020-12) of a ckql config file.
 * @example configJsonSchema().properties.queries // { type: 'object', additionalProperties: { anyOf: [text, { query, params, … }] }, … }
 */
export function configJsonSchema(): JsonObject {
  const schema = z.toJSONSchema(configFileSchema, { io: 'input', unrepresentable: 'any' }) as JsonObject;
  const profiles = (schema.properties as JsonObject).profiles as JsonObject;
  const [url, data] = (profiles.additionalProperties as JsonObject).anyOf as JsonObject[];
  // What zod checks in code, said in JSON Schema's words: the loader reads `method` in any case,
  // a data profile needs data or db, and a portal profile gives at most one way to its token.
  const method = (url!.properties as JsonObject).method as JsonObject;
  method.enum = ['POST', 'GET', 'post', 'get'];
  data!.anyOf = [{ required: ['data'] }, { required: ['db'] }];
  const tokenKeys = ['token_env', 'token_file', 'token_cmd', 'token'];
  const pairs = tokenKeys.flatMap((a, i) => tokenKeys.slice(i + 1).map((b) => ({ required: [a, b] })));
  url!.not = { anyOf: pairs };
  url!.title = 'a portal';
  data!.title = 'local data';
  return {
    $schema: schema.$schema,
    title: 'ckql config file',
    description: 'Profiles (where queries go) and named queries for ckql: ckql.config.yaml, .ckqlrc, ~/.config/ckql/config.yaml',
    ...Object.fromEntries(Object.entries(schema).filter(([key]) => key !== '$schema')),
  };
}

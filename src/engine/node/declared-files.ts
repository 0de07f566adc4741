/**
 * The Node edge of declared types (src/engine/declared.ts reads their
 * texts): fields files and `datapackage.json` files read from disk.
 */
import { readFile } from 'node:fs/promises';
import { basename, dirname, resolve } from 'node:path';
import type { DatasetMeta, ResourceMeta } from '../../datastore/types.js';
import { toolError } from '../../errors.js';
import { declarationFromText, declarationOf, isObject, jsonOfText, packageName, textOr } from '../declared.js';
import type { Declaration } from '../declared.js';

/**
 * Reads a fields file (`declarationFromText`): a JSON list of CKAN fields, a
 * `datastore_create` or `datastore_info` object, or a Table Schema. A file
 * that cannot be read is `DATA_NOT_FOUND`; every mistake in it `DATA_INVALID`
 * naming the file and the field.
 * @example
 * await readDeclaration('measurements.fields.json')
 * // → { source: 'measurements.fields.json', fields: [{ id: 'year', type: 'int4', info: { label: 'Year' } }, …] }
 */
export async function readDeclaration(file: string): Promise<Declaration> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw toolError('DATA_NOT_FOUND', [file], { file, cause: error });
  }
  return declarationFromText(text, file);
}

/** One resource of a `datapackage.json`: its data file and what the package says of it. */
export interface PackagedResource {
  readonly file: string;
  readonly alias: string;
  readonly declaration?: Declaration;
  readonly meta: ResourceMeta;
}

/**
 * The resources of a Frictionless `datapackage.json`: each one's data file
 * (`path`, relative to the package), its Table Schema (inline, or a file
 * named by `schema`) as a declaration, and the package as its dataset.
 * @example
 * (await readDataPackage('air/datapackage.json')).map((r) => r.alias) // → ['measurements-2023', 'stations']
 */
export async function readDataPackage(file: string): Promise<PackagedResource[]> {
  const text = await readFile(file, 'utf8').catch((error: unknown) => {
    throw toolError('DATA_NOT_FOUND', [file], { file, cause: error });
  });
  const json = jsonOfText(text, file);
  if (!isObject(json) || !Array.isArray(json.resources)) {
    throw toolError('DATA_INVALID', [file, 'a datapackage.json holds {"name": …, "resources": [{"path": …, "schema": {…}}, …]}'], { file });
  }
  const folder = dirname(file);
  const dataset: DatasetMeta = {
    name: packageName(textOr(json.name) ?? basename(folder)),
    ...(textOr(json.title) === undefined ? {} : { title: textOr(json.title) as string }),
    ...(textOr(json.description) === undefined ? {} : { notes: textOr(json.description) as string }),
  };
  const resources: PackagedResource[] = [];
  for (const [i, resource] of (json.resources as unknown[]).entries()) {
    const path = isObject(resource) ? (Array.isArray(resource.path) ? resource.path[0] : resource.path) : undefined;
    if (!isObject(resource) || typeof path !== 'string' || path === '' || /^[a-z][a-z0-9+.-]*:\/\//i.test(path)) {
      throw toolError('DATA_INVALID', [file, `resource ${i + 1} has no local "path" (ckql reads the data files beside the package)`], { file });
    }
    const dataFile = resolve(folder, path);
    const name = textOr(resource.name) ?? basename(dataFile).replace(/\.[^.]+$/, '');
    const schema = typeof resource.schema === 'string' ? JSON.parse(await readFile(resolve(folder, resource.schema), 'utf8')) as unknown : resource.schema;
    const declaration = schema === undefined ? undefined : declarationOf(schema, `${file} (resource ${JSON.stringify(name)})`);
    resources.push({
      file: dataFile,
      alias: name,
      ...(declaration === undefined ? {} : { declaration }),
      meta: {
        name: textOr(resource.title) ?? name,
        ...(textOr(resource.description) === undefined ? {} : { description: textOr(resource.description) as string }),
        ...(textOr(resource.format) === undefined ? {} : { format: (textOr(resource.format) as string).toUpperCase() }),
        ...(declaration?.primaryKey === undefined ? {} : { primaryKey: declaration.primaryKey }),
        dataset,
      },
    });
  }
  return resources;
}

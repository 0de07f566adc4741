/**
 * The editor's language: what the page knows of the query from ckql's own
 * front end (no second grammar). The parameters a query names come from its
 * parse; highlighting, diagnostics and completion from the language service.
 */
import type { Extension } from '@codemirror/state';
import { parse } from '../../src/syntax/parse.js';
import { parametersOf } from '../../src/syntax/walk.js';

/** The `$names` of a query, in order of first use; undefined when it does not parse (keep what was shown). */
export function parameterNames(text: string): string[] | undefined {
  try {
    return [...new Set(parametersOf(parse(text)).map((parameter) => parameter.name))];
  } catch {
    return undefined;
  }
}

/** The editor's language extensions. */
export function languageExtensions(): Extension[] {
  return [];
}

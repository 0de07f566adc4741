/** Formatting the query with ckql's own formatter (the text a `format` round trip gives). */
import { format as formatQuery } from '../../src/format.js';
import { parse } from '../../src/syntax/parse.js';

export function format(text: string): { ok: true; text: string } | { ok: false; message: string } {
  try {
    return { ok: true, text: formatQuery(parse(text)) };
  } catch (error) {
    return { ok: false, message: error instanceof Error ? error.message : String(error) };
  }
}

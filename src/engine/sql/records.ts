/**
 * Records as PostgreSQL writes them, read without losing a number: CKAN
 * hands PostgreSQL's JSON text of the page to the client unchanged, so a
 * `numeric` keeps its written scale (`7.50`) and an `int8` beyond 2^53 every
 * digit (docs/ckan-2.11-reference.md §4, "Value formatting"). `JSON.parse`
 * would round both; here such a value stays its text, which the server
 * writes back as a JSON number unchanged (`src/datastore/response.ts`).
 */
import type { FieldInfo } from '../../datastore/types.js';

/**
 * Types whose values PostgreSQL may write other than JavaScript would: more
 * digits than a double holds, a scale, or a float's exponent form (`1e+20`,
 * `1.5e-07`).
 */
const EXACT_TYPES: ReadonlySet<string> = new Set(['int8', 'numeric', 'float8']);

/**
 * A number's text as the engines keep it: a JavaScript number when that
 * writes back as the same text, else the text itself (`"7.50"`,
 * `"9007199254740993"`).
 * @example
 * exactNumber('7.5')              // → 7.5
 * exactNumber('7.50')             // → "7.50"
 * exactNumber('9007199254740993') // → "9007199254740993"
 */
export function exactNumber(text: string): number | string {
  const n = Number(text);
  return String(n) === text ? n : text;
}

/**
 * The records of PostgreSQL's JSON text (`array_to_json(array_agg(…))`):
 * objects keyed by field id, or lists in `fields` order. Values of `int8`,
 * `numeric` and `float8` fields keep their text where a double would write
 * them otherwise (`7.50`, 2^53 + 1, `1e+20`); every other number (inside
 * `json` values too) is a plain number, as `JSON.parse` gives it.
 * @example
 * parseRecords('[{"_id":1,"price":7.50}]', [{ id: '_id', type: 'int' }, { id: 'price', type: 'numeric' }], 'objects')
 * // → [{ _id: 1, price: "7.50" }]
 */
export function parseRecords(text: string, fields: readonly FieldInfo[], format: 'objects' | 'lists'): unknown[] {
  if (!fields.some((f) => EXACT_TYPES.has(f.type))) return JSON.parse(text) as unknown[];
  // Such values are quoted before the native parser reads the text: an exact field never holds a
  // string otherwise, so a string there is the number's text.
  const exact =
    format === 'lists'
      ? (_key: string, index: number): boolean => EXACT_TYPES.has(fields[index]?.type ?? '')
      : ((keys: ReadonlySet<string>) => (key: string): boolean => keys.has(key))(new Set(fields.filter((f) => EXACT_TYPES.has(f.type)).map((f) => JSON.stringify(f.id))));
  return JSON.parse(quoteInexactNumbers(text, exact)) as unknown[];
}

const QUOTE = 34;
const BACKSLASH = 92;

/**
 * `text` (a JSON array of records) with each number that is a record's own
 * value (at depth 2) in a field `exact` picks, and that a double would not
 * write back the same, turned into a JSON string of its text. `exact` gets
 * an object's key as its JSON token (`"price"`), or a list's index.
 */
function quoteInexactNumbers(text: string, exact: (key: string, index: number) => boolean): string {
  let out = '';
  let copied = 0;
  let depth = 0;
  let key = '';
  let index = 0;
  let afterColon = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      const start = i;
      for (i++; i < text.length && text.charCodeAt(i) !== QUOTE; i++) if (text.charCodeAt(i) === BACKSLASH) i++;
      // An object's key at the record's level: the token before its colon.
      if (depth === 2 && !afterColon) key = text.slice(start, i + 1);
      continue;
    }
    if (c === 123 /* { */ || c === 91 /* [ */) {
      depth++;
      if (depth === 2) [index, afterColon] = [0, false];
    } else if (c === 125 /* } */ || c === 93 /* ] */) depth--;
    else if (depth === 2 && c === 58 /* : */) afterColon = true;
    else if (depth === 2 && c === 44 /* , */) [index, afterColon] = [index + 1, false];
    else if (depth === 2 && (c === 45 /* - */ || (c >= 48 && c <= 57))) {
      let end = i + 1;
      for (; end < text.length; end++) {
        const d = text.charCodeAt(end);
        if (!((d >= 48 && d <= 57) || d === 46 || d === 101 || d === 69 || d === 43 || d === 45)) break;
      }
      const number = text.slice(i, end);
      if (exact(key, index) && String(Number(number)) !== number) {
        out += `${text.slice(copied, i)}"${number}"`;
        copied = end;
      }
      i = end - 1;
    }
  }
  return copied === 0 ? text : out + text.slice(copied);
}

/**
 * Text from a data source is untrusted when it reaches a terminal or a
 * document: control characters could move the cursor, and bidirectional
 * overrides or zero-width characters could make a cell read as something it
 * is not (U+202E turns `exe.txt` around; U+200B hides inside a name). Both
 * are shown as visible escapes, and the record's own properties only are
 * read, so a field named `constructor` is a field, never `Object`'s.
 */

/**
 * Bidi controls (U+061C, U+200E–U+200F, U+202A–U+202E, U+2066–U+2069) and
 * invisible characters (U+200B–U+200D, U+2060, U+FEFF, U+2028–U+2029).
 */
const invisible = /[\u061c\u200b-\u200f\u2028\u2029\u202a-\u202e\u2060\u2066-\u2069\ufeff]/g;

/**
 * `U+202E` as `\u202E`, so it shows instead of acting.
 * @example escapeInvisible('abc\u202Etxt.exe') // 'abc\\u202Etxt.exe'
 */
export function escapeInvisible(text: string): string {
  return text.replace(invisible, (char) => `\\u${char.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}`);
}

/**
 * The record's own value of `field` (undefined when it has none); inherited
 * names (`constructor`, `toString`, `__proto__`) are never looked up.
 * @example ownValue({ a: 1 }, 'constructor') // undefined
 */
export function ownValue<T>(record: Readonly<Record<string, T>>, field: string): T | undefined {
  return Object.hasOwn(record, field) ? record[field] : undefined;
}

/**
 * `JSON.stringify`, also for values nested deeper than the call stack allows
 * (a hostile server can send a record 5,000 arrays deep): those are written
 * by a loop with its own stack instead of failing with a RangeError.
 * @example stringifyJson({ a: [1, { b: null }] }) // '{"a":[1,{"b":null}]}'
 */
export function stringifyJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? 'null';
  } catch (error) {
    if (!(error instanceof RangeError)) throw error;
    return stringifyIteratively(value);
  }
}

type Frame =
  | { readonly kind: 'text'; readonly text: string }
  | { readonly kind: 'value'; readonly value: unknown; readonly inArray: boolean };

function stringifyIteratively(root: unknown): string {
  const out: string[] = [];
  const stack: Frame[] = [{ kind: 'value', value: root, inArray: true }];
  while (stack.length > 0) {
    const frame = stack.pop() as Frame;
    if (frame.kind === 'text') {
      out.push(frame.text);
      continue;
    }
    const { value } = frame;
    if (value === null || typeof value !== 'object') {
      const text = JSON.stringify(value);
      // As JSON.stringify does: undefined and functions become null in arrays (object keys with them are skipped below).
      out.push(text ?? 'null');
      continue;
    }
    const parts: Frame[] = [];
    if (Array.isArray(value)) {
      parts.push({ kind: 'text', text: '[' });
      value.forEach((item: unknown, index) => {
        if (index > 0) parts.push({ kind: 'text', text: ',' });
        parts.push({ kind: 'value', value: item, inArray: true });
      });
      parts.push({ kind: 'text', text: ']' });
    } else {
      parts.push({ kind: 'text', text: '{' });
      let first = true;
      for (const [key, item] of Object.entries(value)) {
        if (item === undefined || typeof item === 'function' || typeof item === 'symbol') continue;
        parts.push({ kind: 'text', text: `${first ? '' : ','}${JSON.stringify(key)}:` });
        parts.push({ kind: 'value', value: item, inArray: false });
        first = false;
      }
      parts.push({ kind: 'text', text: '}' });
    }
    for (let i = parts.length - 1; i >= 0; i -= 1) stack.push(parts[i] as Frame);
  }
  return out.join('');
}

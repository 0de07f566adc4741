/**
 * Object factories for rows and records with a fixed list of keys.
 *
 * Why generated code: an object literal with all its keys gets one hidden
 * class with in-object slots, so a table's rows share a shape, stay compact
 * and are read through monomorphic property
 * loads. Adding keys one by one with `row[key] = v` instead turns objects of
 * more than ~16 keys into slow dictionaries. Keys are embedded as JSON string
 * literals, which are valid JS string literals for every string, so no field
 * name can inject code; `__proto__` is written as a computed key, which
 * defines an own property instead of setting the prototype.
 */

import type { JsonValue } from '../../datastore/types.js';
import { generate } from '../../datastore/generate.js';
import type { ScaledColumn } from './expression.js';

/** Builds `{ [keys[0]]: values[0], … }` from an array of values. */
export type RowFactory = (values: readonly unknown[]) => Record<string, unknown>;

/**
 * Reads `keys` from a row into a new record, in that order, a missing key as
 * `null`; `_id` (when listed) is the row's own `_id`, else `position + 1`.
 */
export type RecordFactory = (row: Readonly<Record<string, unknown>>, position: number) => Record<string, unknown>;

function keyLiteral(key: string): string {
  const literal = JSON.stringify(key);
  return key === '__proto__' ? `[${literal}]` : literal;
}

/**
 * Writes rows `from` to `to` of `out` from a block of column values:
 * `{ [keys[0]]: ids?.[r] ?? r + 1, [keys[k]]: columns[k - 1][r - from], … }`,
 * one generated loop with one object literal (every row one hidden class),
 * reading the columns without a scratch array in between.
 * @example
 * const out = new Array(2);
 * rowsFromColumns(['_id', 'a'])(out, 0, 2, undefined, [['x', 'y']]); // out → [{ _id: 1, a: 'x' }, { _id: 2, a: 'y' }]
 */
export type RowsFromColumns = (out: unknown[], from: number, to: number, ids: ArrayLike<number> | undefined, columns: readonly (readonly unknown[])[]) => void;

export function rowsFromColumns(keys: readonly string[]): RowsFromColumns {
  const columns = keys.slice(1).map((_, k) => `const c${k} = c[${k}];`).join(' ');
  const literal = `{${keys.map((key, k) => `${keyLiteral(key)}: ${k === 0 ? '(ids === undefined ? r + 1 : ids[r])' : `c${k - 1}[r - from]`}`).join(', ')}}`;
  const body = `${columns} for (let r = from; r < to; r++) out[r] = ${literal};`;
  return (
    generate<RowsFromColumns>(['out', 'from', 'to', 'ids', 'c'], body) ??
    ((out, from, to, ids, c) => {
      for (let r = from; r < to; r++) {
        out[r] = Object.fromEntries(keys.map((key, k) => [key, k === 0 ? (ids === undefined ? r + 1 : ids[r]) : (c[k - 1] as readonly unknown[])[r - from]]));
      }
    })
  );
}

/**
 * A factory that turns an array of values into an object with `keys`.
 * @example
 * const make = rowFactory(['_id', 'title']);
 * make([1, 'Algebra']) // → { _id: 1, title: "Algebra" }
 */
export function rowFactory(keys: readonly string[]): RowFactory {
  const body = `return {${keys.map((key, i) => `${keyLiteral(key)}: v[${i}]`).join(', ')}};`;
  return (
    generate<RowFactory>(['v'], body) ??
    ((values) => Object.fromEntries(keys.map((key, i) => [key, values[i]])) as Record<string, unknown>)
  );
}

/**
 * A factory that projects a row onto `keys` (see `RecordFactory`).
 * @example
 * const project = recordFactory(['_id', 'title']);
 * project({ title: 'Algebra', year: 2020 }, 0) // → { _id: 1, title: "Algebra" }
 */
export function recordFactory(keys: readonly string[]): RecordFactory {
  const read = (key: string): string =>
    key === '_id'
      ? `(r["_id"] ?? (i + 1))`
      : // own properties only: a key like "constructor" must not read Object.prototype
        `(Object.hasOwn(r, ${JSON.stringify(key)}) ? (r[${JSON.stringify(key)}] ?? null) : null)`;
  const fast = (key: string): string => (key === '_id' ? `(r["_id"] ?? (i + 1))` : `(r[${JSON.stringify(key)}] ?? null)`);
  // Plain names cannot be found on Object.prototype, so they skip the own-property check.
  const risky = (key: string): boolean => key in Object.prototype;
  const body = `return {${keys.map((key) => `${keyLiteral(key)}: ${risky(key) ? read(key) : fast(key)}`).join(', ')}};`;
  return (
    generate<RecordFactory>(['r', 'i'], body) ??
    ((row, position) =>
      Object.fromEntries(
        keys.map((key) => [
          key,
          key === '_id' ? (row._id ?? position + 1) : Object.hasOwn(row, key) ? (row[key] ?? null) : null,
        ]),
      ) as Record<string, unknown>)
  );
}

/**
 * The read of `field` of the row named `row` in generated code: own keys
 * only for names `Object.prototype` has (undefined when the row has none);
 * `_id` falls back to the row's position + 1 where `position` names it.
 * @example readExpression('r', 'title') // → 'r["title"]'
 * @example readExpression('r', '_id', 'i') // → '(r["_id"] ?? i + 1)'
 */
export function readExpression(row: string, field: string, position?: string): string {
  const name = JSON.stringify(field);
  if (field === '_id' && position !== undefined) return `(${row}[${name}] ?? ${position} + 1)`;
  return field in Object.prototype ? `(Object.hasOwn(${row}, ${name}) ? ${row}[${name}] : undefined)` : `${row}[${name}]`;
}

/**
 * A column of joined records: a field of a side's row, or any value of
 * joined row `j`, which an expression's scaled path may also give as code
 * written into the loop (`scaled`, given the prefix of its names and the
 * statement that leaves it; `value` stays the answer without code generation).
 */
export type JoinedColumn =
  | { readonly key: string; readonly side: number; readonly field: string }
  | { readonly key: string; readonly value: (j: number) => unknown; readonly scaled?: (prefix: string, exit: string) => ScaledColumn<number> | undefined };

/**
 * Builds the records of joined rows `from ≤ j < to` into `into[j]`: side
 * `s`'s row of joined row `j` is `rows[s][positions[s][j]]` (`rows[s][j]`
 * without positions; none at -1, whose fields are null); a field reads as
 * `readField` does (`_id`: the row's own, else its position + 1). Written
 * into one array the caller sized, not an array per call copied after.
 */
export type JoinedRecords = (
  rows: readonly (readonly Readonly<Record<string, unknown>>[])[],
  positions: readonly (Int32Array | undefined)[],
  from: number,
  to: number,
  into: Record<string, unknown>[],
) => void;

/**
 * The records of joined rows with `columns` (see `JoinedRecords`): one
 * generated loop and object literal, with each field a property load by
 * its literal name, shared by every query with the same columns (so V8
 * optimizes it once; a loop over closures made per query started each
 * query in the interpreter).
 * @example
 * const build = joinedRecords([{ key: 'title', side: 1, field: 'title' }, { key: 'grade', side: 0, field: 'grade' }]);
 * const into = new Array(1);
 * build([[{ grade: 7 }], [{ title: 'Algebra' }]], [undefined, Int32Array.of(0)], 0, 1, into) // into: [{ title: "Algebra", grade: 7 }]
 */
export function joinedRecords(columns: readonly JoinedColumn[]): JoinedRecords {
  const values = columns.flatMap((c) => ('value' in c ? [c.value] : []));
  const sides = [...new Set(columns.flatMap((c) => ('side' in c ? [c.side] : [])))];
  let call = 0;
  // An expression's scaled path as statements before the record (`v${k}`), else a call of its value.
  const scaled = columns.map((c, k) => ('scaled' in c && c.scaled !== undefined ? c.scaled(`e${k}_`, `{ v${k} = h${k}.exact(j); break c${k}; }`) : undefined));
  const computed = columns.flatMap((c, k) => {
    const code = scaled[k];
    return code === undefined ? [] : [`let v${k};`, `c${k}: {`, 'const item = j;', ...code.lines, `v${k} = ${code.value};`, '}'];
  });
  const expressions = columns.map((c, k) => {
    if ('value' in c) {
      const i = call++;
      return scaled[k] === undefined ? `(values[${i}](j) ?? null)` : `v${k}`;
    }
    const r = `r${c.side}`;
    return `(${r} === undefined ? null : (${readExpression(r, c.field, `i${c.side}`)} ?? null))`;
  });
  const first = scaled.findIndex((code) => code !== undefined);
  const body = [
    ...scaled.flatMap((code, k) => (code === undefined ? [] : [`const h${k} = scaled[${k}];`, ...(k === first ? [code.prelude(`h${k}`)] : []), ...code.setup(`h${k}`)])),
    'return function (rows, positions, from, to, into) {',
    ...sides.map((side) => `const rows${side} = rows[${side}]; const p${side} = positions[${side}];`),
    'for (let j = from; j < to; j++) {',
    ...sides.map((side) => `const i${side} = p${side} === undefined ? j : p${side}[j]; const r${side} = i${side} < 0 ? undefined : rows${side}[i${side}];`),
    ...computed,
    `into[j] = {${columns.map((c, k) => `${keyLiteral(c.key)}: ${expressions[k]}`).join(', ')}};`,
    '}',
    '};',
  ].join('\n');
  const made = generate<(values: readonly ((j: number) => unknown)[], scaled: readonly (ScaledColumn<number> | undefined)[]) => JoinedRecords>(['values', 'scaled'], body);
  if (made !== undefined) return made(values, scaled);
  return (rows, positions, from, to, into) => {
    for (let j = from; j < to; j++) {
      const record: Record<string, unknown> = {};
      for (const c of columns) {
        let value: unknown;
        if ('value' in c) value = c.value(j);
        else {
          const p = positions[c.side];
          const i = p === undefined ? j : p[j]!;
          const row = i < 0 ? undefined : rows[c.side]![i]!;
          value = row === undefined ? null : c.field === '_id' ? (row['_id'] ?? i + 1) : Object.hasOwn(row, c.field) ? row[c.field] : null;
        }
        Object.defineProperty(record, c.key, { value: value ?? null, enumerable: true, writable: true, configurable: true });
      }
      into[j] = record;
    }
  };
}

/**
 * The text of a row for search: for each of `keys` whose value is not null,
 * the value's text (`text(v)` for non-strings) followed by `separator`.
 * Generated so each key is a fixed property load, not a lookup by a
 * changing name.
 */
export type RowText = (row: Readonly<Record<string, unknown>>) => string;

/**
 * A function giving a row's field texts joined (see `RowText`).
 * @example
 * const text = rowText(['a', 'b', 'c'], String, '\n');
 * text({ a: 'x', b: 2, c: null }) // → "x\n2\n"
 */
export function rowText(keys: readonly string[], text: (value: unknown) => string | null, separator: string): RowText {
  const sep = JSON.stringify(separator);
  const body = keys
    .map((key) => {
      const name = JSON.stringify(key);
      const read = key in Object.prototype ? `(Object.hasOwn(r, ${name}) ? r[${name}] : undefined)` : `r[${name}]`;
      return `v = ${read}; if (v !== null && v !== undefined) s += (typeof v === 'string' ? v : text(v)) + ${sep};`;
    })
    .join('\n');
  const made = generate<(text: (value: unknown) => string | null) => RowText>(['text'], `return function (r) { let v; let s = '';\n${body}\nreturn s; };`);
  if (made !== undefined) return made(text);
  return (row) => {
    let s = '';
    for (const key of keys) {
      const v = Object.hasOwn(row, key) ? row[key] : undefined;
      if (v !== null && v !== undefined) s += (typeof v === 'string' ? v : (text(v) ?? '')) + separator;
    }
    return s;
  };
}

/**
 * Whether some of `keys` holds a value that passes `test` (null and missing
 * values are skipped), reading the keys in order and stopping at the first
 * that passes. Generated for the same reason as `rowText`.
 */
export type RowSome = (row: Readonly<Record<string, unknown>>) => boolean;

/**
 * A function telling whether some field of a row passes a test (see `RowSome`).
 * @example
 * const some = rowSome(['a', 'b'], (v) => v === 2);
 * some({ a: 1, b: 2 }) // → true
 */
export function rowSome(keys: readonly string[], test: (value: unknown) => boolean): RowSome {
  const body = keys
    .map((key) => {
      const name = JSON.stringify(key);
      const read = key in Object.prototype ? `(Object.hasOwn(r, ${name}) ? r[${name}] : undefined)` : `r[${name}]`;
      return `v = ${read}; if (v !== null && v !== undefined && test(v)) return true;`;
    })
    .join('\n');
  const made = generate<(test: (value: unknown) => boolean) => RowSome>(['test'], `return function (r) { let v;\n${body}\nreturn false; };`);
  if (made !== undefined) return made(test);
  return (row) => {
    for (const key of keys) {
      const v = Object.hasOwn(row, key) ? row[key] : undefined;
      if (v !== null && v !== undefined && test(v)) return true;
    }
    return false;
  };
}

/** A row's own field, null when it has none (see `fieldRead`). */
export type FieldRead = (row: Readonly<Record<string, unknown>>) => JsonValue | null;

/** The field name of each function `fieldRead` made: code generated over rows inlines it as `r["name"]`. */
const fieldReads = new WeakMap<object, string>();

/**
 * A read of a row object's own field, null when the row has none (a field
 * named `constructor` is not Object.prototype's). Generated per name for the
 * reason `rowText` is; code that generates a loop over rows (the hash
 * aggregate's fold) writes it inline instead of calling it (`fieldReadName`).
 * @example
 * fieldRead('subject')({ subject: 'math' }) // → "math"
 */
export function fieldRead(name: string): FieldRead {
  const read =
    generate<FieldRead>(['r'], `return ${readExpression('r', name)} ?? null;`) ??
    ((row) => (Object.hasOwn(row, name) ? ((row[name] ?? null) as JsonValue | null) : null));
  fieldReads.set(read, name);
  return read;
}

/** The field a function made by `fieldRead` reads; undefined for any other function. */
export function fieldReadName(read: object): string | undefined {
  return fieldReads.get(read);
}

/**
 * The one equality and order rule of ckql (docs/semantics.md, "Equality", "Text
 * search", "Order"). The evaluator, the reference walker, the server and the
 * compiler all decide "same value" and "comes first" here, so they cannot
 * drift apart.
 */

/**
 * The canonical text of a value: what equality compares.
 *
 * - a string is itself;
 * - a number is its shortest round-trip decimal form (`String(n)`), with `-0`
 *   written `"0"`;
 * - a boolean is `"true"` or `"false"`;
 * - any other JSON value (array, object) is its JSON text, keys in insertion order;
 * - `null` and `undefined` (a missing key) have no text: `null`.
 *
 * @example
 * canonicalText(2020)      // "2020"
 * canonicalText('2020')    // "2020"   — so `year = 2020` matches both
 * canonicalText(-0)        // "0"
 * canonicalText([1, 'a'])  // '[1,"a"]'
 * canonicalText(null)      // null     — never equal to the text "null"
 */
export function canonicalText(value: unknown): string | null {
  switch (typeof value) {
    case 'string':
      return value;
    case 'number':
      // String(-0) is already "0"; the rule is stated anyway because it is part of the contract.
      return value === 0 ? '0' : String(value);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'undefined':
      return null;
    case 'bigint':
      return String(value);
    case 'object':
      return value === null ? null : (JSON.stringify(value) ?? null);
    default:
      // functions and symbols are not data; they have no text and equal nothing but null
      return null;
  }
}

/**
 * Equality of two values: their canonical texts are the same string (null
 * equals only null or missing). Case-sensitive.
 *
 * @example
 * valuesEqual(2020, '2020')      // true
 * valuesEqual('Active', 'active') // false
 * valuesEqual(null, 'null')      // false
 * valuesEqual(undefined, null)   // true
 */
export function valuesEqual(a: unknown, b: unknown): boolean {
  // Fast path: two values of one primitive type compare without building text.
  if (typeof a === typeof b && typeof a !== 'object') {
    // NaN's text is "NaN" on both sides, so NaN equals NaN here.
    return a === b || (a !== a && b !== b);
  }
  return canonicalText(a) === canonicalText(b);
}

/**
 * Compares two strings by Unicode code point (not UTF-16 code unit, not
 * locale): the order a C-collated PostgreSQL uses for UTF-8 text. Returns a
 * negative number, zero or a positive number.
 *
 * @example
 * compareText('B', 'a')             // < 0  (upper case before lower case)
 * compareText('\uFF5E', '\u{1F600}') // < 0  (U+FF5E before U+1F600, unlike `<`)
 */
export function compareText(a: string, b: string): number {
  if (a === b) return 0;
  const n = a.length < b.length ? a.length : b.length;
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) {
      // Code units order like code points except that surrogates (U+D800–DFFF,
      // which encode U+10000 and above) must come after U+E000–FFFF: shift them.
      if (x >= 0xd800 && y >= 0xd800) return fixupSurrogate(x) - fixupSurrogate(y);
      return x - y;
    }
  }
  return a.length - b.length;
}

function fixupSurrogate(unit: number): number {
  return unit >= 0xe000 ? unit - 0x800 : unit <= 0xdfff ? unit + 0x2000 : unit;
}

/** Where a type sorts among the others when one field holds several types. */
function typeRank(value: unknown): number {
  switch (typeof value) {
    case 'boolean':
      return 0;
    case 'number':
    case 'bigint':
      return 1;
    case 'string':
      return 2;
    case 'undefined':
      return 4;
    case 'object':
      return value === null ? 4 : 3;
    default:
      return 3;
  }
}

/**
 * The ascending sort order of values, total over every value:
 *
 * - numbers numerically (NaN after every other number);
 * - text by code point ({@link compareText});
 * - booleans `false < true`;
 * - arrays element by element, a shorter one first when it is the start of
 *   the other (PostgreSQL's array order); other JSON values (objects) by the
 *   code points of their JSON text;
 * - values of different types by type: boolean < number < text < JSON;
 * - `null` and missing after everything.
 *
 * Because null is the largest value, a descending sort is this order
 * reversed and puts nulls first — exactly docs/semantics.md's "nulls last in asc,
 * first in desc". Sorts must be stable: ties keep the records' `_id` order.
 *
 * @example
 * [3, null, 'b', 10, false].sort(compareValues) // [false, 3, 10, 'b', null]
 * compareValues(2, 10)      // < 0  (numerically, not as text)
 * compareValues(null, 'z')  // > 0  (nulls last ascending)
 */
export function compareValues(a: unknown, b: unknown): number {
  const ta = typeof a;
  if (ta === typeof b) {
    if (ta === 'number') return compareNumbers(a as number, b as number);
    if (ta === 'string') return compareText(a as string, b as string);
    if (ta === 'boolean') return a === b ? 0 : a ? 1 : -1;
  }
  const ra = typeRank(a);
  const rb = typeRank(b);
  if (ra !== rb) return ra - rb;
  if (ra === 4) return 0;
  if (ra === 1) return compareNumbers(Number(a), Number(b));
  if (Array.isArray(a) && Array.isArray(b)) return compareArrays(a, b);
  return compareText(canonicalText(a) ?? '', canonicalText(b) ?? '');
}

/** Arrays as PostgreSQL orders them: element by element, then the shorter first (`["one"]` before `["one", "two"]`). */
function compareArrays(a: readonly unknown[], b: readonly unknown[]): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const c = compareValues(a[i], b[i]);
    if (c !== 0) return c;
  }
  return a.length - b.length;
}

/**
 * Numbers ascending; NaN after every other number and equal to itself, so
 * the order stays total.
 *
 * @example
 * [3, NaN, -1].sort(compareNumbers) // [-1, 3, NaN]
 */
export function compareNumbers(a: number, b: number): number {
  if (a < b) return -1;
  if (a > b) return 1;
  if (a === b) return 0;
  // at least one NaN
  return a !== a ? (b !== b ? 0 : 1) : -1;
}

/**
 * Normalizes a field's text for text search: Unicode NFKC, then lower case
 * (`toLowerCase`, no locale).
 *
 * @example
 * normalizeText('Ｍａｔｈ')   // "math"  (full-width letters fold under NFKC)
 * normalizeText('ﬁle')     // "file"  (the ligature unfolds)
 */
export function normalizeText(text: string): string {
  return text.normalize('NFKC').toLowerCase();
}

const WHITE_SPACE_RUN = /\s+/g;

/**
 * Normalizes the text of `q`: NFKC, lower case, every run of white space
 * folded to one space, trimmed. An empty result means "no text search".
 *
 * The result never contains a newline or a tab, so the evaluator may join a
 * record's field texts with `\n` and still find `q` only inside one field.
 *
 * @example
 * normalizeQueryText('  Linear\n\tALGEBRA ') // "linear algebra"
 * normalizeQueryText(' \u00a0 ')             // ""  (treated as absent)
 */
export function normalizeQueryText(text: string): string {
  return normalizeText(text).replace(WHITE_SPACE_RUN, ' ').trim();
}

/**
 * The text of a value as text search sees it: its canonical text, normalized;
 * `null` for null or missing (a null field contains nothing).
 *
 * @example
 * searchableText('Linear Algebra') // "linear algebra"
 * searchableText(2.50)             // "2.5"
 * searchableText(null)             // null
 */
export function searchableText(value: unknown): string | null {
  const text = canonicalText(value);
  return text === null ? null : normalizeText(text);
}

/** The canonical texts a filter value wants, and whether it wants null. */
export interface WantedValues {
  readonly texts: ReadonlySet<string>;
  readonly matchesNull: boolean;
}

/**
 * What a filter value (a scalar or a list) matches, by canonical text; shared by
 * the column plans and the first-use row scan so both read a filter alike.
 * `undefined` when it matches nothing (`[]`).
 * @example wantedValues([2020, '2020', null]) // → { texts: Set { '2020' }, matchesNull: true }
 */
export function wantedValues(value: unknown): WantedValues | undefined {
  const list: readonly unknown[] = Array.isArray(value) ? value : [value];
  let matchesNull = false;
  const texts = new Set<string>();
  for (const v of list) {
    const text = canonicalText(v as Parameters<typeof canonicalText>[0]);
    if (text === null) matchesNull = true;
    else texts.add(text);
  }
  return texts.size === 0 && !matchesNull ? undefined : { texts, matchesNull };
}

/**
 * Whether a JSON value nests deeper than `max` levels (the value itself is
 * level 1). Iterative, so that a value of a million `[` cannot overflow the
 * stack; the server, the request checks and the loader use it to refuse
 * what recursive code (`JSON.stringify`) could not write back.
 * @example exceedsDepth({ a: [[1]] }, 2) // → true
 */
export function exceedsDepth(root: object, max: number): boolean {
  const stack: [unknown, number][] = [[root, 1]];
  while (stack.length > 0) {
    const [value, depth] = stack.pop() as [unknown, number];
    if (typeof value !== 'object' || value === null) continue;
    if (depth > max) return true;
    for (const child of Array.isArray(value) ? value : Object.values(value)) {
      if (typeof child === 'object' && child !== null) stack.push([child, depth + 1]);
    }
  }
  return false;
}

/**
 * Whether values of a field type are numbers (written right-aligned, as JSON numbers): CKAN's
 * integer, numeric and float types.
 * @example isNumberType('int4') // → true
 */
export function isNumberType(type: string): boolean {
  return type === 'int' || type === 'int4' || type === 'int8' || type === 'numeric' || type === 'float8' || type === 'float';
}

const DECIMAL_TEXT = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;

/**
 * The sort order of a number column of a typed table, exactly, as PostgreSQL
 * sorts `numeric`: its numbers and its number text (the loader keeps every
 * integer beyond 2^53 and every decimal a double cannot hold as its text; a
 * declared field may hold text such as `"7"`) by value, NaN above them all;
 * anything else (other text, booleans, null) as `compareValues` places it
 * beside a number, so the order stays total.
 * @example
 * ['18446744073709551616', 42, '9007199254740993'].sort(compareNumberColumn) // [42, '9007199254740993', '18446744073709551616']
 */
export function compareNumberColumn(a: unknown, b: unknown): number {
  // the common case first: two doubles, no text read
  if (typeof a === 'number' && typeof b === 'number') return compareNumbers(a, b);
  const x = isNumberOperand(a);
  const y = isNumberOperand(b);
  if (x && y) return compareDecimal(a, b);
  // one side is no number: it sorts where compareValues puts it beside any number
  return compareValues(x ? 0 : a, y ? 0 : b);
}

function isNumberOperand(value: unknown): value is number | string {
  return typeof value === 'number' || (typeof value === 'string' && DECIMAL_TEXT.test(value));
}

/**
 * Two numbers in the order PostgreSQL's `numeric` gives them, exactly: each
 * a JavaScript number (read as its shortest decimal text, as it is sent) or
 * decimal text such as the loader keeps for an integer beyond 2^53
 * (`"9007199254740993"`) or a decimal with more digits than a double holds.
 * Two JavaScript numbers compare as numbers; ±Infinity is beyond every text; NaN is above
 * everything and equal to itself (PostgreSQL's order).
 * @example
 * compareDecimal('9007199254740993', 9007199254740992) // > 0 (as doubles they are equal)
 * compareDecimal(0.1, '0.10000000000000000001')        // < 0
 */
export function compareDecimal(a: number | string, b: number | string): number {
  if (typeof a === 'number' && typeof b === 'number') return compareNumbers(a, b);
  // NaN is above every number and equal to itself, as in PostgreSQL
  if (a !== a || b !== b) return a !== a ? 1 : -1;
  if (typeof a === 'number' && !Number.isFinite(a)) return a > 0 ? 1 : -1;
  if (typeof b === 'number' && !Number.isFinite(b)) return b > 0 ? -1 : 1;
  const x = decimalOf(a);
  const y = decimalOf(b);
  if (x.sign !== y.sign) return x.sign < y.sign ? -1 : 1;
  if (x.sign === 0) return 0;
  // Same sign: the one with more integer digits is further from zero, else the digits decide.
  const magnitude = x.point !== y.point ? (x.point < y.point ? -1 : 1) : x.digits < y.digits ? -1 : x.digits > y.digits ? 1 : 0;
  return x.sign * magnitude;
}

/** A decimal as sign, significant digits (no leading or trailing zeros) and where the point goes among them. */
function decimalOf(value: number | string): { sign: -1 | 0 | 1; digits: string; point: number } {
  const text = (typeof value === 'number' ? String(value) : value).trim().toLowerCase();
  const m = /^([+-]?)(\d*)(?:\.(\d*))?(?:e([+-]?\d+))?$/.exec(text);
  if (m === null) return { sign: 0, digits: '', point: 0 };
  const whole = m[2] ?? '';
  const fraction = m[3] ?? '';
  let digits = whole + fraction;
  let point = whole.length + Number(m[4] ?? 0);
  const lead = /^0*/.exec(digits)![0].length;
  digits = digits.slice(lead).replace(/0+$/, '');
  point -= lead;
  if (digits === '') return { sign: 0, digits: '', point: 0 };
  return { sign: m[1] === '-' ? -1 : 1, digits, point };
}


/**
 * How the values of a field type are read and ordered for `<`, `<=`, `>`,
 * `>=` and `between` (docs/beyond-the-request.md): `read` gives a number or
 * a string that `compare` orders, or `undefined` when the value cannot be
 * read as the type, as PostgreSQL reads an untyped literal into the column.
 */
export interface TypeReading {
  readonly read: (value: unknown) => number | string | undefined;
  readonly compare: (a: number | string, b: number | string) => number;
}

const byNumber = (a: number | string, b: number | string): number => compareNumbers(a as number, b as number);
const byText = (a: number | string, b: number | string): number => compareText(a as string, b as string);

/**
 * The reading of a field type; undefined for a type without an order (json,
 * arrays). Integers and `numeric` are exact, as in PostgreSQL: text a double
 * cannot hold stays text, ordered by `compareDecimal`; `bool` reads
 * PostgreSQL's spellings (`t`, `yes`, `on`, `1`, any unique prefix, any
 * case); `date` and `timestamp` read ISO 8601 dates and times, a date alone
 * at midnight, a zone ignored (as `timestamp` ignores it), a `date` cut to
 * its day.
 * @example
 * typeReading('bool')?.read('yes') // 1
 * typeReading('date')?.read('2020-01-02T10:00') // Date.UTC(2020, 0, 2)
 * typeReading('int4')?.read('1.5') // undefined
 */
export function typeReading(type: string): TypeReading | undefined {
  switch (type) {
    case 'int':
    case 'int4':
    case 'int8':
    case 'oid':
      return { read: (v) => exactNumber(readNumber(v, INTEGER), v), compare: compareDecimal };
    case 'numeric':
      return { read: (v) => exactNumber(readNumber(v, DECIMAL), v), compare: compareDecimal };
    case 'float8':
    case 'float':
      return { read: (v) => readNumber(v, DECIMAL), compare: byNumber };
    case 'bool':
      return { read: readBool, compare: byNumber };
    case 'timestamp':
      return { read: (v) => readTime(v, false), compare: byNumber };
    case 'date':
      return { read: (v) => readTime(v, true), compare: byNumber };
    case 'text':
    case 'name':
      return { read: (v) => canonicalText(v) ?? undefined, compare: byText };
    default:
      return undefined; // json and arrays
  }
}

const INTEGER = /^\s*[+-]?\d+\s*$/;
const DECIMAL = /^\s*(?:[+-]?(?:\d+\.?\d*|\.\d+)(?:e[+-]?\d+)?|[+-]?(?:nan|inf|infinity))\s*$/i;

function readNumber(value: unknown, literal: RegExp): number | undefined {
  if (typeof value === 'number') return value;
  if (typeof value !== 'string' || !literal.test(value)) return undefined;
  const text = value.trim().toLowerCase().replace(/^([+-]?)inf$/, '$1infinity');
  if (text.endsWith('nan')) return Number.NaN;
  if (text.endsWith('infinity')) return text.startsWith('-') ? -Infinity : Infinity;
  return Number(text);
}

/** The number read, or the text itself when the nearest double is not that number (`"9007199254740993"`). */
function exactNumber(read: number | undefined, value: unknown): number | string | undefined {
  // NaN and the spellings of infinity are what they say; `1e400` is a number beyond a double, kept as text.
  if (read === undefined || typeof value !== 'string' || Number.isNaN(read) || /inf/i.test(value)) return read;
  return compareDecimal(read, value) === 0 ? read : value.trim();
}

/** PostgreSQL's boolean input: t/true/y/yes/on/1 and f/false/n/no/off/0, any unique prefix, any case. */
function readBool(value: unknown): number | undefined {
  if (typeof value === 'boolean') return value ? 1 : 0;
  if (typeof value !== 'string') return undefined;
  const text = value.trim().toLowerCase();
  if (text === '') return undefined;
  if (text === '1' || 'true'.startsWith(text) || 'yes'.startsWith(text) || (text.length > 1 && 'on'.startsWith(text))) return 1;
  if (text === '0' || 'false'.startsWith(text) || 'no'.startsWith(text) || (text.length > 1 && 'off'.startsWith(text))) return 0;
  return undefined;
}

const ISO = /^\s*(\d{4})-(\d{1,2})-(\d{1,2})(?:[T ](\d{1,2}):(\d{2})(?::(\d{2})(\.\d+)?)?)?\s*(?:z|[+-]\d{2}(?::?\d{2})?)?\s*$/i;

/** An ISO date or timestamp as milliseconds (a date alone is midnight; a zone is ignored, as `timestamp` does). */
function readTime(value: unknown, dateOnly: boolean): number | undefined {
  if (typeof value !== 'string') return undefined;
  const m = ISO.exec(value);
  if (m === null) return undefined;
  const [year, month, day, hour, minute, second] = [m[1], m[2], m[3], m[4], m[5], m[6]].map((p) => Number(p ?? 0)) as [number, number, number, number, number, number];
  const midnight = Date.UTC(year, month - 1, day);
  const back = new Date(midnight);
  // Date.UTC rolls 2021-02-30 over into March: PostgreSQL refuses it (and takes 24:00:00 and a leap second 60 as the next moment)
  if (back.getUTCMonth() !== month - 1 || back.getUTCDate() !== day || minute > 59 || second > 60) return undefined;
  if (hour > 24 || (hour === 24 && (minute > 0 || second > 0 || /[1-9]/.test(m[7] ?? '')))) return undefined;
  if (dateOnly) return midnight;
  return Date.UTC(year, month - 1, day, hour, minute, second, Math.round(Number(m[7] ?? 0) * 1000));
}

const FOLDS_IN_CONTEXT = /[\u0130\u03a3]/;

/**
 * Lower case as PostgreSQL's `lower()` and `ILIKE` fold text in a UTF-8
 * database whose character type is `C.UTF-8` (what ckql's PostgreSQL engines
 * and CKAN's usual databases use): each character by Unicode's simple
 * lower-case mapping, on its own. So `İ` becomes `i` (not `i̇`) and `Σ`
 * always `σ` (no final `ς`). A character that a C library's older Unicode
 * tables do not know may stay as it is in PostgreSQL (README, differences).
 * @example
 * foldCase('ΑΣ')   // "ασ"  (toLowerCase gives "ας")
 * foldCase('İSTANBUL') // "istanbul"
 */
export function foldCase(text: string): string {
  // Only these two fold differently in context or into two characters under toLowerCase.
  if (!FOLDS_IN_CONTEXT.test(text)) return text.toLowerCase();
  let out = '';
  for (const ch of text) out += ch === '\u0130' ? 'i' : ch.toLowerCase();
  return out;
}

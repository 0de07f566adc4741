/**
 * The functions of lodash-es that Chevrotain calls, for the page's bundle
 * (scripts/bundle-web.ts aliases `lodash-es` here). Chevrotain passes these
 * only functions as iteratees and only arrays or plain objects as
 * collections, so lodash's shorthands (`map(xs, 'name')`, `filter(xs, {…})`)
 * and deep paths are left out: es-toolkit's lodash-compatible versions of
 * them bring its matchers and deep clone, 4 KB gzipped that the page's
 * 200 KB budget (docs/playground.md) cannot spare. The rest is es-toolkit's.
 */
export * from 'es-toolkit/compat';

type Collection<T> = readonly T[] | Readonly<Record<string, T>> | null | undefined;
type Key = string | number;
type Iteratee<T, R> = (value: T, key: Key, collection: unknown) => R;

/**
 * Calls `visit` with each value and its key (an index, or an own enumerable key) until it answers false: one
 * loop for every function below, without making a list of pairs (content assist calls these on each keystroke).
 */
function each<T>(collection: Collection<T>, visit: (value: T, key: Key) => unknown): void {
  if (collection === null || collection === undefined) return;
  if (Array.isArray(collection)) {
    for (let i = 0; i < collection.length; i++) if (visit(collection[i] as T, i) === false) return;
    return;
  }
  const object = collection as Readonly<Record<string, T>>;
  for (const key of Object.keys(object)) if (visit(object[key] as T, key) === false) return;
}

export function forEach<T>(collection: Collection<T>, iteratee: Iteratee<T, unknown>): Collection<T> {
  each(collection, (value, key) => iteratee(value, key, collection));
  return collection;
}

export function map<T, R>(collection: Collection<T>, iteratee: Iteratee<T, R>): R[] {
  const out: R[] = [];
  each(collection, (value, key) => void out.push(iteratee(value, key, collection)));
  return out;
}

export function flatMap<T, R>(collection: Collection<T>, iteratee: Iteratee<T, R | readonly R[]>): R[] {
  return map(collection, iteratee).flat() as R[];
}

export function filter<T>(collection: Collection<T>, predicate: Iteratee<T, unknown>): T[] {
  const out: T[] = [];
  each(collection, (value, key) => void (predicate(value, key, collection) && out.push(value)));
  return out;
}

export function reject<T>(collection: Collection<T>, predicate: Iteratee<T, unknown>): T[] {
  return filter(collection, (value, key, all) => !predicate(value, key, all));
}

export function find<T>(collection: Collection<T>, predicate: Iteratee<T, unknown>): T | undefined {
  let found: T | undefined;
  each(collection, (value, key) => {
    if (!predicate(value, key, collection)) return true;
    found = value;
    return false;
  });
  return found;
}

export function some<T>(collection: Collection<T>, predicate: Iteratee<T, unknown>): boolean {
  let any = false;
  each(collection, (value, key) => !(any = Boolean(predicate(value, key, collection))));
  return any;
}

export function every<T>(collection: Collection<T>, predicate: Iteratee<T, unknown>): boolean {
  return !some(collection, (value, key, all) => !predicate(value, key, all));
}

export function reduce<T, A>(collection: Collection<T>, iteratee: (acc: A, value: T, key: Key, collection: unknown) => A, initial: A): A {
  let acc = initial;
  each(collection, (value, key) => void (acc = iteratee(acc, value, key, collection)));
  return acc;
}

export function groupBy<T>(collection: Collection<T>, iteratee: (value: T) => PropertyKey): Record<string, T[]> {
  const out: Record<string, T[]> = {};
  each(collection, (value) => void (out[String(iteratee(value))] ??= []).push(value));
  return out;
}

export function pickBy<T>(object: Readonly<Record<string, T>> | null | undefined, predicate: (value: T, key: string) => unknown): Record<string, T> {
  const out: Record<string, T> = {};
  each(object, (value, key) => void (predicate(value, String(key)) && (out[key] = value)));
  return out;
}

/** A shallow copy, as lodash's `clone` of an array or a plain object (Chevrotain's only uses). */
export function clone<T>(value: T): T {
  if (Array.isArray(value)) return [...value] as T;
  if (typeof value === 'object' && value !== null) return Object.assign(Object.create(Object.getPrototypeOf(value) as object | null) as object, value) as T;
  return value;
}

export function has(object: unknown, key: PropertyKey): boolean {
  return object !== null && object !== undefined && Object.prototype.hasOwnProperty.call(object, key);
}

// The next three as Chevrotain calls them (on arrays, strings and plain objects), in a few lines each where
// es-toolkit's compatible versions take 1.1 KB: lodash's meaning on those (`includes` by SameValueZero, a
// negative start counted from the end; `keys` an object's own enumerable keys, an array's indexes as text).
export function includes(collection: unknown, value: unknown, fromIndex = 0): boolean {
  if (typeof collection === 'string') return collection.includes(String(value), fromIndex);
  const values: unknown[] = Array.isArray(collection) ? collection : collection === null || collection === undefined ? [] : Object.values(collection);
  return values.includes(value, fromIndex < 0 ? Math.max(values.length + fromIndex, 0) : fromIndex);
}

export function keys(object: unknown): string[] {
  return object === null || object === undefined ? [] : Object.keys(Object(object));
}

export function isEmpty(value: unknown): boolean {
  if (value === null || value === undefined) return true;
  if (typeof value === 'string' || Array.isArray(value)) return value.length === 0;
  if (value instanceof Map || value instanceof Set) return value.size === 0;
  return typeof value !== 'object' || Object.keys(value).length === 0;
}

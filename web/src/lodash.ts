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

function entries<T>(collection: Collection<T>): [Key, T][] {
  if (collection === null || collection === undefined) return [];
  if (Array.isArray(collection)) return collection.map((value, i) => [i, value]);
  return Object.keys(collection).map((key) => [key, (collection as Record<string, T>)[key] as T]);
}

export function forEach<T>(collection: Collection<T>, iteratee: Iteratee<T, unknown>): Collection<T> {
  for (const [key, value] of entries(collection)) if (iteratee(value, key, collection) === false) break;
  return collection;
}

export function map<T, R>(collection: Collection<T>, iteratee: Iteratee<T, R>): R[] {
  return entries(collection).map(([key, value]) => iteratee(value, key, collection));
}

export function flatMap<T, R>(collection: Collection<T>, iteratee: Iteratee<T, R | readonly R[]>): R[] {
  return map(collection, iteratee).flat() as R[];
}

export function filter<T>(collection: Collection<T>, predicate: Iteratee<T, unknown>): T[] {
  return entries(collection).filter(([key, value]) => predicate(value, key, collection)).map(([, value]) => value);
}

export function reject<T>(collection: Collection<T>, predicate: Iteratee<T, unknown>): T[] {
  return filter(collection, (value, key, all) => !predicate(value, key, all));
}

export function find<T>(collection: Collection<T>, predicate: Iteratee<T, unknown>): T | undefined {
  for (const [key, value] of entries(collection)) if (predicate(value, key, collection)) return value;
  return undefined;
}

export function every<T>(collection: Collection<T>, predicate: Iteratee<T, unknown>): boolean {
  return entries(collection).every(([key, value]) => predicate(value, key, collection));
}

export function some<T>(collection: Collection<T>, predicate: Iteratee<T, unknown>): boolean {
  return entries(collection).some(([key, value]) => predicate(value, key, collection));
}

export function reduce<T, A>(collection: Collection<T>, iteratee: (acc: A, value: T, key: Key, collection: unknown) => A, initial: A): A {
  let acc = initial;
  for (const [key, value] of entries(collection)) acc = iteratee(acc, value, key, collection);
  return acc;
}

export function groupBy<T>(collection: Collection<T>, iteratee: (value: T) => PropertyKey): Record<string, T[]> {
  const out: Record<string, T[]> = {};
  for (const [, value] of entries(collection)) (out[String(iteratee(value))] ??= []).push(value);
  return out;
}

export function pickBy<T>(object: Readonly<Record<string, T>> | null | undefined, predicate: (value: T, key: string) => unknown): Record<string, T> {
  const out: Record<string, T> = {};
  for (const [key, value] of entries(object)) if (predicate(value, String(key))) out[key] = value;
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

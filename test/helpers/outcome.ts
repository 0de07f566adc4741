/**
 * What a call did, as comparable data: its value, or the catalogue error it
 * threw. Anything else it throws (a TypeError, a RangeError from a blown
 * stack) is rethrown, because no input may cause one.
 */
import { DatastoreError, QueryError } from '../../src/errors.js';

export type Outcome<T> =
  | { readonly ok: T }
  | { readonly error: { readonly name: string; readonly code: string; readonly status?: number; readonly body?: unknown } };

export function outcomeOf<T>(fn: () => T): Outcome<T> {
  try {
    return { ok: fn() };
  } catch (error) {
    if (error instanceof QueryError) return { error: { name: error.name, code: error.code } };
    if (error instanceof DatastoreError) return { error: { name: error.name, code: error.code, status: error.status, body: error.body } };
    throw error;
  }
}

export async function asyncOutcomeOf<T>(fn: () => Promise<T>): Promise<Outcome<T>> {
  try {
    return { ok: await fn() };
  } catch (error) {
    if (error instanceof DatastoreError) return { error: { name: error.name, code: error.code, status: error.status, body: error.body } };
    if (error instanceof QueryError) return { error: { name: error.name, code: error.code } };
    throw error;
  }
}

/**
 * The `DatastoreError` a promise rejects with; any other rejection is
 * rethrown, and a promise that resolves fails the test.
 */
export async function datastoreFailure(promise: Promise<unknown>): Promise<DatastoreError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof DatastoreError) return error;
    throw error;
  }
  throw new Error('expected a DatastoreError, and the call succeeded');
}

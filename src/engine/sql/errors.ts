/**
 * How a failed statement is answered, as CKAN answers it
 * (docs/ckan-2.11-reference.md §1, §5): 409 `Invalid query` with `info`,
 * 409 on a timeout, and a cancelled statement as `ABORTED`.
 */
import { DatastoreError, validationError } from '../../errors.js';
import { isPgError, SQLSTATE } from './db.js';

/** CKAN's 409 for a statement PostgreSQL refused (or psycopg2 could not send). */
export function invalidQuery(orig: string, statement = '', params: readonly unknown[] = []): DatastoreError {
  const error = validationError('query', 'Invalid query');
  Object.assign(error.body as object, { query: ['Invalid query'], info: { statement: [statement], params: [paramsObject(params)], orig: [orig] } });
  return error;
}

function paramsObject(params: readonly unknown[]): Record<string, unknown> {
  return Object.fromEntries(params.map((v, i) => [`value_${i}`, v]));
}

/**
 * A failed statement as CKAN answers it: a timeout is 409 `<timeoutMessage>`,
 * a cancelled one `ABORTED`, any other database error `otherwise()` (CKAN's
 * 409 `Invalid query`); errors that are already CKAN's pass through.
 */
export function databaseError(error: unknown, signal: AbortSignal | undefined, otherwise: () => DatastoreError, timeoutMessage: string): unknown {
  if (error instanceof DatastoreError) return error;
  if (isPgError(error)) {
    if (error.code === SQLSTATE.queryCanceled) {
      if (signal?.aborted === true) return new DatastoreError('ABORTED', 'the search was cancelled', { cause: error });
      return validationError('query', timeoutMessage);
    }
    return otherwise();
  }
  return error;
}

/**
 * The server's own errors (everything that is not a Validation Error from the
 * request checks): each is a `DatastoreError` whose body is the `error` object
 * of CKAN's envelope, `{"__type": …, "message": …}`, with the status of
 * docs/semantics.md's error table.
 */
import { DatastoreError, datastoreCodes } from '../errors.js';
import type { DatastoreErrorCode } from '../errors.js';

type EnvelopeCode = 'NOT_FOUND' | 'FORBIDDEN' | 'BAD_REQUEST' | 'REQUEST_TOO_LARGE' | 'METHOD_NOT_ALLOWED';

/**
 * An error whose envelope carries one `message`.
 * @example
 * serviceError('BAD_REQUEST', 'Bad request: the body is empty').body
 * // → { __type: "Bad Request", message: "Bad request: the body is empty" }
 */
export function serviceError(code: EnvelopeCode, message: string): DatastoreError {
  const type: string = datastoreCodes[code].type;
  return new DatastoreError(code satisfies DatastoreErrorCode, message, { body: { __type: type, message } });
}

/**
 * 403 for a private resource. The message never repeats the Authorization
 * header: a wrong token must not be echoed back to whoever sent it.
 * @example
 * accessDenied('grades').status // → 403
 */
export function accessDenied(resourceId: string): DatastoreError {
  return serviceError(
    'FORBIDDEN',
    `Access denied: resource ${JSON.stringify(resourceId)} is private; send a valid API token in the Authorization header (the raw token, with no "Bearer " in front)`,
  );
}

export { excerpt } from '../text.js';

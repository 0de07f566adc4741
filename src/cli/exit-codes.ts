/**
 * The process exit status for each kind of outcome, modelled on jq and psql
 * (see docs/ecosystem-and-ux-reference.md §1).
 */
import { DatastoreError, QueryError, ToolError, isUnknownResource, networkErrorCodes } from '../errors.js';

export const exitCodes = {
  ok: 0,
  /** the server or the data failed: a 5xx, a bad response, a data file that cannot be loaded, a crash */
  data: 1,
  /** the command line or the config file is wrong */
  usage: 2,
  /** the query cannot be parsed, bound or compiled, or the source refused the request as invalid */
  query: 3,
  /** the portal cannot be reached, or did not answer in time */
  network: 4,
  /**
   * the source refused access (403): no token was sent where one is needed,
   * or the token is not accepted for the resource; the fix is a credential,
   * neither the query nor the command line
   */
  forbidden: 5,
  /** Ctrl-C (128 + SIGINT) */
  interrupted: 130,
} as const;

/** Tool errors that are about the command line or the config, not the data. */
const usageToolCodes: ReadonlySet<ToolError['code']> = new Set([
  'USAGE',
  'CONFIG_INVALID',
  'FILE_UNREADABLE',
  'RESUME_MISMATCH',
  'EXPORT_LOCKED',
  'CONFIG_INSECURE_TOKEN',
  'TOKEN_UNAVAILABLE',
  'TOKEN_FILE_INSECURE',
  'UNKNOWN_PROFILE',
  'UNKNOWN_QUERY',
]);

/**
 * What a source answers when the request itself is wrong (an unknown field or
 * resource, a bad value): the query's fault, whichever source refused it, so
 * it exits like a query the compiler refused.
 */
const refusedRequestCodes: ReadonlySet<DatastoreError['code']> = new Set(['VALIDATION_ERROR', 'BAD_REQUEST']);

/**
 * @example exitCodeFor(parseError) // 3
 * @example exitCodeFor(new DatastoreError('VALIDATION_ERROR', 'unknown field')) // 3
 * @example exitCodeFor(new DatastoreError('TIMEOUT', '…')) // 4
 * @example exitCodeFor(new DatastoreError('FORBIDDEN', '…')) // 5
 */
export function exitCodeFor(error: unknown): number {
  if (error instanceof QueryError) return exitCodes.query;
  if (error instanceof DatastoreError) {
    if (error.code === 'ABORTED') return exitCodes.interrupted;
    if (error.code === 'FORBIDDEN') return exitCodes.forbidden;
    if (refusedRequestCodes.has(error.code) || isUnknownResource(error)) return exitCodes.query;
    return networkErrorCodes.has(error.code) ? exitCodes.network : exitCodes.data;
  }
  if (error instanceof ToolError) return usageToolCodes.has(error.code) ? exitCodes.usage : exitCodes.data;
  return exitCodes.data;
}

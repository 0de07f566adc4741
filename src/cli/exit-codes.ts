/**
 * The process exit status for each kind of outcome, modelled on jq and psql
 * (see docs/ecosystem-and-ux-reference.md §1).
 */
import { DatastoreError, QueryError, ToolError, networkErrorCodes } from '../errors.js';

export const exitCodes = {
  ok: 0,
  /** the data or the server said no: a DatastoreError, a data file that cannot be loaded, a crash */
  data: 1,
  /** the command line or the config file is wrong */
  usage: 2,
  /** the query text cannot be parsed, bound or compiled */
  query: 3,
  /** the portal cannot be reached, or did not answer in time */
  network: 4,
  /** Ctrl-C (128 + SIGINT) */
  interrupted: 130,
} as const;

/** Tool errors that are about the command line or the config, not the data. */
const usageToolCodes: ReadonlySet<ToolError['code']> = new Set([
  'USAGE',
  'CONFIG_INVALID',
  'CONFIG_INSECURE_TOKEN',
  'UNKNOWN_PROFILE',
  'UNKNOWN_QUERY',
]);

/**
 * @example exitCodeFor(parseError) // 3
 * @example exitCodeFor(new DatastoreError('TIMEOUT', '…')) // 4
 */
export function exitCodeFor(error: unknown): number {
  if (error instanceof QueryError) return exitCodes.query;
  if (error instanceof DatastoreError) {
    if (error.code === 'ABORTED') return exitCodes.interrupted;
    return networkErrorCodes.has(error.code) ? exitCodes.network : exitCodes.data;
  }
  if (error instanceof ToolError) return usageToolCodes.has(error.code) ? exitCodes.usage : exitCodes.data;
  return exitCodes.data;
}

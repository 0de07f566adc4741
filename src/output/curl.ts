/**
 * The curl line that `explain` prints in the CLI and the REPL: one function,
 * so both show the same command for the same prepared request.
 */
import type { PreparedRequest } from '../client/types.js';
import { shellQuote } from '../session/select-source.js';

/** A curl command line for a prepared request; the token, if any, as a shell expression. */
export function curlCommand(prepared: PreparedRequest, tokenShell: string | undefined): string {
  const parts = ['curl'];
  if (prepared.method === 'POST') parts.push('-X POST');
  parts.push(shellQuote(prepared.url));
  if (prepared.method === 'POST') parts.push(`-H ${shellQuote('content-type: application/json')}`);
  // The portal's token header (CKAN's apitoken_header_name), Authorization unless the profile names another.
  const header = prepared.tokenHeader ?? 'Authorization';
  if (tokenShell !== undefined) parts.push(`-H "${header}: ${tokenShell.replaceAll('"', '\\"')}"`);
  if (prepared.method === 'POST') parts.push(`--data-binary ${shellQuote(prepared.body ?? JSON.stringify(prepared.request))}`);
  return parts.join(' ');
}

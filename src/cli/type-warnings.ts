/**
 * The type warnings of a query (compile/type-warnings.ts) on stderr:
 * asked beside the query (one `limit: 0` search, only for a query with a
 * comparison or a sort), printed once it has run.
 */
import { typeWarnings } from '../client/dictionary.js';
import type { DatastoreClient } from '../client/types.js';
import type { Params } from '../compile/bind.js';
import type { CliContext } from './context.js';

/**
 * Starts looking for the warnings of `text`; `print` writes them (nothing when the look-up failed: the query says why).
 * @example
 * const warnings = startTypeWarnings(context, source.client, 'from r where year >= 2020', {});
 * await printQuery(…);
 * await warnings.print(); // warning[TEXT_COMPARED]: year >= 2020 compares text: …
 */
export function startTypeWarnings(context: CliContext, client: DatastoreClient, text: string, params: Params | undefined): { print(): Promise<void> } {
  const found = typeWarnings(client, text, params === undefined ? {} : { params }).catch(() => []);
  return {
    print: async () => {
      for (const warning of await found) {
        const line = `warning[${warning.code}]: ${warning.message}`;
        context.err(context.color.stderr ? `\x1b[33m${line}\x1b[39m` : line);
      }
    },
  };
}

/**
 * The `ckql serve` command a local source's explained URLs need: the URLs
 * `explain` shows for local data are those of `ckql serve` on its default port.
 */
import type { Target } from '../compile/plan.js';
import { shellQuote } from './select-source.js';
import { relativeLabel } from './source.js';
import type { SourceSpec } from './source.js';

/**
 * The `ckql serve` command that answers as `explain` assumes: the same files
 * or database, as the CKAN the target names, on the default port. A
 * password in a database URL is left out (PostgreSQL reads `PGPASSWORD`).
 * @example serveCommand({ kind: 'data', paths: [], db: '/home/ann/ckql-db', engine: 'pglite' }, 'ckan-2.11')
 * // 'ckql serve --db /home/ann/ckql-db --port 8080'
 */
export function serveCommand(spec: Extract<SourceSpec, { kind: 'data' }>, target: Target): string {
  const words = ['ckql', 'serve', ...spec.paths.map((path) => shellQuote(relativeLabel(path)))];
  let passwordLeftOut = false;
  if (spec.db !== undefined) {
    let db = spec.db;
    if (/^postgres(ql)?:\/\//.test(db)) {
      try {
        const url = new URL(db);
        passwordLeftOut = url.password !== '';
        url.password = '';
        db = url.href;
      } catch {
        // not a URL after all: shown as given
      }
    } else {
      db = relativeLabel(db);
    }
    words.push('--db', shellQuote(db));
  }
  // --db names its engine (a directory: pglite; a postgres:// URL: postgres); files need --engine for SQL.
  const engine = spec.engine ?? (spec.db === undefined ? undefined : /^postgres(ql)?:\/\//.test(spec.db) ? 'postgres' : 'pglite');
  const implied = spec.db === undefined ? 'memory' : /^postgres(ql)?:\/\//.test(spec.db) ? 'postgres' : 'pglite';
  const wanted = target === 'sql' && (engine === undefined || engine === 'memory') ? 'pglite' : engine;
  if (wanted !== undefined && wanted !== implied) words.push('--engine', wanted);
  if (target === 'ckan-2.12') words.push('--ckan', '2.12');
  words.push('--port', '8080');
  return `${words.join(' ')}${passwordLeftOut ? '   # the password from PGPASSWORD' : ''}`;
}

/**
 * `openEngine`: the one way the session and embedders get an engine, by
 * name. The PostgreSQL engines register here as they are built.
 */
import { toolError } from '../errors.js';
import { memoryEngine } from './memory/engine.js';
import { loadResources } from './memory/load.js';
import type { Engine, EngineKind } from './types.js';

export interface OpenEngineOptions {
  /** default `memory` */
  readonly engine?: EngineKind;
  /** CSV/JSON files or folders to load */
  readonly data?: readonly string[];
}

/**
 * Opens an engine over local files.
 * @example
 * const engine = await openEngine({ engine: 'memory', data: ['examples/data'] });
 * (await engine.resources()).map((r) => r.aliases[0]); // → ['courses', 'enrolments', 'schools']
 */
export async function openEngine(options: OpenEngineOptions = {}): Promise<Engine> {
  const kind = options.engine ?? 'memory';
  switch (kind) {
    case 'memory': {
      const paths = options.data ?? [];
      return memoryEngine(await loadResources(paths), `memory (${paths.join(', ') || 'no data'})`);
    }
    case 'pglite':
    case 'postgres':
      throw toolError('USAGE', [`the ${kind} engine is not available in this build`]);
  }
}

/**
 * The ckql modules under test, as users run them: `src/` compiled by tsc
 * (the `npm run build` configuration) into bench/.cache/dist.
 *
 * Why not import `src/` through tsx: tsx compiles with esbuild's keepNames,
 * which wraps every closure in a `__name()` call that redefines its `name`;
 * code that creates closures per call (Chevrotain `OR` alternatives) then
 * runs several times slower than the tsc output users get. The bench would
 * measure the transpiler. `CKQL_BENCH_SOURCE=src` measures `src/` through
 * tsx anyway (for a quick look at an unbuilt change).
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { cacheDir, rootDir } from './data.js';
import type * as ParseModule from '../../src/syntax/parse.js';
import type * as CompileModule from '../../src/compile/compile.js';
import type * as EvaluateModule from '../../src/engine/memory/evaluate.js';
import type * as LoadModule from '../../src/engine/memory/load.js';
import type * as LoadResourcesModule from '../../src/engine/node/load-resources.js';
import type * as ServerModule from '../../src/server/server.js';
import type * as MemoryEngineModule from '../../src/engine/memory/engine.js';
import type * as ClientModule from '../../src/client/connect.js';
import type * as ResponseModule from '../../src/client/response.js';
import type * as OpenModule from '../../src/engine/open.js';
import type * as PostgresDbModule from '../../src/engine/postgres/db.js';
import type * as LoadFilesModule from '../../src/engine/sql/load-files.js';
import type * as PgliteModule from '../../src/engine/pglite/engine.js';
import type * as PgliteDbModule from '../../src/engine/pglite/thread-db.js';
import type * as PostgresEngineModule from '../../src/engine/postgres/engine.js';
import type * as SqlLoadModule from '../../src/engine/sql/load.js';
import type * as SourceModule from '../../src/session/source.js';

export const distDir = path.join(cacheDir, 'dist');
const fromSource = process.env.CKQL_BENCH_SOURCE === 'src';

/** Compiles src/ into bench/.cache/dist with tsc; type errors elsewhere in the tree do not stop the emit. */
export function buildCkql(log: (line: string) => void): void {
  if (fromSource) {
    log('bench: CKQL_BENCH_SOURCE=src — measuring src/ through tsx, not the tsc build');
    return;
  }
  const t0 = performance.now();
  try {
    execFileSync(process.execPath, [path.join(rootDir, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json', '--outDir', distDir, '--declaration', 'false', '--sourceMap', 'false'], {
      cwd: rootDir,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  } catch (error) {
    // tsc exits non-zero on type errors but still emits; only a missing emit is fatal
    if (!existsSync(path.join(distDir, 'compile', 'compile.js'))) throw error;
    log('bench: tsc reported type errors in the tree; measuring what it emitted');
  }
  log(`bench: built src/ with tsc into bench/.cache/dist in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
}

async function load<T>(relative: string): Promise<T> {
  const file = fromSource ? path.join(rootDir, 'src', relative.replace(/\.js$/, '.ts')) : path.join(distDir, relative);
  return (await import(pathToFileURL(file).href)) as T;
}

export const ckqlModules = {
  parse: () => load<typeof ParseModule>('syntax/parse.js'),
  compile: () => load<typeof CompileModule>('compile/compile.js'),
  evaluate: () => load<typeof EvaluateModule>('engine/memory/evaluate.js'),
  load: () => load<typeof LoadModule>('engine/memory/load.js'),
  loadResources: () => load<typeof LoadResourcesModule>('engine/node/load-resources.js'),
  server: () => load<typeof ServerModule>('server/server.js'),
  memoryEngine: () => load<typeof MemoryEngineModule>('engine/memory/engine.js'),
  client: () => load<typeof ClientModule>('client/connect.js'),
  response: () => load<typeof ResponseModule>('client/response.js'),
  open: () => load<typeof OpenModule>('engine/open.js'),
  postgresDb: () => load<typeof PostgresDbModule>('engine/postgres/db.js'),
  loadFiles: () => load<typeof LoadFilesModule>('engine/sql/load-files.js'),
  pglite: () => load<typeof PgliteModule>('engine/pglite/engine.js'),
  pgliteDb: () => load<typeof PgliteDbModule>('engine/pglite/thread-db.js'),
  postgresEngine: () => load<typeof PostgresEngineModule>('engine/postgres/engine.js'),
  sqlLoad: () => load<typeof SqlLoadModule>('engine/sql/load.js'),
  source: () => load<typeof SourceModule>('session/source.js'),
};

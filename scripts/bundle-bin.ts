/**
 * Bundles the `ckql` bin from `src/cli/main.ts` (esbuild compiles the TypeScript, with tsconfig.json's settings) into
 * `dist/bin/ckql.js`: one file for the common path plus chunks for what is
 * loaded on demand (the REPL and ink, config parsing, the PostgreSQL
 * engines). A one-shot query otherwise spends most of its start-up resolving
 * and reading hundreds of small modules (Chevrotain's lodash-es alone is
 * ~600); BENCHMARKS.md's startup section has the figures.
 *
 * The library's entry points are bundled the same way into `dist/lib/`
 * (see below); their `.d.ts` files are written by scripts/emit-declarations.ts.
 */
import { build } from 'esbuild';
import { readFile, rm } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const outdir = `${root}dist/bin`;

/**
 * What both bundles share: ESM with chunks beside their entries, for Node 20, syntax minified. Whitespace is
 * kept: Node shows the source line of an uncaught error, and a minified bundle is a few lines of hundreds of
 * kilobytes each (start-up costs no more measurably: a demo query took ≈ 0.4 s of CPU either way, 8 runs each on the loaded machine).
 */
const common = {
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  // Chunks sit beside the entry: code that finds files from import.meta.url (the demo data, package.json) sees one depth.
  chunkNames: '[name]-[hash]',
  legalComments: 'none',
  minifyWhitespace: false,
  minifySyntax: true,
  logLevel: 'warning',
} as const;

await rm(outdir, { recursive: true, force: true });
await build({
  ...common,
  // PGlite's thread (src/engine/pglite/thread-db.ts) starts its entry from beside the chunk that starts it.
  entryPoints: { ckql: `${root}src/cli/main.ts`, 'pglite-worker': `${root}src/engine/pglite/pglite-worker.ts` },
  outdir,
  // PGlite finds its .wasm and data files beside its own module; pg has optional native parts;
  // react-devtools-core is only imported by ink when DEV=true and is not installed; esbuild only by
  // src/engine/pglite/thread-db.ts when it runs from src/.
  external: ['@electric-sql/pglite', '@electric-sql/pglite/*', 'pg', 'pg-native', 'react-devtools-core', 'esbuild'],
  // Bundled CommonJS packages call require() for Node's own modules.
  banner: { js: "import { createRequire as __ckqlRequire } from 'node:module'; const require = __ckqlRequire(import.meta.url);" },
});

// The library's entry points (`ckql`, `ckql/repl`) as a bundle too, with Chevrotain inside: Node would
// otherwise resolve and read its ~650 modules (lodash-es) at every import. Other dependencies stay
// external, for the embedder's package manager to share; both entries share chunks, so one module
// (and one `DatastoreError` class) serves both.
const libdir = `${root}dist/lib`;
await rm(libdir, { recursive: true, force: true });
const pkg = JSON.parse(await readFile(`${root}package.json`, 'utf8')) as { dependencies: Record<string, string> };
const bundled = new Set(['chevrotain']);
await build({
  ...common,
  entryPoints: { index: `${root}src/index.ts`, repl: `${root}src/repl/index.ts`, 'pglite-worker': `${root}src/engine/pglite/pglite-worker.ts` },
  outdir: libdir,
  external: [...Object.keys(pkg.dependencies).filter((name) => !bundled.has(name)).flatMap((name) => [name, `${name}/*`]), 'pg-native', 'react-devtools-core', 'esbuild'],
});

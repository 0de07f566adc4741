/**
 * Builds the playground page (`web/`) into `dist/web/`: `play.js` (the page's
 * TypeScript with CodeMirror and ckql's language service, one minified ES
 * module for browsers), `play.css` and `index.html`, which `ckql serve` and
 * `ckql ui` serve. Nothing is loaded from elsewhere at run time.
 *
 * `webBuildOptions` is shared with the test that holds the script to its
 * size budget (test/web/bundle.test.ts), so the budget is checked on the
 * build that ships.
 */
import { build } from 'esbuild';
import type { BuildOptions } from 'esbuild';
import { copyFile, mkdir, rm } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));

/** The page's script: browsers of the last few years, minified, no Node built-ins. */
export function webBuildOptions(): BuildOptions {
  return {
    entryPoints: { play: `${root}web/src/main.ts` },
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: ['chrome109', 'firefox115', 'safari16'],
    minify: true,
    legalComments: 'none',
    logLevel: 'warning',
    metafile: true,
    // CodeMirror's packages read `process` nowhere, Chevrotain only in development paths; nothing should.
    define: { 'process.env.NODE_ENV': '"production"' },
    // Chevrotain calls 37 functions of lodash-es: web/src/lodash.ts gives them, from es-toolkit's lodash-compatible layer and,
    // for those that take an iteratee and clone, its own plainer ones. es-toolkit's layer gives the same functions in
    // 18 KB instead of 30 KB (6 KB less gzipped), which the page's 200 KB budget needs (docs/playground.md).
    alias: { 'lodash-es': `${root}web/src/lodash.ts` },
  };
}

export async function buildWeb(outdir = `${root}dist/web`): Promise<void> {
  await rm(outdir, { recursive: true, force: true });
  await mkdir(outdir, { recursive: true });
  await build({ ...webBuildOptions(), outdir });
  await copyFile(`${root}web/index.html`, `${outdir}/index.html`);
  await copyFile(`${root}web/play.css`, `${outdir}/play.css`);
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) await buildWeb();

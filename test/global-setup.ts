/**
 * Builds `dist/`'s bundles once before the test files run, when they are
 * missing or older than a file in `src/` (as `npm run build` does, less its
 * type check, which is `npm run typecheck`, and the declarations, which the
 * one test that reads them writes: test/cli/package.test.ts):
 * the few real-process tests (exit statuses, signals, `serve`, the bin) run
 * the built bin, not `tsx`, so no test pays for transpiling the CLI at every
 * start, and the bin that ships is the one tested. Nothing else starts until
 * this ends, so it does only what the files need before they start.
 */
import { execFile } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const root = fileURLToPath(new URL('..', import.meta.url));

function newestModified(folder: string): number {
  let newest = 0;
  for (const entry of readdirSync(folder, { withFileTypes: true })) {
    const path = join(folder, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestModified(path) : statSync(path).mtimeMs);
  }
  return newest;
}

function builtAt(): number {
  try {
    return statSync(join(root, 'dist', 'bin', 'ckql.js')).mtimeMs;
  } catch {
    return -1;
  }
}

function webBuiltAt(): number {
  try {
    return statSync(join(root, 'dist', 'web', 'play.js')).mtimeMs;
  } catch {
    return -1;
  }
}

export default async function setup(): Promise<void> {
  // The two bundles write different parts of dist/, so they are built at once, each in its own process.
  await Promise.all([buildBin(), buildWeb()]);
}

/** The playground page (served by `ckql serve`, driven in Chromium by test/e2e): rebuilt when web/ or src/ changed. */
async function buildWeb(): Promise<void> {
  if (webBuiltAt() > Math.max(newestModified(join(root, 'src')), newestModified(join(root, 'web')), statSync(join(root, 'scripts', 'bundle-web.ts')).mtimeMs)) return;
  await run(join(root, 'scripts', 'bundle-web.ts'));
}

async function buildBin(): Promise<void> {
  if (builtAt() > Math.max(newestModified(join(root, 'src')), statSync(join(root, 'scripts', 'bundle-bin.ts')).mtimeMs)) return;
  await run(join(root, 'scripts', 'bundle-bin.ts'));
}

/** Runs a build script with tsx, its output shown; rejects when it fails. */
async function run(script: string): Promise<void> {
  const { stdout, stderr } = await promisify(execFile)(process.execPath, ['--import', 'tsx', script], { cwd: root });
  process.stdout.write(stdout);
  process.stderr.write(stderr);
}

/**
 * Builds `dist/` once before the test files run, when it is missing or older
 * than a file in `src/` (as `npm run build` does, less its type check, which
 * is `npm run typecheck`: the declarations, then the bundles):
 * the few real-process tests (exit statuses, signals, `serve`, the bin) run
 * the built bin, not `tsx`, so no test pays for transpiling the CLI at every
 * start, and the bin that ships is the one tested.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { emitDeclarations } from '../scripts/emit-declarations.js';

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

export default function setup(): void {
  buildBin();
  // The playground page (served by `ckql serve`, driven in Chromium by test/e2e): rebuilt when web/ or src/ changed.
  if (webBuiltAt() > Math.max(newestModified(join(root, 'src')), newestModified(join(root, 'web')), statSync(join(root, 'scripts', 'bundle-web.ts')).mtimeMs)) return;
  execFileSync(process.execPath, ['--import', 'tsx', join(root, 'scripts', 'bundle-web.ts')], { cwd: root, stdio: 'inherit' });
}

function buildBin(): void {
  if (builtAt() > Math.max(newestModified(join(root, 'src')), statSync(join(root, 'scripts', 'bundle-bin.ts')).mtimeMs, statSync(join(root, 'scripts', 'emit-declarations.ts')).mtimeMs)) return;
  emitDeclarations();
  execFileSync(process.execPath, ['--import', 'tsx', join(root, 'scripts', 'bundle-bin.ts')], { cwd: root, stdio: 'inherit' });
}

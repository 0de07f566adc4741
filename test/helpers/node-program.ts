/**
 * Runs a small ESM program that imports the project's TypeScript sources in a
 * fresh `node` with the given flags (e.g. `--disallow-code-generation-from-strings`),
 * and returns what it printed. The program is bundled by esbuild first (tens
 * of milliseconds) rather than run under `--import tsx`, whose start-up and
 * on-the-fly transforms cost over a second of CPU per process.
 */
import { execFileSync } from 'node:child_process';
import { buildSync } from 'esbuild';
import { repoRoot } from '../cli/run-ckql.js';

export function runNodeProgram(source: string, flags: readonly string[] = []): string {
  const bundled = buildSync({
    stdin: { contents: source, loader: 'ts', resolveDir: repoRoot, sourcefile: 'program.ts' },
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    packages: 'external',
    write: false,
    logLevel: 'silent',
  });
  const code = bundled.outputFiles[0]!.text;
  // On stdin: a bundle can outgrow the longest argument Linux allows (128 KiB).
  return execFileSync(process.execPath, [...flags, '--input-type=module', '-'], { cwd: repoRoot, input: code, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
}

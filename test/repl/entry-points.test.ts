/**
 * The package root stays free of ink (yoga-layout's top-level await makes
 * `require('ink')` fail, and with it `require('ckql')`); the REPL is reached
 * through `ckql/repl`. Checked on the source: every module the root imports
 * statically, followed to the end.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));

/** Static imports and re-exports (`import … from`, `export … from`, `import '…'`) that load at run time; `import()` stays lazy. */
function staticImports(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const found: string[] = [];
  for (const match of text.matchAll(/^\s*(?:import|export)\s[^;]*?from\s+['"]([^'"]+)['"]|^\s*import\s+['"]([^'"]+)['"]/gm)) {
    // `import type` is erased at run time: it loads nothing.
    if (/^\s*(?:import|export)\s+type\s/.test(match[0])) continue;
    const specifier = match[1] ?? match[2];
    if (specifier !== undefined) found.push(specifier);
  }
  return found;
}

function sourceFile(from: string, specifier: string): string {
  const base = resolve(dirname(from), specifier).replace(/\.js$/, '');
  for (const candidate of [`${base}.ts`, `${base}.tsx`, `${base}.d.ts`, join(base, 'index.ts')]) if (existsSync(candidate)) return candidate;
  throw new Error(`${relative(root, from)} imports ${specifier}, which has no source file`);
}

/** Every module reached from `entry`, and every package it names. */
function graph(entry: string): { modules: Set<string>; packages: Set<string> } {
  const modules = new Set<string>();
  const packages = new Set<string>();
  const queue = [entry];
  while (queue.length > 0) {
    const file = queue.pop() as string;
    if (modules.has(file)) continue;
    modules.add(file);
    for (const specifier of staticImports(file)) {
      if (specifier.startsWith('.')) queue.push(sourceFile(file, specifier));
      else packages.add(specifier.startsWith('@') ? specifier.split('/').slice(0, 2).join('/') : (specifier.split('/')[0] ?? specifier));
    }
  }
  return { modules, packages };
}

describe('entry points', () => {
  it('the package root never imports ink, react or the REPL', () => {
    const { modules, packages } = graph(join(root, 'src', 'index.ts'));
    expect(modules.size).toBeGreaterThan(10);
    expect([...packages].filter((name) => ['ink', 'react', 'react-reconciler', 'yoga-layout'].includes(name))).toEqual([]);
    expect([...modules].map((file) => relative(root, file)).filter((file) => file.startsWith('src/repl/'))).toEqual([]);
  });

  it('ckql/repl is the REPL entry and does reach ink', () => {
    const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { exports: Record<string, { default: string }> };
    expect(pkg.exports['./repl']?.default).toBe('./dist/lib/repl.js');
    const { packages } = graph(join(root, 'src', 'repl', 'index.ts'));
    expect(packages).toContain('ink');
  });

  it('the built root (dist/lib/index.js, the bundle the package exports) loads neither ink nor react, and ckql/repl does', () => {
    const lib = join(root, 'dist', 'lib');
    const reached = (entry: string): Set<string> => {
      const files = new Set<string>();
      const names = new Set<string>();
      const queue = [entry];
      while (queue.length > 0) {
        const file = queue.pop() as string;
        if (files.has(file)) continue;
        files.add(file);
        // esbuild writes static imports as `import{…}from"./chunk-….js"` / `from"pkg"`
        for (const match of readFileSync(join(lib, file), 'utf8').matchAll(/\bfrom\s*"([^"]+)"/g)) {
          const specifier = match[1] as string;
          if (specifier.startsWith('./')) queue.push(specifier.slice(2));
          else names.add(specifier);
        }
      }
      return names;
    };
    const fromRoot = reached('index.js');
    expect(fromRoot.has('chevrotain')).toBe(false); // bundled in
    expect([...fromRoot].filter((name) => ['ink', 'react'].includes(name))).toEqual([]);
    expect(reached('repl.js').has('ink')).toBe(true);
  });
});

/**
 * What an installer and an embedder get: the package's files (a LICENSE, no
 * source maps pointing at the unshipped `src/`, no install-time build), and a
 * strict `tsc --module nodenext` check of the README's embedding sample
 * against the built `.d.ts` files, with and without `@types/node` in the
 * embedder's project.
 */
import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { repoRoot } from './run-ckql.js';

const pkg = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as {
  license: string;
  files: string[];
  scripts: Record<string, string>;
  bin: Record<string, string>;
};

function filesUnder(folder: string): string[] {
  return readdirSync(folder, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? filesUnder(join(folder, entry.name)) : [join(folder, entry.name)],
  );
}

const temp: string[] = [];
afterAll(async () => {
  await Promise.all(temp.map((folder) => rm(folder, { recursive: true, force: true })));
});

describe('the package', () => {
  it('ships an MIT LICENSE, builds only when packed (no prepare on install), and its bin is the bundle', () => {
    expect(pkg.license).toBe('MIT');
    expect(pkg.files).toContain('LICENSE');
    expect(readFileSync(join(repoRoot, 'LICENSE'), 'utf8')).toMatch(/^MIT License/);
    expect(pkg.scripts.prepare).toBeUndefined();
    expect(pkg.scripts.prepack).toBe('npm run build');
    expect(pkg.bin.ckql).toBe('./dist/bin/ckql.js');
    expect(readFileSync(join(repoRoot, 'dist', 'bin', 'ckql.js'), 'utf8')).toMatch(/^#!\/usr\/bin\/env node\n/);
  });

  it('dist/ holds no source map (src/ is not shipped, so a map would point nowhere)', () => {
    const maps = filesUnder(join(repoRoot, 'dist')).filter((file) => file.endsWith('.map') || readFileSync(file, 'utf8').includes('sourceMappingURL'));
    expect(maps).toEqual([]);
  });
});

/** The README's embedding sample, as an embedder would paste it. */
function embeddingSample(): string {
  const readme = readFileSync(join(repoRoot, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## Embedding ckql'));
  const sample = /```ts\n([\s\S]*?)```/.exec(section)?.[1];
  if (sample === undefined) throw new Error('README has no ts sample under "Embedding ckql"');
  return sample;
}

async function embedderProject(withNodeTypes: boolean): Promise<string> {
  const project = await mkdtemp(join(tmpdir(), 'ckql-embedder-'));
  temp.push(project);
  await mkdir(join(project, 'node_modules', '@types'), { recursive: true });
  await symlink(repoRoot, join(project, 'node_modules', 'ckql'), 'dir');
  if (withNodeTypes) await symlink(join(repoRoot, 'node_modules', '@types', 'node'), join(project, 'node_modules', '@types', 'node'), 'dir');
  await writeFile(join(project, 'package.json'), JSON.stringify({ name: 'embedder', private: true, type: 'module' }));
  await writeFile(
    join(project, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        strict: true,
        module: 'nodenext',
        moduleResolution: 'nodenext',
        target: 'es2022',
        noEmit: true,
        skipLibCheck: false,
        types: withNodeTypes ? ['node'] : [],
        // Node's types bring console; the DOM library (large, slow to check) is only needed without them.
        ...(withNodeTypes ? { lib: ['es2022'] } : {}),
      },
      files: ['sample.ts'],
    }),
  );
  await writeFile(join(project, 'sample.ts'), embeddingSample());
  return project;
}

describe('an embedder type-checks the README sample against dist/', () => {
  it.concurrent.each([
    ['without @types/node', false],
    ['with @types/node', true],
  ])('%s', { timeout: 90_000 }, async (_name, withNodeTypes) => {
    expect(existsSync(join(repoRoot, 'dist', 'index.d.ts'))).toBe(true);
    const project = await embedderProject(withNodeTypes);
    const tsc = join(repoRoot, 'node_modules', 'typescript', 'bin', 'tsc');
    const result = await promisify(execFile)(process.execPath, [tsc, '-p', project], { cwd: project }).then(
      ({ stdout }) => stdout,
      (error: { stdout?: string }) => `failed: ${error.stdout ?? String(error)}`,
    );
    expect(result).toBe('');
  });
});

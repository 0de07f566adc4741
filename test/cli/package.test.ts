/**
 * What an installer and an embedder get: the package's files (a LICENSE, no
 * source maps pointing at the unshipped `src/`, no install-time build), a
 * strict `--module nodenext` type check of the README's embedding sample
 * against the built `.d.ts` files, with and without `@types/node` in the
 * embedder's project, and the sample run as written against a local server.
 */
import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { transform } from 'esbuild';
import ts from 'typescript';
import { loadResources } from '../../src/engine/node/load-resources.js';
import { startServer } from '../../src/server/server.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { emitDeclarations } from '../../scripts/emit-declarations.js';
import { repoRoot } from './run-ckql.js';

const pkg = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as {
  license: string;
  files: string[];
  scripts: Record<string, string>;
  bin: Record<string, string>;
};

/** The newest modification time of a file under `folder`, in ms. */
function newestModified(folder: string): number {
  return Math.max(0, ...filesUnder(folder).map((file) => statSync(file).mtimeMs));
}

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

  it("keeps the bin's code in lines: an uncaught error shows its line, which must not be a minified bundle's hundreds of kilobytes", () => {
    const code = filesUnder(join(repoRoot, 'dist', 'bin')).filter((file) => file.endsWith('.js'));
    const lines = code.flatMap((file) => readFileSync(file, 'utf8').split('\n'));
    expect(lines.length).toBeGreaterThan(10_000);
    // A few lines are long data (a dependency's embedded WebAssembly, as base64): nearly all are code of a normal width.
    const long = lines.filter((line) => line.length > 1_000);
    expect(long.length / lines.length).toBeLessThan(0.002);
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

/**
 * An embedder's project: `node_modules/ckql` is this package (its `dist/`),
 * `@types/node` only when asked for. Without it, the sample's
 * `process.env` is declared as a bundler for a browser provides it.
 */
async function embedderProject(withNodeTypes: boolean): Promise<string> {
  const project = await mkdtemp(join(tmpdir(), 'ckql-embedder-'));
  temp.push(project);
  await mkdir(join(project, 'node_modules', '@types'), { recursive: true });
  await symlink(repoRoot, join(project, 'node_modules', 'ckql'), 'dir');
  if (withNodeTypes) await symlink(join(repoRoot, 'node_modules', '@types', 'node'), join(project, 'node_modules', '@types', 'node'), 'dir');
  await writeFile(join(project, 'package.json'), JSON.stringify({ name: 'embedder', private: true, type: 'module' }));
  const preamble = withNodeTypes ? '' : 'declare const process: { readonly env: Record<string, string | undefined> };\n';
  await writeFile(join(project, 'sample.ts'), preamble + embeddingSample());
  // and the same with a mistake, which the check must see: a query is text, not a number
  await writeFile(join(project, 'mistake.ts'), `${preamble}${embeddingSample()}\ncompile(42);\n`);
  return project;
}

/**
 * Type-checks the sample as `tsc --strict --module nodenext` would, in this
 * process: the sample's diagnostics and those of every `.d.ts` of `dist/`
 * (an embedder's `skipLibCheck: false` reports those), not the
 * dependencies' own declarations, which are theirs to check. The sample
 * and its copy with a mistake are checked in one program (each is a module
 * of its own). Files read once serve both projects.
 */
const sourceFiles = new Map<string, ts.SourceFile | undefined>();
function typeErrors(project: string, withNodeTypes: boolean): string[] {
  const options: ts.CompilerOptions = {
    strict: true,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    noEmit: true,
    types: withNodeTypes ? ['node'] : [],
    // Node's types bring console; the DOM library is only needed without them.
    ...(withNodeTypes ? { lib: ['lib.es2022.d.ts'] } : {}),
  };
  const host = ts.createCompilerHost(options);
  const read = host.getSourceFile.bind(host);
  host.getSourceFile = (fileName, languageVersion, ...rest) => {
    const key = `${fileName}\0${JSON.stringify(languageVersion)}`;
    if (!sourceFiles.has(key) || fileName.startsWith(project)) sourceFiles.set(key, read(fileName, languageVersion, ...rest));
    return sourceFiles.get(key);
  };
  const roots = [join(project, 'sample.ts'), join(project, 'mistake.ts')];
  const program = ts.createProgram(roots, options, host);
  // The package's files resolve through the symlink to this checkout's dist/.
  const dist = `${join(repoRoot, 'dist')}/`;
  const ours = program.getSourceFiles().filter((file) => file.fileName.startsWith(dist) || roots.includes(file.fileName));
  const diagnostics = [
    ...program.getOptionsDiagnostics(),
    ...program.getGlobalDiagnostics(),
    ...ours.flatMap((file) => [...program.getSyntacticDiagnostics(file), ...program.getSemanticDiagnostics(file)]),
  ];
  expect(ours.filter((file) => file.fileName.startsWith(dist)).length, 'the sample reached the built declarations').toBeGreaterThan(10);
  return diagnostics.map((d) => `${d.file?.fileName ?? ''}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`);
}

describe('an embedder type-checks the README sample against dist/, and runs it', () => {
  // The declarations are written here, not in the tests' global set-up: this is their only reader, and the
  // set-up holds back every file until it ends (≈ 1.5 s with TypeScript loaded for them). As the set-up does for
  // the bundles, they are written again only when something they are made from changed since the last time they
  // were written whole (the stamp is written after a successful emit; 1.5–4.5 s of CPU when the machine is busy).
  beforeAll(() => {
    const stamp = join(repoRoot, 'dist', '.declarations-written');
    const madeFrom = Math.max(newestModified(join(repoRoot, 'src')), ...['scripts/emit-declarations.ts', 'tsconfig.build.json', 'tsconfig.json'].map((file) => statSync(join(repoRoot, file)).mtimeMs));
    if (existsSync(stamp) && statSync(stamp).mtimeMs > madeFrom) return;
    emitDeclarations();
    writeFileSync(stamp, '');
  });

  it.each([
    ['without @types/node', false],
    ['with @types/node', true],
  ])('%s', { timeout: 90_000 }, async (_name, withNodeTypes) => {
    expect(existsSync(join(repoRoot, 'dist', 'index.d.ts'))).toBe(true);
    const project = await embedderProject(withNodeTypes);
    const errors = typeErrors(project, withNodeTypes);
    expect(errors.filter((line) => !line.startsWith(join(project, 'mistake.ts')))).toEqual([]);
    expect(errors).toEqual([`${join(project, 'mistake.ts')}: Argument of type 'number' is not assignable to parameter of type 'string | Query'.`]);
  });

  it('runs as written, against ckql serve on the demo data for the portal', { timeout: 90_000 }, async () => {
    const project = await embedderProject(true);
    const server = await startServer({ tables: await loadResources(join(repoRoot, 'examples', 'data')) });
    try {
      const sample = embeddingSample();
      expect(sample).toContain("'https://data.example.org'");
      // As an embedder's build would: the TypeScript made JavaScript (esbuild, as this package's own build does; tsx
      // cost a second of CPU more), then run by node, importing `ckql` through node_modules and the package's exports.
      const { code } = await transform(sample.replace("'https://data.example.org'", JSON.stringify(server.url)), { loader: 'ts', format: 'esm', target: 'node20' });
      await writeFile(join(project, 'sample.mjs'), code);
      const env = { ...process.env };
      delete env.PORTAL_TOKEN;
      const { stdout } = await promisify(execFile)(process.execPath, ['sample.mjs'], { cwd: project, env });
      // the grouped query run as a plan through the client, the requests read back, a grouping of records in hand
      expect(stdout).toBe(
        '[{"subject":"computing","n":65},{"subject":"math","n":65}]\nfrom courses\nwhere stage in (a, b)\nfrom courses\nwhere level >= 3\nlimit 100\n' +
          '[{"level":1,"n":1},{"level":3,"n":1}]\n',
      );
    } finally {
      await server.close();
    }
  });
});

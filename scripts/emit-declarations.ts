/**
 * Writes the library's `.d.ts` files into `dist/`: those of its entry points
 * (`src/index.ts`, `src/repl/index.ts`, as package.json's `exports` name
 * them) and of every module their declarations import.
 *
 * Each file's declarations are emitted from that file alone
 * (`ts.transpileDeclaration`, TypeScript's isolated declarations), which
 * takes about a second where `tsc`'s declaration emit, which needs the whole
 * program's types, took ten: the build and the test set-up do not type-check
 * twice (the type check is `npm run typecheck`, and `npm run build` runs it
 * first). That needs each exported declaration of these files to say its
 * type; where one does not, the file's declarations could differ from tsc's,
 * so this script fails and names the place instead of writing them.
 *
 *   tsx scripts/emit-declarations.ts
 */
import { mkdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const root = fileURLToPath(new URL('..', import.meta.url));
const src = path.join(root, 'src');
const dist = path.join(root, 'dist');

/** The compiler options of `tsconfig.build.json`, with isolated declarations on. */
function options(): ts.CompilerOptions {
  const file = path.join(root, 'tsconfig.build.json');
  const config = ts.getParsedCommandLineOfConfigFile(file, {}, {
    ...ts.sys,
    onUnRecoverableConfigFileDiagnostic: (diagnostic) => {
      throw new Error(ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'));
    },
  });
  if (config === undefined) throw new Error(`cannot read ${file}`);
  return { ...config.options, declaration: true, isolatedDeclarations: true, emitDeclarationOnly: true, noEmit: false };
}

/** The source file a relative `./x.js` written in `from` names (`.ts`, `.tsx`, or a folder's `index.ts`). */
function sourceOf(from: string, specifier: string): string {
  const base = path.resolve(path.dirname(from), specifier.replace(/\.js$/, ''));
  for (const candidate of [`${base}.ts`, `${base}.tsx`, path.join(base, 'index.ts')]) if (existsSync(candidate)) return candidate;
  throw new Error(`${path.relative(root, from)}: cannot find the module ${specifier}`);
}

/** Emits the declarations of the entry points and of what they import; returns the files written. */
export function emitDeclarations(entries: readonly string[] = ['index.ts', 'repl/index.ts']): string[] {
  const compilerOptions = options();
  const queue = entries.map((entry) => path.join(src, entry));
  const done = new Set<string>();
  const problems: string[] = [];
  const written: string[] = [];
  while (queue.length > 0) {
    const file = queue.pop()!;
    if (done.has(file)) continue;
    done.add(file);
    const text = readFileSync(file, 'utf8');
    const out = ts.transpileDeclaration(text, { fileName: file, compilerOptions, reportDiagnostics: true });
    for (const diagnostic of out.diagnostics ?? []) {
      const at = diagnostic.file !== undefined && diagnostic.start !== undefined ? diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start) : undefined;
      const where = at === undefined ? path.relative(root, file) : `${path.relative(root, file)}:${at.line + 1}:${at.character + 1}`;
      problems.push(`${where}: ${ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n')}`);
    }
    // What the declarations import (types only, so this is the part of src/ an embedder's compiler reads).
    for (const match of out.outputText.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*)(['"])(\.{1,2}\/[^'"]+)\1/g)) queue.push(sourceOf(file, match[2]!));
    const target = path.join(dist, path.relative(src, file)).replace(/\.tsx?$/, '.d.ts');
    mkdirSync(path.dirname(target), { recursive: true });
    writeFileSync(target, out.outputText);
    written.push(target);
  }
  if (problems.length > 0) {
    throw new Error(`declarations cannot be emitted file by file; give these exported declarations a type:\n${problems.join('\n')}`);
  }
  return written;
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  const written = emitDeclarations();
  console.log(`wrote ${written.length} declaration files into dist/`);
}

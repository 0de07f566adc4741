/**
 * VS Code's own TextMate engine (`vscode-textmate` with the Oniguruma
 * WebAssembly build) over the generated ckql grammars, with the
 * TypeScript, YAML and Markdown grammars of `tm-grammars` as hosts for the
 * injections.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import vsctm from 'vscode-textmate';
import oniguruma from 'vscode-oniguruma';

const require = createRequire(import.meta.url);
const root = fileURLToPath(new URL('../../', import.meta.url));

const files: Readonly<Record<string, string>> = {
  'source.ckql': `${root}grammar/ckql.tmLanguage.json`,
  'inline.ckql.template': `${root}grammar/ckql-template.injection.tmLanguage.json`,
  'inline.ckql.yaml': `${root}grammar/ckql-yaml.injection.tmLanguage.json`,
  'inline.ckql.markdown': `${root}grammar/ckql-markdown.injection.tmLanguage.json`,
  'source.ts': require.resolve('tm-grammars/grammars/typescript.json'),
  'source.js': require.resolve('tm-grammars/grammars/javascript.json'),
  'source.yaml': require.resolve('tm-grammars/grammars/yaml.json'),
  'text.html.markdown': require.resolve('tm-grammars/grammars/markdown.json'),
};

const injections: Readonly<Record<string, string[]>> = {
  'source.ts': ['inline.ckql.template'],
  'source.js': ['inline.ckql.template'],
  'source.yaml': ['inline.ckql.yaml'],
  'text.html.markdown': ['inline.ckql.markdown'],
};

let registry: vsctm.Registry | undefined;

async function theRegistry(): Promise<vsctm.Registry> {
  if (registry !== undefined) return registry;
  const wasm = readFileSync(require.resolve('vscode-oniguruma/release/onig.wasm'));
  await oniguruma.loadWASM(wasm.buffer.slice(wasm.byteOffset, wasm.byteOffset + wasm.byteLength) as ArrayBuffer);
  registry = new vsctm.Registry({
    onigLib: Promise.resolve({
      createOnigScanner: (patterns: string[]) => new oniguruma.OnigScanner(patterns),
      createOnigString: (text: string) => new oniguruma.OnigString(text),
    }),
    loadGrammar: async (scope: string) => {
      const file = files[scope];
      return file === undefined ? null : vsctm.parseRawGrammar(readFileSync(file, 'utf8'), file);
    },
    getInjections: (scope: string) => injections[scope],
  });
  return registry;
}

export interface ScopedToken {
  /** offset in the whole text */
  readonly start: number;
  readonly end: number;
  readonly text: string;
  readonly scopes: readonly string[];
}

/** The tokens of `text` in the grammar `scope`, line by line as an editor reads them. */
export async function tokenize(scope: string, text: string): Promise<ScopedToken[]> {
  const grammar = await (await theRegistry()).loadGrammar(scope);
  if (grammar === null) throw new Error(`no grammar ${scope}`);
  const out: ScopedToken[] = [];
  let state = vsctm.INITIAL;
  let offset = 0;
  for (const line of text.split('\n')) {
    const result = grammar.tokenizeLine(line, state);
    for (const token of result.tokens) {
      const end = Math.min(token.endIndex, line.length);
      out.push({ start: offset + token.startIndex, end: offset + end, text: line.slice(token.startIndex, end), scopes: token.scopes });
    }
    state = result.ruleStack;
    offset += line.length + 1;
  }
  return out;
}

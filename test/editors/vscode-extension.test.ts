/**
 * The VS Code extension folder (editors/vscode) fits what the repository
 * generates: every grammar it contributes is one `npm run build` writes,
 * with the same scope name and the hosts its injection selector names; the
 * schema it gives YAML, JSON and TOML files is the published one, for the
 * file names ckql's config search reads; and the command it starts exists.
 */
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { expect, it } from 'vitest';
import { configSearchPlaces } from '../../src/config/load.js';
import { ckql } from '../cli/run-ckql.js';

const root = new URL('../../', import.meta.url);
const extension = JSON.parse(readFileSync(new URL('editors/vscode/package.json', root), 'utf8')) as {
  contributes: {
    grammars: { scopeName: string; path: string; injectTo?: string[]; language?: string }[];
    yamlValidation: { fileMatch: string[]; url: string }[];
    jsonValidation: { fileMatch: string[]; url: string }[];
    tomlValidation: { regexMatch: string; url: string }[];
  };
};

it('contributes the generated grammars, with their scope names and injection hosts', () => {
  for (const grammar of extension.contributes.grammars) {
    // copy-generated.mjs copies grammar/<name> to syntaxes/<name>.
    const generated = JSON.parse(readFileSync(new URL(`grammar/${basename(grammar.path)}`, root), 'utf8')) as { scopeName: string; injectionSelector?: string };
    expect(generated.scopeName).toBe(grammar.scopeName);
    if (grammar.injectTo !== undefined) {
      const hosts = [...(generated.injectionSelector ?? '').matchAll(/L:(\S+)/g)].map((m) => m[1]);
      expect(hosts.filter((host) => grammar.injectTo!.includes(host!)).length, grammar.scopeName).toBeGreaterThan(0);
    }
  }
  expect(extension.contributes.grammars.find((g) => g.language === 'ckql')?.scopeName).toBe('source.ckql');
});

it('validates every config file name ckql reads with the published schema', () => {
  const urls = [...extension.contributes.yamlValidation, ...extension.contributes.jsonValidation, ...extension.contributes.tomlValidation].map((v) => v.url);
  expect(new Set(urls)).toEqual(new Set(['./schemas/ckql-config.schema.json']));
  const matched = (name: string): boolean =>
    [...extension.contributes.yamlValidation, ...extension.contributes.jsonValidation].some((v) => v.fileMatch.includes(name)) ||
    extension.contributes.tomlValidation.some((v) => new RegExp(v.regexMatch).test(name));
  for (const name of configSearchPlaces) expect(matched(name), name).toBe(true);
});

it('starts a command that exists: ckql lsp --stdio', async () => {
  const client = readFileSync(new URL('editors/vscode/client.js', root), 'utf8');
  expect(client).toContain("args: ['lsp', '--stdio']");
  const help = await ckql(['lsp', '--help']);
  expect(help.code).toBe(0);
  expect(help.stdout).toContain('--stdio');
});

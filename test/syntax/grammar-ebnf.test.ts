import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { QueryParser, queryParser } from '../../src/syntax/parser.js';
import { allTokens, Keyword } from '../../src/syntax/tokens.js';

const ebnf = readFileSync(new URL('../../grammar/query.ebnf', import.meta.url), 'utf8').replace(/\(\*[\s\S]*?\*\)/g, '');

/** Names defined in query.ebnf (`name = …;`). */
const defined = [...ebnf.matchAll(/^([A-Za-z][A-Za-z0-9]*)\s*=/gm)].map((m) => m[1]!);

describe('the parser', () => {
  it("passes Chevrotain's grammar checks (queryParser() skips them at run time)", () => {
    // Chevrotain throws "Parser Definition Errors detected" for an ambiguous or left-recursive rule.
    const checked = new QueryParser(true);
    expect(Object.keys(checked.getGAstProductions())).toEqual(Object.keys(queryParser().getGAstProductions()));
  });
});

describe('grammar/query.ebnf', () => {
  const rules = Object.keys(queryParser().getGAstProductions());

  it('defines every rule of the parser, spelled the same', () => {
    expect(defined.filter((name) => /^[a-z]/.test(name) && rules.includes(name)).sort()).toEqual([...rules].sort());
  });

  it('names only tokens that exist, and defines each token it uses', () => {
    const tokenNames = new Set(allTokens.map((t) => t.name));
    const unquoted = ebnf.replace(/"[^"]*"|'[^']*'/g, '');
    const usedTokens = new Set([...unquoted.matchAll(/\b([A-Z][A-Za-z]*)\b/g)].map((m) => m[1]!));
    for (const name of usedTokens) expect(tokenNames.has(name), name).toBe(true);
    for (const name of usedTokens) expect(defined, name).toContain(name);
  });

  it('uses the same terminals as the parser in each rule', () => {
    // keywords and punctuation are written as their text, other tokens by name
    const literal = new Map(
      allTokens
        .filter((t) => typeof t.PATTERN === 'string' || t.CATEGORIES?.includes(Keyword))
        .map((t) => [t.name, t.LABEL!]),
    );
    const productions = queryParser().getSerializedGastProductions() as unknown as { name: string; definition: unknown[] }[];
    for (const rule of productions) {
      const text = ebnf.slice(ebnf.search(new RegExp(`^${rule.name}\\s*=`, 'm')));
      const body = text.slice(0, text.search(/;\s*$/m));
      const terminals = new Set<string>();
      const walk = (node: unknown) => {
        if (Array.isArray(node)) node.forEach(walk);
        else if (node && typeof node === 'object') {
          const n = node as { type?: string; name?: string; label?: string; definition?: unknown[] };
          if (n.type === 'Terminal') terminals.add(literal.has(n.name!) ? `"${literal.get(n.name!)}"` : n.name!);
          if (n.definition) walk(n.definition);
        }
      };
      walk(rule.definition);
      for (const terminal of terminals) {
        const wanted = terminal.startsWith('"') ? terminal : new RegExp(`\\b${terminal}\\b`);
        expect(body, `${rule.name} uses ${terminal}`).toMatch(wanted);
      }
    }
  });
});

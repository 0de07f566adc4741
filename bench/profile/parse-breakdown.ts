/**
 * Where the time of `compile(text)` goes (section 1), stage by stage, on the
 * bench corpus, from the tsc build: lex (`queryLexer`), parse (CST),
 * CST → AST, AST → request; beside JSON.parse of the request text. CPU
 * time, as section 1 measures (bench/lib/harness.ts, `clock`). The AST →
 * request stage reuses twelve parsed ASTs; a fresh one costs ≈ 0.4 µs more.
 *
 *   tsx bench/profile/parse-breakdown.ts
 */
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { CstNode, IToken } from 'chevrotain';
import type { Query } from '../../src/ast.js';
import { ckqlModules, distDir } from '../lib/ckql.js';
import { CORPUS } from '../lib/corpus.js';
import { measureSync } from '../lib/harness.js';

const internal = async <T>(rel: string) => (await import(pathToFileURL(path.join(distDir, rel)).href)) as T;
const { queryLexer } = await internal<{ queryLexer: { tokenize(text: string): { tokens: IToken[] } } }>('syntax/tokens.js');
const { queryParser } = await internal<{ queryParser: () => { input: IToken[]; query(): CstNode } }>('syntax/parser.js');
const { toAst } = await internal<{ toAst(cst: CstNode, source: string): Query }>('syntax/to-ast.js');
const [{ compile }, { parse }] = await Promise.all([ckqlModules.compile(), ckqlModules.parse()]);

const sources = CORPUS.map((c) => c.ckql);
const tokens = sources.map((s) => queryLexer.tokenize(s).tokens);
const csts = tokens.map((t) => { queryParser().input = t; return queryParser().query(); });
const asts = sources.map((s) => parse(s));
const json = sources.map((s) => JSON.stringify(compile(s)));
const each = <T>(list: readonly T[], f: (x: T, i: number) => unknown) => () => { let last; for (let p = 0; p < 20; p++) list.forEach((x, i) => { last = f(x, i); }); return last; };
const m = measureSync([
  { name: 'lex', fn: each(sources, (s) => queryLexer.tokenize(s)) },
  { name: 'parse to CST', fn: each(tokens, (t) => { queryParser().input = t; return queryParser().query(); }) },
  { name: 'CST to AST', fn: each(csts, (c, i) => toAst(c, sources[i] as string)) },
  { name: 'AST to request', fn: each(asts, (a) => compile(a)) },
  { name: 'compile(text) total', fn: each(sources, (s) => compile(s)) },
  { name: 'JSON.parse', fn: each(json, (j) => JSON.parse(j) as unknown) },
], { timeMs: 2000, minSamples: 30, rounds: 3, warmupMs: 300, clock: 'cpu' });
const per = (ms: number) => (ms * 1000) / (sources.length * 20);
for (const x of m.values()) console.log(`${x.name.padEnd(20)} ${per(x.median).toFixed(2).padStart(6)} µs/query`);

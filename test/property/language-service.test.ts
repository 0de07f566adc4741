/**
 * Properties of the language service on generated queries and on any text:
 * diagnostics and fixes stay inside the text; completion at every position
 * answers and never throws; the highlighter's tokens are the lexer's, and a
 * soft keyword is painted a keyword exactly where the parser's syntax tree
 * holds it as one.
 */
import type { CstElement, CstNode, IToken } from 'chevrotain';
import fc from 'fast-check';
import { expect, test } from 'vitest';
import { format } from '../../src/format.js';
import { complete, diagnose, highlight, hover, type LanguageContext } from '../../src/language-service/index.js';
import { queryParser } from '../../src/syntax/parser.js';
import { queryLexer } from '../../src/syntax/tokens.js';
import { anyText, fieldName, mutatedText, propertyParameters, queryArb } from '../helpers/arbitraries.js';

/** Field names that are soft keywords (or may become ones) beside ordinary and awkward names. */
const names = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom('language', 'first', 'last', 'nulls', 'count', 'Language', 'FIRST', 'subject', 'school year') },
  { weight: 2, arbitrary: fieldName },
);
const generated = queryArb({ whole: true, computed: true, fields: names }).map(format);
/** One to three generated queries as a script, some on one line. */
const scripts = fc.array(generated, { minLength: 1, maxLength: 3 }).chain((queries) =>
  fc.constantFrom(';\n', '; ', ';\n\n-- next\n').map((separator) => queries.join(separator)),
);

const context: LanguageContext = {
  allResources: true,
  resources: [{ id: 'places', alias: 'courses', fields: [{ id: 'subject', type: 'text' }, { id: 'count', type: 'int' }, { id: 'first', type: 'date' }] }],
  samples: () => ['math', 2020, 'Köln', null, true],
  params: { subject: 'math', n: 3 },
};

function inside(span: { start: number; end: number }, length: number): boolean {
  return Number.isInteger(span.start) && Number.isInteger(span.end) && 0 <= span.start && span.start <= span.end && span.end <= length;
}

function checkDiagnostics(text: string): void {
  for (const each of [diagnose(text), diagnose(text, context), diagnose(text, { ...context, target: 'ckan-2.12' })]) {
    for (const d of each) {
      expect(inside(d.span, text.length), `${d.code} at ${d.span.start}..${d.span.end} of ${text.length}`).toBe(true);
      expect(d.message.length).toBeGreaterThan(0);
      for (const fix of d.fixes) for (const edit of fix.edits) expect(inside(edit.span, text.length)).toBe(true);
    }
  }
}

test('every diagnostic and fix lies inside the text, for any text', () => {
  fc.assert(fc.property(anyText, checkDiagnostics), propertyParameters());
}, 120_000);

test('every diagnostic and fix lies inside the text, for generated scripts and their mutations', () => {
  fc.assert(fc.property(fc.oneof(scripts, mutatedText(scripts)), checkDiagnostics), propertyParameters());
}, 120_000);

test('completion and hover at every position of generated and mutated queries answer without throwing', () => {
  fc.assert(
    fc.property(fc.oneof(generated, mutatedText(generated)), (text) => {
      for (let cursor = 0; cursor <= text.length; cursor++) {
        const result = complete(text, cursor, context);
        expect(result.span.end).toBe(cursor);
        expect(result.span.start).toBeGreaterThanOrEqual(0);
        expect(result.span.start).toBeLessThanOrEqual(cursor);
        expect(text.slice(result.span.start, cursor)).toBe(result.prefix);
        for (const item of result.items) expect(item.insert.length).toBeGreaterThan(0);
        const over = hover(text, cursor, context);
        if (over !== undefined) expect(inside(over.span, text.length)).toBe(true);
      }
    }),
    propertyParameters(200),
  );
}, 120_000);

/** The tokens the parser's syntax tree holds under a soft keyword's own name: those it read as keywords. */
function softKeywordUses(node: CstNode, out = new Set<number>()): Set<number> {
  for (const [key, children] of Object.entries(node.children)) {
    for (const child of children as CstElement[]) {
      if ('children' in child) softKeywordUses(child, out);
      else if (['Nulls', 'First', 'Last', 'Language'].includes(key)) out.add((child as IToken).startOffset);
    }
  }
  return out;
}

test("the highlighter's tokens are the lexer's, and soft keywords are keywords exactly where the parser reads them so", () => {
  fc.assert(
    fc.property(generated, (text) => {
      const lexed = queryLexer.tokenize(text);
      expect(lexed.errors).toEqual([]);
      queryParser().input = lexed.tokens;
      const cst = queryParser().query();
      expect(queryParser().errors).toEqual([]);
      const keywordsAt = softKeywordUses(cst);

      const painted = highlight(text).filter((t) => t.class !== 'comment');
      expect(painted.map((t) => [t.start, t.end, t.type])).toEqual(
        lexed.tokens.map((t) => [t.startOffset, t.startOffset + t.image.length, t.tokenType.name]),
      );
      for (const token of painted) {
        if (!['Nulls', 'First', 'Last', 'Language'].includes(token.type)) continue;
        expect(token.class, `${text.slice(token.start, token.end)} at ${token.start} in ${JSON.stringify(text)}`).toBe(keywordsAt.has(token.start) ? 'keyword' : 'name');
      }
    }),
    propertyParameters(300),
  );
}, 120_000);

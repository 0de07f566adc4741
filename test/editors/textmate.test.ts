/**
 * The generated TextMate grammar, read by VS Code's own engine: it is what
 * `scripts/generate-textmate.ts` writes (never edited by hand, never stale),
 * it paints every character as ckql's lexer and the language service's
 * highlighter read it (soft keywords as fields where they are fields), and
 * its injections reach ckql in tagged templates, YAML `query:` values and
 * Markdown fences.
 */
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it, test } from 'vitest';
import { textmateFiles } from '../../scripts/generate-textmate.js';
import { format } from '../../src/format.js';
import { highlight, type TokenClass } from '../../src/language-service/index.js';
import { fieldName, propertyParameters, queryArb } from '../helpers/arbitraries.js';
import { tokenize, type ScopedToken } from '../helpers/textmate.js';

const root = new URL('../../', import.meta.url);

it('the committed grammar files are what the generator writes (npm run build regenerates them)', () => {
  for (const [path, text] of Object.entries(textmateFiles())) {
    expect(readFileSync(new URL(path, root), 'utf8'), `${path} is stale: run npm run build`).toBe(text);
  }
});

/** The highlighter's class of a TextMate token, by its innermost scope that says one. */
function classOf(scopes: readonly string[]): TokenClass | undefined {
  const has = (prefix: string): boolean => scopes.some((scope) => scope.startsWith(prefix));
  if (has('comment.')) return 'comment';
  if (has('invalid.')) return 'invalid';
  if (has('string.quoted.')) return 'string';
  if (has('variable.other.field.')) return 'field';
  if (has('keyword.operator.')) return 'operator';
  if (has('keyword.other.') || has('support.function.')) return 'keyword';
  if (has('constant.language.')) return 'constant';
  if (has('constant.numeric.')) return 'number';
  if (has('variable.parameter.')) return 'parameter';
  if (has('variable.other.') || has('constant.other.uuid.')) return 'name';
  if (has('punctuation.')) return 'punctuation';
  return undefined;
}

/** Each character's class, `undefined` for white space between tokens. */
function charClasses(length: number, tokens: readonly { start: number; end: number; class: TokenClass | undefined }[]): (TokenClass | undefined)[] {
  const out = new Array<TokenClass | undefined>(length).fill(undefined);
  for (const token of tokens) for (let i = token.start; i < token.end; i++) out[i] = token.class;
  return out;
}

function fromTextmate(tokens: readonly ScopedToken[]): { start: number; end: number; class: TokenClass | undefined }[] {
  return tokens.map((t) => ({ start: t.start, end: t.end, class: classOf(t.scopes) }));
}

const names = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom('language', 'first', 'last', 'nulls', 'count', 'FIRST', 'Language', 'school year', 'a`b', 'as', 'aS', 'on', 'join', 'left', 'having', 'facet', 'top', 'group', 'month') },
  { weight: 2, arbitrary: fieldName },
);

test('the grammar paints every character of generated queries as the lexer reads it, soft keywords included', async () => {
  const samples = fc.sample(queryArb({ whole: true, fields: names }).map(format), { numRuns: 100, ...propertyParameters() });
  // Also the cases a reader looks for first.
  samples.push('from t where language = en and first = 1 and count > 2 order by first nulls first, last desc nulls last search "x" language german');
  samples.push('from t where code like "MATH\\_1%" and title ilike \'%100\\%%\' and note = "a\\q"');
  // Expressions (docs/expressions.md): operators, calls, case and cast, and their words as names elsewhere.
  samples.push('from t where price * qty >= 100 and lower(name) || \'x\' = "ax" select *, round(avg(grade), 1) as mean, count(*) * 100.0 / 7, qty::int % 2');
  samples.push('from t select case when grade >= 5 then pass else fail end as result, cast(code as text), extract(year from d), end, case, when');
  samples.push('from t where coalesce(a, b) is not null and substr(code, 1, 4) = MATH-106 order by length(title) desc, price - 1');
  // A soft keyword as a field inside nested parentheses (a case this property found in CI).
  samples.push('from t where ((count = "x" or a = 1) and b = 2) order by (first)');
  for (const text of samples) {
    const expected = charClasses(text.length, highlight(text));
    const painted = charClasses(text.length, fromTextmate(await tokenize('source.ckql', text)));
    for (let i = 0; i < text.length; i++) {
      // A line break is where TextMate's lines meet, in no token of either side.
      if (text[i] === '\n' || (/\s/.test(text[i]!) && expected[i] === undefined)) continue;
      if (painted[i] !== expected[i]) {
        const around = `${text.slice(Math.max(0, i - 20), i)}⟦${text[i]}⟧${text.slice(i + 1, i + 20)}`;
        expect.fail(`at ${i} of ${JSON.stringify(text)}: the grammar paints ${painted[i]}, the lexer reads ${expected[i]}: ${around}`);
      }
    }
  }
}, 120_000);

describe('injections', () => {
  const scopesOf = (tokens: readonly ScopedToken[], text: string): string[] => {
    const token = tokens.find((t) => t.text === text);
    if (token === undefined) throw new Error(`no token ${JSON.stringify(text)} among ${tokens.map((t) => t.text).join('|')}`);
    return [...token.scopes];
  };

  it('paints ckql`…` templates in TypeScript and JavaScript, and leaves ${…} to the host', async () => {
    for (const scope of ['source.ts', 'source.js']) {
      const tokens = await tokenize(scope, 'const q = ckql`from courses where subject = ${wanted}\n  and language = en limit 5`;\nconst s = `where x`;');
      expect(scopesOf(tokens, 'where'), scope).toEqual(expect.arrayContaining(['meta.embedded.block.ckql', 'keyword.other.ckql']));
      expect(scopesOf(tokens, 'language')).toContain('variable.other.ckql');
      expect(scopesOf(tokens, 'wanted').some((s) => s.startsWith('meta.template.expression'))).toBe(true);
      // An ordinary template is the host's string.
      expect(scopesOf(tokens, 'where x').some((s) => s.startsWith('string.template'))).toBe(true);
    }
  });

  it('paints query: values in YAML, block scalars to the end of their indentation', async () => {
    const yaml = ['queries:', '  a:', '    query: |', '      from courses', '      where subject = $subject', '    params:', '      subject: math', '  b:', '    query: from schools limit 3', ''].join('\n');
    const tokens = await tokenize('source.yaml', yaml);
    expect(scopesOf(tokens, 'where')).toEqual(expect.arrayContaining(['meta.embedded.block.ckql', 'keyword.other.ckql']));
    expect(scopesOf(tokens, '$subject')).toContain('variable.parameter.ckql');
    expect(scopesOf(tokens, 'limit')).toEqual(expect.arrayContaining(['meta.embedded.line.ckql', 'keyword.other.ckql']));
    // `params:` after the block is YAML again.
    const line = yaml.indexOf('subject: math');
    const after = tokens.filter((t) => t.start >= line && t.start < line + 'subject: math'.length);
    expect(after.length).toBeGreaterThan(0);
    expect(after.some((t) => t.scopes.some((s) => s.includes('ckql')))).toBe(false);
  });

  it('paints ```ckql fences in Markdown and nothing outside them', async () => {
    const markdown = ['Some text with from and where.', '', '```ckql', 'from courses where subject = math', '```', '', 'where'].join('\n');
    const tokens = await tokenize('text.html.markdown', markdown);
    const inFence = tokens.filter((t) => t.text === 'where' && t.scopes.includes('meta.embedded.block.ckql'));
    expect(inFence).toHaveLength(1);
    expect(inFence[0]!.scopes).toContain('keyword.other.ckql');
    expect(tokens.filter((t) => t.scopes.includes('keyword.other.ckql')).map((t) => t.text)).toEqual(['from', 'where']);
  });
});

/**
 * Formatting a text for an editor: each statement of a script in its
 * canonical form (`format` of its AST), and nothing lost. Comments before
 * and after a statement and the white space between statements stay as
 * written; a statement with a comment inside it, or one that does not
 * parse, is left as it is (its AST keeps no comments, and a broken statement
 * has no canonical form).
 */
import { format as formatQuery } from '../format.js';
import type { Span } from '../span.js';
import { parse } from '../syntax/parse.js';
import { lexAll } from './lex.js';
import { statementsOf } from './script.js';

export interface FormatResult {
  /** the formatted text */
  readonly text: string;
  /** statements left as written, and why */
  readonly unchanged: readonly { readonly span: Span; readonly reason: 'comment inside' | 'does not parse' }[];
}

/**
 * @example
 * format('FROM courses LIMIT 5 WHERE stage = "active"').text // → 'from courses\nwhere stage = active\nlimit 5'
 * format('-- math\nfrom courses where subject=math;\nfrom schools').text
 * // → '-- math\nfrom courses\nwhere subject = math;\nfrom schools'
 */
export function format(text: string): FormatResult {
  let out = '';
  let from = 0;
  const unchanged: { span: Span; reason: 'comment inside' | 'does not parse' }[] = [];
  for (const statement of statementsOf(text)) {
    const tokens = lexAll(statement.text);
    const code = tokens.filter((t) => t.type !== 'Comment');
    const first = code[0];
    const last = code[code.length - 1];
    if (first === undefined || last === undefined) continue;
    const start = statement.start + first.start;
    const end = statement.start + last.end;
    const span = { start, end };
    if (tokens.some((t) => t.type === 'Comment' && t.start > first.start && t.start < last.end)) {
      unchanged.push({ span, reason: 'comment inside' });
      continue;
    }
    let canonical: string;
    try {
      canonical = formatQuery(parse(text.slice(start, end)));
    } catch {
      unchanged.push({ span, reason: 'does not parse' });
      continue;
    }
    out += text.slice(from, start) + indented(canonical, columnOf(text, start));
    from = end;
  }
  return { text: out + text.slice(from), unchanged };
}

/** The statement's lines after the first start at its own column, as the first does. */
function indented(canonical: string, column: string): string {
  return column === '' ? canonical : canonical.replaceAll('\n', `\n${column}`);
}

/** The white space before `offset` on its line, when only white space stands there. */
function columnOf(text: string, offset: number): string {
  const lineStart = Math.max(text.lastIndexOf('\n', offset - 1) + 1, 0);
  const before = text.slice(lineStart, offset);
  return /^[ \t]*$/.test(before) ? before : '';
}

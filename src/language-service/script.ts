/**
 * A text given to the service may be one query or a script of statements
 * separated by `;` (a `.ckql` file). Each statement is checked on its own,
 * and positions are moved between the statement and the whole text here.
 */
import { splitStatements } from '../syntax/statements.js';

/** One statement of a text: its own text and where it starts in the whole. */
export interface Piece {
  readonly text: string;
  readonly start: number;
}

/** The statements of `text` that hold more than white space and comments. */
export function statementsOf(text: string): Piece[] {
  return splitStatements(text).map(({ text: statement, start }) => ({ text: statement, start }));
}

/**
 * The stretch of `text` the cursor is in: the statement around it, or
 * (between statements) everything from the last `;` before the cursor to the
 * next statement, so a new statement being typed there is seen whole.
 */
export function statementAt(text: string, cursor: number): Piece {
  let regionStart = 0;
  for (const statement of splitStatements(text)) {
    const end = statement.start + statement.text.length;
    if (cursor < statement.start) break;
    if (cursor <= end) return { text: statement.text, start: statement.start };
    if (statement.terminated) regionStart = end + 1;
  }
  const next = splitStatements(text).find((s) => s.start >= cursor);
  const regionEnd = next === undefined ? text.length : next.start;
  return { text: text.slice(regionStart, Math.max(regionStart, regionEnd)), start: regionStart };
}

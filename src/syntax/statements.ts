/**
 * Splitting a script into statements at `;`. A `;` inside a string, a
 * backtick-quoted field name or a `--` comment does not end a statement, so
 * the scanner knows just enough of the lexical rules of docs/language.md to skip
 * those; everything else is left to the parser.
 */

export interface Statement {
  /** the statement's text, without the `;` */
  readonly text: string;
  /** offset of `text` in the script */
  readonly start: number;
  /** whether a `;` ended it (a statement cut off without one may continue on the next line) */
  readonly terminated: boolean;
}

/**
 * The statements of `script`, in order. Statements holding only white space
 * and comments are left out; a missing `;` after the last one is fine.
 * @example splitStatements('from a; from b -- c;\n') // [{ text: 'from a', start: 0, terminated: true }, { text: ' from b -- c;\n', start: 7, terminated: false }]
 */
export function splitStatements(script: string): Statement[] {
  const statements: Statement[] = [];
  let start = 0;
  let hasContent = false;
  let i = 0;
  const push = (end: number, terminated: boolean): void => {
    if (hasContent) statements.push({ text: script.slice(start, end), start, terminated });
    hasContent = false;
  };
  while (i < script.length) {
    const char = script[i];
    if (char === ';') {
      push(i, true);
      i += 1;
      start = i;
    } else if (char === '-' && script[i + 1] === '-') {
      const end = script.indexOf('\n', i);
      i = end === -1 ? script.length : end + 1;
    } else if (char === '"' || char === "'") {
      hasContent = true;
      i = skipString(script, i, char);
    } else if (char === '`') {
      hasContent = true;
      i = skipBackticks(script, i);
    } else {
      if (char !== undefined && !/\s/.test(char)) hasContent = true;
      i += 1;
    }
  }
  push(script.length, false);
  return statements;
}

/** Past the closing quote (`\` escapes the next character), or the end of an unterminated string. */
function skipString(text: string, open: number, quote: string): number {
  let i = open + 1;
  while (i < text.length) {
    const char = text[i];
    if (char === '\\') i += 2;
    else if (char === quote) return i + 1;
    else if (char === '\n') return i; // strings end at the line; the parser reports them
    else i += 1;
  }
  return text.length;
}

/** Past the closing backtick; a doubled backtick is a literal one. */
function skipBackticks(text: string, open: number): number {
  let i = open + 1;
  while (i < text.length) {
    if (text[i] === '`') {
      if (text[i + 1] === '`') i += 2;
      else return i + 1;
    } else if (text[i] === '\n') {
      return i;
    } else {
      i += 1;
    }
  }
  return text.length;
}

/**
 * The script with everything but `statement` blanked to spaces (line breaks
 * kept), so an error found in the statement points at the right line and
 * column of the whole script.
 */
export function inPlace(script: string, statement: Statement): string {
  return script.slice(0, statement.start).replace(/[^\n]/g, ' ') + statement.text;
}

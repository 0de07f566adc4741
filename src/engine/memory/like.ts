/**
 * `like` and `ilike` (docs/beyond-the-request.md): `%` matches any run of
 * characters, `_` one character (a code point, as PostgreSQL counts them in
 * UTF-8), and `\` takes the next character as itself. `ilike` folds case on
 * both sides first (`foldCase`, as PostgreSQL's `ILIKE` lowers both).
 *
 * Why not a regular expression: a pattern's characters would each need
 * escaping for the expression's syntax (where one wrong escape, `\-` under
 * the `u` flag, is an error), and `%a%a%a%b` backtracks in a regular
 * expression engine. Here the pattern is cut at each `%` into pieces of fixed
 * length; the first piece must match at the start, the last at the end, and
 * each middle one where it first occurs, which is always the best place
 * (placing a piece earlier never leaves less room for the pieces after it).
 * So a match costs at most the text's length times a piece's.
 */
import { foldCase } from '../../datastore/values.js';
import { likePatternError } from '../../errors.js';

/** One piece of a pattern between two `%`: literal runs, and `null` for each `_`. */
interface Piece {
  readonly items: readonly (string | null)[];
  /** its length in characters (code points) */
  readonly chars: number;
}

/**
 * A test of text against a like pattern; a pattern that ends in `\` (which
 * escapes nothing) is the Validation Error PostgreSQL's refusal stands for.
 * @example
 * likeTest('MATH-1%', false)('MATH-106') // true
 * likeTest('%x\\_%', false)('max_x')     // false: `\_` is a literal `_`
 * likeTest('straße', true)('STRASSE')     // false: case folds character by character
 */
export function likeTest(pattern: string, ignoreCase: boolean): (text: string) => boolean {
  const pieces = piecesOf(ignoreCase ? foldCase(pattern) : pattern, pattern);
  const match = matcher(pieces);
  return ignoreCase ? (text) => match(foldCase(text)) : match;
}

function piecesOf(pattern: string, original: string): Piece[] {
  const pieces: Piece[] = [];
  let items: (string | null)[] = [];
  let run = '';
  let chars = 0;
  const endRun = (): void => {
    if (run !== '') items.push(run);
    run = '';
  };
  const characters = [...pattern];
  for (let i = 0; i < characters.length; i++) {
    const c = characters[i] as string;
    if (c === '%') {
      endRun();
      pieces.push({ items, chars });
      items = [];
      chars = 0;
    } else if (c === '_') {
      endRun();
      items.push(null);
      chars++;
    } else {
      if (c === '\\') {
        if (i + 1 === characters.length) throw likePatternError(original);
        run += characters[++i] as string;
      } else {
        run += c;
      }
      chars++;
    }
  }
  endRun();
  pieces.push({ items, chars });
  return pieces;
}

function matcher(pieces: readonly Piece[]): (text: string) => boolean {
  const first = pieces[0] as Piece;
  if (pieces.length === 1) return (text) => matchAt(text, 0, first) === text.length;
  const last = pieces[pieces.length - 1] as Piece;
  const middle = pieces.slice(1, -1).filter((p) => p.chars > 0);
  return (text) => {
    let at = matchAt(text, 0, first);
    if (at < 0) return false;
    for (const piece of middle) {
      at = find(text, at, piece);
      if (at < 0) return false;
    }
    const start = back(text, text.length, last.chars);
    return start >= at && matchAt(text, start, last) === text.length;
  };
}

/** Where `piece` ends when it matches `text` at `i` (a character boundary), or -1. */
function matchAt(text: string, i: number, piece: Piece): number {
  for (const item of piece.items) {
    if (item === null) {
      if (i >= text.length) return -1;
      i = next(text, i);
    } else {
      if (!text.startsWith(item, i)) return -1;
      i += item.length;
      // a lone surrogate of the pattern is no half of the text's pair
      if (isLow(text, i) && isHigh(text, i - 1)) return -1;
    }
  }
  return i;
}

/** The end of the first match of `piece` at or after `from`, or -1. */
function find(text: string, from: number, piece: Piece): number {
  const lead = piece.items[0];
  for (let i = from; i <= text.length; ) {
    if (typeof lead === 'string') {
      i = text.indexOf(lead, i);
      if (i < 0) return -1;
      if (isLow(text, i) && isHigh(text, i - 1)) {
        i++;
        continue;
      }
    }
    const end = matchAt(text, i, piece);
    if (end >= 0) return end;
    if (i >= text.length) return -1;
    i = next(text, i);
  }
  return -1;
}

/** The index after the character at `i`. */
function next(text: string, i: number): number {
  return isHigh(text, i) && isLow(text, i + 1) ? i + 2 : i + 1;
}

/** The index `count` characters before `end`, or -1 when the text is shorter. */
function back(text: string, end: number, count: number): number {
  let i = end;
  for (let k = 0; k < count; k++) {
    if (i <= 0) return -1;
    i = isLow(text, i - 1) && isHigh(text, i - 2) ? i - 2 : i - 1;
  }
  return i;
}

function isHigh(text: string, i: number): boolean {
  const unit = text.charCodeAt(i);
  return unit >= 0xd800 && unit <= 0xdbff;
}

function isLow(text: string, i: number): boolean {
  const unit = text.charCodeAt(i);
  return unit >= 0xdc00 && unit <= 0xdfff;
}

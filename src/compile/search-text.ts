/** Prefix search: a word ending in `*` (docs/beyond-the-request.md, search). */

const WHITE_SPACE = /\s/u;
const LETTER_OR_DIGIT = /[\p{L}\p{N}]/u;

/**
 * Whether some word of the text ends in `*` (a prefix search). The word
 * before the `*` must hold a letter or digit since its previous `*`: `!*`,
 * `a**` or a lone `*` asks for nothing. One pass over the text (a regular
 * expression for this backtracks quadratically on a long word).
 * @example hasPrefixWord('linear alg*') // → true */
export function hasPrefixWord(text: string): boolean {
  let letter = false;
  for (let i = 0; i < text.length; ) {
    const code = text.codePointAt(i) as number;
    i += code > 0xffff ? 2 : 1;
    if (code === 42 /* * */) {
      if (letter && (i >= text.length || isWhiteSpace(text.codePointAt(i) as number))) return true;
      letter = false;
    } else if (isWhiteSpace(code)) {
      letter = false;
    } else if (!letter && isLetterOrDigit(code)) {
      letter = true;
    }
  }
  return false;
}

/** `\s` of a `u` regular expression, without a string per character for ASCII. */
function isWhiteSpace(code: number): boolean {
  if (code < 128) return code === 32 || (code >= 9 && code <= 13);
  return WHITE_SPACE.test(String.fromCodePoint(code));
}

/** `[\p{L}\p{N}]`, without a string per character for ASCII. */
function isLetterOrDigit(code: number): boolean {
  if (code < 128) return (code >= 48 && code <= 57) || (code >= 65 && code <= 90) || (code >= 97 && code <= 122);
  return LETTER_OR_DIGIT.test(String.fromCodePoint(code));
}

/**
 * The words of a text as a `to_tsquery` expression, as CKAN's DataTables
 * view builds one: words joined by `&`, a word that ended in `*` as a
 * prefix (`alg:*`), and every character `to_tsquery` would read as syntax
 * replaced by a space.
 * @example tsQueryText('linear alg*') // → 'linear & alg:*'
 */
export function tsQueryText(text: string): string {
  const terms: string[] = [];
  for (const word of text.split(/\s+/u)) {
    const prefix = /[^*]\*$/u.test(word);
    const parts = word.replace(/[&|!():*<>'\\"]/gu, ' ').trim().split(/\s+/u).filter((p) => p !== '');
    parts.forEach((part, i) => terms.push(prefix && i === parts.length - 1 ? `${part}:*` : part));
  }
  return terms.join(' & ');
}


/**
 * A `to_tsquery` text of the shape `tsQueryText` writes (`linear & alg:*`)
 * as the search words it came from (`linear alg*`); undefined for any other
 * `to_tsquery` text (`|`, `!`, phrases, weights), which a search cannot say.
 * @example searchWords('linear & alg:*') // → 'linear alg*'
 */
export function searchWords(tsquery: string): string | undefined {
  const terms = tsquery.split('&').map((term) => term.trim());
  if (terms.some((term) => !/^[^\s&|!():*<>'\\"]+(:\*)?$/u.test(term))) return undefined;
  return terms.map((term) => term.replace(/:\*$/u, '*')).join(' ');
}

/**
 * Styling for the REPL's views as SGR escape codes, applied only when the
 * caller decided on colour (the CLI decides once: TTY, `NO_COLOR`,
 * `FORCE_COLOR`). Rows are styled as whole strings rather than as one ink
 * `<Text>` per cell: ink lays out each element, and a cell per element made
 * a 1 000-row table take a second to render.
 */

export interface Paint {
  readonly bold: (text: string) => string;
  readonly dim: (text: string) => string;
  /** how `null` reads in a cell: dim and italic */
  readonly nullValue: (text: string) => string;
}

const sgr = (open: string, close: string) => (text: string) => (text === '' ? text : `\u001b[${open}m${text}\u001b[${close}m`);
const plain = (text: string): string => text;

const colourPaint: Paint = { bold: sgr('1', '22'), dim: sgr('2', '22'), nullValue: sgr('2;3', '23;22') };
const noPaint: Paint = { bold: plain, dim: plain, nullValue: plain };

/**
 * @example paintFor(false).bold('code') // 'code'
 * @example paintFor(true).bold('code') // '\u001b[1mcode\u001b[22m'
 */
export function paintFor(color: boolean): Paint {
  return color ? colourPaint : noPaint;
}

import { describe, expect, it } from 'vitest';
import { inPlace, splitStatements } from '../../src/repl/statements.js';

const texts = (script: string): string[] => splitStatements(script).map((s) => s.text.trim());

describe('splitStatements', () => {
  it('splits at semicolons and keeps where each statement starts', () => {
    const script = 'from a limit 1;\nfrom b';
    expect(splitStatements(script)).toEqual([
      { text: 'from a limit 1', start: 0, terminated: true },
      { text: '\nfrom b', start: 15, terminated: false },
    ]);
  });

  it('does not split inside strings, backtick names or comments', () => {
    expect(texts(`from a search "x;y"; from b where t = 'p;q'`)).toEqual([`from a search "x;y"`, `from b where t = 'p;q'`]);
    expect(texts('from a select `a;b`, `c``;d`; from b')).toEqual(['from a select `a;b`, `c``;d`', 'from b']);
    expect(texts('from a -- not here; nor here\nlimit 1; from b')).toEqual(['from a -- not here; nor here\nlimit 1', 'from b']);
    expect(texts('from a search "say \\"hi\\"; bye"; from b')).toEqual(['from a search "say \\"hi\\"; bye"', 'from b']);
  });

  it('leaves out statements of only white space and comments', () => {
    expect(texts(';;  \n-- a comment;\n;from a;\n\n-- the end\n')).toEqual(['from a']);
    expect(splitStatements('')).toEqual([]);
  });

  it('marks whether a semicolon ended the last statement', () => {
    expect(splitStatements('from a where;').at(-1)?.terminated).toBe(true);
    expect(splitStatements('from a where').at(-1)?.terminated).toBe(false);
    expect(splitStatements('from a where; -- done').at(-1)?.terminated).toBe(true);
  });

  it('stops a string at the end of its line, so a later semicolon still splits', () => {
    expect(texts('from a search "open\n; from b')).toEqual(['from a search "open', 'from b']);
  });
});

describe('inPlace', () => {
  it('blanks the other statements but keeps line breaks, so offsets and lines match the script', () => {
    const script = 'from a;\nfrom b\nwhere x = 1;';
    const second = splitStatements(script)[1];
    expect(second).toBeDefined();
    if (second === undefined) return;
    const placed = inPlace(script, second);
    expect(placed).toBe('       \nfrom b\nwhere x = 1');
    expect(placed.indexOf('where')).toBe(script.indexOf('where'));
  });
});

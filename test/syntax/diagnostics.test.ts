import { describe, expect, it } from 'vitest';
import { renderError } from '../../src/diagnostics.js';
import { DatastoreError, QueryError, resourceNotFound, toolError, validationError } from '../../src/errors.js';
import { parse } from '../../src/syntax/parse.js';

function rendered(source: string, options?: { color?: boolean }): string {
  try {
    parse(source);
  } catch (error) {
    return renderError(error, options);
  }
  throw new Error('expected a parse error');
}

describe('renderError: query errors', () => {
  it('renders the example of the language design', () => {
    // language.md prints " --> 1:34", counting the "1 | " gutter; the column in the
    // source line is 30, which is what an editor jumps to and what ckql prints.
    expect(rendered('from courses where subject = limit 5')).toBe(
      [
        'error[UNEXPECTED_TOKEN]: expected a value after "=", found "limit"',
        ' --> 1:30',
        '  |',
        '1 | from courses where subject = limit 5',
        '  |                              ^^^^^',
        '  = hint: a value spelled like a keyword must be quoted: "limit"',
      ].join('\n'),
    );
  });

  it('shows the line of a multi-line query that holds the error, with a wider gutter from line 10', () => {
    const source = `${'-- comment\n'.repeat(9)}from x\r\nwhere a = 1 & b`;
    expect(rendered(source)).toBe(
      [
        'error[UNEXPECTED_CHARACTER]: unexpected character "&"',
        '  --> 11:13',
        '   |',
        '11 | where a = 1 & b',
        '   |             ^',
        '   = hint: join conditions with "and"; for alternatives of one field use "in (a, b)" or "(f = a or f = b)"',
      ].join('\n'),
    );
  });

  it('puts one caret after the last character when the query ends too early', () => {
    expect(rendered('from x where a in (1,')).toBe(
      [
        'error[UNEXPECTED_END_OF_INPUT]: the query ends too early: expected a value after ","',
        ' --> 1:22',
        '  |',
        '1 | from x where a in (1,',
        '  |                      ^',
      ].join('\n'),
    );
  });

  it('keeps tabs and wide characters aligned, and carets only to the end of the line', () => {
    const text = rendered('from x\twhere a = "中文" foo');
    expect(text.split('\n').slice(3, 5)).toEqual(['1 | from x\twhere a = "中文" foo', '  |       \t                 ^^^']);
    expect(rendered('from x where `a\nb').split('\n').slice(3, 5)).toEqual(['1 | from x where `a', '  |              ^^']);
  });

  it('shows a window of a very long line', () => {
    const text = rendered(`from x where a in (${'1, '.repeat(500)}!)`);
    const [, , , line, carets] = text.split('\n');
    expect(line!.length).toBeLessThan(200);
    expect(line!.startsWith('1 | …')).toBe(true);
    expect(line![carets!.indexOf('^')]).toBe('!');
  });

  it('colours only when asked', () => {
    expect(rendered('from x limit -1')).not.toContain('\u001b[');
    const colored = rendered('from x limit -1', { color: true });
    expect(colored).toContain('\u001b[31m');
    expect(colored.replaceAll(/\[\d+m/g, '').replaceAll('\u001b', '')).toBe(rendered('from x limit -1'));
  });

  it('uses the source from the options when the error has none', () => {
    const error = new QueryError('UNBOUND_PARAMETER', 'parameter $s is not bound', { start: 19, end: 21 });
    expect(renderError(error, { source: 'from x where a = 1 $s' }).split('\n').slice(3)).toEqual([
      '1 | from x where a = 1 $s',
      '  |                    ^^',
    ]);
    expect(renderError(error)).toBe('error[UNBOUND_PARAMETER]: parameter $s is not bound');
  });
});

describe('renderError: other errors', () => {
  it('renders a validation error with its status and the server message once', () => {
    expect(renderError(validationError('filters', 'invalid value "f"'))).toBe(
      ['error[VALIDATION_ERROR]: filters: invalid value "f"', '  = status: 409 (Validation Error)'].join('\n'),
    );
  });

  it('renders what the server said when it differs from the message', () => {
    const error = new DatastoreError('HTTP_ERROR', 'the server answered 502', { status: 502, body: '<html>Bad Gateway</html>' });
    expect(renderError(error)).toBe(
      ['error[HTTP_ERROR]: the server answered 502', '  = status: 502', '  = server: <html>Bad Gateway</html>'].join('\n'),
    );
    expect(renderError(resourceNotFound('nope'))).toBe(
      ['error[NOT_FOUND]: Not found: Resource "nope" was not found.', '  = status: 404 (Not Found Error)'].join('\n'),
    );
  });

  it('renders the cause of a connection failure', () => {
    const cause = new Error('connect ECONNREFUSED 127.0.0.1:9');
    const error = new DatastoreError('CONNECTION_FAILED', 'cannot reach http://127.0.0.1:9', { cause });
    expect(renderError(error)).toBe(
      ['error[CONNECTION_FAILED]: cannot reach http://127.0.0.1:9', '  = cause: connect ECONNREFUSED 127.0.0.1:9'].join('\n'),
    );
  });

  it('renders a tool error with file, line, key and hint', () => {
    const error = toolError('CONFIG_INVALID', ['ckql.toml', 'limit must be a number'], {
      file: 'ckql.toml',
      line: 12,
      key: 'profiles.dev.limit',
      hint: 'write limit = 100',
    });
    expect(renderError(error)).toBe(
      [
        'error[CONFIG_INVALID]: ckql.toml: limit must be a number',
        ' --> ckql.toml:12',
        '  = key: profiles.dev.limit',
        '  = hint: write limit = 100',
      ].join('\n'),
    );
  });

  it('renders anything else by its message, never its stack', () => {
    const text = renderError(new TypeError('boom'));
    expect(text).toBe('error: boom');
    expect(renderError(Object.assign(new Error('no such file'), { code: 'ENOENT' }))).toBe('error[ENOENT]: no such file');
    expect(renderError('plain text')).toBe('error: plain text');
    expect(renderError({ odd: 1 })).toBe('error: {"odd":1}');
  });
});

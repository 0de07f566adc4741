/**
 * The parts of the CLI that decide how a run ends and looks: exit codes per
 * error class, error reports, colour, --param literals, "did you mean", and
 * what changes when stdout or stderr is a terminal (in process, with
 * streams that say they are terminals).
 */
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useColor } from '../../src/output/color.js';
import { exitCodeFor } from '../../src/cli/exit-codes.js';
import { editDistance, nearestName } from '../../src/session/nearest.js';
import { readParams, readParamValue } from '../../src/session/params.js';
import { reportError } from '../../src/cli/report.js';
import { DatastoreError, QueryError, ToolError } from '../../src/errors.js';
import { ckqlInProcess } from './run-ckql.js';
import { makeWorkspace } from './fixtures.js';

let root: string;

/** Removes SGR colour sequences (ESC [ … m). */
const stripAnsi = (text: string): string => text.replace(new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, 'g'), '');

beforeAll(async () => {
  root = await makeWorkspace();
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

describe('exit codes', () => {
  it('maps each error class to its status', () => {
    const span = { start: 0, end: 1 };
    expect(exitCodeFor(new QueryError('UNEXPECTED_TOKEN', 'x', span))).toBe(3);
    expect(exitCodeFor(new DatastoreError('VALIDATION_ERROR', 'x'))).toBe(3);
    expect(exitCodeFor(new DatastoreError('NOT_FOUND', 'Not found: Resource "x" was not found.'))).toBe(3);
    expect(exitCodeFor(new DatastoreError('NOT_FOUND', 'Not found: the language segment "fr" is not offered'))).toBe(1);
    expect(exitCodeFor(new DatastoreError('BAD_REQUEST', 'x'))).toBe(3);
    expect(exitCodeFor(new DatastoreError('HTTP_ERROR', 'x', { status: 500 }))).toBe(1);
    expect(exitCodeFor(new DatastoreError('CONNECTION_FAILED', 'x'))).toBe(4);
    expect(exitCodeFor(new DatastoreError('TIMEOUT', 'x'))).toBe(4);
    expect(exitCodeFor(new DatastoreError('ABORTED', 'x'))).toBe(130);
    expect(exitCodeFor(new ToolError('USAGE', 'x'))).toBe(2);
    expect(exitCodeFor(new ToolError('CONFIG_INVALID', 'x'))).toBe(2);
    expect(exitCodeFor(new ToolError('DATA_INVALID', 'x'))).toBe(1);
    expect(exitCodeFor(new TypeError('bug'))).toBe(1);
  });
});

describe('reportError', () => {
  function capture(env: NodeJS.ProcessEnv = {}): { lines: string[]; context: Parameters<typeof reportError>[1] } {
    const lines: string[] = [];
    return { lines, context: { err: (text) => void lines.push(text), color: { stdout: false, stderr: false }, env } };
  }

  it('prints an unexpected error as one short line (exit 1), with the stack only under CKQL_DEBUG', () => {
    const quiet = capture();
    expect(reportError(new TypeError('cannot read x of undefined'), quiet.context)).toBe(1);
    expect(quiet.lines.join('\n')).toContain('ckql: unexpected error: cannot read x of undefined');
    expect(quiet.lines.join('\n')).not.toMatch(/\n\s+at /);
    const debug = capture({ CKQL_DEBUG: '1' });
    reportError(new TypeError('cannot read x of undefined'), debug.context);
    expect(debug.lines.join('\n')).toMatch(/\n\s+at /);
  });

  it('prints "interrupted" for an aborted query (exit 130)', () => {
    const { lines, context } = capture();
    expect(reportError(new DatastoreError('ABORTED', 'interrupted'), context)).toBe(130);
    expect(lines).toEqual(['interrupted']);
  });
});

describe('colour decision', () => {
  it('follows NO_COLOR, then FORCE_COLOR, then TERM=dumb, then the terminal', () => {
    expect(useColor({ isTTY: true }, {})).toBe(true);
    expect(useColor({ isTTY: false }, {})).toBe(false);
    expect(useColor({ isTTY: true }, { NO_COLOR: '1' })).toBe(false);
    expect(useColor({ isTTY: true }, { NO_COLOR: '' })).toBe(true);
    expect(useColor({ isTTY: false }, { FORCE_COLOR: '1' })).toBe(true);
    expect(useColor({ isTTY: true }, { FORCE_COLOR: '0' })).toBe(false);
    expect(useColor({ isTTY: false }, { FORCE_COLOR: '1', NO_COLOR: '1' })).toBe(false);
    expect(useColor({ isTTY: true }, { TERM: 'dumb' })).toBe(false);
  });
});

describe('--param values read like query literals', () => {
  it('numbers, booleans, null, quoted text, and anything else as typed', () => {
    expect(readParamValue('2020')).toBe(2020);
    expect(readParamValue('-2.5e1')).toBe(-25);
    expect(readParamValue('true')).toBe(true);
    expect(readParamValue('FALSE')).toBe(false);
    expect(readParamValue('null')).toBeNull();
    expect(readParamValue('"2020"')).toBe('2020');
    expect(readParamValue("'it''s'")).toBe("'it''s'");
    expect(readParamValue('"a \\"b\\""')).toBe('a "b"');
    expect(readParamValue('math')).toBe('math');
    expect(readParamValue('high school')).toBe('high school');
    expect(readParamValue('007')).toBe('007');
    expect(readParamValue('5 limit 1')).toBe('5 limit 1');
    expect(readParamValue('$other')).toBe('$other');
    expect(readParamValue('')).toBe('');
  });

  it('a list in parentheses, as the language writes one, binds an in (…) parameter', async () => {
    expect(readParamValue('(3, 4)')).toEqual([3, 4]);
    expect(readParamValue('(math, "linear algebra", null)')).toEqual(['math', 'linear algebra', null]);
    expect(readParamValue('()')).toEqual([]);
    // not a whole list: taken as text
    expect(readParamValue('(3, 4) or x')).toBe('(3, 4) or x');
    expect(readParamValue('(3,')).toBe('(3,');
    expect(readParamValue('($a)')).toBe('($a)');
    const { code, stdout } = await ckqlInProcess(['compile', 'from courses where level in ($levels)', '--param', 'levels=(3, 4)']);
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toEqual({ resource_id: 'courses', filters: { level: [3, 4] } });
  });

  it('collects the options, accepts a leading $, and refuses a name given twice', () => {
    expect(readParams(['a=1', '$b=x', 'c=x=y'])).toEqual({ a: 1, b: 'x', c: 'x=y' });
    expect(() => readParams(['a=1', '$b=x', 'a=2'])).toThrow(/--param a is given twice/);
    expect(() => readParams(['=1'])).toThrow(ToolError);
    expect(() => readParams(['no-equals'])).toThrow(/name=value/);
  });
});

describe('did you mean', () => {
  it('finds near names without case, counting a swap as one edit, and stays quiet for far ones', () => {
    expect(editDistance('qurey', 'query')).toBe(1);
    expect(editDistance('kitten', 'sitting')).toBe(3);
    expect(nearestName('subjet', ['_id', 'subject', 'stage'])).toBe('subject');
    expect(nearestName('STAGE', ['stage', 'stages'])).toBe('stage');
    expect(nearestName('x', ['subject', 'stage'])).toBeUndefined();
    expect(nearestName('zzzzzz', ['subject'])).toBeUndefined();
  });
});

describe('at a terminal', () => {
  it('query prints a table sized to the terminal by default', async () => {
    const result = await ckqlInProcess(['query', 'from courses select code, title', '--data', join(root, 'data')], {
      tty: { stdout: true, columns: 60 },
    });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('Linear Algebra');
    expect(result.stdout).toMatch(/5 of 5 records, [\d.]+ ms/);
    for (const line of stripAnsi(result.stdout).split('\n')) expect(line.length).toBeLessThanOrEqual(60);
  });

  it('query --all shows progress on stderr only when stderr is a terminal, never on stdout', async () => {
    const args = ['query', 'from numbers', '--all', '--page-size', '10', '--data', join(root, 'data')];
    const terminal = await ckqlInProcess(args, { tty: { stderr: true } });
    expect(terminal.code).toBe(0);
    expect(terminal.stderr).toContain('fetched 10 of 25 records');
    expect(terminal.stdout).not.toContain('fetched');
    expect(terminal.stdout.trim().split('\n')).toHaveLength(25);
    const piped = await ckqlInProcess(args);
    expect(piped.stderr).toBe('');
    expect(piped.stdout).toBe(terminal.stdout);
  });
});

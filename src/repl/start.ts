/**
 * The ckql REPL session (`ckql`, `ckql repl`; `ckql/repl` exports it). ink
 * loads with the first table drawn, not before the prompt.
 *
 * node:repl owns the input: line editing, history, Tab completion (the
 * `completer`), multi-line statements (`Recoverable` while the parser says
 * the input ends too early) and the dot commands. ink only renders: each
 * result becomes a string through `renderToString`, printed by an identity
 * `writer`. Nothing hands stdin to ink (docs/ecosystem-and-ux-reference.md §2).
 *
 * Ctrl-C during a query: the REPL's own SIGINT listeners are set aside and
 * one that aborts the request takes their place until the query settles, so
 * the first Ctrl-C cancels and keeps the session, and node's "press Ctrl+C
 * again to exit" is not armed by it.
 */
import { readFileSync } from 'node:fs';
import repl, { type REPLCommand, type REPLServer } from 'node:repl';
import type { Readable, Writable } from 'node:stream';
import { useColor } from '../output/color.js';
import { openSource as openAnySource, type Source, type SourceSpec } from '../session/source.js';
import { emptyConfig, type Config } from '../config/types.js';
import { DatastoreError, QueryError } from '../errors.js';
import type { OutputFormat } from '../output/format-records.js';
import { didYouMean } from '../session/nearest.js';
import { parse } from '../syntax/parse.js';
import { queryParser } from '../syntax/parser.js';
import { dotCommands } from './commands.js';
import stringWidth from 'string-width';
import { completeCommand, completeQuery, valueText, type Completion } from './complete.js';
import { defaultHistoryFile, keepHistory, mergeStatementHistory, readHistory } from './history.js';
import { Session } from './session.js';
import { startSpinner } from './spinner.js';
import { splitStatements } from './statements.js';


export interface ReplOptions {
  /** where queries go; stays open after the session (the caller closes it) */
  readonly source: Source;
  /** default `process.stdin` */
  readonly input?: Readable;
  /** results, errors and prompts; default `process.stdout` */
  readonly output?: Writable;
  /** the spinner, only when it is a TTY; default `process.stderr` */
  readonly errorOutput?: Writable;
  /** line editing, completion and history; default: whether `output` is a TTY */
  readonly terminal?: boolean;
  /** default `$XDG_STATE_HOME/ckql/history`; `null` keeps no history */
  readonly historyFile?: string | null;
  /** named queries for `.queries` and `.run` */
  readonly config?: Config;
  /** default `table` */
  readonly format?: OutputFormat;
  /** terminal width; default `output.columns`, else 80 */
  readonly columns?: number;
  /** default: `output` is a TTY and `NO_COLOR` is not set */
  readonly color?: boolean;
  /** records fetched when a query has no `limit`; default 20 */
  readonly limit?: number;
  /** default true */
  readonly timing?: boolean;
  /** default false */
  readonly explain?: boolean;
  /** for `.connect`; default the CLI's `openSource` */
  readonly openSource?: (spec: SourceSpec) => Promise<Source>;
  /** the profile `source` was opened from: a query naming it (`name:resource`) reads `source` */
  readonly profile?: string;
  /** values never written to the history file (tokens the caller read) */
  readonly secrets?: readonly string[];
  /** how a shell produces the token, for `.explain`'s curl line; default `$CKQL_TOKEN` */
  readonly tokenShell?: string;
  /** the one-line banner; default true */
  readonly banner?: boolean;
  /** ms Tab waits for names and values before answering with what it has; default 500 */
  readonly completionWaitMs?: number;
  /** what the spinner says while a query waits (a data file being read: its progress); default `running` */
  readonly status?: () => string | undefined;
}

const version = readVersion();

function readVersion(): string {
  try {
    const text = readFileSync(new URL('../../package.json', import.meta.url), 'utf8');
    const { version: found } = JSON.parse(text) as { version?: string };
    return found?.split('.').slice(0, 2).join('.') ?? '';
  } catch {
    return '';
  }
}


/** Bracketed paste mode on and off (xterm's DECSET 2004): the terminal marks what is pasted. */
const BRACKETED_PASTE_ON = '\x1b[?2004h';
const BRACKETED_PASTE_OFF = '\x1b[?2004l';

/** Whether the parser stops at the end of `text` wanting more: the REPL then reads another line. */
function endsEarly(text: string): boolean {
  try {
    parse(text);
    return false;
  } catch (error) {
    return error instanceof QueryError && error.code === 'UNEXPECTED_END_OF_INPUT';
  }
}

/**
 * Starts an interactive session on `options.source`; resolves when it ends
 * (`.exit`, Ctrl-D, or Ctrl-C twice at an empty prompt).
 * @example
 * const source = await openSource({ kind: 'data', paths: ['examples/data'], demo: true });
 * await startRepl({ source });
 * await source.close();
 */
export async function startRepl(options: ReplOptions): Promise<void> {
  const input = options.input ?? process.stdin;
  const output = options.output ?? process.stdout;
  const errorOutput = options.errorOutput ?? process.stderr;
  const tty = output as Writable & { isTTY?: boolean; columns?: number };
  const terminal = options.terminal ?? tty.isTTY === true;
  const session = new Session({
    source: options.source,
    config: options.config ?? emptyConfig,
    settings: {
      format: options.format ?? 'table',
      limit: options.limit ?? 20,
      timing: options.timing ?? true,
      explain: options.explain ?? false,
      language: options.source.client.language,
    },
    color: options.color ?? useColor(tty, process.env),
    width: () => options.columns ?? tty.columns ?? 80,
    openSource: options.openSource ?? openAnySource,
    tokenShell: options.tokenShell,
    profile: options.profile,
  });

  if (options.banner !== false) output.write(`${await bannerFor(session)}\n`);

  const history =
    terminal && options.historyFile !== null
      ? { file: options.historyFile ?? defaultHistoryFile(), size: 1000, secrets: () => secretsOf(session, options.secrets ?? []) }
      : undefined;
  const historyProblem = (error: unknown): string =>
    `history is not kept: ${error instanceof Error ? error.message : String(error)}\n`;
  let historyLines: string[] | undefined;
  if (history !== undefined) {
    try {
      historyLines = readHistory(history);
    } catch (error) {
      output.write(historyProblem(error));
    }
  }

  // Bracketed paste: the terminal marks a pasted block (ESC[200~ … ESC[201~), and readline
  // reports the marks as `paste-start` and `paste-end` keys. Lines of the block are buffered
  // as a continued statement (the eval above); at the end of the block, a block that ended
  // with a line break is run as one input, as if Enter had been pressed on its last line.
  const paste = { active: false, endedWithReturn: false };

  const prompt = 'ckql> ';
  // A statement continued over several lines: completion needs the earlier
  // lines too. node:repl keeps them privately; while it does, its prompt is
  // the continuation prompt, and the eval below saw them last.
  let buffered = '';
  /** The line whose choices a late Tab promised to list. */
  let awaited: { readonly line: string } | undefined;
  // `historySize` reaches readline though @types/node's ReplOptions leaves it out.
  const replOptions: repl.ReplOptions & { historySize: number } = {
    prompt,
    input,
    output,
    terminal,
    ignoreUndefined: true,
    preview: false,
    historySize: 1000,
    writer: (text: unknown) => String(text),
    eval: (command, _context, _file, callback) => {
      buffered = command;
      const text = command.endsWith('\n') ? command.slice(0, -1) : command;
      // What people type in other shells: psql's `\q`, `exit`, `help`.
      const word = text.trim().replace(/;$/, '').toLowerCase();
      if (['exit', 'quit', '\\q'].includes(word)) {
        // as `.exit` does: no answer, no new prompt
        server.close();
        return;
      }
      if (['help', '?', '\\?', '\\h'].includes(word)) {
        callback(null, 'type a query such as  from courses limit 5  or .help for the commands');
        return;
      }
      const statements = splitStatements(text);
      const last = statements.at(-1);
      if (last === undefined) {
        callback(null, undefined);
        return;
      }
      // A pasted block is one input: its lines are held until the paste ends (see `onKeypress`).
      if (paste.active || (!last.terminated && endsEarly(last.text))) {
        callback(new repl.Recoverable(new Error('the statement continues on the next line')), undefined);
        return;
      }
      if (text.includes('\n')) mergeStatementHistory(server, text);
      // In input order: a statement typed while another runs waits for it, and so does its answer.
      void inTurn(async (signal) => {
        const printed: string[] = [];
        for (const statement of statements) {
          if (signal.aborted) break;
          printed.push(await session.run(statement.text, { signal }));
        }
        return printed.join('\n\n');
      }).then(
        (printed) => callback(null, printed),
        // `run` renders its own errors; this is only for a bug, which must not end the session
        (error: unknown) => callback(null, session.renderFailure(error)),
      );
    },
    completer: (line: string, callback: (error: Error | null, result: [string[], string]) => void) => {
      complete(line).then(
        (found) => callback(null, [[...found.completions], found.prefix]),
        () => callback(null, [[], line]),
      );
    },
  };
  const server: REPLServer = repl.start(replOptions);
  // The prompt is out; the parser (made on first use, syntax/parser.ts) is made while the person types.
  setImmediate(() => queryParser());
  server.on('SIGINT', () => session.cancelLookups());

  const onKeypress = (_text: string | undefined, key: { name?: string } | undefined): void => {
    if (key?.name === 'paste-start') {
      paste.active = true;
      paste.endedWithReturn = false;
    } else if (key?.name === 'paste-end') {
      paste.active = false;
      // A Return of our own, after readline has handled the block's last key.
      if (paste.endedWithReturn) setImmediate(() => server.write('\r'));
    } else if (paste.active) {
      paste.endedWithReturn = key?.name === 'return' || key?.name === 'enter';
    }
  };
  input.on('keypress', onKeypress);
  if (terminal) output.write(BRACKETED_PASTE_ON);
  server.once('exit', () => {
    input.off('keypress', onKeypress);
    if (terminal) output.write(BRACKETED_PASTE_OFF);
  });

  /**
   * Statements and dot commands run one at a time, in the order they were
   * entered, each printing when its turn ends: a line typed while a query
   * runs waits for it. Ctrl-C cancels the one that runs and the ones waiting.
   */
  let turns: Promise<unknown> = Promise.resolve();
  let busy = 0;
  let cancelledUpTo = 0;
  let entered = 0;
  function inTurn<T>(work: (signal: AbortSignal) => Promise<T>): Promise<T | string> {
    const number = ++entered;
    const waited = busy > 0;
    busy += 1;
    const turn = turns.then((): T | string | Promise<T> => {
      // The answer before this one has printed the prompt again: this answer takes its line.
      if (waited && terminal) output.write('\r\x1b[K');
      return number <= cancelledUpTo
        ? session.renderFailure(new DatastoreError('ABORTED', 'cancelled'))
        : cancellable(work, () => {
            cancelledUpTo = entered;
          });
    });
    turns = turn.finally(() => (busy -= 1)).catch(() => undefined);
    return turn;
  }

  /**
   * Runs `work` with a signal that Ctrl-C aborts, showing the spinner on a
   * terminal; the REPL's own SIGINT listeners are back when it settles.
   */
  async function cancellable<T>(work: (signal: AbortSignal) => Promise<T>, onCancel?: () => void): Promise<T> {
    const controller = new AbortController();
    const saved = server.rawListeners('SIGINT') as ((...args: unknown[]) => void)[];
    server.removeAllListeners('SIGINT');
    const onSigint = (): void => {
      onCancel?.();
      controller.abort(new DatastoreError('ABORTED', 'cancelled'));
    };
    server.on('SIGINT', onSigint);
    const spinner = startSpinner(errorOutput, () => options.status?.() ?? 'running');
    try {
      return await work(controller.signal);
    } finally {
      spinner.stop();
      server.off('SIGINT', onSigint);
      for (const listener of saved) server.on('SIGINT', listener);
    }
  }

  /**
   * Completion answers within `completionWaitMs` with what is known: a
   * lookup still under way (a slow portal, a value not sampled yet) goes on
   * in the background, so typing never waits on the network. Tab then says
   * what it is waiting for, and lists the choices when they arrive if the
   * line is still as it was. Ctrl-C at the prompt cancels such lookups.
   */
  async function complete(line: string): Promise<Completion> {
    let timer: NodeJS.Timeout | undefined;
    let waitingFor: string | undefined;
    const now = completeNow(line, (what) => (waitingFor = what));
    const late = new Promise<undefined>((resolve) => {
      timer = setTimeout(() => resolve(undefined), options.completionWaitMs ?? 500);
    });
    try {
      const found = await Promise.race([now, late]);
      if (found !== undefined) {
        // This Tab answered: a listing promised by an earlier one for the same line is not needed.
        if (awaited?.line === line) awaited = undefined;
        return found;
      }
      if (waitingFor !== undefined) listWhenReady(line, now, waitingFor);
      return { completions: [], prefix: '' };
    } finally {
      clearTimeout(timer);
    }
  }

  /** Says what Tab waits for; when it arrives and the line has not changed, lists the choices. */
  function listWhenReady(line: string, coming: Promise<Completion>, what: string): void {
    if (awaited?.line === line) return; // said once per line; the first promise lists
    const promise = { line };
    awaited = promise;
    const note = `(${what}: still loading; listed when they arrive)`;
    const stillSame = (): boolean => awaited === promise && (server as unknown as { line: string }).line === line;
    // After node:repl has finished this Tab (it resumes input once the completer answers).
    setImmediate(() => {
      if (!stillSame()) return;
      output.write(`\r\n${note}\r\n`);
      server.displayPrompt(true);
    });
    coming.then(
      (found) => {
        const same = stillSame();
        if (awaited === promise) awaited = undefined;
        if (!same || found.completions.length === 0) return;
        output.write(`\r\n${columns(found.completions.map((c) => c.trimEnd()), session.width())}\r\n`);
        server.displayPrompt(true);
      },
      () => {
        if (awaited === promise) awaited = undefined;
      },
    );
  }

  async function completeNow(line: string, onWait?: (what: string) => void): Promise<Completion> {
    const continuing = server.getPrompt() !== prompt;
    if (!continuing && line.trimStart().startsWith('.')) {
      return completeCommand(line.trimStart(), {
        commands: [...dotCommands.map((c) => c.name), 'break', 'exit'],
        argumentWords: async (name) => dotCommands.find((c) => c.name === (aliases[name] ?? name))?.words?.(session),
      });
    }
    const before = continuing ? buffered : '';
    const source = before + line;
    return completeQuery(source, source.length, session.completionContext(), onWait === undefined ? {} : { onWait });
  }

  // Names people bring from sqlite3 and psql, kept out of `.help`.
  const aliases: Readonly<Record<string, string>> = { tables: 'resources', schema: 'fields', mode: 'format', timer: 'timing', quit: 'exit' };

  // The built-in commands that make sense only for JavaScript go; ours come in.
  const commands = server.commands as Record<string, unknown>;
  for (const name of ['clear', 'editor', 'load', 'save']) delete commands[name];
  for (const command of dotCommands) {
    server.defineCommand(command.name, {
      help: command.help,
      action(argument: string) {
        void inTurn((signal) => command.run(session, argument, { signal }))
          .then(
            (text) => (text === undefined || text === '' ? undefined : output.write(`${text}\n`)),
            (error: unknown) => output.write(`${session.renderFailure(error)}\n`),
          )
          .finally(() => server.displayPrompt());
      },
    });
  }
  // An unknown `.word` never reaches eval, and node:repl would only say
  // "Invalid REPL keyword": a fallback command says what was meant instead.
  // node looks commands up by name in `server.commands`, so a proxy there
  // answers for every name that is not defined.
  const defined = server.commands as Record<string, REPLCommand | undefined>;
  for (const [alias, name] of Object.entries(aliases)) {
    const target = defined[name];
    if (target !== undefined) server.defineCommand(alias, { help: '', action: target.action });
  }
  const unknownCommand = (name: string): REPLCommand => ({
    help: '',
    action() {
      const hint = didYouMean(name, Object.keys(defined));
      const meant = hint === undefined ? '' : ` (${hint.replace(/"([^"]*)"/, '.$1')})`;
      output.write(`unknown command .${name}${meant}; .help lists them\n`);
      server.displayPrompt();
    },
  });
  (server as unknown as { commands: Record<string, REPLCommand | undefined> }).commands = new Proxy(defined, {
    get: (target, key) => (typeof key !== 'string' || key in target ? target[key as string] : unknownCommand(key)),
  });

  if (history !== undefined && historyLines !== undefined) {
    keepHistory(server, historyLines, history, (error) => output.write(historyProblem(error)));
  }

  await new Promise<void>((resolve) => server.once('exit', () => resolve()));
  await session.close();
}

/** Words laid out in columns as readline lists completions, within `width`. */
function columns(words: readonly string[], width: number): string {
  const cell = Math.max(...words.map((word) => stringWidth(word))) + 2;
  const perLine = Math.max(1, Math.floor(width / cell));
  const lines: string[] = [];
  for (let i = 0; i < words.length; i += perLine) {
    lines.push(words.slice(i, i + perLine).map((word) => word + ' '.repeat(cell - stringWidth(word))).join('').trimEnd());
  }
  return lines.join('\r\n');
}

/** Everything that must not reach the history file: the tokens in play. */
function secretsOf(session: Session, given: readonly string[]): string[] {
  const secrets = [...given];
  const spec = session.source.spec;
  if (spec.kind === 'url' && spec.token !== undefined) secrets.push(spec.token);
  if (process.env.CKQL_TOKEN !== undefined) secrets.push(process.env.CKQL_TOKEN);
  for (const profile of session.config.profiles.values()) {
    if (profile.kind !== 'url' || profile.token === undefined) continue;
    if (profile.token.kind === 'inline') secrets.push(profile.token.value.reveal());
    if (profile.token.kind === 'env') {
      const value = process.env[profile.token.name];
      if (value !== undefined) secrets.push(value);
    }
  }
  return secrets.filter((secret) => secret.trim() !== '');
}

/**
 * One line: what this is, where queries go, and a first query to try; the
 * most detailed variant that fits the terminal.
 * @example 'ckql 0.1 — demo data: courses, enrolments, schools — try: from courses where subject = math limit 5'
 */
async function bannerFor(session: Session): Promise<string> {
  const resources = await session.resources().catch(() => []);
  const names = resources.map((r) => r.alias ?? r.id);
  const listed = names.length > 4 ? `${names.slice(0, 4).join(', ')}, …` : names.join(', ');
  const spec = session.source.spec;
  const kind = spec.kind === 'data' ? (spec.demo === true ? 'demo data' : 'local data') : session.source.label;
  const first = names[0];
  const width = session.width();
  // All eleven fields of courses need about 110 columns; below that the first
  // query should still show a table.
  const example =
    spec.kind === 'data' && spec.demo === true && names.includes('courses')
      ? width >= 110
        ? 'from courses where subject = math limit 5'
        : 'from courses select code, title search "algebra"'
      : first === undefined
        ? 'from <resource id> limit 5'
        : `from ${valueText(first) ?? first} limit 5`;
  const name = `ckql ${version}`.trim();
  const variants = [
    [name, `${session.source.label}${listed === '' ? '' : `: ${listed}`}`, `try: ${example}`, '.help for more'],
    [name, `${kind}${listed === '' ? '' : `: ${listed}`}`, `try: ${example}`, '.help for more'],
    [name, `${kind}${listed === '' ? '' : `: ${listed}`}`, `try: ${example}`],
    [name, kind, `try: ${example}`],
  ].map((parts) => parts.join(' — '));
  return variants.find((line) => stringWidth(line) <= width) ?? variants.at(-1) ?? name;
}

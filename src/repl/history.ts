/**
 * The REPL's history file: in the XDG state directory, mode 0600, and never
 * holding a secret. Lines are redacted before they are kept (in memory and on
 * disk), as mongosh does, so a token typed or pasted by mistake goes nowhere.
 *
 * The file is written here rather than with `REPLServer.setupHistory`, whose
 * writer cannot be told to redact.
 */
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import type { REPLServer } from 'node:repl';

/** What a secret is replaced with. */
export const redactedText = '[redacted]';

/**
 * `$XDG_STATE_HOME/ckql/history`, or `~/.local/state/ckql/history`.
 * @example defaultHistoryFile({ XDG_STATE_HOME: '/s' }) // '/s/ckql/history'
 */
export function defaultHistoryFile(env: NodeJS.ProcessEnv = process.env): string {
  const state = env.XDG_STATE_HOME !== undefined && env.XDG_STATE_HOME !== '' ? env.XDG_STATE_HOME : join(env.HOME ?? homedir(), '.local', 'state');
  return join(state, 'ckql', 'history');
}

const value = String.raw`("[^"]*"|'[^']*'|[^\s;,&"']+)`;
const patterns: readonly RegExp[] = [
  // `Authorization: xyz`, `authorization=xyz`, `"Authorization": "xyz"`
  new RegExp(String.raw`(\bauthorization\b["']?\s*[:=]\s*)` + value, 'gi'),
  // a command-line flag: `--token xyz`, `--api-key=xyz`
  new RegExp(String.raw`(--(?:token|api-?key|password)(?:\s+|=))` + value, 'gi'),
  // token-like settings: `token=xyz`, `apikey: xyz`, `X-CKAN-API-Key: xyz` (not
  // "token" as a plain word, which a search text may hold)
  new RegExp(String.raw`(\b(?:api[-_]?key|x-ckan-api-key|access[-_]?token|token|password|secret)\b["']?\s*[:=]\s*)` + value, 'gi'),
  // a password in a URL: https://user:password@host
  /(\b[a-z][a-z0-9+.-]*:\/\/[^/\s:@]+:)([^@\s/]+)(?=@)/gi,
  // a JSON Web Token (CKAN API tokens are JWTs)
  /()(\beyJ[A-Za-z0-9_-]{6,}\.[A-Za-z0-9_-]{6,}\.[A-Za-z0-9_-]{6,})/g,
];

/**
 * `line` with every known secret, every `Authorization` value, token-like
 * `key=value` and JWT replaced by `[redacted]`.
 * @example redactSecrets('.connect https://me:hunter2@data.example.org', []) // '.connect https://me:[redacted]@data.example.org'
 */
export function redactSecrets(line: string, secrets: readonly string[]): string {
  let text = line;
  // Longest first, so a secret that contains another is replaced whole.
  for (const secret of [...secrets].filter((s) => s.length >= 4).sort((a, b) => b.length - a.length)) {
    text = text.split(secret).join(redactedText);
  }
  for (const pattern of patterns) {
    text = text.replace(pattern, (match, keep: string, value: string) =>
      value === redactedText || value === `"${redactedText}"` ? match : `${keep}${redactedText}`,
    );
  }
  return text;
}

export interface HistoryOptions {
  readonly file: string;
  /** values that must never be written (the configured token) */
  readonly secrets: () => readonly string[];
  readonly size: number;
}

/**
 * The lines of the history file, newest first as readline keeps them,
 * redacted (a file from an older version may hold what is now known to be
 * secret). A missing file is an empty history; a file that cannot be read
 * throws.
 */
export function readHistory(options: HistoryOptions): string[] {
  let text: string;
  try {
    text = readFileSync(options.file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  // the file is oldest first, like a shell's
  const lines = text.split('\n').filter((line) => line.trim() !== '');
  return lines
    .slice(-options.size)
    .reverse()
    .map((line) => redactSecrets(line, options.secrets()));
}

/**
 * Gives `server` the lines read before and keeps the file written,
 * redacted, on every new line. A file that cannot be written costs the
 * history, never the session: `onError` hears about it once.
 */
export function keepHistory(server: REPLServer, lines: readonly string[], options: HistoryOptions, onError: (error: unknown) => void): void {
  let failed = false;
  // `history` is readline's own array (newest first); @types/node leaves it out of REPLServer.
  (server as unknown as { history: string[] }).history = [...lines];
  server.on('history', (history: string[]) => {
    for (let i = 0; i < history.length; i += 1) {
      const line = history[i];
      if (line !== undefined) history[i] = redactSecrets(line, options.secrets());
    }
    if (failed) return;
    try {
      mkdirSync(dirname(options.file), { recursive: true, mode: 0o700 });
      const temporary = `${options.file}.${process.pid}.tmp`;
      writeFileSync(temporary, `${[...history].reverse().join('\n')}\n`, { mode: 0o600 });
      renameSync(temporary, options.file);
    } catch (error) {
      failed = true;
      onError(error);
    }
  });
}

/**
 * One line that means what the lines of a continued statement meant: joined
 * with spaces, each `--` comment dropped (it would swallow what follows),
 * text in quotes and backticks kept as it is.
 * @example statementLine('from courses -- all\nwhere stage = "a -- b"') // 'from courses where stage = "a -- b"'
 */
export function statementLine(text: string): string {
  const lines = text.split(/\r?\n/).map((line) => {
    let quote: string | undefined;
    for (let i = 0; i < line.length; i += 1) {
      const char = line[i] as string;
      if (quote !== undefined) {
        if (char === '\\' && quote !== '`') i += 1;
        else if (char === quote) quote = undefined;
      } else if (char === '"' || char === "'" || char === '`') {
        quote = char;
      } else if (char === '-' && line[i + 1] === '-') {
        return line.slice(0, i);
      }
    }
    return line;
  });
  return lines.map((line) => line.trim()).filter((line) => line !== '').join(' ');
}

/**
 * After a statement typed over several lines has run: its lines, which
 * readline kept one entry each, become one entry, so Up brings the whole
 * statement back.
 */
export function mergeStatementHistory(server: REPLServer, text: string): void {
  const history = (server as unknown as { history?: string[] }).history;
  if (history === undefined) return;
  const lines = text.split(/\r?\n/).filter((line) => line.trim() !== '');
  if (lines.length < 2) return;
  let taken = 0;
  // Newest first: the statement's last line is history[0]. readline skips a line equal to the one before it.
  for (let i = lines.length - 1; i >= 0 && taken < history.length; i -= 1) {
    if (history[taken] === lines[i]) taken += 1;
  }
  history.splice(0, taken, statementLine(text));
}

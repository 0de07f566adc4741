/**
 * A one-line progress bar on a terminal's stderr: what is loading, a bar,
 * rows so far, rows per second and the time left. It rewrites itself in
 * place (`\r`, clear to end of line) at most every `PROGRESS_INTERVAL_MS`,
 * and is silent where nobody watches: a stream that is not a terminal, or CI.
 */

import type { FileProgress } from '../engine/memory/load.js';
import { countText } from './count-text.js';

/** How far a job is: `fraction` of it done (0…1), `rows` so far, of `totalRows` when known. */
export interface Progress {
  readonly label: string;
  readonly rows: number;
  readonly fraction: number;
  readonly totalRows?: number;
  /**
   * what the job does when rows do not measure it (`index 2 of 4`): shown
   * instead of the rows and their rate, with the seconds spent on it
   */
  readonly detail?: string;
}

export interface ProgressBar {
  update(progress: Progress): void;
  /** clears the line (the caller prints its own summary) */
  done(): void;
}

/** The stream a bar draws on: a terminal's stderr, or a fake one in tests. */
export interface ProgressStream {
  readonly isTTY?: boolean;
  readonly columns?: number;
  write(text: string): unknown;
}

const PROGRESS_INTERVAL_MS = 100;
const BAR_WIDTH = 24;

/**
 * A bar on `stream` when it is a terminal and `env` is not CI's; else one
 * that draws nothing. `now` is the clock (tests pass their own).
 * @example
 * const bar = progressBar(process.stderr, process.env);
 * bar.update({ label: 'enrolments', rows: 412_000, fraction: 0.41 });
 * // enrolments [##########..............] 412,000 rows, 205,000 rows/s, 3 s left
 * bar.done();
 */
export function progressBar(stream: ProgressStream, env: NodeJS.ProcessEnv, now: () => number = Date.now): ProgressBar {
  const ci = env['CI'] !== undefined && env['CI'] !== '' && env['CI'] !== 'false' && env['CI'] !== '0';
  if (stream.isTTY !== true || ci) return { update: () => undefined, done: () => undefined };
  let label: string | undefined;
  let started = 0;
  let drawn = 0;
  let shown = false;
  return {
    update: (progress) => {
      const at = now();
      if (progress.label !== label) [label, started, drawn] = [progress.label, at, 0];
      else if (at - drawn < PROGRESS_INTERVAL_MS && progress.fraction < 1) return;
      drawn = at;
      const line = progressLine(progress, (at - started) / 1000);
      // a terminal that reports 0 columns (some do, when detached) gets the usual width
      const width = stream.columns || 80;
      stream.write(`\r${line.length >= width ? line.slice(0, Math.max(0, width - 1)) : line}\u001b[K`);
      shown = true;
    },
    done: () => {
      if (shown) stream.write('\r\u001b[K');
      shown = false;
    },
  };
}

/**
 * The bar's text after `seconds` of work.
 * @example
 * progressLine({ label: 'big', rows: 500_000, fraction: 0.5 }, 2)
 * // → 'big [############............] 500,000 rows, 250,000 rows/s, 2 s left'
 */
export function progressLine(progress: Progress, seconds: number): string {
  const fraction = Math.min(1, Math.max(0, progress.fraction));
  const filled = Math.round(fraction * BAR_WIDTH);
  if (progress.detail !== undefined) {
    return `${progress.label} [${'#'.repeat(filled)}${'.'.repeat(BAR_WIDTH - filled)}] ${progress.detail}, ${Math.floor(seconds)} s`;
  }
  const rows = progress.totalRows === undefined ? countText(progress.rows, 'row') : `${count(progress.rows)}/${countText(progress.totalRows, 'row')}`;
  const rate = seconds > 0 ? progress.rows / seconds : 0;
  const left = fraction > 0 && fraction < 1 && seconds > 0 ? `, ${Math.ceil((seconds * (1 - fraction)) / fraction)} s left` : '';
  return `${progress.label} [${'#'.repeat(filled)}${'.'.repeat(BAR_WIDTH - filled)}] ${rows}${rate > 0 ? `, ${count(Math.round(rate))} rows/s` : ''}${left}`;
}

function count(n: number): string {
  return n.toLocaleString('en-US');
}

/**
 * A bar for the reading of local data files (`loadResources`'s
 * `onProgress`): rows so far, the share of the file's bytes read.
 * @example
 * const bar = fileProgressBar(process.stderr, process.env);
 * await loadResources('big.csv', { onProgress: bar.update }).finally(bar.done);
 */
export function fileProgressBar(stream: ProgressStream, env: NodeJS.ProcessEnv, now?: () => number): { update(progress: FileProgress): void; done(): void } {
  const bar = progressBar(stream, env, now);
  return {
    update: (p) => bar.update({ label: `reading ${p.resource}`, rows: p.rows, fraction: p.totalBytes === 0 ? 1 : p.bytes / p.totalBytes }),
    done: () => bar.done(),
  };
}

/**
 * The progress of reading local data files as text, for a line someone
 * else draws (the REPL's spinner): `current()` is the latest, `undefined`
 * once reading is over.
 * @example
 * const loading = fileProgressText();
 * await loadResources('big.csv', { onProgress: loading.update }).finally(loading.done);
 * startRepl({ source, status: loading.current }); // "⠹ reading big [####…] 412,000 rows, … (Ctrl-C cancels)"
 */
export function fileProgressText(now: () => number = Date.now): { update(progress: FileProgress): void; done(): void; current(): string | undefined } {
  let text: string | undefined;
  let label: string | undefined;
  let started = 0;
  return {
    update: (p) => {
      const at = now();
      if (p.resource !== label) [label, started] = [p.resource, at];
      text = progressLine({ label: `reading ${p.resource}`, rows: p.rows, fraction: p.totalBytes === 0 ? 1 : p.bytes / p.totalBytes }, (at - started) / 1000);
    },
    done: () => {
      text = undefined;
      label = undefined;
    },
    current: () => text,
  };
}

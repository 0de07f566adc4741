/**
 * A one-line spinner on stderr while a query runs: only on a terminal, and
 * only once the query has taken long enough to notice, so quick queries
 * never flicker. Written by hand with `\r` and erase-line rather than with a
 * live ink render, which would take a renderer per stream and cursor state
 * that the REPL's own line editing does not expect.
 */
import type { Writable } from 'node:stream';

const frames = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

export interface Spinner {
  stop(): void;
}

/**
 * Starts a spinner on `stream` if it is a TTY; otherwise does nothing.
 * `label` is read at each frame (a load's progress can change it), and the
 * line is cut to the terminal's width so that `\r` rewrites it in place.
 */
export function startSpinner(stream: Writable & { isTTY?: boolean; columns?: number }, label: string | (() => string), delayMs = 150): Spinner {
  if (stream.isTTY !== true) return { stop: () => undefined };
  const started = performance.now();
  let frame = 0;
  let drawn = false;
  let interval: NodeJS.Timeout | undefined;
  const draw = (): void => {
    const elapsed = `${((performance.now() - started) / 1000).toFixed(1)}s`;
    const line = `${frames[frame % frames.length]} ${typeof label === 'string' ? label : label()} ${elapsed} (Ctrl-C cancels)`;
    const width = stream.columns ?? 80;
    stream.write(`\r\x1b[2K${line.length >= width ? line.slice(0, Math.max(0, width - 1)) : line}`);
    frame += 1;
    drawn = true;
  };
  const delay = setTimeout(() => {
    draw();
    interval = setInterval(draw, 80);
  }, delayMs);
  return {
    stop: () => {
      clearTimeout(delay);
      if (interval !== undefined) clearInterval(interval);
      if (drawn) stream.write('\r\x1b[2K');
    },
  };
}

/**
 * Whether to colour a stream, decided once in the entry point:
 * `NO_COLOR` (non-empty) > `FORCE_COLOR` (0 off, 1–3 on) > `TERM=dumb` >
 * whether the stream is a terminal. chalk (inside ink) ignores `NO_COLOR`,
 * so the entry point also sets `FORCE_COLOR=0` before ink can load
 * (docs/ecosystem-and-ux-reference.md §6).
 */

/**
 * @example useColor({ isTTY: true }, { NO_COLOR: '1' }) // false
 */
export function useColor(stream: { readonly isTTY?: boolean }, env: NodeJS.ProcessEnv): boolean {
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== '') return false;
  const force = env.FORCE_COLOR;
  if (force !== undefined && force !== '') return force !== '0' && force !== 'false';
  if (env.TERM === 'dumb') return false;
  return stream.isTTY === true;
}

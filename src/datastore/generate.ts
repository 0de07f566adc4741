/**
 * Functions generated from source text, shared by every caller with the same
 * source: the memory engine's scans, folds and record factories
 * (engine/memory/row-shape.ts) and the response's record writer
 * (response.ts). Callers embed names only as JSON string literals, which
 * are valid JavaScript string literals for every string, so no field name
 * can inject code.
 */

/**
 * Generated functions by their source: tables with the same field names share
 * one function, which V8 has already optimized (a fresh table would otherwise
 * run a fresh, cold function over all its rows). Bounded: cleared when full.
 */
const generated = new Map<string, unknown>();
const GENERATED_MAX = 512;

/**
 * `new Function(...params, body)`, shared by every caller with the same
 * source; undefined when code generation is disabled.
 * @example
 * generate<(r: Row) => unknown>(['r'], 'return r["year"];')?.({ year: 2020 }) // 2020
 */
export function generate<F>(params: readonly string[], body: string): F | undefined {
  const key = `${params.join(',')}\n${body}`;
  const known = generated.get(key);
  if (known !== undefined) return known as F;
  let made: F;
  try {
    made = new Function(...params, body) as F;
  } catch {
    // Code generation can be disabled (--disallow-code-generation-from-strings): fall back.
    return undefined;
  }
  if (generated.size >= GENERATED_MAX) generated.clear();
  generated.set(key, made);
  return made;
}

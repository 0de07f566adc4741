/**
 * V8's tier-up of WebAssembly for the `ckql` bin. By default V8 recompiles a
 * wasm function with its optimizing compiler (TurboFan) once it has run for
 * a small budget, on background threads. PGlite's PostgreSQL is 9 MB of wasm
 * whose start and first statements touch many large functions: on a
 * one-shot query the recompiling cost more CPU than the whole rest of the
 * command (`ckql query … --engine pglite` on 65 records: 1.85 s of CPU and
 * 275 MB peak RSS by default, 0.8 s and 190 MB with the budget below). A
 * budget ~550× the default (1,800,000) leaves only functions that run a lot
 * to be optimized: loading 200,000 rows took 4 % more CPU than by default,
 * 20,000 rows 25 % less. Figures: BENCHMARKS.md, section 7 (Startup).
 *
 * Set by the bin only (a library does not change its embedder's V8), and not
 * when the person running it chose how wasm tiers (`node --liftoff-only`,
 * `NODE_OPTIONS=--wasm-tiering-budget=…`).
 */
import { setFlagsFromString } from 'node:v8';

/** Bytes a wasm function runs (V8's rough count) before V8 optimizes it. */
export const WASM_TIERING_BUDGET = 1_000_000_000;

/** Whether node's own options (`execArgv`, `NODE_OPTIONS`) already say how wasm tiers. */
export function choseWasmTiering(execArgv: readonly string[], nodeOptions: string | undefined): boolean {
  return [...execArgv, ...(nodeOptions ?? '').split(/\s+/)].some((option) => /^--(?:no-)?(?:wasm[-_](?:tiering[-_]budget|dynamic[-_]tiering|tier[-_]up)|liftoff(?:[-_]only)?)(?:=|$)/.test(option));
}

/** Raises V8's wasm tiering budget for this process, before any wasm module is compiled. */
export function tierWasmLate(execArgv: readonly string[] = process.execArgv, nodeOptions: string | undefined = process.env['NODE_OPTIONS']): void {
  if (!choseWasmTiering(execArgv, nodeOptions)) setFlagsFromString(`--wasm-tiering-budget=${WASM_TIERING_BUDGET}`);
}

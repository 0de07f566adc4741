/**
 * Section 1's "via tsx" row in a process of its own: `compile(text)` of the
 * corpus from `src/` through the tsx loader (esbuild, keepNames), as `npm run
 * dev` and vitest run it. In the section's process this second build of the
 * parser ran on the same Chevrotain module as the tsc build, whose rules then
 * met two parser classes and two sets of closures: the tsc row measured
 * ≈ 3–5 % slower beside it than alone. Prints `{ perQueryMs }`.
 */
import { compile } from '../../src/compile/compile.js';
import { CORPUS } from '../lib/corpus.js';
import { measureSync, type MeasureOptions } from '../lib/harness.js';

const [passesText, optionsText] = process.argv.slice(2);
const passes = Number(passesText);
const options = JSON.parse(optionsText as string) as MeasureOptions;
const sources = CORPUS.map((c) => c.ckql);
const m = measureSync(
  [{ name: 'compile(text) via tsx', fn: () => { let last; for (let p = 0; p < passes; p++) for (const s of sources) last = compile(s); return last; } }],
  options,
);
process.stdout.write(`${JSON.stringify({ perQueryMs: m.get('compile(text) via tsx')!.median / (sources.length * passes) })}\n`);

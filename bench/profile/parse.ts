/** Profiling load for section 1: compile(text) over the corpus for a few seconds. */
import { compile } from '../../src/compile/compile.js';
import { CORPUS } from '../lib/corpus.js';

const seconds = Number(process.argv[2] ?? 5);
const sources = CORPUS.map((c) => c.ckql);
const end = performance.now() + seconds * 1000;
let n = 0;
let last: unknown;
while (performance.now() < end) {
  for (const s of sources) last = compile(s);
  n += sources.length;
}
console.log(`${n} queries, ${((seconds * 1e6) / n).toFixed(2)} µs/query`, typeof last);

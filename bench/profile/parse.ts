/**
 * Profiling load for section 1: compile(text) over the corpus for a few seconds,
 * from the tsc build (run `npm run bench -- --only parse` once to build it).
 *
 *   node --cpu-prof --cpu-prof-dir=/tmp/prof --import tsx bench/profile/parse.ts [seconds] [parse|compile]
 */
import { ckqlModules } from '../lib/ckql.js';
import { CORPUS } from '../lib/corpus.js';

const seconds = Number(process.argv[2] ?? 5);
const what = process.argv[3] ?? 'compile';
const [{ compile }, { parse }] = await Promise.all([ckqlModules.compile(), ckqlModules.parse()]);
const run: (s: string) => unknown = what === 'parse' ? parse : compile;
const sources = CORPUS.map((c) => c.ckql);
const end = performance.now() + seconds * 1000;
let n = 0;
let last: unknown;
while (performance.now() < end) {
  for (const s of sources) last = run(s);
  n += sources.length;
}
console.log(`${what}: ${n} queries, ${((seconds * 1e6) / n).toFixed(2)} µs/query`, typeof last);

/**
 * The passes of a first call on a plain array, alone: the key check
 * (`keysLikeFirst`'s generated loop), the filter scan (`scanFor`'s
 * generated loop for section 2's three filters, in cost order), the two one
 * after the other as `evaluate` runs them, and the two fused into one loop
 * per record (the experiment bench/analysis.md reports), beside the hand
 * loop and a bare `for…in` that only counts keys. The loops are written out
 * here as the engine generates them, so each runs alone in its own process.
 *
 *   node --import tsx bench/profile/plain-passes.ts <two|keys|count|scan|fused|hand|forin> [seconds]
 */
import type { Row } from '../../src/datastore/types.js';
import { enrolmentsFile } from '../lib/data.js';
import { countKeys, handThreeFilters } from '../lib/plain-loops.js';
import { loadTable } from '../lib/tables.js';

const [who = 'two', secondsText] = process.argv.slice(2);
const table = await loadTable(enrolmentsFile(10_000));
const plain = JSON.parse(JSON.stringify(table.rows)) as Row[];
const keys = Object.keys(plain[0] as Row);
const intern = (text: string): string => Object.keys({ [text]: 0 })[0] as string;
// the scan's wanted values (`w`) and tests (`t`, which decide what is neither string nor number: here null)
const wanted = ['5', 5, intern('2023-autumn'), intern('2024-spring'), intern('completed')];
const tests = [(v: unknown) => v === '5', () => false, () => false];
const grow = (list: Int32Array, max: number): Int32Array => {
  const bigger = new Int32Array(Math.min(max, Math.max(1024, list.length * 4)));
  bigger.set(list);
  return bigger;
};
const hasKeys = (row: Row, list: readonly string[], n: number): boolean => {
  let j = 0;
  for (const key in row) {
    if (j < n && key === list[j]) j++;
    else return false;
  }
  return j === n;
};

const locals = 'const t0 = t[0], t1 = t[1], t2 = t[2], w0 = w[0], w1 = w[1], w2 = w[2], w3 = w[3], w4 = w[4];';
const test = '((typeof (v = r["grade"]) === "string" ? (v === w0) : typeof v === "number" ? (v === w1) : t0(v)) && (typeof (v = r["term"]) === "string" ? (v === w2 || v === w3) : typeof v === "number" ? false : t1(v)) && (typeof (v = r["status"]) === "string" ? (v === w4) : typeof v === "number" ? false : t2(v)))';
const present = keys.map((key) => `${JSON.stringify(key)} in r`).join(' && ');
const check = (fail: string): string => `same: {
  if (typeof r === "object" && r !== null) {
    let count = 0;
    for (const key in r) count++;
    if (count === nk && ${present}) {
      const proto = prototypeOf(r);
      if (proto === objectPrototype || proto === null) break same;
    }
  }
  if (!has(r, keys, nk)) ${fail};
}`;
const collect = `if (k < max) {
  if (k === out.length) out = grow(out, max);
  out[k] = i;
}
k++;`;
type Pass = (rows: readonly Row[]) => unknown;
const generated = (body: string): Pass => {
  const run = new Function('rows', 'keep', 't', 'w', 'grow', 'keys', 'has', 'objectPrototype', 'prototypeOf', `${locals}
const nk = keys.length;
const n = rows.length;
const max = n < keep ? n : keep;
let out = new Int32Array(max < 1024 ? max : 1024);
let k = 0;
let v;
${body}`) as (...args: unknown[]) => unknown;
  return (rows) => run(rows, 100, tests, wanted, grow, keys, hasKeys, Object.prototype, Object.getPrototypeOf);
};
const keyPass = generated(`for (let i = 1; i < n; i++) {
  const r = rows[i];
  ${check('return false')}
}
return true;`);
const countPass = generated(`for (let i = 1; i < n; i++) {
  let count = 0;
  for (const key in rows[i]) count++;
  if (count !== nk) return false;
}
return true;`);
const scanPass = generated(`for (let i = 0; i < n; i++) {
  const r = rows[i];
  if (!${test}) continue;
  ${collect}
}
return k;`);
const fusedPass = generated(`for (let i = 0; i < n; i++) {
  const r = rows[i];
  ${check('return undefined')}
  if (!${test}) continue;
  ${collect}
}
return k;`);
const hand: Pass = handThreeFilters;
const forin: Pass = countKeys;
const passes: Record<string, Pass> = {
  two: (rows) => (keyPass(rows) === true ? scanPass(rows) : undefined),
  keys: keyPass,
  count: countPass,
  scan: scanPass,
  fused: fusedPass,
  hand,
  forin,
};
const pass = passes[who];
if (pass === undefined) throw new Error(`plain-passes: one of ${Object.keys(passes).join(', ')}`);
if (who === 'two' || who === 'fused') {
  const expected = hand(plain);
  if (pass(plain) !== expected) throw new Error(`plain-passes: ${who} counted ${String(pass(plain))} matches, the hand loop ${String(expected)}`);
}
const end = performance.now() + Number(secondsText ?? 3) * 1000;
const times: number[] = [];
let sink = 0;
while (performance.now() < end) {
  const rows = plain.slice();
  const t0 = performance.now();
  sink += pass(rows) === undefined ? 0 : 1;
  times.push(performance.now() - t0);
}
times.sort((a, b) => a - b);
console.log(`${who}: ${times.length} runs, median ${((times[times.length >> 1] ?? 0) * 1000).toFixed(1)} µs, p10 ${((times[Math.floor(times.length / 10)] ?? 0) * 1000).toFixed(1)} µs`, sink > 0);

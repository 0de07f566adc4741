/**
 * Experiment: does running the peers between ckql samples change ckql's
 * figure? Measures `in` over 200k enrolments with and without mingo/liqe in
 * the same tinybench group.
 */
import { Query as MingoQuery } from 'mingo';
import siftModule from 'sift';
import { filter as liqeFilter, parse as liqeParse } from 'liqe';
import type { Row } from '../../src/datastore/types.js';
import { ckqlModules } from '../lib/ckql.js';
import { enrolmentsFile } from '../lib/data.js';
import { measureSync } from '../lib/harness.js';
import { loadTable } from '../lib/tables.js';

const table = await loadTable(enrolmentsFile(Number(process.argv[2] ?? 200_000)));
const [{ compile }, { evaluate }] = await Promise.all([ckqlModules.compile(), ckqlModules.evaluate()]);
const request = compile('from enrolments where status in (failed, withdrawn)');
const rows = table.rows;
const hand = () => {
  const out: Row[] = [];
  let total = 0;
  for (let i = 0; i < rows.length; i++) {
    const r = rows[i] as Row;
    if (r.status === 'failed' || r.status === 'withdrawn') {
      if (total < 100) out.push(r);
      total++;
    }
  }
  return total;
};
const mingo = new MingoQuery({ status: { $in: ['failed', 'withdrawn'] } });
const opts = { timeMs: 400, minSamples: 4, rounds: 2, warmupMs: 0, warmupIterations: 0 };
const siftTest = siftModule.default({ status: { $in: ['failed', 'withdrawn'] } });
const liqeAst = liqeParse('status:"failed" OR status:"withdrawn"');
const which = (process.argv[3] ?? 'mingo,sift,liqe').split(',');
for (const withPeer of [false, true, false]) {
  const tasks = [
    { name: 'ckql', fn: () => evaluate(request, table).total },
    { name: 'hand', fn: hand },
    ...(withPeer && which.includes('mingo') ? [{ name: 'mingo', fn: () => mingo.find(rows as Row[]).all().length }] : []),
    ...(withPeer && which.includes('sift') ? [{ name: 'sift', fn: () => rows.filter(siftTest).length }] : []),
    ...(withPeer && which.includes('liqe') ? [{ name: 'liqe', fn: () => liqeFilter(liqeAst, rows as Row[] as Record<string, unknown>[]).length }] : []),
  ];
  const m = measureSync(tasks, opts);
  console.log(withPeer ? 'with mingo   ' : 'without peers', [...m.values()].map((x) => `${x.name} ${x.median.toFixed(3)} ms (n=${x.samples}, mad ${x.madPercent.toFixed(0)}%)`).join(', '));
}

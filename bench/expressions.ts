/**
 * Section 13: expressions on the memory engine (docs/expressions.md, issue
 * 31's figure): `select price * qty as total, round(price, 1) as p` over
 * generated rows (prices of two decimals, whole quantities), every row
 * read, against a hand loop over the same records that computes the same two
 * columns on doubles (what a person writes; it is not exact for every
 * numeric, which ckql is).
 */
import type { RunConfig } from './lib/config.js';
import { ckqlModules } from './lib/ckql.js';
import { formatRatio, formatTime, measureAsync, measureSync } from './lib/harness.js';
import type { SectionResult } from './lib/report.js';

export async function benchExpressions(config: RunConfig, log: (line: string) => void): Promise<SectionResult> {
  const [{ memoryEngine }, { parse }] = await Promise.all([ckqlModules.memoryEngine(), ckqlModules.parse()]);
  const n = config.quick ? 100_000 : 1_000_000;
  const rows = Array.from({ length: n }, (_, i) => ({ _id: i + 1, price: Math.round((i % 9973) * 137) / 100, qty: (i % 17) + 1 }));
  const table = {
    id: 'items',
    aliases: ['items'],
    fields: [{ id: '_id', type: 'int' as const }, { id: 'price', type: 'numeric' as const }, { id: 'qty', type: 'int' as const }],
    rows,
  };
  const engine = memoryEngine([table]);
  const query = parse(`from items select price * qty as total, round(price, 1) as p limit ${n}`);
  const ckql = async (): Promise<number> => {
    const stream = await engine.query(query, {});
    let count = 0;
    for await (const batch of stream.batches) count += batch.length;
    return count;
  };
  const hand = (): number => {
    const out: { total: number; p: number }[] = new Array(n);
    for (let i = 0; i < n; i++) {
      const r = rows[i]!;
      out[i] = { total: r.price * r.qty, p: Math.round(r.price * 10) / 10 };
    }
    return out.length;
  };
  if ((await ckql()) !== n || hand() !== n) throw new Error('expressions: a contender did not give every row');
  log(`expressions: ${n.toLocaleString('en-US')} rows`);
  const options = config.quick ? { timeMs: 2_000, minSamples: 2, rounds: 1 } : { timeMs: 20_000, minSamples: 6, rounds: 3 };
  const ours = (await measureAsync([{ name: 'ckql', fn: ckql }], options)).get('ckql')!.median;
  const floor = measureSync([{ name: 'hand', fn: hand }], options).get('hand')!.median;
  const ratio = ours / floor;
  return {
    id: 'expressions',
    title: '13. Expressions on the memory engine',
    tables: [
      {
        title: `select price * qty as total, round(price, 1) as p over ${n.toLocaleString('en-US')} rows, every row read: median`,
        headers: ['contender', 'time', 'ratio'],
        rows: [
          ['ckql memory engine (exact numeric)', formatTime(ours), formatRatio(ratio)],
          ['hand loop on doubles', formatTime(floor), '1'],
        ],
      },
    ],
    targets: [{ section: 'expressions', what: `price * qty, round(price, 1) over ${n.toLocaleString('en-US')} rows ÷ a hand loop`, goal: '≤ 2×', measured: formatRatio(ratio), met: ratio <= 2 }],
    notes: [
      'The memory engine computes a numeric exactly, as PostgreSQL does. Each expression of the exact number types has a scaled path: one generated function that reads each value as `units / 10^scale` in doubles (its places found by a round trip: `m / 10^p` reads back as the double with |m| < 10^15), multiplies, adds and rounds those integers exactly while they stay below 2^53, and divides by 10^scale once for the record; a value or result past 2^53 units, a null or text goes to the exact path (BigInt decimals) for that row. The hand loop multiplies doubles (32.41 * 3 is 97.22999999999999 there; 97.23 here).',
    ],
  };
}

/**
 * Section 14: windows on the memory engine (docs/expressions.md, issue 31's
 * figure): the top 3 per category, `row_number() over (partition by
 * category order by price desc) as r … qualify r <= 3`, over generated rows
 * (1,000 categories, prices of two decimals), against a hand loop that
 * groups the records by category and sorts each group (what a person
 * writes), and against PostgreSQL running ckql's one statement for the
 * same query over the same rows (loaded first, without indexes; the query
 * alone is timed), measured in the same run.
 */
import type { Row } from '../src/datastore/types.js';
import type { RunConfig } from './lib/config.js';
import { ckqlModules } from './lib/ckql.js';
import { withLoadedPostgres } from './lib/postgres.js';
import { formatRatio, formatTime, medianTime } from './lib/harness.js';
import type { SectionResult, Target } from './lib/report.js';

const CATEGORIES = 1_000;

interface Item {
  readonly _id: number;
  readonly category: string;
  readonly price: number;
}

async function drain(stream: { batches: AsyncGenerator<readonly unknown[], void, undefined> }): Promise<number> {
  let n = 0;
  for await (const batch of stream.batches) n += batch.length;
  return n;
}

/** The top 3 of each category by price, by hand: the records grouped, each group sorted (ties in the records' order). */
function handTop3(rows: readonly Item[]): { category: string; _id: number; price: number; r: number }[] {
  const groups = new Map<string, Item[]>();
  for (const row of rows) {
    const list = groups.get(row.category);
    if (list === undefined) groups.set(row.category, [row]);
    else list.push(row);
  }
  const out: { category: string; _id: number; price: number; r: number }[] = [];
  for (const [category, list] of groups) {
    list.sort((a, b) => b.price - a.price);
    for (let i = 0; i < 3 && i < list.length; i++) out.push({ category, _id: list[i]!._id, price: list[i]!.price, r: i + 1 });
  }
  return out;
}

export async function benchWindows(config: RunConfig, log: (line: string) => void): Promise<SectionResult> {
  const [{ memoryEngine }, { parse }] = await Promise.all([ckqlModules.memoryEngine(), ckqlModules.parse()]);
  const n = config.quick ? 100_000 : 1_000_000;
  const runs = config.quick ? 3 : 7;
  const rows: Item[] = Array.from({ length: n }, (_, i) => ({ _id: i + 1, category: `c${(i * 7919) % CATEGORIES}`, price: ((i * 104_729) % 100_000) / 100 }));
  const table = {
    id: 'items',
    aliases: ['items'],
    fields: [{ id: '_id', type: 'int' as const }, { id: 'category', type: 'text' as const }, { id: 'price', type: 'numeric' as const }],
    rows: rows as unknown as Row[],
  };
  const text = 'from items select category, _id, price, row_number() over (partition by category order by price desc) as r qualify r <= 3';
  const query = parse(text);
  const engine = memoryEngine([table]);
  const ckql = async (): Promise<number> => drain(await engine.query(query, { all: true }));
  // the same rows, each category's in the same order (prices are distinct within a category)
  const expected = handTop3(rows).length;
  if ((await ckql()) !== expected || expected !== CATEGORIES * 3) throw new Error('windows: a contender did not give the top 3 of every category');
  log(`windows: ${n.toLocaleString('en-US')} rows`);
  const hand = await medianTime(runs, () => handTop3(rows).length);
  const ours = await medianTime(runs, ckql);

  const serverUrl = process.env['CKQL_BENCH_PG_URL'] ?? process.env['CKQL_TEST_PG_URL'];
  let native: number | undefined;
  if (serverUrl !== undefined) {
    log('windows: loading PostgreSQL');
    native = await withLoadedPostgres(serverUrl, [table], async (postgres) => {
      const answer = async (): Promise<number> => drain(await postgres.query(query, { all: true }));
      if ((await answer()) !== expected) throw new Error('windows: PostgreSQL did not give the top 3 of every category');
      return medianTime(Math.min(runs, 5), answer);
    });
  }
  const ratio = ours / hand;
  const targets: Target[] = [
    { section: 'windows', what: `row_number() … qualify r <= 3 over ${n.toLocaleString('en-US')} rows ÷ a hand loop (sort per group)`, goal: '≤ 2×', measured: formatRatio(ratio), met: ratio <= 2 },
    {
      section: 'windows',
      what: 'the same on the memory engine faster than PostgreSQL on the same rows',
      goal: '< 1×',
      measured: native === undefined ? 'not measured (no CKQL_BENCH_PG_URL or CKQL_TEST_PG_URL)' : formatRatio(ours / native),
      met: native !== undefined && ours < native,
    },
  ];
  return {
    id: 'windows',
    title: '14. Windows on the memory engine',
    tables: [
      {
        title: `\`${text}\` over ${n.toLocaleString('en-US')} rows (${CATEGORIES.toLocaleString('en-US')} categories), every row read, ${CATEGORIES * 3} given: median of ${runs}`,
        headers: ['contender', 'time', '÷ hand loop'],
        rows: [
          ['hand loop: group by category, sort each group, take 3 (the floor)', formatTime(hand), '1'],
          ['ckql memory engine (the window step)', formatTime(ours), formatRatio(ratio)],
          ['PostgreSQL 15 (ckql\'s one statement)', native === undefined ? '–' : formatTime(native), native === undefined ? '–' : formatRatio(native / hand)],
        ],
      },
    ],
    targets,
    notes: [
      'The memory engine answers the query without its windows first (the records with their category, _id and price), then hashes them into their categories, sorts each by a typed array of its prices, numbers the rows and tests qualify on the numbers; only the 3,000 rows kept are made again as records. PostgreSQL runs the statement the sql target writes (windows over a subquery, qualify a WHERE over it) over a table loaded without indexes.',
    ],
  };
}

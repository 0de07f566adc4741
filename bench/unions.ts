/**
 * Section 15: unions on the memory engine (docs/expressions.md, Unions):
 * two yearly resources of 500,000 records each read as one table, grouped
 * by `_resource`, against a hand loop over both tables (what a person
 * writes) and PostgreSQL running ckql's one `UNION ALL` statement over the
 * same rows (loaded first, without indexes; the query alone is timed),
 * measured in the same run. The memory engine makes the union's table at
 * its first query and keeps it while the tables are: both are timed.
 */
import type { Row } from '../src/datastore/types.js';
import type { RunConfig } from './lib/config.js';
import { ckqlModules } from './lib/ckql.js';
import { withLoadedPostgres } from './lib/postgres.js';
import { formatRatio, formatTime, medianTime } from './lib/harness.js';
import type { SectionResult } from './lib/report.js';

const OFFENSES = ['burglary', 'theft', 'fraud', 'assault'] as const;

async function rowsOf(stream: { batches: AsyncGenerator<readonly unknown[], void, undefined> }): Promise<unknown[]> {
  const out: unknown[] = [];
  for await (const batch of stream.batches) out.push(...batch);
  return out;
}

function table(name: string, n: number, seed: number): { id: string; aliases: string[]; fields: { id: string; type: 'int' | 'text' | 'int4' }[]; rows: Row[] } {
  const rows = Array.from({ length: n }, (_, i) => ({ _id: i + 1, offense: OFFENSES[(i * seed) % OFFENSES.length]!, amount: (i * 7919 + seed) % 1000 }));
  return { id: name, aliases: [name], fields: [{ id: '_id', type: 'int' }, { id: 'offense', type: 'text' }, { id: 'amount', type: 'int4' }], rows: rows as unknown as Row[] };
}

export async function benchUnions(config: RunConfig, log: (line: string) => void): Promise<SectionResult> {
  const [{ memoryEngine }, { parse }] = await Promise.all([ckqlModules.memoryEngine(), ckqlModules.parse()]);
  const n = config.quick ? 50_000 : 500_000;
  const runs = config.quick ? 3 : 7;
  const tables = [table('crime_2023', n, 3), table('crime_2024', n, 5)];
  const text = 'from crime_2023 union crime_2024 where offense = burglary group by _resource select _resource, count(*) as n, sum(amount) as total';
  const query = parse(text);
  const hand = (): { _resource: string; n: number; total: number }[] =>
    tables.map((t) => {
      let count = 0;
      let total = 0;
      for (const row of t.rows) {
        if (row['offense'] !== 'burglary') continue;
        count += 1;
        total += row['amount'] as number;
      }
      return { _resource: t.id, n: count, total };
    });
  const expected = JSON.stringify(hand());
  // The first query makes the union's table: a fresh engine (and fresh tables) each time.
  const first = async (): Promise<unknown[]> => rowsOf(await memoryEngine(tables.map((t) => ({ ...t }))).query(query, { all: true }));
  const engine = memoryEngine(tables);
  const again = async (): Promise<unknown[]> => rowsOf(await engine.query(query, { all: true }));
  if (JSON.stringify(await again()) !== expected) throw new Error('unions: the memory engine did not give the hand loop\'s groups');
  log(`unions: 2 × ${n.toLocaleString('en-US')} rows`);
  const handTime = await medianTime(runs, hand);
  const firstTime = await medianTime(runs, first);
  const againTime = await medianTime(runs, again);

  const serverUrl = process.env['CKQL_BENCH_PG_URL'] ?? process.env['CKQL_TEST_PG_URL'];
  let native: number | undefined;
  if (serverUrl !== undefined) {
    log('unions: loading PostgreSQL');
    native = await withLoadedPostgres(serverUrl, tables, async (postgres) => {
      const answer = async (): Promise<unknown[]> => rowsOf(await postgres.query(query, { all: true }));
      if (JSON.stringify(await answer()) !== expected) throw new Error('unions: PostgreSQL did not give the hand loop\'s groups');
      return medianTime(Math.min(runs, 5), answer);
    });
  }
  return {
    id: 'unions',
    title: '15. Unions on the memory engine',
    tables: [
      {
        title: `\`${text}\` over 2 × ${n.toLocaleString('en-US')} rows: median of ${runs}`,
        headers: ['contender', 'time', '÷ hand loop'],
        rows: [
          ['hand loop over both tables (the floor)', formatTime(handTime), '1'],
          ['ckql memory engine, first query (makes the union\'s table)', formatTime(firstTime), formatRatio(firstTime / handTime)],
          ['ckql memory engine, again (the table kept)', formatTime(againTime), formatRatio(againTime / handTime)],
          ['PostgreSQL 15 (ckql\'s one UNION ALL statement)', native === undefined ? '–' : formatTime(native), native === undefined ? '–' : formatRatio(native / handTime)],
        ],
      },
    ],
    targets: [],
    notes: [
      'The memory engine reads a union as one table made of its resources\' rows in turn (each with every field of the union and _resource), made at the first query and kept while its tables are (engine/memory/union.ts); the query then runs as on any table. Issue 31 sets no figure for unions: the section shows what a union costs beside its tables read by hand.',
    ],
  };
}

/**
 * The aggregates section's memory-engine cases alone, for a profile:
 *
 *   node --cpu-prof --cpu-prof-dir=/tmp/prof --import tsx bench/profile/aggregates.ts [group|join|both] [rounds]
 *   tsx bench/profile/top-frames.ts /tmp/prof/<file>.cpuprofile 30
 *
 * Interleaves ckql (the tsc build in bench/.cache/dist; run `npm run bench -- --only aggregates` once
 * to build it) with the hand-written loops of bench/aggregates.ts and prints each one's median and minimum,
 * with a full GC before each turn (CKQL_PROFILE_GC=0: without).
 */
import { ckqlModules } from '../lib/ckql.js';
import { courseRows, enrolmentRows } from '../lib/agg-data.js';
import { handGroup, handJoin, GROUP_QUERY, JOIN_QUERY } from '../aggregates.js';
import { blackhole, collectGarbage } from '../lib/harness.js';

const [which = 'both', roundsText = '9'] = process.argv.slice(2);
const rounds = Number(roundsText);
// CKQL_PROFILE_GC=0: no full GC before each turn (as bench/aggregates.ts runs them), so each pays for its own garbage.
const forceGc = process.env['CKQL_PROFILE_GC'] !== '0';
const [{ memoryEngine }, { tableFromRows }, { parse }] = await Promise.all([ckqlModules.memoryEngine(), ckqlModules.load(), ckqlModules.parse()]);

async function drain(stream: { batches: AsyncGenerator<readonly unknown[], void, undefined> }): Promise<number> {
  let n = 0;
  for await (const batch of stream.batches) n += batch.length;
  return n;
}

async function compare(name: string, contenders: Record<string, () => unknown>): Promise<void> {
  const times: Record<string, number[]> = Object.fromEntries(Object.keys(contenders).map((k) => [k, []]));
  for (let r = 0; r < rounds; r++) {
    for (const [who, run] of Object.entries(contenders)) {
      if (forceGc) collectGarbage();
      const t0 = performance.now();
      blackhole(await run());
      times[who]!.push(performance.now() - t0);
    }
  }
  const medians: Record<string, number> = {};
  for (const [who, list] of Object.entries(times)) {
    list.sort((a, b) => a - b);
    medians[who] = list[Math.floor(list.length / 2)]!;
    console.log(`${name} ${who}: median ${medians[who]!.toFixed(1)} ms, min ${list[0]!.toFixed(1)} ms`);
  }
  const [floor] = Object.values(medians);
  for (const [who, m] of Object.entries(medians)) console.log(`${name} ${who} ÷ floor: ${(m / floor!).toFixed(2)}×`);
}

if (which === 'group' || which === 'both') {
  const data = enrolmentRows(1_000_000);
  const memory = memoryEngine([tableFromRows(data as never, { alias: 'enrolments' })]);
  const query = parse(GROUP_QUERY);
  await compare('group', { hand: () => handGroup(data), memory: async () => drain(await memory.query(query, { all: true })) });
}
if (which === 'join' || which === 'both') {
  const enrolments = enrolmentRows(200_000);
  const courses = courseRows(2_000);
  const memory = memoryEngine([tableFromRows(enrolments as never, { alias: 'enrolments' }), tableFromRows(courses as never, { alias: 'courses' })]);
  const query = parse(JOIN_QUERY);
  await compare('join', { hand: () => handJoin(enrolments, courses), memory: async () => drain(await memory.query(query, { all: true })) });
}

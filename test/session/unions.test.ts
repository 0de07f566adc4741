/**
 * Unions across sources (docs/expressions.md, Unions): a portal's yearly
 * resources as one table. Three years of generated crime records, one
 * served by `ckql serve` as CKAN 2.11, one as 2.12, one a local file, each
 * a profile of a config file; the years' fields differ (2022's amounts are
 * decimals, 2023 adds a field). Every answer is checked against a
 * concatenation of the rows written here, and the requests each server
 * answered are counted there.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { SearchRequest } from '../../src/datastore/types.js';
import { loadResources } from '../../src/engine/node/load-resources.js';
import { memoryEngine } from '../../src/engine/memory/engine.js';
import type { Engine } from '../../src/engine/types.js';
import { startServer } from '../../src/server/server.js';
import type { RunningServer } from '../../src/server/server.js';
import { createRandom } from '../../scripts/generate-demo-data.js';
import { ckql, ndjson } from '../cli/run-ckql.js';

interface Crime {
  readonly offense: string;
  readonly district: string;
  readonly amount: number;
  readonly weapon?: string;
}

const OFFENSES = ['burglary', 'theft', 'fraud', 'assault'];
const DISTRICTS = ['north', 'south', 'east', 'west'];

/** A year's records: `decimals` gives amounts with cents, `weapon` a field the other years lack. */
function year(seed: number, count: number, decimals: boolean, weapon: boolean): Crime[] {
  const random = createRandom(seed);
  const pick = (list: readonly string[]): string => list[Math.floor(random() * list.length)]!;
  return Array.from({ length: count }, () => ({
    offense: pick(OFFENSES),
    district: pick(DISTRICTS),
    amount: decimals ? Math.round(random() * 100_000) / 100 : Math.floor(random() * 1000),
    ...(weapon ? { weapon: pick(['none', 'knife', 'other']) } : {}),
  }));
}

const years = { crime_2021: year(21, 1_300, false, false), crime_2022: year(22, 700, true, false), crime_2023: year(23, 900, false, true) };

function csv(rows: readonly Crime[], weapon: boolean): string {
  const head = weapon ? 'offense,district,amount,weapon' : 'offense,district,amount';
  return `${[head, ...rows.map((r) => [r.offense, r.district, r.amount.toFixed(Number.isInteger(r.amount) ? 0 : 2), ...(weapon ? [r.weapon] : [])].join(','))].join('\n')}\n`;
}

let root: string;
let servers: RunningServer[] = [];
let configFile: string;
const seen: Record<'a' | 'b', SearchRequest[]> = { a: [], b: [] };

function recording(engine: Engine, log: SearchRequest[]): Engine {
  return { ...engine, search: (request, options) => (log.push(request as SearchRequest), engine.search(request, options)) };
}

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'ckql-unions-'));
  const folder = (name: string, file: string, text: string): string => {
    const dir = join(root, name);
    mkdirSync(dir);
    writeFileSync(join(dir, file), text);
    return dir;
  };
  const a = folder('a', 'crime_2021.csv', csv(years.crime_2021, false));
  const b = folder('b', 'crime_2022.csv', csv(years.crime_2022, false));
  const c = folder('c', 'crime_2023.csv', csv(years.crime_2023, true));
  // a resource whose amounts are words: its amount is text
  writeFileSync(join(c, 'crime_notes.csv'), 'offense,amount\ntheft,unknown\n');
  servers = await Promise.all([
    startServer({ engine: recording(memoryEngine(await loadResources(a)), seen.a), ckan: '2.11', port: 0 }),
    startServer({ engine: recording(memoryEngine(await loadResources(b)), seen.b), ckan: '2.12', port: 0 }),
  ]);
  configFile = join(root, 'ckql.config.yaml');
  writeFileSync(configFile, ['profiles:', `  pa: { url: "${servers[0]!.url}" }`, `  pb: { url: "${servers[1]!.url}" }`, `  files: { data: "${c}" }`, ''].join('\n'));
});

afterAll(async () => {
  for (const server of servers) await server.close();
  rmSync(root, { recursive: true, force: true });
});

beforeEach(() => {
  seen.a.length = 0;
  seen.b.length = 0;
});

/** The three years in order, each record with `_resource` as the query writes its resource. */
function concatenated(): (Crime & { readonly _resource: string })[] {
  return [
    ...years.crime_2021.map((r) => ({ ...r, _resource: 'pa:crime_2021' })),
    ...years.crime_2022.map((r) => ({ ...r, _resource: 'pb:crime_2022' })),
    ...years.crime_2023.map((r) => ({ ...r, _resource: 'files:crime_2023' })),
  ];
}

const UNION = 'from pa:crime_2021 union pb:crime_2022 union files:crime_2023';

async function query(text: string): Promise<unknown[]> {
  const result = await ckql(['query', text, '--format', 'ndjson', '--profile', 'pa', '--config', configFile]);
  expect(result.stderr).toBe('');
  expect(result.code).toBe(0);
  return ndjson(result.stdout);
}

describe('a union across two portals and a local file', () => {
  it('groups the three years as one table, each year’s where pushed down to its own portal', async () => {
    const got = await query(`${UNION} where offense = burglary group by _resource select _resource, count(*) as n, sum(amount) as total`);
    const groups = new Map<string, { n: number; cents: number }>();
    for (const row of concatenated().filter((r) => r.offense === 'burglary')) {
      const group = groups.get(row._resource) ?? { n: 0, cents: 0 };
      group.n += 1;
      group.cents += Math.round(row.amount * 100);
      groups.set(row._resource, group);
    }
    const want = [...groups.entries()].sort(([x], [y]) => (x < y ? -1 : 1)).map(([name, g]) => ({ _resource: name, n: g.n, total: g.cents / 100 }));
    expect(want).toHaveLength(3);
    expect(got).toEqual(want);
    // Each portal: its fields (limit 0), then its count and pages, every one of them narrowed by the filter.
    for (const [log, resource] of [[seen.a, 'crime_2021'], [seen.b, 'crime_2022']] as const) {
      expect(log.every((r) => r.resource_id === resource)).toBe(true);
      expect(log[0]).toEqual({ resource_id: resource, limit: 0 });
      expect(log.slice(1).every((r) => (r.filters as Record<string, unknown>)?.offense === 'burglary')).toBe(true);
    }
    // 2021's 1,300 records are past 1,000 but its burglaries are not: one count and one page.
    expect(seen.a).toHaveLength(3);
    expect(seen.b).toHaveLength(3);
  });

  it('gives each record every field of the union: null where its year lacks one, the 2021 integers beside 2022’s decimals', async () => {
    const got = await query(`${UNION} where district = north and amount >= 900 select _resource, offense, amount, weapon order by amount desc, _resource limit 25`);
    const want = concatenated()
      .filter((r) => r.district === 'north' && r.amount >= 900)
      .map((r) => ({ _resource: r._resource, offense: r.offense, amount: r.amount, weapon: r.weapon ?? null }))
      .sort((x, y) => y.amount - x.amount || (x._resource < y._resource ? -1 : x._resource > y._resource ? 1 : 0));
    expect(new Set(want.map((r) => r._resource)).size).toBe(3);
    // the ties of amount and resource (whole amounts of 2021 and 2023) come in the union's order
    expect(got.map((r) => JSON.stringify(r)).sort()).toEqual(want.slice(0, 25).map((r) => JSON.stringify(r)).sort());
    expect((got as { amount: number }[]).map((r) => r.amount)).toEqual(want.slice(0, 25).map((r) => r.amount));
  });

  it('counts every record of the three years', async () => {
    const got = await query(`${UNION} select count(*) as n, count(weapon) as armed`);
    expect(got).toEqual([{ n: 2_900, armed: 900 }]);
  });

  it('takes a resource of a union from a parameter', async () => {
    const result = await ckql(['query', 'from pa:crime_2021 union $r select count(*) as n', '--param', 'r=pb:crime_2022', '--format', 'ndjson', '--profile', 'pa', '--config', configFile]);
    expect(result.stderr).toBe('');
    expect(ndjson(result.stdout)).toEqual([{ n: years.crime_2021.length + years.crime_2022.length }]);
  });

  it('refuses a union whose fields of one name disagree in type, naming both resources', async () => {
    const result = await ckql(['query', 'from pa:crime_2021 union files:crime_notes select count(*) as n', '--profile', 'pa', '--config', configFile]);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain('UNION_TYPE_MISMATCH');
    expect(result.stderr).toContain('"amount" is int4 in pa:crime_2021 and text in files:crime_notes');
    // the caret is under the resource whose type disagrees
    const lines = result.stderr.split('\n');
    const at = lines.findIndex((line) => line.includes('from pa:crime_2021 union files:crime_notes'));
    expect(lines[at + 1]!.indexOf('^')).toBe(lines[at]!.indexOf('files:crime_notes'));
  });
});

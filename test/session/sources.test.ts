/**
 * Joins across sources (docs/aggregates.md): two `ckql serve` servers on
 * port 0 (one answering as CKAN 2.11, one as 2.12) as two profiles of a
 * config file, and local files. Each answer is checked against a hash join
 * written here over the same rows, and the requests each server answered
 * are counted there.
 */
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { connect } from '../../src/client/connect.js';
import type { DatastoreClient } from '../../src/client/types.js';
import { plan } from '../../src/compile/compile.js';
import { loadConfig } from '../../src/config/load.js';
import type { Row, SearchRequest, Table } from '../../src/datastore/types.js';
import { loadResources } from '../../src/engine/node/load-resources.js';
import { memoryEngine } from '../../src/engine/memory/engine.js';
import type { Engine } from '../../src/engine/types.js';
import { QueryError } from '../../src/errors.js';
import { completeQuery } from '../../src/repl/complete.js';
import { Session } from '../../src/repl/session.js';
import { startServer } from '../../src/server/server.js';
import type { RunningServer } from '../../src/server/server.js';
import { demoDataDir, openSource } from '../../src/session/source.js';
import type { Source } from '../../src/session/source.js';
import { ckql, ndjson } from '../cli/run-ckql.js';

const TOKEN = 'sekrit-token-7f3a9';

/** The demo data with its first 6,000 enrolments: the joins below read every enrolment, and reading all 20,000 at each command cost seconds of CPU. */
const SAMPLE_ENROLMENTS = 6_000;
const sampleDir = ((): string => {
  const folder = mkdtempSync(join(tmpdir(), 'ckql-sources-data-'));
  for (const name of ['courses.csv', 'schools.json', 'datapackage.json']) copyFileSync(join(demoDataDir, name), join(folder, name));
  const lines = readFileSync(join(demoDataDir, 'enrolments.csv'), 'utf8').split('\n');
  writeFileSync(join(folder, 'enrolments.csv'), `${lines.slice(0, SAMPLE_ENROLMENTS + 1).join('\n')}\n`);
  return folder;
})();

let tables: readonly Table[];
let servers: RunningServer[] = [];
/** every datastore_search request each server answered, in order */
const seen: Record<'a' | 'b' | 'c', SearchRequest[]> = { a: [], b: [], c: [] };
let dir: string;
let configFile: string;

function recording(engine: Engine, log: SearchRequest[]): Engine {
  return { ...engine, search: (request, options) => (log.push(request as SearchRequest), engine.search(request, options)) };
}

beforeAll(async () => {
  tables = await loadResources([sampleDir]);
  const engine = memoryEngine(tables);
  const [a, b, c] = await Promise.all([
    startServer({ engine: recording(engine, seen.a), ckan: '2.11', port: 0 }),
    startServer({ engine: recording(engine, seen.b), ckan: '2.12', port: 0 }),
    startServer({ engine: recording(engine, seen.c), ckan: '2.12', port: 0, tokens: [TOKEN], privateResources: ['courses'] }),
  ]);
  servers = [a!, b!, c!];
  dir = mkdtempSync(join(tmpdir(), 'ckql-sources-'));
  configFile = join(dir, 'ckql.config.yaml');
  writeFileSync(
    configFile,
    [
      'profiles:',
      `  pa: { url: "${a!.url}" }`,
      `  pb: { url: "${b!.url}" }`,
      `  private: { url: "${c!.url}", token_env: PRIVATE_TOKEN }`,
      `  anonymous: { url: "${c!.url}" }`,
      '  down: { url: "http://127.0.0.1:9", timeout: 5 }',
      `  files: { data: "${sampleDir}" }`,
      'queries:',
      '  per-level:',
      '    query: from enrolments e join pb:courses c on e.course = c.code where c.subject = $s group by c.level',
      '    params: { s: math }',
      '',
    ].join('\n'),
  );
});

afterAll(async () => {
  for (const server of servers) await server.close();
  for (const folder of [sampleDir, dir]) if (folder !== undefined) rmSync(folder, { recursive: true, force: true });
});

beforeEach(() => {
  for (const log of Object.values(seen)) log.length = 0;
});

// ---------------------------------------------------------------- the answer, by hand

function rowsOf(name: string): Row[] {
  const table = tables.find((t) => t.aliases.includes(name))!;
  return table.rows.map((row) => Object.fromEntries(table.fields.map((f) => [f.id, row[f.id] ?? null])) as Row);
}

/** SQL's inner (or left) equality join of two row lists on one key each: a Map of the right side, the left streamed past it. */
function hashJoin(left: readonly Row[], right: readonly Row[], leftKey: string, rightKey: string, keepLeft = false): [Row, Row | null][] {
  const hashed = new Map<string, Row[]>();
  for (const row of right) {
    const key = row[rightKey];
    if (key === null || key === undefined) continue;
    const list = hashed.get(String(key));
    if (list === undefined) hashed.set(String(key), [row]);
    else list.push(row);
  }
  const out: [Row, Row | null][] = [];
  for (const row of left) {
    const key = row[leftKey];
    const matches = key === null || key === undefined ? undefined : hashed.get(String(key));
    if (matches !== undefined) for (const match of matches) out.push([row, match]);
    else if (keepLeft) out.push([row, null]);
  }
  return out;
}

/** `count(*)` and `count(distinct student)` of joined pairs, per key, in key order. */
function countBy(pairs: readonly [Row, Row | null][], key: (pair: [Row, Row | null]) => string): { key: string; n: number; students: number }[] {
  expect(pairs.length, 'a case that joins nothing proves nothing').toBeGreaterThan(0);
  const groups = new Map<string, { n: number; students: Set<string> }>();
  for (const pair of pairs) {
    const k = key(pair);
    const group = groups.get(k) ?? { n: 0, students: new Set<string>() };
    group.n += 1;
    group.students.add(String(pair[0].student));
    groups.set(k, group);
  }
  return [...groups.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([k, g]) => ({ key: k, n: g.n, students: g.students.size }));
}

const enrolments = () => rowsOf('enrolments');
const courses = () => rowsOf('courses');

/** A client of the 2.11 portal that names the 2.12 one `pb:`, closed (both) after `use`. */
async function withPortals(use: (client: DatastoreClient) => Promise<void>): Promise<void> {
  const other = connect({ url: servers[1]!.url });
  const client = connect({ url: servers[0]!.url, sources: { pb: other } });
  try {
    await use(client);
  } finally {
    await client.close();
    await other.close();
  }
}

// ---------------------------------------------------------------- the library

describe('the library: connect({ sources })', () => {
  it('joins a 2.11 portal’s records with a 2.12 portal’s, each side read from its own portal', async () => {
    await withPortals(async (client) => {
    const result = await client.search(
      'from enrolments e join pb:courses c on e.course = c.code where c.subject = math and e.grade >= 5 ' +
        'group by c.level select c.level, count(*) as n, count(distinct e.student) as students',
    );
    const pairs = hashJoin(enrolments(), courses(), 'course', 'code').filter(([e, c]) => c!.subject === 'math' && Number(e.grade) >= 5);
    const want = countBy(pairs, ([, c]) => String(c!.level)).map((g) => ({ level: Number(g.key), n: g.n, students: g.students }));
    expect(want.length).toBeGreaterThan(1);
    expect(result.records).toEqual(want);
    // pb (2.12): the count, then one page by next_page, with its where said there.
    expect(seen.b).toHaveLength(2);
    expect(seen.b[0]).toMatchObject({ resource_id: 'courses', filters: { subject: 'math' }, limit: 0 });
    // pa (2.11, which cannot say >=): the count, the count of the request narrowed to the math courses' codes, one page.
    const mathCodes = courses().filter((c) => c.subject === 'math').map((c) => c.code);
    expect(seen.a).toHaveLength(3);
    expect(new Set((seen.a[2]!.filters as { course: string[] }).course)).toEqual(new Set(mathCodes));
    expect(new Set(seen.a[2]!.fields)).toEqual(new Set(['_id', 'course', 'grade', 'student']));
    });
  });

  it('a left join across portals keeps the left side’s records without a match', async () => {
    const other = connect({ url: servers[0]!.url });
    const client = connect({ url: servers[1]!.url, sources: { pa: other } });
    try {
      const text = 'from courses c left join pa:enrolments e on c.code = e.course where c.subject = history and c.level = 3 select c.code, e.student order by c.code, e.student';
      const result = await client.search(text, { total: true });
      const left = courses().filter((c) => c.subject === 'history' && c.level === 3);
      const want = hashJoin(left, enrolments(), 'code', 'course', true)
        .map(([c, e]) => ({ code: c.code, student: e?.student ?? null }))
        .sort((x, y) => (x.code !== y.code ? (String(x.code) < String(y.code) ? -1 : 1) : x.student === y.student ? 0 : x.student === null ? 1 : y.student === null ? -1 : String(x.student) < String(y.student) ? -1 : 1));
      expect(want.some((row) => row.student === null)).toBe(true);
      expect(result.total).toBe(want.length);
      expect(result.records).toEqual(want.slice(0, 100));
    } finally {
      await client.close();
      await other.close();
    }
  });

  it('facets of a join across sources count the joined records', async () => {
    await withPortals(async (client) => {
    const result = await client.search('from enrolments e join pb:courses c on e.course = c.code where c.subject = math facet c.level limit 1');
    const pairs = hashJoin(enrolments(), courses(), 'course', 'code').filter(([, c]) => c!.subject === 'math');
    const want = countBy(pairs, ([, c]) => String(c!.level))
      .map((g) => ({ value: Number(g.key), count: g.n }))
      .sort((x, y) => y.count - x.count || x.value - y.value);
    expect(result.facets?.level).toEqual({ field: 'level', values: want, null_count: 0, more: false });
    expect(result.records).toHaveLength(1);
    });
  });

  it('a query whose resources are all of one named source goes there whole; an unknown name is UNKNOWN_SOURCE listing the known ones', async () => {
    await withPortals(async (client) => {
    const result = await client.search('from pb:courses where subject = math limit 2');
    expect(result.records).toEqual(courses().filter((c) => c.subject === 'math').slice(0, 2));
    expect(seen.a).toHaveLength(0);
    expect(seen.b).toEqual([{ resource_id: 'courses', filters: { subject: 'math' }, limit: 2 }]);
    // quoted whole, a dataset/resource name of that source
    const named = await client.search('from "pb:university/courses" where subject = math limit 2');
    expect(named.records).toEqual(result.records);
    const error = await client.search('from enrolments e join pc:courses c on e.course = c.code').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(QueryError);
    expect(error).toMatchObject({ code: 'UNKNOWN_SOURCE', span: { start: 23, end: 26 } });
    expect((error as QueryError).hint).toContain('the sources: pb');
    });
  });

  it('the sql target refuses a join across sources', () => {
    expect(() => plan('from enrolments e join pb:courses c on e.course = c.code', { target: 'sql' })).toThrow(
      expect.objectContaining({ code: 'TARGET_CANNOT_EXPRESS' }),
    );
  });
});

// ---------------------------------------------------------------- the command line (in process)

describe('ckql query and explain with profiles and local files', () => {
  const data = ['--data', sampleDir, '--config', '$CONFIG'];
  const args = (list: readonly string[]) => list.map((arg) => (arg === '$CONFIG' ? configFile : arg));

  it('joins local enrolments with a portal profile’s courses', async () => {
    const text = 'from enrolments e join pb:courses c on e.course = c.code where c.level >= 3 group by c.subject select c.subject, count(*) as n, count(distinct e.student) as students';
    const result = await ckql(['query', text, '--format', 'ndjson', ...args(data)]);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const pairs = hashJoin(enrolments(), courses(), 'course', 'code').filter(([, c]) => Number(c!.level) >= 3);
    expect(ndjson(result.stdout)).toEqual(countBy(pairs, ([, c]) => String(c!.subject)).map((g) => ({ subject: g.key, n: g.n, students: g.students })));
    // pb: the count of courses with level >= 3 (2.12 says it), then one page; the local side is read in this process.
    expect(seen.b.map((r) => r.filters)).toEqual([{ level: { gte: 3 } }, { level: { gte: 3 } }]);
    expect(seen.a).toHaveLength(0);
  });

  it('joins two portal profiles, the current one by its name', async () => {
    const text = 'from pa:enrolments e join pb:courses c on e.course = c.code where e.term = "2024-autumn" group by c.subject select c.subject, count(*) as n, count(distinct e.student) as students';
    const result = await ckql(['query', text, '--format', 'ndjson', '--profile', 'pa', '--config', configFile]);
    expect(result.stderr).toBe('');
    const pairs = hashJoin(enrolments(), courses(), 'course', 'code').filter(([e]) => e.term === '2024-autumn');
    expect(ndjson(result.stdout)).toEqual(countBy(pairs, ([, c]) => String(c!.subject)).map((g) => ({ subject: g.key, n: g.n, students: g.students })));
    expect(seen.a.every((r) => r.resource_id === 'enrolments')).toBe(true);
    expect(seen.b.every((r) => r.resource_id === 'courses')).toBe(true);
    expect(seen.a.length + seen.b.length).toBe(5);
  });

  it('a portal session joins a data profile’s files', async () => {
    const text = 'from enrolments e join files:courses c on e.course = c.code where c.stage = survey group by c.subject select c.subject, count(*) as n, count(distinct e.student) as students';
    const result = await ckql(['query', text, '--format', 'ndjson', '--profile', 'pb', '--config', configFile]);
    expect(result.stderr).toBe('');
    const pairs = hashJoin(enrolments(), courses(), 'course', 'code').filter(([, c]) => c!.stage === 'survey');
    expect(pairs.length).toBeGreaterThan(100);
    expect(ndjson(result.stdout)).toEqual(countBy(pairs, ([, c]) => String(c!.subject)).map((g) => ({ subject: g.key, n: g.n, students: g.students })));
    // pb: enrolments only, narrowed to the survey courses' codes
    expect(seen.b.every((r) => r.resource_id === 'enrolments')).toBe(true);
    expect(seen.b.at(-1)!.filters).toHaveProperty('course');
  });

  it('a bare resource is the current source’s, and local: names it too', async () => {
    const text = 'from local:courses c join enrolments e on c.code = e.course where c.subject = chemistry group by c.level select c.level, count(*) as n, count(distinct e.student) as students';
    const result = await ckql(['query', text, '--format', 'ndjson', ...args(data)]);
    expect(result.stderr).toBe('');
    const pairs = hashJoin(enrolments(), courses(), 'course', 'code').filter(([, c]) => c!.subject === 'chemistry');
    expect(ndjson(result.stdout)).toEqual(countBy(pairs, ([, c]) => String(c!.level)).map((g) => ({ level: Number(g.key), n: g.n, students: g.students })));
    expect(seen.a.length + seen.b.length).toBe(0);
  });

  it('explain shows each side with its source, target and request, and the steps with the counts', async () => {
    const text = 'from enrolments e join pb:courses c on e.course = c.code where c.subject = math group by c.level';
    const result = await ckql(['explain', text, ...args(data)]);
    expect(result.stderr).toBe('');
    expect(result.stdout).toContain('side e: from local (the local data, read in this process as ckan-2.11 answers; nothing is sent)');
    expect(result.stdout).toContain('request {"resource_id":"enrolments","fields":["_id","course"]}');
    // no URL for the local side: nothing listens there
    expect(result.stdout).not.toContain('127.0.0.1:8080');
    expect(result.stdout).toContain('side c: from pb (ckan-2.12)');
    expect(result.stdout).toContain(`POST ${servers[1]!.url}/api/action/datastore_search {"resource_id":"courses","filters":{"subject":"math"},"fields":["_id","level","code"]}`);
    expect(result.stdout).toMatch(/scan from pb: .*pages by 2\.12's next_page.*the count says 65 records: 2 requests/);
    expect(result.stdout).toMatch(/scan from local: \{"resource_id":"enrolments".*the count says 6000 records/);
    // explain asks each side's count, and reads nothing
    expect(seen.b).toEqual([{ resource_id: 'courses', filters: { subject: 'math' }, fields: ['_id', 'level', 'code'], limit: 0 }]);
  });

  it('ckql run of a named query and a -c script join across sources too', async () => {
    const perLevel = (subject: string) =>
      countBy(hashJoin(enrolments(), courses(), 'course', 'code').filter(([, c]) => c!.subject === subject), ([, c]) => String(c!.level)).map((g) => ({ level: Number(g.key), count: g.n }));
    const run = await ckql(['run', 'per-level', '--param', 's=physics', '--format', 'ndjson', ...args(data)]);
    expect(run.stderr).toBe('');
    expect(ndjson(run.stdout)).toEqual(perLevel('physics'));
    const script = await ckql(['-c', 'from enrolments e join pb:courses c on e.course = c.code where c.subject = history group by c.level; from local:courses where code = MATH-101', ...args(data)]);
    expect(script.stderr).toBe('');
    expect(ndjson(script.stdout)).toEqual([...perLevel('history'), ...courses().filter((c) => c.code === 'MATH-101')]);
  });

  it('explain of a query whose resources are all of one named source is that source’s', async () => {
    const result = await ckql(['explain', 'from pb:courses where level >= 3 and stage != retired limit 2', ...args(data)]);
    expect(result.stderr).toBe('');
    expect(result.stdout).toContain('target: ckan-2.12');
    expect(result.stdout).toContain(`POST ${servers[1]!.url}/api/action/datastore_search`);
    expect(result.stdout).toContain('"level": {');
    expect(result.stdout).toContain('filter stage != retired');
  });

  it('an unknown source name: exit 3, UNKNOWN_SOURCE under the query, the known names in the hint', async () => {
    const result = await ckql(['query', 'from enrolments e join pz:courses c on e.course = c.code', ...args(data)]);
    expect(result.code).toBe(3);
    expect(result.stderr).toContain('error[UNKNOWN_SOURCE]: no source named "pz"');
    expect(result.stderr).toContain('^^^');
    expect(result.stderr).toContain('hint: the sources: pa, pb, private, anonymous, down, files, local');
  });

  it('local: on a portal session is unknown, and the hint does not offer it', async () => {
    const result = await ckql(['query', 'from enrolments e join local:courses c on e.course = c.code', '--profile', 'pa', '--config', configFile]);
    expect(result.code).toBe(3);
    expect(result.stderr).toContain('error[UNKNOWN_SOURCE]: no source named "local"');
    expect(result.stderr).toContain('hint: the sources: pa, pb, private, anonymous, down, files;');
  });

  it('a profile whose token variable is unset: TOKEN_UNAVAILABLE naming the profile and the variable', async () => {
    const result = await ckql(['query', 'from enrolments e join private:courses c on e.course = c.code', ...args(data)], { env: { PRIVATE_TOKEN: undefined } });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('TOKEN_UNAVAILABLE');
    expect(result.stderr).toContain('private');
    expect(result.stderr).toContain('PRIVATE_TOKEN');
  });

  it('a private resource: refused without a token (saying none is configured there), joined with one, the token never printed', async () => {
    const text = 'from enrolments e join anonymous:courses c on e.course = c.code group by c.subject';
    const refused = await ckql(['query', text, ...args(data)]);
    expect(refused.code).toBe(5);
    expect(refused.stderr).toContain('source "anonymous"');
    expect(refused.stderr).toContain('no token is configured for this source');

    const withToken = text.replace('anonymous:', 'private:');
    const env = { PRIVATE_TOKEN: TOKEN };
    const joined = await ckql(['query', withToken, '--format', 'ndjson', ...args(data)], { env });
    expect(joined.stderr).toBe('');
    const pairs = hashJoin(enrolments(), courses(), 'course', 'code');
    expect(ndjson(joined.stdout)).toEqual(countBy(pairs, ([, c]) => String(c!.subject)).map((g) => ({ subject: g.key, count: g.n })));
    const explained = await ckql(['explain', withToken, ...args(data)], { env });
    expect(explained.code).toBe(0);
    for (const output of [refused, joined, explained]) expect(output.stdout + output.stderr).not.toContain(TOKEN);
  });

  it('a source nothing answers at: exit 4, saying which source', async () => {
    const result = await ckql(['query', 'from enrolments e join down:courses c on e.course = c.code', ...args(data)]);
    expect(result.code).toBe(4);
    expect(result.stderr).toContain('source "down" (http://127.0.0.1:9)');
  });

  it('--all streams every joined record, and --total counts them', async () => {
    const text = 'from enrolments e join pb:courses c on e.course = c.code where c.subject = chemistry and c.level = 2 select e.student, c.code order by e.student, c.code';
    const want = hashJoin(enrolments(), courses(), 'course', 'code')
      .filter(([, c]) => c!.subject === 'chemistry' && c!.level === 2)
      .map(([e, c]) => ({ student: e.student, code: c!.code }))
      .sort((x, y) => (x.student !== y.student ? (String(x.student) < String(y.student) ? -1 : 1) : String(x.code) < String(y.code) ? -1 : x.code === y.code ? 0 : 1));
    expect(want.length).toBeGreaterThan(100);
    const all = await ckql(['query', text, '--all', '--format', 'ndjson', ...args(data)]);
    expect(all.stderr).toBe('');
    expect(ndjson(all.stdout)).toEqual(want);
    const counted = await ckql(['query', text, '--total', '--format', 'json', ...args(data)]);
    expect(counted.stderr).toContain(`100 of ${want.length} records`);
  });

  it('everything a join across sources reads counts against --max-scan, refused before a record is read', async () => {
    const result = await ckql(['query', 'from pa:courses c join enrolments e on c.code = e.course group by c.subject', '--max-scan', '5000', ...args(data)]);
    expect(result.code).toBe(3);
    expect(result.stderr).toContain('error[SCAN_TOO_LARGE]');
    expect(result.stderr).toContain(`matches ${SAMPLE_ENROLMENTS} records, more than the 5000`);
    // pa's courses were counted (320, within the bound), not read; the local enrolments' count (6,000) refused the run
    expect(seen.a.map((r) => r.limit)).toEqual([0]);
  });
});

// ---------------------------------------------------------------- the REPL (in process)


/** A REPL session over `source` with this file's config (as `ckql` makes one), JSON output; `profile` when it came from one. */
async function sessionOver(source: Source, profile?: string): Promise<Session> {
  return new Session({
    source,
    config: await loadConfig({ configFile }),
    settings: { format: 'json', limit: 20, timing: false, explain: false, language: undefined },
    color: false,
    width: () => 200,
    // local data is read on demand, as the REPL reads it
    openSource: (spec) => openSource(spec, { lazy: true }),
    ...(profile === undefined ? {} : { profile }),
  });
}

describe('the REPL', () => {
  let source: Source;
  let session: Session;

  beforeAll(async () => {
    source = await openSource({ kind: 'data', paths: [sampleDir] }, { lazy: true });
    session = await sessionOver(source);
  });

  afterAll(async () => {
    await session.close();
    await source.close();
  });

  it('runs a join of local data and a profile, and explains it', async () => {
    const text = 'from enrolments e join pa:courses c on e.course = c.code where c.subject = biology group by c.level select c.level, count(*) as n, count(distinct e.student) as students';
    const output = await session.run(text);
    expect(output).toMatch(/\n4 of 4 records$/);
    const pairs = hashJoin(enrolments(), courses(), 'course', 'code').filter(([, c]) => c!.subject === 'biology');
    expect(JSON.parse(output.slice(0, output.lastIndexOf(']') + 1))).toEqual(countBy(pairs, ([, c]) => String(c!.level)).map((g) => ({ level: Number(g.key), n: g.n, students: g.students })));
    expect(seen.a).toHaveLength(2);
    session.settings.explain = true;
    try {
      const explained = await session.run(text);
      expect(explained).toContain('side c: from pa (ckan-2.11)');
      expect(explained).toContain('side e: from local (the local data, read in this process as ckan-2.11 answers; nothing is sent)');
    } finally {
      session.settings.explain = false;
    }
    expect(await session.run('from enrolments e join nowhere:courses c on e.course = c.code')).toContain('error[UNKNOWN_SOURCE]');
  });

  /** Tab's completions for `text`, the cursor at its end, as the REPL asks them of its session. */
  async function tab(text: string): Promise<readonly string[]> {
    return (await completeQuery(text, text.length, session.completionContext())).completions;
  }

  it('Tab after join offers every source\'s name: beside the local resources, and asks no source anything to say so', async () => {
    const names = tables.flatMap((t) => [t.id, ...t.aliases]);
    const found = await tab('from enrolments e join ');
    expect(found).toEqual([...new Set([...found.filter((c) => names.includes(c))])].concat(['pa:', 'pb:', 'private:', 'anonymous:', 'down:', 'files:', 'local:']));
    expect(found.filter((c) => names.includes(c)).sort()).toEqual([...new Set(names)].sort());
    expect(await tab('from enrolments e join p')).toEqual(['pa:', 'pb:', 'private:']);
    // one source left: completed without the space a whole word gets, for its resource follows
    expect(await tab('from enrolments e join fi')).toEqual(['files:']);
    expect([...seen.a, ...seen.b, ...seen.c]).toEqual([]);
  });

  it('Tab after name: offers that source\'s resources, read from it the first time; after its alias and a dot, its fields', async () => {
    // a data profile lists its files' resources
    const files = await tab('from enrolments e join files:');
    expect(files.length).toBeGreaterThan(0);
    expect(files.every((c) => c.startsWith('files:'))).toBe(true);
    expect(new Set(files.map((c) => c.slice('files:'.length)))).toEqual(new Set(tables.flatMap((t) => [t.id, ...t.aliases])));
    expect(await tab('from enrolments e join local:cour')).toEqual(['local:courses ']);
    // the session's own source under its name: its fields, as without it
    expect(await tab('from local:courses where subj')).toEqual(['subject ']);
    // a portal: every table and alias its _table_metadata lists (asked once, as .resources does)
    const portal = new Set(tables.flatMap((t) => [t.id, ...t.aliases]).map((name) => `pb:${name}`));
    expect(new Set(await tab('from enrolments e join pb:'))).toEqual(portal);
    expect(await session.run('from pb:schools limit 1')).toMatch(/1 of \d+ records?$/);
    // and the ones a query named there (kept by the id the portal answered with): the same list
    const after = await tab('from enrolments e join pb:');
    expect(after, after.join(' ')).toHaveLength(portal.size);
    expect(new Set(after)).toEqual(portal);
    seen.b.length = 0;
    // a portal's fields, asked of that portal with limit 0, offered qualified, in the table's order
    const fields = await tab('from enrolments e join pa:courses c on e.course = c.');
    expect(fields).toEqual(tables.find((t) => t.aliases.includes('courses'))!.fields.map((f) => `c.${f.id}`));
    expect(seen.a).toEqual([{ resource_id: 'courses', limit: 0 }]);
    // and again from what was kept: nothing more is sent
    await tab('from enrolments e join pa:courses c on e.course = c.s');
    expect(seen.a).toHaveLength(1);
    // values of a field of another source, sampled from that source
    const values = await tab('from enrolments e join pb:courses c on e.course = c.code where c.subject = ');
    expect(new Set(values)).toEqual(new Set(courses().map((c) => String(c.subject))));
    expect(seen.b.map((r) => r.resource_id)).toEqual(['courses']);
  });

  it('a profile whose token variable is unset completes nothing (and says nothing); with it set, its private resource\'s fields, the token never shown', async () => {
    const saved = process.env['PRIVATE_TOKEN'];
    delete process.env['PRIVATE_TOKEN'];
    try {
      expect(await tab('from enrolments e join private:courses c on e.course = c.')).toEqual([]);
      expect(seen.c).toEqual([]);
      process.env['PRIVATE_TOKEN'] = TOKEN;
      const fields = await tab('from enrolments e join private:courses c on e.course = c.');
      expect(fields).toEqual(tables.find((t) => t.aliases.includes('courses'))!.fields.map((f) => `c.${f.id}`));
      expect(fields.join(' ')).not.toContain(TOKEN);
      // the anonymous profile of the same portal is refused the private resource: no fields, quietly
      expect(await tab('from enrolments e join anonymous:courses c on e.course = c.')).toEqual([]);
    } finally {
      if (saved === undefined) delete process.env['PRIVATE_TOKEN'];
      else process.env['PRIVATE_TOKEN'] = saved;
    }
  });
});

describe('a REPL session opened from a profile', () => {
  it('reads name:resource of its own profile from its own source, completes it so, and its hint names it', async () => {
    const source = await openSource({ kind: 'url', url: servers[0]!.url });
    const session = await sessionOver(source, 'pa');
    try {
      const text = 'from pa:courses where subject = math limit 2';
      const output = await session.run(text);
      expect(JSON.parse(output.slice(0, output.lastIndexOf(']') + 1))).toEqual(courses().filter((c) => c.subject === 'math').slice(0, 2));
      expect(seen.a).toEqual([{ resource_id: 'courses', filters: { subject: 'math' }, limit: 2 }]);
      // no local data here: `local:` is not offered, the profiles are
      const found = (await completeQuery('from ', 5, session.completionContext())).completions;
      expect(found.filter((c) => c.endsWith(':'))).toEqual(['pa:', 'pb:', 'private:', 'anonymous:', 'down:', 'files:']);
      // the session's own source under its profile's name: the resources it has seen (as named, and by the id answered)
      const mine = (await completeQuery('from pa:', 8, session.completionContext())).completions;
      expect(new Set(mine)).toEqual(new Set(['pa:courses', `pa:${tables.find((t) => t.aliases.includes('courses'))!.id}`]));
      expect(await session.run('from stats:2024')).toContain('written after that source\'s name (pa:stats:2024) or by its id');
    } finally {
      await session.close();
      await source.close();
    }
  });
});

describe('a resource whose own name has "word:" in front (CKAN\'s datastore takes ":" in an alias)', () => {
  it('is read as a source name (UNKNOWN_SOURCE, the hint saying how to write it); written after the session\'s own name it is that resource', async () => {
    const data = mkdtempSync(join(tmpdir(), 'ckql-colon-'));
    writeFileSync(join(data, 'stats:2024.csv'), 'n,label\n1,one\n2,two\n');
    const source = await openSource({ kind: 'data', paths: [data] }, { lazy: true });
    const session = await sessionOver(source);
    try {
      const refused = await session.run('from stats:2024 where n = 2');
      expect(refused).toContain('error[UNKNOWN_SOURCE]: no source named "stats"');
      expect(refused).toContain('one whose own name has ":" is written after that source\'s name (local:stats:2024) or by its id');
      const read = await session.run('from local:stats:2024 where n = 2');
      expect(JSON.parse(read.slice(0, read.lastIndexOf(']') + 1))).toEqual([{ _id: 2, n: 2, label: 'two' }]);
      // the language service says the same, and completes it so
      expect(await completeQuery('from local:st', 13, session.completionContext())).toMatchObject({ completions: ['local:stats:2024 '] });
    } finally {
      await session.close();
      await source.close();
    }
  });
});

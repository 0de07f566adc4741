/**
 * Section 6, engines: the same requests on `memory`, `pglite` and
 * `postgres` side by side; `ckql load` against `psql \copy` of the same
 * file (the floor); a large table on the real server (selective filter, `q`,
 * sort + limit with CKAN's indexes); the memory of a process per engine.
 *
 * The server is `CKQL_BENCH_PG_URL` (or `CKQL_TEST_PG_URL`); without one the
 * postgres columns say "no server". The large table has
 * `CKQL_BENCH_PG_ROWS` rows (default 1 000 000; 10 000 000 is the issue's
 * figure and takes minutes to build, so it is asked for explicitly).
 */
import { execFileSync } from 'node:child_process';
import { statSync } from 'node:fs';
import pg from 'pg';
import { memoryEngine } from '../src/engine/memory/engine.js';
import { loadResources } from '../src/engine/node/load-resources.js';
import { pgliteEngine } from '../src/engine/pglite/engine.js';
import { postgresEngine } from '../src/engine/postgres/engine.js';
import { createTableSql, DATASTORE_SETUP_SQL, fullTextIndexSql } from '../src/engine/sql/layout.js';
import { loadTables } from '../src/engine/sql/load.js';
import type { Engine } from '../src/engine/types.js';
import { runChild } from './lib/child.js';
import { freshDatabase } from './lib/postgres.js';
import type { RunConfig } from './lib/config.js';
import { enrolmentsFile } from './lib/data.js';
import { formatBytes, formatRatio } from './lib/harness.js';
import type { SectionResult, Table, Target } from './lib/report.js';

const CASES: readonly { name: string; request: Record<string, unknown> }[] = [
  { name: 'first page (limit 100)', request: { limit: 100 } },
  { name: 'filter status = withdrawn, limit 100', request: { filters: { status: 'withdrawn' }, limit: 100 } },
  { name: 'filter course in (2), term', request: { filters: { course: ['MATH-101', 'BIOL-103'], term: '2024-autumn' }, limit: 100 } },
  { name: 'q "withdrawn"', request: { q: 'withdrawn', limit: 100 } },
  { name: 'sort grade desc, limit 10', request: { sort: 'grade desc', limit: 10 } },
  { name: 'count only (limit 0, filter)', request: { filters: { status: 'completed' }, limit: 0 } },
];

/** Median ms of `runs` searches after one warm-up. */
async function timeSearch(engine: Engine, request: Record<string, unknown>, runs: number): Promise<number> {
  await engine.search(request);
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    await engine.search(request);
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)] as number;
}

const ms = (x: number | undefined): string => (x === undefined ? 'no server' : x < 10 ? `${x.toFixed(2)} ms` : `${x.toFixed(0)} ms`);

export async function benchEngines(config: RunConfig, log: (line: string) => void): Promise<SectionResult> {
  const rows = config.quick ? 20_000 : 200_000;
  const runs = config.quick ? 5 : 21;
  const file = enrolmentsFile(rows);
  const serverUrl = process.env['CKQL_BENCH_PG_URL'] ?? process.env['CKQL_TEST_PG_URL'];
  const tables: Table[] = [];
  const targets: Target[] = [];
  const notes: string[] = [];

  // 1. The same requests on each engine.
  log(`engines: loading ${rows} rows into memory, pglite${serverUrl === undefined ? '' : ', postgres'}`);
  const loaded = await loadResources([file]);
  const memory = memoryEngine(loaded);
  const t0 = performance.now();
  const pglite = await pgliteEngine({ tables: loaded });
  const pgliteLoadMs = performance.now() - t0;
  let postgres: Engine | undefined;
  let database: Awaited<ReturnType<typeof freshDatabase>> | undefined;
  let postgresLoadMs: number | undefined;
  if (serverUrl !== undefined) {
    database = await freshDatabase(serverUrl);
    const engine = await postgresEngine({ url: database.url });
    const t1 = performance.now();
    await loadTables(engine.db, loaded);
    postgresLoadMs = performance.now() - t1;
    await engine.refresh();
    postgres = engine;
  }
  const caseRows: string[][] = [];
  for (const { name, request } of CASES) {
    const full = { resource_id: 'enrolments', ...request };
    const m = await timeSearch(memory, full, runs);
    const p = await timeSearch(pglite, full, runs);
    const s = postgres === undefined ? undefined : await timeSearch(postgres, full, runs);
    caseRows.push([name, ms(m), ms(p), ms(s), formatRatio(p / m), s === undefined ? '—' : formatRatio(s / m)]);
    log(`engines: ${name}: memory ${ms(m)}, pglite ${ms(p)}, postgres ${ms(s)}`);
  }
  tables.push({
    title: `Engines side by side: datastore_search on ${rows.toLocaleString('en')} enrolments (median of ${runs}, in process, no HTTP)`,
    headers: ['request', 'memory', 'pglite', 'postgres', 'pglite ÷ memory', 'postgres ÷ memory'],
    rows: caseRows,
  });
  await pglite.close();
  await postgres?.close();

  // 2. Loading: ckql's path (parse + COPY in batches + trigger + indexes) against psql \copy of the same file.
  const loadRows: string[][] = [];
  const fileBytes = statSync(file).size;
  loadRows.push(['pglite: loadTables (CKAN layout, trigger, GiST indexes)', `${(pgliteLoadMs / 1000).toFixed(2)} s`, `${Math.round(rows / (pgliteLoadMs / 1000)).toLocaleString('en')}`]);
  if (postgresLoadMs !== undefined) {
    loadRows.push(['postgres: loadTables (CKAN layout, trigger, GiST indexes)', `${(postgresLoadMs / 1000).toFixed(2)} s`, `${Math.round(rows / (postgresLoadMs / 1000)).toLocaleString('en')}`]);
  }
  if (database !== undefined) {
    // The whole command as a user runs it (a child process: parse, COPY, indexes).
    const t2 = performance.now();
    execFileSync(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'load', file, '--db', database.url, '--replace'], { stdio: 'ignore' });
    const cliMs = performance.now() - t2;
    loadRows.push(['postgres: `ckql load FILE --db URL --replace` (whole command)', `${(cliMs / 1000).toFixed(2)} s`, `${Math.round(rows / (cliMs / 1000)).toLocaleString('en')}`]);
    const t3 = performance.now();
    execFileSync(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'load', file, '--db', database.url, '--replace', '--no-indexes'], { stdio: 'ignore' });
    const noIndexMs = performance.now() - t3;
    loadRows.push(['postgres: `ckql load … --no-indexes`', `${(noIndexMs / 1000).toFixed(2)} s`, `${Math.round(rows / (noIndexMs / 1000)).toLocaleString('en')}`]);
    const psql = (sql: string): void => void execFileSync('psql', [database!.url, '-q', '-v', 'ON_ERROR_STOP=1', '-c', sql], { stdio: 'ignore' });
    const columns = 'student text, course text, term text, status text, grade numeric, enrolled_on timestamp';
    const source = `'${file.replaceAll("'", "''")}' WITH (FORMAT csv, HEADER true)`;
    psql(`CREATE TABLE plain_copy (${columns})`);
    const t4 = performance.now();
    psql(`\\copy plain_copy FROM ${source}`);
    const copyMs = performance.now() - t4;
    loadRows.push(['floor: `psql \\copy` into a plain table (no trigger, no index)', `${(copyMs / 1000).toFixed(2)} s`, `${Math.round(rows / (copyMs / 1000)).toLocaleString('en')}`]);
    psql(`CREATE TABLE ckan_copy (_id serial primary key, _full_text tsvector, ${columns}); CREATE TRIGGER zfulltext BEFORE INSERT ON ckan_copy FOR EACH ROW EXECUTE PROCEDURE populate_full_text_trigger()`);
    const t5 = performance.now();
    psql(`\\copy ckan_copy (student, course, term, status, grade, enrolled_on) FROM ${source}`);
    const triggerMs = performance.now() - t5;
    loadRows.push(['floor: `psql \\copy` into CKAN\'s layout (trigger, no index)', `${(triggerMs / 1000).toFixed(2)} s`, `${Math.round(rows / (triggerMs / 1000)).toLocaleString('en')}`]);
    targets.push({ section: 'engines', what: '`ckql load --no-indexes` (whole command, start-up and parsing included) ÷ `psql \\copy` into the same layout', goal: 'reported', measured: formatRatio(noIndexMs / triggerMs), met: null });
    targets.push({ section: 'engines', what: '`ckql load` with CKAN\'s GiST indexes ÷ `psql \\copy` into a plain table', goal: 'reported', measured: formatRatio(cliMs / copyMs), met: null });
  }
  tables.push({ title: `Loading ${rows.toLocaleString('en')} rows (${formatBytes(fileBytes)} CSV)`, headers: ['how', 'time', 'rows/s'], rows: loadRows });

  // 3. A large table on the server, built in SQL (generate_series) in CKAN's layout.
  if (database !== undefined) {
    const bigRows = Number(process.env['CKQL_BENCH_PG_ROWS'] ?? (config.quick ? 100_000 : 1_000_000));
    log(`engines: building a ${bigRows.toLocaleString('en')}-row table on the server`);
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    for (const sql of DATASTORE_SETUP_SQL) await client.query(sql);
    const id = 'big';
    const columns = [{ id: 'code', sqlType: 'text' }, { id: 'word', sqlType: 'text' }, { id: 'n', sqlType: 'int4' }, { id: 'x', sqlType: 'float8' }];
    for (const sql of createTableSql(id, columns)) await client.query(sql);
    const t5 = performance.now();
    await client.query(`INSERT INTO "big" (code, word, n, x)
      SELECT 'C-' || (i % 100000), (ARRAY['alpha','beta','gamma','delta','epsilon','zeta','eta','theta'])[1 + i % 8] || ' ' || md5(i::text), i % 1000, random()
      FROM generate_series(1, ${bigRows}) AS i`);
    for (const sql of fullTextIndexSql(id, columns)) await client.query(sql);
    await client.query('CREATE INDEX ON "big" (n)');
    await client.query('ANALYZE "big"');
    const buildS = (performance.now() - t5) / 1000;
    await client.end();
    const engine = await postgresEngine({ url: database.url });
    const bigCases: [string, Record<string, unknown>][] = [
      ['selective filter (code = C-4242), with total', { filters: { code: 'C-4242' } }],
      ['selective filter on the B-tree column n = 7, limit 10, no total', { filters: { n: 7 }, limit: 10, include_total: false }],
      ['q: one rare word (an md5), with total', { q: 'c4ca4238a0b923820dcc509a6f75849b' }],
      ['sort _id desc + limit 10 (primary key), no total', { sort: '_id desc', limit: 10, include_total: false }],
      ['sort n desc + limit 10 (B-tree), no total', { sort: 'n desc', limit: 10, include_total: false }],
      ['first page with total (count(*) of every row)', { limit: 10 }],
      ['first page with total_estimation_threshold (reltuples)', { limit: 10, total_estimation_threshold: 1000 }],
    ];
    const bigRowsOut: string[][] = [];
    for (const [name, request] of bigCases) {
      const t = await timeSearch(engine, { resource_id: 'big', ...request }, config.quick ? 3 : 7);
      bigRowsOut.push([name, ms(t)]);
      log(`engines: big: ${name}: ${ms(t)}`);
    }
    await engine.close();
    tables.push({ title: `A ${bigRows.toLocaleString('en')}-row table on PostgreSQL (built in ${buildS.toFixed(0)} s with CKAN's trigger and GiST indexes, plus a B-tree on n)`, headers: ['request', 'median'], rows: bigRowsOut });
    notes.push(`The large table is built in SQL (\`generate_series\`), so its size is set by \`CKQL_BENCH_PG_ROWS\` (the issue's figure: \`CKQL_BENCH_PG_ROWS=10000000 npm run bench -- --only engines\`, minutes on this machine). \`q\` uses the GiST index on \`_full_text\`; \`total\` is a \`count(*)\` over the matches, the cost that \`include_total: false\` or 2.11's \`total_estimation_threshold\` avoid.`);
  }
  await database?.drop();

  // 4. Memory of a process per engine (each in a fresh process).
  const memRows: string[][] = [];
  for (const kind of ['memory', 'pglite', ...(serverUrl === undefined ? [] : ['postgres'])]) {
    const usage = await runChild<{ rss: number; heap: number; external: number }>('engine-memory.ts', [kind, file], { env: serverUrl === undefined ? {} : { CKQL_BENCH_PG_URL: serverUrl } });
    memRows.push([kind, formatBytes(usage.rss), formatBytes(usage.heap), formatBytes(usage.external)]);
  }
  tables.push({ title: `Memory of a process serving ${rows.toLocaleString('en')} enrolments (after one search)`, headers: ['engine', 'RSS', 'JS heap', 'external + buffers'], rows: memRows });
  notes.push('PGlite keeps its database inside the WebAssembly memory of the process (counted in RSS and external); the postgres engine keeps only a connection pool, the rows live in the server.');
  return { id: 'engines', title: '6. Engines', tables, targets, notes };
}

/**
 * Section 9: reading local data. First the 1,000,000-row, 8-column
 * `sales.csv` (bench/lib/data.ts) loaded by the memory loader beside its
 * peers, each in fresh processes in one run: DuckDB's `read_csv` into an
 * in-memory table (@duckdb/node-api, a bench-only dependency), `psql
 * \copy` into a plain table of the CI cluster (`CKQL_BENCH_PG_URL` or
 * `CKQL_TEST_PG_URL`; left out without one), and ckql's `loadFiles` into an
 * in-memory PGlite (COPY in batches). Then a 1,000,000-row CSV (the generated
 * enrolments) loaded by `loadResources`, as `ckql query --data`, `ckql serve
 * DIR` and the REPL read it: time, peak RSS and the heap the table keeps,
 * beside reading the same file whole and parsing it with csv-parse/sync (how
 * the loader began before it streamed files into columns); the same records
 * as NDJSON beside reading that file whole, splitting it and parsing each line. Then the cost
 * of keeping integers beyond 2^53 exact in the client: `readResponse` on a
 * 32,000-record page against `JSON.parse` of it, with and without such a
 * number in the page.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RunConfig } from './lib/config.js';
import { ChildTimeout, runChild } from './lib/child.js';
import { ckqlModules } from './lib/ckql.js';
import { enrolmentsFile, enrolmentsNdjsonFile, salesFile } from './lib/data.js';
import { blackhole, formatBytes, formatCount, formatRatio, formatTime, measureSync } from './lib/harness.js';
import type { Measured } from './lib/harness.js';
import type { SectionResult } from './lib/report.js';

interface LoadRun {
  readonly rows: number;
  readonly ms: number;
  readonly cpuMs: number;
  readonly peakRss: number;
  readonly heldBytes: number;
}

interface PeerRun {
  readonly rows: number;
  readonly ms: number;
  /** CPU time of the process (every thread); undefined where the work is another process's (the server's, for psql) */
  readonly cpuMs?: number;
  /** peak RSS of the process that holds the data (undefined for psql: the server holds it) */
  readonly peakRss?: number;
}

/** How long the PGlite load may take before it is reported as not finished (1,000,000 rows took 8 min on the loaded machine). */
const LITE_TIMEOUT_MS = 1_200_000;

const median = (values: readonly number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;

/** The table `psql \copy` fills: the file's 8 columns as PostgreSQL types, no index, no constraint. */
const PSQL_TABLE = 'ckql_bench_load_sales';
const PSQL_CREATE = `DROP TABLE IF EXISTS ${PSQL_TABLE}; CREATE TABLE ${PSQL_TABLE} (id int, category text, price numeric, qty int, date date, text text, bool boolean, code text)`;

function psql(url: string, command: string): void {
  execFileSync('psql', [url, '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-c', command], { stdio: ['ignore', 'ignore', 'inherit'] });
}

/** `psql \copy` of `file` into a fresh plain table: the whole client process timed, as a user runs it. */
function psqlCopy(url: string, file: string, rows: number): PeerRun {
  psql(url, PSQL_CREATE);
  const started = performance.now();
  psql(url, `\\copy ${PSQL_TABLE} FROM '${file.replaceAll("'", "''")}' WITH (FORMAT csv, HEADER true)`);
  const ms = performance.now() - started;
  const counted = execFileSync('psql', [url, '-X', '-At', '-c', `SELECT count(*) FROM ${PSQL_TABLE}`], { encoding: 'utf8' }).trim();
  if (Number(counted) !== rows) throw new Error(`load bench: psql \\copy loaded ${counted} rows, expected ${rows}`);
  return { rows, ms };
}

/** The 8-column file loaded by the memory loader, DuckDB, psql and PGlite, interleaved run by run. */
async function benchPeers(config: RunConfig, log: (line: string) => void): Promise<Pick<SectionResult, 'tables' | 'targets' | 'notes'>> {
  const rows = config.quick ? 200_000 : 1_000_000;
  const file = salesFile(rows);
  const bytes = statSync(file).size;
  const url = process.env.CKQL_BENCH_PG_URL ?? process.env.CKQL_TEST_PG_URL;
  const runs = config.quick ? 1 : 3;
  // PGlite reads the same file into a folder, as `ckql load --db DIR` does (the notes say why a folder).
  const liteRows = config.quick ? 10_000 : rows;
  const liteFile = salesFile(liteRows);
  const liteDir = mkdtempSync(join(tmpdir(), 'ckql-bench-pglite-'));
  const names = ['ckql memory engine: loadResources', 'DuckDB read_csv (CREATE TABLE AS, in memory)', ...(url === undefined ? [] : ['psql \\copy into a plain table']), `ckql PGlite engine: loadFiles (COPY in batches), ${formatCount(liteRows)} rows`];
  const measured = new Map<string, PeerRun[]>(names.map((name) => [name, []]));
  const keep = (name: string, run: PeerRun): void => {
    const expected = name === names.at(-1) ? liteRows : rows;
    if (run.rows !== expected) throw new Error(`load bench: ${name} read ${run.rows} rows, expected ${expected}`);
    measured.get(name)?.push(run);
  };
  for (let i = 0; i < runs; i++) {
    log(`load: sales.csv (${formatCount(rows)} rows, ${formatBytes(bytes)}), run ${i + 1} of ${runs}: ckql, DuckDB${url === undefined ? '' : ', psql'}${i === 0 ? ', PGlite' : ''}`);
    keep(names[0] as string, await runChild<LoadRun>('load-csv.ts', ['ckql', file], { exposeGc: true }));
    keep(names[1] as string, await runChild<PeerRun>('load-peers.ts', ['duckdb', file]));
    if (url !== undefined) keep(names[2] as string, psqlCopy(url, file, rows));
    // PGlite takes longest and its figure is judged by memory alone: one run.
    if (i === 0) {
      try {
        keep(names.at(-1) as string, await runChild<PeerRun>('load-peers.ts', ['pglite', liteFile, liteDir], { timeoutMs: LITE_TIMEOUT_MS }));
      } catch (error) {
        if (!(error instanceof ChildTimeout)) throw error;
        log(`load: ${error.message}`);
      }
    }
  }
  if (url !== undefined) psql(url, `DROP TABLE IF EXISTS ${PSQL_TABLE}`);
  rmSync(liteDir, { recursive: true, force: true });
  const summary = (name: string) => {
    const all = measured.get(name) ?? [];
    const of = (pick: (run: PeerRun) => number | undefined): number | undefined => {
      const values = all.map(pick).filter((v): v is number => v !== undefined);
      return values.length === 0 ? undefined : median(values);
    };
    return { ms: of((r) => r.ms) as number, cpu: of((r) => r.cpuMs), peak: of((r) => r.peakRss), runs: all.length };
  };
  const ckql = summary(names[0] as string);
  const duck = summary(names[1] as string);
  const copy = url === undefined ? undefined : summary(names[2] as string);
  const lite = summary(names.at(-1) as string);
  const judged = !config.quick;
  return {
    tables: [
      {
        title: `Loading sales.csv: ${formatCount(rows)} rows, 8 columns (id, category, price with 2 decimals, qty, date, text, bool, code), ${formatBytes(bytes)}; median of fresh processes`,
        headers: ['what', 'runs', 'wall', 'CPU (all threads)', 'peak RSS', 'wall ÷ ckql memory'],
        textColumns: 1,
        rows: names.map((name) => {
          const m = summary(name);
          if (m.runs === 0) return [name, '0', `did not finish in ${LITE_TIMEOUT_MS / 1000} s`, '', '', '—'];
          return [name, String(m.runs), formatTime(m.ms), m.cpu === undefined ? '(the server\'s)' : formatTime(m.cpu), m.peak === undefined ? '(the server\'s)' : formatBytes(m.peak), name === names.at(-1) ? '—' : formatRatio(m.ms / ckql.ms)];
        }),
      },
    ],
    targets: [
      {
        section: 'load', what: `${formatCount(rows)}-row 8-column CSV: memory engine load ÷ DuckDB read_csv, wall`, goal: '≤ 3×',
        measured: `${formatRatio(ckql.ms / duck.ms)} (${formatTime(ckql.ms)} vs ${formatTime(duck.ms)}; CPU ${formatRatio((ckql.cpu as number) / (duck.cpu as number))})`, met: judged ? ckql.ms <= 3 * duck.ms : null,
      },
      {
        section: 'load', what: `${formatCount(rows)}-row 8-column CSV: memory engine load ÷ DuckDB read_csv, peak RSS`, goal: '≤ 1.5×',
        measured: `${formatRatio((ckql.peak as number) / (duck.peak as number))} (${formatBytes(ckql.peak as number)} vs ${formatBytes(duck.peak as number)})`, met: judged ? (ckql.peak as number) <= 1.5 * (duck.peak as number) : null,
      },
      {
        section: 'load', what: `${formatCount(rows)}-row 8-column CSV: memory engine load ÷ psql \\copy into a plain table, wall`, goal: '≤ 1.5×',
        measured: copy === undefined ? 'no PostgreSQL (CKQL_BENCH_PG_URL or CKQL_TEST_PG_URL)' : `${formatRatio(ckql.ms / copy.ms)} (${formatTime(ckql.ms)} vs ${formatTime(copy.ms)})`,
        met: judged && copy !== undefined ? ckql.ms <= 1.5 * copy.ms : null,
      },
      {
        section: 'load', what: `${formatCount(liteRows)}-row 8-column CSV: PGlite engine load into a folder (\`ckql load --db\`), peak RSS`, goal: '≤ 400 MB',
        measured: lite.runs === 0 ? `did not finish within ${LITE_TIMEOUT_MS / 1000} s` : `${formatBytes(lite.peak as number)}; ${formatTime(lite.ms)} (CKAN's layout: the \`_full_text\` trigger and its GiST indexes)`,
        met: judged ? lite.runs > 0 && (lite.peak as number) <= 400e6 : null,
      },
    ],
    notes: [
      'sales.csv is generated from a seed (bench/lib/data.ts `salesFile`): 5 % of the texts are quoted (a comma or doubled quotes in them), an eighth of the words are not ASCII, 1 % of the qty cells are empty. Every contender runs in a fresh process (bench/children/load-csv.ts, load-peers.ts), its modules loaded and its database started before the clock starts; "wall" is the load alone, CPU is the process\'s user + system time over all its threads (DuckDB reads with its default threads), peak RSS the process\'s high-water mark. `psql \\copy` is timed as a whole client process (its connection included) and the rows live in the server, so it has no RSS here. The machine is shared: wall times stretch with its load, and the ratios of one run are what is judged.',
      'The memory loader reads the bytes with its own CSV reader (src/engine/memory/csv-reader.ts): a number cell is read from its digits into a double (its text given back by `toFixed` if the column turns to text), a repeated text is found in its column\'s pool by its bytes, and only kept texts become strings, each of its own (a string cut from a chunk\'s text would keep the whole chunk alive). PGlite is the `pglite` engine\'s load as `ckql load --db DIR` runs it: two passes over the file (types, then `COPY` in batches of 10,000 rows) into a database in a folder, in CKAN\'s layout (the `_full_text` trigger, then CKAN\'s GiST indexes); its memory is PGlite\'s WebAssembly heap and the batch, not the table. In memory (`ckql serve --engine pglite FILE`) the database itself is in the process: about 490 bytes a row in this layout (30,000 rows: 14.8 MB of table and indexes), so 1,000,000 rows cannot fit 400 MB there. The child once waited on an open handle after its load (the bench reported such runs as never ending): it now closes the database and exits once its line is written.',
    ],
  };
}

const PAGE = 32_000;
const FIELDS = [
  { id: '_id', type: 'int' }, { id: 'student', type: 'text' }, { id: 'course', type: 'text' }, { id: 'term', type: 'text' },
  { id: 'status', type: 'text' }, { id: 'grade', type: 'numeric' }, { id: 'enrolled_on', type: 'date' },
];

export async function benchLoad(config: RunConfig, log: (line: string) => void): Promise<SectionResult> {
  const peers = await benchPeers(config, log);
  const rows = config.quick ? 200_000 : 1_000_000;
  const file = enrolmentsFile(rows);
  const fileBytes = statSync(file).size;
  const ndjson = enrolmentsNdjsonFile(rows);
  const ndjsonBytes = statSync(ndjson).size;
  const runs = config.quick ? 1 : 3;
  const contenders = [
    { name: 'csv: ckql loadResources (a table)', mode: 'ckql', file, bytes: fileBytes },
    { name: 'csv: read whole + csv-parse/sync (records only, no table)', mode: 'csv-parse', file, bytes: fileBytes },
    { name: 'ndjson: ckql loadResources (a table)', mode: 'ckql', file: ndjson, bytes: ndjsonBytes },
    { name: 'ndjson: read whole, split, JSON.parse each line (records only)', mode: 'split-parse', file: ndjson, bytes: ndjsonBytes },
  ] as const;
  const loads = new Map<string, LoadRun[]>(contenders.map((c) => [c.name, []]));
  for (let i = 0; i < runs; i++) {
    for (const c of contenders) {
      log(`load: ${c.name}, ${formatCount(rows)} rows (${formatBytes(c.bytes)}), run ${i + 1} of ${runs}`);
      const run = await runChild<LoadRun>('load-csv.ts', [c.mode, c.file], { exposeGc: true });
      if (run.rows !== rows) throw new Error(`load bench: ${c.name} read ${run.rows} rows, expected ${rows}`);
      loads.get(c.name)?.push(run);
    }
  }
  const summary = (name: string) => {
    const runsOf = loads.get(name) ?? [];
    return { ms: median(runsOf.map((r) => r.ms)), peak: median(runsOf.map((r) => r.peakRss)), held: median(runsOf.map((r) => r.heldBytes)) };
  };
  const ckql = summary(contenders[0].name);
  const floor = summary(contenders[1].name);
  const ckqlNdjson = summary(contenders[2].name);
  const floorNdjson = summary(contenders[3].name);

  log('load: readResponse on a 32,000-record page, with and without an integer beyond 2^53');
  const { readResponse } = await ckqlModules.response();
  const records = Array.from({ length: PAGE }, (_, i) => ({ _id: i + 1, student: `S-${String(i).padStart(6, '0')}`, course: 'MATH-101', term: '2023-autumn', status: 'completed', grade: 4.5, enrolled_on: '2023-07-08' }));
  const plain = JSON.stringify({ help: 'h', success: true, result: { resource_id: 'enrolments', records, fields: FIELDS, total: PAGE } });
  const exact = plain.replace('"_id":7,', '"_id":9007199254740993,');
  const context = { origin: 'http://bench', sentToken: false };
  if (readResponse(200, exact, context).records[6]?._id !== '9007199254740993') throw new Error('load bench: readResponse did not keep 9007199254740993 exact');
  const m = measureSync(
    [
      { name: 'JSON.parse', fn: () => blackhole(JSON.parse(plain)) },
      { name: 'readResponse', fn: () => blackhole(readResponse(200, plain, context)) },
      { name: 'readResponse, exact', fn: () => blackhole(readResponse(200, exact, context)) },
    ],
    config.quick ? { timeMs: 300, minSamples: 3, rounds: 1 } : { timeMs: 1500, minSamples: 10, rounds: 3, warmupIterations: 2 },
  );
  const t = (name: string) => (m.get(name) as Measured).median;
  const checkRatio = t('readResponse') / t('JSON.parse');

  return {
    id: 'load',
    title: '9. Loading data, exact numbers',
    tables: [
      ...peers.tables,
      {
        title: `Loading ${formatCount(rows)} enrolments: enrolments.csv (${formatBytes(fileBytes)}) and the same records as enrolments.ndjson (${formatBytes(ndjsonBytes)}), median of ${runs} fresh processes`,
        headers: ['what', 'time', 'peak RSS', 'peak ÷ file', 'heap kept after GC'],
        rows: contenders.map((c) => {
          const m = summary(c.name);
          return [c.name, formatTime(m.ms), formatBytes(m.peak), formatRatio(m.peak / c.bytes), formatBytes(m.held)];
        }),
      },
      {
        title: `Client: reading a ${formatCount(PAGE)}-record page (${formatBytes(plain.length)})`,
        headers: ['what', 'median', 'vs JSON.parse'],
        rows: [
          ['JSON.parse (floor)', formatTime(t('JSON.parse')), '1×'],
          ['readResponse, no integer beyond 2^53', formatTime(t('readResponse')), formatRatio(checkRatio)],
          ['readResponse, one integer beyond 2^53 (read again, exactly)', formatTime(t('readResponse, exact')), formatRatio(t('readResponse, exact') / t('JSON.parse'))],
        ],
      },
    ],
    // At --quick's 200,000 rows the modules' own memory weighs as much as the data: figures are reported, not judged.
    targets: [
      ...peers.targets,
      {
        section: 'load', what: `${formatCount(rows)}-row CSV: peak RSS of loadResources`, goal: '≤ the csv-parse/sync floor (the loader before)',
        measured: `${formatBytes(ckql.peak)} (${formatRatio(ckql.peak / fileBytes)} the file) vs ${formatBytes(floor.peak)}; ${formatTime(ckql.ms)}`, met: config.quick ? null : ckql.peak <= floor.peak,
      },
      {
        section: 'load', what: `${formatCount(rows)}-row NDJSON: peak RSS of loadResources`, goal: '≤ the split + JSON.parse floor (the loader before)',
        measured: `${formatBytes(ckqlNdjson.peak)} vs ${formatBytes(floorNdjson.peak)}; ${formatTime(ckqlNdjson.ms)} vs ${formatTime(floorNdjson.ms)}`, met: config.quick ? null : ckqlNdjson.peak <= floorNdjson.peak,
      },
      {
        section: 'load', what: 'client page without big integers: readResponse (envelope, result checks, the exactness check)', goal: 'reported against JSON.parse',
        measured: formatRatio(checkRatio), met: null,
      },
    ],
    notes: [
      ...peers.notes,
      'Each load runs in a fresh process started with `--expose-gc` (bench/children/load-csv.ts); time is the call alone (modules imported before), peak RSS the process\'s high-water mark (`process.resourceUsage().maxRSS`, module code included), and "heap kept" is heapUsed after full GCs minus the same before the call. The csv-parse row reads the file whole and parses it into arrays of strings, the first step of the loader before it streamed the file into one array per column; the split row does the same for NDJSON (the loader before read it whole and split it into lines). Neither builds a table, so each is a floor for that design, not for this one.',
      '`readResponse` is the client\'s reading of a body (envelope, result checks); it calls `JSON.parse`, then looks for an integer at or beyond 2^53 in the records, and only if one is there reads the body again with lossless-json, keeping such integers as their text.',
    ],
  };
}

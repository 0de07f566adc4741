/**
 * Section 9: reading local data. A 1,000,000-row CSV (the generated
 * enrolments) loaded by `loadResources`, as `ckql query --data`, `ckql serve
 * DIR` and the REPL read it: time, peak RSS and the heap the table keeps,
 * beside reading the same file whole and parsing it with csv-parse/sync (how
 * the loader began before it streamed files into columns); the same records
 * as NDJSON beside reading that file whole, splitting it and parsing each line. Then the cost
 * of keeping integers beyond 2^53 exact in the client: `readResponse` on a
 * 32,000-record page against `JSON.parse` of it, with and without such a
 * number in the page.
 */
import { statSync } from 'node:fs';
import type { RunConfig } from './lib/config.js';
import { runChild } from './lib/child.js';
import { ckqlModules } from './lib/ckql.js';
import { enrolmentsFile, enrolmentsNdjsonFile } from './lib/data.js';
import { blackhole, formatBytes, formatCount, formatRatio, formatTime, measureSync } from './lib/harness.js';
import type { Measured } from './lib/harness.js';
import type { SectionResult } from './lib/report.js';

interface LoadRun {
  readonly rows: number;
  readonly ms: number;
  readonly peakRss: number;
  readonly heldBytes: number;
}

const PAGE = 32_000;
const FIELDS = [
  { id: '_id', type: 'int' }, { id: 'student', type: 'text' }, { id: 'course', type: 'text' }, { id: 'term', type: 'text' },
  { id: 'status', type: 'text' }, { id: 'grade', type: 'numeric' }, { id: 'enrolled_on', type: 'date' },
];

export async function benchLoad(config: RunConfig, log: (line: string) => void): Promise<SectionResult> {
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
  const median = (values: readonly number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;
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
  const plain = JSON.stringify({ help: 'h', success: true, result: { records, fields: FIELDS, total: PAGE } });
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
      'Each load runs in a fresh process started with `--expose-gc` (bench/children/load-csv.ts); time is the call alone (modules imported before), peak RSS the process\'s high-water mark (`process.resourceUsage().maxRSS`, module code included), and "heap kept" is heapUsed after full GCs minus the same before the call. The csv-parse row reads the file whole and parses it into arrays of strings, the first step of the loader before it streamed the file into one array per column; the split row does the same for NDJSON (the loader before read it whole and split it into lines). Neither builds a table, so each is a floor for that design, not for this one.',
      '`readResponse` is the client\'s reading of a body (envelope, result checks); it calls `JSON.parse`, then looks for an integer at or beyond 2^53 in the records, and only if one is there reads the body again with lossless-json, keeping such integers as their text.',
    ],
  };
}

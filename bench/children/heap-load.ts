/**
 * Heap cost of a loaded table, in a fresh process with --expose-gc.
 *
 *   heap-load.ts json <file>     JSON.parse of the file (the floor: plain objects)
 *   heap-load.ts ckql <file>     loadResources on the file, then the same after
 *                                `q` evaluates until the normalized search text is whole
 *
 * Prints one JSON line: rows, file bytes, heap bytes retained.
 */
import { readFileSync, statSync } from 'node:fs';
import { ckqlModules } from '../lib/ckql.js';

const [mode, file] = process.argv.slice(2) as [string, string];
const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error('heap-load.ts needs --expose-gc');

/** V8 heap plus ArrayBuffer backing stores (typed-array column codes and index lists live there). */
function settledHeap(): number {
  for (let i = 0; i < 4; i++) gc?.();
  const usage = process.memoryUsage();
  return usage.heapUsed + usage.arrayBuffers;
}

const fileBytes = statSync(file).size;
if (mode === 'json') {
  const before = settledHeap();
  let text: string | null = readFileSync(file, 'utf8');
  const rows = JSON.parse(text) as unknown[];
  text = null;
  const after = settledHeap();
  process.stdout.write(JSON.stringify({ rows: rows.length, fileBytes, heap: after - before }) + '\n');
} else {
  // load the code first, so the module graph is not counted as table memory
  const [{ loadResources }, { evaluate }] = await Promise.all([ckqlModules.loadResources(), ckqlModules.evaluate()]);
  const before = settledHeap();
  const tables = await loadResources([file]);
  const table = tables[0];
  if (table === undefined) throw new Error(`heap-load.ts: no table in ${file}`);
  const afterLoad = settledHeap();
  // The first q on a table reads the rows; each later one builds a sixteenth of the search text, so the 17th finds it whole.
  let result = evaluate({ resource_id: table.id, q: 'zz-no-such-text', limit: 1 }, table);
  for (let k = 1; k < 17; k++) result = evaluate({ resource_id: table.id, q: `zz-no-such-text-${k}`, limit: 1 }, table);
  const afterQ = settledHeap();
  process.stdout.write(JSON.stringify({
    rows: table.rows.length, fileBytes, heap: afterLoad - before, heapWithTextCache: afterQ - before, qTotal: result.total,
  }) + '\n');
}

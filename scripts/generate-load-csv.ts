/**
 * A CSV of N rows for measuring `ckql load` (BENCHMARKS.md, engines): an
 * integer, a text, a numeric written with two decimals (`7.50`), a date, a
 * boolean and a quoted text with a comma and quotes. A FILE ending in
 * `.ndjson` gets the same rows as JSON lines (the price a number). Written
 * to a stream, so a large N needs no memory.
 *
 *   npx tsx scripts/generate-load-csv.ts 1000000 /tmp/pgload/rows1m.csv
 *   npx tsx scripts/generate-load-csv.ts 1000000 /tmp/pgload/rows1m.ndjson
 */
import { createWriteStream } from 'node:fs';
import { once } from 'node:events';

const rows = Number(process.argv[2] ?? 1_000_000);
const file = process.argv[3];
if (!Number.isInteger(rows) || rows < 0 || file === undefined) {
  process.stderr.write('usage: tsx scripts/generate-load-csv.ts ROWS FILE\n');
  process.exit(2);
}
const out = createWriteStream(file);
const two = (n: number): string => String(n).padStart(2, '0');
const ndjson = file.endsWith('.ndjson');
let chunk = ndjson ? '' : 'id,name,price,day,flag,note\n';
for (let i = 1; i <= rows; i++) {
  const day = `2020-${two(1 + (i % 12))}-${two(1 + (i % 28))}`;
  chunk += ndjson
    ? `${JSON.stringify({ id: i, name: `name ${i % 977}`, price: Math.floor((i % 10_000) / 100) + (i % 100) / 100, day, flag: i % 3 === 0, note: `note, ${i} with "quote"` })}\n`
    : `${i},name ${i % 977},${Math.floor((i % 10_000) / 100)}.${two(i % 100)},${day},${i % 3 === 0},"note, ${i} with ""quote"""\n`;
  if (chunk.length > 1 << 20) {
    if (!out.write(chunk)) await once(out, 'drain');
    chunk = '';
  }
}
out.end(chunk);
await once(out, 'finish');

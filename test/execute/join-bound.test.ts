/**
 * The join bound on a plan (docs/executor.md, Counting and limits): a
 * portal's pages joined by the executor, here `ckql serve` over the demo's
 * enrolments on port 0. A join past `maxJoinRows` is refused before any
 * joined record is made, with its count; one under it gives a nested loop's
 * count; a later join of a chain stops at the bound as it runs.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect } from '../../src/client/connect.js';
import { memoryEngine } from '../../src/engine/memory/engine.js';
import { tableFromRows } from '../../src/engine/memory/load.js';
import { startServer } from '../../src/server/server.js';
import type { RunningServer } from '../../src/server/server.js';

const lines = readFileSync('examples/data/enrolments.csv', 'utf8').trim().split('\n');
const names = lines[0]!.split(',');
const enrolments = lines.slice(1).map((line) => Object.fromEntries(line.split(',').map((value, i) => [names[i]!, value])));
/** Few enough for nested loops. */
const few = enrolments.slice(0, 1500);

/** The pairs of `few` with equal, non-empty `key`: a nested loop. */
function nestedLoop(key: string): number {
  let n = 0;
  for (const a of few) for (const b of few) if (a[key] !== '' && a[key] === b[key]) n++;
  return n;
}

let server: RunningServer;
beforeAll(async () => {
  server = await startServer({
    engine: memoryEngine([tableFromRows(enrolments, { id: 'enrolments' }), tableFromRows(few, { id: 'few' })]),
    port: 0,
  });
});
afterAll(() => server.close());

describe('the join bound on a plan over a portal', () => {
  it("refuses the demo's many-to-many join before it runs, with its count and the keys that multiply", async () => {
    const client = connect({ url: server.url, target: 'ckan-2.11' });
    const refused = client.search('from enrolments a join enrolments b on a.status = b.status select count(*)');
    await expect(refused).rejects.toMatchObject({
      code: 'JOIN_TOO_LARGE',
      message: 'this join gives 209581802 rows, more than the 10000000 a join may give',
      hint: expect.stringContaining('"completed" (14041 × 14041 = 197149681)'),
    });
    // The server answers on.
    expect((await client.search('from enrolments limit 0')).total).toBe(20000);
    await client.close();
  });

  it('runs a join just under the bound, its count a nested loop’s, and refuses it one row lower', async () => {
    const want = nestedLoop('term');
    const text = 'from few a join few b on a.term = b.term select count(*) as n';
    const at = connect({ url: server.url, target: 'ckan-2.11', maxJoinRows: want });
    expect((await at.search(text)).records).toEqual([{ n: want }]);
    at.setMaxJoinRows(want - 1);
    expect(at.maxJoinRows).toBe(want - 1);
    await expect(at.search(text)).rejects.toMatchObject({ code: 'JOIN_TOO_LARGE', message: expect.stringContaining(`gives ${want} rows, more than the ${want - 1}`) });
    await at.close();
  });

  it('stops a later join of a chain at the bound', async () => {
    const first = nestedLoop('course');
    const text = 'from few a join few b on a.course = b.course join few c on b.term = c.term select count(*) as n';
    const client = connect({ url: server.url, target: 'ckan-2.11', maxJoinRows: first });
    await expect(client.search(text)).rejects.toMatchObject({ code: 'JOIN_TOO_LARGE', message: `this join gives more than the ${first} rows a join may give`, span: { start: text.indexOf('join few c') } });
    await client.close();
  });
});

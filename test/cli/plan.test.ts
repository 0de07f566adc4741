/**
 * The real client path of a query the portal cannot answer whole:
 * `ckql query` against the local server answering as CKAN 2.11 (a plan: the
 * rest runs locally) and as CKAN 2.12 (one request with operators) prints
 * the same records as `--data` does locally.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadResources } from '../../src/engine/node/load-resources.js';
import { startServer, type RunningServer } from '../../src/server/server.js';
import { ckql, ndjson, repoRoot } from './run-ckql.js';

const data = join(repoRoot, 'examples', 'data');
let server211: RunningServer;
let server212: RunningServer;

beforeAll(async () => {
  const tables = await loadResources([data], { only: ['enrolments'] });
  server211 = await startServer({ tables });
  server212 = await startServer({ tables, ckan: '2.12' });
});

afterAll(async () => {
  await server211?.close();
  await server212?.close();
});

describe('ckql query with a range and a negation', () => {
  const query = 'from enrolments where grade >= 5 and status != withdrawn order by grade desc, student limit 20 select student, grade, status';

  it('prints the same records from a 2.11 portal, a 2.12 portal and local data', async () => {
    const local = await ckql(['query', query, '--data', data, '--format', 'ndjson']);
    expect(local.stderr).toBe('');
    expect(local.code).toBe(0);
    const records = ndjson(local.stdout) as { grade: number; status: string }[];
    expect(records).toHaveLength(20);
    expect(records.every((r) => r.grade >= 5 && r.status !== 'withdrawn')).toBe(true);
    for (const server of [server211, server212]) {
      const remote = await ckql(['query', query, '--url', server.url, '--format', 'ndjson']);
      expect(remote.stderr, server.url).toBe('');
      expect(ndjson(remote.stdout)).toEqual(records);
    }
    // Local data served as CKAN 2.12 (one request with operators) gives them too.
    const local212 = await ckql(['query', query, '--data', data, '--target', 'ckan-2.12', '--format', 'ndjson']);
    expect(local212.stderr).toBe('');
    expect(ndjson(local212.stdout)).toEqual(records);
    const sqlOnMemory = await ckql(['query', query, '--data', data, '--target', 'sql']);
    expect(sqlOnMemory.code).not.toBe(0);
    expect(sqlOnMemory.stderr).toContain('the sql target needs an engine that runs SQL');
  });

  it('takes --target, and refuses above --max-scan with the count', async () => {
    const pinned = await ckql(['query', query, '--url', server212.url, '--target', 'ckan-2.11', '--format', 'ndjson']);
    expect(ndjson(pinned.stdout)).toHaveLength(20);
    const refused = await ckql(['query', query, '--url', server211.url, '--max-scan', '10', '--format', 'ndjson']);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('SCAN_TOO_LARGE');
    expect(refused.stderr).toContain('more than the 10 ckql reads');
    const bad = await ckql(['query', query, '--url', server211.url, '--target', '2.13']);
    expect(bad.stderr).toContain('--target must be ckan-2.11, ckan-2.12 or sql');
  });
});

describe('ckql explain', () => {
  it('prints the target, the request and the residual in ckql', async () => {
    const explained = await ckql(['explain', 'from enrolments where grade >= 5 and status != withdrawn limit 3', '--url', server211.url, '--target', 'ckan-2.12']);
    expect(explained.code).toBe(0);
    expect(explained.stdout).toContain('# target: ckan-2.12');
    expect(explained.stdout).toContain('"grade": {\n      "gte": 5\n    }');
    expect(explained.stdout).toContain('# steps');
    expect(explained.stdout).toContain('limit 3, then stop reading\n└─ filter status != withdrawn\n');
    expect(explained.stdout).toContain('curl -X POST');
  });

  it('asks the portal its target when none is given and the query needs more than 2.11', async () => {
    const query = 'from enrolments where grade >= 5 and status != withdrawn limit 3';
    const on212 = await ckql(['explain', query, '--url', server212.url]);
    expect(on212.stdout).toContain('# target: ckan-2.12 (asked of the portal');
    expect(on212.stdout).toContain('"grade": {\n      "gte": 5\n    }');
    const on211 = await ckql(['explain', query, '--url', server211.url]);
    expect(on211.stdout).toContain('# target: ckan-2.11 (asked of the portal');
    expect(on211.stdout).toContain('└─ filter grade >= 5 and status != withdrawn\n');
    const local = await ckql(['explain', query, '--data', data, '--target', 'ckan-2.12']);
    expect(local.stdout).toContain('# target: ckan-2.12');
    expect(local.stdout).toContain('ckql serve');
    expect(local.stdout).toContain('--ckan 2.12 --port 8080');
  });

  it('prints the SELECT for the sql target', async () => {
    const explained = await ckql(['explain', 'from enrolments where grade between 4 and 5', '--url', server211.url, '--target', 'sql']);
    expect(explained.stdout).toContain(`SELECT *, count(*) OVER () AS "_ckql_total" FROM "enrolments" WHERE "grade" BETWEEN '4' AND '5'`);
    expect(explained.stdout).toContain('/api/action/datastore_search_sql?sql=');
  });
});

describe('ckql compile --target', () => {
  it('compiles for CKAN 2.12 and for sql, and says why CKAN 2.11 cannot', async () => {
    const tree = await ckql(['compile', 'from enrolments where grade >= 5', '--target', 'ckan-2.12']);
    expect(JSON.parse(tree.stdout)).toEqual({ resource_id: 'enrolments', filters: { grade: { gte: 5 } } });
    const sql = await ckql(['compile', 'from enrolments where grade between 4 and 5', '--target', 'sql']);
    expect(sql.stdout).toBe(`SELECT *, count(*) OVER () AS "_ckql_total" FROM "enrolments" WHERE "grade" BETWEEN '4' AND '5' ORDER BY "_id" LIMIT 100\n`);
    const refused = await ckql(['compile', 'from enrolments where grade >= 5']);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('TARGET_CANNOT_EXPRESS');
  });

  it('refuses a grouped query on a CKAN target (it printed the request for ungrouped records, exit 0), pointing at explain and query', async () => {
    const query = 'from courses group by subject select subject, count(*) as n';
    for (const target of [[], ['--target', 'ckan-2.12']]) {
      const refused = await ckql(['compile', query, ...target]);
      expect(refused.code, target.join(' ')).toBe(3);
      expect(refused.stdout).toBe('');
      expect(refused.stderr).toContain('error[TARGET_CANNOT_EXPRESS]: "group by" cannot be sent to a');
      expect(refused.stderr).toContain('ckql explain');
      expect(refused.stderr).toContain('ckql query');
    }
    const sql = await ckql(['compile', query, '--target', 'sql']);
    expect(sql.code).toBe(0);
    expect(sql.stdout).toContain('GROUP BY "courses"."subject"');
  });
});

describe('ckql query and the join bound', () => {
  const enrolments = join(data, 'enrolments.csv');
  const byCourse = 'from enrolments a join enrolments b on a.course = b.course select count(*) as n';

  it("refuses the demo's many-to-many join with its count, exiting as other query errors do", async () => {
    const refused = await ckql(['query', 'from enrolments a join enrolments b on a.status = b.status select count(*)', '--data', enrolments]);
    const syntax = await ckql(['query', 'from enrolments where', '--data', enrolments]);
    expect(syntax.code).not.toBe(0);
    expect(refused.code).toBe(syntax.code);
    expect(refused.stderr).toContain('error[JOIN_TOO_LARGE]: this join gives 209581802 rows, more than the 10000000 a join may give');
    expect(refused.stderr).toContain('"completed" (14041 × 14041 = 197149681)');
    expect(refused.stdout).toBe('');
  });

  it('takes --max-join-rows over a profile’s max_join_rows, each bound met exactly', async () => {
    // The course self-join gives 1386408 rows (each course's enrolments squared).
    const at = await ckql(['query', byCourse, '--data', enrolments, '--max-join-rows', '1386408', '--format', 'ndjson']);
    expect(ndjson(at.stdout)).toEqual([{ n: 1386408 }]);
    const under = await ckql(['query', byCourse, '--data', enrolments, '--max-join-rows', '1386407']);
    expect(under.stderr).toContain('gives 1386408 rows, more than the 1386407');
    const onPortal = await ckql(['query', byCourse, '--url', server211.url, '--max-join-rows', '1386407']);
    expect(onPortal.stderr).toContain('gives 1386408 rows, more than the 1386407');
    const dir = mkdtempSync(join(tmpdir(), 'ckql-joins-'));
    try {
      const config = join(dir, 'ckql.config.yaml');
      writeFileSync(config, `profiles:\n  small:\n    data: ${JSON.stringify(enrolments)}\n    max_join_rows: 1386407\n`);
      const profiled = await ckql(['query', byCourse, '--config', config, '--profile', 'small']);
      expect(profiled.stderr).toContain('more than the 1386407');
      const flagWins = await ckql(['query', byCourse, '--config', config, '--profile', 'small', '--max-join-rows', '1386408', '--format', 'ndjson']);
      expect(ndjson(flagWins.stdout)).toEqual([{ n: 1386408 }]);
    } finally {
      rmSync(dir, { recursive: true });
    }
    const bad = await ckql(['query', byCourse, '--data', enrolments, '--max-join-rows', 'lots']);
    expect(bad.stderr).toContain('--max-join-rows must be a whole number of rows above 0');
  });
});

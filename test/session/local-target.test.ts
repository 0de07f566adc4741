/**
 * A target applies to local data (docs/beyond-the-request.md, Servers): the
 * in-process API answers as the CKAN version the target speaks, the
 * client plans for it, and `sql` runs where the engine runs SQL.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Table } from '../../src/datastore/types.js';
import { evaluateQuery } from '../../src/engine/memory/evaluate-query.js';
import { loadResources } from '../../src/engine/node/load-resources.js';
import { DatastoreError, ToolError } from '../../src/errors.js';
import { selectSource } from '../../src/session/select-source.js';
import { openSource, type Source } from '../../src/session/source.js';
import { repoRoot } from '../cli/run-ckql.js';

const data = join(repoRoot, 'examples', 'data');
const query = 'from enrolments where grade >= 5 and status != withdrawn order by grade desc, student limit 7';
let enrolments: Table;

beforeAll(async () => {
  enrolments = (await loadResources([data], { only: ['enrolments'] }))[0]!;
});

/** The CKAN version the local API answers as: 2.11 writes `_links` in every answer, 2.12 never does. */
async function servedVersion(source: Source): Promise<string> {
  const answer = await source.client.search({ resource_id: 'enrolments', limit: 0 });
  return '_links' in answer ? '2.11' : '2.12';
}

/** A request only CKAN 2.12 accepts (2.11 refuses `include_next_page`). */
function nextPageAsked(source: Source): Promise<unknown> {
  return source.client.search({ resource_id: 'enrolments', limit: 1, include_next_page: true });
}

describe('local data with a target', () => {
  it('is served as CKAN 2.11 by default', async () => {
    const source = await openSource({ kind: 'data', paths: [data] }, { resources: ['enrolments'] });
    try {
      expect(await servedVersion(source)).toMatch(/^2\.11/);
      await expect(nextPageAsked(source)).rejects.toThrow(DatastoreError);
    } finally {
      await source.close();
    }
  });

  it.each([
    ['read at once', {}],
    ['read on demand', { lazy: true }],
  ] as const)('ckan-2.12 (%s): served as CKAN 2.12, planned for it, the same records', async (_, options) => {
    const source = await openSource({ kind: 'data', paths: [data], target: 'ckan-2.12' }, { ...options, resources: ['enrolments'] });
    try {
      expect(await servedVersion(source)).toMatch(/^2\.12/);
      expect(source.client.target).toBe('ckan-2.12');
      await expect(nextPageAsked(source)).resolves.toBeDefined();
      const result = await source.client.search(query);
      expect(result.records).toEqual(evaluateQuery(query, enrolments).records);
    } finally {
      await source.close();
    }
  });

  it('setTarget switches the local API between CKAN versions (the REPL\'s .target)', async () => {
    const source = await openSource({ kind: 'data', paths: [data] }, { lazy: true });
    try {
      await source.setTarget('ckan-2.12');
      expect(await servedVersion(source)).toMatch(/^2\.12/);
      expect(source.client.target).toBe('ckan-2.12');
      await expect(nextPageAsked(source)).resolves.toBeDefined();
      await source.setTarget('ckan-2.11');
      expect(await servedVersion(source)).toMatch(/^2\.11/);
      await expect(nextPageAsked(source)).rejects.toThrow(DatastoreError);
      await source.setTarget(undefined);
      expect((await source.client.search(query)).records).toEqual(evaluateQuery(query, enrolments).records);
    } finally {
      await source.close();
    }
  });

  it('refuses sql on the memory engine, saying which engines run it', async () => {
    const opening = openSource({ kind: 'data', paths: [data], target: 'sql' });
    await expect(opening).rejects.toThrow(ToolError);
    await expect(opening).rejects.toThrow(/sql target needs an engine that runs SQL/);
    const source = await openSource({ kind: 'data', paths: [data] }, { lazy: true });
    try {
      await expect(source.setTarget('sql')).rejects.toMatchObject({ code: 'USAGE', hint: expect.stringMatching(/--engine pglite/) });
      // The refusal leaves the source as it was.
      expect(await servedVersion(source)).toMatch(/^2\.11/);
    } finally {
      await source.close();
    }
  });

  it('runs sql on PGlite: one SELECT, the same records and total', async () => {
    // the first 4,000 enrolments: loading all 20,000 into PGlite cost two seconds of CPU and showed nothing more
    const dir = await mkdtemp(join(tmpdir(), 'ckql-local-target-'));
    const lines = (await readFile(join(data, 'enrolments.csv'), 'utf8')).split('\n');
    await writeFile(join(dir, 'enrolments.csv'), `${lines.slice(0, 4_001).join('\n')}\n`);
    const source = await openSource({ kind: 'data', paths: [dir], engine: 'pglite', target: 'sql' });
    try {
      expect(source.client.target).toBe('sql');
      const result = await source.client.search(query);
      const reference = evaluateQuery(query, (await loadResources([dir]))[0]!);
      expect(reference.total).toBeGreaterThan(500);
      expect(result.records).toEqual(reference.records);
      expect(result.total).toBe(reference.total);
    } finally {
      await source.close();
      await rm(dir, { recursive: true, force: true });
    }
  }, 30_000);
});

describe('selectSource passes the target to local data', () => {
  const config = async () => ({ profiles: new Map(), queries: new Map() }) as never;

  it('from --target with --data and with the demo data', async () => {
    const { spec } = await selectSource({ data: [data], target: '2.12', maxScan: 50 }, { config });
    expect(spec).toMatchObject({ kind: 'data', target: 'ckan-2.12', maxScan: 50 });
    const demo = await selectSource({ target: 'sql', engine: 'pglite' }, { config });
    expect(demo.spec).toMatchObject({ kind: 'data', demo: true, target: 'sql', engine: 'pglite' });
    await expect(selectSource({ data: [data], target: '2.13' }, { config })).rejects.toThrow(/--target must be ckan-2.11, ckan-2.12 or sql/);
  });
});

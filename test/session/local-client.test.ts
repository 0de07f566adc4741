/**
 * Local data is answered in the process (no socket): the same answers as the
 * project's server gives over HTTP, errors included, and the client's
 * timeout and cancellation still hold.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { connect } from '../../src/client/connect.js';
import type { DatastoreClient } from '../../src/client/types.js';
import type { DatastoreError } from '../../src/errors.js';
import { datastoreFailure } from '../helpers/outcome.js';
import { loadResources } from '../../src/engine/node/load-resources.js';
import { startServer } from '../../src/server/server.js';
import type { RunningServer } from '../../src/server/server.js';
import { demoDataDir, openSource, withDeadline } from '../../src/session/source.js';
import type { Source } from '../../src/session/source.js';

let server: RunningServer;
let overHttp: DatastoreClient;
let local: Source;

beforeAll(async () => {
  server = await startServer({ tables: await loadResources([demoDataDir]) });
  overHttp = connect({ url: server.url });
  local = await openSource({ kind: 'data', paths: [demoDataDir], demo: true });
});

afterAll(async () => {
  await local.close();
  await overHttp.close();
  await server.close();
});

/** The answer without `_links`, whose URLs name each server's address. */
function withoutLinks(result: object): object {
  const { _links: _ignored, ...rest } = result as { _links?: unknown };
  return rest;
}

describe('local data in the process', () => {
  test('answers as the server does over HTTP: a request exactly, a query (answered by the engine itself) with the same records and total', async () => {
    for (const query of [
      'from courses where subject = math order by code desc limit 3',
      'from enrolments search "chem" select student, course limit 5 offset 2',
      'from schools where name != "x" limit 2',
    ]) {
      const here = await local.client.search(query);
      const there = await overHttp.search(query, { total: true });
      expect({ fields: here.fields, records: here.records, total: here.total }).toEqual({ fields: there.fields, records: there.records, total: there.total });
      // Nothing was sent: the engine read the records in the process.
      expect(here.read?.requests).toBe(0);
    }
    const request = { resource_id: 'courses', filters: { subject: 'math' }, sort: 'code desc', limit: 3 };
    expect(withoutLinks(await local.client.search(request))).toEqual(withoutLinks(await overHttp.search(request)));
  });

  test('refuses as the server does over HTTP', async () => {
    const failure = (client: DatastoreClient): Promise<DatastoreError> => datastoreFailure(client.search({ resource_id: 'courses', filters: { nope: 1 } }));
    const [here, there] = [await failure(local.client), await failure(overHttp)];
    expect(here.code).toBe('VALIDATION_ERROR');
    expect([here.code, here.status, here.body]).toEqual([there.code, there.status, there.body]);
  });

  test('from _table_metadata lists every table and alias, as the server does over HTTP, however the source was opened', async () => {
    // the engine answering a query whole did not know the table (Not Found), and a one-shot source that read only
    // the files a query names listed none of them (0 records)
    const query = 'from _table_metadata order by name';
    const there = await overHttp.search(query);
    expect(there.records.length).toBe(6);
    const oneShot = await openSource({ kind: 'data', paths: [demoDataDir], demo: true }, { resources: ['_table_metadata'] });
    const lazy = await openSource({ kind: 'data', paths: [demoDataDir], demo: true }, { lazy: true });
    try {
      for (const source of [local, oneShot, lazy]) expect((await source.client.search(query)).records).toEqual(there.records);
    } finally {
      await oneShot.close();
      await lazy.close();
    }
  });

  test('a request cancelled before it is answered is ABORTED', async () => {
    const controller = new AbortController();
    controller.abort();
    await expect(local.client.search('from courses limit 1', { signal: controller.signal })).rejects.toMatchObject({ code: 'ABORTED' });
  });
});

describe('withDeadline', () => {
  test('an answer that does not come within the time fails as a late HTTP body does, and its signal is aborted', async () => {
    let seen: AbortSignal | undefined;
    const never = (signal: AbortSignal | undefined): Promise<never> => {
      seen = signal;
      return new Promise(() => undefined);
    };
    await expect(withDeadline(20, undefined, never)).rejects.toMatchObject({ code: 'CKQL_BODY_DEADLINE' });
    expect(seen?.aborted).toBe(true);
  });

  test('an answer in time is returned; the caller aborting reaches the run', async () => {
    expect(await withDeadline(1_000, undefined, () => Promise.resolve(7))).toBe(7);
    const controller = new AbortController();
    const run = withDeadline(1_000, controller.signal, (signal) => new Promise((_, reject) => signal?.addEventListener('abort', () => reject(new Error('stopped')))));
    controller.abort();
    await expect(run).rejects.toThrow('stopped');
  });
});

describe('local data read on demand (the REPL over the demo data)', () => {
  test('a join reads every file it names: the README\'s headline query as the server answers it', async () => {
    const lazy = await openSource({ kind: 'data', paths: [demoDataDir], demo: true }, { lazy: true });
    try {
      const query = 'from enrolments e join courses c on e.course = c.code where c.subject = math group by c.title select c.title, count(*) as n, avg(e.grade) order by n desc limit 10';
      const here = await lazy.client.search(query);
      const there = await overHttp.search(query);
      expect(here.records.length).toBeGreaterThan(0);
      expect(here.records).toEqual(there.records);
    } finally {
      await lazy.close();
    }
  });
});

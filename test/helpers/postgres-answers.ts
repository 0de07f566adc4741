/**
 * PostgreSQL as the oracle of a property: one statement run on PGlite (a
 * pooled instance) and, when CKQL_TEST_PG_URL names one, on the CI cluster,
 * each giving a column `v` of text.
 */
import pg from 'pg';
import { borrowPglite } from './pglite-pool.js';

/**
 * `select`'s `v` values (its one parameter `texts`) after `setup`, from each
 * PostgreSQL there is; `teardown` leaves the pooled PGlite as it was lent.
 * @example await postgresAnswers('CREATE FUNCTION …', 'SELECT f(x) AS v FROM unnest($1::text[]) AS x', ['1 + 1'])
 */
export async function postgresAnswers(setup: string, select: string, texts: readonly string[], teardown?: string): Promise<string[][]> {
  const out: string[][] = [];
  const { pg: lite, release } = await borrowPglite();
  try {
    await lite.exec(setup);
    out.push((await lite.query<{ v: string }>(select, [texts])).rows.map((r) => r.v));
    if (teardown !== undefined) await lite.exec(teardown);
  } finally {
    await release();
  }
  const url = process.env['CKQL_TEST_PG_URL'];
  if (url !== undefined) {
    const server = new pg.Client({ connectionString: url });
    await server.connect();
    try {
      await server.query(setup);
      out.push((await server.query<{ v: string }>(select, [texts])).rows.map((r) => r.v));
    } finally {
      await server.end();
    }
  }
  return out;
}

/**
 * Embedding ckql in another program: query text from a config file, the
 * tagged template for values from elsewhere, and `connect` to a portal (here
 * the project's own server on the demo data, so this runs offline).
 *
 *   npx tsx examples/embed.ts
 *
 * In your own code, import from 'ckql' instead of '../src/index.js'.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse as parseYaml } from 'yaml';
import { ckql, compile, connect, loadResources, startServer } from '../src/index.js';

const here = (path: string): string => fileURLToPath(new URL(path, import.meta.url));

// 1. A query string kept in a config file is just text: compile it with its parameters.
const config = parseYaml(readFileSync(here('ckql.config.yaml'), 'utf8')) as {
  queries: Record<string, { query: string; params?: Record<string, string> }>;
};
const bySubject = config.queries['by-subject'];
if (bySubject === undefined) throw new Error('examples/ckql.config.yaml has no query by-subject');
const request = compile(bySubject.query, { ...bySubject.params, subject: 'physics' });
console.log(JSON.stringify(request));

// 2. A portal (here: the demo data served on 127.0.0.1), through the client.
const server = await startServer({ tables: await loadResources(here('data')) });
const client = connect({ url: server.url });
try {
  const result = await client.search(request);
  console.log(`${result.records.length} of ${result.total} physics courses`);

  // 3. Values from outside (user input, another system) go in through the tagged
  //    template: they are always data, never query syntax.
  const typed = 'Linear Algebra I" or 1=1';
  const none = await client.search(ckql`from courses where title = ${typed}`);
  const some = await client.search(ckql`from courses where title = ${'Linear Algebra I'} limit ${1}`);
  console.log(`${none.total} courses titled ${JSON.stringify(typed)}, ${some.total} titled "Linear Algebra I"`);

  // 4. Every record, paged in constant memory.
  let failed = 0;
  for await (const _row of client.searchAll('from enrolments where status = failed', { pageSize: 500 })) failed += 1;
  console.log(`${failed} failed enrolments`);
} finally {
  await client.close();
  await server.close();
}

/**
 * `ckql serve` (the memory engine, answering as CKAN 2.11) over the
 * aggregates section's generated enrolments, in its own process so the
 * client's memory is measured alone. `serve-agg.ts <rows>`; prints `READY <url>`.
 */
import { ckqlModules } from '../lib/ckql.js';
import { enrolmentRows } from '../lib/agg-data.js';

const rows = Number(process.argv[2]);
const [{ startServer }, { tableFromRows }] = await Promise.all([ckqlModules.server(), ckqlModules.load()]);
const table = tableFromRows(enrolmentRows(rows) as never, { alias: 'enrolments' });
const server = await startServer({ tables: [table], port: 0, ckan: '2.11' });
process.once('SIGTERM', () => { void Promise.resolve(server.close()).then(() => process.exit(0)); });
process.stdout.write(`READY ${server.url}\n`);

/**
 * Section 10, a scale path: several `ckql serve --db` processes over one
 * PostgreSQL primary and a streaming replica of it, all on 127.0.0.1. The
 * primary is made with Debian's `initdb`, the table loaded into it with
 * `loadFiles` (what `ckql load` runs), the replica cloned with
 * `pg_basebackup -R` (which writes its `primary_conninfo` and
 * `standby.signal`) and started as a hot standby. Then:
 *
 * - every server (over the primary and over the replica) answers the same
 *   requests with the same bytes, checked before and after the load;
 * - autocannon loads 1, 2 and 4 servers at once (one generator process per
 *   server, the connections split between them), and the table gives the
 *   total requests/s of each layout, side by side.
 *
 * Not in CI: it starts two PostgreSQL servers and loads them for minutes.
 * Needs `initdb`, `pg_ctl` and `pg_basebackup` (Debian's postgresql; found on
 * PATH or in /usr/lib/postgresql/<version>/bin); as root the clusters run as
 * the `postgres` user, as scripts/pg-test-cluster.sh runs them.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import type { RunConfig } from './lib/config.js';
import { runChild, startChild } from './lib/child.js';
import type { RunningChild } from './lib/child.js';
import { ckqlModules } from './lib/ckql.js';
import { enrolmentsFile } from './lib/data.js';
import { formatCount } from './lib/harness.js';
import { code } from './lib/report.js';
import type { SectionResult } from './lib/report.js';

const SEARCH_PATH = '/api/3/action/datastore_search';

/** The requests each server answers under load, and whose answers are compared between servers. */
const QUERIES = [
  'from enrolments where course = PHYS-303 and status = withdrawn limit 10',
  'from enrolments where status = failed order by grade desc limit 20',
  'from enrolments search "withdrawn" limit 10',
] as const;

interface LoadSummary {
  readonly requests: number;
  readonly duration: number;
  readonly rps: number;
  readonly p99: number;
  readonly errors: number;
  readonly timeouts: number;
  readonly non2xx: number;
  readonly mismatches: number;
}

function findBin(name: string): string | undefined {
  const onPath = spawnSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' }).stdout.trim();
  if (onPath !== '') return onPath;
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  for (const version of readdirSync(root).sort().reverse()) {
    const candidate = path.join(root, version, 'bin', name);
    if (existsSync(candidate)) return candidate;
  }
  return undefined;
}

/** PostgreSQL refuses to run as root: as root, its commands run as `postgres` (as scripts/pg-test-cluster.sh does). */
const asRoot = process.getuid?.() === 0;
function asOwner(command: string, args: readonly string[]): string {
  const [file, argv] = asRoot ? ['runuser', ['-u', 'postgres', '--', command, ...args]] : [command, [...args]];
  return execFileSync(file, argv, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

async function waitFor(test: () => Promise<boolean>, what: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await test().catch(() => false)) return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`replica bench: ${what} did not happen within ${timeoutMs / 1000} s`);
}

/**
 * The `result` of a search, as the server wrote it: the envelope's `help`
 * is a link to the server's own address, so it differs between servers.
 */
async function post(base: string, body: string): Promise<string> {
  const response = await fetch(base + SEARCH_PATH, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  const text = await response.text();
  if (response.status !== 200) throw new Error(`replica bench: ${base} answered ${response.status}: ${text.slice(0, 200)}`);
  const at = text.indexOf('"result":');
  if (at < 0) throw new Error(`replica bench: ${base} answered without a result: ${text.slice(0, 200)}`);
  return text.slice(at);
}

export async function benchReplica(config: RunConfig, log: (line: string) => void): Promise<SectionResult> {
  const bins = { initdb: findBin('initdb'), pgCtl: findBin('pg_ctl'), basebackup: findBin('pg_basebackup') };
  if (bins.initdb === undefined || bins.pgCtl === undefined || bins.basebackup === undefined) {
    throw new Error('needs initdb, pg_ctl and pg_basebackup (apt-get install postgresql)');
  }
  const version = asOwner(bins.initdb, ['--version']).trim();
  const dir = mkdtempSync(path.join(tmpdir(), 'ckql-replica-'));
  chmodSync(dir, 0o755);
  if (asRoot) {
    const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }));
    const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }));
    chownSync(dir, uid, gid);
  }
  const primaryData = path.join(dir, 'primary');
  const replicaData = path.join(dir, 'replica');
  const [primaryPort, replicaPort] = [await freePort(), await freePort()];
  const options = (port: number): string =>
    `-c listen_addresses=127.0.0.1 -c port=${port} -c unix_socket_directories=${dir} -c wal_level=replica -c max_wal_senders=4 -c hot_standby=on -c max_connections=200`;
  const started: string[] = [];
  const servers: RunningChild[] = [];
  try {
    log(`replica: initdb and start the primary on 127.0.0.1:${primaryPort} (${version})`);
    asOwner(bins.initdb, ['-D', primaryData, '-U', 'ckql', '--auth=trust', '--locale=C.UTF-8', '--encoding=UTF8']);
    asOwner(bins.pgCtl, ['-D', primaryData, '-l', path.join(dir, 'primary.log'), '-w', '-o', options(primaryPort), 'start']);
    started.push(primaryData);
    const primaryUrl = `postgres://ckql@127.0.0.1:${primaryPort}/postgres`;

    const rows = config.quick ? 50_000 : config.serverRows;
    log(`replica: load ${formatCount(rows)} enrolments into the primary (what ckql load runs)`);
    const { openPostgres } = await ckqlModules.postgresDb();
    const { loadFiles } = await ckqlModules.loadFiles();
    const db = await openPostgres({ url: primaryUrl });
    const t0 = performance.now();
    try {
      await loadFiles(db, [enrolmentsFile(rows)], { replace: true });
    } finally {
      await db.close();
    }
    const loadSeconds = (performance.now() - t0) / 1000;

    log(`replica: pg_basebackup -R into a replica on 127.0.0.1:${replicaPort}`);
    asOwner(bins.basebackup, ['-h', '127.0.0.1', '-p', String(primaryPort), '-U', 'ckql', '-D', replicaData, '-R', '-X', 'stream', '-c', 'fast']);
    asOwner(bins.pgCtl, ['-D', replicaData, '-l', path.join(dir, 'replica.log'), '-w', '-o', options(replicaPort), 'start']);
    started.push(replicaData);
    const replicaUrl = `postgres://ckql@127.0.0.1:${replicaPort}/postgres`;
    const primary = new pg.Client({ connectionString: primaryUrl });
    const replica = new pg.Client({ connectionString: replicaUrl });
    await primary.connect();
    await replica.connect();
    try {
      const standby = (await replica.query<{ standby: boolean }>('SELECT pg_is_in_recovery() AS standby')).rows[0]?.standby;
      if (standby !== true) throw new Error('the replica is not in recovery: it is not a standby');
      const lsn = (await primary.query<{ lsn: string }>('SELECT pg_current_wal_lsn()::text AS lsn')).rows[0]?.lsn;
      await waitFor(
        async () => (await replica.query<{ caught: boolean }>('SELECT pg_last_wal_replay_lsn() >= $1::pg_lsn AS caught', [lsn])).rows[0]?.caught === true,
        'the replica catching up with the primary',
      );
      const streaming = (await primary.query<{ state: string }>('SELECT state FROM pg_stat_replication')).rows.map((r) => r.state);
      if (!streaming.includes('streaming')) throw new Error(`the primary streams to no replica (pg_stat_replication: ${streaming.join(', ') || 'empty'})`);
    } finally {
      await primary.end();
      await replica.end();
    }

    // Four servers: two over the primary, two over the replica.
    log('replica: start four ckql serve --db processes (two per database)');
    servers.push(...(await Promise.all([primaryUrl, replicaUrl, primaryUrl, replicaUrl].map((url) => startChild('serve.ts', ['db', url])))));
    const over = ['primary', 'replica', 'primary', 'replica'];

    const { compile } = await ckqlModules.compile();
    const bodies = QUERIES.map((query) => JSON.stringify(compile(query)));
    const answers = async (): Promise<string[][]> => Promise.all(bodies.map((body) => Promise.all(servers.map((server) => post(server.ready, body)))));
    const same = (sets: string[][]): boolean => sets.every((set) => set.every((text) => text === set[0]));
    const before = await answers();
    if (!same(before)) {
      const differing = before.findIndex((set) => !set.every((text) => text === set[0]));
      const set = before[differing] ?? [];
      throw new Error(`the servers over the primary and the replica answer ${code(QUERIES[differing] ?? '')} differently: ${set.map((text) => text.slice(0, 400)).join('\n---\n')}`);
    }

    const connections = config.connections * 2;
    const seconds = config.quick ? 2 : config.loadSeconds * 2;
    const layouts = [1, 2, 4] as const;
    const figures: { servers: number; rps: number; p99: number; perServer: number[] }[] = [];
    for (const count of layouts) {
      const chosen = servers.slice(0, count);
      log(`  autocannon: ${count} server${count === 1 ? '' : 's'}, ${connections} connections in all, ${seconds} s`);
      // One generator per server, each with its share of the connections and the request mix in turn.
      const results = await Promise.all(
        chosen.map((server, i) =>
          runChild<LoadSummary>('load.ts', [JSON.stringify({
            url: server.ready + SEARCH_PATH,
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            requests: bodies.map((body) => ({ method: 'POST', body })),
            connections: Math.max(1, Math.round(connections / count)),
            duration: seconds,
            warmupSeconds: 0.5,
            title: `server ${i + 1}`,
          })]),
        ),
      );
      const bad = results.reduce((sum, r) => sum + r.errors + r.timeouts + r.non2xx, 0);
      if (bad > 0) throw new Error(`${bad} failed requests with ${count} servers`);
      figures.push({ servers: count, rps: results.reduce((sum, r) => sum + r.rps, 0), p99: Math.max(...results.map((r) => r.p99)), perServer: results.map((r) => r.rps) });
    }
    const after = await answers();
    const identical = same(after) && after.every((set, i) => set[0] === before[i]?.[0]);
    if (!identical) throw new Error('the servers answer differently after the load');

    const one = figures[0]?.rps ?? Number.NaN;
    return {
      id: 'replica',
      title: '10. Scale path: ckql serve over a primary and a streaming replica',
      tables: [
        {
          title: `Requests/s of several \`ckql serve --db\` processes over one primary and one replica (${formatCount(rows)} enrolments, CKAN's indexes; ${connections} connections in all, ${seconds} s per layout)`,
          headers: ['servers', 'over', 'requests/s (all)', '÷ one server', 'p99 latency', 'requests/s per server'],
          rows: figures.map((f) => [
            String(f.servers),
            over.slice(0, f.servers).join(', '),
            formatCount(Math.round(f.rps)),
            `${(f.rps / one).toFixed(2)}×`,
            `${f.p99} ms`,
            f.perServer.map((r) => formatCount(Math.round(r))).join(' / '),
          ]),
        },
      ],
      targets: [
        {
          section: 'replica', what: 'servers over the primary and the replica answer alike', goal: 'identical bytes',
          measured: `${QUERIES.length} requests × ${servers.length} servers identical, before and after the load`, met: identical,
        },
        {
          section: 'replica', what: 'throughput of 4 servers vs 1', goal: 'reported',
          measured: `${((figures.at(-1)?.rps ?? Number.NaN) / one).toFixed(2)}× (${formatCount(Math.round(one))} → ${formatCount(Math.round(figures.at(-1)?.rps ?? Number.NaN))} requests/s)`, met: null,
        },
      ],
      notes: [
        `Set-up (${version}): the primary starts with \`wal_level=replica\`; ${formatCount(rows)} rows are loaded into it as \`ckql load\` loads them (${loadSeconds.toFixed(1)} s, in CKAN's layout with its full-text indexes); \`pg_basebackup -h 127.0.0.1 -p <primary> -D <replica> -R -X stream\` clones it and writes the standby's settings; the replica starts as a hot standby, and the run waits until \`pg_last_wal_replay_lsn()\` has reached the primary's \`pg_current_wal_lsn()\` and \`pg_stat_replication\` shows it streaming. Each \`ckql serve --db\` process (\`bench/children/serve.ts db <url>\`: \`openEngine\` + \`startServer\`) serves that database read-only, as \`ckql serve --db postgres://…\` does; a search on the replica is a read-only transaction, which a hot standby runs.`,
        `Requests: ${QUERIES.map((q) => code(q)).join('; ')} — in turn on every connection. Before and after the load, each request is sent to all four servers and the \`result\` of the answers compared byte for byte (the envelope's \`help\` link names each server's own address); the servers over the replica give the primary's answers. One autocannon process per server, started together; the layouts 1, 2, 4 use the first servers of primary, replica, primary, replica. On this 2-core machine the servers, the two PostgreSQL servers and the load generators share two cores, so the figures show the servers' share of the work, not what more cores would give: with one core per \`ckql serve\` process (a node process uses one for its JavaScript) and the replica on its own host, throughput grows with the servers until PostgreSQL is the limit.`,
      ],
    };
  } finally {
    await Promise.all(servers.map((server) => server.stop()));
    for (const data of started.reverse()) {
      try {
        asOwner(bins.pgCtl, ['-D', data, '-m', 'fast', '-w', 'stop']);
      } catch {
        // already stopped
      }
    }
    rmSync(dir, { recursive: true, force: true });
  }
}

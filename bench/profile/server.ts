/**
 * Profiling load for section 3: starts the ckql server over 200k enrolments
 * in a child process with --cpu-prof, loads it with autocannon for a few
 * seconds, stops it, and prints where the profile was written.
 *
 *   tsx bench/profile/server.ts [seconds] [query] [rows]
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { ckqlModules } from '../lib/ckql.js';
import { benchDir, enrolmentsFile, rootDir } from '../lib/data.js';
import { SEARCH_PATH, SELECTIVE_QUERY } from '../server.js';

const seconds = Number(process.argv[2] ?? 5);
const query = process.argv[3] ?? SELECTIVE_QUERY;
const rows = Number(process.argv[4] ?? 200_000);
const dir = mkdtempSync(path.join(tmpdir(), 'ckql-prof-'));
const child = spawn(process.execPath, ['--cpu-prof', `--cpu-prof-dir=${dir}`, '--import', 'tsx', path.join(benchDir, 'children', 'serve.ts'), 'ckql', enrolmentsFile(rows)], {
  cwd: rootDir, stdio: ['ignore', 'pipe', 'inherit'],
});
const url = await new Promise<string>((resolve) => {
  let buffered = '';
  child.stdout.on('data', (chunk: Buffer) => {
    buffered += chunk.toString();
    const m = /^READY (.+)$/m.exec(buffered);
    if (m) resolve((m[1] as string).trim());
  });
});
const { compile } = await ckqlModules.compile();
const result = await autocannon({ url: url + SEARCH_PATH, method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(compile(query)), connections: 10, duration: seconds });
console.log(`${Math.round(result.requests.total / result.duration)} req/s, p99 ${result.latency.p99} ms`);
child.kill('SIGTERM');
await new Promise((resolve) => child.once('exit', resolve));
console.log(readdirSync(dir).map((f) => path.join(dir, f)).join('\n'));

/**
 * Section 16: `ckql mcp` (docs/mcp.md, issue 32's figure): a `query` tool
 * call's round trip over stdio to the built bin on the demo data, against
 * the same query run in process as `ckql query` runs it (the demo data's
 * source, its client's search, the count asked for as the tool asks), the
 * memory engine alone (the floor), and one JSON-RPC `ping` (the fixed cost
 * of a message through the pipe and the SDK), measured in the same run.
 */
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { RunConfig } from './lib/config.js';
import { ckqlModules } from './lib/ckql.js';
import { rootDir } from './lib/data.js';
import { formatRatio, formatTime, medianTime } from './lib/harness.js';
import type { SectionResult } from './lib/report.js';
import { buildBin } from './startup.js';

const QUERY = 'from enrolments group by status select status, count(*) as n, round(avg(grade), 2) as mean order by n desc';

export async function benchMcp(config: RunConfig, log: (line: string) => void): Promise<SectionResult> {
  buildBin(log);
  const runs = config.quick ? 5 : 25;
  const [{ memoryEngine }, { loadResources }, { parse }, { openSource }] = await Promise.all([
    ckqlModules.memoryEngine(), ckqlModules.loadResources(), ckqlModules.parse(), ckqlModules.source(),
  ]);
  const engine = memoryEngine(await loadResources(path.join(rootDir, 'examples', 'data')));
  const query = parse(QUERY);
  const floor = await medianTime(runs, async () => {
    const stream = await engine.query(query, { total: true });
    const rows: unknown[] = [];
    for await (const batch of stream.batches) rows.push(...batch);
    return rows;
  });
  const source = await openSource({ kind: 'data', paths: [path.join(rootDir, 'examples', 'data')] }, { lazy: true });
  const inProcess = await medianTime(runs, () => source.client.search(QUERY, { total: true }));
  await source.close();
  const transport = new StdioClientTransport({ command: process.execPath, args: [path.join(rootDir, 'dist', 'bin', 'ckql.js'), 'mcp'], cwd: rootDir, stderr: 'pipe' });
  const client = new Client({ name: 'bench', version: '0' });
  await client.connect(transport);
  let ping: number;
  let call: number;
  try {
    ping = await medianTime(runs, () => client.ping());
    call = await medianTime(runs, async () => {
      const result = (await client.callTool({ name: 'query', arguments: { query: QUERY } })) as { isError?: boolean };
      if (result.isError === true) throw new Error('mcp: the query tool failed');
      return result;
    });
  } finally {
    await client.close();
  }
  const ratio = (call - ping) / inProcess;
  log(`mcp: ${formatTime(call)} a call, ${formatTime(ping)} a ping, ${formatTime(inProcess)} in process`);
  return {
    id: 'mcp',
    title: '16. ckql mcp over stdio',
    tables: [
      {
        title: `\`${QUERY}\` on the demo data (20,000 enrolments): median of ${runs}`,
        headers: ['contender', 'time', '÷ in process'],
        rows: [
          ['ckql query\'s path in process: the source\'s client, the count asked', formatTime(inProcess), '1'],
          ['the memory engine alone (the floor)', formatTime(floor), formatRatio(floor / inProcess)],
          ['a JSON-RPC ping over stdio (the fixed cost of a message)', formatTime(ping), formatRatio(ping / inProcess)],
          ['the query tool over stdio (dist/bin/ckql.js mcp)', formatTime(call), formatRatio(call / inProcess)],
        ],
      },
    ],
    targets: [
      { section: 'mcp', what: 'a query tool call over stdio, less one ping, ÷ the same query in process', goal: '≤ 1.5×', measured: formatRatio(ratio), met: ratio <= 1.5 },
    ],
    notes: ['The tool call also counts the records (total) and writes them twice, as text and as structured content; the ping is one request and its answer through the same pipe and SDK.'],
  };
}

/**
 * `ckql mcp` as an assistant's client starts it: the built bin as a child
 * process, spoken to over stdio by the SDK's own client transport, on the
 * demo data (no arguments). The process itself is what is tested here:
 * its stdout carries only the protocol, and it ends when its stdin does.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { describe, expect, it } from 'vitest';
import { loadResources } from '../../src/engine/node/load-resources.js';
import { demoDataDir } from '../../src/session/source.js';
import { binFile, emptyHome, repoRoot } from '../cli/run-ckql.js';

describe('ckql mcp over stdio', () => {
  it('answers a client that starts it with no arguments, on the demo data', async () => {
    const transport = new StdioClientTransport({ command: process.execPath, args: [binFile, 'mcp'], cwd: repoRoot, env: { HOME: emptyHome, PATH: process.env.PATH ?? '' }, stderr: 'pipe' });
    const client = new Client({ name: 'stdio-test', version: '0' });
    await client.connect(transport);
    try {
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toContain('query');
      const result = (await client.callTool({ name: 'query', arguments: { query: 'from schools group by country select country, count(*) as n order by country' } })) as {
        structuredContent?: { records: unknown[]; complete: boolean };
      };
      const schools = (await loadResources(demoDataDir)).find((t) => t.aliases.includes('schools'))!.rows;
      const counts = new Map<string, number>();
      for (const row of schools) counts.set(String(row.country), (counts.get(String(row.country)) ?? 0) + 1);
      expect(result.structuredContent?.records).toEqual([...counts].sort(([a], [b]) => (a < b ? -1 : 1)).map(([country, n]) => ({ country, n })));
      expect(result.structuredContent?.complete).toBe(true);
    } finally {
      await client.close();
    }
  });
});

/**
 * `ckql mcp --http` (src/mcp/http.ts): the SDK's own Streamable HTTP client
 * against the server on 127.0.0.1 port 0, over the demo data; and the
 * playground's rules at the door: a foreign `Host` (DNS rebinding) and a
 * browser's request from another origin are refused before anything runs.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { emptyConfig } from '../../src/config/types.js';
import { loadResources } from '../../src/engine/node/load-resources.js';
import { serveMcpHttp } from '../../src/mcp/http.js';
import type { RunningMcpHttp } from '../../src/mcp/http.js';
import { createMcpServer } from '../../src/mcp/server.js';
import { demoDataDir, openSource } from '../../src/session/source.js';
import type { Source } from '../../src/session/source.js';

let source: Source;
let running: RunningMcpHttp;

beforeAll(async () => {
  source = await openSource({ kind: 'data', paths: [demoDataDir] }, { lazy: true });
  running = await serveMcpHttp(() => createMcpServer({ source, config: emptyConfig, openSource: (spec) => openSource(spec, { lazy: true }), version: '0.0.0-test' }), { port: 0 });
});

afterAll(async () => {
  await running?.close();
  await source?.close();
});

const initialize = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '0' } } });
const post = (headers: Record<string, string>) =>
  request(running.url, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers }, body: initialize });

describe('ckql mcp --http', () => {
  it('answers the SDK’s Streamable HTTP client: a query on the demo data', async () => {
    const client = new Client({ name: 'http-test', version: '0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(running.url)));
    try {
      const result = (await client.callTool({ name: 'query', arguments: { query: 'from courses where subject = math select count(*) as n' } })) as { structuredContent?: { records: unknown[] } };
      const math = (await loadResources(demoDataDir)).find((t) => t.aliases.includes('courses'))!.rows.filter((r) => r.subject === 'math').length;
      expect(result.structuredContent?.records).toEqual([{ n: math }]);
    } finally {
      await client.close();
    }
  });

  it('refuses a foreign Host and another origin before anything runs', async () => {
    const rebinding = await post({ host: 'evil.example:80' });
    expect(rebinding.statusCode).toBe(403);
    expect(await rebinding.body.text()).toContain('does not answer to that host name');
    const port = new URL(running.url).port;
    const crossSite = await post({ host: `127.0.0.1:${port}`, origin: 'https://evil.example' });
    expect(crossSite.statusCode).toBe(403);
    expect(await crossSite.body.text()).toContain('another origin');
    // its own address, with no Origin: a session starts
    const own = await post({ host: `127.0.0.1:${port}` });
    expect(own.statusCode).toBe(200);
    expect(own.headers['mcp-session-id']).toBeDefined();
    await own.body.text();
  });
});

/**
 * `ckql mcp` in process (docs/mcp.md): the SDK's own Client over its
 * in-memory transport pair, against the demo data as the current source
 * and two `ckql serve` profiles (2.11, and a private 2.12 with a token).
 * Answers are checked against the demo data's rows counted here, requests
 * at the servers, and every byte the client receives is scanned for the
 * token.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import type { Row, SearchRequest, Table } from '../../src/datastore/types.js';
import { memoryEngine } from '../../src/engine/memory/engine.js';
import { loadResources } from '../../src/engine/node/load-resources.js';
import type { Engine } from '../../src/engine/types.js';
import { createMcpServer } from '../../src/mcp/server.js';
import { startServer } from '../../src/server/server.js';
import type { RunningServer } from '../../src/server/server.js';
import { demoDataDir, openSource } from '../../src/session/source.js';
import type { Source } from '../../src/session/source.js';

const TOKEN = 'mcp-sekrit-5d1c0e';

let tables: readonly Table[];
let servers: RunningServer[] = [];
let source: Source;
let client: Client;
let root: string;
let exportDir: string;
/** every JSON-RPC message the client received, as text */
const received: string[] = [];
const seen: Record<'a' | 'b', SearchRequest[]> = { a: [], b: [] };

/** While set, the 2.11 portal holds each search until it is released: a request the client cancels is then surely under way. */
let held: Promise<void> | undefined;

function recording(engine: Engine, log: SearchRequest[]): Engine {
  return {
    ...engine,
    search: async (request, options) => {
      log.push(request as SearchRequest);
      if (held !== undefined) await held;
      return engine.search(request, options);
    },
  };
}

beforeAll(async () => {
  tables = await loadResources(demoDataDir);
  const engine = memoryEngine(tables);
  servers = await Promise.all([
    startServer({ engine: recording(engine, seen.a), ckan: '2.11', port: 0 }),
    startServer({ engine: recording(engine, seen.b), ckan: '2.12', port: 0, tokens: [TOKEN], privateResources: ['courses'] }),
  ]);
  root = mkdtempSync(join(tmpdir(), 'ckql-mcp-'));
  exportDir = join(root, 'exports');
  const configFile = join(root, 'ckql.config.yaml');
  writeFileSync(configFile, ['profiles:', `  pa: { url: "${servers[0]!.url}" }`, `  pb: { url: "${servers[1]!.url}", token_env: MCP_TEST_TOKEN }`, ''].join('\n'));
  process.env.MCP_TEST_TOKEN = TOKEN;
  const config = await loadConfig({ configFile });
  source = await openSource({ kind: 'data', paths: [demoDataDir] }, { lazy: true });
  const server = createMcpServer({ source, config, openSource: (spec) => openSource(spec, { lazy: true }), exportDir, version: '0.0.0-test' });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  client = new Client({ name: 'test', version: '0' });
  await client.connect(clientSide);
  // Every message the client gets, recorded before the client reads it.
  const read = clientSide.onmessage!;
  clientSide.onmessage = (message, extra) => {
    received.push(JSON.stringify(message));
    read(message, extra);
  };
});

afterAll(async () => {
  await client?.close();
  for (const server of servers) await server.close();
  await source?.close();
  delete process.env.MCP_TEST_TOKEN;
  rmSync(root, { recursive: true, force: true });
});

function rowsOf(name: string): Row[] {
  return [...tables.find((t) => t.aliases.includes(name))!.rows];
}

type ToolResult = { content: { type: string; text: string }[]; structuredContent?: Record<string, unknown>; isError?: boolean };
const call = async (name: string, args: Record<string, unknown>, signal?: AbortSignal): Promise<ToolResult> =>
  (await client.callTool({ name, arguments: args }, undefined, signal === undefined ? {} : { signal })) as ToolResult;

describe('ckql mcp', () => {
  it('lists its tools, each read-only but export, with input and output schemas', async () => {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(['check', 'describe_resource', 'explain', 'export', 'find_datasets', 'query']);
    for (const tool of tools) {
      expect(tool.title, tool.name).toBeDefined();
      expect(tool.outputSchema, tool.name).toBeDefined();
      expect(tool.annotations?.readOnlyHint, tool.name).toBe(tool.name !== 'export');
    }
  });

  it('query: a group-by on the demo data, counted here', async () => {
    const result = await call('query', { query: 'from courses group by subject select subject, count(*) as n order by n desc, subject' });
    const counts = new Map<string, number>();
    for (const row of rowsOf('courses')) counts.set(String(row.subject), (counts.get(String(row.subject)) ?? 0) + 1);
    const want = [...counts].sort(([a, x], [b, y]) => y - x || (a < b ? -1 : 1)).map(([subject, n]) => ({ subject, n }));
    expect(result.structuredContent?.records).toEqual(want);
    expect(result.structuredContent).toMatchObject({ matched: want.length, complete: true, cut: null });
  });

  it('query: a result over max_rows says it was cut, and by how much', async () => {
    const result = await call('query', { query: 'from enrolments where status = completed limit 500', max_rows: 20 });
    const completed = rowsOf('enrolments').filter((row) => row.status === 'completed').length;
    expect(result.structuredContent).toMatchObject({ returned: 20, matched: completed, complete: false, cut: 'max_rows (20)' });
    expect(result.content[0]!.text).toContain(`${completed} records match; 20 returned; cut at max_rows (20): ${completed - 20} not shown`);
  });

  it('query: a group-by on a 2.11 portal without SQL, joined across portals with a private 2.12 one, its token kept inside', async () => {
    const result = await call('query', {
      query: 'from pa:enrolments e join pb:courses c on e.course = c.code where c.subject = math group by c.level select c.level, count(*) as n order by c.level',
    });
    expect(result.isError).toBeUndefined();
    const math = new Map(rowsOf('courses').filter((c) => c.subject === 'math').map((c) => [c.code, c.level]));
    const counts = new Map<number, number>();
    for (const row of rowsOf('enrolments')) if (math.has(row.course)) counts.set(Number(math.get(row.course)), (counts.get(Number(math.get(row.course))) ?? 0) + 1);
    expect(result.structuredContent?.records).toEqual([...counts].sort(([a], [b]) => a - b).map(([level, n]) => ({ level, n })));
    expect(seen.a.length).toBeGreaterThan(0);
    expect(seen.b.length).toBeGreaterThan(0);
    expect(received.join('\n')).not.toContain(TOKEN);
  });

  it('check: a typo, corrected from its answer, then runs', async () => {
    const checked = await call('check', { query: 'from courses where subjct = math select code' });
    const diagnostics = checked.structuredContent?.diagnostics as { code: string; line: number; column: number; text: string; fixes: string[] }[];
    expect(checked.structuredContent?.ok).toBe(false);
    expect(diagnostics[0]).toMatchObject({ code: 'UNKNOWN_FIELD', line: 1, column: 20, text: 'subjct' });
    const fixed = `from courses where ${diagnostics[0]!.fixes[0]} = math select code`;
    expect(fixed).toBe('from courses where subject = math select code');
    expect((await call('check', { query: fixed })).structuredContent?.ok).toBe(true);
    const ran = await call('query', { query: fixed, max_rows: 1000 });
    expect(ran.structuredContent?.returned).toBe(rowsOf('courses').filter((c) => c.subject === 'math').length);
  });

  it('errors come back as tool errors with the code, the caret line and the hint', async () => {
    const result = await call('query', { query: 'from courses where subjct = math' });
    expect(result.isError).toBe(true);
    const text = result.content[0]!.text;
    expect(text).toContain('error[UNKNOWN_FIELD]');
    expect(text).toContain('from courses where subjct = math');
    expect(text).toMatch(/\n\s*\|\s+\^{6}/);
    expect(text).toContain('did you mean "subject"');
  });

  it('find_datasets and describe_resource: the demo dataset, its resources by name, fields with samples', async () => {
    const found = await call('find_datasets', {});
    const datasets = found.structuredContent?.datasets as { dataset: string; resources: { query_name: string }[] }[];
    expect(datasets.map((d) => d.dataset)).toEqual(['university']);
    expect(datasets[0]!.resources.map((r) => r.query_name)).toEqual(['university/courses', 'university/enrolments', 'university/schools']);
    const described = await call('describe_resource', { resource: 'university/schools' });
    expect(described.structuredContent?.total).toBe(rowsOf('schools').length);
    // a profile's resource, read from its portal
    const before = seen.a.length;
    expect((await call('describe_resource', { resource: 'pa:enrolments' })).structuredContent?.total).toBe(rowsOf('enrolments').length);
    expect(seen.a.length).toBeGreaterThan(before);
    const fields = described.structuredContent?.fields as { id: string; samples: unknown[] }[];
    expect(fields.find((f) => f.id === 'city')?.samples).toEqual([...new Set(rowsOf('schools').map((r) => r.city))].slice(0, 5));
  });

  it('explain: what each portal is asked and what ckql finishes', async () => {
    const result = await call('explain', { query: 'from pa:courses where subject = math and credits > 5 select code' });
    const plan = result.structuredContent?.plan as string;
    expect(plan).toContain('"subject":"math"');
    expect(plan).toContain('filter');
    expect(plan).not.toContain(TOKEN);
  });

  it('export: into the export folder only', async () => {
    const result = await call('export', { query: 'from courses where subject = math select code, title', file: 'math.csv' });
    expect(result.isError).toBeUndefined();
    const lines = readFileSync(join(exportDir, 'math.csv'), 'utf8').trim().split(/\r?\n/);
    expect(lines[0]).toBe('code,title');
    expect(lines).toHaveLength(1 + rowsOf('courses').filter((c) => c.subject === 'math').length);
    const outside = await call('export', { query: 'courses', file: '../escape.csv' });
    expect(outside.isError).toBe(true);
    expect(outside.content[0]!.text).toContain('outside the export folder');
    expect(existsSync(join(root, 'escape.csv'))).toBe(false);
  });

  it('a request the client cancels stops, and the server answers the next one', async () => {
    let release = (): void => undefined;
    held = new Promise<void>((done) => (release = done));
    const before = seen.a.length;
    const controller = new AbortController();
    const running = call('query', { query: 'from pa:enrolments group by status select status, count(*) as n' }, controller.signal);
    try {
      // cancelled once the portal has the request
      while (seen.a.length === before) await new Promise((done) => setTimeout(done, 5));
      controller.abort();
      await expect(running).rejects.toThrow(/abort/i);
    } finally {
      held = undefined;
      release();
    }
    // The server's reading stopped with the cancel: the held request was its last (no page follows the count).
    await new Promise((done) => setTimeout(done, 200));
    expect(seen.a.length).toBe(before + 1);
    const next = await call('query', { query: 'from schools select count(*) as n' });
    expect(next.structuredContent?.records).toEqual([{ n: rowsOf('schools').length }]);
  });

  it('lists each profile\'s resources and the current source\'s as resources, each read as its dictionary', async () => {
    const { resources } = await client.listResources();
    const names = resources.map((r) => r.name);
    expect(names).toEqual(expect.arrayContaining(['courses', 'enrolments', 'schools', 'pa:courses']));
    const read = await client.readResource({ uri: resources.find((r) => r.name === 'pa:schools')!.uri });
    const described = JSON.parse((read.contents[0] as { text: string }).text) as { total: number; fields: { id: string }[] };
    expect(described.total).toBe(rowsOf('schools').length);
    expect(described.fields.map((f) => f.id)).toContain('city');
    expect(received.join('\n')).not.toContain(TOKEN);
  });

  it('serves the language reference and a prompt that starts with find_datasets', async () => {
    const resource = await client.readResource({ uri: 'ckql://language' });
    expect((resource.contents[0] as { text: string }).text).toContain('group by');
    const prompt = await client.getPrompt({ name: 'answer_from_portal', arguments: { question: 'which subject has the most courses?' } });
    expect((prompt.messages[0]!.content as { text: string }).text).toContain('find_datasets');
    expect(received.join('\n')).not.toContain(TOKEN);
  });
});

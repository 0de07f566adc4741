/**
 * `ckql mcp --http`: the MCP server over Streamable HTTP on loopback, at
 * `/mcp`, one server per session (the SDK's `mcp-session-id`). The same
 * rules as the playground (src/server/playground.ts): the `Host` header
 * must name this server (an address, `localhost`, or a name the operator
 * allowed), so a DNS-rebinding page cannot reach it, and a request a
 * browser sent from another origin is refused.
 */
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { foreignOrigin, hostAllowed } from '../server/playground.js';

export interface McpHttpOptions {
  /** default `127.0.0.1` */
  readonly host?: string;
  /** default 0: a free port */
  readonly port?: number;
  /** host names besides addresses and `localhost` that the `Host` header may name */
  readonly allowedHosts?: readonly string[];
  /** one line per request (method, path, status); never headers, never bodies */
  readonly log?: (line: string) => void;
}

export interface RunningMcpHttp {
  /** e.g. `http://127.0.0.1:43121/mcp`: what a client connects to */
  readonly url: string;
  close(): Promise<void>;
}

/**
 * Serves `make()`'s servers, one per session, on loopback.
 * @example
 * const running = await serveMcpHttp(() => createMcpServer(options), { port: 0 });
 * // a client connects to running.url
 */
export async function serveMcpHttp(make: () => McpServer, options: McpHttpOptions = {}): Promise<RunningMcpHttp> {
  const sessions = new Map<string, { readonly transport: StreamableHTTPServerTransport; readonly server: McpServer }>();
  const allowed = options.allowedHosts ?? [];
  const refuse = (req: IncomingMessage, res: ServerResponse, status: number, message: string): void => {
    // A JSON-RPC error without an id: the request is refused before it is read.
    const body = JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message }, id: null });
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    res.end(body);
    options.log?.(`${req.method ?? '?'} ${(req.url ?? '').split('?')[0]} ${status}`);
  };
  const http = createServer((req, res) => {
    void (async () => {
      if (!hostAllowed(req.headers.host, allowed)) return refuse(req, res, 403, 'this server does not answer to that host name: connect to its address (http://127.0.0.1:PORT/mcp) or localhost');
      const foreign = foreignOrigin(req.headers);
      if (foreign !== undefined) return refuse(req, res, 403, `${foreign}: ckql mcp answers its own clients only`);
      if ((req.url ?? '').split('?')[0] !== '/mcp') return refuse(req, res, 404, 'the MCP endpoint is /mcp');
      const id = req.headers['mcp-session-id'];
      let session = typeof id === 'string' ? sessions.get(id) : undefined;
      if (session === undefined) {
        if (id !== undefined) return refuse(req, res, 404, 'no such session: initialize again');
        if (req.method !== 'POST') return refuse(req, res, 400, 'a session starts with a POST of initialize');
        const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          onsessioninitialized: (sid) => void sessions.set(sid, { transport, server }),
        });
        const server = make();
        transport.onclose = () => {
          if (transport.sessionId !== undefined) sessions.delete(transport.sessionId);
        };
        await server.connect(transport);
        session = { transport, server };
      }
      await session.transport.handleRequest(req, res);
      options.log?.(`${req.method ?? '?'} /mcp ${res.statusCode}`);
    })().catch((error: unknown) => {
      if (!res.headersSent) refuse(req, res, 500, error instanceof Error ? error.message : String(error));
    });
  });
  await new Promise<void>((done, fail) => {
    http.once('error', fail);
    http.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => done());
  });
  const address = http.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: `http://${host}:${address.port}/mcp`,
    close: async () => {
      for (const { server } of sessions.values()) await server.close();
      sessions.clear();
      http.closeAllConnections();
      await new Promise<void>((done) => http.close(() => done()));
    },
  };
}

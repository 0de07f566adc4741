/**
 * Bad input from a raw socket: garbage, oversize bodies and headers,
 * slowloris, abandoned bodies. Each gets the right status or a closed
 * connection, and the server goes on answering.
 */
import { connect as connectSocket } from 'node:net';
import type { Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { startServer } from '../../src/server/server.js';
import type { RunningServer } from '../../src/server/server.js';
import { courses } from './tables.js';

const ACTION = '/api/action/datastore_search';
let server: RunningServer;

beforeAll(async () => {
  server = await startServer({
    tables: [courses],
    maxBody: 1_024,
    headersTimeout: 300,
    requestTimeout: 600,
    keepAliveTimeout: 2_000,
    maxHeaderSize: 2_048,
  });
});

afterAll(() => server.close());

function open(): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connectSocket(server.port, '127.0.0.1', () => resolve(socket));
    socket.once('error', reject);
  });
}

/** Everything the server sends until it closes the connection (or `idleMs` of silence). */
function collect(socket: Socket, idleMs = 3_000): Promise<{ text: string; closed: boolean }> {
  return new Promise((resolve) => {
    let text = '';
    let timer = setTimeout(() => finish(false), idleMs);
    const finish = (closed: boolean): void => {
      clearTimeout(timer);
      socket.removeAllListeners();
      socket.on('error', () => undefined);
      resolve({ text, closed });
    };
    socket.on('data', (chunk: Buffer) => {
      text += chunk.toString('utf8');
      clearTimeout(timer);
      timer = setTimeout(() => finish(false), idleMs);
    });
    socket.on('error', () => undefined);
    socket.on('close', () => finish(true));
  });
}

function statusOf(text: string): number {
  return Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1]);
}

function bodyOf(text: string): { error?: { __type: string } } {
  return JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4)) as { error?: { __type: string } };
}

async function servesNext(): Promise<void> {
  const socket = await open();
  const done = collect(socket);
  socket.write(`GET ${ACTION}?resource_id=courses&limit=1 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
  const { text } = await done;
  expect(statusOf(text)).toBe(200);
  expect(text).toContain('"success":true');
}

describe('raw socket input', () => {
  it('garbage gets 400 in the error envelope and a closed connection', async () => {
    const socket = await open();
    const done = collect(socket);
    socket.write('\x00\x01 hello there \xff\r\n\r\n');
    const { text, closed } = await done;
    expect(statusOf(text)).toBe(400);
    expect(bodyOf(text).error?.__type).toBe('Bad Request');
    // every error envelope has the help key, these too
    expect((bodyOf(text) as { help?: string }).help).toBe(`${server.url}/api/3/action/help_show?name=datastore_search`);
    expect(closed).toBe(true);
    await servesNext();
  });

  it('an announced oversize body gets 413 before it is sent; a client gone quiet mid-body is then disconnected', async () => {
    const socket = await open();
    const done = collect(socket);
    socket.write(`POST ${ACTION} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 5000000\r\n\r\n{"resource_id":`);
    const { text, closed } = await done;
    expect(statusOf(text)).toBe(413);
    expect(bodyOf(text).error?.__type).toBe('Request Too Large');
    expect(closed).toBe(true);
    await servesNext();
  });

  it('a chunked body that grows past the maximum gets 413 and the rest is not read', async () => {
    const socket = await open();
    const done = collect(socket);
    socket.write(`POST ${ACTION} HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n`);
    const chunk = 'x'.repeat(600);
    for (let i = 0; i < 4; i++) socket.write(`${chunk.length.toString(16)}\r\n${chunk}\r\n`);
    const { text, closed } = await done;
    expect(statusOf(text)).toBe(413);
    expect(closed).toBe(true);
    await servesNext();
  });

  it('a body that arrives in pieces, split inside a multi-byte character, is read whole', async () => {
    const socket = await open();
    const done = collect(socket, 1_000);
    const body = Buffer.from('{"resource_id":"courses","filters":{"title":["Linear Algebra","Ünknown"]}}', 'utf8');
    const split = body.indexOf(Buffer.from('Ü', 'utf8')) + 1;
    socket.write(`POST ${ACTION} HTTP/1.1\r\nHost: x\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n`);
    for (const piece of [body.subarray(0, 10), body.subarray(10, split), body.subarray(split)]) {
      await new Promise((resolve) => setTimeout(resolve, 30));
      socket.write(piece);
    }
    const { text } = await done;
    expect(statusOf(text)).toBe(200);
    const result = (bodyOf(text) as { result?: { filters: unknown; total: number } }).result;
    expect(result?.filters).toEqual({ title: ['Linear Algebra', 'Ünknown'] });
    expect(result?.total).toBe(1);
  });

  it('Expect: 100-continue with an oversize length is refused without a 100', async () => {
    const socket = await open();
    const done = collect(socket);
    socket.write(`POST ${ACTION} HTTP/1.1\r\nHost: x\r\nContent-Length: 9999999\r\nExpect: 100-continue\r\n\r\n`);
    const { text } = await done;
    expect(text).not.toContain('100 Continue');
    expect(statusOf(text)).toBe(413);
    await servesNext();
  });

  it('Expect: 100-continue with a small body gets 100, then the answer', async () => {
    const socket = await open();
    const done = collect(socket, 1_000);
    const body = '{"resource_id":"courses","limit":1}';
    socket.write(`POST ${ACTION} HTTP/1.1\r\nHost: x\r\nContent-Length: ${body.length}\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n`);
    await new Promise((resolve) => setTimeout(resolve, 50));
    socket.write(body);
    const { text } = await done;
    expect(text).toMatch(/^HTTP\/1\.1 100 Continue/);
    expect(text).toContain('HTTP/1.1 200 OK');
  });

  it('oversize headers get 431 and a closed connection', async () => {
    const socket = await open();
    const done = collect(socket);
    socket.write(`GET ${ACTION}?resource_id=courses HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(4_000)}\r\n\r\n`);
    const { text, closed } = await done;
    expect(statusOf(text)).toBe(431);
    expect(closed).toBe(true);
    await servesNext();
  });

  it('slowloris: headers that never finish are cut off, and others are served meanwhile', async () => {
    const socket = await open();
    const done = collect(socket, 5_000);
    socket.write(`GET ${ACTION}?resource_id=courses HTTP/1.1\r\nHost: x\r\n`);
    const drip = setInterval(() => socket.writable && socket.write('X-A: b\r\n'), 100);
    await servesNext();
    const { closed } = await done;
    clearInterval(drip);
    expect(closed).toBe(true);
    await servesNext();
  });

  it('a body that never finishes is cut off after the request timeout', async () => {
    const socket = await open();
    const done = collect(socket, 5_000);
    socket.write(`POST ${ACTION} HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{"resource_id"`);
    const { text, closed } = await done;
    expect(closed).toBe(true);
    // a 408, when there is one, is an envelope with the help key
    if (text !== '') {
      expect(statusOf(text)).toBe(408);
      expect((bodyOf(text) as { help?: string }).help).toBe(`${server.url}/api/3/action/help_show?name=datastore_search`);
    }
    await servesNext();
  });

  it('a connection that never sends a byte is closed', async () => {
    const socket = await open();
    const { text, closed } = await collect(socket, 5_000);
    expect(closed).toBe(true);
    expect(text === '' || statusOf(text) === 408).toBe(true);
    await servesNext();
  });

  it('a client that leaves mid-body does no harm', async () => {
    for (let i = 0; i < 20; i++) {
      const socket = await open();
      socket.write(`POST ${ACTION} HTTP/1.1\r\nHost: x\r\nContent-Length: 500\r\n\r\n{"resource_id":"cou`);
      socket.destroy();
    }
    await servesNext();
  });

  it('pipelined requests on one keep-alive connection are all answered, in order', async () => {
    const socket = await open();
    const done = collect(socket, 500);
    const body = '{"resource_id":"courses","limit":1,"offset":2}';
    socket.write(
      `GET ${ACTION}?resource_id=courses&limit=1 HTTP/1.1\r\nHost: x\r\n\r\n` +
        `POST ${ACTION} HTTP/1.1\r\nHost: x\r\nContent-Length: ${body.length}\r\n\r\n${body}` +
        `POST ${ACTION} HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\n{oops` +
        `GET /nowhere HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`,
    );
    const { text } = await done;
    const statuses = [...text.matchAll(/HTTP\/1\.1 (\d{3})/g)].map((m) => Number(m[1]));
    expect(statuses).toEqual([200, 200, 400, 404]);
    expect(text).toContain('"_id":3');
  });
});

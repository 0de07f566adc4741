/**
 * The playground's security rules, each over real HTTP on 127.0.0.1 port 0:
 * loopback by default, foreign Host headers refused (DNS rebinding), a strict
 * Content-Security-Policy, endpoints that refuse other origins, no open
 * proxy, echoed text escaped; and a portal's token kept in the server.
 */
import { request as httpRequest, createServer } from 'node:http';
import type { IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { playgroundActions } from '../../src/cli/playground.js';
import { selectedSource, servedSource } from '../../src/cli/playground-sources.js';
import { memoryEngine } from '../../src/engine/memory/engine.js';
import { loadResources } from '../../src/engine/node/load-resources.js';
import { contentSecurityPolicy, hostAllowed } from '../../src/server/playground.js';
import { startServer } from '../../src/server/server.js';
import type { RunningServer } from '../../src/server/server.js';

const root = fileURLToPath(new URL('../..', import.meta.url));

interface Answer {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly text: string;
}

/** One request with exactly these headers (node's fetch would not let a test set Host or Sec-Fetch-Site). */
function send(url: string, options: { method?: string; path?: string; headers?: Record<string, string>; body?: string } = {}): Promise<Answer> {
  const target = new URL(options.path ?? '/', url);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: target.hostname, port: target.port, path: target.pathname + target.search, method: options.method ?? 'GET', headers: options.headers ?? {} },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }));
      },
    );
    req.on('error', reject);
    req.end(options.body);
  });
}

const json = { 'content-type': 'application/json' };

describe('the playground over ckql serve', () => {
  let server: RunningServer;
  let actions: ReturnType<typeof playgroundActions>;
  let host: string;

  beforeAll(async () => {
    const engine = memoryEngine(await loadResources([join(root, 'examples', 'data')]));
    let url = '';
    actions = playgroundActions({ sources: [servedSource(engine, { url: () => url, ckan: '2.11', label: 'demo' })], defaultSource: 'local', version: 'test' });
    server = await startServer({ engine, port: 0, playground: { actions, allowedHosts: ['ckql-box.lan'] } });
    url = server.url;
    host = `127.0.0.1:${server.port}`;
  });

  afterAll(async () => {
    await server.close();
    await actions.close();
  });

  const query = (headers: Record<string, string>, body: unknown = { source: 'local', query: 'from courses limit 1' }): Promise<Answer> =>
    send(server.url, { method: 'POST', path: '/-/query', headers: { ...json, ...headers }, body: JSON.stringify(body) });

  it('answers 400 naming the key to bodies of the wrong shape (nested 20,000 deep, a 1 MB name), never 500, and echoes no more than a short excerpt', async () => {
    const deep = `${'['.repeat(20_000)}${']'.repeat(20_000)}`;
    const long = 'x'.repeat(1_000_000);
    const bodies: [string, string, string][] = [
      ['query', `{"source": ${deep}, "query": "from courses"}`, 'source'],
      ['query', `{"source": "local", "target": ${deep}, "query": "from courses"}`, 'target'],
      ['query', `{"source": "local", "query": "from courses", "pageSize": ${deep}}`, 'pageSize'],
      ['download', `{"source": "local", "query": "from courses", "format": ${deep}}`, 'format'],
      ['query', JSON.stringify({ source: long, query: 'from courses' }), 'source'],
      ['query', JSON.stringify({ source: 'local', target: long, query: 'from courses' }), 'target'],
    ];
    for (const [action, body, key] of bodies) {
      const answer = await send(server.url, { method: 'POST', path: `/-/${action}`, headers: json, body });
      expect(answer.status, `${action} ${key}: ${answer.text.slice(0, 200)}`).toBe(400);
      expect(answer.text).toContain(key);
      expect(answer.text.length, `${action} ${key}`).toBeLessThan(2_000);
    }
    // and the server goes on answering
    expect((await query({})).status).toBe(200);
  });

  it('listens on loopback by default', () => {
    expect(server.host).toBe('127.0.0.1');
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  });

  it('serves the page at / and /-/play with a strict CSP, no inline script and nothing from elsewhere', async () => {
    const [first, second] = await Promise.all([send(server.url, { path: '/' }), send(server.url, { path: '/-/play' })]);
    for (const page of [first, second]) {
      expect(page.status).toBe(200);
      expect(page.headers['content-type']).toBe('text/html;charset=utf-8');
      const csp = String(page.headers['content-security-policy']);
      expect(csp).toContain("default-src 'none'");
      expect(csp).toContain("script-src 'self';");
      expect(csp).toContain("connect-src 'self'");
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).not.toContain('unsafe');
      expect(page.headers['x-content-type-options']).toBe('nosniff');
      expect(page.headers['access-control-allow-origin']).toBeUndefined();
      // every script is a file of this server; no URL points elsewhere
      const scripts = [...page.text.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)];
      expect(scripts.length).toBeGreaterThan(0);
      for (const [, attributes, body] of scripts) {
        expect(attributes).toMatch(/src="\/-\/assets\/[a-z]+\.js"/);
        expect(body).toBe('');
      }
      expect(page.text).not.toMatch(/(src|href)="(https?:)?\/\//);
      // the editor's style nonce is the page's own, new for each answer
      const nonce = /content="([^"]+)"/.exec(page.text.slice(page.text.indexOf('ckql-style-nonce')))?.[1];
      expect(csp).toContain(`'nonce-${nonce}'`);
    }
    expect(first.headers['content-security-policy']).not.toBe(second.headers['content-security-policy']);
    const script = await send(server.url, { path: '/-/assets/play.js', headers: { 'accept-encoding': 'gzip' } });
    expect(script.status).toBe(200);
    expect(script.headers['content-encoding']).toBe('gzip');
    expect(script.headers['content-type']).toBe('text/javascript;charset=utf-8');
  });

  it('refuses a Host header that names another host (DNS rebinding), on the page and the endpoints', async () => {
    for (const path of ['/', '/-/play', '/-/assets/play.js']) {
      const refused = await send(server.url, { path, headers: { host: `attacker.example:${server.port}` } });
      expect(refused.status).toBe(421);
      expect(JSON.parse(refused.text).error.code).toBe('HOST_NOT_ALLOWED');
    }
    expect((await query({ host: `attacker.example:${server.port}` })).status).toBe(421);
    expect((await query({ host: `127.0.0.1.attacker.example:${server.port}` })).status).toBe(421);
    // its own address, localhost and an allowed name are answered
    for (const name of [host, `localhost:${server.port}`, `app.localhost:${server.port}`, `[::1]:${server.port}`, `ckql-box.lan:${server.port}`]) {
      expect((await send(server.url, { path: '/', headers: { host: name } })).status, name).toBe(200);
    }
    expect(hostAllowed(undefined, [])).toBe(false);
    expect(hostAllowed('evil.example', [])).toBe(false);
    expect(hostAllowed('user@127.0.0.1', [])).toBe(false);
  });

  it('refuses endpoint requests from another origin or site, and anything but JSON', async () => {
    expect((await query({ origin: server.url })).status).toBe(200);
    expect((await query({ 'sec-fetch-site': 'same-origin', origin: server.url })).status).toBe(200);
    const foreign: Record<string, string>[] = [
      { origin: 'http://attacker.example' },
      { origin: 'null' },
      { origin: `http://localhost:${server.port}` },
      { 'sec-fetch-site': 'cross-site' },
      { 'sec-fetch-site': 'same-site' },
      { 'sec-fetch-site': 'none' },
    ];
    for (const headers of foreign) {
      const refused = await query(headers);
      expect(refused.status, JSON.stringify(headers)).toBe(403);
      expect(JSON.parse(refused.text).error.code).toBe('FOREIGN_ORIGIN');
    }
    // A form or a text/plain fetch (no preflight) is refused: only JSON is read.
    const form = await send(server.url, { method: 'POST', path: '/-/query', headers: { 'content-type': 'text/plain' }, body: '{"source":"local","query":"from courses"}' });
    expect(form.status).toBe(415);
    // A preflight is never granted.
    const preflight = await send(server.url, { method: 'OPTIONS', path: '/-/query', headers: { origin: 'http://attacker.example', 'access-control-request-method': 'POST' } });
    expect(preflight.status).toBe(403);
    expect(preflight.headers['access-control-allow-origin']).toBeUndefined();
    expect((await query({})).headers['access-control-allow-origin']).toBeUndefined();
    const huge = await send(server.url, { method: 'POST', path: '/-/query', headers: json, body: JSON.stringify({ source: 'local', query: 'x'.repeat(2 * 1024 * 1024) }) });
    expect(huge.status).toBe(413);
    expect(JSON.parse(huge.text).error.code).toBe('REQUEST_TOO_LARGE');
    expect(huge.headers['access-control-allow-origin']).toBeUndefined();
    // The datastore API keeps CKAN's open CORS: it serves what any page may read.
    const api = await send(server.url, { path: '/api/action/datastore_search?resource_id=courses&limit=1' });
    expect(api.headers['access-control-allow-origin']).toBe('*');
  });

  it('never proxies an open URL: only the sources it was given', async () => {
    let reached = 0;
    const bystander = createServer((_req, res) => {
      reached += 1;
      res.end('{}');
    });
    await new Promise<void>((resolve) => bystander.listen(0, '127.0.0.1', resolve));
    const elsewhere = `http://127.0.0.1:${(bystander.address() as AddressInfo).port}`;
    try {
      const refused = await query({}, { source: elsewhere, query: 'from courses limit 1' });
      expect(refused.status).toBe(400);
      expect(JSON.parse(refused.text).error.message).toContain('source must name one of this server\'s sources (local)');
      // extra keys name nothing: the local source answers, and nothing else is asked
      const ignored = await query({}, { source: 'local', query: 'from courses limit 1', url: elsewhere, portal: elsewhere });
      expect(ignored.status).toBe(200);
      expect(reached).toBe(0);
    } finally {
      await new Promise((resolve) => bystander.close(resolve));
    }
  });

  it('escapes echoed text: a query that echoes markup comes back inert', async () => {
    const answer = await query({}, { source: 'local', query: 'from "<script>alert(1)</script>" limit 1' });
    expect(answer.status).toBe(400); // UNKNOWN_RESOURCE, at the name
    expect(answer.headers['content-type']).toBe('application/json;charset=utf-8');
    expect(answer.headers['x-content-type-options']).toBe('nosniff');
    expect(answer.text).not.toMatch(/[<>]/);
    expect(answer.text).toContain('\\u003cscript\\u003e');
    expect(JSON.parse(answer.text).error.message).toContain('<script>alert(1)</script>');
    const notFound = await send(server.url, { method: 'POST', path: '/-/%3Cimg%20src%3Dx%3E', headers: json, body: '{}' });
    expect(notFound.status).toBe(404);
    expect(notFound.text).not.toMatch(/[<>]/);
    expect(contentSecurityPolicy('n')).not.toContain('unsafe-inline');
  });

  it('a field or resource the source lacks is refused at its span with its "did you mean", as ckql query tells it', async () => {
    const cases = [
      { text: 'from courses where subjet = math', code: 'UNKNOWN_FIELD', at: 'subjet', hint: 'did you mean "subject"?' },
      { text: 'from courses where subject = $s and credits > 5 order by credit', params: { s: 'math' }, code: 'UNKNOWN_FIELD', at: 'credit', hint: 'did you mean "credits"?' },
      { text: 'from course where subject = math', code: 'UNKNOWN_RESOURCE', at: 'course', hint: 'did you mean "courses"?' },
    ];
    for (const { text, params, code, at, hint } of cases) {
      const answer = await query({}, { source: 'local', query: text, params: params ?? {} });
      expect(answer.status).toBe(400);
      const { error } = JSON.parse(answer.text) as { error: { code: string; hint: string; span: { start: number; end: number } } };
      expect(error.code).toBe(code);
      expect(error.span.start).toBe(text.lastIndexOf(at));
      expect(text.slice(error.span.start, error.span.end)).toBe(at);
      expect(error.hint).toBe(hint);
    }
  });

  it('two queries in the text: refused at the second with what the page can do, not the command line\'s ways', async () => {
    const text = 'from courses where subject = math;\nfrom schools';
    const answer = await query({}, { source: 'local', query: text });
    expect(answer.status).toBe(400);
    const { error } = JSON.parse(answer.text) as { error: { code: string; hint: string; span: { start: number; end: number } } };
    expect(error.code).toBe('UNEXPECTED_TOKEN');
    expect(error.span.start).toBe(text.indexOf('from schools'));
    expect(error.hint).toBe('the playground runs one query at a time: delete the others, or keep them as comments (-- from …)');
    expect(error.hint).not.toMatch(/ckql -c|-f FILE/);
  });

  it('a parameter left without a value is refused at its span, with the hint of the page (its box), not the library\'s', async () => {
    const text = 'from courses where subject = $subject and credits > 5';
    for (const params of [{}, { subject: '' }]) {
      const answer = await query({}, { source: 'local', query: text, params });
      expect(answer.status).toBe(400);
      const { error } = JSON.parse(answer.text) as { error: { code: string; hint: string; span: { start: number; end: number } } };
      expect(error.code).toBe('UNBOUND_PARAMETER');
      expect(text.slice(error.span.start, error.span.end)).toBe('$subject');
      expect(error.hint).toBe('type its value in the $subject box under Parameters, below the editor');
    }
  });
});

describe('ckql ui over a portal profile', () => {
  const token = 'tok-3f9a-secret';
  let portal: RunningServer;
  let server: RunningServer;
  let actions: ReturnType<typeof playgroundActions>;

  beforeAll(async () => {
    // The portal: the project's own server, with `courses` private to the token.
    portal = await startServer({ tables: await loadResources([join(root, 'examples', 'data')]), tokens: [token], privateResources: ['courses'], port: 0 });
    const source = selectedSource('portal', { spec: { kind: 'url', url: portal.url, token }, tokenShell: '$PORTAL_TOKEN' }, 'portal');
    actions = playgroundActions({ sources: [source], defaultSource: 'portal', version: 'test' });
    server = await startServer({ port: 0, playground: { actions } });
  });

  afterAll(async () => {
    await server.close();
    await actions.close();
    await portal.close();
  });

  const call = async (action: string, body: unknown): Promise<Answer> =>
    send(server.url, { method: 'POST', path: `/-/${action}`, headers: json, body: JSON.stringify(body) });

  it('queries the private resource with the token, which no answer to the page holds', async () => {
    const answers = [
      await call('sources', {}),
      await call('query', { source: 'portal', query: 'from courses where subject = math limit 2' }),
      await call('explain', { source: 'portal', query: 'from courses where subject = math and credits > 5' }),
      await call('fields', { source: 'portal', resource: 'courses' }),
      await send(server.url, { path: '/' }),
    ];
    for (const answer of answers) {
      expect(answer.status, answer.text).toBe(200);
      expect(answer.text).not.toContain(token);
    }
    expect(JSON.parse(answers[1]!.text).records).toHaveLength(2);
    const explained = JSON.parse(answers[2]!.text);
    expect(explained.portal.curl).toContain('-H "Authorization: $PORTAL_TOKEN"');
    // the TypeScript reads the token from the variable the profile names, as the curl line does
    expect(explained.taggedTemplate).toContain('token: process.env.PORTAL_TOKEN');
    expect(JSON.parse(answers[0]!.text).sources[0]).toMatchObject({ name: 'portal', kind: 'url', hasToken: true, targets: ['auto', 'ckan-2.11', 'ckan-2.12', 'sql'] });
    // the download streams from the portal too
    const download = await call('download', { source: 'portal', query: 'from courses where subject = math', format: 'ndjson' });
    expect(download.headers['content-disposition']).toBe('attachment; filename="courses.ndjson"');
    expect(download.text.trimEnd().split('\n')).toHaveLength(JSON.parse((await call('query', { source: 'portal', query: 'from courses where subject = math' })).text).size);
    expect(download.text).not.toContain(token);
  });

  it('a server of the playground alone serves no datastore API', async () => {
    const answer = await send(server.url, { path: '/api/action/datastore_search?resource_id=courses' });
    expect(answer.status).toBe(404);
    expect(answer.text).toContain('serves the playground only');
  });
});

describe('ckql ui over local data', () => {
  it('answers with the engine when no target is chosen (explain: nothing sent), and as a portal would be asked when one is', async () => {
    const source = selectedSource('data', { spec: { kind: 'data', paths: [join(root, 'examples', 'data')] } }, undefined);
    expect(source.targets).toEqual(['auto', 'ckan-2.11', 'ckan-2.12']);
    const actions = playgroundActions({ sources: [source], defaultSource: 'data', version: 'test' });
    const server = await startServer({ port: 0, playground: { actions } });
    try {
      const call = async (action: string, body: unknown): Promise<Record<string, unknown>> =>
        JSON.parse((await send(server.url, { method: 'POST', path: `/-/${action}`, headers: json, body: JSON.stringify(body) })).text) as Record<string, unknown>;
      const query = 'from courses where credits > 5 and subject = math';
      const whole = await call('explain', { source: 'data', query });
      // An engine that answers a whole query does it in the server (nothing sent); one that does not yet is paged through its API as CKAN 2.11.
      if (memoryEngine([]).query !== undefined) {
        expect(whole.portal).toBeUndefined();
        expect(whole.target).toBe('none');
      } else expect(whole).toMatchObject({ target: 'ckan-2.11', portal: { kind: 'search' } });
      // the operators that run are shown either way
      expect((whole.steps as string[]).length).toBeGreaterThan(0);
      const asked = await call('explain', { source: 'data', query, target: 'ckan-2.12' });
      expect(asked.portal).toMatchObject({ kind: 'search', json: expect.stringContaining('"gt": 5') });
      expect(asked.note).toContain('ckql serve');
      const [byEngine, byApi] = [await call('query', { source: 'data', query }), await call('query', { source: 'data', query, target: 'ckan-2.11' })];
      expect(byEngine.records).toEqual(byApi.records);
      expect(byEngine.size).toBe(byApi.size);
    } finally {
      await server.close();
      await actions.close();
    }
  });
});

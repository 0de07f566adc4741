/**
 * The files in `examples/` work as their comments and the README say: the
 * config loads and every named query finds records on the demo data, the
 * script runs clean, and the embedding example runs (in this process).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { format } from 'node:util';
import { describe, expect, it, vi } from 'vitest';
import { openSource } from '../../src/session/source.js';
import { readConfigFile } from '../../src/config/load.js';
import { runScript } from '../../src/repl/index.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const examples = join(root, 'examples');

describe('the README', () => {
  it('its first query runs on the demo data and finds records', async () => {
    const readme = readFileSync(join(root, 'README.md'), 'utf8');
    const first = /```\n(from [\s\S]*?)```/.exec(readme)?.[1];
    expect(first, 'the first code block of the README is a query').toBeDefined();
    const source = await openSource({ kind: 'data', paths: [join(examples, 'data')] });
    try {
      const result = await source.client.search(first ?? '');
      expect(result.records.length).toBeGreaterThan(0);
    } finally {
      await source.close();
    }
  });
});

describe('examples/', () => {
  it('ckql.config.yaml: the demo profile is the default and every named query finds records', async () => {
    const config = await readConfigFile(join(examples, 'ckql.config.yaml'));
    expect(config.defaultProfile).toBe('demo');
    const profile = config.profiles.get('demo');
    expect(profile).toEqual({ kind: 'data', name: 'demo', paths: [join(examples, 'data')] });
    if (profile?.kind !== 'data') return;
    expect([...config.queries.keys()]).toEqual(['by-subject', 'linear-algebra', 'failed-in', 'schools-in']);
    const source = await openSource({ kind: 'data', paths: profile.paths });
    try {
      for (const query of config.queries.values()) {
        const params = query.name === 'schools-in' ? { country: 'FR' } : query.params;
        const result = await source.client.search(query.query, { params });
        expect(result.records.length, query.name).toBeGreaterThan(0);
      }
    } finally {
      await source.close();
    }
  });

  it('queries.ckql runs every statement without an error', async () => {
    const source = await openSource({ kind: 'data', paths: [join(examples, 'data')] });
    try {
      const output = new PassThrough();
      const errorOutput = new PassThrough();
      let out = '';
      let err = '';
      output.on('data', (chunk: Buffer) => (out += chunk.toString()));
      errorOutput.on('data', (chunk: Buffer) => (err += chunk.toString()));
      const result = await runScript(readFileSync(join(examples, 'queries.ckql'), 'utf8'), { source, output, errorOutput });
      expect(err).toBe('');
      expect(result).toEqual({ statements: 3, succeeded: 3, errors: [] });
      const records = out.trimEnd().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
      expect(records).toHaveLength(2 + 5 + 3);
      expect(records.slice(2, 7).every((record) => typeof record.start_date === 'string')).toBe(true);
    } finally {
      await source.close();
    }
  });

  it('embed.ts runs and shows a compiled config query, the client, the template and paging', async () => {
    // In this process: the README runs it with `npx tsx`, and a child process would spend seconds of CPU
    // transpiling src/ again; test/cli/package.test.ts runs the README's sample under tsx as a child.
    const printed: string[] = [];
    const log = vi.spyOn(console, 'log').mockImplementation((...args: unknown[]) => void printed.push(format(...args)));
    try {
      await import('../../examples/embed.js');
    } finally {
      log.mockRestore();
    }
    const lines = printed.join('\n').split('\n');
    expect(JSON.parse(lines[0] ?? '')).toEqual({
      resource_id: 'courses',
      filters: { subject: 'physics', stage: ['active', 'survey'] },
      fields: ['code', 'title', 'stage', 'credits'],
      sort: 'code asc',
    });
    expect(lines[1]).toMatch(/^\d+ of \d+ physics courses$/);
    expect(lines[2]).toBe('0 courses titled "Linear Algebra I\\" or 1=1", 2 titled "Linear Algebra I"');
    expect(lines[3]).toMatch(/^\d{4,} failed enrolments$/);
  });
});

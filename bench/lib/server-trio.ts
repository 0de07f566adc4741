/**
 * The three servers the server profiles load side by side: ckql's over the
 * 200k-row enrolments, the bare floor sending ckql's own answer to the
 * section's request, and the floor that also parses the request and
 * stringifies the answer. Each runs in its own process (`children/serve.ts`).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { request } from 'undici';
import { startChild } from './child.js';
import type { RunningChild } from './child.js';
import { ckqlModules } from './ckql.js';
import { enrolmentsFile } from './data.js';
import { SEARCH_PATH, SELECTIVE_QUERY } from '../server.js';

export interface ServerTrio {
  /** the section's request body */
  readonly body: string;
  readonly ckql: RunningChild;
  readonly floor: RunningChild;
  readonly floorJson: RunningChild;
  /** starts one more floor variant over the same answer (e.g. `floor-spin` with its µs) */
  readonly startFloor: (kind: string, ...args: string[]) => Promise<RunningChild>;
  /** stops every server started here and removes the answer file */
  readonly stop: () => Promise<void>;
}

export async function startServerTrio(): Promise<ServerTrio> {
  const { compile } = await ckqlModules.compile();
  const body = JSON.stringify(compile(SELECTIVE_QUERY));
  const temp = mkdtempSync(path.join(tmpdir(), 'ckql-trio-'));
  const children: RunningChild[] = [];
  const stop = async (): Promise<void> => {
    await Promise.all(children.map((c) => c.stop()));
    rmSync(temp, { recursive: true, force: true });
  };
  try {
    const ckql = await startChild('serve.ts', ['ckql', enrolmentsFile(200_000)]);
    children.push(ckql);
    // the floors send ckql's own answer, byte for byte, with its headers
    const first = await request(ckql.ready + SEARCH_PATH, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    const answer = path.join(temp, 'body.json');
    writeFileSync(answer, Buffer.from(await first.body.arrayBuffer()));
    const headers = JSON.stringify({ 'content-type': first.headers['content-type'], 'access-control-allow-origin': '*' });
    const startFloor = async (kind: string, ...args: string[]): Promise<RunningChild> => {
      const child = await startChild('serve.ts', [kind, answer, headers, ...args]);
      children.push(child);
      return child;
    };
    const floor = await startFloor('floor');
    const floorJson = await startFloor('floor-json');
    return { body, ckql, floor, floorJson, startFloor, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/**
 * Summarizes a V8 .cpuprofile (from `node --cpu-prof`): the functions with the
 * most self time and the most total time.
 *
 *   tsx bench/profile/top-frames.ts <file.cpuprofile> [count]
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount: number;
  children?: number[];
}
interface Profile { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[]; startTime: number; endTime: number }

const [file, countText] = process.argv.slice(2);
if (file === undefined) throw new Error('usage: top-frames.ts <file.cpuprofile> [count]');
const count = Number(countText ?? 25);
const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const parent = new Map<number, number>();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);

// time per sample, attributed to the sampled node
const selfTime = new Map<number, number>();
profile.samples.forEach((id, i) => selfTime.set(id, (selfTime.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
const total = [...selfTime.values()].reduce((a, b) => a + b, 0);

const label = (n: ProfileNode) => {
  const where = n.callFrame.url ? `${path.relative(process.cwd(), n.callFrame.url.replace('file://', ''))}:${n.callFrame.lineNumber + 1}` : '';
  return `${n.callFrame.functionName || '(anonymous)'} ${where}`.trim();
};
const self = new Map<string, number>();
const inclusive = new Map<string, number>();
for (const [id, t] of selfTime) {
  const node = byId.get(id) as ProfileNode;
  self.set(label(node), (self.get(label(node)) ?? 0) + t);
  const seen = new Set<string>();
  for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
    const l = label(byId.get(cur) as ProfileNode);
    if (seen.has(l)) continue;
    seen.add(l);
    inclusive.set(l, (inclusive.get(l) ?? 0) + t);
  }
}
const show = (title: string, map: Map<string, number>) => {
  console.log(`\n${title} (of ${(total / 1000).toFixed(0)} ms sampled)`);
  for (const [l, t] of [...map].sort((a, b) => b[1] - a[1]).slice(0, count)) {
    console.log(`${((t / total) * 100).toFixed(1).padStart(5)} %  ${(t / 1000).toFixed(0).padStart(6)} ms  ${l}`);
  }
};
show('self time', self);
show('total time', inclusive);

import { parse } from '../src/syntax/parse.ts';
import { loadResources } from '../src/engine/memory/load.ts';
import { memoryEngine } from '../src/engine/memory/engine.ts';
const tables = await loadResources('examples/data');
console.log(tables.map((t) => [t.id, t.aliases]));
const e = memoryEngine(tables);
for (const q of process.argv.slice(2)) {
  try {
    const s = await e.query!(parse(q), { total: true });
    console.log(s.fields.map((f) => `${f.id}:${f.type}`).join(' '), 'total', s.total, s.facets ? JSON.stringify(s.facets).slice(0, 300) : '');
    for await (const b of s.batches) console.log(b.slice(0, 6));
  } catch (err) { console.log('ERR', (err as Error).message); }
}

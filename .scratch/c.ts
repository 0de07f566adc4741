import { openSource } from '../src/session/source.ts';
const src = await openSource({ kind: 'data', paths: ['examples/data'], target: 'ckan-2.11' } as never, {});
try {
  const r = await src.client.search(process.argv[2]!);
  console.log(JSON.stringify(r.records.slice(0, 3)), r.total, r.read, r.facets ? JSON.stringify(r.facets).slice(0, 200) : '');
  const e = await src.client.explain(process.argv[2]!);
  console.log(e.steps?.join('\n'));
} catch (err) { console.log((err as Error).stack); }
await src.close();

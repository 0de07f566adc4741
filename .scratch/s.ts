import { suggest } from '../src/syntax/suggest.ts';
const t=(s:string)=>suggest(s).suggestions.map((x)=>('text' in x ? x.text : x.kind));
for (const s of ['from x where ', 'from x search "t" ','from x select ','from x where a = 1 ','from x where a = 1 limit 5 ','from x order by a ','from x group by ','from x group by a having ','from x facet ','from x join ', 'from x join y on ', 'from x order by ', 'from courses c ', 'from x where a = 1 group by a '] ) console.log(JSON.stringify(s), t(s).join(' | '));

import { parse } from '../src/syntax/parse.ts';
import { shapeOf, bindShape } from '../src/compile/shape.ts';
import { facetStatement } from '../src/compile/sql-shaped.ts';
const q = parse(process.argv[2]!);
const shape = shapeOf(q);
const fields = [{ id: '_id', type: 'int' }, { id: 'subject', type: 'text' }, { id: 'start', type: 'timestamp' }, { id: 'credits', type: 'numeric' }, { id: 'level', type: 'int4' }] as const;
const params: unknown[] = [];
console.log(facetStatement(shape, { literal: (t) => { params.push(t); return `$${params.length}`; }, table: (r) => `"${r}"`, bound: bindShape(shape, [fields as never]), total: false }), params);

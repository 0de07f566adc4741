/**
 * A plan run over the memory evaluator, as the client runs it over HTTP:
 * every record the request selects, in its order, then the residual's test,
 * select, distinct, offset and limit.
 */
import type { Field } from '../../src/ast.js';
import type { Plan } from '../../src/compile/plan.js';
import type { Row, SearchRequest, SearchResult, Table } from '../../src/datastore/types.js';
import { canonicalText } from '../../src/datastore/values.js';
import { evaluate } from '../../src/engine/memory/evaluate.js';
import { residualTest } from '../../src/engine/memory/evaluate-query.js';

export function evaluatePlan(p: Plan, table: Table | readonly Row[]): SearchResult {
  const request = p.request as SearchRequest;
  // A 2.12 plan's request is read as CKAN 2.12 reads it (operators, $or).
  const options = p.target === 'ckan-2.12' ? { ckan: '2.12' as const } : {};
  if (p.residual === undefined) return evaluate(request, table, options);
  const fetched = evaluate({ ...request, limit: 32_000 }, table, options);
  const residual = p.residual;
  const keep = residualTest(residual, fetched.fields);
  const names = residual.select === undefined ? undefined : [...new Set(residual.select.items.map((item) => (item.value as Field).name))];
  let records = fetched.records
    .filter((row, i) => keep(row, i))
    .map((row) => (names === undefined ? row : (Object.fromEntries(names.map((n) => [n, row[n] ?? null])) as Row)));
  if (residual.select?.distinct) {
    const seen = new Set<string>();
    records = records.filter((r) => {
      const key = JSON.stringify(Object.values(r).map((v) => canonicalText(v)));
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    });
  }
  const offset = residual.offset?.value.kind === 'number' ? residual.offset.value.value : 0;
  const limit = Math.min(residual.limit?.value.kind === 'number' ? residual.limit.value.value : 100, 32_000);
  return { ...fetched, records: records.slice(offset, offset + limit), total: records.length, limit };
}

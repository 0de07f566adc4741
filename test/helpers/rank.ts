/**
 * The local server adds CKAN's rank columns (`rank`, `rank <field>`, type
 * `float`) to the answer of a text search; the evaluator has none. Tests
 * that compare the two take them out of the server's answer first.
 */
import type { FieldInfo, Row } from '../../src/datastore/types.js';

function isRank(id: string): boolean {
  return id === 'rank' || id.startsWith('rank ');
}

/** `result` without rank columns in `fields` and `records`. */
export function withoutRank<T>(result: T): T {
  if (typeof result !== 'object' || result === null) return result;
  const r = result as { fields?: readonly FieldInfo[]; records?: readonly Row[] };
  if (!Array.isArray(r.fields) || !r.fields.some((f) => isRank(f.id))) return result;
  const records = Array.isArray(r.records)
    ? r.records.map((record) => Object.fromEntries(Object.entries(record).filter(([key]) => !isRank(key))))
    : r.records;
  return { ...result, fields: r.fields.filter((f) => !isRank(f.id)), records } as T;
}

/** Records without rank keys. */
export function recordsWithoutRank(records: readonly Row[]): Row[] {
  return records.map((record) => Object.fromEntries(Object.entries(record).filter(([key]) => !isRank(key))));
}

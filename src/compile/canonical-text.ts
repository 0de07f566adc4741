/**
 * TEMPORARY duplicate of `canonicalText` from `src/evaluate/values.ts` (owned
 * by the evaluate stage, not yet written when the compiler was). The one
 * equality rule of the project must live in one place: once values.ts
 * exists, the compiler imports it from there and this file is deleted.
 *
 * Canonical text (semantics.md, Equality): a string is itself; a number is
 * its shortest round-trip decimal form with `-0` → `"0"`; a boolean is
 * `"true"` or `"false"`.
 */
export function canonicalText(value: string | number | boolean): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number') return Object.is(value, -0) ? '0' : String(value);
  return value ? 'true' : 'false';
}

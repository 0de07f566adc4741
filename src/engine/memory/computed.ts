/**
 * Where the memory engine computes expressions (docs/expressions.md): a
 * value of a record (a select item, a sort key, a group key), a
 * comparison of a `where`, and a grouped query's computed slots (`c0`,
 * `c1`, …) over each group's row of keys and aggregates.
 */
import type { Condition, Expression, Field, Operand } from '../../ast.js';
import { fieldTypeOf, valueTypeOf, type ValueType } from '../../compile/expression-types.js';
import { computedSlot, type BoundShape } from '../../compile/shape.js';
import { bucketFunction } from '../../datastore/buckets.js';
import type { FieldType, JsonValue, Row } from '../../datastore/types.js';
import { compileExpression, conditionTest, outputValue, type Leaves, type ScaledColumn } from './expression.js';

/** A field's value of an item (a joined row's position, a record), and its type. */
export type FieldReading<T> = (field: Field) => { readonly read: (item: T) => JsonValue | null | undefined; readonly type: FieldType };

/** The leaves of expressions over items whose fields `reading` reads: fields, and buckets of them. */
export function leavesOf<T>(reading: FieldReading<T>): Leaves<T> {
  return {
    read(leaf) {
      if (leaf.kind === 'field') return reading(leaf).read;
      if (leaf.kind === 'bucket') {
        const read = reading(leaf.field).read;
        const bucket = bucketFunction(leaf.fn === 'bucket' ? { width: leaf.width!.value } : { unit: leaf.fn });
        return (item) => bucket(read(item));
      }
      throw new Error(`an aggregate outside a grouped query: ${leaf.kind}`);
    },
    type(leaf) {
      if (leaf.kind === 'field') return valueTypeOf(reading(leaf).type);
      if (leaf.kind === 'bucket') return leaf.fn === 'bucket' ? 'numeric' : 'timestamp';
      return 'unknown';
    },
  };
}

/**
 * An expression's value of an item, as a record holds it (a numeric with its
 * scale), the type of its column, and its scaled path as code (expression.ts
 * `scaledColumn`); as a `key` (a group key), without trailing zeros, so that
 * `3.0` and `3` are one group (`outputValue`), and with no scaled path.
 */
export function expressionReader<T>(
  expression: Expression,
  reading: FieldReading<T>,
  key = false,
): { readonly read: (item: T) => JsonValue; readonly type: FieldType; readonly scaled: (prefix: string, exit: string) => ScaledColumn<T> | undefined } {
  const compiled = compileExpression(expression, leavesOf(reading));
  if (key) return { read: (item) => outputValue(compiled.run(item), true), type: fieldTypeOf(compiled.type), scaled: () => undefined };
  return { read: compiled.output, type: fieldTypeOf(compiled.type), scaled: compiled.scaled };
}

/** A condition's truth for an item (SQL's three-valued logic: undefined is unknown). */
export function conditionReader<T>(condition: Condition<Operand>, reading: FieldReading<T>): (item: T) => boolean | undefined {
  return conditionTest(condition, leavesOf(reading));
}

/** Each group's row with its computed slots added (`c0`, `c1`, …), read over its other slots. */
export function withComputedSlots(bound: BoundShape): ((row: Row) => Row) | undefined {
  const computed = bound.shape.computed;
  if (computed.length === 0) return undefined;
  const slotReading: FieldReading<Row> = (field) => ({ read: (row) => row[field.name], type: bound.slotTypes.get(field.name) ?? 'text' });
  const readers = computed.map((over) => expressionReader(over, slotReading).read);
  return (row) => {
    const out: Record<string, JsonValue | undefined> = { ...row };
    readers.forEach((read, i) => (out[computedSlot(i)] = read(row)));
    return out as Row;
  };
}

/** The type of a value type as a field's. */
export function columnType(type: ValueType): FieldType {
  return fieldTypeOf(type);
}

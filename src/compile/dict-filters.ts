/**
 * CKAN 2.11's `filters` dict: an `and` of one value or list per field. The
 * part of the language it can say is `=` and `in` with `or` over one field
 * and `and` anywhere outside an `or`; `plan.ts` decides what reaches here.
 */
import type { Condition, Equals, Field, In, Or, Parameter, Value } from '../ast.js';
import { assertNever } from '../ast.js';
import { queryError, type QueryError } from '../errors.js';
import type { Filters, Scalar } from '../datastore/types.js';
import { canonicalText } from '../datastore/values.js';
import { formatField } from '../format.js';


/** The values one field may take under a condition. */
interface ValueSet {
  readonly field: Field;
  readonly values: readonly Scalar[];
  /** the condition was an `=` (alone, a single value rather than a list) */
  readonly equals: boolean;
}

/** Conditions that are not `and` groups: an `and` is flattened into its members. */
type Leaf = Equals | In | Or;

/**
 * The 2.11 `filters` dict of a condition made only of `=` / `in` tests with
 * non-null values and `and` / `or` groups (see `compile`): `or` over one field
 * only, no `and` inside an `or` over several fields.
 * @throws {QueryError} `OR_ACROSS_FIELDS`, `AND_INSIDE_OR`
 * @example dictFilters(parse('from t where a in (1, 2) and a = 2').where!.condition) // → { a: 2 }
 */
export function dictFilters(condition: Condition): Filters | undefined {
  const leaves: Leaf[] = [];
  collectLeaves(condition, leaves);
  if (leaves.length === 0) return undefined;
  const filters: Record<string, Scalar | readonly Scalar[]> = {};
  let repeated = false;
  // Every leaf is read in source order, so the first problem in the text is
  // the one reported. A field's first condition gives its value as written.
  for (const leaf of leaves) {
    let name: string;
    let value: Scalar | readonly Scalar[];
    if (leaf.kind === 'eq') {
      // The commonest condition needs no value set.
      name = leaf.field.name;
      value = literal(leaf.value);
    } else {
      const set = leafSet(leaf);
      name = set.field.name;
      value = set.values;
    }
    if (Object.hasOwn(filters, name)) repeated = true;
    else setFilter(filters, name, value);
  }
  // A field with several conditions is rare: only then are its sets grouped
  // and intersected (the key keeps its place of first appearance).
  if (repeated) {
    const byField = new Map<string, ValueSet[]>();
    for (const leaf of leaves) {
      const set = leafSet(leaf);
      const group = byField.get(set.field.name);
      if (group === undefined) byField.set(set.field.name, [set]);
      else group.push(set);
    }
    for (const [name, group] of byField) if (group.length > 1) setFilter(filters, name, commonValue(group));
  }
  return Object.freeze(filters);
}

/** Sets (or replaces) one filter, frozen; a field named `__proto__` stays an ordinary own key. */
function setFilter(filters: Record<string, unknown>, name: string, value: Scalar | readonly Scalar[]): void {
  if (Array.isArray(value)) Object.freeze(value);
  if (name === '__proto__') {
    Object.defineProperty(filters, name, { value, enumerable: true, writable: true, configurable: true });
  } else {
    filters[name] = value;
  }
}

/** The members of nested `and` groups, depth first, i.e. in source order. */
function collectLeaves(condition: Condition, leaves: Leaf[]): void {
  switch (condition.kind) {
    case 'and':
      for (const member of condition.conditions) collectLeaves(member, leaves);
      return;
    case 'eq':
    case 'in':
    case 'or':
      leaves.push(condition);
      return;
    default:
      throw new Error(`a 2.11 filter cannot hold ${condition.kind}`);
  }
}

function leafSet(leaf: Leaf): ValueSet {
  switch (leaf.kind) {
    case 'eq':
      return { field: leaf.field, values: [literal(leaf.value)], equals: true };
    case 'in':
      return { field: leaf.field, values: leaf.values.map(literal), equals: false };
    case 'or':
      return orSet(leaf);
    default:
      return assertNever(leaf, 'condition');
  }
}

/** An `or` group: every branch must be on the first branch's field; values are joined in order. */
function orSet(or: Or): ValueSet {
  let field: Field | undefined;
  const values: Scalar[] = [];
  for (const branch of or.conditions) {
    const set = branchSet(branch);
    if (field === undefined) field = set.field;
    else if (set.field.name !== field.name) {
      throw queryError('OR_ACROSS_FIELDS', branch.span, [field.name, set.field.name], {
        found: set.field.name,
        hint: `"or" may only join values of one field, as in (${formatField(field.name)} = a or ${formatField(field.name)} = b); run one query per field instead`,
      });
    }
    // a loop, not push(...values): a list of many thousand values would overflow the argument stack
    for (const value of set.values) values.push(value);
  }
  if (field === undefined) throw new Error('an "or" group needs at least one condition');
  return { field, values, equals: false };
}

function branchSet(branch: Condition): ValueSet {
  if (branch.kind !== 'and') return leafSet(branch as Leaf);
  // An `and` over one field is a value set like any other; over several it is not.
  const leaves: Leaf[] = [];
  collectLeaves(branch, leaves);
  const sets = leaves.map(leafSet);
  const first = sets[0];
  if (first === undefined) throw new Error('an "and" group needs at least one condition');
  if (sets.some((set) => set.field.name !== first.field.name)) {
    throw queryError('AND_INSIDE_OR', branch.span, [], {
      hint: 'take the "and" out of the "or" group, or write two queries: a request cannot say (a and b) or c',
    });
  }
  return { field: first.field, values: intersect(sets), equals: false };
}

/** One field's filter value from its several `and`-joined conditions. */
function commonValue(sets: readonly ValueSet[]): Scalar | readonly Scalar[] {
  const common = intersect(sets);
  const single = common[0];
  return sets.some((set) => set.equals) && common.length === 1 && single !== undefined ? single : common;
}

/** The first set's values (its order, each once) that every other set also holds. */
function intersect(sets: readonly ValueSet[]): Scalar[] {
  const [first, ...rest] = sets;
  if (first === undefined) return [];
  const others = rest.map((set) => new Set(set.values.map(valueKey)));
  const seen = new Set<string | null>();
  const common: Scalar[] = [];
  for (const value of first.values) {
    const key = valueKey(value);
    if (seen.has(key) || !others.every((keys) => keys.has(key))) continue;
    seen.add(key);
    common.push(value);
  }
  return common;
}

/** Equality key: the canonical text; `null` (never the text "null") for null. */
function valueKey(value: Scalar): string | null {
  return canonicalText(value);
}


/** A literal's JSON value; a parameter left here is unbound. */
export function literal(value: Value): Scalar {
  switch (value.kind) {
    case 'string':
    case 'boolean':
      return value.value;
    case 'number':
      if (!Number.isFinite(value.value)) {
        throw queryError('NUMBER_OUT_OF_RANGE', value.span, [String(value.value)]);
      }
      return value.value === 0 ? 0 : value.value; // -0 → 0, as the parser reads it
    case 'null':
      return null;
    case 'param':
      throw unboundError(value);
    default:
      return assertNever(value, 'value');
  }
}

/** Stops the walk at a parameter; `compile` then reports the first one in the source, with a hint. */
export function unboundError(param: Parameter): QueryError {
  return queryError('UNBOUND_PARAMETER', param.span, [param.name], { found: `$${param.name}` });
}

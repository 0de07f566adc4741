/**
 * Warnings about comparisons that mean something else than they seem: most
 * portals load every column as `text` (xloader; docs/portals-reference.md
 * §3.1), so `year >= 2020` compares texts there (`"900" > "2020"`), on
 * every target: 2.12's filters and the SQL alike. The warning names the
 * field, its stored type and what the data dictionary's `type_override`
 * says it holds. Equality is not warned about: the language compares
 * values by their canonical text (docs/semantics.md), so `year = 2020`
 * matches the text `2020`.
 */
import type { Condition, Query, Value } from '../ast.js';
import { assertNever } from '../ast.js';
import type { Span } from '../span.js';
import type { FieldInfo } from '../datastore/types.js';

/** One comparison that compares text where the query reads as numbers or dates. */
export interface TypeWarning {
  readonly code: 'TEXT_COMPARED' | 'TEXT_SORTED';
  readonly field: string;
  /** the type the portal stores the field as (`text`) */
  readonly storedType: string;
  /** the data dictionary's `type_override`, when it names one */
  readonly typeOverride?: string;
  /** what the field is compared with: `number` or `date` (for a sort: the override's kind) */
  readonly comparedWith: 'number' | 'date';
  /** the comparison in the query text (the sort key, for `TEXT_SORTED`) */
  readonly span: Span;
  readonly message: string;
}

const NUMBER_TEXT = /^\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\s*$/;
const DATE_TEXT = /^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?)?/;
const NUMBER_TYPES = /^(int\d?|integer|bigint|smallint|numeric|decimal|float\d?|double precision|real|number)$/i;
const DATE_TYPES = /^(date|timestamp.*|datetime|time.*)$/i;

/** Whether a stored type compares as text. */
function isText(type: string): boolean {
  return type === 'text' || type === 'name' || type.startsWith('varchar') || type.startsWith('character');
}

/** What a value reads as: a number, a date, or neither (a parameter left unbound is neither). */
function kindOf(value: Value): 'number' | 'date' | undefined {
  if (value.kind === 'number') return 'number';
  if (value.kind !== 'string') return undefined;
  if (DATE_TEXT.test(value.value)) return 'date';
  return NUMBER_TEXT.test(value.value) ? 'number' : undefined;
}

const OPERATORS = { lt: '<', lte: '<=', gt: '>', gte: '>=', ne: '!=' } as const;

/**
 * The warnings of a (bound) query over a resource with these fields.
 * @example
 * comparisonWarnings(parse('from r where year >= 2020'), [{ id: 'year', type: 'text', info: { type_override: 'int' } }])
 * // → [{ code: 'TEXT_COMPARED', field: 'year', storedType: 'text', typeOverride: 'int', comparedWith: 'number',
 * //      message: 'year >= 2020 compares text: the portal stores "year" as text (its data dictionary says int), so "900" counts as more than "2020"' }]
 */
export function comparisonWarnings(query: Query, fields: readonly FieldInfo[]): TypeWarning[] {
  const byId = new Map(fields.map((field) => [field.id, field]));
  const warnings: TypeWarning[] = [];
  const warn = (name: string, kind: 'number' | 'date', span: Span, shown: string): void => {
    const field = byId.get(name);
    if (field === undefined || !isText(field.type)) return;
    const override = typeof field.info?.type_override === 'string' && field.info.type_override !== '' ? field.info.type_override : undefined;
    const says = override === undefined ? '' : ` (its data dictionary says ${override})`;
    const example = kind === 'number' ? '"900" counts as more than "2020"' : 'it is right only where every value is written YYYY-MM-DD';
    warnings.push({
      code: 'TEXT_COMPARED',
      field: name,
      storedType: field.type,
      ...(override === undefined ? {} : { typeOverride: override }),
      comparedWith: kind,
      span,
      message: `${shown} compares text: the portal stores ${JSON.stringify(name)} as ${field.type}${says}, so ${example}`,
    });
  };
  const visit = (condition: Condition): void => {
    switch (condition.kind) {
      case 'compare': {
        if (condition.op === 'ne') return;
        const kind = kindOf(condition.value);
        if (kind !== undefined) warn(condition.field.name, kind, condition.span, `${condition.field.name} ${OPERATORS[condition.op]} ${literal(condition.value)}`);
        return;
      }
      case 'between': {
        const kind = kindOf(condition.low) ?? kindOf(condition.high);
        if (kind !== undefined) warn(condition.field.name, kind, condition.span, `${condition.field.name} between ${literal(condition.low)} and ${literal(condition.high)}`);
        return;
      }
      case 'not':
        visit(condition.condition);
        return;
      case 'and':
      case 'or':
        for (const each of condition.conditions) visit(each);
        return;
      case 'eq':
      case 'in':
      case 'like':
      case 'is-null':
      case 'comparison':
        return;
      default:
        assertNever(condition, 'condition');
    }
  };
  if (query.where !== undefined) visit(query.where.condition);
  // A sort on a text field the dictionary says holds numbers or dates orders texts.
  for (const key of query.order?.keys ?? []) {
    if (key.field.kind !== 'field') continue;
    const field = byId.get(key.field.name);
    const override = field?.info?.type_override;
    if (field === undefined || !isText(field.type) || typeof override !== 'string') continue;
    const kind = NUMBER_TYPES.test(override) ? 'number' : DATE_TYPES.test(override) ? 'date' : undefined;
    if (kind === undefined) continue;
    warnings.push({
      code: 'TEXT_SORTED',
      field: field.id,
      storedType: field.type,
      typeOverride: override,
      comparedWith: kind,
      span: key.span,
      message: `order by ${field.id} sorts text: the portal stores ${JSON.stringify(field.id)} as ${field.type} (its data dictionary says ${override}), so "10" comes before "9"`,
    });
  }
  return warnings;
}

function literal(value: Value): string {
  switch (value.kind) {
    case 'number':
      return String(value.value);
    case 'string':
      return JSON.stringify(value.value);
    case 'boolean':
      return String(value.value);
    case 'null':
      return 'null';
    case 'param':
      return `$${value.name}`;
    default:
      return assertNever(value, 'value');
  }
}

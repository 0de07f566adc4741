/**
 * AST → canonical query text: lower-case keywords, one clause per line in the
 * order `from, select, where, search, order, limit, offset`, and quotes only
 * where the text would not read back as the same value. `parse(format(q))`
 * equals `q` apart from spans.
 */
import {
  assertNever, type CompareOperator, type Condition, type Parameter, type Query, type Search, type SortKey, type StringValue,
  type Value,
} from './ast.js';
import { keywords, scanBareword } from './syntax/tokens.js';

const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

/** Whether `text` reads back as one bareword (or UUID) token, i.e. needs no quotes. */
function isBare(text: string): boolean {
  if (UUID.test(text)) return true;
  return text.length > 0 && scanBareword(text, 0) === text.length && !keywords.has(text.toLowerCase());
}

// Escaped: backslash, the quote, control characters (the lexer ends a string
// at a raw line break), and lone surrogates, which would not survive being
// written to a UTF-8 file.
// eslint-disable-next-line no-control-regex
const NEEDS_ESCAPE = /[\\"\u0000-\u001f\u007f]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

function escapeChar(char: string): string {
  switch (char) {
    case '\\':
      return '\\\\';
    case '"':
      return '\\"';
    case '\n':
      return '\\n';
    case '\t':
      return '\\t';
    default:
      return `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`;
  }
}

/**
 * Any text as a double-quoted string literal.
 * @example formatString('say "hi"') // → '"say \\"hi\\""'
 */
export function formatString(text: string): string {
  return `"${text.replace(NEEDS_ESCAPE, escapeChar)}"`;
}

/**
 * Text as a value: bare when it reads back as the same text (`active`,
 * `high-school`, a UUID), else quoted (`"2020"`, `"limit"`, `"linear algebra"`).
 * @example formatText('high-school') // → 'high-school'
 */
export function formatText(text: string): string {
  return isBare(text) ? text : formatString(text);
}

/**
 * A field name: bare when it is a bareword and not a keyword, else in
 * backticks with any backtick doubled.
 * @example formatField('school year') // → '`school year`'
 */
export function formatField(name: string): string {
  return isBare(name) && !UUID.test(name) ? name : `\`${name.replaceAll('`', '``')}\``;
}

/**
 * A plain JSON scalar as a value literal, for completions and `fromRequest`:
 * numbers and booleans stay typed, text is quoted only when needed.
 * @example formatScalar('2020') // → '"2020"'; formatScalar(2020) // → '2020'
 */
export function formatScalar(value: string | number | boolean | null): string {
  if (value === null) return 'null';
  if (typeof value === 'string') return formatText(value);
  return String(value);
}

/**
 * One value of the AST as query text.
 * @example formatValue({ kind: 'string', value: 'limit', span }) // → '"limit"'
 */
export function formatValue(value: Value): string {
  switch (value.kind) {
    case 'string':
      return formatText(value.value);
    case 'number':
      return String(value.value);
    case 'boolean':
      return value.value ? 'true' : 'false';
    case 'null':
      return 'null';
    case 'param':
      return `$${value.name}`;
    default:
      return assertNever(value, 'value');
  }
}

const operatorText = { ne: '!=', lt: '<', lte: '<=', gt: '>', gte: '>=' } as const satisfies Record<CompareOperator, string>;

/** A condition as text. `top`: the whole `where`, whose `and` list needs no parentheses. */
function formatCondition(condition: Condition, top: boolean): string {
  switch (condition.kind) {
    case 'eq':
      return `${formatField(condition.field.name)} = ${formatValue(condition.value)}`;
    case 'compare':
      return `${formatField(condition.field.name)} ${operatorText[condition.op]} ${formatValue(condition.value)}`;
    case 'in':
      return `${formatField(condition.field.name)} in (${condition.values.map(formatValue).join(', ')})`;
    case 'between':
      return `${formatField(condition.field.name)} between ${formatValue(condition.low)} and ${formatValue(condition.high)}`;
    case 'like':
      return `${formatField(condition.field.name)} ${condition.ignoreCase ? 'ilike' : 'like'} ${formatPattern(condition.pattern)}`;
    case 'is-null':
      return `${formatField(condition.field.name)} is null`;
    case 'not':
      return formatNot(condition.condition);
    case 'and':
    case 'or': {
      if (condition.conditions.length === 1) return formatCondition(condition.conditions[0]!, top);
      const text = condition.conditions.map((c) => formatCondition(c, false)).join(` ${condition.kind} `);
      // The where clause is itself an "and" list; an "or" keeps its parentheses even there, as people write it.
      return top && condition.kind === 'and' ? text : `(${text})`;
    }
    default:
      return assertNever(condition, 'condition');
  }
}

/** `not c`, with the negated forms of `in`, `like` and `is null` written the way people say them. */
function formatNot(inner: Condition): string {
  switch (inner.kind) {
    case 'in':
      return `${formatField(inner.field.name)} not in (${inner.values.map(formatValue).join(', ')})`;
    case 'like':
      return `${formatField(inner.field.name)} not ${inner.ignoreCase ? 'ilike' : 'like'} ${formatPattern(inner.pattern)}`;
    case 'is-null':
      return `${formatField(inner.field.name)} is not null`;
    case 'eq':
    case 'compare':
    case 'between':
      return `not ${formatCondition(inner, false)}`;
    case 'not':
      return `not (${formatNot(inner.condition)})`;
    case 'and':
    case 'or':
      // A one-member list (possible only in a built AST) is that member, which may need its own parentheses.
      return inner.conditions.length === 1 ? formatNot(inner.conditions[0]!) : `not ${formatCondition(inner, false)}`;
    default:
      return assertNever(inner, 'condition');
  }
}

function formatPattern(pattern: StringValue | Parameter): string {
  return pattern.kind === 'param' ? `$${pattern.name}` : formatString(pattern.value);
}

function formatSearch(search: Search): string {
  const text = (value: StringValue | Parameter) => (value.kind === 'param' ? `$${value.name}` : formatString(value.value));
  const what =
    search.fields !== undefined
      ? search.fields.map((f) => `${formatField(f.field.name)} ${text(f.text)}`).join(', ')
      : search.text !== undefined
        ? text(search.text)
        : '""';
  return `search ${what}${search.language === undefined ? '' : ` language ${formatText(search.language.value)}`}`;
}

function formatSortKey(key: SortKey): string {
  return formatField(key.field.name) + (key.direction === 'desc' ? ' desc' : '') + (key.nulls === undefined ? '' : ` nulls ${key.nulls}`);
}

/**
 * The canonical text of a query.
 * @example
 * format(parse('FROM courses LIMIT 5 WHERE subject = "math"'))
 * // → 'from courses\nwhere subject = math\nlimit 5'
 * // (both compile to { resource_id: 'courses', filters: { subject: 'math' }, limit: 5 })
 */
export function format(query: Query): string {
  const resource = query.from.resource;
  const lines = [`from ${resource.kind === 'param' ? `$${resource.name}` : formatText(resource.value)}`];
  if (query.select) {
    lines.push(`select ${query.select.distinct ? 'distinct ' : ''}${query.select.fields.map((f) => formatField(f.name)).join(', ')}`);
  }
  const condition = query.where?.condition;
  // An empty "and" (possible only in a built AST) holds for every record: the same as no where clause.
  if (condition && !(condition.kind === 'and' && condition.conditions.length === 0)) {
    lines.push(`where ${formatCondition(condition, true)}`);
  }
  if (query.search) lines.push(formatSearch(query.search));
  if (query.order) lines.push(`order by ${query.order.keys.map(formatSortKey).join(', ')}`);
  if (query.limit) lines.push(`limit ${formatValue(query.limit.value)}`);
  if (query.offset) lines.push(`offset ${formatValue(query.offset.value)}`);
  return lines.join('\n');
}

/**
 * AST → canonical query text: lower-case keywords, one clause per line in the
 * order `from, select, where, search, order, limit, offset`, and quotes only
 * where the text would not read back as the same value. `parse(format(q))`
 * equals `q` apart from spans.
 */
import { assertNever, type Condition, type Query, type Value } from './ast.js';
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

function formatCondition(condition: Condition, top: boolean): string {
  switch (condition.kind) {
    case 'eq':
      return `${formatField(condition.field.name)} = ${formatValue(condition.value)}`;
    case 'in':
      return `${formatField(condition.field.name)} in (${condition.values.map(formatValue).join(', ')})`;
    case 'and': {
      // The where clause is itself an "and" list; nested groups need their parentheses back.
      const text = condition.conditions.map((c) => formatCondition(c, false)).join(' and ');
      return top || condition.conditions.length === 1 ? text : `(${text})`;
    }
    case 'or': {
      const text = condition.conditions.map((c) => formatCondition(c, false)).join(' or ');
      return condition.conditions.length === 1 ? text : `(${text})`;
    }
    default:
      return assertNever(condition, 'condition');
  }
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
  if (query.select) lines.push(`select ${query.select.fields.map((f) => formatField(f.name)).join(', ')}`);
  const condition = query.where?.condition;
  // An empty "and" (possible only in a built AST) holds for every record: the same as no where clause.
  if (condition && !(condition.kind === 'and' && condition.conditions.length === 0)) {
    lines.push(`where ${formatCondition(condition, true)}`);
  }
  if (query.search) {
    const text = query.search.text;
    lines.push(`search ${text.kind === 'param' ? `$${text.name}` : formatString(text.value)}`);
  }
  if (query.order) {
    const keys = query.order.keys.map((k) => formatField(k.field.name) + (k.direction === 'desc' ? ' desc' : ''));
    lines.push(`order by ${keys.join(', ')}`);
  }
  if (query.limit) lines.push(`limit ${formatValue(query.limit.value)}`);
  if (query.offset) lines.push(`offset ${formatValue(query.offset.value)}`);
  return lines.join('\n');
}

/**
 * AST → canonical query text: lower-case keywords, one clause per line in the
 * order `from, join, select, where, search, group by, having, qualify, facet, order
 * by, limit, offset`, and quotes only where the text would not read back as
 * the same value. `parse(format(q))` equals `q` apart from spans.
 */
import {
  assertNever, querySources, unionMembers, type Aggregate, type Bucket, type CompareOperator, type ComparisonOperator, type Condition, type Expression,
  type FacetItem, type Field, type From, type Operand, type Parameter, type Query, type Search, type SortKey, type StringValue, type Value,
} from './ast.js';
import { formatString, keywords, scanBareword, softKeywordTokens } from './syntax/tokens.js';

const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

/** Whether `text` reads back as one bareword (or UUID) token, i.e. needs no quotes. */
function isBare(text: string): boolean {
  if (UUID.test(text)) return true;
  return text.length > 0 && scanBareword(text, 0) === text.length && !keywords.has(text.toLowerCase());
}

// Quoting a string literal lives with the lexer's reading of one (syntax/tokens.ts), which the parser's own messages also use.
export { formatString };

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
      // A bareword with a dot on the right of a comparison may read as a qualified field (`= c.code`): quoted, it is a value.
      return value.value.includes('.') ? formatString(value.value) : formatText(value.value);
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

/** How a query's fields are written: qualified ones as `alias.field`; others quoted where a dot would qualify them. */
type FieldWriter = (operand: Operand | Bucket) => string;

const comparisonText = { eq: '=', ...operatorText } as const satisfies Record<ComparisonOperator, string>;

/** How tightly each kind of expression binds (docs/expressions.md): a looser operand of a tighter operator is parenthesised. */
function precedence(expression: Expression): number {
  switch (expression.kind) {
    case 'binary':
      return expression.op === '||' ? 1 : expression.op === '+' || expression.op === '-' ? 2 : 3;
    case 'negate':
      return 4;
    case 'cast':
      return expression.shorthand === true ? 5 : 6;
    case 'number':
      // a negative number reads as a minus before it, as a unary minus binds
      return expression.value < 0 || (expression.text ?? '').startsWith('-') ? 4 : 6;
    default:
      return 6;
  }
}

/**
 * An expression as text, with the parentheses its precedence needs and no
 * more. Text is always quoted (a bareword in an expression is a field); on
 * the right of a comparison an unqualified field is in backticks, since a
 * bareword there is a value.
 */
function formatExpression(expression: Expression, field: FieldWriter, right = false): string {
  const sub = (e: Expression, min: number): string => {
    const text = formatExpression(e, field);
    return precedence(e) < min ? `(${text})` : text;
  };
  switch (expression.kind) {
    case 'field':
      if (right && expression.qualifier === undefined) return `\`${expression.name.replaceAll('`', '``')}\``;
      return field(expression);
    case 'aggregate':
    case 'bucket':
      return field(expression);
    case 'string':
      return formatString(expression.value);
    case 'number':
      return expression.text ?? String(expression.value);
    case 'boolean':
    case 'null':
    case 'param':
      return formatValue(expression);
    case 'binary': {
      const p = precedence(expression);
      return `${sub(expression.left, p)} ${expression.op} ${sub(expression.right, p + 1)}`;
    }
    case 'negate': {
      const text = sub(expression.operand, 5);
      // `--` would start a comment, and `-1` is the number whose cast `-1::int` would be
      return /^[-0-9]/.test(text) ? `- ${text}` : `-${text}`;
    }
    case 'cast':
      return expression.shorthand === true ? `${sub(expression.operand, 5)}::${expression.type}` : `cast(${formatExpression(expression.operand, field)} as ${expression.type})`;
    case 'call':
      return `${expression.fn}(${expression.args.map((arg) => formatExpression(arg, field)).join(', ')})`;
    case 'case': {
      const whens = expression.whens.map((when) => ` when ${formatCondition(when.condition, true, field)} then ${formatExpression(when.result, field)}`).join('');
      return `case${whens}${expression.else === undefined ? '' : ` else ${formatExpression(expression.else, field)}`} end`;
    }
    case 'window': {
      const call = expression.call;
      const called = call.kind === 'aggregate' ? field(call) : `${call.fn}(${call.args.map((arg) => formatExpression(arg, field)).join(', ')})`;
      const parts = [
        ...(expression.partition.length === 0 ? [] : [`partition by ${expression.partition.map((e) => formatExpression(e, field)).join(', ')}`]),
        ...(expression.order.length === 0 ? [] : [`order by ${expression.order.map((key) => formatSortKey(key, field)).join(', ')}`]),
      ];
      return `${called} over (${parts.join(' ')})`;
    }
    default:
      return assertNever(expression, 'expression');
  }
}

/** A condition as text. `top`: the whole `where`, whose `and` list needs no parentheses. */
function formatCondition<F extends Operand>(condition: Condition<F>, top: boolean, field: FieldWriter): string {
  switch (condition.kind) {
    case 'eq':
      return `${field(condition.field)} = ${formatValue(condition.value)}`;
    case 'compare':
      return `${field(condition.field)} ${operatorText[condition.op]} ${formatValue(condition.value)}`;
    case 'in':
      return `${field(condition.field)} in (${condition.values.map(formatValue).join(', ')})`;
    case 'between':
      return `${field(condition.field)} between ${formatValue(condition.low)} and ${formatValue(condition.high)}`;
    case 'like':
      return `${field(condition.field)} ${condition.ignoreCase ? 'ilike' : 'like'} ${formatPattern(condition.pattern)}`;
    case 'is-null':
      return `${field(condition.field)} is null`;
    case 'comparison':
      return `${formatExpression(condition.left, field)} ${comparisonText[condition.op]} ${formatExpression(condition.right, field, true)}`;
    case 'not':
      return formatNot(condition.condition, field);
    case 'and':
    case 'or': {
      if (condition.conditions.length === 1) return formatCondition(condition.conditions[0]!, top, field);
      const text = condition.conditions.map((c) => formatCondition(c, false, field)).join(` ${condition.kind} `);
      // The where clause is itself an "and" list; an "or" keeps its parentheses even there, as people write it.
      return top && condition.kind === 'and' ? text : `(${text})`;
    }
    default:
      return assertNever(condition, 'condition');
  }
}

/** `not c`, with the negated forms of `in`, `like` and `is null` written the way people say them. */
function formatNot<F extends Operand>(inner: Condition<F>, field: FieldWriter): string {
  switch (inner.kind) {
    case 'in':
      return `${field(inner.field)} not in (${inner.values.map(formatValue).join(', ')})`;
    case 'like':
      return `${field(inner.field)} not ${inner.ignoreCase ? 'ilike' : 'like'} ${formatPattern(inner.pattern)}`;
    case 'is-null':
      return `${field(inner.field)} is not null`;
    case 'eq':
    case 'compare':
    case 'between':
    case 'comparison':
      return `not ${formatCondition(inner, false, field)}`;
    case 'not':
      return `not (${formatNot(inner.condition, field)})`;
    case 'and':
    case 'or':
      // A one-member list (possible only in a built AST) is that member, which may need its own parentheses.
      return inner.conditions.length === 1 ? formatNot(inner.conditions[0]!, field) : `not ${formatCondition(inner, false, field)}`;
    default:
      return assertNever(inner, 'condition');
  }
}

function formatPattern(pattern: StringValue | Parameter): string {
  return pattern.kind === 'param' ? `$${pattern.name}` : formatString(pattern.value);
}

function formatSearch(search: Search, field: FieldWriter): string {
  const text = (value: StringValue | Parameter) => (value.kind === 'param' ? `$${value.name}` : formatString(value.value));
  const what =
    search.fields !== undefined
      ? search.fields.map((f) => `${field(f.field)} ${text(f.text)}`).join(', ')
      : search.text !== undefined
        ? text(search.text)
        : '""';
  return `search ${what}${search.language === undefined ? '' : ` language ${formatText(search.language.value)}`}`;
}

function formatSortKey(key: SortKey, field: FieldWriter): string {
  return formatExpression(key.field, field) + (key.direction === 'desc' ? ' desc' : '') + (key.nulls === undefined ? '' : ` nulls ${key.nulls}`);
}

const softWords: ReadonlySet<string> = new Set(softKeywordTokens.map((t) => t.LABEL!.toLowerCase()));

/** `from R`, `from R e`, `from a union b`; `as` before an alias that is itself a word of the grammar (`from t as group`). */
function formatSource(from: From): string {
  const text = unionMembers(from).map((resource) => (resource.kind === 'param' ? `$${resource.name}` : formatText(resource.value))).join(' union ');
  if (from.alias === undefined) return text;
  return `${text} ${softWords.has(from.alias.name.toLowerCase()) ? 'as ' : ''}${from.alias.name}`;
}

/**
 * The writer of a query's fields: a qualified field as `alias.field`; an
 * unqualified name whose part before a dot names a resource of the query
 * in backticks, so it is not read as qualified.
 */
function fieldWriter(query: Query): FieldWriter {
  const declared = new Set<string>();
  for (const from of querySources(query)) {
    const name = from.alias?.name ?? (from.resource.kind === 'string' ? from.resource.value : undefined);
    if (name !== undefined) declared.add(name);
  }
  const plain = (field: Field): string => {
    if (field.qualifier !== undefined) {
      const bare = formatField(field.name);
      return `${field.qualifier}.${bare}`;
    }
    const dot = field.name.indexOf('.');
    if (dot > 0 && declared.has(field.name.slice(0, dot))) return `\`${field.name.replaceAll('`', '``')}\``;
    return formatField(field.name);
  };
  const write = (operand: Operand | Bucket): string => {
    switch (operand.kind) {
      case 'field':
        return plain(operand);
      case 'aggregate':
        return formatAggregate(operand, (argument) => formatExpression(argument, write));
      case 'bucket':
        return operand.fn === 'bucket' ? `bucket(${plain(operand.field)}, ${String(operand.width?.value)})` : `${operand.fn}(${plain(operand.field)})`;
      default:
        return assertNever(operand, 'operand');
    }
  };
  return write;
}

/**
 * An expression as the language writes it, its fields as written (for
 * explain and the plan's operators).
 * @example expressionText(parse('from t select round(price * qty, 1)').select!.items[0]!.value) // 'round(price * qty, 1)'
 */
export function expressionText(expression: Expression): string {
  return formatExpression(expression, fieldWriter({ kind: 'query', span: expression.span, from: { kind: 'from', span: expression.span, resource: { kind: 'string', span: expression.span, value: '' } } }));
}

function formatAggregate(aggregate: Aggregate, field: (argument: Expression) => string): string {
  if (aggregate.field === undefined) return `${aggregate.fn}(*)`;
  return `${aggregate.fn}(${aggregate.distinct ? 'distinct ' : ''}${field(aggregate.field)})`;
}

function formatFacetItem(item: FacetItem, field: FieldWriter): string {
  const by = item.by === undefined ? '' : ` by ${item.by.kind === 'unit' ? item.by.unit : String(item.by.value)}`;
  return `${field(item.field)}${by}${item.top === undefined ? '' : ` top ${String(item.top.value)}`}`;
}

/**
 * The canonical text of a query.
 * @example
 * format(parse('FROM courses LIMIT 5 WHERE subject = "math"'))
 * // → 'from courses\nwhere subject = math\nlimit 5'
 * // (both compile to { resource_id: 'courses', filters: { subject: 'math' }, limit: 5 })
 * @example
 * format(parse('from courses select subject, count(*) as n group by subject having n > 3'))
 * // → 'from courses\nselect subject, count(*) as n\ngroup by subject\nhaving n > 3'
 */
export function format(query: Query): string {
  const field = fieldWriter(query);
  const write = (value: Expression): string => formatExpression(value, field);
  const lines = [`from ${formatSource(query.from)}`];
  for (const join of query.joins ?? []) {
    const on = join.on.map((pair) => `${field(pair.left)} = ${field(pair.right)}`).join(' and ');
    lines.push(`${join.left ? 'left ' : ''}join ${formatSource(join.source)} on ${on}`);
  }
  if (query.select) {
    const items = query.select.items.map((item) => (item.value.kind === 'star' ? '*' : write(item.value)) + (item.as === undefined ? '' : ` as ${formatName(item.as.name)}`));
    lines.push(`select ${query.select.distinct ? 'distinct ' : ''}${items.join(', ')}`);
  }
  const condition = query.where?.condition;
  // An empty "and" (possible only in a built AST) holds for every record: the same as no where clause.
  if (condition && !(condition.kind === 'and' && condition.conditions.length === 0)) {
    lines.push(`where ${formatCondition(condition, true, field)}`);
  }
  if (query.search) lines.push(formatSearch(query.search, field));
  if (query.group) lines.push(`group by ${query.group.keys.map(write).join(', ')}`);
  if (query.having) lines.push(`having ${formatCondition(query.having.condition, true, field)}`);
  if (query.qualify) lines.push(`qualify ${formatCondition(query.qualify.condition, true, field)}`);
  if (query.facet) lines.push(`facet ${query.facet.items.map((item) => formatFacetItem(item, field)).join(', ')}`);
  if (query.order) lines.push(`order by ${query.order.keys.map((key) => formatSortKey(key, field)).join(', ')}`);
  if (query.limit) lines.push(`limit ${formatValue(query.limit.value)}`);
  if (query.offset) lines.push(`offset ${formatValue(query.offset.value)}`);
  return lines.join('\n');
}

/** An `as` name: bare when it reads back as one bareword, else in backticks. */
function formatName(name: string): string {
  return formatField(name);
}

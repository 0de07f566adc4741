/**
 * Syntax tree → AST. The grammar (`parser.ts`) has no actions; meaning lives
 * here: strings are unescaped, numbers read, clauses collected (each at most
 * once), groups of one condition collapsed, and the checks that the grammar
 * leaves open on purpose (mixed `and`/`or`, integers for limit/offset) are
 * made with precise spans.
 *
 * This is the only place that turns Chevrotain positions into spans. The
 * lexer tracks start offsets only (`positionTracking: 'onlyOffset'`, the
 * fastest mode), so a token's half-open end is its start plus its image
 * length; Chevrotain's own inclusive `endOffset` is never read.
 */
import { compareDecimal } from '../datastore/values.js';
import type { CstNode, IToken } from 'chevrotain';
import type {
  CompareOperator, Condition, Field, FieldSearch, From, Limit, NumberValue, Offset, Order, Parameter, Query, Search,
  Select, SortKey, StringValue, Value, Where,
} from '../ast.js';
import type {
  ComparisonCstNode, ConditionCstNode, FieldCstNode, GroupCstChildren, LimitClauseCstChildren, OffsetClauseCstChildren,
  OperatorCstNode, OrderClauseCstChildren, QueryCstNode, ResourceCstChildren, SearchClauseCstChildren,
  SelectClauseCstChildren, ValueCstNode, WhereClauseCstChildren,
} from './cst.generated.js';
import { queryError } from '../errors.js';
import type { Span } from '../span.js';

/** The half-open span of a token. */
export function tokenSpan(token: IToken): Span {
  return { start: token.startOffset, end: token.startOffset + token.image.length };
}

function tokenEnd(token: IToken): number {
  return token.startOffset + token.image.length;
}

/**
 * The text of a valid string token (`"…"` or `'…'`): the lexer only lets
 * through strings whose escapes are all known, so this cannot fail.
 */
export function unescapeString(image: string): string {
  const body = image.slice(1, -1);
  if (!body.includes('\\')) return body;
  let out = '';
  let i = 0;
  while (i < body.length) {
    const at = body.indexOf('\\', i);
    if (at < 0) {
      out += body.slice(i);
      break;
    }
    out += body.slice(i, at);
    const next = body[at + 1];
    if (next === 'u') {
      out += String.fromCharCode(Number.parseInt(body.slice(at + 2, at + 6), 16));
      i = at + 6;
    } else {
      // `\%` and `\_` keep their backslash: the like pattern's escape of a wildcard, as SQL writes it
      out += next === 'n' ? '\n' : next === 't' ? '\t' : next === '%' || next === '_' ? `\\${next}` : next;
      i = at + 2;
    }
  }
  return out;
}

/** Builds the AST from the parser's syntax tree; throws `QueryError` for what the grammar let through. */
export function toAst(cst: CstNode, source: string): Query {
  // The one place the tree's type is asserted: `queryParser.query()` returns the `query` rule's node.
  const c = (cst as QueryCstNode).children;
  const fromToken = c.From[0]!;
  const resource = readResource(c.resource[0]!.children, source);
  const from: From = { kind: 'from', span: { start: fromToken.startOffset, end: resource.span.end }, resource };
  let end = from.span.end;
  let where: Where | undefined;
  let search: Search | undefined;
  let select: Select | undefined;
  let order: Order | undefined;
  let limit: Limit | undefined;
  let offset: Offset | undefined;

  for (const clause of c.clause ?? []) {
    const inner = clause.children;
    if (inner.whereClause !== undefined) {
      const node = readWhere(inner.whereClause[0]!.children, source);
      if (where) throw duplicateClause('where', node.span, source);
      where = node;
      end = node.span.end;
    } else if (inner.searchClause !== undefined) {
      const node = readSearch(inner.searchClause[0]!.children, source);
      if (search) throw duplicateClause('search', node.span, source);
      search = node;
      end = node.span.end;
    } else if (inner.selectClause !== undefined) {
      const node = readSelect(inner.selectClause[0]!.children, source);
      if (select) throw duplicateClause('select', node.span, source);
      select = node;
      end = node.span.end;
    } else if (inner.orderClause !== undefined) {
      const node = readOrder(inner.orderClause[0]!.children, source);
      if (order) throw duplicateClause('order by', node.span, source);
      order = node;
      end = node.span.end;
    } else if (inner.limitClause !== undefined) {
      const l = inner.limitClause[0]!.children;
      const value = readCount(l, 'limit', source);
      const node: Limit = { kind: 'limit', span: { start: l.Limit[0]!.startOffset, end: value.span.end }, value };
      if (limit) throw duplicateClause('limit', node.span, source);
      limit = node;
      end = node.span.end;
    } else if (inner.offsetClause !== undefined) {
      const o = inner.offsetClause[0]!.children;
      const value = readCount(o, 'offset', source);
      const node: Offset = { kind: 'offset', span: { start: o.Offset[0]!.startOffset, end: value.span.end }, value };
      if (offset) throw duplicateClause('offset', node.span, source);
      offset = node;
      end = node.span.end;
    } else {
      throw new Error(`unknown clause ${Object.keys(inner).join()}`);
    }
  }

  // Only the clauses that are there: an absent clause is an absent key, so
  // deep equality ignores how a query was built.
  const query: { -readonly [K in keyof Query]: Query[K] } = {
    kind: 'query',
    span: { start: fromToken.startOffset, end },
    from,
  };
  if (where) query.where = where;
  if (search) query.search = search;
  if (select) query.select = select;
  if (order) query.order = order;
  if (limit) query.limit = limit;
  if (offset) query.offset = offset;
  return query;
}

function duplicateClause(name: string, span: Span, source: string) {
  return queryError('DUPLICATE_CLAUSE', span, [name], {
    source,
    hint:
      name === 'where'
        ? 'join all conditions in one where clause with "and"'
        : name === 'select' || name === 'order by'
          ? `list everything in one ${name} clause, separated by ","`
          : `remove one of the two ${name} clauses`,
  });
}

function readResource(c: ResourceCstChildren, source: string): StringValue | Parameter {
  if (c.Bareword !== undefined) return textOf(c.Bareword[0]!);
  if (c.Uuid !== undefined) return textOf(c.Uuid[0]!);
  if (c.String !== undefined) return stringOf(c.String[0]!, source);
  return parameterOf(c.Parameter![0]!);
}

/** A bareword, UUID or date: its text is the value. */
function textOf(token: IToken): StringValue {
  return { kind: 'string', span: tokenSpan(token), value: token.image };
}

/** A string anywhere but a like pattern: `\%` and `\_` escape a like pattern's wildcards and mean nothing here. */
function stringOf(token: IToken, source: string): StringValue {
  const at = likeEscapeAt(token.image);
  if (at >= 0) {
    const start = token.startOffset + at;
    const escape = token.image.slice(at, at + 2);
    throw queryError('INVALID_ESCAPE', { start, end: start + 2 }, [escape], {
      source,
      found: escape,
      hint: `${escape} escapes a wildcard of a like pattern (f like "100\\%"); elsewhere write ${escape.replace('\\', '\\\\')} for a backslash and the character`,
    });
  }
  return likePatternOf(token);
}

function likePatternOf(token: IToken): StringValue {
  return { kind: 'string', span: tokenSpan(token), value: unescapeString(token.image) };
}

/** Where in a string token the first `\%` or `\_` escape is, or -1. */
function likeEscapeAt(image: string): number {
  for (let i = image.indexOf('\\'); i >= 0; i = image.indexOf('\\', i + 2)) {
    const next = image[i + 1];
    if (next === '%' || next === '_') return i;
  }
  return -1;
}

function parameterOf(token: IToken): Parameter {
  return { kind: 'param', span: tokenSpan(token), name: token.image.slice(1) };
}

/** The rule is one `OR` of terminals, so exactly one key is set; the common ones are tried first. */
function readValue(node: ValueCstNode, source: string): Value {
  const c = node.children;
  if (c.Bareword !== undefined) return textOf(c.Bareword[0]!);
  if (c.Number !== undefined) return readNumber(c.Number[0]!, source);
  if (c.String !== undefined) return stringOf(c.String[0]!, source);
  if (c.Uuid !== undefined) return textOf(c.Uuid[0]!);
  if (c.DateTime !== undefined) return textOf(c.DateTime[0]!);
  if (c.True !== undefined) return { kind: 'boolean', span: tokenSpan(c.True[0]!), value: true };
  if (c.False !== undefined) return { kind: 'boolean', span: tokenSpan(c.False[0]!), value: false };
  if (c.Null !== undefined) return { kind: 'null', span: tokenSpan(c.Null[0]!) };
  return parameterOf(c.Parameter![0]!);
}

/**
 * A number as written. One with a leading zero (`00012`) lexes as `0` and
 * `0012`, so it never gets here: `parse` hints to quote it.
 */
function readNumber(token: IToken, source: string): NumberValue {
  const value = Number(token.image);
  const span = tokenSpan(token);
  if (!Number.isFinite(value)) {
    throw queryError('NUMBER_OUT_OF_RANGE', span, [token.image], {
      source,
      found: token.image,
      hint: `to compare with the text, quote it: "${token.image}"`,
    });
  }
  // A number a double cannot hold (an int8 id beyond 2^53, a decimal with 18 digits) would silently
  // compare as its neighbour; quoted, it reaches the portal (and the engines) as the text it is.
  // Written as the double prints (nearly every literal: `5`, `2.5`), it is exact without a closer look.
  if (String(value) !== token.image && compareDecimal(value, token.image) !== 0) {
    throw queryError('NUMBER_NOT_EXACT', span, [token.image, String(value)], {
      source,
      found: token.image,
      hint: `quote it to compare the exact value: "${token.image}" (a number column reads the text as the number it is)`,
    });
  }
  // `-0` reads as 0: equal queries give equal ASTs, and the request never carries -0.
  return { kind: 'number', span, value: value === 0 ? 0 : value };
}

/** `limit n` / `offset n`: a whole number ≥ 0 that a request can carry exactly, or a parameter. */
function readCount(c: LimitClauseCstChildren | OffsetClauseCstChildren, what: 'limit' | 'offset', source: string): NumberValue | Parameter {
  if (c.Parameter !== undefined) return parameterOf(c.Parameter[0]!);
  const token = c.Number![0]!;
  const span = tokenSpan(token);
  const value = Number(token.image);
  if (value < 0 || (Number.isFinite(value) && !Number.isInteger(value))) {
    throw queryError('INVALID_INTEGER', span, [what, token.image], {
      source,
      found: token.image,
      hint: value < 0 ? `${what} counts records, so it cannot be negative` : `write a whole number, such as ${Math.floor(value)}`,
    });
  }
  if (!Number.isFinite(value) || value > Number.MAX_SAFE_INTEGER) {
    throw queryError('NUMBER_OUT_OF_RANGE', span, [token.image], {
      source,
      found: token.image,
      hint: `${what} must be at most ${Number.MAX_SAFE_INTEGER}`,
    });
  }
  return { kind: 'number', span, value: value === 0 ? 0 : value };
}

function readField(node: FieldCstNode, source: string): Field {
  const c = node.children;
  if (c.BacktickField === undefined) {
    const token = (c.Bareword ?? c.Uuid)![0]!;
    return { kind: 'field', span: tokenSpan(token), name: token.image };
  }
  const token = c.BacktickField[0]!;
  const span = tokenSpan(token);
  const name = token.image.slice(1, -1).replaceAll('``', '`');
  if (name === '') throw queryError('EMPTY_FIELD_NAME', span, [], { source, found: token.image });
  return { kind: 'field', span, name };
}

const operators = {
  Equals: undefined,
  NotEquals: 'ne',
  Less: 'lt',
  LessEquals: 'lte',
  Greater: 'gt',
  GreaterEquals: 'gte',
} as const satisfies Record<keyof OperatorCstNode['children'], CompareOperator | undefined>;

function readOperator(node: OperatorCstNode): CompareOperator | undefined {
  const c = node.children;
  for (const name of Object.keys(operators) as (keyof typeof operators)[]) if (c[name] !== undefined) return operators[name];
  throw new Error('an operator node without an operator');
}

/** `[not] (comparison | group)`: a `not` wraps what follows it and starts its span. */
function readCondition(node: ConditionCstNode, source: string): Condition {
  const c = node.children;
  const inner = c.comparison !== undefined ? readComparison(c.comparison[0]!, source) : readGroup(c.group![0]!.children, source);
  if (c.Not === undefined) return inner;
  const end = c.group !== undefined ? tokenEnd(c.group[0]!.children.RParen[0]!) : inner.span.end;
  return { kind: 'not', span: { start: c.Not[0]!.startOffset, end }, condition: inner };
}

function readComparison(node: ComparisonCstNode, source: string): Condition {
  const c = node.children;
  const field = readField(c.field[0]!, source);
  const start = field.span.start;
  let test: Condition;
  if (c.operator !== undefined) {
    const value = readValue(c.value![0]!, source);
    const op = readOperator(c.operator[0]!);
    const span = { start, end: value.span.end };
    return op === undefined ? { kind: 'eq', span, field, value } : { kind: 'compare', span, op, field, value };
  }
  if (c.valueList !== undefined) {
    const list = c.valueList[0]!.children;
    const values = list.value === undefined ? [] : list.value.map((v) => readValue(v, source));
    test = { kind: 'in', span: { start, end: tokenEnd(list.RParen[0]!) }, field, values };
  } else if (c.Between !== undefined) {
    const low = readValue(c.value![0]!, source);
    const high = readValue(c.value![1]!, source);
    return { kind: 'between', span: { start, end: high.span.end }, field, low, high };
  } else if (c.Like !== undefined || c.Ilike !== undefined) {
    const pattern = c.String !== undefined ? likePatternOf(c.String[0]!) : parameterOf(c.Parameter![0]!);
    test = { kind: 'like', span: { start, end: pattern.span.end }, field, pattern, ignoreCase: c.Ilike !== undefined };
  } else {
    test = { kind: 'is-null', span: { start, end: tokenEnd(c.Null![0]!) }, field };
  }
  // `f not in (…)`, `f not like …` and `f is not null` are a `not` around the positive test.
  return c.Not === undefined ? test : { kind: 'not', span: test.span, condition: test };
}

function readGroup(group: GroupCstChildren, source: string): Condition {
  const conditions = group.condition.map((member) => readCondition(member, source));
  const connective = readConnective(group, source);
  // A group of one condition is that condition: `(a = 1)` and `a = 1` give the same AST.
  if (connective === undefined) return conditions[0]!;
  return { kind: connective, span: { start: group.LParen[0]!.startOffset, end: tokenEnd(group.RParen[0]!) }, conditions };
}

/**
 * The text a condition covers in the source, parentheses included: a group
 * of one condition is read as that condition, whose span leaves them out.
 */
function outerSpan(node: ConditionCstNode, condition: Condition): Span {
  const group = node.children.group;
  if (group === undefined) return condition.span;
  const g = group[0]!.children;
  const start = node.children.Not?.[0]?.startOffset ?? g.LParen[0]!.startOffset;
  return { start, end: tokenEnd(g.RParen[0]!) };
}

/** The one connective of a list of conditions, or MIXED_AND_OR at the first that differs. */
function readConnective(c: WhereClauseCstChildren | GroupCstChildren, source: string): 'and' | 'or' | undefined {
  const and = c.And?.[0];
  const or = c.Or?.[0];
  if (and && or) {
    const second = and.startOffset < or.startOffset ? or : and;
    throw queryError('MIXED_AND_OR', tokenSpan(second), [], {
      source,
      found: second.image,
      hint: 'put the conditions joined by "or" in parentheses, e.g. where a = 1 and (b = 2 or b = 3)',
    });
  }
  return and ? 'and' : or ? 'or' : undefined;
}

function readWhere(c: WhereClauseCstChildren, source: string): Where {
  const conditions = c.condition.map((member) => readCondition(member, source));
  const connective = readConnective(c, source);
  const lastNode = c.condition[c.condition.length - 1]!;
  const last = outerSpan(lastNode, conditions[conditions.length - 1]!);
  const span = { start: c.Where[0]!.startOffset, end: last.end };
  if (connective === undefined) return { kind: 'where', span, condition: conditions[0]! };
  const first = outerSpan(c.condition[0]!, conditions[0]!);
  return { kind: 'where', span, condition: { kind: connective, span: { start: first.start, end: last.end }, conditions } };
}

function readSearch(c: SearchClauseCstChildren, source: string): Search {
  const start = c.Search[0]!.startOffset;
  const languageToken = c.Language?.[0];
  // The language name is the `Bareword` or the `String` after `language`.
  let language: StringValue | undefined;
  let textString = c.String?.[0];
  if (languageToken !== undefined) {
    const nameToken = c.Bareword?.[0] ?? c.String![c.String!.length - 1]!;
    language = nameToken.tokenType.name === 'String' ? stringOf(nameToken, source) : textOf(nameToken);
    if (textString === nameToken) textString = undefined;
  }
  const end = (to: number) => ({ start, end: language?.span.end ?? to });
  if (c.fieldSearch !== undefined) {
    const fields = c.fieldSearch.map((node): FieldSearch => {
      const f = node.children;
      const field = readField(f.field[0]!, source);
      const text = f.String !== undefined ? stringOf(f.String[0]!, source) : parameterOf(f.Parameter![0]!);
      return { kind: 'field-search', span: { start: field.span.start, end: text.span.end }, field, text };
    });
    const search: Search = { kind: 'search', span: end(fields[fields.length - 1]!.span.end), fields };
    return language === undefined ? search : { ...search, language };
  }
  const text = textString !== undefined ? stringOf(textString, source) : parameterOf(c.Parameter![0]!);
  const search: Search = { kind: 'search', span: end(text.span.end), text };
  return language === undefined ? search : { ...search, language };
}

function readSelect(c: SelectClauseCstChildren, source: string): Select {
  const fields = c.field.map((f) => readField(f, source));
  const span = { start: c.Select[0]!.startOffset, end: fields[fields.length - 1]!.span.end };
  return c.Distinct === undefined ? { kind: 'select', span, fields } : { kind: 'select', span, fields, distinct: true };
}

function readOrder(c: OrderClauseCstChildren, source: string): Order {
  const keys = c.sortKey.map((node): SortKey => {
    const k = node.children;
    const field = readField(k.field[0]!, source);
    const last = k.First ?? k.Last ?? k.Desc ?? k.Asc;
    const key: SortKey = {
      kind: 'sort-key',
      span: { start: field.span.start, end: last ? tokenEnd(last[0]!) : field.span.end },
      field,
      direction: k.Desc !== undefined ? 'desc' : 'asc',
    };
    if (k.First !== undefined) return { ...key, nulls: 'first' };
    if (k.Last !== undefined) return { ...key, nulls: 'last' };
    return key;
  });
  return { kind: 'order', span: { start: c.Order[0]!.startOffset, end: keys[keys.length - 1]!.span.end }, keys };
}

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
import type { CstNode, IToken } from 'chevrotain';
import type {
  Condition, Field, From, Limit, NumberValue, Offset, Order, Parameter, Query, Search, Select, SortKey,
  StringValue, Value, Where,
} from '../ast.js';
import { queryError } from '../errors.js';
import type { Span } from '../span.js';

/** The half-open span of a token. */
export function tokenSpan(token: IToken): Span {
  return { start: token.startOffset, end: token.startOffset + token.image.length };
}

function tokenEnd(token: IToken): number {
  return token.startOffset + token.image.length;
}

// ---------------------------------------------------------------------------
// The children of each rule's node, as Chevrotain keys them: by token type
// name for terminals, by rule name for subrules, each an array in source
// order. Reading these known keys directly is much cheaper than walking
// `children` with `for…in`; the keys follow `parser.ts`.

type One<T> = readonly [T];
type Many<T> = readonly T[];

interface QueryNode { readonly From: One<IToken>; readonly resource: One<CstNode>; readonly clause?: Many<CstNode> }
interface ResourceNode {
  readonly Uuid?: One<IToken>;
  readonly Bareword?: One<IToken>;
  readonly String?: One<IToken>;
  readonly Parameter?: One<IToken>;
}
interface ClauseNode {
  readonly whereClause?: One<CstNode>;
  readonly searchClause?: One<CstNode>;
  readonly selectClause?: One<CstNode>;
  readonly orderClause?: One<CstNode>;
  readonly limitClause?: One<CstNode>;
  readonly offsetClause?: One<CstNode>;
}
/** `whereClause` and `group`: conditions joined by `and`/`or` tokens. */
interface ConditionsNode {
  readonly condition: Many<CstNode>;
  readonly And?: Many<IToken>;
  readonly Or?: Many<IToken>;
}
interface WhereNode extends ConditionsNode { readonly Where: One<IToken> }
interface GroupNode extends ConditionsNode { readonly LParen: One<IToken>; readonly RParen: One<IToken> }
interface ConditionNode { readonly comparison?: One<CstNode>; readonly group?: One<CstNode> }
interface ComparisonNode { readonly field: One<CstNode>; readonly value?: One<CstNode>; readonly valueList?: One<CstNode> }
interface ValueListNode { readonly value?: Many<CstNode>; readonly RParen: One<IToken> }
interface SearchNode { readonly Search: One<IToken>; readonly String?: One<IToken>; readonly Parameter?: One<IToken> }
interface SelectNode { readonly Select: One<IToken>; readonly field: Many<CstNode> }
interface OrderNode { readonly Order: One<IToken>; readonly sortKey: Many<CstNode> }
interface SortKeyNode { readonly field: One<CstNode>; readonly Asc?: One<IToken>; readonly Desc?: One<IToken> }
interface CountNode { readonly Number?: One<IToken>; readonly Parameter?: One<IToken> }
interface LimitNode extends CountNode { readonly Limit: One<IToken> }
interface OffsetNode extends CountNode { readonly Offset: One<IToken> }
interface FieldNode { readonly Bareword?: One<IToken>; readonly BacktickField?: One<IToken>; readonly Uuid?: One<IToken> }
interface ValueNode {
  readonly String?: One<IToken>;
  readonly Number?: One<IToken>;
  readonly Bareword?: One<IToken>;
  readonly Uuid?: One<IToken>;
  readonly True?: One<IToken>;
  readonly False?: One<IToken>;
  readonly Null?: One<IToken>;
  readonly Parameter?: One<IToken>;
}

/** A node's children under the shape its rule gives them. */
function childrenOf<T>(node: CstNode): T {
  return node.children as unknown as T;
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
      out += next === 'n' ? '\n' : next === 't' ? '\t' : next;
      i = at + 2;
    }
  }
  return out;
}

/** Builds the AST from the parser's syntax tree; throws `QueryError` for what the grammar let through. */
export function toAst(cst: CstNode, source: string): Query {
  const c = childrenOf<QueryNode>(cst);
  const fromToken = c.From[0];
  const resource = readResource(childrenOf<ResourceNode>(c.resource[0]));
  const from: From = { kind: 'from', span: { start: fromToken.startOffset, end: resource.span.end }, resource };
  let end = from.span.end;
  let where: Where | undefined;
  let search: Search | undefined;
  let select: Select | undefined;
  let order: Order | undefined;
  let limit: Limit | undefined;
  let offset: Offset | undefined;

  for (const clause of c.clause ?? []) {
    const inner = childrenOf<ClauseNode>(clause);
    if (inner.whereClause !== undefined) {
      const node = readWhere(childrenOf<WhereNode>(inner.whereClause[0]), source);
      if (where) throw duplicateClause('where', node.span, source);
      where = node;
      end = node.span.end;
    } else if (inner.searchClause !== undefined) {
      const node = readSearch(childrenOf<SearchNode>(inner.searchClause[0]));
      if (search) throw duplicateClause('search', node.span, source);
      search = node;
      end = node.span.end;
    } else if (inner.selectClause !== undefined) {
      const node = readSelect(childrenOf<SelectNode>(inner.selectClause[0]), source);
      if (select) throw duplicateClause('select', node.span, source);
      select = node;
      end = node.span.end;
    } else if (inner.orderClause !== undefined) {
      const node = readOrder(childrenOf<OrderNode>(inner.orderClause[0]), source);
      if (order) throw duplicateClause('order by', node.span, source);
      order = node;
      end = node.span.end;
    } else if (inner.limitClause !== undefined) {
      const l = childrenOf<LimitNode>(inner.limitClause[0]);
      const value = readCount(l, 'limit', source);
      const node: Limit = { kind: 'limit', span: { start: l.Limit[0].startOffset, end: value.span.end }, value };
      if (limit) throw duplicateClause('limit', node.span, source);
      limit = node;
      end = node.span.end;
    } else if (inner.offsetClause !== undefined) {
      const o = childrenOf<OffsetNode>(inner.offsetClause[0]);
      const value = readCount(o, 'offset', source);
      const node: Offset = { kind: 'offset', span: { start: o.Offset[0].startOffset, end: value.span.end }, value };
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

function readResource(c: ResourceNode): StringValue | Parameter {
  if (c.Bareword !== undefined) return textOf(c.Bareword[0]);
  if (c.Uuid !== undefined) return textOf(c.Uuid[0]);
  if (c.String !== undefined) return stringOf(c.String[0]);
  return parameterOf(c.Parameter![0]);
}

/** A bareword or UUID: its text is the value. */
function textOf(token: IToken): StringValue {
  return { kind: 'string', span: tokenSpan(token), value: token.image };
}

function stringOf(token: IToken): StringValue {
  return { kind: 'string', span: tokenSpan(token), value: unescapeString(token.image) };
}

function parameterOf(token: IToken): Parameter {
  return { kind: 'param', span: tokenSpan(token), name: token.image.slice(1) };
}

/** The rule is one `OR` of terminals, so exactly one key is set; the common ones are tried first. */
function readValue(node: CstNode, source: string): Value {
  const c = childrenOf<ValueNode>(node);
  if (c.Bareword !== undefined) return textOf(c.Bareword[0]);
  if (c.Number !== undefined) return readNumber(c.Number[0], source);
  if (c.String !== undefined) return stringOf(c.String[0]);
  if (c.Uuid !== undefined) return textOf(c.Uuid[0]);
  if (c.True !== undefined) return { kind: 'boolean', span: tokenSpan(c.True[0]), value: true };
  if (c.False !== undefined) return { kind: 'boolean', span: tokenSpan(c.False[0]), value: false };
  if (c.Null !== undefined) return { kind: 'null', span: tokenSpan(c.Null[0]) };
  return parameterOf(c.Parameter![0]);
}

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
  // `-0` reads as 0: equal queries give equal ASTs, and the request never carries -0.
  return { kind: 'number', span, value: value === 0 ? 0 : value };
}

/** `limit n` / `offset n`: a whole number ≥ 0 that a request can carry exactly, or a parameter. */
function readCount(c: CountNode, what: 'limit' | 'offset', source: string): NumberValue | Parameter {
  if (c.Parameter !== undefined) return parameterOf(c.Parameter[0]);
  const token = c.Number![0];
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

function readField(node: CstNode, source: string): Field {
  const c = childrenOf<FieldNode>(node);
  if (c.BacktickField === undefined) {
    const token = (c.Bareword ?? c.Uuid)![0];
    return { kind: 'field', span: tokenSpan(token), name: token.image };
  }
  const token = c.BacktickField[0];
  const span = tokenSpan(token);
  const name = token.image.slice(1, -1).replaceAll('``', '`');
  if (name === '') throw queryError('EMPTY_FIELD_NAME', span, [], { source, found: token.image });
  return { kind: 'field', span, name };
}

function readCondition(node: CstNode, source: string): Condition {
  const c = childrenOf<ConditionNode>(node);
  if (c.comparison !== undefined) {
    const comparison = childrenOf<ComparisonNode>(c.comparison[0]);
    const field = readField(comparison.field[0], source);
    if (comparison.valueList !== undefined) {
      const list = childrenOf<ValueListNode>(comparison.valueList[0]);
      const values = list.value === undefined ? [] : list.value.map((v) => readValue(v, source));
      const span = { start: field.span.start, end: tokenEnd(list.RParen[0]) };
      return { kind: 'in', span, field, values };
    }
    const value = readValue(comparison.value![0], source);
    return { kind: 'eq', span: { start: field.span.start, end: value.span.end }, field, value };
  }
  const group = childrenOf<GroupNode>(c.group![0]);
  const conditions = group.condition.map((member) => readCondition(member, source));
  const connective = readConnective(group, source);
  // A group of one condition is that condition: `(a = 1)` and `a = 1` give the same AST.
  if (connective === undefined) return conditions[0]!;
  return { kind: connective, span: { start: group.LParen[0].startOffset, end: tokenEnd(group.RParen[0]) }, conditions };
}

/**
 * The text a condition covers in the source, parentheses included: a group
 * of one condition is read as that condition, whose span leaves them out.
 */
function outerSpan(node: CstNode, condition: Condition): Span {
  const group = childrenOf<ConditionNode>(node).group;
  if (group === undefined) return condition.span;
  const g = childrenOf<GroupNode>(group[0]);
  return { start: g.LParen[0].startOffset, end: tokenEnd(g.RParen[0]) };
}

/** The one connective of a list of conditions, or MIXED_AND_OR at the first that differs. */
function readConnective(c: ConditionsNode, source: string): 'and' | 'or' | undefined {
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

function readWhere(c: WhereNode, source: string): Where {
  const conditions = c.condition.map((member) => readCondition(member, source));
  const connective = readConnective(c, source);
  const lastNode = c.condition[c.condition.length - 1]!;
  const last = outerSpan(lastNode, conditions[conditions.length - 1]!);
  const span = { start: c.Where[0].startOffset, end: last.end };
  if (connective === 'or') {
    const or = c.Or![0]!;
    throw queryError('UNEXPECTED_TOKEN', tokenSpan(or), ['"and"', '"or"'], {
      source,
      expected: ['"and"'],
      found: or.image,
      hint: 'conditions joined by "or" go in parentheses: where (a = 1 or a = 2)',
    });
  }
  if (connective === undefined) return { kind: 'where', span, condition: conditions[0]! };
  const first = outerSpan(c.condition[0]!, conditions[0]!);
  return { kind: 'where', span, condition: { kind: 'and', span: { start: first.start, end: last.end }, conditions } };
}

function readSearch(c: SearchNode): Search {
  const text = c.String !== undefined ? stringOf(c.String[0]) : parameterOf(c.Parameter![0]);
  return { kind: 'search', span: { start: c.Search[0].startOffset, end: text.span.end }, text };
}

function readSelect(c: SelectNode, source: string): Select {
  const fields = c.field.map((f) => readField(f, source));
  return { kind: 'select', span: { start: c.Select[0].startOffset, end: fields[fields.length - 1]!.span.end }, fields };
}

function readOrder(c: OrderNode, source: string): Order {
  const keys = c.sortKey.map((node): SortKey => {
    const k = childrenOf<SortKeyNode>(node);
    const field = readField(k.field[0], source);
    const direction = k.Desc ?? k.Asc;
    return {
      kind: 'sort-key',
      span: { start: field.span.start, end: direction ? tokenEnd(direction[0]) : field.span.end },
      field,
      direction: k.Desc !== undefined ? 'desc' : 'asc',
    };
  });
  return { kind: 'order', span: { start: c.Order[0].startOffset, end: keys[keys.length - 1]!.span.end }, keys };
}

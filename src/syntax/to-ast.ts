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
import type { CstElement, CstNode, IToken } from 'chevrotain';
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

function children(node: CstNode, key: string): CstElement[] | undefined {
  return node.children[key];
}

function tokenOf(node: CstNode, key: string): IToken | undefined {
  return children(node, key)?.[0] as IToken | undefined;
}

function nodeOf(node: CstNode, key: string): CstNode {
  return children(node, key)![0] as CstNode;
}

function nodesOf(node: CstNode, key: string): CstNode[] {
  return (children(node, key) ?? []) as CstNode[];
}

/** The only token of a node whose rule is one `OR` of terminals (`value`, `field`, `resource`). */
function onlyToken(node: CstNode): IToken {
  for (const key in node.children) return node.children[key]![0] as IToken;
  throw new Error(`empty ${node.name} node`);
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
  const fromToken = tokenOf(cst, 'From')!;
  const resource = readResource(onlyToken(nodeOf(cst, 'resource')));
  const from: From = { kind: 'from', span: { start: fromToken.startOffset, end: resource.span.end }, resource };
  let end = from.span.end;
  let where: Where | undefined;
  let search: Search | undefined;
  let select: Select | undefined;
  let order: Order | undefined;
  let limit: Limit | undefined;
  let offset: Offset | undefined;

  const duplicate = (name: string, span: Span) =>
    queryError('DUPLICATE_CLAUSE', span, [name], {
      source,
      hint:
        name === 'where'
          ? 'join all conditions in one where clause with "and"'
          : name === 'select' || name === 'order by'
            ? `list everything in one ${name} clause, separated by ","`
            : `remove one of the two ${name} clauses`,
    });

  for (const clause of nodesOf(cst, 'clause')) {
    const inner = onlyChild(clause);
    switch (inner.name) {
      case 'whereClause': {
        const node = readWhere(inner, source);
        if (where) throw duplicate('where', node.span);
        where = node;
        end = node.span.end;
        break;
      }
      case 'searchClause': {
        const node = readSearch(inner);
        if (search) throw duplicate('search', node.span);
        search = node;
        end = node.span.end;
        break;
      }
      case 'selectClause': {
        const node = readSelect(inner, source);
        if (select) throw duplicate('select', node.span);
        select = node;
        end = node.span.end;
        break;
      }
      case 'orderClause': {
        const node = readOrder(inner, source);
        if (order) throw duplicate('order by', node.span);
        order = node;
        end = node.span.end;
        break;
      }
      case 'limitClause': {
        const keyword = tokenOf(inner, 'Limit')!;
        const value = readCount(inner, 'limit', source);
        const node: Limit = { kind: 'limit', span: { start: keyword.startOffset, end: value.span.end }, value };
        if (limit) throw duplicate('limit', node.span);
        limit = node;
        end = node.span.end;
        break;
      }
      case 'offsetClause': {
        const keyword = tokenOf(inner, 'Offset')!;
        const value = readCount(inner, 'offset', source);
        const node: Offset = { kind: 'offset', span: { start: keyword.startOffset, end: value.span.end }, value };
        if (offset) throw duplicate('offset', node.span);
        offset = node;
        end = node.span.end;
        break;
      }
      default:
        throw new Error(`unknown clause ${inner.name}`);
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

function onlyChild(node: CstNode): CstNode {
  for (const key in node.children) return node.children[key]![0] as CstNode;
  throw new Error(`empty ${node.name} node`);
}

function readResource(token: IToken): StringValue | Parameter {
  const span = tokenSpan(token);
  switch (token.tokenType.name) {
    case 'Parameter':
      return { kind: 'param', span, name: token.image.slice(1) };
    case 'String':
      return { kind: 'string', span, value: unescapeString(token.image) };
    default: // Uuid, Bareword
      return { kind: 'string', span, value: token.image };
  }
}

function readValue(node: CstNode, source: string): Value {
  const token = onlyToken(node);
  const span = tokenSpan(token);
  switch (token.tokenType.name) {
    case 'String':
      return { kind: 'string', span, value: unescapeString(token.image) };
    case 'Number':
      return readNumber(token, source);
    case 'True':
      return { kind: 'boolean', span, value: true };
    case 'False':
      return { kind: 'boolean', span, value: false };
    case 'Null':
      return { kind: 'null', span };
    case 'Parameter':
      return { kind: 'param', span, name: token.image.slice(1) };
    default: // Bareword, Uuid
      return { kind: 'string', span, value: token.image };
  }
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
function readCount(node: CstNode, what: 'limit' | 'offset', source: string): NumberValue | Parameter {
  const param = tokenOf(node, 'Parameter');
  if (param) return { kind: 'param', span: tokenSpan(param), name: param.image.slice(1) };
  const token = tokenOf(node, 'Number')!;
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
  const token = onlyToken(node);
  const span = tokenSpan(token);
  if (token.tokenType.name !== 'BacktickField') return { kind: 'field', span, name: token.image };
  const name = token.image.slice(1, -1).replaceAll('``', '`');
  if (name === '') throw queryError('EMPTY_FIELD_NAME', span, [], { source, found: token.image });
  return { kind: 'field', span, name };
}

/** A condition and the text it covers in the source, parentheses included. */
interface Read {
  readonly node: Condition;
  readonly outer: Span;
}

function readCondition(node: CstNode, source: string): Read {
  const comparison = children(node, 'comparison');
  if (comparison) {
    const cst = comparison[0] as CstNode;
    const field = readField(nodeOf(cst, 'field'), source);
    const valueList = children(cst, 'valueList');
    if (valueList) {
      const list = valueList[0] as CstNode;
      const values = nodesOf(list, 'value').map((v) => readValue(v, source));
      const close = tokenOf(list, 'RParen')!;
      const span = { start: field.span.start, end: tokenSpan(close).end };
      return { node: { kind: 'in', span, field, values }, outer: span };
    }
    const value = readValue(nodeOf(cst, 'value'), source);
    const span = { start: field.span.start, end: value.span.end };
    return { node: { kind: 'eq', span, field, value }, outer: span };
  }
  const group = nodeOf(node, 'group');
  const open = tokenOf(group, 'LParen')!;
  const close = tokenOf(group, 'RParen')!;
  const outer = { start: open.startOffset, end: tokenSpan(close).end };
  const conditions = nodesOf(group, 'condition').map((c) => readCondition(c, source).node);
  const connective = readConnective(group, source);
  // A group of one condition is that condition: `(a = 1)` and `a = 1` give the same AST.
  if (connective === undefined) return { node: conditions[0]!, outer };
  return { node: { kind: connective, span: outer, conditions }, outer };
}

/** The one connective of a list of conditions, or MIXED_AND_OR at the first that differs. */
function readConnective(node: CstNode, source: string): 'and' | 'or' | undefined {
  const and = tokenOf(node, 'And');
  const or = tokenOf(node, 'Or');
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

function readWhere(node: CstNode, source: string): Where {
  const keyword = tokenOf(node, 'Where')!;
  const reads = nodesOf(node, 'condition').map((c) => readCondition(c, source));
  const connective = readConnective(node, source);
  const first = reads[0]!;
  const last = reads[reads.length - 1]!;
  const span = { start: keyword.startOffset, end: last.outer.end };
  if (connective === 'or') {
    const or = tokenOf(node, 'Or')!;
    throw queryError('UNEXPECTED_TOKEN', tokenSpan(or), ['"and"', '"or"'], {
      source,
      expected: ['"and"'],
      found: or.image,
      hint: 'conditions joined by "or" go in parentheses: where (a = 1 or a = 2)',
    });
  }
  if (connective === undefined) return { kind: 'where', span, condition: first.node };
  const conditions = reads.map((r) => r.node);
  return {
    kind: 'where',
    span,
    condition: { kind: 'and', span: { start: first.outer.start, end: last.outer.end }, conditions },
  };
}

function readSearch(node: CstNode): Search {
  const keyword = tokenOf(node, 'Search')!;
  const string = tokenOf(node, 'String');
  const param = tokenOf(node, 'Parameter');
  const text: StringValue | Parameter = string
    ? { kind: 'string', span: tokenSpan(string), value: unescapeString(string.image) }
    : { kind: 'param', span: tokenSpan(param!), name: param!.image.slice(1) };
  return { kind: 'search', span: { start: keyword.startOffset, end: text.span.end }, text };
}

function readSelect(node: CstNode, source: string): Select {
  const keyword = tokenOf(node, 'Select')!;
  const fields = nodesOf(node, 'field').map((f) => readField(f, source));
  return { kind: 'select', span: { start: keyword.startOffset, end: fields[fields.length - 1]!.span.end }, fields };
}

function readOrder(node: CstNode, source: string): Order {
  const keyword = tokenOf(node, 'Order')!;
  const keys = nodesOf(node, 'sortKey').map((k): SortKey => {
    const field = readField(nodeOf(k, 'field'), source);
    const direction = tokenOf(k, 'Desc') ?? tokenOf(k, 'Asc');
    return {
      kind: 'sort-key',
      span: { start: field.span.start, end: direction ? tokenSpan(direction).end : field.span.end },
      field,
      direction: direction?.tokenType.name === 'Desc' ? 'desc' : 'asc',
    };
  });
  return { kind: 'order', span: { start: keyword.startOffset, end: keys[keys.length - 1]!.span.end }, keys };
}

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
import {
  assertNever, type Aggregate, type AggregateFunction, type BinaryOperator, type Bucket, type CompareOperator, type Condition, type Expression,
  type Facet, type FacetItem, type Field, type FieldSearch, type From, type Group, type Having, type Join, type KeyPair, type Limit, type Name,
  type NumberValue, type Offset, type Operand, type Order, type Parameter, type Query, type Search, type Select, type SelectItem, type SortKey,
  type StringValue, type Value, type When, type Where, type Qualify, type Window, type WindowCall,
} from '../ast.js';
import type {
  AdditiveCstNode, AggregateCstNode, BucketCstNode, CaseExpressionCstNode, ConditionCstChildren, ConditionCstNode, ExpressionCstNode,
  FacetClauseCstChildren, FieldCstNode, GroupClauseCstChildren, GroupCstChildren, HavingClauseCstChildren, LimitClauseCstChildren,
  MultiplicativeCstNode, NameCstNode, OffsetClauseCstChildren, OrderClauseCstChildren, PrimaryCstNode, QueryCstChildren, QueryCstNode,
  ResourceCstChildren, SearchClauseCstChildren, SelectClauseCstChildren, SourceCstChildren, TypeNameCstNode, UnaryCstNode, UnitCstNode,
  ValueCstNode, WhenClauseCstChildren, WhereClauseCstChildren, QualifyClauseCstChildren, OverClauseCstNode, SortKeyCstNode,
} from './cst.generated.js';
import { queryError } from '../errors.js';
import type { Span } from '../span.js';
import { didYouMean } from '../text.js';
import { castTypes, dateUnits, functionAliases, functionNamed, functions, windowFunctionNamed, windowFunctions } from './functions.js';
import { conditionLeaves, conditionWindow, expressionFields, firstAggregate, firstWindow, hasWindow, windowParts } from './expressions.js';

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
  // The one place the tree's type is asserted: `queryParser().query()` returns the `query` rule's node.
  const c = (cst as QueryCstNode).children;
  const fromToken = c.From[0]!;
  const first = readSource(c.source[0]!.children, source);
  const from: From = { ...first, span: { start: fromToken.startOffset, end: first.span.end } };
  const joinNodes = c.joinClause ?? [];
  // Every resource is declared before any field is read: a join's keys may name a later alias only
  // in error, and a clause may name any of them.
  const sources = joinNodes.map((node) => readSource(node.children.source[0]!.children, source));
  const reader = new FieldReader(source, [from, ...sources]);
  let end = from.span.end;
  const joins: Join[] = joinNodes.map((node, i) => {
    const j = node.children;
    const on = j.keyPair.map((pair): KeyPair => {
      const left = reader.field(pair.children.field[0]!);
      const right = reader.field(pair.children.field[1]!);
      return { kind: 'key-pair', span: { start: left.span.start, end: right.span.end }, left, right };
    });
    const start = (j.Left ?? j.Join)[0]!.startOffset;
    end = on[on.length - 1]!.span.end;
    return { kind: 'join', span: { start, end }, left: j.Left !== undefined, source: sources[i]!, on };
  });
  let where: Where | undefined;
  let search: Search | undefined;
  let select: Select | undefined;
  let group: Group | undefined;
  let having: Having | undefined;
  let qualify: Qualify | undefined;
  let facet: Facet | undefined;
  let order: Order | undefined;
  let limit: Limit | undefined;
  let offset: Offset | undefined;

  for (const node of clausesInOrder(c)) {
    switch (node.name) {
      case 'whereClause': {
        const clause = readWhere(node.children, reader);
        if (where) throw duplicateClause('where', clause.span, source);
        where = clause;
        end = clause.span.end;
        break;
      }
      case 'searchClause': {
        const clause = readSearch(node.children, reader);
        if (search) throw duplicateClause('search', clause.span, source);
        search = clause;
        end = clause.span.end;
        break;
      }
      case 'selectClause': {
        const clause = readSelect(node.children, reader);
        if (select) throw duplicateClause('select', clause.span, source);
        select = clause;
        end = clause.span.end;
        break;
      }
      case 'groupClause': {
        const clause = readGroupBy(node.children, reader);
        if (group) throw duplicateClause('group by', clause.span, source);
        group = clause;
        end = clause.span.end;
        break;
      }
      case 'havingClause': {
        const clause = readHaving(node.children, reader);
        if (having) throw duplicateClause('having', clause.span, source);
        having = clause;
        end = clause.span.end;
        break;
      }
      case 'qualifyClause': {
        const clause = readQualify(node.children, reader);
        if (qualify) throw duplicateClause('qualify', clause.span, source);
        qualify = clause;
        end = clause.span.end;
        break;
      }
      case 'facetClause': {
        const clause = readFacet(node.children, reader);
        if (facet) throw duplicateClause('facet', clause.span, source);
        facet = clause;
        end = clause.span.end;
        break;
      }
      case 'orderClause': {
        const clause = readOrder(node.children, reader);
        if (order) throw duplicateClause('order by', clause.span, source);
        order = clause;
        end = clause.span.end;
        break;
      }
      case 'limitClause': {
        const l = node.children;
        const value = readCount(l, 'limit', source);
        const clause: Limit = { kind: 'limit', span: { start: l.Limit[0]!.startOffset, end: value.span.end }, value };
        if (limit) throw duplicateClause('limit', clause.span, source);
        limit = clause;
        end = clause.span.end;
        break;
      }
      case 'offsetClause': {
        const o = node.children;
        const value = readCount(o, 'offset', source);
        const clause: Offset = { kind: 'offset', span: { start: o.Offset[0]!.startOffset, end: value.span.end }, value };
        if (offset) throw duplicateClause('offset', clause.span, source);
        offset = clause;
        end = clause.span.end;
        break;
      }
      default:
        assertNever(node, 'clause');
    }
  }
  if (facet !== undefined && (group !== undefined || having !== undefined)) {
    throw queryError('FACET_WITH_GROUP', facet.span, [], {
      source,
      hint: 'run two queries: one with facet for the records and their value counts, one with group by for the groups',
    });
  }
  if (select?.distinct === true && group !== undefined) {
    throw queryError('DISTINCT_WITH_GROUP', select.span, [], { source, hint: 'leave out "distinct": group by already gives each combination once' });
  }
  if (select?.distinct === true && order !== undefined) checkDistinctOrder(select, order, source);
  checkWindowPlaces(where, group, having, source);

  // Only the clauses that are there: an absent clause is an absent key, so
  // deep equality ignores how a query was built.
  const query: { -readonly [K in keyof Query]: Query[K] } = {
    kind: 'query',
    span: { start: fromToken.startOffset, end },
    from,
  };
  if (joins.length > 0) query.joins = joins;
  if (where) query.where = where;
  if (search) query.search = search;
  if (select) query.select = select;
  if (group) query.group = group;
  if (having) query.having = having;
  if (qualify) query.qualify = qualify;
  if (facet) query.facet = facet;
  if (order) query.order = order;
  if (limit) query.limit = limit;
  if (offset) query.offset = offset;
  if (qualify !== undefined && !hasWindow(query)) {
    throw queryError('QUALIFY_WITHOUT_WINDOW', qualify.span, [], {
      source,
      hint: 'compute a window in select and test its name: select …, row_number() over (partition by s order by g desc) as r … qualify r <= 3; or test the rows in where',
    });
  }
  return query;
}

/**
 * A window stands in select, qualify and order by only (docs/expressions.md):
 * where, group by and having come before the windows are computed, as in
 * PostgreSQL ("window functions are not allowed in WHERE").
 */
function checkWindowPlaces(where: Where | undefined, group: Group | undefined, having: Having | undefined, source: string): void {
  const refuse = (window: Window | undefined, clause: string): void => {
    if (window === undefined) return;
    const text = source.slice(window.span.start, window.span.end);
    throw queryError('WINDOW_IN_WHERE', window.span, [text, clause], {
      source,
      found: text,
      hint: 'select the window with a name and test the name in qualify: select …, row_number() over (…) as r … qualify r <= 3',
    });
  };
  refuse(conditionWindow(where?.condition), 'where');
  for (const key of group?.keys ?? []) refuse(firstWindow(key), 'group by');
  refuse(conditionWindow(having?.condition), 'having');
}

/**
 * `select distinct a order by b`: PostgreSQL refuses it ("for SELECT
 * DISTINCT, ORDER BY expressions must appear in select list"), so CKAN 2.12
 * and the sql target do, while a plan on CKAN 2.11 (distinct applied here)
 * would answer something. One meaning on every target: refused here, at the
 * key. A key may name a selected field or a select item's `as` name.
 */
function checkDistinctOrder(select: Select, order: Order, source: string): void {
  // `*` shows every field (a name no field has is refused with the fields)
  if (select.items.some((item) => item.value.kind === 'star')) return;
  for (const key of order.keys) {
    if (key.field.kind !== 'field') continue;
    const { name, qualifier } = key.field;
    const shown = select.items.some((item) =>
      (qualifier === undefined && item.as?.name === name) ||
      (item.value.kind === 'field' && item.value.name === name && (qualifier === undefined || item.value.qualifier === undefined || item.value.qualifier === qualifier)),
    );
    if (shown) continue;
    const written = qualifier === undefined ? name : `${qualifier}.${name}`;
    throw queryError('DISTINCT_ORDER_NOT_SELECTED', key.span, [written], {
      source,
      hint: `add ${written} to the select list (select distinct …, ${written}), or leave out "distinct"`,
    });
  }
}

/** The rules of the clauses, each a list of its own in the query's syntax tree. */
const clauseRules = [
  'whereClause', 'searchClause', 'selectClause', 'groupClause', 'havingClause', 'qualifyClause', 'facetClause', 'orderClause', 'limitClause', 'offsetClause',
] as const satisfies readonly (keyof QueryCstChildren)[];

type ClauseRule = (typeof clauseRules)[number];
type ClauseCstNode = NonNullable<QueryCstChildren[ClauseRule]>[number];
const clauseRuleSet: ReadonlySet<string> = new Set(clauseRules);

/**
 * The clauses as written. The grammar keeps each kind in a list of its own,
 * and the tree's keys are in the order the parser first met them, so with
 * each clause given once that order is the text's; a repeated clause puts
 * them back in the order of their first tokens. Either way the first error
 * of a query is the one its text reaches first, as the parser reads.
 */
function clausesInOrder(c: QueryCstChildren): ClauseCstNode[] {
  const clauses: ClauseCstNode[] = [];
  let repeated = false;
  for (const key in c) {
    if (!clauseRuleSet.has(key)) continue;
    const nodes = c[key as ClauseRule]!;
    if (nodes.length > 1) repeated = true;
    for (const node of nodes) clauses.push(node);
  }
  if (repeated) clauses.sort((a, b) => clauseStart(a) - clauseStart(b));
  return clauses;
}

/** Where a clause starts: its keyword. */
function clauseStart(node: ClauseCstNode): number {
  switch (node.name) {
    case 'whereClause':
      return node.children.Where[0]!.startOffset;
    case 'searchClause':
      return node.children.Search[0]!.startOffset;
    case 'selectClause':
      return node.children.Select[0]!.startOffset;
    case 'groupClause':
      return node.children.Group[0]!.startOffset;
    case 'havingClause':
      return node.children.Having[0]!.startOffset;
    case 'qualifyClause':
      return node.children.Qualify[0]!.startOffset;
    case 'facetClause':
      return node.children.Facet[0]!.startOffset;
    case 'orderClause':
      return node.children.Order[0]!.startOffset;
    case 'limitClause':
      return node.children.Limit[0]!.startOffset;
    case 'offsetClause':
      return node.children.Offset[0]!.startOffset;
    default:
      return assertNever(node, 'clause');
  }
}

/** `R [as a]` of `from` or `join`; the span covers the resource and its alias. */
function readSource(c: SourceCstChildren, source: string): From {
  const resource = readResource(c.resource[0]!.children, source);
  const more = c.resource.slice(1).map((node) => readResource(node.children, source));
  const union = more.length === 0 ? {} : { union: more };
  const end = more.length === 0 ? resource.span.end : more[more.length - 1]!.span.end;
  const aliasToken = c.Bareword?.[0];
  if (aliasToken === undefined) return { kind: 'from', span: { start: resource.span.start, end }, resource, ...union };
  const alias: Name = { kind: 'name', span: tokenSpan(aliasToken), name: aliasToken.image };
  if (alias.name.includes('.')) {
    throw queryError('UNEXPECTED_TOKEN', alias.span, ['an alias without "."', JSON.stringify(alias.name)], {
      source,
      expected: ['an alias without "."'],
      found: alias.name,
      hint: `an alias qualifies fields as alias.field, so it cannot hold a dot: write e.g. ${alias.name.replaceAll('.', '_')}`,
    });
  }
  return { kind: 'from', span: { start: resource.span.start, end: alias.span.end }, resource, ...union, alias };
}

/**
 * The name that qualifies a source's fields: its alias, else its resource
 * as written (a parameter qualifies nothing).
 */
export function qualifierOf(from: From): string | undefined {
  if (from.alias !== undefined) return from.alias.name;
  return from.resource.kind === 'string' ? from.resource.value : undefined;
}

/**
 * Reads fields: a dotted bareword is qualified when the part before its
 * first dot names a source of the query (docs/aggregates.md); every other
 * piece of the tree that holds a field is read through it.
 */
class FieldReader {
  readonly declared: ReadonlySet<string>;

  constructor(
    readonly source: string,
    sources: readonly From[],
  ) {
    const declared = new Set<string>();
    for (const from of sources) {
      const name = qualifierOf(from);
      if (name === undefined) continue;
      if (declared.has(name) && sources.length > 1) {
        const at = from.alias?.span ?? from.resource.span;
        throw queryError('DUPLICATE_ALIAS', at, [name], {
          source,
          hint: 'give each resource its own alias: from enrolments e join enrolments f on …',
        });
      }
      declared.add(name);
    }
    this.declared = declared;
  }

  field(node: FieldCstNode): Field {
    const c = node.children;
    const source = this.source;
    if (c.BacktickField === undefined) {
      const token = (c.Bareword ?? c.Uuid)![0]!;
      const span = tokenSpan(token);
      const dot = c.Bareword === undefined ? -1 : token.image.indexOf('.');
      if (dot > 0 && this.declared.has(token.image.slice(0, dot))) {
        const name = token.image.slice(dot + 1);
        if (name === '') throw queryError('EMPTY_FIELD_NAME', span, [], { source, found: token.image, hint: `name the field after the dot: ${token.image}field` });
        return { kind: 'field', span, name, qualifier: token.image.slice(0, dot) };
      }
      return { kind: 'field', span, name: token.image };
    }
    const token = c.BacktickField[0]!;
    const qualifierToken = c.Qualifier?.[0];
    const span = { start: (qualifierToken ?? token).startOffset, end: tokenEnd(token) };
    const name = token.image.slice(1, -1).replaceAll('``', '`');
    if (name === '') throw queryError('EMPTY_FIELD_NAME', tokenSpan(token), [], { source, found: token.image });
    if (qualifierToken === undefined) return { kind: 'field', span, name };
    const qualifier = qualifierToken.image.slice(0, -1);
    if (!this.declared.has(qualifier)) {
      throw queryError('UNKNOWN_QUALIFIER', tokenSpan(qualifierToken), [qualifier], {
        source,
        found: qualifierToken.image,
        hint:
          this.declared.size === 0
            ? 'a field is qualified by the alias of a resource: from courses c … c.`school year`'
            : `qualify it by ${[...this.declared].map((d) => JSON.stringify(d)).join(' or ')}, or quote the whole name: \`${qualifier}.${name.replaceAll('`', '``')}\``,
      });
    }
    return { kind: 'field', span, name, qualifier };
  }
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

/**
 * The operator of a comparison with one and a value: `undefined` for `=`
 * (an `eq` test), else its name; `null` when the test is another (`in`,
 * `between`, `like`, `is null`).
 */
function readOperator(c: ConditionCstChildren): CompareOperator | undefined | null {
  if (c.Equals !== undefined) return undefined;
  if (c.NotEquals !== undefined) return 'ne';
  if (c.Less !== undefined) return 'lt';
  if (c.LessEquals !== undefined) return 'lte';
  if (c.Greater !== undefined) return 'gt';
  if (c.GreaterEquals !== undefined) return 'gte';
  return null;
}

/**
 * Checks the left side of a test: the field (or, in `having`, the
 * aggregate) it tests, `undefined` for an expression compared as one
 * (`price * qty > 100`); what the clause refuses is refused with a hint.
 */
type OperandReader<F extends Operand> = (expression: Expression) => F | undefined;

/** `where` tests fields, and compares expressions without aggregates: an aggregate or a bucket there is refused with a hint. */
function whereOperand(reader: FieldReader): OperandReader<Field> {
  return (expression) => {
    if (expression.kind === 'field') return expression;
    if (expression.kind === 'bucket') {
      const bucket = expression;
      throw queryError('BUCKET_IN_CONDITION', bucket.span, [reader.source.slice(bucket.span.start, bucket.span.end)], {
        source: reader.source,
        hint: `compare the field itself, e.g. ${formatFieldText(bucket.field)} >= "2020-01-01" and ${formatFieldText(bucket.field)} < "2021-01-01"`,
      });
    }
    refuseAggregate(expression, reader.source);
    return undefined;
  };
}

/** AGGREGATE_IN_WHERE at the first aggregate an expression of `where` holds. */
function refuseAggregate(expression: Expression, source: string): void {
  const aggregate = firstAggregate(expression);
  if (aggregate === undefined) return;
  throw queryError('AGGREGATE_IN_WHERE', aggregate.span, [source.slice(aggregate.span.start, aggregate.span.end)], {
    source,
    found: source.slice(aggregate.span.start, aggregate.span.end),
    hint: 'move the condition to having, which tests each group: … group by subject having count(*) > 3',
  });
}

/** `having` (and a case's `when`) tests names (output names and group keys) and aggregates, and compares expressions. */
function havingOperand(reader: FieldReader): OperandReader<Operand> {
  return (expression) => {
    if (expression.kind === 'field' || expression.kind === 'aggregate') return expression;
    if (expression.kind === 'bucket') {
      const bucket = expression;
      throw queryError('BUCKET_IN_CONDITION', bucket.span, [reader.source.slice(bucket.span.start, bucket.span.end)], {
        source: reader.source,
        hint: 'name the bucket in select and test the name: select month(d) as m … having m >= "2020-01-01"',
      });
    }
    return undefined;
  };
}

/** A field as written, for hints. */
function formatFieldText(field: Field): string {
  return field.qualifier === undefined ? field.name : `${field.qualifier}.${field.name}`;
}

/** `[not] (group | test)`: a `not` before the rest wraps it and starts its span. */
function readCondition<F extends Operand>(node: ConditionCstNode, reader: FieldReader, operand: OperandReader<F>): Condition<F> {
  const c = node.children;
  const group = c.group?.[0];
  const inner = group !== undefined ? readGroup(group.children, reader, operand) : readTest(c, reader, operand);
  const not = c.Not?.[0];
  // a `not` after the operand is the test's own (`f not in (…)`), already read
  if (not === undefined || (group === undefined && not.startOffset > inner.span.start)) return inner;
  const end = group !== undefined ? tokenEnd(group.children.RParen[0]!) : inner.span.end;
  return { kind: 'not', span: { start: not.startOffset, end }, condition: inner };
}

/** The test of one operand: `= != < <= > >=`, `[not] in`, `between`, `[not] like|ilike`, `is [not] null`. */
function readTest<F extends Operand>(c: ConditionCstChildren, reader: FieldReader, operand: OperandReader<F>): Condition<F> {
  const source = reader.source;
  const left = readExpression(c.expression![0]!, reader);
  const field = operand(left);
  const start = left.span.start;
  const op = readOperator(c);
  if (op !== null) {
    const rightNode = c.expression![1]!;
    // A value alone on the right is read as a value always was: a bareword is text (`region = north`).
    const value = loneValue(rightNode, reader);
    if (field !== undefined && value !== undefined) {
      const span = { start, end: value.span.end };
      return op === undefined ? { kind: 'eq', span, field, value } : { kind: 'compare', span, op, field, value };
    }
    const right = value !== undefined && value.kind !== 'number' ? value : readExpression(rightNode, reader);
    // the right side is held to the left's clause: no aggregate in where (`operand` refuses it)
    operand(right);
    return { kind: 'comparison', span: { start, end: right.span.end }, op: op ?? 'eq', left, right };
  }
  if (field === undefined) {
    const test = c.In !== undefined ? 'in' : c.Between !== undefined ? 'between' : c.Like !== undefined ? 'like' : c.Ilike !== undefined ? 'ilike' : 'is null';
    throw queryError('EXPRESSION_TEST', left.span, [`"${test}"`], {
      source,
      found: source.slice(left.span.start, left.span.end),
      hint: test === 'between' ? 'write it as two comparisons: x >= low and x <= high' : test === 'in' ? 'write it as comparisons joined by or: (x = 1 or x = 2)' : 'select the expression with a name, or test a field',
    });
  }
  let test: Condition<F>;
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
  // `f not in (…)`, `f not like …` and `f is not null` are a `not` around the positive test;
  // that `not` is the last, and stands after the operand (one before it is the condition's).
  const not = c.Not?.[c.Not.length - 1];
  return not !== undefined && not.startOffset > start ? { kind: 'not', span: test.span, condition: test } : test;
}

/**
 * The value an expression is when it is one token that a value may be: a
 * string, number, date, `true`/`false`/`null`, a parameter, or a bareword
 * or UUID (text, as the right side of a comparison reads it; a qualified
 * `r.name` stays a field). Undefined for anything else.
 */
function loneValue(node: ExpressionCstNode, reader: FieldReader): Value | undefined {
  const e = node.children;
  if (e.Concat !== undefined || e.additive.length !== 1) return undefined;
  const a = e.additive[0]!.children;
  if (a.Plus !== undefined || a.Minus !== undefined || a.multiplicative.length !== 1) return undefined;
  const m = a.multiplicative[0]!.children;
  if (m.Star !== undefined || m.Slash !== undefined || m.Percent !== undefined || m.unary.length !== 1) return undefined;
  const u = m.unary[0]!.children;
  if (u.Minus !== undefined || u.DoubleColon !== undefined) return undefined;
  const p = u.primary[0]!.children;
  const source = reader.source;
  if (p.field !== undefined) {
    const f = p.field[0]!.children;
    if (f.Uuid !== undefined) return textOf(f.Uuid[0]!);
    if (f.Bareword === undefined) return undefined;
    // `_.` names no field after its dot: a value, as a bareword on the right was before expressions.
    if (f.Bareword[0]!.image.endsWith('.')) return textOf(f.Bareword[0]!);
    const field = reader.field(p.field[0]!);
    return field.qualifier === undefined ? textOf(f.Bareword[0]!) : undefined;
  }
  if (p.Number !== undefined) return readNumber(p.Number[0]!, source);
  if (p.String !== undefined) return stringOf(p.String[0]!, source);
  if (p.DateTime !== undefined) return textOf(p.DateTime[0]!);
  if (p.True !== undefined) return { kind: 'boolean', span: tokenSpan(p.True[0]!), value: true };
  if (p.False !== undefined) return { kind: 'boolean', span: tokenSpan(p.False[0]!), value: false };
  if (p.Null !== undefined) return { kind: 'null', span: tokenSpan(p.Null[0]!) };
  if (p.Parameter !== undefined) return parameterOf(p.Parameter[0]!);
  return undefined;
}

// ---------------------------------------------------------------- expressions (docs/expressions.md)

/**
 * A select item, group key or sort key: an expression, but not a value
 * alone (`select "a"`, `order by 1`), which names no column: a field name
 * is written bare or in backticks, and a value put where a name belongs
 * (a template's interpolation) stays an error.
 */
function columnExpression(node: ExpressionCstNode, reader: FieldReader, key = false): Expression {
  const expression = readExpression(node, reader);
  switch (expression.kind) {
    case 'number':
    case 'boolean':
    case 'null':
    case 'string':
    case 'param': {
      // a constant selects a column of it; a constant key (PostgreSQL's `order by 1` is a position) and text are refused
      if (!key && expression.kind !== 'string' && expression.kind !== 'param') return expression;
      const text = reader.source.slice(expression.span.start, expression.span.end);
      throw queryError('UNEXPECTED_TOKEN', expression.span, ['a field name or an expression', JSON.stringify(text)], {
        source: reader.source,
        expected: ['a field name', 'an expression'],
        found: text,
        hint: 'a value alone is no column: write a field name bare or in backticks (`school year`)',
      });
    }
    default:
      return expression;
  }
}

/** A chain of one precedence level, left to right: its operands and the operators between them, by offset. */
function foldChain(operands: readonly Expression[], operators: readonly IToken[]): Expression {
  const ops = [...operators].sort((a, b) => a.startOffset - b.startOffset);
  let left = operands[0]!;
  for (let i = 1; i < operands.length; i++) {
    const right = operands[i]!;
    left = { kind: 'binary', span: { start: left.span.start, end: right.span.end }, op: ops[i - 1]!.image as BinaryOperator, left, right };
  }
  return left;
}

/** An expression: `||` over additive chains. */
export function readExpression(node: ExpressionCstNode, reader: FieldReader): Expression {
  const c = node.children;
  const operands = c.additive.map((a) => readAdditive(a, reader));
  return operands.length === 1 ? operands[0]! : foldChain(operands, c.Concat ?? []);
}

function readAdditive(node: AdditiveCstNode, reader: FieldReader): Expression {
  const c = node.children;
  const operands = c.multiplicative.map((m) => readMultiplicative(m, reader));
  return operands.length === 1 ? operands[0]! : foldChain(operands, [...(c.Plus ?? []), ...(c.Minus ?? [])]);
}

function readMultiplicative(node: MultiplicativeCstNode, reader: FieldReader): Expression {
  const c = node.children;
  const operands = c.unary.map((u) => readUnary(u, reader));
  return operands.length === 1 ? operands[0]! : foldChain(operands, [...(c.Star ?? []), ...(c.Slash ?? []), ...(c.Percent ?? [])]);
}

/** Casts bind tighter than a unary minus: `-x::int` is `-(x::int)`. A minus before a number is the number's sign. */
function readUnary(node: UnaryCstNode, reader: FieldReader): Expression {
  const c = node.children;
  let value = readPrimary(c.primary[0]!, reader);
  for (const typeNode of c.typeName ?? []) {
    const type = readType(typeNode, reader.source);
    value = { kind: 'cast', span: { start: value.span.start, end: type.end }, operand: value, type: type.type, shorthand: true };
  }
  const minuses = c.Minus ?? [];
  for (let i = minuses.length - 1; i >= 0; i--) {
    const span = { start: minuses[i]!.startOffset, end: value.span.end };
    if (value.kind === 'number') {
      const text = value.text ?? String(value.value);
      const negated = -value.value;
      value = { kind: 'number', span, value: negated === 0 ? 0 : negated, text: text.startsWith('-') ? text.slice(1) : `-${text}` };
    } else {
      value = { kind: 'negate', span, operand: value };
    }
  }
  return value;
}

function readType(node: TypeNameCstNode, source: string): { type: (typeof castTypes)[string]; end: number } {
  const token = node.children.Bareword[0]!;
  const name = token.image.toLowerCase();
  const type = Object.hasOwn(castTypes, name) ? castTypes[name] : undefined;
  if (type === undefined) {
    throw queryError('UNKNOWN_TYPE', tokenSpan(token), [token.image], {
      source,
      found: token.image,
      hint: didYouMean(name, Object.keys(castTypes)) ?? `cast to one of ${[...new Set(Object.values(castTypes))].join(', ')}`,
    });
  }
  return { type, end: tokenEnd(token) };
}

/** A number of an expression: its text kept (its type, and digits beyond a double). */
function expressionNumber(token: IToken, source: string): NumberValue {
  const value = Number(token.image);
  const span = tokenSpan(token);
  if (!Number.isFinite(value)) {
    throw queryError('NUMBER_OUT_OF_RANGE', span, [token.image], { source, found: token.image, hint: 'write a smaller number' });
  }
  return { kind: 'number', span, value: value === 0 ? 0 : value, text: token.image };
}

function readPrimary(node: PrimaryCstNode, reader: FieldReader): Expression {
  const c = node.children;
  const source = reader.source;
  if (c.field !== undefined) return reader.field(c.field[0]!);
  if (c.Number !== undefined) return expressionNumber(c.Number[0]!, source);
  if (c.String !== undefined) return stringOf(c.String[0]!, source);
  if (c.aggregate !== undefined) {
    const node = c.aggregate[0]!;
    const aggregate = readAggregate(node, reader);
    const over = node.children.overClause?.[0];
    if (over === undefined) return aggregate;
    if (aggregate.distinct === true) {
      throw queryError('DISTINCT_IN_WINDOW', aggregate.span, [], { source, found: source.slice(aggregate.span.start, aggregate.span.end), hint: 'count the distinct values per group instead: group by … select count(distinct f)' });
    }
    return readWindow(aggregate, over, reader);
  }
  if (c.bucket !== undefined) return readBucket(c.bucket[0]!, reader);
  if (c.expression !== undefined) return readExpression(c.expression[0]!, reader);
  if (c.functionCall !== undefined) {
    const f = c.functionCall[0]!.children;
    const nameToken = f.Bareword[0]!;
    const span = { start: nameToken.startOffset, end: tokenEnd(f.RParen[0]!) };
    const over = f.overClause?.[0];
    const windowFn = windowFunctionNamed(nameToken.image);
    if (windowFn !== undefined) {
      const args = (f.expression ?? []).map((e) => readExpression(e, reader));
      const found = source.slice(span.start, span.end);
      if (args.length < windowFn.min || args.length > windowFn.max) {
        const wanted = windowFn.max === 0 ? 'no arguments' : `${windowFn.min} to ${windowFn.max} arguments`;
        throw queryError('WRONG_ARGUMENT_COUNT', span, [windowFn.name, wanted, args.length], { source, found, hint: `call it as ${windowFn.signature}` });
      }
      const offset = args[1];
      if (offset !== undefined && offset.kind !== 'param' && !(offset.kind === 'number' && Number.isInteger(offset.value) && offset.value >= 0 && !(offset.text ?? '').includes('.'))) {
        const text = source.slice(offset.span.start, offset.span.end);
        throw queryError('INVALID_INTEGER', offset.span, [`the offset of ${windowFn.name}`, text], { source, found: text, hint: `count the rows as a whole number: ${windowFn.name}(x, 2)` });
      }
      if (over === undefined) {
        throw queryError('WINDOW_WITHOUT_OVER', span, [windowFn.name], { source, found, hint: `say the window: ${windowFn.example}` });
      }
      const call: WindowCall = { kind: 'window-call', span, fn: windowFn.name, args };
      return readWindow(call, over, reader);
    }
    if (over !== undefined && functionNamed(nameToken.image) !== undefined) {
      const overToken = over.children.Over[0]!;
      throw queryError('OVER_WITHOUT_WINDOW_FUNCTION', tokenSpan(overToken), [nameToken.image.toLowerCase()], {
        source,
        found: overToken.image,
        hint: `the window functions are ${Object.keys(windowFunctions).join(', ')}, and count, sum, avg, min, max`,
      });
    }
    const fn = functionNamed(nameToken.image);
    if (fn === undefined) {
      throw queryError('UNKNOWN_FUNCTION', tokenSpan(nameToken), [nameToken.image], {
        source,
        found: nameToken.image,
        hint: didYouMean(nameToken.image.toLowerCase(), [...Object.keys(functions), ...Object.keys(functionAliases), ...Object.keys(windowFunctions), 'count', 'sum', 'avg', 'min', 'max', 'cast', 'extract'])
          ?? `the functions are ${Object.keys(functions).join(', ')}`,
      });
    }
    const args = (f.expression ?? []).map((e) => readExpression(e, reader));
    if (args.length < fn.min || args.length > fn.max) {
      const wanted = fn.min === fn.max ? `${fn.min} argument${fn.min === 1 ? '' : 's'}` : fn.max === Infinity ? `${fn.min} or more arguments` : `${fn.min} to ${fn.max} arguments`;
      throw queryError('WRONG_ARGUMENT_COUNT', span, [fn.name, wanted, args.length], { source, found: source.slice(span.start, span.end), hint: `call it as ${fn.signature}` });
    }
    if (fn.name === 'date_part' || fn.name === 'date_trunc') checkUnit(args[0]!, source);
    return { kind: 'call', span, fn: fn.name, args };
  }
  if (c.caseExpression !== undefined) return readCase(c.caseExpression[0]!, reader);
  if (c.castCall !== undefined) {
    const k = c.castCall[0]!.children;
    const operand = readExpression(k.expression[0]!, reader);
    const type = readType(k.typeName[0]!, source);
    return { kind: 'cast', span: { start: k.Cast[0]!.startOffset, end: tokenEnd(k.RParen[0]!) }, operand, type: type.type };
  }
  if (c.extractCall !== undefined) {
    const x = c.extractCall[0]!.children;
    const unitToken = x.Bareword[0]!;
    const unit: StringValue = { kind: 'string', span: tokenSpan(unitToken), value: unitToken.image.toLowerCase() };
    checkUnit(unit, source);
    const span = { start: x.Extract[0]!.startOffset, end: tokenEnd(x.RParen[0]!) };
    return { kind: 'call', span, fn: 'date_part', args: [unit, readExpression(x.expression[0]!, reader)] };
  }
  if (c.DateTime !== undefined) return textOf(c.DateTime[0]!);
  if (c.True !== undefined) return { kind: 'boolean', span: tokenSpan(c.True[0]!), value: true };
  if (c.False !== undefined) return { kind: 'boolean', span: tokenSpan(c.False[0]!), value: false };
  if (c.Null !== undefined) return { kind: 'null', span: tokenSpan(c.Null[0]!) };
  return parameterOf(c.Parameter![0]!);
}

/** The unit of `date_part` and `date_trunc`: a literal of `dateUnits` (a parameter is checked when bound). */
function checkUnit(unit: Expression, source: string): void {
  if (unit.kind === 'param') return;
  if (unit.kind === 'string' && dateUnits.includes(unit.value.toLowerCase())) return;
  const text = source.slice(unit.span.start, unit.span.end);
  throw queryError('UNKNOWN_UNIT', unit.span, [text], { source, found: text, hint: didYouMean(text.replace(/['"]/g, '').toLowerCase(), dateUnits) ?? `one of ${dateUnits.map((u) => `'${u}'`).join(', ')}` });
}

function readCase(node: CaseExpressionCstNode, reader: FieldReader): Expression {
  const c = node.children;
  const whens = c.whenClause.map((w): When => readWhen(w.children, reader));
  const span = { start: c.Case[0]!.startOffset, end: tokenEnd(c.End[0]!) };
  const otherwise = c.expression?.[0];
  return otherwise === undefined ? { kind: 'case', span, whens } : { kind: 'case', span, whens, else: readExpression(otherwise, reader) };
}

function readWhen(c: WhenClauseCstChildren, reader: FieldReader): When {
  const operand = havingOperand(reader);
  const conditions = c.condition.map((member) => readCondition(member, reader, operand));
  const connective = readConnective(c, reader.source);
  const result = readExpression(c.expression[0]!, reader);
  const first = outerSpan(c.condition[0]!, conditions[0]!);
  const last = outerSpan(c.condition[c.condition.length - 1]!, conditions[conditions.length - 1]!);
  const condition: Condition<Operand> = connective === undefined ? conditions[0]! : { kind: connective, span: { start: first.start, end: last.end }, conditions };
  return { kind: 'when', span: { start: c.When[0]!.startOffset, end: result.span.end }, condition, result };
}

function readGroup<F extends Operand>(group: GroupCstChildren, reader: FieldReader, operand: OperandReader<F>): Condition<F> {
  const conditions = group.condition.map((member) => readCondition(member, reader, operand));
  const connective = readConnective(group, reader.source);
  // A group of one condition is that condition: `(a = 1)` and `a = 1` give the same AST.
  if (connective === undefined) return conditions[0]!;
  return { kind: connective, span: { start: group.LParen[0]!.startOffset, end: tokenEnd(group.RParen[0]!) }, conditions };
}

/**
 * The text a condition covers in the source, parentheses included: a group
 * of one condition is read as that condition, whose span leaves them out.
 */
function outerSpan(node: ConditionCstNode, condition: Condition<Operand>): Span {
  const group = node.children.group;
  if (group === undefined) return condition.span;
  const g = group[0]!.children;
  const start = node.children.Not?.[0]?.startOffset ?? g.LParen[0]!.startOffset;
  return { start, end: tokenEnd(g.RParen[0]!) };
}

/** The one connective of a list of conditions, or MIXED_AND_OR at the first that differs. */
function readConnective(c: WhereClauseCstChildren | GroupCstChildren | HavingClauseCstChildren | QualifyClauseCstChildren | WhenClauseCstChildren, source: string): 'and' | 'or' | undefined {
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

/** The conditions of `where` or `having`, one list with one connective. */
function readConditions<F extends Operand>(
  c: WhereClauseCstChildren | HavingClauseCstChildren | QualifyClauseCstChildren,
  start: number,
  reader: FieldReader,
  operand: OperandReader<F>,
): { span: Span; condition: Condition<F> } {
  const conditions = c.condition.map((member) => readCondition(member, reader, operand));
  const connective = readConnective(c, reader.source);
  const lastNode = c.condition[c.condition.length - 1]!;
  const last = outerSpan(lastNode, conditions[conditions.length - 1]!);
  const span = { start, end: last.end };
  if (connective === undefined) return { span, condition: conditions[0]! };
  const first = outerSpan(c.condition[0]!, conditions[0]!);
  return { span, condition: { kind: connective, span: { start: first.start, end: last.end }, conditions } };
}

function readWhere(c: WhereClauseCstChildren, reader: FieldReader): Where {
  return { kind: 'where', ...readConditions(c, c.Where[0]!.startOffset, reader, whereOperand(reader)) };
}

function readHaving(c: HavingClauseCstChildren, reader: FieldReader): Having {
  return { kind: 'having', ...readConditions(c, c.Having[0]!.startOffset, reader, havingOperand(reader)) };
}

function readSearch(c: SearchClauseCstChildren, reader: FieldReader): Search {
  const source = reader.source;
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
      const field = reader.field(f.field[0]!);
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

/**
 * `count(*)`, `count([distinct] x)`, `sum|avg|min|max(x)`: `x` a field or an
 * expression of the record's fields. As PostgreSQL, an aggregate inside
 * another is refused; an argument that reads no field (`count(1)`) too,
 * where PostgreSQL would count or sum a constant (docs/expressions.md).
 */
function readAggregate(node: AggregateCstNode, reader: FieldReader): Aggregate {
  const c = node.children;
  const nameToken = (c.Count ?? c.Sum ?? c.Avg ?? c.Min ?? c.Max)![0]!;
  const fn = nameToken.image.toLowerCase() as AggregateFunction;
  const span = { start: nameToken.startOffset, end: tokenEnd(c.RParen![0]!) };
  if (c.Star !== undefined) return { kind: 'aggregate', span, fn };
  const field = readExpression(c.expression![0]!, reader);
  const inner = firstAggregate(field);
  if (inner !== undefined) {
    const text = reader.source.slice(inner.span.start, inner.span.end);
    throw queryError('AGGREGATE_IN_AGGREGATE', inner.span, [text], {
      source: reader.source,
      found: text,
      hint: `aggregate the record's fields once: ${fn}(…) of ${text} has no record to read; round(avg(x), 1) computes over an aggregate`,
    });
  }
  if (expressionFields(field).length === 0) {
    const text = reader.source.slice(field.span.start, field.span.end);
    throw queryError('AGGREGATE_OF_CONSTANT', field.span, [fn, text], {
      source: reader.source,
      found: text,
      hint: fn === 'count' ? 'count(*) counts the records' : `${fn}() takes a field or an expression of fields, e.g. ${fn}(price * qty)`,
    });
  }
  return c.Distinct === undefined ? { kind: 'aggregate', span, fn, field } : { kind: 'aggregate', span, fn, field, distinct: true };
}

/** `year|month|week|day(f)`, `bucket(f, w)` with `w` > 0 */
function readBucket(node: BucketCstNode, reader: FieldReader): Bucket {
  const c = node.children;
  const field = reader.field(c.field![0]!);
  const span = { start: (c.Bucket?.[0] ?? firstToken(c.unit![0]!.children))!.startOffset, end: tokenEnd(c.RParen![0]!) };
  if (c.unit !== undefined) return { kind: 'bucket', span, fn: unitOf(c.unit[0]!), field };
  return { kind: 'bucket', span, fn: 'bucket', field, width: readWidth(c.Number![0]!, reader.source) };
}

/** A bucket's or a facet's width: a number greater than 0. */
function readWidth(token: IToken, source: string): NumberValue {
  const width = readNumber(token, source);
  if (width.value <= 0) {
    throw queryError('INVALID_BUCKET_WIDTH', width.span, [token.image], { source, found: token.image, hint: 'buckets are floor(f / width) * width: give a width such as 10 or 0.5' });
  }
  return width;
}

function unitOf(node: UnitCstNode): 'year' | 'month' | 'week' | 'day' {
  return firstToken(node.children)!.image.toLowerCase() as 'year' | 'month' | 'week' | 'day';
}

/** The one token of a rule node made of one `OR` of tokens. */
function firstToken(children: Record<string, IToken[] | CstNode[] | undefined>): IToken | undefined {
  for (const list of Object.values(children)) {
    const first = list?.[0];
    if (first !== undefined && 'image' in first) return first;
  }
  return undefined;
}

function readName(node: NameCstNode, source: string): Name {
  const c = node.children;
  if (c.Bareword !== undefined) {
    const token = c.Bareword[0]!;
    return { kind: 'name', span: tokenSpan(token), name: token.image };
  }
  const token = c.BacktickField![0]!;
  const name = token.image.slice(1, -1).replaceAll('``', '`');
  if (name === '') throw queryError('EMPTY_FIELD_NAME', tokenSpan(token), [], { source, found: token.image });
  return { kind: 'name', span: tokenSpan(token), name };
}

function readSelect(c: SelectClauseCstChildren, reader: FieldReader): Select {
  const items = c.selectItem.map((node): SelectItem => {
    const i = node.children;
    const value: SelectItem['value'] = i.Star !== undefined ? { kind: 'star', span: tokenSpan(i.Star[0]!) } : columnExpression(i.expression![0]!, reader);
    if (i.name === undefined) return { kind: 'select-item', span: value.span, value };
    const as = readName(i.name[0]!, reader.source);
    if (value.kind === 'star') {
      // as PostgreSQL: `*` is every field, each keeping its name
      throw queryError('UNEXPECTED_TOKEN', { start: i.As![0]!.startOffset, end: as.span.end }, ['"," or the next clause', '"as"'], {
        source: reader.source,
        expected: ['","', 'the next clause'],
        found: 'as',
        hint: `* gives every field under its own name; name a computed item instead: select *, price * qty as ${as.name}`,
      });
    }
    return { kind: 'select-item', span: { start: value.span.start, end: as.span.end }, value, as };
  });
  const span = { start: c.Select[0]!.startOffset, end: items[items.length - 1]!.span.end };
  return c.Distinct === undefined ? { kind: 'select', span, items } : { kind: 'select', span, items, distinct: true };
}

function readGroupBy(c: GroupClauseCstChildren, reader: FieldReader): Group {
  const keys = c.groupKey.map((node) => {
    const key = columnExpression(node.children.expression[0]!, reader, true);
    const aggregate = firstAggregate(key);
    if (aggregate !== undefined) {
      const text = reader.source.slice(aggregate.span.start, aggregate.span.end);
      throw queryError('UNEXPECTED_TOKEN', aggregate.span, ['a group key without an aggregate', text], {
        source: reader.source,
        expected: ['a field or an expression of fields'],
        found: text,
        hint: 'group by the fields; aggregate in select and test the aggregates in having',
      });
    }
    return key;
  });
  return { kind: 'group', span: { start: c.Group[0]!.startOffset, end: keys[keys.length - 1]!.span.end }, keys };
}

/** The most values a facet gives, and how many unless `top` says. */
export const MAX_FACET_TOP = 1000;
export const DEFAULT_FACET_TOP = 30;

function readFacet(c: FacetClauseCstChildren, reader: FieldReader): Facet {
  const source = reader.source;
  const items = c.facetItem.map((node): FacetItem => {
    const f = node.children;
    const field = reader.field(f.field[0]!);
    let end = field.span.end;
    const item: { -readonly [K in keyof FacetItem]: FacetItem[K] } = { kind: 'facet-item', span: field.span, field };
    const numbers = [...(f.Number ?? [])];
    if (f.By !== undefined) {
      if (f.unit !== undefined) {
        const unitToken = firstToken(f.unit[0]!.children)!;
        item.by = { kind: 'unit', span: tokenSpan(unitToken), unit: unitOf(f.unit[0]!) };
      } else {
        item.by = readWidth(numbers.shift()!, source);
      }
      end = item.by.span.end;
    }
    if (f.Top !== undefined) {
      const token = numbers.shift()!;
      const top = readNumber(token, source);
      if (!Number.isInteger(top.value) || top.value < 1 || top.value > MAX_FACET_TOP) {
        throw queryError('INVALID_TOP', top.span, [token.image], { source, found: token.image, hint: `give how many values to show, 1 to ${MAX_FACET_TOP} (${DEFAULT_FACET_TOP} unless top says)` });
      }
      item.top = top;
      end = top.span.end;
    }
    item.span = { start: field.span.start, end };
    return item;
  });
  return { kind: 'facet', span: { start: c.Facet[0]!.startOffset, end: items[items.length - 1]!.span.end }, items };
}

function readOrder(c: OrderClauseCstChildren, reader: FieldReader): Order {
  const keys = c.sortKey.map((node) => readSortKey(node, reader));
  return { kind: 'order', span: { start: c.Order[0]!.startOffset, end: keys[keys.length - 1]!.span.end }, keys };
}

/** `e [asc|desc] [nulls first|last]` of `order by` or of a window. */
function readSortKey(node: SortKeyCstNode, reader: FieldReader): SortKey {
  {
    const k = node.children;
    const field = columnExpression(k.expression[0]!, reader, true);
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
  }
}

/**
 * `call over (partition by … order by …)`. What the window reads is read
 * here: no window inside it (NESTED_WINDOW), no value alone as a key.
 */
function readWindow(call: WindowCall | Aggregate, node: OverClauseCstNode, reader: FieldReader): Window {
  const o = node.children;
  const partition = (o.expression ?? []).map((e) => columnExpression(e, reader, true));
  const order = (o.sortKey ?? []).map((k) => readSortKey(k, reader));
  const window: Window = { kind: 'window', span: { start: call.span.start, end: tokenEnd(o.RParen[0]!) }, call, partition, order };
  const inner = windowParts(window).map(firstWindow).find((w) => w !== undefined);
  if (inner !== undefined) {
    const text = reader.source.slice(inner.span.start, inner.span.end);
    throw queryError('NESTED_WINDOW', inner.span, [], { source: reader.source, found: text, hint: 'name the inner window in select, and compute over its name in a query of that answer' });
  }
  return window;
}

/** `qualify c1 and c2 …`: having's conditions over the answer's rows; an aggregate is tested by its name. */
function readQualify(c: QualifyClauseCstChildren, reader: FieldReader): Qualify {
  const qualify: Qualify = { kind: 'qualify', ...readConditions(c, c.Qualify[0]!.startOffset, reader, havingOperand(reader)) };
  const aggregate = conditionLeaves(qualify.condition).find((leaf) => leaf.kind === 'aggregate');
  if (aggregate !== undefined) {
    const text = reader.source.slice(aggregate.span.start, aggregate.span.end);
    throw queryError('AGGREGATE_IN_QUALIFY', aggregate.span, [text], { source: reader.source, found: text, hint: `name it in select and test the name: select ${text} as n … qualify n > 1, or test it in having` });
  }
  return qualify;
}

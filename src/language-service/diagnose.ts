/**
 * Every problem of a query (or of each statement of a script), as a
 * front end shows it: the error catalogue's code and message, the span, a
 * severity, the hint, and quick fixes where one is obvious. Syntax first
 * (the parser's first error per statement); then, on a query that parses,
 * the names and values checked against what the context knows, parameters
 * against their declared values, and what the target cannot say (which is
 * not an error: the query runs as a plan, and a note says what runs locally).
 */
import { conditionLeaves, expressionFields, mapChildren } from '../syntax/expressions.js';
import { expressionType, valueTypeOf, type ValueType } from '../compile/expression-types.js';
import type { FieldType } from '../datastore/types.js';
import type { Condition, Expression, Field, From, Operand, Parameter, Query, Star, StringValue, Value } from '../ast.js';
import { assertNever, hasUnion, isComputed, isPlainQuery, querySources, unionMembers } from '../ast.js';
import { shapeOf } from '../compile/shape.js';
import { bind, type Params } from '../compile/bind.js';
import { constructName, onlyEqualities, planQuery, splitSource, unknownSourceHint } from '../compile/plan.js';
import { QueryError, queryError, type QueryErrorCode } from '../errors.js';
import { expressionText, formatField, formatString } from '../format.js';
import type { Span } from '../span.js';
import { parse } from '../syntax/parse.js';
import { unescapeString } from '../syntax/to-ast.js';
import { conditionFieldNodes, parametersOf } from '../syntax/walk.js';
import { keywords, queryLexer } from '../syntax/tokens.js';
import { editDistance, nearestNames } from '../text.js';
import { findIn, scopeOf, unionSchema, type FieldSchema, type LanguageContext, type ResourceSchema } from './context.js';
import { statementsOf, type Piece } from './script.js';

export type Severity = 'error' | 'warning' | 'information' | 'hint';

/** Replace `span` of the text by `text` (an insertion when the span is empty). */
export interface TextEdit {
  readonly span: Span;
  readonly text: string;
}

/** A quick fix: one click, these edits. */
export interface Fix {
  readonly title: string;
  readonly edits: readonly TextEdit[];
}

export interface Diagnostic {
  /** the error catalogue's code (`UNEXPECTED_TOKEN`, `UNKNOWN_FIELD`, `RUNS_LOCALLY`, …) */
  readonly code: QueryErrorCode;
  readonly message: string;
  /** half-open offsets into the text given to `diagnose` */
  readonly span: Span;
  readonly severity: Severity;
  readonly hint?: string;
  readonly fixes: readonly Fix[];
  /**
   * the text stops before the query is complete (`from courses where`): a
   * front end may show this gently while the person is still typing
   */
  readonly incomplete?: true;
}

/**
 * The diagnostics of `text`, in order of position.
 * @example
 * diagnose('from courses where subjet = math', { resources: [{ id: 'courses', fields: [{ id: 'subject', type: 'text' }] }] })
 * // → [{ code: 'UNKNOWN_FIELD', message: '"courses" has no field "subjet"', span: { start: 19, end: 25 },
 * //      severity: 'error', hint: 'did you mean "subject"?',
 * //      fixes: [{ title: 'Change to subject', edits: [{ span: { start: 19, end: 25 }, text: 'subject' }] }] }]
 */
export function diagnose(text: string, context: LanguageContext = {}): Diagnostic[] {
  const out: Diagnostic[] = [];
  for (const piece of statementsOf(text)) {
    for (const diagnostic of diagnoseStatement(piece.text, context)) out.push(moved(diagnostic, piece));
  }
  return out;
}

function moved(diagnostic: Diagnostic, piece: Piece): Diagnostic {
  if (piece.start === 0) return diagnostic;
  const shift = (span: Span): Span => ({ start: span.start + piece.start, end: span.end + piece.start });
  return {
    ...diagnostic,
    span: shift(diagnostic.span),
    fixes: diagnostic.fixes.map((fix) => ({ ...fix, edits: fix.edits.map((edit) => ({ ...edit, span: shift(edit.span) })) })),
  };
}

function diagnoseStatement(text: string, context: LanguageContext): Diagnostic[] {
  let query: Query;
  try {
    query = parse(text);
  } catch (error) {
    if (!(error instanceof QueryError)) throw error;
    const fixes = syntaxFixes(error, text);
    return [fromQueryError(error, 'error', fixes)];
  }
  const out: Diagnostic[] = [];
  let bound = query;
  if (context.params !== undefined) {
    const values: Record<string, Params[string]> = {};
    for (const [name, value] of Object.entries(context.params)) if (value !== undefined) values[name] = value;
    try {
      bound = bind(query, values);
    } catch (error) {
      if (!(error instanceof QueryError)) throw error;
      return [fromQueryError(error, 'error')];
    }
    for (const param of parametersOf(bound)) {
      out.push({
        code: 'UNBOUND_PARAMETER',
        message: `parameter $${param.name} has no value here`,
        span: param.span,
        severity: 'information',
        hint: `give it a value when the query runs (--param ${param.name}=…), or a default under params:`,
        fixes: [],
      });
    }
  }
  // Checked after binding, so a declared resource or value is checked too; a bound value keeps its
  // parameter's span, where a fix would replace the parameter, not its default, so it gets none.
  out.push(...sourceDiagnostics(bound, context));
  out.push(...schemaDiagnostics(bound, context).map((d) => (text.startsWith('$', d.span.start) ? { ...d, fixes: [] } : d)));
  out.push(...targetDiagnostics(bound, context));
  out.push(...integerDivisions(bound, context));
  return out.sort((a, b) => a.span.start - b.span.start);
}

// ---------------------------------------------------------------------------
// Whole-number division (docs/expressions.md): a warning, as PostgreSQL's answer is right but rarely the one meant

/**
 * Each `a / b` whose sides are both whole numbers (int4 or int8 fields, whole
 * literals, `count(*)`), where PostgreSQL divides toward zero: `count(*) *
 * 100 / total` is 0 for most groups. The fix writes the literal as `100.0`.
 */
function integerDivisions(query: Query, context: LanguageContext): Diagnostic[] {
  const types = fieldTypes(query, context);
  const leafType = (leaf: Expression): ValueType => {
    if (leaf.kind === 'field') return types(leaf);
    if (leaf.kind !== 'aggregate') return 'unknown';
    if (leaf.fn === 'count') return 'int8';
    const field = leaf.field === undefined ? 'unknown' : leaf.field.kind === 'field' ? types(leaf.field) : typeOf(leaf.field);
    if (leaf.fn === 'avg') return 'numeric';
    // PostgreSQL's sum of an int4 is an int8, of an int8 a numeric
    if (leaf.fn === 'sum') return field === 'int4' ? 'int8' : field === 'int8' ? 'numeric' : field;
    return field;
  };
  const typeOf = (e: Expression): ValueType => {
    try {
      return expressionType(e, leafType);
    } catch {
      return 'unknown'; // a type error is the run's to tell
    }
  };
  const whole = (t: ValueType): boolean => t === 'int4' || t === 'int8';
  const out: Diagnostic[] = [];
  const visit = (e: Expression): Expression => {
    if (e.kind === 'binary' && e.op === '/' && whole(typeOf(e.left)) && whole(typeOf(e.right))) {
      const literal = [e.right, e.left].find((side) => side.kind === 'number');
      out.push({
        code: 'INTEGER_DIVISION',
        message: queryError('INTEGER_DIVISION', e.span, [expressionText(e.left), expressionText(e.right)]).message,
        span: e.span,
        severity: 'warning',
        hint: 'write a number with a point for a fraction (100.0), or cast one side: x::numeric',
        fixes: literal === undefined ? [] : [{ title: `Divide as a numeric: ${expressionText(literal)}.0`, edits: [{ span: literal.span, text: `${expressionText(literal)}.0` }] }],
      });
    }
    // an aggregate's argument divides the records' values (sum(a / b))
    if (e.kind === 'aggregate' && e.field !== undefined) visit(e.field);
    return isComputed(e) ? mapChildren(e, visit) : e;
  };
  const conditions = (c: Condition | undefined): void => {
    if (c === undefined) return;
    if (c.kind === 'comparison') [c.left, c.right].forEach(visit);
    else if (c.kind === 'and' || c.kind === 'or') c.conditions.forEach(conditions);
    else if (c.kind === 'not') conditions(c.condition);
  };
  for (const item of query.select?.items ?? []) if (item.value.kind !== 'star') visit(item.value);
  for (const key of query.group?.keys ?? []) visit(key);
  for (const key of query.order?.keys ?? []) visit(key.field);
  conditions(query.where?.condition);
  conditions(query.having?.condition as Condition | undefined);
  return out;
}

/** The type of a field a query names, from the context's resources (`unknown` where it knows none). */
function fieldTypes(query: Query, context: LanguageContext): (field: Field) => ValueType {
  const byQualifier = new Map<string, ReadonlyMap<string, string>>();
  let first: ReadonlyMap<string, string> | undefined;
  querySources(query).forEach((from, side) => {
    if (from.resource.kind === 'param') return;
    const scope = scopeOf(context, from.resource.value);
    const fields = from.union !== undefined ? unionOf(from, context, [])?.fields : scope?.resources === undefined ? undefined : findIn(scope.resources, scope.resource)?.fields;
    if (fields === undefined) return;
    const map = new Map(fields.map((f) => [f.id, f.type]));
    byQualifier.set(from.alias?.name ?? from.resource.value, map);
    if (side === 0) first = map;
  });
  const single = querySources(query).length === 1;
  return (field) => {
    const map = field.qualifier !== undefined ? byQualifier.get(field.qualifier) : single ? first : undefined;
    const type = map?.get(field.name);
    return type === undefined ? 'unknown' : valueTypeOf(type as FieldType);
  };
}

function fromQueryError(error: QueryError, severity: Severity, fixes: readonly Fix[] = []): Diagnostic {
  return {
    code: error.code,
    message: error.message,
    span: error.span,
    severity,
    ...(error.hint === undefined ? {} : { hint: error.hint }),
    fixes,
    ...(error.code === 'UNEXPECTED_END_OF_INPUT' ? { incomplete: true as const } : {}),
  };
}

function replace(span: Span, text: string, title = `Change to ${text}`): Fix {
  return { title, edits: [{ span, text }] };
}

// ---------------------------------------------------------------------------
// Quick fixes for syntax errors, from what the error says and the tokens around it

function syntaxFixes(error: QueryError, text: string): Fix[] {
  const found = text.slice(error.span.start, error.span.end);
  switch (error.code) {
    case 'UNTERMINATED_STRING': {
      const quote = text.charAt(error.span.start);
      return [{ title: `Close the string with ${quote}`, edits: [{ span: { start: error.span.end, end: error.span.end }, text: quote }] }];
    }
    case 'UNTERMINATED_FIELD': {
      // Most likely the name ends before the operator or punctuation that follows it on its line.
      const line = /^[^\r\n]*/.exec(text.slice(error.span.start + 1))![0];
      const stop = line.search(/[=!<>(),;]/);
      const name = (stop < 0 ? line : line.slice(0, stop)).trimEnd();
      const at = error.span.start + 1 + name.length;
      return [{ title: 'Close the field name with `', edits: [{ span: { start: at, end: at }, text: '`' }] }];
    }
    case 'INVALID_ESCAPE':
      return [replace(error.span, `\\${found}`, 'Write the backslash as \\\\')];
    case 'UNEXPECTED_CHARACTER': {
      const pair = text.slice(error.span.start, error.span.start + 2);
      if (pair === '&&' || pair === '||') {
        const word = pair === '&&' ? 'and' : 'or';
        return [replace({ start: error.span.start, end: error.span.start + 2 }, word)];
      }
      return [];
    }
    case 'UNEXPECTED_TOKEN':
      return tokenFixes(error, text, found);
    default:
      return [];
  }
}

function tokenFixes(error: QueryError, text: string, found: string): Fix[] {
  const wants = (what: string): boolean => error.expected.includes(what);
  const before = text.slice(0, error.span.start);
  const fixes: Fix[] = [];
  const lower = found.toLowerCase();
  if (keywords.has(lower)) {
    if (wants('a value') || wants('a resource id or name')) fixes.push(replace(error.span, formatString(found), `Quote it: ${formatString(found)}`));
    else if (wants('a field name')) fixes.push(replace(error.span, formatField(found), `Quote it: ${formatField(found)}`));
    return fixes;
  }
  const token = queryLexer.tokenize(found).tokens[0];
  if (token?.tokenType.name === 'Bareword') {
    const typo = closestKeyword(found, error.expected);
    if (typo !== undefined) fixes.push(replace(error.span, typo));
  }
  if (found.startsWith('"') || found.startsWith("'")) {
    if (wants('a field name') && token?.tokenType.name === 'String') {
      const name = unescapeString(found);
      fixes.push(replace(error.span, formatField(name), `Quote the field name with backticks: ${formatField(name)}`));
    }
  }
  if (found === '(') {
    const operator = /(!=|<>|=)\s*$/.exec(before);
    if (operator !== null) {
      const start = before.length - operator[0].length;
      const word = operator[1] === '=' ? 'in' : 'not in';
      fixes.push(replace({ start, end: start + operator[1]!.length }, word, `Compare with a list: ${word} (…)`));
    }
  }
  if (found === '=' && /=\s*$/.test(before)) fixes.push(replace(error.span, '', 'Compare with a single ='));
  if (found === ')' && /,\s*$/.test(before)) {
    const comma = before.lastIndexOf(',');
    fixes.push(replace({ start: comma, end: comma + 1 }, '', 'Remove the ","'));
  }
  return fixes;
}

/** The expected keyword `word` is most likely a typo of (the rule parse's own hint follows). */
function closestKeyword(word: string, expected: readonly string[]): string | undefined {
  const lower = word.toLowerCase();
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const name of expected) {
    if (!name.startsWith('"')) continue;
    const keyword = name.slice(1, -1);
    const head = keyword.split(' ')[0]!;
    if (!/^[a-z]+$/.test(head)) continue;
    const distance = editDistance(lower, head, 2);
    const allowed = Math.max(lower.length, head.length) <= 4 ? 1 : 2;
    if (distance <= allowed && distance < bestDistance) {
      best = keyword;
      bestDistance = distance;
    }
  }
  return best;
}

// ---------------------------------------------------------------------------
// Names and values against the context's schema

/**
 * A union source's resource as one (`unionSchema`); null when a resource
 * of it is unknown, which is then reported in `out` at its place, or is a
 * parameter not yet bound.
 */
function unionOf(from: From, context: LanguageContext, out: Diagnostic[]): ResourceSchema | null {
  const members = unionMembers(from) as readonly StringValue[];
  if (members.some((member) => member.kind !== 'string')) return null;
  const merged = unionSchema(members.map((member) => member.value), context);
  if (merged !== undefined) return merged;
  for (const member of members) {
    const scope = scopeOf(context, member.value);
    if (scope?.resources === undefined || findIn(scope.resources, scope.resource) !== undefined) continue;
    if (scope.source === undefined && splitSource(member.value).source !== undefined) continue;
    out.push(...unknownResource(member.span, scope.resource, scope.source, scope.resources, scope.allResources));
  }
  return null;
}

/** Fields every datastore table has, whether or not a context lists them. */
const implicitFields: readonly FieldSchema[] = [{ id: '_id', type: 'int' }];

function schemaDiagnostics(query: Query, context: LanguageContext): Diagnostic[] {
  const out: Diagnostic[] = [];
  const joined = query.joins !== undefined;
  const named = namedFields(query);
  const sides = querySources(query);
  // In a join, each side whose fields are known: an unqualified field none of them has is unknown too.
  const joinedSides: { readonly qualifier: string; readonly known: ReadonlyMap<string, FieldSchema> }[] = [];
  sides.forEach((from, side) => {
    if (from.resource.kind === 'param') return;
    const name = from.resource.value;
    // `portal:courses` is looked up in the source `portal` (docs/aggregates.md); a name no source has is sourceDiagnostics'.
    const scope = scopeOf(context, name);
    if (scope?.resources === undefined) return;
    const resource = from.union === undefined ? findIn(scope.resources, scope.resource) : unionOf(from, context, out);
    if (resource === null) return;
    if (resource === undefined) {
      // A joined resource of a named source is sourceDiagnostics'; `name:resource` where the context knows no
      // sources may be another source's, so it is not called unknown here.
      if (side > 0 || (scope.source === undefined && splitSource(name).source !== undefined)) return;
      out.push(...unknownResource(from.resource.span, scope.resource, scope.source, scope.resources, scope.allResources));
      return;
    }
    if (resource.fields === undefined) return;
    const known = new Map<string, FieldSchema>();
    for (const field of [...implicitFields, ...resource.fields]) known.set(field.id, field);
    // `rank` is a field of a full-text search's answer (docs/ckan-2.11-reference.md).
    if (side === 0 && query.search !== undefined && !known.has('rank')) known.set('rank', { id: 'rank', type: 'float' });
    const shown = resource.alias ?? resource.id;
    // In a join, each resource's fields are those qualified by it (its alias, or its name as written).
    const qualifier = from.alias?.name ?? name;
    const ours = (field: Field): boolean => (joined ? field.qualifier === qualifier : field.qualifier === undefined || field.qualifier === qualifier);
    if (joined) joinedSides.push({ qualifier, known });
    for (const field of named) {
      if (!ours(field) || known.has(field.name)) continue;
      const near = nearestNames(field.name, known.keys());
      out.push({
        code: 'UNKNOWN_FIELD',
        message: queryError('UNKNOWN_FIELD', field.span, [field.name, shown]).message,
        span: field.span,
        severity: 'error',
        hint: near.length > 0 ? `did you mean ${JSON.stringify(near[0])}?` : `${shown} has the fields ${[...known.keys()].filter((f) => f !== '_id').slice(0, 12).join(', ')}`,
        // A qualified field's span holds its qualifier (`c.levl`): the fix keeps it.
        fixes: near.map((each) => replace(field.span, field.qualifier === undefined ? formatField(each) : `${field.qualifier}.${formatField(each)}`)),
      });
    }
    if (!joined && query.where !== undefined) valueChecks(query.where.condition, known, out);
  });
  if (joined && joinedSides.length === sides.length) out.push(...unknownUnqualified(named, joinedSides));
  return out;
}

/**
 * An unqualified field of a join that no joined resource has (`sum(scor)`): UNKNOWN_FIELD at its place,
 * with the nearest field of any side, qualified (`e.score`), as the hint and the fix.
 */
function unknownUnqualified(named: readonly Field[], sides: readonly { readonly qualifier: string; readonly known: ReadonlyMap<string, FieldSchema> }[]): Diagnostic[] {
  const out: Diagnostic[] = [];
  for (const field of named) {
    if (field.qualifier !== undefined || sides.some((side) => side.known.has(field.name))) continue;
    const near = sides
      .flatMap((side) => nearestNames(field.name, side.known.keys()).map((name) => ({ name, text: `${side.qualifier}.${formatField(name)}`, distance: editDistance(field.name, name) })))
      .sort((a, b) => a.distance - b.distance);
    out.push({
      code: 'UNKNOWN_FIELD',
      message: `no joined resource has a field ${JSON.stringify(field.name)} (${sides.map((side) => side.qualifier).join(', ')})`,
      span: field.span,
      severity: 'error',
      hint: near.length > 0 ? `did you mean ${near[0]!.text}?` : 'qualify each field by its resource (e.field, c.field)',
      fixes: near.slice(0, 3).map((each) => replace(field.span, each.text)),
    });
  }
  return out;
}

/** Every field a query names, each once, in clause order; not the names its answer's columns get (`as n`), which having and order by may use. */
function namedFields(query: Query): Field[] {
  const out = new Set<Field>();
  const add = (field: Field): void => void out.add(field);
  if (query.where !== undefined) for (const field of conditionFieldNodes(query.where.condition)) add(field);
  const outputs = outputNames(query);
  const operand = (each: Expression | Star): void => {
    if (each.kind === 'star') return;
    if (each.kind === 'field') {
      if (!(each.qualifier === undefined && outputs.has(each.name))) add(each);
    } else if (each.kind === 'bucket') {
      add(each.field);
    } else if (each.kind === 'aggregate') {
      // an aggregate's argument names the records' fields, never an output name
      if (each.field !== undefined) expressionFields(each.field).forEach(add);
    } else {
      for (const f of expressionFields(each)) if (!(f.qualifier === undefined && outputs.has(f.name))) add(f);
    }
  };
  // A select item that is a field is the records' field (its column takes its name, so it is no other column's).
  for (const item of query.select?.items ?? []) {
    if (item.value.kind === 'field') add(item.value);
    else operand(item.value);
  }
  for (const each of query.search?.fields ?? []) add(each.field);
  for (const key of query.group?.keys ?? []) operand(key);
  if (query.having !== undefined) for (const each of conditionOperands(query.having.condition)) operand(each);
  for (const key of query.order?.keys ?? []) operand(key.field);
  for (const item of query.facet?.items ?? []) add(item.field);
  for (const join of query.joins ?? []) for (const pair of join.on) [pair.left, pair.right].forEach(add);
  return [...out];
}

/**
 * A resource that its source's complete list does not hold: UNKNOWN_RESOURCE,
 * with the nearest names (written after `source:` when it was).
 */
function unknownResource(span: Span, name: string, source: string | undefined, resources: readonly ResourceSchema[], all: boolean): Diagnostic[] {
  if (!all || name === '_table_metadata') return [];
  const before = source === undefined ? '' : `${source}:`;
  const names = resources.flatMap((r) => (r.alias === undefined ? [r.id] : [r.alias, r.id]));
  const near = nearestNames(name, names).map((each) => `${before}${each}`);
  const written = `${before}${name}`;
  return [
    {
      code: 'UNKNOWN_RESOURCE',
      message: queryError('UNKNOWN_RESOURCE', span, [written]).message,
      span,
      severity: 'error',
      ...(near.length > 0
        ? { hint: `did you mean ${JSON.stringify(near[0])}?` }
        : names.length > 0
          ? { hint: `the resources${source === undefined ? '' : ` of ${source}`} are ${names.slice(0, 8).join(', ')}${names.length > 8 ? ', …' : ''}` }
          : {}),
      fixes: near.map((each) => replace(span, formatResource(each))),
    },
  ];
}

/**
 * The `name:` of each resource against the sources the context knows (none
 * when it knows none): a name that is no source is UNKNOWN_SOURCE, as the
 * run would say; a joined resource of a source whose every resource is known
 * is checked against them (the `from` resource is schemaDiagnostics').
 */
function sourceDiagnostics(query: Query, context: LanguageContext): Diagnostic[] {
  const sources = context.sources;
  if (sources === undefined) return [];
  const known = sources.map((s) => s.name);
  if (context.source !== undefined && !known.includes(context.source)) known.push(context.source);
  const out: Diagnostic[] = [];
  const froms = querySources(query);
  froms.forEach((from, i) => {
    if (from.resource.kind !== 'string') return;
    const written = from.resource.value;
    const { source } = splitSource(written);
    if (source === undefined) return;
    const scope = scopeOf(context, written);
    if (scope === undefined) {
      const span = from.resource.span;
      // A bareword's span holds the name as written: the error is at `name:` (where the run puts it); a quoted resource, all of it.
      const bare = span.end - span.start === written.length;
      const at = bare ? { start: span.start, end: span.start + source.length } : span;
      const near = nearestNames(source, known);
      out.push({
        code: 'UNKNOWN_SOURCE',
        message: queryError('UNKNOWN_SOURCE', at, [source]).message,
        span: bare ? { start: at.start, end: at.end + 1 } : at,
        severity: 'error',
        hint: unknownSourceHint(written, known, context.source),
        fixes: bare ? near.map((each) => replace(at, each)) : [],
      });
      return;
    }
    if (i > 0 && scope.resources !== undefined && findIn(scope.resources, scope.resource) === undefined) {
      out.push(...unknownResource(from.resource.span, scope.resource, scope.source, scope.resources, scope.allResources));
    }
  });
  return out;
}

/** The names the answer of a grouped or renamed query gives its columns (empty where the query cannot be shaped). */
function outputNames(query: Query): ReadonlySet<string> {
  if (isPlainQuery(query) || query.facet !== undefined && query.select === undefined && query.group === undefined) return new Set();
  try {
    return new Set(shapeOf(query).columns?.map((c) => c.name) ?? []);
  } catch {
    return new Set((query.select?.items ?? []).flatMap((item) => (item.as === undefined ? [] : [item.as.name])));
  }
}

/** Every operand a `having` tests. */
function conditionOperands(condition: Condition<Operand>, out: Operand[] = []): Operand[] {
  switch (condition.kind) {
    case 'not':
      return conditionOperands(condition.condition, out);
    case 'and':
    case 'or':
      for (const member of condition.conditions) conditionOperands(member, out);
      return out;
    case 'comparison':
      for (const leaf of conditionLeaves(condition)) if (leaf.kind === 'field' || leaf.kind === 'aggregate') out.push(leaf);
      return out;
    default:
      out.push(condition.field);
      return out;
  }
}

function formatResource(name: string): string {
  return /^[A-Za-z_][A-Za-z0-9_.:-]*$/.test(name) && !keywords.has(name.toLowerCase()) ? name : formatString(name);
}

/** Values of a type the field's column cannot read: PostgreSQL refuses them, and CKAN answers 409. */
function valueChecks(condition: Condition, known: ReadonlyMap<string, FieldSchema>, out: Diagnostic[]): void {
  const check = (field: Field, value: Value): void => {
    const type = known.get(field.name)?.type;
    if (type === undefined || value.kind === 'param' || value.kind === 'null') return;
    const problem = typeProblem(type, value);
    if (problem === undefined) return;
    out.push({
      code: 'VALUE_TYPE_MISMATCH',
      message: queryError('VALUE_TYPE_MISMATCH', value.span, [field.name, type, problem]).message,
      span: value.span,
      severity: 'warning',
      fixes: [],
    });
  };
  switch (condition.kind) {
    case 'eq':
    case 'compare':
      check(condition.field, condition.value);
      return;
    case 'in':
      for (const value of condition.values) check(condition.field, value);
      return;
    case 'between':
      check(condition.field, condition.low);
      check(condition.field, condition.high);
      return;
    case 'like': {
      // Every engine refuses a pattern on a field that holds no text (PostgreSQL has no such operator).
      const type = known.get(condition.field.name)?.type;
      if (type === undefined || type === 'text') return;
      const operator = condition.ignoreCase ? 'ilike' : 'like';
      out.push({
        code: 'LIKE_NEEDS_TEXT',
        message: queryError('LIKE_NEEDS_TEXT', condition.field.span, [operator, condition.field.name, type]).message,
        span: condition.field.span,
        severity: 'error',
        hint: `${operator} matches text: compare ${formatField(condition.field.name)} with =, in or a range instead`,
        fixes: [],
      });
      return;
    }
    case 'is-null':
    case 'comparison':
      return;
    case 'not':
      valueChecks(condition.condition, known, out);
      return;
    case 'and':
    case 'or':
      for (const member of condition.conditions) valueChecks(member, known, out);
      return;
    default:
      assertNever(condition, 'condition');
  }
}

const INTEGER = /^\s*[+-]?\d+\s*$/;
const DECIMAL = /^\s*[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?\s*$|^\s*[+-]?(?:nan|infinity|inf)\s*$/i;
/** PostgreSQL's boolean input: these words, or any unique prefix of them. */
const BOOLEAN = /^\s*(?:t|tr|tru|true|y|ye|yes|on|1|f|fa|fal|fals|false|n|no|of|off|0)\s*$/i;
const DATE_WORDS = /^\s*(?:now|today|tomorrow|yesterday|epoch|infinity|-infinity|allballs)\s*$/i;

/** What is wrong with `value` for a column of `type`, in words, or undefined when PostgreSQL reads it. */
function typeProblem(type: string, value: Exclude<Value, Parameter>): string | undefined {
  const shown = value.kind === 'string' ? formatString(value.value) : value.kind === 'null' ? 'null' : String(value.value);
  switch (type) {
    case 'int':
    case 'int4':
    case 'int8':
      if (value.kind === 'boolean') return shown;
      if (value.kind === 'string' && !INTEGER.test(value.value)) return shown;
      return undefined;
    case 'numeric':
    case 'float':
    case 'float8':
      if (value.kind === 'boolean') return shown;
      if (value.kind === 'string' && !DECIMAL.test(value.value)) return shown;
      return undefined;
    case 'bool':
      if (value.kind === 'number') return shown;
      if (value.kind === 'string' && !BOOLEAN.test(value.value)) return shown;
      return undefined;
    case 'date':
    case 'timestamp':
      if (value.kind === 'number' || value.kind === 'boolean') return shown;
      if (value.kind === 'string' && !/\d/.test(value.value) && !DATE_WORDS.test(value.value)) return shown;
      return undefined;
    default:
      return undefined;
  }
}

// ---------------------------------------------------------------------------
// What the target cannot say: notes, never errors

function targetDiagnostics(query: Query, context: LanguageContext): Diagnostic[] {
  const target = context.target ?? 'ckan-2.11';
  let standIn: Query;
  try {
    standIn = withPlaceholders(query);
  } catch {
    // One parameter both a count and a name (`from $n limit $n`): no stand-in fits, and no value would.
    return [];
  }
  let planned;
  try {
    planned = planQuery(standIn, { target });
  } catch (error) {
    if (!(error instanceof QueryError)) throw error;
    // A run reads the joined resources' fields and qualifies the field (or says AMBIGUOUS_FIELD): only the printed SQL needs it written.
    if (error.code === 'UNQUALIFIED_FIELD') return [];
    // So does a union's: the SQL of a union names each resource's columns, which a run reads first.
    if (error.code === 'TARGET_CANNOT_EXPRESS' && hasUnion(standIn)) return [];
    return [fromQueryError(error, 'error')];
  }
  const rest = planned.residual?.where?.condition;
  if (rest === undefined) return [];
  const members = rest.kind === 'and' ? rest.conditions : [rest];
  return members.map((member): Diagnostic => {
    const culprit = firstUnsaid(member);
    return {
      code: 'RUNS_LOCALLY',
      message: queryError('RUNS_LOCALLY', member.span, [constructName(culprit), target]).message,
      span: member.span,
      severity: 'information',
      hint:
        target === 'ckan-2.11'
          ? 'a CKAN 2.12 portal (target ckan-2.12) or the sql target says more in one request'
          : 'the sql target says the whole query in one request',
      fixes: [],
    };
  });
}

/** The innermost condition that is more than `=` and `in`, for the note's words. */
function firstUnsaid(condition: Condition): Condition {
  if (condition.kind !== 'and' && condition.kind !== 'or') return condition;
  const inner = condition.conditions.find((c) => !onlyEqualities(c));
  return inner === undefined ? condition : firstUnsaid(inner);
}

/**
 * The query with a stand-in for every parameter still unbound, so the plan
 * can be made: a number where a count goes, text anywhere else. A plan's
 * shape does not depend on the values.
 */
function withPlaceholders(query: Query): Query {
  const params = parametersOf(query);
  if (params.length === 0) return query;
  const counts = new Set<string>();
  for (const clause of [query.limit, query.offset]) if (clause?.value.kind === 'param') counts.add(clause.value.name);
  const values: Record<string, Params[string]> = {};
  for (const param of params) values[param.name] = counts.has(param.name) ? 0 : 'x';
  return bind(query, values);
}

/**
 * `datastore_search_sql` as CKAN 2.11.5 serves it (docs/ckan-2.12-reference.md
 * §4): one statement (no `\'`), wrapped as `SELECT * FROM (…) AS blah LIMIT
 * rows_max+1` and read as SQLAlchemy's `text()` reads it (`\:` is `:`, a bare
 * `:name` a bind parameter: datastore/sql-text.ts), in a read-only transaction with a statement timeout; the
 * tables and functions it uses are read from `EXPLAIN (VERBOSE, FORMAT
 * JSON)` and from the text; system tables, tables that are not readable
 * resources and functions off CKAN's allow-list are refused with 403.
 */
import type { FieldInfo } from '../../datastore/types.js';
import { DatastoreError, validationError } from '../../errors.js';
import type { SqlResult } from '../types.js';
import { ALLOWED_FUNCTIONS } from './allowed-functions.js';
import { readSqlText } from '../../datastore/sql-text.js';
import type { Db, SqlSession } from './db.js';
import { isPgError, SQLSTATE } from './db.js';
import { databaseError } from './errors.js';
import { exactNumber } from './records.js';

/** Options of `runSearchSql`. */
export interface RunSearchSqlOptions {
  readonly timeout: number;
  /** CKAN's `rows_max`: more rows set `records_truncated` */
  readonly maxRows: number;
  /** may the caller read this table (a resource id or alias)? */
  readonly readable: (name: string) => boolean;
  readonly signal?: AbortSignal;
  /** the functions a statement may call (CKAN's `allowed_functions_file`: lower-case, or `"Quoted"` to match case); default CKAN's list */
  readonly allowedFunctions?: ReadonlySet<string>;
}

function forbidden(message: string): DatastoreError {
  const text = `Access denied: ${message}`;
  return new DatastoreError('FORBIDDEN', text, { body: { __type: 'Authorization Error', message: text } });
}

/**
 * Runs one `datastore_search_sql` statement.
 * @example
 * await runSearchSql(db, 'SELECT count(*) FROM "courses"', { timeout: 60000, maxRows: 32000, readable: () => true });
 * // → { sql: 'SELECT count(*) FROM "courses"', fields: [{ id: 'count', type: 'int8' }], records: [{ count: 12 }] }
 */
export async function runSearchSql(db: Db, sql: unknown, options: RunSearchSqlOptions): Promise<SqlResult> {
  if (typeof sql !== 'string' || sql === '') throw validationError('sql', 'Missing value');
  if (!isSingleStatement(sql)) throw validationError('query', 'Query is not a single statement.');
  // CKAN hands the wrapped text to SQLAlchemy's text(): `\:` becomes `:`, a `:name` is a bind parameter it has no value for
  const read = readSqlText(`SELECT * FROM (${sql}) AS blah LIMIT ${options.maxRows + 1} ;`);
  if ('bindParameter' in read) throw bindParameterError(read.bindParameter);
  const wrapped = read.sql;
  let statement = wrapped;
  try {
    return await db.transaction(async (tx) => {
      // CKAN's get_table_and_function_names_from_sql: the statement, then each crosstab's inner SQL, explained in turn.
      const functions = new Set<string>();
      const tables: string[] = [];
      const queries = [wrapped];
      for (let query = queries.pop(); query !== undefined; query = queries.pop()) {
        for (const name of functionNames(query)) functions.add(name);
        statement = `EXPLAIN (VERBOSE, FORMAT JSON) ${query}`;
        const plan = await tx.query(statement);
        const text = plan.rows[0]?.['QUERY PLAN'];
        walkPlan((typeof text === 'string' ? JSON.parse(text) : text) as PlanNode[], { tables, functions, queries });
      }
      if (tables.some((t) => t.startsWith('pg_'))) throw forbidden('Not authorized to access system tables');
      if (tables.some((t) => !options.readable(t))) throw forbidden('Not authorized to read resource.');
      const allowed = options.allowedFunctions ?? ALLOWED_FUNCTIONS;
      for (const f of functions) {
        if (!allowed.has(f.toLowerCase()) && !allowed.has(`"${f}"`)) throw forbidden(`Not authorized to call function ${f}`);
      }
      statement = wrapped;
      const result = await tx.query(wrapped);
      const typeNames = await typeNamesOf(tx, result.fields.map((f) => f.dataTypeID));
      const fields: FieldInfo[] = result.fields.map((f) => {
        const type = typeNames.get(f.dataTypeID) ?? 'text';
        return { id: f.name, type: (type === 'nested' ? 'json' : type) as FieldInfo['type'] };
      });
      const rows = result.rows.length > options.maxRows ? result.rows.slice(0, options.maxRows) : result.rows;
      const records = rows.map((row) => Object.fromEntries(result.fields.map((f) => [f.name, convert(row[f.name], typeNames.get(f.dataTypeID) ?? 'text')])));
      return { sql, records, fields, ...(result.rows.length > options.maxRows ? { records_truncated: true } : {}) };
    }, { readOnly: true, statementTimeout: options.timeout, ...(options.signal === undefined ? {} : { signal: options.signal }) });
  } catch (error) {
    if (isPgError(error) && (error.code === SQLSTATE.permissionDenied || error.code === SQLSTATE.readOnlyTransaction)) {
      throw forbidden('Not authorized to read resource.');
    }
    throw databaseError(error, options.signal, () => {
      const strip = (text: string): string => text.replace('EXPLAIN (VERBOSE, FORMAT JSON) ', '').replace('EXPLAIN ', '');
      const message = strip(error instanceof Error ? error.message : String(error));
      const failure = validationError('query', message);
      Object.assign(failure.body as object, { info: { statement: [strip(statement)], params: [{}], orig: [message] } });
      return failure;
    }, 'Query took too long');
  }
}

/**
 * A `:name` in the statement, which SQLAlchemy reads as a bind parameter even
 * inside quotes. CKAN lets SQLAlchemy's error through as an HTTP 500; here it
 * is a Validation Error that says how to write the colon (README, differences).
 */
function bindParameterError(name: string): DatastoreError {
  return validationError('query', `A value is required for bind parameter '${name}': CKAN runs the statement through SQLAlchemy's text(), where :${name} is a parameter even inside quotes; write \\: for a colon`);
}

interface PlanNode {
  readonly Plan?: PlanNode;
  readonly Plans?: readonly PlanNode[];
  readonly 'Relation Name'?: string;
  readonly 'Function Name'?: string;
  readonly 'Function Call'?: string;
}

/** What a plan names: tables read, functions called, and crosstab queries still to explain. */
interface PlanNames {
  readonly tables: string[];
  readonly functions: Set<string>;
  readonly queries: string[];
}

function walkPlan(nodes: readonly PlanNode[], names: PlanNames): void {
  for (const node of nodes) {
    const plan = node.Plan ?? node;
    if (typeof plan['Relation Name'] === 'string') names.tables.push(plan['Relation Name']);
    const fn = plan['Function Name'];
    if (typeof fn === 'string' && fn.startsWith('crosstab')) {
      // CKAN explains a crosstab's SQL when it is a literal; any other crosstab reads a table no one may read.
      const inner = crosstabQuery(plan['Function Call'] ?? '');
      if (inner === undefined) names.tables.push('_unknown_crosstab_sql');
      else names.queries.push(inner);
    } else if (typeof fn === 'string') names.functions.add(fn);
    if (plan.Plans !== undefined) walkPlan(plan.Plans, names);
  }
}

/**
 * The SQL of a `crosstab('…'::text)` call as `EXPLAIN VERBOSE` writes it
 * (CKAN's `_get_subquery_from_crosstab_call`), or undefined when the
 * argument is not one literal.
 * @example crosstabQuery("crosstab('SELECT a FROM t WHERE b = ''x'''::text)") // → "SELECT a FROM t WHERE b = 'x'"
 */
export function crosstabQuery(call: string): string | undefined {
  if (!call.startsWith("crosstab('") || !call.endsWith("'::text)")) return undefined;
  const literal = call.slice(10, -8);
  if (literal.replaceAll("''", '').includes("'")) return undefined;
  return literal.replaceAll("''", "'");
}

async function typeNamesOf(tx: SqlSession, oids: readonly number[]): Promise<Map<number, string>> {
  if (oids.length === 0) return new Map();
  const rows = await tx.query('SELECT oid::int AS oid, typname FROM pg_type WHERE oid = ANY($1::oid[])', [`{${oids.join(',')}}`]);
  return new Map(rows.rows.map((r) => [Number(r['oid']), String(r['typname'])]));
}

/** CKAN's `convert` of one value of the text form, by its type name. */
function convert(value: unknown, type: string): unknown {
  if (value === null || value === undefined) return null;
  const text = String(value);
  if (type === 'nested') return JSON.parse(compositeFirst(text)) as unknown;
  if (type.startsWith('_')) return parseArray(text).map((item) => (item === null ? null : convert(item, type.slice(1))));
  switch (type) {
    case 'int2':
    case 'int4':
    case 'float4':
    case 'float8':
    case 'oid':
      return Number(text);
    case 'int8':
    case 'numeric':
      // Python's int and Decimal are exact: `7.50` and 2^53 + 1 reach the client as written.
      return exactNumber(text);
    case 'bool':
      return text === 't';
    case 'json':
    case 'jsonb':
      return JSON.parse(text) as unknown;
    case 'timestamp':
      // Python's isoformat(): a `T` between date and time.
      return text.replace(' ', 'T');
    case 'timestamptz':
      return text.replace(' ', 'T').replace(/([+-]\d\d)$/, '$1:00');
    default:
      return text;
  }
}

/** The first field of a composite's text form `(a,b)`. */
function compositeFirst(text: string): string {
  const inner = text.slice(1, -1);
  if (!inner.startsWith('"')) return inner.slice(0, inner.indexOf(','));
  let out = '';
  for (let i = 1; i < inner.length; i++) {
    const c = inner[i] as string;
    if (c === '\\') out += inner[++i] ?? '';
    else if (c === '"') {
      if (inner[i + 1] === '"') out += inner[++i];
      else break;
    } else out += c;
  }
  return out;
}

/** A one-dimensional array's text form `{a,"b c",NULL}` → its items as text. */
function parseArray(text: string): (string | null)[] {
  const inner = text.slice(1, -1);
  if (inner === '') return [];
  const items: (string | null)[] = [];
  let i = 0;
  while (i <= inner.length) {
    if (inner[i] === '"') {
      let item = '';
      i++;
      while (i < inner.length && inner[i] !== '"') {
        if (inner[i] === '\\') i++;
        item += inner[i] ?? '';
        i++;
      }
      items.push(item);
      i += 2;
    } else {
      const end = inner.indexOf(',', i);
      const item = inner.slice(i, end === -1 ? inner.length : end);
      items.push(item === 'NULL' ? null : item);
      i = end === -1 ? inner.length + 1 : end + 1;
    }
  }
  return items;
}

/**
 * CKAN's `is_single_statement`: no `\'` anywhere, and nothing but white
 * space or comments after a `;` outside quotes and comments.
 * @example isSingleStatement('SELECT 1; SELECT 2') // → false
 */
export function isSingleStatement(sql: string): boolean {
  if (sql.includes("\\'")) return false;
  let statements = 0;
  let content = false;
  for (const token of tokens(sql)) {
    if (token.kind === 'comment' || token.kind === 'space') continue;
    if (token.kind === 'semicolon') {
      if (content) statements++;
      content = false;
    } else content = true;
  }
  if (content) statements++;
  return statements <= 1;
}

/** Names called as functions in the text: a name (bare or quoted) followed by `(`, keywords aside. */
export function functionNames(sql: string): string[] {
  const names: string[] = [];
  let last: { name: string; keyword: boolean } | undefined;
  for (const token of tokens(sql)) {
    if (token.kind === 'space' || token.kind === 'comment') continue;
    if (token.kind === 'open' && last !== undefined && !last.keyword) names.push(last.name);
    last = token.kind === 'word' ? { name: token.text, keyword: KEYWORDS.has(token.text.toLowerCase()) } : token.kind === 'quoted' ? { name: token.text, keyword: false } : undefined;
  }
  return names;
}

/** Words that take a parenthesis without being a function call. */
const KEYWORDS: ReadonlySet<string> = new Set([
  'select', 'from', 'where', 'and', 'or', 'not', 'in', 'exists', 'any', 'all', 'some', 'as', 'on', 'join', 'using', 'values',
  'over', 'filter', 'within', 'group', 'by', 'order', 'having', 'union', 'intersect', 'except', 'lateral', 'case', 'when',
  'then', 'else', 'is', 'between', 'like', 'ilike', 'similar', 'to', 'limit', 'offset', 'with', 'distinct', 'into', 'set',
  'array', 'row', 'cast', 'partition', 'rows', 'range', 'recursive', 'returning', 'table', 'only', 'escape', 'interval',
  'inner', 'left', 'right', 'full', 'outer', 'cross', 'natural', 'asc', 'desc', 'nulls', 'first', 'last', 'end', 'window',
]);

type Token = { kind: 'word' | 'quoted' | 'open' | 'semicolon' | 'space' | 'comment' | 'other'; text: string };

function* tokens(sql: string): Generator<Token> {
  let i = 0;
  while (i < sql.length) {
    const c = sql[i] as string;
    const start = i;
    if (/\s/.test(c)) {
      while (i < sql.length && /\s/.test(sql[i] as string)) i++;
      yield { kind: 'space', text: sql.slice(start, i) };
    } else if (c === '-' && sql[i + 1] === '-') {
      while (i < sql.length && sql[i] !== '\n') i++;
      yield { kind: 'comment', text: sql.slice(start, i) };
    } else if (c === '/' && sql[i + 1] === '*') {
      let depth = 0;
      while (i < sql.length) {
        if (sql[i] === '/' && sql[i + 1] === '*') [depth, i] = [depth + 1, i + 2];
        else if (sql[i] === '*' && sql[i + 1] === '/') {
          [depth, i] = [depth - 1, i + 2];
          if (depth === 0) break;
        } else i++;
      }
      yield { kind: 'comment', text: sql.slice(start, i) };
    } else if (c === "'") {
      i++;
      while (i < sql.length && !(sql[i] === "'" && sql[i + 1] !== "'")) i += sql[i] === "'" ? 2 : 1;
      i++;
      yield { kind: 'other', text: sql.slice(start, i) };
    } else if (c === '"') {
      i++;
      let name = '';
      while (i < sql.length && !(sql[i] === '"' && sql[i + 1] !== '"')) {
        name += sql[i];
        i += sql[i] === '"' ? 2 : 1;
      }
      i++;
      yield { kind: 'quoted', text: name };
    } else if (c === '$' && /^\$[A-Za-z_]*\$/.test(sql.slice(i))) {
      const tag = (/^\$[A-Za-z_]*\$/.exec(sql.slice(i)) as RegExpExecArray)[0];
      const end = sql.indexOf(tag, i + tag.length);
      i = end === -1 ? sql.length : end + tag.length;
      yield { kind: 'other', text: sql.slice(start, i) };
    } else if (/[A-Za-z_\u0080-\uffff]/.test(c)) {
      while (i < sql.length && /[A-Za-z0-9_$\u0080-\uffff]/.test(sql[i] as string)) i++;
      // `schema.name(` calls `name`; the schema part is skipped by the next word.
      yield { kind: 'word', text: sql.slice(start, i) };
    } else if (c === '(') {
      i++;
      yield { kind: 'open', text: c };
    } else if (c === ';') {
      i++;
      yield { kind: 'semicolon', text: c };
    } else {
      i++;
      yield { kind: 'other', text: c };
    }
  }
}

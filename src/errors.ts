/**
 * The one error catalogue. Codes are stable SCREAMING_SNAKE strings, grouped
 * by stage, each with a typed message function. Error classes differ by the
 * data they carry; callers match on `code`. Rendering happens in one place:
 * `diagnostics.ts`.
 */
import type { Span } from './span.js';

const q = (text: string): string => JSON.stringify(text);

/** Errors about query text: they carry the span of the offending source. */

/** The error body of a failed datastore response (`error` in the envelope). */
export interface ErrorBody {
  readonly __type: string;
  readonly message?: string;
  readonly [param: string]: unknown;
}

export const queryMessages = {
  // lexing
  UNEXPECTED_CHARACTER: (found: string): string => `unexpected character ${q(found)}`,
  UNTERMINATED_STRING: (): string => 'this string is not closed',
  INVALID_ESCAPE: (escape: string): string => `unknown escape ${q(escape)} in a string`,
  UNTERMINATED_FIELD: (): string => 'this backtick-quoted field name is not closed',
  // parsing
  UNEXPECTED_TOKEN: (expected: string, found: string): string => `expected ${expected}, found ${found}`,
  UNEXPECTED_END_OF_INPUT: (expected: string): string => `the query ends too early: expected ${expected}`,
  DUPLICATE_CLAUSE: (clause: string): string => `"${clause}" appears twice; each clause may be given once`,
  MIXED_AND_OR: (): string => 'a group mixes "and" and "or"; add parentheses to say which comes first',
  INVALID_INTEGER: (what: string, found: string): string => `${what} must be a whole number of 0 or more, found ${found}`,
  NUMBER_OUT_OF_RANGE: (found: string): string => `the number ${found} is too large to be represented`,
  NUMBER_NOT_EXACT: (found: string, nearest: string): string =>
    `the number ${found} has more digits than a number here holds exactly: it would be read as ${nearest}`,
  EMPTY_FIELD_NAME: (): string => 'a field name cannot be empty',
  TOO_DEEPLY_NESTED: (limit: number): string => `parentheses are nested more than ${limit} levels deep`,
  // counting, grouping, facets and joins (docs/aggregates.md): the language's own rules
  AGGREGATE_IN_WHERE: (what: string): string =>
    `${what} cannot be tested in where: where keeps records before they are grouped, so no group exists there yet`,
  BUCKET_IN_CONDITION: (what: string): string => `${what} cannot be tested in a condition; compare the field itself, or test the bucket's name in having`,
  FACET_WITH_GROUP: (): string => 'a query cannot both group and facet: facets describe the records a query keeps, not its groups',
  DISTINCT_WITH_GROUP: (): string => '"select distinct" cannot be combined with grouping: each group is already one row',
  DISTINCT_ORDER_NOT_SELECTED: (key: string): string =>
    `"select distinct" records cannot be ordered by ${q(key)}, which they do not show: the distinct records have no one value of it`,
  INVALID_BUCKET_WIDTH: (found: string): string => `a bucket's width must be a number greater than 0, found ${found}`,
  INVALID_TOP: (found: string): string => `top must be a whole number from 1 to 1000, found ${found}`,
  UNKNOWN_QUALIFIER: (qualifier: string): string => `${q(qualifier)} is not the alias or name of a resource of this query`,
  DUPLICATE_ALIAS: (alias: string): string => `two resources of this query are called ${q(alias)}`,
  DUPLICATE_NAME: (name: string): string => `two columns of the result are named ${q(name)}`,
  // expressions (docs/expressions.md)
  UNKNOWN_FUNCTION: (name: string): string => `${q(name)} is not a function ckql knows`,
  WRONG_ARGUMENT_COUNT: (fn: string, wanted: string, found: number): string => `${fn}() takes ${wanted}, found ${found}`,
  UNKNOWN_TYPE: (name: string): string => `${q(name)} is not a type a value can be cast to`,
  UNKNOWN_UNIT: (name: string): string => `${q(name)} is not a unit of date_part or date_trunc`,
  EXPRESSION_TEST: (test: string): string => `${test} tests a field; an expression is compared with = != < <= > >=`,
  TYPE_MISMATCH: (what: string, left: string, right: string): string => `${what} cannot take ${left} and ${right}`,
  DIVISION_BY_ZERO: (): string => 'division by zero',
  INTEGER_DIVISION: (left: string, right: string): string => `${left} / ${right} divides whole numbers: the answer is a whole number too (7 / 2 is 3)`,
  AGGREGATE_IN_AGGREGATE: (what: string): string => `${what} is an aggregate inside an aggregate: aggregates cannot be nested`,
  AGGREGATE_OF_CONSTANT: (fn: string, what: string): string => `${fn}(${what}) reads no field: an aggregate's argument is a field or an expression of fields`,
  NOT_COMPUTED_YET: (what: string, where: string): string => `${what} is read, but not computed by ${where} yet`,
  // windows (docs/expressions.md)
  WINDOW_IN_WHERE: (what: string, clause: string): string =>
    `${what} cannot stand in ${clause}: windows are computed after where, group by and having, over the rows they leave`,
  WINDOW_WITHOUT_OVER: (fn: string): string => `${fn}() is a window function: it needs over (…) to say its rows`,
  OVER_WITHOUT_WINDOW_FUNCTION: (fn: string): string => `${fn}() is not a window function or an aggregate, so it cannot take over (…)`,
  NESTED_WINDOW: (): string => 'a window cannot stand inside another window',
  DISTINCT_IN_WINDOW: (): string => 'count(distinct …) cannot be computed over a window (PostgreSQL refuses it too)',
  QUALIFY_WITHOUT_WINDOW: (): string => 'qualify tests the rows after their windows, and this query computes no window',
  AGGREGATE_IN_QUALIFY: (what: string): string => `${what} cannot be tested in qualify, which tests the rows of the answer`,
  // unions (docs/expressions.md, Unions)
  UNION_TYPE_MISMATCH: (field: string, a: string, aType: string, b: string, bType: string): string =>
    `${q(field)} is ${aType} in ${a} and ${bType} in ${b}: a union's fields must agree in type, or be numbers`,
  // compiling: the meaning of grouped and joined queries
  NOT_GROUPED: (name: string): string => `${name} is neither grouped nor aggregated, so a group has no one value of it`,
  AMBIGUOUS_FIELD: (field: string, first: string, second: string): string => `${q(field)} is a field of both ${q(first)} and ${q(second)}`,
  UNQUALIFIED_FIELD: (field: string): string => `which resource of the join has ${q(field)} is not known here, and the SQL must name it`,
  JOIN_KEYS_ONE_SIDE: (): string => 'both keys of this pair name the same resource; a join pairs a field of each side',
  AGGREGATE_NEEDS_NUMBER: (fn: string, field: string, type: string): string => `${fn} needs a number field; ${q(field)} is ${type}`,
  BUCKET_NEEDS_TYPE: (fn: string, field: string, type: string, wanted: string): string => `${fn}() needs ${wanted} field; ${q(field)} is ${type}`,
  // compiling
  OR_ACROSS_FIELDS: (first: string, other: string): string =>
    `"or" joins conditions on different fields (${q(first)} and ${q(other)}); a datastore_search request can only say "or" between values of one field`,
  AND_INSIDE_OR: (): string => '"and" inside an "or" group cannot be expressed as a datastore_search request',
  TARGET_CANNOT_EXPRESS: (construct: string, target: string): string =>
    `${construct} cannot be sent to a ${target} portal in one request; plan the query to run the rest locally`,
  EMPTY_RESOURCE: (): string => 'the resource id or name is empty',
  // sources: a resource written `source:resource` (docs/aggregates.md, joins across sources)
  UNKNOWN_SOURCE: (name: string): string => `no source named ${q(name)}: the name before ":" in ${q(`${name}:…`)} must name a source of this session`,
  TOO_MANY_NAMES: (clause: string, count: number, max: number): string =>
    `${clause} names ${count} fields, more than the ${max} a datastore_search request may name`,
  SEARCH_READ_AS_FIELDS: (): string => 'a portal reads this search text as a JSON object (a search per field), not as the text',
  NUL_IN_SQL: (): string => 'a NUL character cannot be written in SQL text',
  SCAN_TOO_LARGE: (count: number, max: number): string =>
    `the part of this query the portal can answer matches ${count} records, more than the ${max} ckql reads to finish it locally`,
  JOIN_TOO_LARGE: (rows: number, max: number, exact: boolean): string =>
    exact ? `this join gives ${rows} rows, more than the ${max} a join may give` : `this join gives more than the ${max} rows a join may give`,
  UNBOUND_PARAMETER: (name: string): string => `parameter $${name} is not bound`,
  INVALID_PARAMETER: (name: string, expected: string, found: string): string =>
    `parameter $${name} must be ${expected}, found ${found}`,
  // checking against a source's schema (the language service; a portal would refuse these)
  UNKNOWN_RESOURCE: (name: string): string => `no resource named ${q(name)} in this source`,
  UNKNOWN_FIELD: (field: string, resource: string): string => `${q(resource)} has no field ${q(field)}`,
  LIKE_NEEDS_TEXT: (operator: string, field: string, type: string): string => `"${operator}" needs a text field; ${q(field)} is ${type}`,
  VALUE_TYPE_MISMATCH: (field: string, type: string, found: string): string =>
    `${q(field)} is of type ${type}, and ${found} is not ${/^[aeiou]/i.test(type) ? 'an' : 'a'} ${type} value: a CKAN portal refuses it (409 Invalid query)`,
  // notes of the language service: not errors
  RUNS_LOCALLY: (construct: string, target: string): string =>
    `${construct} cannot be sent to a ${target} portal: ckql fetches the rest of the query's records and applies it locally`,
  // reading back
  UNREADABLE_SQL: (expected: string, found: string): string => `ckql cannot read this SQL back into a query: expected ${expected}, found ${found}`,
  MISPLACED_INTERPOLATION: (position: number): string =>
    `the value interpolated as \${…} number ${position} stands inside a string, a quoted field name or a comment, where it would not be read as a value`,
} as const;

export type QueryErrorCode = keyof typeof queryMessages;

export interface QueryErrorDetails {
  /** what would have been right here, in human words (`'a value'`, `'"where"'`) */
  readonly expected?: readonly string[];
  /** the offending text as the user wrote it, or `'end of input'` */
  readonly found?: string;
  /** one line of advice: `did you mean "where"?` */
  readonly hint?: string;
  /** the query text, so the error can be rendered with a caret excerpt */
  readonly source?: string;
}

/** A query that cannot be parsed, bound or compiled. */
export class QueryError extends Error {
  override readonly name = 'QueryError';
  readonly code: QueryErrorCode;
  /** half-open offsets into `source` */
  readonly span: Span;
  readonly expected: readonly string[];
  readonly found: string | undefined;
  readonly hint: string | undefined;
  readonly source: string | undefined;

  constructor(code: QueryErrorCode, message: string, span: Span, details: QueryErrorDetails = {}) {
    super(message);
    this.code = code;
    this.span = span;
    this.expected = details.expected ?? [];
    this.found = details.found;
    this.hint = details.hint;
    this.source = details.source;
  }
}

/**
 * The same error with another hint: the one of the place it is shown from
 * (`--param s=…`, the playground's parameter box) instead of the library's.
 * @example throw withHint(error, 'type its value in the $s box under Parameters')
 */
export function withHint(error: QueryError, hint: string): QueryError {
  return new QueryError(error.code, error.message, error.span, {
    expected: error.expected,
    ...(error.found === undefined ? {} : { found: error.found }),
    ...(error.source === undefined ? {} : { source: error.source }),
    hint,
  });
}

/**
 * Builds a `QueryError` whose message comes from the catalogue.
 * @example queryError('UNBOUND_PARAMETER', span, ['subject'])
 */
export function queryError<C extends QueryErrorCode>(
  code: C,
  span: Span,
  args: Parameters<(typeof queryMessages)[C]>,
  details?: QueryErrorDetails,
): QueryError {
  const message = (queryMessages[code] as (...a: unknown[]) => string)(...args);
  return new QueryError(code, message, span, details);
}

/**
 * Errors of the datastore_search service, from the local evaluator and server
 * or from a remote portal. Status and `__type` follow docs/semantics.md.
 */
export const datastoreCodes = {
  VALIDATION_ERROR: { status: 409, type: 'Validation Error' },
  NOT_FOUND: { status: 404, type: 'Not Found Error' },
  FORBIDDEN: { status: 403, type: 'Authorization Error' },
  BAD_REQUEST: { status: 400, type: 'Bad Request' },
  REQUEST_TOO_LARGE: { status: 413, type: 'Request Too Large' },
  METHOD_NOT_ALLOWED: { status: 405, type: 'Method Not Allowed' },
  /** a status the server sent without the error envelope */
  HTTP_ERROR: { status: undefined, type: undefined },
  /** a 2xx whose body is not a datastore_search response, or answers that cannot be right (a page repeated) */
  INVALID_RESPONSE: { status: undefined, type: undefined },
  /** a response body over the client's `maxResponseBytes` */
  RESPONSE_TOO_LARGE: { status: undefined, type: undefined },
  CONNECTION_FAILED: { status: undefined, type: undefined },
  TIMEOUT: { status: undefined, type: undefined },
  ABORTED: { status: undefined, type: undefined },
} as const;

export type DatastoreErrorCode = keyof typeof datastoreCodes;

/** Network-level codes: the CLI exits 4 for these. */
export const networkErrorCodes: ReadonlySet<DatastoreErrorCode> = new Set(['CONNECTION_FAILED', 'TIMEOUT']);

export class DatastoreError extends Error {
  override readonly name = 'DatastoreError';
  readonly code: DatastoreErrorCode;
  /** HTTP status, when there was a response (or would be, for local errors) */
  readonly status: number | undefined;
  /** the `error` object of the response envelope, or the raw body text */
  readonly body: ErrorBody | string | undefined;

  constructor(
    code: DatastoreErrorCode,
    message: string,
    options: { status?: number; body?: ErrorBody | string; cause?: unknown } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    // `status: undefined` says there was no HTTP at all (a database refusing a password): no status is shown.
    this.status = 'status' in options ? options.status : datastoreCodes[code].status;
    this.body = options.body;
  }
}

/**
 * Whether a Not Found names the resource (the query's fault), not the path
 * (the URL or language of the source). CKAN says which only in its message:
 * `Not found: Resource "x" was not found.`.
 * @example isUnknownResource(new DatastoreError('NOT_FOUND', 'Not found: Resource "corses" was not found.')) // true
 */
export function isUnknownResource(error: DatastoreError): boolean {
  return error.code === 'NOT_FOUND' && /\bresource\b/i.test(error.message);
}

/**
 * A 409 Validation Error on one parameter, shaped as CKAN shapes it:
 * `{"__type": "Validation Error", "<param>": ["<message>"]}`.
 */
export function validationError(param: string, message: string): DatastoreError {
  // CKAN adds `__type` after the field errors: `{"limit": ["…"], "__type": "Validation Error"}`.
  return new DatastoreError('VALIDATION_ERROR', `${param}: ${message}`, {
    body: { [param]: [message], __type: 'Validation Error' },
  });
}

/**
 * The Validation Error of a `like` pattern that ends in its escape character
 * `\`, which escapes nothing (PostgreSQL refuses it too).
 */
export function likePatternError(pattern: string): DatastoreError {
  return validationError('filters', `the like pattern ${JSON.stringify(pattern)} ends in the escape character \\; write \\\\ for a backslash`);
}

/** Not Found for an unknown resource id or alias. */
export function resourceNotFound(id: string): DatastoreError {
  const message = `Not found: Resource "${id}" was not found.`;
  return new DatastoreError('NOT_FOUND', message, { body: { __type: 'Not Found Error', message } });
}

/** Errors of loading local data, reading config files and using the CLI. */
export const toolMessages = {
  DATA_NOT_FOUND: (path: string): string => `no such file or directory: ${path}`,
  DATA_UNSUPPORTED: (path: string): string => `${path}: not a .csv, .tsv, .json, .ndjson or .jsonl file`,
  DATA_INVALID: (path: string, detail: string): string => `${path}: ${detail}`,
  DATA_DUPLICATE_ALIAS: (alias: string, first: string, second: string): string =>
    `two files give the resource name ${q(alias)}: ${first} and ${second}`,
  CONFIG_INVALID: (file: string, detail: string): string => `${file}: ${detail}`,
  FILE_UNREADABLE: (file: string, detail: string): string => `${file} ${detail}`,
  RESUME_MISMATCH: (part: string, detail: string): string => `cannot resume from ${part}: ${detail}`,
  EXPORT_LOCKED: (file: string, pid: number): string =>
    `another export is writing ${file}${pid > 0 ? ` (process ${pid})` : ''}; two exports to one file would mix their records`,
  CONFIG_INSECURE_TOKEN: (file: string): string =>
    `${file} holds a token in plain text and others can read it; use token_env, token_file or token_cmd, or chmod 600 the file`,
  TOKEN_UNAVAILABLE: (where: string, detail: string): string => `${where}: ${detail}`,
  TOKEN_FILE_INSECURE: (path: string, mode: string): string =>
    `the token file ${path} can be read by others (mode ${mode}); a token file must be readable by its owner only`,
  UNKNOWN_PROFILE: (name: string): string => `no profile named ${q(name)}`,
  UNKNOWN_QUERY: (name: string): string => `no query named ${q(name)}`,
  USAGE: (detail: string): string => detail,
} as const;

export type ToolErrorCode = keyof typeof toolMessages;

/** Data loading, config and command-line errors; `file`/`line`/`key` point at the cause when known. */
export class ToolError extends Error {
  override readonly name = 'ToolError';
  readonly code: ToolErrorCode;
  readonly file: string | undefined;
  readonly line: number | undefined;
  readonly key: string | undefined;
  readonly hint: string | undefined;

  constructor(
    code: ToolErrorCode,
    message: string,
    where: { file?: string; line?: number; key?: string; hint?: string; cause?: unknown } = {},
  ) {
    super(message, where.cause === undefined ? undefined : { cause: where.cause });
    this.code = code;
    this.file = where.file;
    this.line = where.line;
    this.key = where.key;
    this.hint = where.hint;
  }
}

export function toolError<C extends ToolErrorCode>(
  code: C,
  args: Parameters<(typeof toolMessages)[C]>,
  where?: { file?: string; line?: number; key?: string; hint?: string; cause?: unknown },
): ToolError {
  const message = (toolMessages[code] as (...a: unknown[]) => string)(...args);
  return new ToolError(code, message, where);
}

/**
 * A validated `datastore_search` request (`validateSearch`, CKAN's schema
 * and backend rules in `datastore/`) in the shape the SQL builder reads,
 * and Python's `str()` of filter values on text columns.
 */
import type { FieldSearch, JsonValue, RecordsFormat } from '../../datastore/types.js';
import type { SortItem, ValidatedSearch } from '../../datastore/validate.js';
import { parseSort } from '../../datastore/validate.js';

/** A request as the SQL builder takes it: every parameter present, CKAN's defaults filled in. */
export interface SqlSearchRequest {
  readonly resource_id: string;
  /** the filters as sent (a dict in 2.11; a dict or a list of dicts in 2.12), parsed from JSON text */
  readonly filters: JsonValue | undefined;
  readonly q: string | FieldSearch | undefined;
  readonly full_text: string | undefined;
  readonly plain: boolean;
  readonly language: string | undefined;
  readonly distinct: boolean;
  readonly fields: readonly string[] | undefined;
  /** parsed and checked against the table by `validateSearch`/`checkAgainstTable` */
  readonly sort: readonly SortItem[] | undefined;
  readonly limit: number;
  readonly offset: number;
  readonly include_total: boolean;
  readonly total_estimation_threshold: number | null;
  readonly records_format: RecordsFormat;
  readonly include_next_page: boolean;
  /** the validated parameters as CKAN echoes them in `result`, in its (alphabetical) order */
  readonly echo: Readonly<Record<string, unknown>>;
}

/**
 * The validated request (`validateSearch`) in the builder's shape: CKAN's
 * defaults filled in, `sort` as CKAN's clause texts, the echo as an object.
 * @example
 * sqlSearchRequest(validateSearch({ resource_id: 'r', plain: 'f' })).plain // → false
 */
export function sqlSearchRequest(validated: ValidatedSearch): SqlSearchRequest {
  const request = validated.request;
  const sort = request.sort === undefined ? undefined : parseSort(request.sort);
  return {
    resource_id: request.resource_id,
    filters: request.filters as JsonValue | undefined,
    q: request.q,
    full_text: request.full_text,
    plain: request.plain ?? true,
    language: request.language,
    distinct: request.distinct ?? false,
    fields: request.fields,
    sort,
    // no limit sent: CKAN's rows_default (100), capped at rows_max like a sent one (the echo holds it)
    limit: request.limit ?? (validated.echo.get('limit') as number | undefined) ?? 100,
    offset: request.offset ?? 0,
    include_total: request.include_total ?? true,
    total_estimation_threshold: request.total_estimation_threshold ?? null,
    records_format: request.records_format ?? 'objects',
    include_next_page: request.include_next_page ?? false,
    echo: Object.fromEntries(validated.echo),
  };
}


/**
 * Python's `str()` of a JSON value, as CKAN applies it to filter values on
 * `text` columns (docs/ckan-2.11-reference.md §2): `null` → `None`, `true` →
 * `True`, a list → its repr. A JSON number with no fraction is read as an
 * int (`25.0` arrives as 25, so it gives `25` where CKAN gives `25.0`).
 * @example pythonStr([1, 'a', null]) // → "[1, 'a', None]"
 */
export function pythonStr(value: unknown): string {
  return typeof value === 'string' ? value : pythonRepr(value);
}

function pythonRepr(value: unknown): string {
  if (value === null || value === undefined) return 'None';
  if (value === true) return 'True';
  if (value === false) return 'False';
  if (typeof value === 'number') return pythonNumber(value);
  if (typeof value === 'string') return pythonStringRepr(value);
  if (Array.isArray(value)) return `[${value.map(pythonRepr).join(', ')}]`;
  return `{${Object.entries(value as Record<string, unknown>).map(([k, v]) => `${pythonStringRepr(k)}: ${pythonRepr(v)}`).join(', ')}}`;
}

function pythonNumber(n: number): string {
  if (Number.isInteger(n) && Math.abs(n) < 1e21) return BigInt(n).toString();
  if (!Number.isFinite(n)) return n > 0 ? 'inf' : n < 0 ? '-inf' : 'nan';
  const exponent = Math.floor(Math.log10(Math.abs(n)));
  if (exponent >= -4 && exponent < 16) return String(n);
  // Python writes at least two exponent digits and always a sign: 1e-05, 1.5e+16.
  const [mantissa, power] = n.toExponential().split('e') as [string, string];
  const sign = power.startsWith('-') ? '-' : '+';
  const digits = power.replace(/^[-+]/, '').padStart(2, '0');
  return `${mantissa}e${sign}${digits}`;
}

function pythonStringRepr(text: string): string {
  const quote = text.includes("'") && !text.includes('"') ? '"' : "'";
  const escaped = text.replaceAll('\\', '\\\\').replaceAll('\n', '\\n').replaceAll('\r', '\\r').replaceAll('\t', '\\t');
  return quote + (quote === "'" ? escaped.replaceAll("'", "\\'") : escaped) + quote;
}

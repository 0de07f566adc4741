/**
 * A `datastore_search` request read as CKAN 2.11.5's schema reads it
 * (docs/ckan-2.11-reference.md §1): the parameters the SQL builder needs in
 * one shape, with CKAN's schema-stage errors (all failing parameters
 * together, as navl reports them). The checks that need the table (unknown
 * fields, sort clauses) are `checkAgainstTable`'s, CKAN's backend stage.
 */
import type { FieldSearch, JsonValue, RecordsFormat } from '../../datastore/types.js';
import { DatastoreError } from '../../errors.js';
import type { CkanVersion } from '../types.js';

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
  readonly sort: readonly string[] | undefined;
  readonly limit: number;
  readonly offset: number;
  readonly include_total: boolean;
  readonly total_estimation_threshold: number | null;
  readonly records_format: RecordsFormat;
  readonly include_next_page: boolean;
  /** the validated parameters as CKAN echoes them in `result`, in its (alphabetical) order */
  readonly echo: Readonly<Record<string, unknown>>;
}

const KEYS_2_11 = new Set([
  'resource_id', 'id', 'filters', 'q', 'full_text', 'plain', 'language', 'distinct', 'limit', 'offset', 'fields', 'sort',
  'include_total', 'total_estimation_threshold', 'records_format',
]);

/**
 * Validates a raw request (a POST body or the object of a GET query string).
 * @example
 * readSearchRequest({ resource_id: 'r', limit: '5', plain: 'f' }, { maxLimit: 32000, ckan: '2.11' }).plain // → false
 */
export function readSearchRequest(raw: unknown, options: { readonly maxLimit: number; readonly ckan: CkanVersion }): SqlSearchRequest {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    const message = 'Bad request - JSON Error: Request data JSON decoded to an object that is not a dict';
    throw new DatastoreError('BAD_REQUEST', message, { body: { __type: 'Bad Request', message } });
  }
  const input = raw as Readonly<Record<string, unknown>>;
  const get = (key: string): unknown => (Object.hasOwn(input, key) ? input[key] : undefined);
  const errors: Record<string, string[]> = {};
  const fail = (key: string, ...messages: string[]): undefined => {
    errors[key] = messages;
    return undefined;
  };

  const rawId = get('resource_id') ?? get('id');
  const resourceId = rawId === undefined || rawId === null || rawId === '' ? fail('resource_id', 'Missing value') : typeof rawId === 'string' ? rawId : JSON.stringify(rawId);

  let filters: JsonValue | undefined = get('filters') as JsonValue | undefined;
  if (typeof filters === 'string') {
    try {
      filters = JSON.parse(filters) as JsonValue;
    } catch {
      filters = fail('filters', 'Cannot parse JSON');
    }
  }
  if (filters === null) filters = undefined;

  let q: string | FieldSearch | undefined;
  const rawQ = get('q');
  if (rawQ !== undefined && rawQ !== null) {
    // unicode_or_json_validator: a JSON object (or its text) is a per-field search; anything else is str(value).
    let parsed: unknown = rawQ;
    if (typeof rawQ === 'string') {
      try {
        parsed = JSON.parse(rawQ);
      } catch {
        parsed = rawQ;
      }
    }
    if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) q = parsed as FieldSearch;
    else q = typeof rawQ === 'string' ? rawQ : pythonStr(rawQ);
  }

  const text = (key: string): string | undefined => {
    const v = get(key);
    return v === undefined || v === null ? undefined : typeof v === 'string' ? v : pythonStr(v);
  };
  const fullText = text('full_text');
  const language = text('language');
  const plain = get('plain') === undefined ? true : booleanValidator(get('plain'));
  const distinct = booleanValidator(get('distinct'));
  const includeTotal = get('include_total') === undefined ? true : booleanValidator(get('include_total'));

  let limit = 100;
  const rawLimit = get('limit');
  if (rawLimit !== undefined && rawLimit !== null && rawLimit !== '') {
    const n = intValidator(rawLimit);
    if (n === undefined) fail('limit', 'Invalid integer', ...(typeof rawLimit === 'string' ? ['Please enter an integer value'] : []));
    else if (n < 0) fail('limit', 'Must be a natural number');
    else limit = Math.min(n, options.maxLimit);
  }
  let offset = 0;
  let offsetSent = false;
  const rawOffset = get('offset');
  if (rawOffset !== undefined && rawOffset !== null && rawOffset !== '') {
    const n = intValidator(rawOffset);
    if (n === undefined) fail('offset', 'Invalid integer');
    else if (n < 0) fail('offset', `invalid value "${n}"`);
    else [offset, offsetSent] = [n, true];
  }
  let threshold: number | null = null;
  const rawThreshold = get('total_estimation_threshold');
  if (options.ckan === '2.11' && rawThreshold !== undefined && rawThreshold !== null && rawThreshold !== '') {
    const n = intValidator(rawThreshold);
    if (n === undefined) fail('total_estimation_threshold', 'Invalid integer');
    else threshold = n;
  }
  const fields = listOfStrings(get('fields'), 'fields', fail, true);
  const sort = listOfStrings(get('sort'), 'sort', fail, false);
  const rawFormat = get('records_format');
  let recordsFormat: RecordsFormat = 'objects';
  if (rawFormat !== undefined && rawFormat !== null && rawFormat !== '') {
    if (rawFormat === 'objects' || rawFormat === 'lists' || rawFormat === 'csv' || rawFormat === 'tsv') recordsFormat = rawFormat;
    else fail('records_format', "Value must be one of ['objects', 'lists', 'csv', 'tsv']");
  }
  const includeNextPage = options.ckan === '2.12' && booleanValidator(get('include_next_page'));

  if (Object.keys(errors).length > 0) throw schemaError(errors);
  for (const key of Object.keys(input)) {
    const known = KEYS_2_11.has(key) || (options.ckan === '2.12' && key === 'include_next_page');
    if (!known) throw schemaError({ __extras: [`invalid value "${key}"`] });
  }

  // What CKAN echoes: the validated dict, keys sorted (navl builds it in order), defaults filled in.
  const echo: Record<string, unknown> = {};
  const put = (key: string, value: unknown, sent: boolean): void => {
    if (sent) echo[key] = value;
  };
  put('distinct', distinct, get('distinct') !== undefined);
  put('fields', fields, fields !== undefined);
  put('filters', filters, filters !== undefined);
  put('full_text', fullText, fullText !== undefined);
  put('include_next_page', includeNextPage, options.ckan === '2.12');
  put('include_total', includeTotal, true);
  put('language', language, language !== undefined);
  put('limit', limit, true);
  put('offset', offset, offsetSent);
  put('plain', plain, get('plain') !== undefined);
  put('q', q, q !== undefined);
  put('records_format', recordsFormat, true);
  put('resource_id', resourceId, true);
  put('sort', get('sort'), sort !== undefined);
  put('total_estimation_threshold', threshold, options.ckan === '2.11');
  return {
    resource_id: resourceId as string,
    filters,
    q,
    full_text: fullText,
    plain,
    language,
    distinct,
    fields,
    sort,
    limit,
    offset,
    include_total: includeTotal,
    total_estimation_threshold: threshold,
    records_format: recordsFormat,
    include_next_page: includeNextPage,
    echo,
  };
}

function schemaError(errors: Record<string, string[]>): DatastoreError {
  const [first] = Object.entries(errors);
  return new DatastoreError('VALIDATION_ERROR', `${first?.[0]}: ${first?.[1].join(', ')}`, {
    body: { __type: 'Validation Error', ...errors },
  });
}

/** CKAN's `boolean_validator`: `true/yes/t/y/1` in any case mean true, anything else false. */
function booleanValidator(value: unknown): boolean {
  if (value === undefined || value === null) return false;
  if (typeof value === 'boolean') return value;
  return ['true', 'yes', 't', 'y', '1'].includes(String(value).toLowerCase());
}

/** CKAN's `int_validator`: whole numbers, their decimal text, or a float with no fraction. */
function intValidator(value: unknown): number | undefined {
  if (typeof value === 'boolean') return value ? 1 : 0;
  if (typeof value === 'number') return Number.isInteger(value) ? value : undefined;
  if (typeof value === 'string' && /^\s*[-+]?\d+\s*$/.test(value)) return Number(value.trim());
  return undefined;
}

/** `list_of_strings_or_string`, then `get_list`: a comma string is split (and for `fields` each piece stripped). */
function listOfStrings(
  value: unknown,
  key: string,
  fail: (key: string, ...messages: string[]) => undefined,
  strip: boolean,
): string[] | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value === 'string') {
    return value.split(',').map((piece) => {
      const trimmed = piece.trim();
      if (!strip) return trimmed;
      return trimmed.length >= 2 && trimmed[0] === trimmed[trimmed.length - 1] && trimmed[0] === '"' ? trimmed.slice(1, -1) : trimmed;
    });
  }
  if (Array.isArray(value)) {
    if (value.some((item) => typeof item === 'object' && item !== null)) {
      const at = value.findIndex((item) => typeof item === 'object' && item !== null);
      return fail('__junk', `The input field [('${key}', ${at})] was not expected.`);
    }
    return value.map((item) => (typeof item === 'string' ? item : pythonStr(item)));
  }
  return fail(key, 'Not a list');
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

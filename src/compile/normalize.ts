/**
 * TEMPORARY: the minimal request checks `fromRequest` needs, written while
 * `normalizeRequest` in `src/datastore/validate.ts` (evaluate stage) did not
 * exist yet. Once it does, `fromRequest` calls it and this file is deleted.
 * Rules from semantics.md, "Request"; errors shaped as the server's.
 */
import type { Filters, Scalar, SearchRequest } from '../datastore/types.js';
import { DatastoreError, validationError } from '../errors.js';
import { quoteSortField } from './sort.js';
import { parseSort, parseSortItem } from './from-request.js';

const KEYS = new Set(['resource_id', 'filters', 'q', 'fields', 'sort', 'limit', 'offset', 'include_total']);

export function normalizeRequest(raw: unknown): SearchRequest {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    const message = 'a datastore_search request must be a JSON object';
    throw new DatastoreError('BAD_REQUEST', message, { body: { __type: 'Bad Request', message } });
  }
  const input = raw as Record<string, unknown>;
  for (const key of Object.keys(input)) {
    if (!KEYS.has(key)) throw validationError('__extras', `invalid value ${JSON.stringify(key)}`);
  }
  const out: Record<string, unknown> = {};
  const id = input.resource_id;
  if (typeof id !== 'string' || id === '') throw validationError('resource_id', 'Missing value');
  out.resource_id = id;
  const filters = normalizeFilters(input.filters);
  if (filters !== undefined && Object.keys(filters).length > 0) out.filters = filters;
  if (input.q !== undefined && input.q !== null) {
    if (typeof input.q !== 'string') throw validationError('q', `invalid value ${JSON.stringify(input.q)}`);
    out.q = input.q;
  }
  const fields = listOfStrings(input.fields, 'fields');
  if (fields !== undefined && fields.length > 0) out.fields = fields;
  if (input.sort !== undefined && input.sort !== null) {
    // A string is split on commas (outside quotes); a list holds one item each, as CKAN reads them.
    const keys = typeof input.sort === 'string'
      ? parseSort(input.sort)
      : (listOfStrings(input.sort, 'sort') ?? []).map((item) => parseSortItem(item.trim()));
    if (keys.length > 0) out.sort = keys.map((key) => `${quoteSortField(key.field.name)} ${key.direction}`).join(', ');
  }
  const limit = integer(input.limit, 'limit');
  if (limit !== undefined) out.limit = limit;
  const offset = integer(input.offset, 'offset');
  if (offset !== undefined) out.offset = offset;
  if (input.include_total !== undefined) {
    if (typeof input.include_total !== 'boolean') throw validationError('include_total', 'Value must be true or false');
    out.include_total = input.include_total;
  }
  return out as unknown as SearchRequest;
}

function normalizeFilters(value: unknown): Filters | undefined {
  if (value === undefined || value === null) return undefined;
  let filters = value;
  if (typeof filters === 'string') {
    try {
      filters = JSON.parse(filters);
    } catch {
      throw validationError('filters', 'Cannot parse JSON');
    }
  }
  if (typeof filters !== 'object' || filters === null || Array.isArray(filters)) {
    throw validationError('filters', 'filters must be an object of field → value or list of values');
  }
  const entries = Object.entries(filters).map(([field, v]): [string, Scalar | readonly Scalar[]] => {
    if (Array.isArray(v)) return [field, v.map((element: unknown) => scalar(element, field))];
    return [field, scalar(v, field)];
  });
  return Object.fromEntries(entries) as Filters;
}

function scalar(value: unknown, field: string): Scalar {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return value;
  if (typeof value === 'number' && Number.isFinite(value)) return value === 0 ? 0 : value;
  throw validationError('filters', `invalid value for ${JSON.stringify(field)}: a filter value must be a string, number, boolean or null, or a list of them`);
}

function listOfStrings(value: unknown, param: string): string[] | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'string') return value.split(',').map((piece) => piece.trim()).filter((piece) => piece !== '');
  if (Array.isArray(value) && value.every((item) => typeof item === 'string')) return value as string[];
  throw validationError(param, 'Not a list');
}

function integer(value: unknown, param: string): number | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  const n = typeof value === 'string' && /^\s*\d+\s*$/.test(value) ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isSafeInteger(n)) throw validationError(param, 'Invalid integer');
  if (n < 0) throw validationError(param, param === 'limit' ? 'Must be a natural number' : `invalid value "${n}"`);
  return n === 0 ? 0 : n;
}

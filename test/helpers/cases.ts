/**
 * Loading the data-driven case suite (`test/cases/<topic>/<name>.json`) and
 * its shared datasets (`test/cases/_data/<name>.json`). The format is
 * described in `test/cases/README.md`; a file with an unknown key or a key of
 * the wrong type fails loudly here, so a typo cannot silently skip a check.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Params } from '../../src/compile/bind.js';
import type { Facets, FieldInfo, Row, SearchRequest } from '../../src/datastore/types.js';
import { queryMessages } from '../../src/errors.js';
import type { QueryErrorCode } from '../../src/errors.js';

export const casesDir = fileURLToPath(new URL('../cases/', import.meta.url));

export interface CaseError {
  readonly code: QueryErrorCode;
  /** source text the error's span must cover; `""` means the end of the input (only blanks and comments follow the span's start) */
  readonly token: string;
  /** where `token` starts, when it is not its first occurrence */
  readonly tokenAt?: number;
  /** text the error's hint must contain */
  readonly hint?: string;
}

export interface Case {
  /** `topic/name`, from the file path */
  readonly id: string;
  readonly topic: string;
  readonly query: string;
  readonly params?: Params;
  readonly data?: string;
  /**
   * `rows`: evaluate over the dataset's plain rows only (no field list, no server);
   * `shaped`: a grouped, joined or faceted query, answered by every engine and target (shaped-cases.ts)
   */
  readonly mode?: 'rows' | 'shaped';
  readonly request?: SearchRequest;
  readonly records?: readonly Row[];
  readonly count?: number;
  readonly total?: number;
  readonly result?: Readonly<Record<string, unknown>>;
  readonly error?: CaseError;
  readonly evalError?: { readonly status: number; readonly body: Readonly<Record<string, unknown>> };
  readonly format?: string;
  /** per target: the plan's request and residual (canonical text), or the sql text */
  readonly targets?: CaseTargets;
  /** why the sql target's records differ from the language's here (a documented difference) */
  readonly sqlDiffers?: string;
  /** shaped: SQL written by hand whose answer on PostgreSQL must be `records` */
  readonly postgres?: string;
  /** shaped: per facet, SQL written by hand giving each value (null too) and its count, commonest first */
  readonly postgresFacets?: Readonly<Record<string, string>>;
  /** shaped: the facets every engine and target gives */
  readonly facets?: Facets;
  /** shaped: the sql target's facets statement */
  readonly facetSql?: string;
  /** shaped: the 2.11 and 2.12 plans, as explain prints their trees (without the portal's counts) */
  readonly plans?: { readonly 'ckan-2.11'?: readonly string[]; readonly 'ckan-2.12'?: readonly string[] };
}

export interface CaseTargets {
  readonly 'ckan-2.11'?: { readonly request: SearchRequest; readonly residual?: string };
  readonly 'ckan-2.12'?: { readonly request: Readonly<Record<string, unknown>>; readonly residual?: string };
  readonly sql?: string;
}

export interface Dataset {
  readonly name: string;
  readonly id?: string;
  readonly fields?: readonly FieldInfo[];
  readonly rows: readonly Row[];
}

const CASE_KEYS: Record<string, (v: unknown) => boolean> = {
  query: (v) => typeof v === 'string',
  params: (v) => isObject(v),
  data: (v) => typeof v === 'string',
  mode: (v) => v === 'rows' || v === 'shaped',
  request: (v) => isObject(v),
  records: (v) => Array.isArray(v) && v.every(isObject),
  count: (v) => Number.isInteger(v),
  total: (v) => Number.isInteger(v),
  result: (v) => isObject(v),
  error: (v) =>
    isObject(v) && typeof v['code'] === 'string' && v['code'] in queryMessages && typeof v['token'] === 'string' &&
    (v['hint'] === undefined || typeof v['hint'] === 'string') &&
    (v['tokenAt'] === undefined || Number.isInteger(v['tokenAt'])) &&
    Object.keys(v).every((k) => ['code', 'token', 'tokenAt', 'hint'].includes(k)),
  evalError: (v) => isObject(v) && typeof v['status'] === 'number' && isObject(v['body']),
  format: (v) => typeof v === 'string',
  targets: (v) =>
    isObject(v) &&
    Object.entries(v).every(([k, t]) =>
      k === 'sql' ? typeof t === 'string' : (k === 'ckan-2.11' || k === 'ckan-2.12') && isObject(t) && isObject(t['request']) &&
        (t['residual'] === undefined || typeof t['residual'] === 'string') && Object.keys(t).every((key) => key === 'request' || key === 'residual')),
  sqlDiffers: (v) => typeof v === 'string',
  postgres: (v) => typeof v === 'string',
  postgresFacets: (v) => isObject(v) && Object.values(v).every((t) => typeof t === 'string'),
  facets: (v) => isObject(v) && Object.values(v).every(isObject),
  facetSql: (v) => typeof v === 'string',
  plans: (v) =>
    isObject(v) &&
    Object.entries(v).every(([k, t]) => (k === 'ckan-2.11' || k === 'ckan-2.12') && Array.isArray(t) && t.every((line) => typeof line === 'string')),
};

/** Keys only a shaped case may have, and keys a shaped case may not have (its answer is no one request). */
const SHAPED_ONLY = ['postgres', 'postgresFacets', 'facets', 'facetSql', 'plans'];
const NOT_SHAPED = ['request', 'evalError', 'result', 'count', 'sqlDiffers'];

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function listJson(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    // ckan/ holds HTTP exchanges in their own format, run by test/cases/ckan.test.ts.
    .filter((f) => f.endsWith('.json') && !f.startsWith('_data') && !f.startsWith(`ckan${sep}`))
    .map((f) => join(dir, f))
    .sort();
}

/** Every case file, checked for shape, in path order. */
export function loadCases(dir = casesDir): Case[] {
  const datasets = new Set(Object.keys(loadDatasets(dir)));
  return listJson(dir).map((file) => {
    const id = relative(dir, file).split(sep).join('/').replace(/\.json$/, '');
    const raw: unknown = JSON.parse(readFileSync(file, 'utf8'));
    if (!isObject(raw)) throw new Error(`${id}: a case is a JSON object`);
    for (const [key, value] of Object.entries(raw)) {
      const check = CASE_KEYS[key];
      if (!check) throw new Error(`${id}: unknown key ${JSON.stringify(key)}`);
      if (!check(value)) throw new Error(`${id}: bad value for ${JSON.stringify(key)}`);
    }
    if (typeof raw['query'] !== 'string') throw new Error(`${id}: "query" is required`);
    if (raw['data'] !== undefined && !datasets.has(raw['data'] as string)) throw new Error(`${id}: no dataset ${String(raw['data'])}`);
    const expectsRecords = raw['records'] !== undefined || raw['count'] !== undefined;
    if (expectsRecords && raw['data'] === undefined) throw new Error(`${id}: records need "data"`);
    if (raw['evalError'] !== undefined && raw['data'] === undefined) throw new Error(`${id}: evalError needs "data"`);
    const shaped = raw['mode'] === 'shaped';
    for (const key of shaped ? NOT_SHAPED : SHAPED_ONLY) {
      if (raw[key] !== undefined) throw new Error(`${id}: ${JSON.stringify(key)} is ${shaped ? 'not for' : 'only for'} a shaped case`);
    }
    if (shaped && raw['targets'] !== undefined && Object.keys(raw['targets'] as object).some((k) => k !== 'sql')) {
      throw new Error(`${id}: a shaped case states its 2.11 and 2.12 plans in "plans"`);
    }
    if (shaped && raw['data'] === undefined) throw new Error(`${id}: a shaped case needs "data"`);
    if (shaped && raw['error'] === undefined && raw['postgres'] === undefined && raw['postgresFacets'] === undefined) {
      throw new Error(`${id}: a shaped case's rows are checked against PostgreSQL: give "postgres" SQL`);
    }
    if (raw['error'] !== undefined && (expectsRecords || raw['request'] !== undefined)) {
      throw new Error(`${id}: a case with "error" has no request or records`);
    }
    return { id, topic: id.split('/')[0] ?? id, ...(raw as object) } as Case;
  });
}

/** The shared datasets by name (the file name without `.json`). */
export function loadDatasets(dir = casesDir): Record<string, Dataset> {
  const dataDir = join(dir, '_data');
  const out: Record<string, Dataset> = {};
  for (const file of readdirSync(dataDir).filter((f) => f.endsWith('.json')).sort()) {
    const name = file.replace(/\.json$/, '');
    const raw = JSON.parse(readFileSync(join(dataDir, file), 'utf8')) as Omit<Dataset, 'name'>;
    if (!Array.isArray(raw.rows)) throw new Error(`_data/${file}: "rows" must be an array`);
    out[name] = { name, ...raw };
  }
  return out;
}

/** A record with every key of `keys` present (a missing key means null, semantics.md). */
export function withNulls(record: Row, keys: Iterable<string>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of keys) out[key] = record[key] ?? null;
  return out;
}

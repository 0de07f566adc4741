/**
 * The datastore_search request and response as ckql uses them: shared by the
 * compiler, the evaluator, the server and the client. Semantics:
 * docs/semantics.md.
 */

/**
 * A field's type as CKAN names it in `fields` (docs/ckan-2.11-reference.md §5): `_id` is `int`, other
 * columns carry PostgreSQL's type names; an array column is its element type with a leading `_`;
 * `rank` (with `q`) is `float`.
 */
export type ScalarFieldType =
  | 'text'
  | 'int'
  | 'int4'
  | 'int8'
  | 'numeric'
  | 'float8'
  | 'float'
  | 'bool'
  | 'date'
  | 'timestamp'
  | 'json'
  /** `_table_metadata`'s columns (PostgreSQL's `name` and `oid`) */
  | 'name'
  | 'oid';
export type FieldType = ScalarFieldType | `_${ScalarFieldType}`;

export interface FieldInfo {
  readonly id: string;
  readonly type: FieldType;
  /** the data dictionary, when the resource has one for this field (CKAN's `info`) */
  readonly info?: FieldDictionary;
}

/**
 * CKAN's data dictionary of one field (`info` in `datastore_create` and in
 * `datastore_search`'s `fields`): the documented `label`, `notes` (markdown)
 * and `type_override`, and any other keys a portal's plugins keep.
 */
export interface FieldDictionary {
  readonly label?: string;
  readonly notes?: string;
  /** the type the publisher says the column holds (xloader loads every column as `text` unless this says otherwise) */
  readonly type_override?: string;
  readonly [key: string]: JsonValue | undefined;
}

/**
 * What a catalogue says of a resource besides its table: its name and
 * description as a person reads them, and the dataset (CKAN's package) it
 * belongs to. Local data gets it from a `datapackage.json`, else from its
 * folder (one dataset per folder).
 */
export interface ResourceMeta {
  /** the resource's name in its dataset, e.g. `measurements 2023` */
  readonly name?: string;
  readonly description?: string;
  /** `CSV`, `JSON`, … */
  readonly format?: string;
  /** ISO timestamp of the last change */
  readonly modified?: string;
  readonly dataset?: DatasetMeta;
  /** the fields of the declared primary key (a unique index, as CKAN's `primary_key`) */
  readonly primaryKey?: readonly string[];
}

/** A dataset (CKAN's package) as local data describes it. */
export interface DatasetMeta {
  /** CKAN's package name: lower-case letters, digits, `-` and `_` */
  readonly name: string;
  readonly title?: string;
  /** the description (CKAN's `notes`) */
  readonly notes?: string;
  /** the organisation's name, when one is given */
  readonly organization?: string;
  /** ISO timestamp of the last change */
  readonly modified?: string;
}

export type JsonValue = string | number | boolean | null | readonly JsonValue[] | { readonly [key: string]: JsonValue };

/** A filter value or one element of a filter list. */
export type Scalar = string | number | boolean | null;

/** One record: field name → value. A missing key means null. */
export type Row = { readonly [field: string]: JsonValue | undefined };

export type Filters = { readonly [field: string]: Scalar | readonly Scalar[] };

/**
 * A request in canonical form: what `compile` returns and what
 * `normalizeRequest` makes of any valid request. Keys appear in this order,
 * and only the keys that are set.
 */
/** `records_format`: how `records` are written (docs/ckan-2.11-reference.md §1). */
export type RecordsFormat = 'objects' | 'lists' | 'csv' | 'tsv';

/**
 * CKAN 2.12's `filters` JSON as sent (docs/ckan-2.12-reference.md §1.2): a dict whose values may be
 * operator dicts (`{"gte": 2020}`) or lists mixing values and operator dicts, with `$or`/`$and` keys,
 * or a list of such dicts (an OR). Parsed into a `FilterNode` tree (`filters.ts`) before it is answered.
 */
export type FilterTree = { readonly [fieldOrOperator: string]: JsonValue } | readonly { readonly [fieldOrOperator: string]: JsonValue }[];

/** `q` as an object: CKAN's per-field search, field → text. */
export type FieldSearch = { readonly [field: string]: string };

/** Which CKAN's `datastore_search` surface to speak: parameters, defaults, errors, response keys. */
export type CkanVersion = '2.11' | '2.12';

export interface SearchRequest {
  readonly resource_id: string;
  /** 2.11's dict of values and lists, or (2.12) the operator JSON; `filterTreeOf` gives its meaning */
  readonly filters?: Filters | FilterTree;
  /** full-text search: a text over every field, or (an object) per field */
  readonly q?: string | FieldSearch;
  /** false: `q` is `to_tsquery` syntax (`alg:* & linear`); default true */
  readonly plain?: boolean;
  /** the text search configuration of `q`; default `english` */
  readonly language?: string;
  /** searched like a string `q`; replaces a string `q` when both are given */
  readonly full_text?: string;
  readonly distinct?: boolean;
  /** projection, order kept */
  readonly fields?: readonly string[];
  /** `"a asc, b desc nulls first"`; a field name that needs it is written in double quotes */
  readonly sort?: string;
  readonly limit?: number;
  readonly offset?: number;
  readonly include_total?: boolean;
  /** 2.11 only (2.12 ignores it) */
  readonly total_estimation_threshold?: number | null;
  readonly records_format?: RecordsFormat;
  /** 2.12 only: ask for `next_page`, the keyset cursor */
  readonly include_next_page?: boolean;
}

/** The `_links` of a response: request paths, no host, no language segment. */
export interface SearchLinks {
  readonly start: string;
  readonly next: string;
}

/** `result` of a successful datastore_search response. */
export interface SearchResult {
  readonly resource_id: string;
  readonly fields: readonly FieldInfo[];
  readonly records: readonly Row[];
  /** absent when the request had `include_total: false` */
  readonly total?: number;
  /** 2.11: whether `total` is PostgreSQL's estimate (`total_estimation_threshold`), which a portal or the PostgreSQL engines may answer; false otherwise */
  readonly total_was_estimated: boolean;
  readonly limit: number;
  readonly offset?: number;
  readonly q?: string | FieldSearch;
  readonly filters?: Filters | FilterTree;
  readonly sort?: string;
  readonly include_total: boolean;
  readonly records_format: 'objects';
  /** set by the server (it depends on the request path); absent from `evaluate` */
  readonly _links?: SearchLinks;
  /**
   * ckql's, never a portal's: what ckql read to answer a query it finished
   * itself (a plan, or a local engine's whole query); absent for a portal's
   * own answer to one request
   */
  readonly read?: ReadSummary;
  /** ckql's: the value counts of a query with `facet`, by facet name (docs/aggregates.md) */
  readonly facets?: Facets;
}

/** One value of a facet and how many records have it. */
export interface FacetValue {
  readonly value: JsonValue;
  readonly count: number;
}

/** A facet of the records a query keeps: its top values by count, the records without a value, and whether more values exist. */
export interface FacetResult {
  /** the faceted field, as the query names it */
  readonly field: string;
  /** `month`, `2.5`: the buckets the values fall in, when the facet has `by` */
  readonly by?: string;
  /** the most common values first; ties by value */
  readonly values: readonly FacetValue[];
  /** records without a value (null or missing) */
  readonly null_count: number;
  /** whether other values exist beyond those given (`top`) */
  readonly more: boolean;
}

/** Every facet of a query, by name (the field's, `_2` on a repeat). */
export type Facets = Readonly<Record<string, FacetResult>>;

/** What ckql read to answer a query (docs/executor.md, Results). */
export interface ReadSummary {
  /** requests sent to a portal (none for a local engine) */
  readonly requests: number;
  /** records the sources gave */
  readonly records: number;
  /** true: more records match than were given; false: none do; undefined: not known without reading on (no `total` was asked for) */
  readonly more?: boolean;
}

/**
 * A resource's table. `rows` carry `_id` (1-based position); `fields` starts
 * with `{ id: "_id", type: "int" }`.
 */
export interface Table {
  readonly id: string;
  readonly aliases: readonly string[];
  readonly fields: readonly FieldInfo[];
  readonly rows: readonly Row[];
  /** private resources need a valid token on the server */
  readonly private?: boolean;
  /** where it was loaded from, for messages */
  readonly source?: string;
  /** its name, description and dataset, for a catalogue (`package_show`) */
  readonly meta?: ResourceMeta;
}

/** The error body of a failed response (`error` in the envelope); defined with the error classes. */
export type { ErrorBody } from '../errors.js';

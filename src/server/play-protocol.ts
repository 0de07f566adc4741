/**
 * What the playground page and the server say to each other: the JSON of
 * each `POST /-/<action>`. Types only, shared by the page (`web/`) and the
 * actions behind the endpoints (`src/cli/playground.ts`).
 */

/** How a query's target is chosen: `auto` detects the portal's dialect when CKAN 2.11's request cannot say the query. */
export type TargetChoice = 'auto' | 'ckan-2.11' | 'ckan-2.12' | 'sql';

export interface ResourceEntry {
  readonly id: string;
  readonly alias?: string;
  readonly total?: number;
}

/** One source the page may query: the data `ckql serve` serves, or a configured profile of `ckql ui`. */
export interface SourceEntry {
  /** what the page sends back (a profile name, or `local`) */
  readonly name: string;
  /** shown to the person; never holds a token or password */
  readonly label: string;
  readonly kind: 'data' | 'url';
  readonly targets: readonly TargetChoice[];
  readonly defaultTarget: TargetChoice;
  /** whether queries go with a token (kept in the server) */
  readonly hasToken: boolean;
}

/** `sources` → */
export interface SourcesAnswer {
  readonly sources: readonly SourceEntry[];
  readonly defaultSource: string;
  /** the ckql version serving the page */
  readonly version: string;
}

/** `resources` {source} → */
export interface ResourcesAnswer {
  readonly resources: readonly ResourceEntry[];
}

export interface FieldEntry {
  readonly id: string;
  readonly type: string;
}

/** `fields` {source, resource} → */
export interface FieldsAnswer {
  readonly resource: string;
  readonly fields: readonly FieldEntry[];
  readonly total?: number;
}

/** `values` {source, resource, field} → some values of a field, for completion */
export interface ValuesAnswer {
  readonly values: readonly unknown[];
}

/** What `query`, `explain`, `facet` and `download` take. */
export interface QueryInput {
  readonly source: string;
  readonly query: string;
  /** each `$name`'s value as typed: read like a query literal (`5`, `true`, `"text"`, `(1, 2)`, or text) */
  readonly params?: Readonly<Record<string, string>>;
  readonly target?: TargetChoice;
  /** records per page; default 100 */
  readonly pageSize?: number;
  /** the page, from 0 */
  readonly page?: number;
}

/** `query` → one page of the query's result. */
export interface QueryAnswer {
  readonly fields: readonly FieldEntry[];
  readonly records: readonly Readonly<Record<string, unknown>>[];
  /** where this page starts in the query's result (0-based) */
  readonly start: number;
  /** how many records the query's result holds, when the source said (its `limit` and `offset` applied) */
  readonly size?: number;
  /** ms the source took */
  readonly elapsedMs: number;
  /** the target the query ran as */
  readonly target: string;
  /** the query's `order by`, for the table's sort marks */
  readonly order?: readonly { readonly field: string; readonly direction: 'asc' | 'desc' }[];
}

/** `explain` → the plan, split into what the portal answers and what ckql does with it. */
export interface ExplainAnswer {
  readonly target: string;
  /** why this target, in a few words */
  readonly chosen: string;
  /** the request the portal answers; absent when nothing is sent (local data answered by its engine in the server) */
  readonly portal?:
    | { readonly kind: 'search'; readonly method: string; readonly url: string; readonly json: string; readonly getUrl: string; readonly curl: string }
    | { readonly kind: 'sql'; readonly url: string; readonly sql: string; readonly getUrl: string; readonly curl: string };
  /** what ckql finishes locally over the records the portal sends; empty when the portal answers the whole query */
  readonly local: readonly string[];
  /** the rest of the query ckql runs locally, in the language */
  readonly residual?: string;
  /** the operators that run, one line each, the root first */
  readonly steps?: readonly string[];
  /** a note on where the URLs point (local data explained against `ckql serve`) */
  readonly note?: string;
  /** the query as a config file's named query (YAML) */
  readonly configEntry: string;
  /** the query as TypeScript with the `ckql` tagged template */
  readonly taggedTemplate: string;
}

/** `facet` {…QueryInput, field} → how many matching records hold each value of a field. */
export interface FacetAnswer {
  readonly field: string;
  readonly values: readonly { readonly value: unknown; readonly count: number }[];
  /** the field has more distinct values than were counted */
  readonly more: boolean;
  /** the matching records (the query's where and search), when known */
  readonly total?: number;
}

/** `download` {…QueryInput, format} takes one of these. */
export const DOWNLOAD_FORMATS = ['csv', 'json', 'ndjson', 'markdown', 'table'] as const;
export type DownloadFormat = (typeof DOWNLOAD_FORMATS)[number];

/** Any endpoint's refusal. `span` points into the query text. */
export interface ErrorAnswer {
  readonly error: {
    readonly code: string;
    readonly message: string;
    readonly hint?: string;
    readonly span?: { readonly start: number; readonly end: number };
  };
}

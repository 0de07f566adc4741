/**
 * Where queries run: a portal URL, or local files served in-process by the
 * project's own server on 127.0.0.1:0, so both paths go through the client.
 * (Interface fixed first; the CLI helper implements `openSource`.)
 */
import type { DatastoreClient } from '../client/types.js';

export type SourceSpec =
  | { readonly kind: 'data'; readonly paths: readonly string[]; readonly demo?: boolean }
  | {
      readonly kind: 'url';
      readonly url: string;
      readonly token?: string;
      readonly language?: string;
      readonly method?: 'POST' | 'GET';
    };

export interface ResourceSummary {
  readonly id: string;
  readonly alias?: string;
  /** number of records, when known */
  readonly total?: number;
}

export interface Source {
  /** one line for banners: `demo data (examples/data, 3 resources)` or the URL */
  readonly label: string;
  readonly spec: SourceSpec;
  readonly client: DatastoreClient;
  /** ids and aliases the source knows (all tables for local data; configured or seen ones for a portal) */
  listResources(): Promise<readonly ResourceSummary[]>;
  close(): Promise<void>;
}

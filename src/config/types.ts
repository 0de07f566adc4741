/** A loaded, validated config: what the CLI and the REPL use. */
import type { Scalar } from '../datastore/types.js';
import type { Secret } from './secret.js';

/** Where a profile's token comes from; read only when the profile is used. */
export type TokenSource =
  | { readonly kind: 'env'; readonly name: string }
  | { readonly kind: 'file'; readonly path: string }
  | { readonly kind: 'cmd'; readonly command: string }
  | { readonly kind: 'inline'; readonly value: Secret };

export type Profile =
  | {
      readonly kind: 'url';
      readonly name: string;
      readonly url: string;
      readonly language?: string;
      readonly method?: 'POST' | 'GET';
      /** seconds a request may take (headers, then body); the client's default when absent */
      readonly timeout?: number;
      readonly token?: TokenSource;
      /** resource ids or aliases named in the config */
      readonly resources: readonly string[];
      /** the portal's dialect; detected when absent */
      readonly target?: 'ckan-2.11' | 'ckan-2.12' | 'sql';
      /** the most records a plan may read to finish a query locally */
      readonly maxScan?: number;
      /** the most rows a join may give */
      readonly maxJoinRows?: number;
      /** the header the token is sent in (CKAN's `apitoken_header_name`) */
      readonly tokenHeader?: string;
      readonly userAgent?: string;
      /** requests in flight to the portal at once */
      readonly maxInFlight?: number;
    }
  | {
      readonly kind: 'data';
      readonly name: string;
      /** absolute paths, resolved against the config file's folder */
      readonly paths: readonly string[];
      /** who answers: `memory` (default), `pglite` or `postgres` */
      readonly engine?: 'memory' | 'pglite' | 'postgres';
      /** a `postgres://` URL, or a PGlite directory (absolute) */
      readonly db?: string;
      /** the CKAN the data is served as; 2.11's when absent */
      readonly target?: 'ckan-2.11' | 'ckan-2.12' | 'sql';
      /** the most records a plan may read to finish a query locally */
      readonly maxScan?: number;
      /** the most rows a join may give */
      readonly maxJoinRows?: number;
      /** how columns no fields file declares are typed */
      readonly infer?: 'ckql' | 'xloader' | 'datapusher';
    };

/** A named query's default for one parameter: a value, or a list for `field in $list`. */
export type ParamDefault = Scalar | readonly Scalar[];

/** Where a named query's text is written, so its errors can point at the config file. */
export interface QueryOrigin {
  readonly file: string;
  /** the line of the key in the file, when it could be found */
  readonly line?: number;
  /** `queries.by-subject.query` */
  readonly key: string;
}

export interface NamedQuery {
  readonly name: string;
  /** the query text as written, comments and line breaks kept */
  readonly query: string;
  /** defaults; `--param` values override them */
  readonly params: Readonly<Record<string, ParamDefault>>;
  /** where the text is written; absent for queries made in code */
  readonly origin?: QueryOrigin;
  readonly description?: string;
  readonly profile?: string;
}

export interface Config {
  /** the file it came from; undefined when no config file was found */
  readonly file: string | undefined;
  readonly defaultProfile: string | undefined;
  readonly profiles: ReadonlyMap<string, Profile>;
  readonly queries: ReadonlyMap<string, NamedQuery>;
}

export const emptyConfig: Config = {
  file: undefined,
  defaultProfile: undefined,
  profiles: new Map(),
  queries: new Map(),
};

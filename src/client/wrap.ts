/**
 * A client that answers as another does except for a few operations: the
 * one way the session and the client's own layers (resource names, sources)
 * put something in front of a client.
 */
import type { DatastoreClient } from './types.js';

/** The operations a wrapper may answer itself; the rest go to the inner client. */
export type ClientOverrides = Partial<Pick<DatastoreClient, 'search' | 'searchAll' | 'stream' | 'prepare' | 'detectTarget' | 'explain' | 'setTarget' | 'withLanguage'>>;

/**
 * `client` with the operations `overridesOf(client)` gives answered by them.
 * A client for another language is wrapped the same way unless the
 * overrides say otherwise.
 * @example clientWith(client, (inner) => ({ search: async (input, options) => log(await inner.search(input, options)) }))
 */
export function clientWith(client: DatastoreClient, overridesOf: (inner: DatastoreClient) => ClientOverrides): DatastoreClient {
  const overrides = overridesOf(client);
  return {
    get url() {
      return client.url;
    },
    get language() {
      return client.language;
    },
    get method() {
      return client.method;
    },
    get hasToken() {
      return client.hasToken;
    },
    get target() {
      return client.target;
    },
    get maxScan() {
      return client.maxScan;
    },
    setMaxScan: (max) => client.setMaxScan(max),
    get maxJoinRows() {
      return client.maxJoinRows;
    },
    setMaxJoinRows: (max) => client.setMaxJoinRows(max),
    setTarget: overrides.setTarget ?? ((target) => client.setTarget(target)),
    detectTarget: overrides.detectTarget ?? ((resourceId, signal) => client.detectTarget(resourceId, signal)),
    search: overrides.search ?? ((input, options) => client.search(input, options)),
    searchAll: overrides.searchAll ?? ((input, options) => client.searchAll(input, options)),
    stream: overrides.stream ?? ((input, options) => client.stream(input, options)),
    prepare: overrides.prepare ?? ((input, params) => client.prepare(input, params)),
    explain: overrides.explain ?? ((input, options) => client.explain(input, options)),
    withLanguage: overrides.withLanguage ?? ((language) => clientWith(client.withLanguage(language), overridesOf)),
    action: (name, body, options) => client.action(name, body, options),
    download: (path, params, options) => client.download(path, params, options),
    close: () => client.close(),
  };
}

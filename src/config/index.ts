/** Config files: finding, validating, and reading profile tokens. */
export { loadConfig, findConfigFile, readConfigFile, configSearchPlaces } from './load.js';
export type { LoadConfigOptions } from './load.js';
export { readToken, readTokenFile } from './token.js';
export { Secret } from './secret.js';
export { emptyConfig } from './types.js';
export type { Config, Profile, NamedQuery, TokenSource } from './types.js';

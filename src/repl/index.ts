/**
 * `ckql/repl`: the REPL, the script runner and the terminal table, for
 * embedders. The bin imports `start.ts` and `script.ts` directly, so the
 * prompt shows before ink has loaded.
 */
export { startRepl } from './start.js';
export type { ReplOptions } from './start.js';
export { renderResultTable, renderInfoTable } from '../output/table/render.js';
export type { RenderResultOptions, InfoTableOptions } from '../output/table/render.js';
export { runScript } from './script.js';
export type { ScriptOptions, ScriptResult } from './script.js';
export { splitStatements } from './statements.js';
export type { Statement } from './statements.js';
export { defaultHistoryFile, redactSecrets } from './history.js';

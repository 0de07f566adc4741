/**
 * What the REPL and embedders use from the CLI layer, by name. The bin itself
 * is `main.ts`; nothing here loads ink.
 */
export { openSource, demoDataDir } from '../session/source.js';
export type { Source, SourceSpec, ResourceSummary } from '../session/source.js';
export { selectSource, shellQuote } from '../session/select-source.js';
export type { SourceFlags, SelectSourceOptions, SelectedSource } from '../session/select-source.js';
export { runCli } from './program.js';
export { createContext, processContext } from './context.js';
export type { CliContext } from './context.js';
export { exitCodes, exitCodeFor } from './exit-codes.js';
export { readParamValue, readParams } from '../session/params.js';
export { nearestName, didYouMean } from '../session/nearest.js';
export { useColor } from '../output/color.js';
export { loadConfig } from '../config/load.js';
export type { LoadConfigOptions } from '../config/load.js';
export type { Config, Profile, NamedQuery } from '../config/types.js';
export { formatRecords, createRecordWriter, parseOutputFormat, outputFormats } from '../output/format-records.js';
export type { OutputFormat, FormatOptions, RecordWriter } from '../output/format-records.js';

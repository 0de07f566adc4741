/**
 * The language service: one set of pure functions behind every place a
 * query is written (the REPL's completion, the playground's editor, the
 * language server, `ckql check`), so each gives the same completion, the
 * same errors with the same spans and hints, and the same formatting. No
 * Node built-ins: it bundles for a browser. Positions are UTF-16 offsets
 * into the text given; a text may be one query or a script of statements
 * separated by `;`.
 */
export { complete } from './complete.js';
export type { CompletionItem, CompletionKind, CompletionResult, Lookup } from './complete.js';
export { findResource } from './context.js';
export type { FieldDictionary, FieldSchema, LanguageContext, ResourceSchema, SourceSchema } from './context.js';
export { diagnose } from './diagnose.js';
export type { Diagnostic, Fix, Severity, TextEdit } from './diagnose.js';
export { format } from './format.js';
export type { FormatResult } from './format.js';
export { highlight } from './highlight.js';
export type { HighlightToken, TokenClass } from './highlight.js';
export { hover } from './hover.js';
export type { HoverResult } from './hover.js';
export { keywordHelp } from './keyword-help.js';
export { statementAt, statementsOf } from './script.js';
export type { Piece } from './script.js';

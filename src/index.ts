/**
 * ckql: the public API, named exports grouped by pipeline stage.
 * The REPL and anything that imports ink live behind `ckql/repl`, never here.
 */

// The AST and positions
export type {
  Query, From, Where, Search, Select, Order, Limit, Offset, Clause,
  Condition, Equals, In, And, Or, Field, SortKey, SortDirection,
  Value, Literal, StringValue, NumberValue, BooleanValue, NullValue, Parameter, Node,
} from './ast.js';
export type { Span } from './span.js';

// Errors: one catalogue, matched on `code`
export { QueryError, DatastoreError, ToolError, queryMessages, networkErrorCodes } from './errors.js';
export type { QueryErrorCode, DatastoreErrorCode, ToolErrorCode } from './errors.js';
export { renderError } from './diagnostics.js';
export type { RenderOptions } from './diagnostics.js';

// Text → AST → text
export { parse } from './syntax/parse.js';
export { format } from './format.js';
export { suggest } from './syntax/suggest.js';
export type { Suggestion, SuggestResult } from './syntax/suggest.js';

// AST ⇄ request
export { compile, plan } from './compile/compile.js';
export type { CompileOptions } from './compile/compile.js';
export { DEFAULT_MAX_JOIN_ROWS, DEFAULT_MAX_SCAN, parseTarget, targets } from './compile/plan.js';
export type { LocalSteps, Plan, PlanOptions, Target } from './compile/plan.js';
export type { SqlRequest } from './compile/sql.js';
export { fromRequest } from './compile/from-request.js';
export type { FromRequestOptions } from './compile/from-request.js';
export { fromSql } from './compile/from-sql.js';
export { bind } from './compile/bind.js';
export type { Params, ParamValue } from './compile/bind.js';
export { ckql } from './compile/template.js';

// Requests, results and local evaluation
export type {
  SearchRequest, SearchResult, SearchLinks, Filters, Scalar, Row, JsonValue,
  FieldInfo, FieldType, Table, ErrorBody, FilterTree, FieldSearch, RecordsFormat,
} from './datastore/types.js';
export { normalizeRequest, validateSearch, checkAgainstTable, filterTreeOf } from './datastore/validate.js';
export type { ValidatedSearch, SortItem } from './datastore/validate.js';
export { filtersVersion, parseFilters } from './datastore/filters.js';
export type { FilterNode, ParseFiltersOptions } from './datastore/filters.js';
export { resultJson } from './datastore/response.js';
export type { ResultParts, NextPage } from './datastore/response.js';
export { evaluate } from './engine/memory/evaluate.js';
export type { EvaluateOptions, FieldDeclaration, PlainRecord } from './engine/memory/evaluate.js';
export { evaluateQuery, residualTest } from './engine/memory/evaluate-query.js';
export { loadTable, resourceIdFor, tableFromRows } from './engine/memory/load.js';
export { loadResources } from './engine/node/load-resources.js';
export type { FileProgress, SourceData, TableOptions, TableSource } from './engine/memory/load.js';
export type { LoadOptions } from './engine/node/load-resources.js';
export { Catalog } from './engine/memory/catalog.js';

// Engines: who answers a request
export { openEngine } from './engine/open.js';
export type { OpenEngineOptions } from './engine/open.js';
export { memoryEngine } from './engine/memory/engine.js';
export type { TableLookup } from './engine/memory/engine.js';
export type { Engine, EngineKind, EngineSearchOptions, ResourceInfo, SqlResult, SearchSqlOptions, CkanVersion } from './engine/types.js';
// The PostgreSQL engines come through `openEngine` (their drivers load on demand); loading into one:
export { loadTables } from './engine/sql/load.js';
export type { LoadTablesOptions, LoadProgress } from './engine/sql/load.js';
export { loadFiles } from './engine/sql/load-files.js';
export type { LoadFilesOptions, LoadedResource } from './engine/sql/load-files.js';
export type { SqlEngine } from './engine/sql/engine.js';
export type { Db, SqlSession, TransactionOptions } from './engine/sql/db.js';

// HTTP: the client and the local server
export { connect } from './client/connect.js';
export type {
  ClientOptions, DatastoreClient, SearchOptions, SearchAllOptions, SearchInput, PreparedRequest, RetryInfo, Explanation,
} from './client/connect.js';
// Joins across sources: a query naming `name:resource` reads it from that source (docs/aggregates.md)
export { withSources } from './client/sources.js';
export type { WithSourcesOptions } from './client/sources.js';
export type { SourceDirectory } from './client/types.js';
export { splitSource } from './compile/plan.js';
export { startServer } from './server/server.js';
export type { ServerOptions, RunningServer } from './server/server.js';

// Portals as people meet them: the catalogue, the data dictionary, declared types, taking it home
export { searchDatasets, allDatasets, showDataset, datastoreTables } from './client/discovery.js';
export type { DatasetSummary, DatasetResource, DatasetQuery, DatasetPage, DatastoreTable } from './client/discovery.js';
export { readDictionary, describeField, typeWarnings } from './client/dictionary.js';
export type { Dictionary, FieldDescription, TypeWarning } from './client/dictionary.js';
export { comparisonWarnings } from './compile/type-warnings.js';
export { splitResourceName } from './client/resource-names.js';
export type { ActionOptions, Download } from './client/types.js';
export type { FieldDictionary, ResourceMeta, DatasetMeta } from './datastore/types.js';
export { cellValue, declarationFromText, INFER_MODES } from './engine/declared.js';
export { readDeclaration, readDataPackage } from './engine/node/declared-files.js';
export type { Declaration, DeclaredField, InferMode } from './engine/declared.js';
export type { DatastoreInfo, ColumnSchema } from './engine/types.js';
export { exportRecords, exportFormatOf, fieldsFileOf } from './session/export.js';
export type { ExportOptions, ExportSummary, ExportProgress, ExportFormat, ExportPath } from './session/export.js';

// The language service: diagnose, complete, hover, format, highlight (what the REPL, the playground
// and the language server share), as one namespace beside `format` and the rest above
export * as languageService from './language-service/index.js';

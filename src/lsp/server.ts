/**
 * The language server (`ckql lsp --stdio`): a thin adapter from the
 * Language Server Protocol to the language service. It finds the queries of
 * each open document (a `.ckql` script, a config file's named queries,
 * `ckql\`…\`` templates in code), asks the service about each, and moves
 * every span to the document's lines and columns. Schema comes from the
 * config's profile when one is configured (the document's own config, or
 * the one ckql would read from the document's folder): resources and fields
 * for diagnostics, hover and completion, and sampled values for completion.
 */
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { framedMessages } from './framing.js';
import {
  CodeActionKind, CompletionItemKind, createConnection, DiagnosticSeverity, MarkupKind, StreamMessageReader, StreamMessageWriter,
  TextDocuments, TextDocumentSyncKind,
  type CodeAction, type CompletionItem, type Connection, type Diagnostic as LspDiagnostic, type Hover, type TextEdit as LspTextEdit,
} from 'vscode-languageserver/node';
import { TextDocument } from 'vscode-languageserver-textdocument';
import { parseTarget, splitSource, type Target } from '../compile/plan.js';
import { findConfigFile, readConfigFile } from '../config/load.js';
import type { Config } from '../config/types.js';
import type { JsonValue } from '../datastore/types.js';
import {
  complete, diagnose, format, hover, type CompletionKind, type Diagnostic, type LanguageContext, type Lookup, type ResourceSchema, type Severity, type SourceSchema,
} from '../language-service/index.js';
import { authorsWords, documentKind, fileSpan, queriesOf, queryOffset, type EmbeddedQuery } from '../session/embedded.js';
import { loadSchema, resourcesNamed } from '../session/schema.js';
import { LOCAL_SOURCE, profileNote } from '../session/sources.js';
import { selectSource } from '../session/select-source.js';
import { openSource, type Source } from '../session/source.js';

export interface LanguageServerOptions {
  /** opens a profile's source; default `openSource` (read lazily) */
  readonly openSource?: (spec: Parameters<typeof openSource>[0]) => Promise<Source>;
  readonly env?: NodeJS.ProcessEnv;
}

/** What the client may say at `initialize` (`initializationOptions`). */
interface InitOptions {
  /** the profile whose source gives the schema (default: the config's default profile) */
  readonly profile?: string;
  /** the dialect to check for (default: the profile's, else ckan-2.11) */
  readonly target?: string;
}

const severity: Record<Severity, DiagnosticSeverity> = {
  error: DiagnosticSeverity.Error,
  warning: DiagnosticSeverity.Warning,
  information: DiagnosticSeverity.Information,
  hint: DiagnosticSeverity.Hint,
};

const completionKind: Record<CompletionKind, CompletionItemKind> = {
  keyword: CompletionItemKind.Keyword,
  punctuation: CompletionItemKind.Operator,
  source: CompletionItemKind.Folder,
  resource: CompletionItemKind.Module,
  field: CompletionItemKind.Field,
  name: CompletionItemKind.Variable,
  value: CompletionItemKind.Value,
  parameter: CompletionItemKind.Variable,
  function: CompletionItemKind.Function,
};

/**
 * The profiles of a config as the sources a query may name, each with what
 * it reads (a URL or local data; never a token), and `local`: a query is
 * checked here without knowing whether it will run on local data
 * (`--data`), so `local:` is never called unknown.
 */
function sourcesOf(config: Config): SourceSchema[] {
  const sources: SourceSchema[] = [...config.profiles].map(([name, profile]) => ({ name, detail: profileNote(profile) }));
  if (!config.profiles.has(LOCAL_SOURCE)) sources.push({ name: LOCAL_SOURCE, detail: 'the local data of a session that has some (--data)' });
  return sources;
}

/** How long a document's edits must pause before it is checked again. */
const CHECK_AFTER_EDITS_MS = 150;
/** How long a completion waits for fields or values it had to ask a source for. */
const LOOKUP_WAIT_MS = 1_500;
/** Records asked for when sampling a field's values. */
const SAMPLE_SIZE = 500;

/**
 * Serves the language over a pair of streams (`ckql lsp --stdio` gives
 * stdin and stdout). The client's `exit` ends the process (the protocol
 * library does that for every Node server: 0 after `shutdown`, else 1); if
 * the input closes first, this resolves with 1, as the protocol asks of a
 * server that was not shut down.
 */
export function serveStreams(input: NodeJS.ReadableStream, output: NodeJS.WritableStream, options: LanguageServerOptions = {}): Promise<number> {
  // The framing is checked first: one malformed header must not stop the server (lsp/framing.ts).
  const framed = input.pipe(framedMessages((problem) => process.stderr.write(`ckql lsp: ${problem}\n`)));
  const reader = new StreamMessageReader(framed);
  const connection = createConnection(reader, new StreamMessageWriter(output));
  serveLanguage(connection, options);
  const closed = new Promise<number>((resolve) => reader.onClose(() => resolve(1)));
  connection.listen();
  return closed;
}

/**
 * Serves the language on `connection` until the client says `exit`.
 * @example
 * const connection = createConnection(new StreamMessageReader(process.stdin), new StreamMessageWriter(process.stdout));
 * serveLanguage(connection);
 * connection.listen();
 */
export function serveLanguage(connection: Connection, options: LanguageServerOptions = {}): void {
  const documents = new TextDocuments(TextDocument);
  let init: InitOptions = {};
  const schemas = new Schemas(options, () => init, () => {
    // A schema arrived: analyses made before it are stale.
    schemasLearnt++;
    for (const document of documents.all()) void publish(document);
  });

  connection.onInitialize((params) => {
    init = (params.initializationOptions ?? {}) as InitOptions;
    return {
      capabilities: {
        textDocumentSync: TextDocumentSyncKind.Incremental,
        completionProvider: { triggerCharacters: [' ', '`', '"', "'", '$', '('] },
        hoverProvider: true,
        documentFormattingProvider: true,
        codeActionProvider: { codeActionKinds: [CodeActionKind.QuickFix] },
      },
      serverInfo: { name: 'ckql' },
    };
  });

  type Analysis = { file: string; queries: readonly EmbeddedQuery[]; problem?: ReturnType<typeof queriesOf>['problem']; contextOf: (query: EmbeddedQuery) => LanguageContext };
  /** Each open document's analysis, for its version and the schemas known then: completion and hover after an edit read it, not a new one. */
  const analysed = new Map<string, { readonly version: number; readonly schemas: number; readonly analysis: Promise<Analysis> }>();
  let schemasLearnt = 0;

  /** The queries of a document, with the context each is checked in (the last analysis, while the document and the schemas are as they were). */
  function analyse(document: TextDocument): Promise<Analysis> {
    const kept = analysed.get(document.uri);
    if (kept !== undefined && kept.version === document.version && kept.schemas === schemasLearnt) return kept.analysis;
    const analysis = analyseNow(document);
    analysed.set(document.uri, { version: document.version, schemas: schemasLearnt, analysis });
    analysis.catch(() => analysed.delete(document.uri));
    return analysis;
  }

  async function analyseNow(document: TextDocument): Promise<Analysis> {
    const file = pathOf(document.uri);
    const found = queriesOf(file, document.getText(), documentKind(file, true));
    const config = found.config ?? (await schemas.configNear(file));
    // `demo:courses` of the profile giving the schema is its `courses`; another profile's resources are not looked up here.
    const schemaProfile = init.profile ?? config?.defaultProfile;
    const names = found.queries.flatMap((q) => resourcesNamed(q.text, q.params ?? {})).flatMap((name) => {
      const { source, resource } = splitSource(name);
      if (source === undefined || config?.profiles.has(source) !== true) return [name];
      return source === schemaProfile ? [resource] : [];
    });
    const known = schemas.schemaFor(config, names);
    const contextOf = (query: EmbeddedQuery): LanguageContext => {
      const profile = init.profile ?? query.profile ?? config?.defaultProfile;
      const target = parseTarget(init.target ?? '') ?? (profile === undefined ? undefined : config?.profiles.get(profile)?.target);
      return {
        ...(known === undefined ? {} : { resources: known.resources, allResources: known.complete }),
        ...(target === undefined ? {} : { target: target as Target }),
        ...(query.params === undefined ? {} : { params: query.params }),
        // The config's profiles, each a source a resource may be written `name:resource` of (docs/aggregates.md).
        ...(config === undefined || config.profiles.size === 0 ? {} : { sources: sourcesOf(config) }),
        // The resources above are the schema profile's: `name:resource` of it is one of them.
        ...(schemaProfile === undefined ? {} : { source: schemaProfile }),
        samples: (resource, field) => schemas.samples(config, resource, field),
      };
    };
    return { file, queries: found.queries, ...(found.problem === undefined ? {} : { problem: found.problem }), contextOf };
  }

  /** The fixes of the diagnostics last published, per document, for code actions. */
  const fixes = new Map<string, { range: LspDiagnostic['range']; diagnostic: LspDiagnostic; edits: { title: string; edits: LspTextEdit[] }[] }[]>();

  async function publish(document: TextDocument): Promise<void> {
    const version = document.version;
    const { queries, problem, contextOf } = await analyse(document);
    const out: LspDiagnostic[] = [];
    const actions: { range: LspDiagnostic['range']; diagnostic: LspDiagnostic; edits: { title: string; edits: LspTextEdit[] }[] }[] = [];
    if (problem !== undefined) {
      const line = Math.max(0, (problem.line ?? 1) - 1);
      out.push({
        range: { start: { line, character: 0 }, end: { line, character: Number.MAX_SAFE_INTEGER } },
        severity: DiagnosticSeverity.Error,
        code: problem.code,
        source: 'ckql',
        message: problem.hint === undefined ? problem.message : `${problem.message}\nhint: ${problem.hint}`,
      });
    }
    for (const query of queries) {
      for (const diagnostic of diagnose(query.text, contextOf(query))) {
        const lsp = toLsp(document, query, diagnostic);
        out.push(lsp);
        if (diagnostic.fixes.length > 0) {
          actions.push({
            range: lsp.range,
            diagnostic: lsp,
            edits: diagnostic.fixes.map((fix) => ({
              title: fix.title,
              edits: fix.edits.map((edit) => ({ range: rangeOf(document, fileSpan(query, edit.span)), newText: edit.text })),
            })),
          });
        }
      }
    }
    // A newer version may have been published while this one waited for a schema.
    if (documents.get(document.uri)?.version !== version) return;
    fixes.set(document.uri, actions);
    await connection.sendDiagnostics({ uri: document.uri, version, diagnostics: out });
  }

  // A document is checked once its edits pause: each keystroke of a 10,000-line file analysed it again, and a
  // hover waited behind every analysis queued before it. Opening is checked at once.
  const pending = new Map<string, NodeJS.Timeout>();
  const publishSoon = (document: TextDocument, wait: number): void => {
    clearTimeout(pending.get(document.uri));
    pending.set(document.uri, setTimeout(() => {
      pending.delete(document.uri);
      const current = documents.get(document.uri);
      if (current !== undefined) void publish(current);
    }, wait));
  };
  documents.onDidOpen((event) => publishSoon(event.document, 0));
  documents.onDidChangeContent((event) => publishSoon(event.document, CHECK_AFTER_EDITS_MS));
  documents.onDidClose((event) => {
    clearTimeout(pending.get(event.document.uri));
    pending.delete(event.document.uri);
    analysed.delete(event.document.uri);
    fixes.delete(event.document.uri);
    void connection.sendDiagnostics({ uri: event.document.uri, diagnostics: [] });
  });

  /** The query the position is in, and the offset in it. */
  async function at(uri: string, position: { line: number; character: number }) {
    const document = documents.get(uri);
    if (document === undefined) return undefined;
    const analysed = await analyse(document);
    const offset = document.offsetAt(position);
    for (const query of analysed.queries) {
      const local = queryOffset(query, offset);
      if (local !== undefined) return { document, query, local, context: analysed.contextOf(query) };
    }
    return undefined;
  }

  connection.onCompletion(async (params): Promise<CompletionItem[]> => {
    const found = await at(params.textDocument.uri, params.position);
    if (found === undefined) return [];
    const { document, query, local } = found;
    let result = complete(query.text, local, found.context);
    if (result.pending.length > 0) {
      const config = await schemas.configFor(pathOf(document.uri), document.getText());
      await schemas.learn(config, result.pending, LOOKUP_WAIT_MS);
      result = complete(query.text, local, (await at(params.textDocument.uri, params.position))?.context ?? found.context);
    }
    const range = rangeOf(document, fileSpan(query, result.span));
    return result.items.map((item, index) => ({
      label: item.label,
      kind: completionKind[item.kind],
      ...(item.detail === undefined ? {} : { detail: item.detail }),
      ...(item.documentation === undefined ? {} : { documentation: { kind: MarkupKind.PlainText, value: item.documentation } }),
      textEdit: { range, newText: item.insert },
      filterText: item.insert,
      sortText: String(index).padStart(5, '0'),
    }));
  });

  connection.onHover(async (params): Promise<Hover | null> => {
    const found = await at(params.textDocument.uri, params.position);
    if (found === undefined) return null;
    const result = hover(found.query.text, found.local, found.context);
    if (result === undefined) return null;
    const [title, ...rest] = result.text.split('\n');
    return {
      contents: { kind: MarkupKind.Markdown, value: [`\`${title}\``, ...rest].join('\n\n') },
      range: rangeOf(found.document, fileSpan(found.query, result.span)),
    };
  });

  connection.onDocumentFormatting((params): LspTextEdit[] => {
    const document = documents.get(params.textDocument.uri);
    // Only a script is the document's whole text; a query inside YAML or code keeps its host's layout.
    if (document === undefined || documentKind(pathOf(document.uri)) !== 'script') return [];
    const text = document.getText();
    const formatted = format(text).text;
    if (formatted === text) return [];
    return [{ range: { start: { line: 0, character: 0 }, end: document.positionAt(text.length) }, newText: formatted }];
  });

  connection.onCodeAction((params): CodeAction[] => {
    const known = fixes.get(params.textDocument.uri) ?? [];
    const overlaps = (a: LspDiagnostic['range'], b: LspDiagnostic['range']): boolean =>
      !(a.end.line < b.start.line || (a.end.line === b.start.line && a.end.character < b.start.character) ||
        b.end.line < a.start.line || (b.end.line === a.start.line && b.end.character < a.start.character));
    return known
      .filter((entry) => overlaps(entry.range, params.range))
      .flatMap((entry) =>
        entry.edits.map((fix, index): CodeAction => ({
          title: fix.title,
          kind: CodeActionKind.QuickFix,
          diagnostics: [entry.diagnostic],
          isPreferred: index === 0,
          edit: { changes: { [params.textDocument.uri]: fix.edits } },
        })),
      );
  });

  connection.onShutdown(async () => {
    await schemas.close();
  });

  documents.listen(connection);
}

function toLsp(document: TextDocument, query: EmbeddedQuery, diagnostic: Diagnostic): LspDiagnostic {
  const { message, hint } = authorsWords(query, diagnostic);
  return {
    range: rangeOf(document, fileSpan(query, diagnostic.span)),
    severity: diagnostic.incomplete === true ? DiagnosticSeverity.Warning : severity[diagnostic.severity],
    code: diagnostic.code,
    source: 'ckql',
    message: hint === undefined ? message : `${message}\nhint: ${hint}`,
  };
}

function rangeOf(document: TextDocument, span: { start: number; end: number }): LspDiagnostic['range'] {
  return { start: document.positionAt(span.start), end: document.positionAt(span.end) };
}

/** A document's path; a file URI this system cannot name (a UNC host on Linux, `file://server/share/x.ckql`) keeps its URL path. */
function pathOf(uri: string): string {
  if (!uri.startsWith('file:')) return uri;
  try {
    return fileURLToPath(uri);
  } catch {
    try {
      return decodeURIComponent(new URL(uri).pathname);
    } catch {
      return uri;
    }
  }
}

/**
 * Schemas from configured profiles: each profile's source is opened once
 * (lazily), each resource's fields and each field's sample are asked once
 * and kept. Nothing is opened when no profile is configured.
 */
class Schemas {
  readonly #sources = new Map<string, Promise<Source | undefined>>();
  readonly #configs = new Map<string, Promise<Config | undefined>>();
  /** per profile: what each name asked for turned out to be (null: the source does not have it) */
  readonly #resources = new Map<string, Map<string, ResourceSchema | null>>();
  readonly #asking = new Map<string, Promise<void>>();
  readonly #samples = new Map<string, readonly JsonValue[]>();

  constructor(
    private readonly options: LanguageServerOptions,
    private readonly init: () => InitOptions,
    private readonly changed: () => void,
  ) {}

  /** The config ckql would read from `file`'s folder, if any (kept per folder). */
  configNear(file: string): Promise<Config | undefined> {
    const folder = dirname(file);
    let found = this.#configs.get(folder);
    if (found === undefined) {
      found = findConfigFile({ cwd: folder, ...(this.options.env === undefined ? {} : { env: this.options.env }) })
        .then((path) => (path === undefined ? undefined : readConfigFile(path)))
        .catch(() => undefined);
      this.#configs.set(folder, found);
    }
    return found;
  }

  /** A document's own config when it is one, else the one near it. */
  async configFor(file: string, text: string): Promise<Config | undefined> {
    return queriesOf(file, text, documentKind(file, true)).config ?? this.configNear(file);
  }

  /** The profile whose source gives the schema, and its key here. */
  #profile(config: Config | undefined): { name: string; key: string } | undefined {
    const name = this.init().profile ?? config?.defaultProfile;
    if (config === undefined || name === undefined || !config.profiles.has(name)) return undefined;
    return { name, key: `${config.file ?? ''}#${name}` };
  }

  #source(config: Config, profile: { name: string; key: string }): Promise<Source | undefined> {
    let source = this.#sources.get(profile.key);
    if (source === undefined) {
      const open = this.options.openSource ?? ((spec) => openSource(spec, { lazy: true }));
      source = selectSource({ profile: profile.name }, { config: async () => config, ...(this.options.env === undefined ? {} : { env: this.options.env }) })
        .then(({ spec }) => open(spec))
        .catch(() => undefined);
      this.#sources.set(profile.key, source);
    }
    return source;
  }

  /**
   * What is known now of the resources `names` under the config's profile
   * (`complete` once every one has been asked for); what is not known yet
   * is asked for, and the documents are checked again when it arrives.
   */
  schemaFor(config: Config | undefined, names: readonly string[]): { resources: readonly ResourceSchema[]; complete: boolean } | undefined {
    const profile = this.#profile(config);
    if (profile === undefined) return undefined;
    const known = this.#resources.get(profile.key) ?? new Map<string, ResourceSchema | null>();
    this.#resources.set(profile.key, known);
    const missing = names.filter((name) => !known.has(name));
    if (missing.length > 0) void this.#ask(config!, profile, missing);
    const resources = [...new Set([...known.values()].filter((r): r is ResourceSchema => r !== null))];
    return { resources, complete: missing.length === 0 };
  }

  #ask(config: Config, profile: { name: string; key: string }, names: readonly string[]): Promise<void> {
    const id = `${profile.key}#${names.join('\n')}`;
    let asking = this.#asking.get(id);
    if (asking === undefined) {
      asking = this.#source(config, profile).then(async (source) => {
        const known = this.#resources.get(profile.key)!;
        const schema = source === undefined ? undefined : await loadSchema(source, names).catch(() => undefined);
        for (const name of names) {
          const found = schema?.resources.find((r) => r.fields !== undefined && (r.id === name || r.alias === name));
          // A source that could not be asked leaves the name unknown, never "not found".
          if (schema !== undefined) known.set(name, found ?? null);
        }
        // Asked once per set of names: the documents are checked again once, with what came back.
        if (schema !== undefined) this.changed();
      });
      this.#asking.set(id, asking);
    }
    return asking;
  }

  /** Values sampled from a field, when they have been asked for. */
  samples(config: Config | undefined, resource: string, field: string): readonly JsonValue[] | undefined {
    const profile = this.#profile(config);
    return profile === undefined ? undefined : this.#samples.get(`${profile.key}#${resource}#${field}`);
  }

  /** Asks for what completion lacked (fields, values), waiting at most `waitMs`. */
  async learn(config: Config | undefined, pending: readonly Lookup[], waitMs: number): Promise<void> {
    const profile = this.#profile(config);
    if (profile === undefined) return;
    const work = pending.map(async (lookup) => {
      if (lookup.kind === 'fields') await this.#ask(config!, profile, [lookup.resource]);
      if (lookup.kind !== 'values') return;
      const id = `${profile.key}#${lookup.resource}#${lookup.field}`;
      if (this.#samples.has(id)) return;
      const source = await this.#source(config!, profile);
      const result = await source?.client
        .search({ resource_id: lookup.resource, fields: [lookup.field], limit: SAMPLE_SIZE, include_total: false })
        .catch(() => undefined);
      const values = new Map<string, JsonValue>();
      for (const record of result?.records ?? []) {
        const value = record[lookup.field];
        if (value !== undefined && (value === null || typeof value !== 'object')) values.set(`${typeof value}:${String(value)}`, value);
        if (values.size >= 50) break;
      }
      this.#samples.set(id, [...values.values()]);
    });
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([Promise.all(work), new Promise((resolve) => (timer = setTimeout(resolve, waitMs)))]);
    clearTimeout(timer);
  }

  async close(): Promise<void> {
    const sources = await Promise.all(this.#sources.values());
    await Promise.allSettled(sources.map((source) => source?.close()));
  }
}

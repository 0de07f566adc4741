/**
 * `ckql check [FILES…]`: every query in `.ckql` scripts, config files (each
 * named query, with its declared parameters) and `ckql\`…\`` templates in
 * TypeScript and JavaScript, checked by the language service without
 * running anything. Problems print as `file:line:col` with the caret
 * excerpt (or as JSON for CI annotations); any error exits 3, so a CI job
 * can guard a repository's queries. `--schema SOURCE` also checks resources,
 * fields and values against a source. Loaded by check.ts when the command runs.
 */
import { readdir, stat } from 'node:fs/promises';
import { join, relative, resolve } from 'node:path';
import { parseTarget, type Target } from '../../compile/plan.js';
import type { Config } from '../../config/types.js';
import { findConfigFile } from '../../config/load.js';
import { readTextFile } from '../../engine/node/files.js';
import { lineAndColumn, renderError } from '../../diagnostics.js';
import { QueryError, ToolError, toolError } from '../../errors.js';
import { diagnose, statementsOf, type Diagnostic, type LanguageContext, type Severity } from '../../language-service/index.js';
import { authorsWords, documentKind, fileSpan, queriesOf, type EmbeddedQuery } from '../../session/embedded.js';
import { loadSchema, resourcesNamed, type SourceSchema } from '../../session/schema.js';
import { selectSource } from '../../session/select-source.js';
import { openSource } from '../../session/source.js';
import type { CliContext } from '../context.js';
import { exitCodes } from '../exit-codes.js';
import { configLoader } from '../options.js';

export interface CheckOptions {
  readonly schema?: string;
  readonly format: 'text' | 'json';
  readonly target?: string;
  readonly config?: string;
}

/** One problem, where it is in its file. */
export interface CheckProblem {
  readonly file: string;
  readonly line: number;
  readonly column: number;
  readonly endLine: number;
  readonly endColumn: number;
  readonly severity: Severity;
  readonly code: string;
  readonly message: string;
  readonly hint?: string;
  /** the query it is about: `queries.by-subject`, `ckql template at line 12`, a script's name */
  readonly query?: string;
}

/** Checks `files` (or the config file ckql would read) and returns the exit status. */
export async function runCheck(files: readonly string[], options: CheckOptions, context: CliContext): Promise<number> {
  const target = options.target === undefined ? undefined : parseTarget(options.target);
  if (options.target !== undefined && target === undefined) {
    throw toolError('USAGE', [`--target must be ckan-2.11, ckan-2.12 or sql, found ${JSON.stringify(options.target)}`]);
  }
  const loadConfig = configLoader(options, context);
  const paths = files.length > 0 ? await collect(files, context.cwd) : await defaultFiles(options, context);

  const documents: { file: string; text: string; queries: readonly EmbeddedQuery[]; config?: Config }[] = [];
  const problems: CheckProblem[] = [];
  const rendered: string[] = [];
  for (const { path, kind } of paths) {
    const shown = relative(context.cwd, path) || path;
    let text: string;
    try {
      text = await readTextFile(path);
    } catch (error) {
      // One file that cannot be read (a symlink loop, a FIFO, a device, too large, not UTF-8) is its own problem;
      // the others are still checked.
      if (!(error instanceof ToolError)) throw error;
      problems.push({ file: shown, line: 1, column: 1, endLine: 1, endColumn: 1, severity: 'error', code: error.code, message: error.message.replace(`${path} `, ''), ...(error.hint === undefined ? {} : { hint: error.hint }) });
      if (options.format === 'text') rendered.push(renderConfigProblem(problems[problems.length - 1]!));
      continue;
    }
    const found = queriesOf(path, text, kind);
    if (found.problem !== undefined) {
      problems.push({
        file: shown,
        line: found.problem.line ?? 1,
        column: 1,
        endLine: found.problem.line ?? 1,
        endColumn: 1,
        severity: 'error',
        code: found.problem.code,
        message: found.problem.message.replace(`${path}: `, ''),
        ...(found.problem.hint === undefined ? {} : { hint: found.problem.hint }),
      });
      if (options.format === 'text') rendered.push(renderConfigProblem(problems[problems.length - 1]!));
    }
    documents.push({ file: shown, text, queries: found.queries, ...(found.config === undefined ? {} : { config: found.config }) });
  }

  let schema: SourceSchema | undefined;
  if (options.schema !== undefined) {
    const names = documents.flatMap((d) => d.queries.flatMap((q) => resourcesNamed(q.text, q.params ?? {})));
    schema = await schemaOf(options.schema, names, loadConfig, context);
  }

  let queries = 0;
  for (const document of documents) {
    for (const query of document.queries) {
      queries += statementsOf(query.text).length;
      const profile = query.profile ?? document.config?.defaultProfile;
      const profileTarget = profile === undefined ? undefined : document.config?.profiles.get(profile)?.target;
      const languageContext: LanguageContext = {
        ...(schema ?? {}),
        ...((target ?? profileTarget) === undefined ? {} : { target: (target ?? profileTarget) as Target }),
        ...(query.params === undefined ? {} : { params: query.params }),
      };
      for (const diagnostic of diagnose(query.text, languageContext)) {
        const problem = locate(document.file, document.text, query, diagnostic);
        problems.push(problem);
        if (options.format === 'text' && (problem.severity === 'error' || problem.severity === 'warning')) {
          rendered.push(renderProblem(problem, document.text, query, diagnostic, context.color.stdout));
        }
      }
    }
  }

  const errors = problems.filter((p) => p.severity === 'error').length;
  const warnings = problems.filter((p) => p.severity === 'warning').length;
  const summary = `${queries} quer${queries === 1 ? 'y' : 'ies'} in ${documents.length} file${documents.length === 1 ? '' : 's'}: ${count(errors, 'error')}, ${count(warnings, 'warning')}`;
  if (options.format === 'json') {
    await context.out(`${JSON.stringify({ files: documents.length, queries, errors, warnings, problems }, null, 2)}\n`);
  } else {
    if (rendered.length > 0) await context.out(`${rendered.join('\n\n')}\n`);
    context.err(summary);
  }
  return errors > 0 ? exitCodes.query : exitCodes.ok;
}

function count(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}

/** A diagnostic of a query, at its place in the file. */
function locate(file: string, text: string, query: EmbeddedQuery, diagnostic: Diagnostic): CheckProblem {
  const span = fileSpan(query, diagnostic.span);
  const start = lineAndColumn(text, span.start);
  const end = lineAndColumn(text, span.end);
  const { message, hint } = authorsWords(query, diagnostic);
  return {
    file,
    line: start.line,
    column: start.column,
    endLine: end.line,
    endColumn: end.column,
    severity: diagnostic.severity,
    code: diagnostic.code,
    message,
    ...(hint === undefined ? {} : { hint }),
    query: query.label,
  };
}

/** `file:line:col: error[CODE]: message`, then the file's line with carets under the span, and the hint. */
function renderProblem(problem: CheckProblem, text: string, query: EmbeddedQuery, diagnostic: Diagnostic, color: boolean): string {
  const span = fileSpan(query, diagnostic.span);
  const error = new QueryError(diagnostic.code, problem.message, span, { source: text, ...(problem.hint === undefined ? {} : { hint: problem.hint }) });
  // renderError's own first lines say the message and `--> line:col`; the header here says both, with the file.
  const body = renderError(error, { color }).split('\n').slice(2);
  const where = problem.query === undefined || problem.query === problem.file.split('/').pop() ? '' : ` (${problem.query})`;
  return [`${problem.file}:${problem.line}:${problem.column}: ${problem.severity}[${problem.code}]: ${problem.message}${where}`, ...body].join('\n');
}

function renderConfigProblem(problem: CheckProblem): string {
  const lines = [`${problem.file}:${problem.line}:${problem.column}: error[${problem.code}]: ${problem.message}`];
  if (problem.hint !== undefined) lines.push(`  = hint: ${problem.hint}`);
  return lines.join('\n');
}

const skipped = new Set(['node_modules', '.git', 'dist', 'coverage', '.cache']);

/** The files to check: files as named (any YAML, TOML or JSON file is a config), folders searched for the kinds ckql knows. */
async function collect(names: readonly string[], cwd: string): Promise<{ path: string; kind: NonNullable<ReturnType<typeof documentKind>> }[]> {
  const out: { path: string; kind: NonNullable<ReturnType<typeof documentKind>> }[] = [];
  const walk = async (dir: string): Promise<void> => {
    const entries = await readdir(dir, { withFileTypes: true });
    for (const entry of entries.sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) {
        if (!skipped.has(entry.name) && !entry.name.startsWith('.')) await walk(path);
      } else {
        const kind = documentKind(path);
        if (kind !== undefined) out.push({ path, kind });
      }
    }
  };
  for (const name of names) {
    const path = resolve(cwd, name);
    let info;
    try {
      info = await stat(path);
    } catch {
      throw toolError('USAGE', [`no such file or folder: ${name}`]);
    }
    if (info.isDirectory()) await walk(path);
    else {
      const kind = documentKind(path, true);
      if (kind === undefined) {
        throw toolError('USAGE', [`${name}: not a .ckql script, a config file (.yaml, .yml, .toml, .json) or code (.ts, .js, .mjs, …)`]);
      }
      out.push({ path, kind });
    }
  }
  return out;
}

/** With no files named: the config file ckql would read. */
async function defaultFiles(options: CheckOptions, context: CliContext): Promise<{ path: string; kind: 'config' }[]> {
  const file = await findConfigFile({ ...(options.config === undefined ? {} : { configFile: options.config }), cwd: context.cwd, env: context.env });
  if (file === undefined) {
    throw toolError('USAGE', ['name the files or folders to check: ckql check queries/ ckql.config.yaml'], {
      hint: 'with no files, ckql check reads the config file ckql would use, and none was found',
    });
  }
  return [{ path: file, kind: 'config' }];
}

/** `--schema SOURCE`: a profile of the config, a portal URL, or data files and folders. */
async function schemaOf(
  spec: string,
  names: readonly string[],
  loadConfig: () => Promise<Config>,
  context: CliContext,
): Promise<SourceSchema> {
  const isUrl = /^https?:\/\//i.test(spec);
  let flags: { url?: string; profile?: string; data?: string[] };
  if (isUrl) flags = { url: spec };
  else {
    const exists = await stat(resolve(context.cwd, spec)).then(
      () => true,
      () => false,
    );
    flags = exists ? { data: [spec] } : { profile: spec };
  }
  const { spec: sourceSpec } = await selectSource(flags, { config: loadConfig, env: context.env, cwd: context.cwd }).catch((error: unknown) => {
    // Nothing at that path either: say so, not only that no profile has the name (a mistyped folder is no profile).
    if (!(error instanceof ToolError) || error.code !== 'UNKNOWN_PROFILE') throw error;
    const meant = error.hint?.startsWith('did you mean') === true ? `${error.hint} ` : '';
    throw toolError('USAGE', [`--schema ${JSON.stringify(spec)} is no profile, and no file or folder is there`], {
      hint: `${meant}give a profile name, a data folder or file, or a portal URL (https://…)`,
    });
  });
  const source = await openSource(sourceSpec, { lazy: true });
  try {
    return await loadSchema(source, names);
  } finally {
    await source.close();
  }
}

/**
 * The queries written in a file, wherever ckql reads them: a `.ckql`
 * script (the whole text), a config file (each named query, with its
 * declared parameters and profile), or code (each `ckql\`…\`` template in
 * TypeScript or JavaScript). Each query comes with a map from its offsets to
 * the file's, so what the language service says about the query lands on
 * the right line and column of the file. Shared by `ckql check` and the
 * language server.
 */
import { basename, extname } from 'node:path';
import { isMap, isScalar, LineCounter, parseDocument, type Node as YamlNode } from 'yaml';
import type { ParamValue } from '../compile/bind.js';
import { lineOfPath } from '../config/locate.js';
import { configFromText, formatOf } from '../config/read.js';
import type { Config } from '../config/types.js';
import { ToolError } from '../errors.js';
import { lineAndColumn, lineStartsOf } from '../diagnostics.js';
import type { Span } from '../span.js';

export type DocumentKind = 'script' | 'config' | 'code';

/** Names a config file may have (the search's, and the user-wide ones). */
const configNames = /^(?:ckql\.config\.(?:ya?ml|json|toml)|\.ckqlrc(?:\.(?:ya?ml|json|toml))?|config\.(?:ya?ml|json|toml))$/;

/**
 * What a file holds, by its name: `.ckql` scripts, config files (by the
 * names ckql searches for, or any `.yaml`/`.yml`/`.toml`/`.json` when
 * `anyConfig`), and code (`.ts`, `.mts`, `.cts`, `.tsx`, `.js`, `.mjs`, `.cjs`, `.jsx`).
 */
export function documentKind(file: string, anyConfig = false): DocumentKind | undefined {
  const name = basename(file);
  const extension = extname(name).toLowerCase();
  if (extension === '.ckql') return 'script';
  if (['.ts', '.mts', '.cts', '.tsx', '.js', '.mjs', '.cjs', '.jsx'].includes(extension) && !name.endsWith('.d.ts')) return 'code';
  if (configNames.test(name)) return name.startsWith('config.') && !anyConfig ? undefined : 'config';
  if (anyConfig && ['.yaml', '.yml', '.toml', '.json'].includes(extension)) return 'config';
  return undefined;
}

/** One query as written in a file. */
export interface EmbeddedQuery {
  /** how a person finds it: `queries.by-subject`, `ckql template`, or the file's name for a script */
  readonly label: string;
  /** the text the language service reads */
  readonly text: string;
  /** the file offset of each offset of `text` (one more entry than `text` has characters) */
  readonly offsets: readonly number[];
  /** a named query's declared parameters, with their defaults (undefined for those without one) */
  readonly params?: Readonly<Record<string, ParamValue | undefined>>;
  /** the profile a named query runs on, when it names one */
  readonly profile?: string;
  /** for a template: where each `${…}` stands in `text`, by its 1-based position among the values */
  readonly placeholders?: readonly { readonly name: string; readonly span: Span; readonly position: number }[];
}

export interface DocumentQueries {
  readonly queries: readonly EmbeddedQuery[];
  /** the config, when the file is one and it is valid */
  readonly config?: Config;
  /** why a config file could not be read (its line, when known), instead of its queries */
  readonly problem?: { readonly message: string; readonly code: string; readonly line?: number; readonly hint?: string };
}

/**
 * The queries of a file's text.
 * @example
 * queriesOf('q.ts', 'const q = ckql`from courses where subject = ${s}`;').queries[0].text
 * // → 'from courses where subject = $__p0'
 */
export function queriesOf(file: string, text: string, kind: DocumentKind | undefined = documentKind(file, true)): DocumentQueries {
  switch (kind) {
    case 'script':
      return { queries: [{ label: basename(file), text, offsets: identity(text.length) }] };
    case 'config':
      return configQueries(file, text);
    case 'code':
      return { queries: templateQueries(text) };
    default:
      return { queries: [] };
  }
}

/**
 * A diagnostic's message and hint in the words of the file's author: in a
 * template, `$__p0` is the value interpolated as `${…}` number 1, and a
 * syntax error at one says why a value cannot stand there (as the `ckql`
 * tag itself says at run time).
 */
export function authorsWords(query: EmbeddedQuery, diagnostic: { readonly span: Span; readonly message: string; readonly hint?: string; readonly code: string }): { message: string; hint?: string } {
  const placeholders = query.placeholders ?? [];
  if (placeholders.length === 0) return { message: diagnostic.message, ...(diagnostic.hint === undefined ? {} : { hint: diagnostic.hint }) };
  const rename = (words: string): string => {
    let out = words;
    for (const p of placeholders) {
      out = out
        .replaceAll(`the parameter $${p.name}`, `the value interpolated as \${…} number ${p.position}`)
        .replaceAll(`parameter $${p.name}`, `the value interpolated as \${…} number ${p.position}`)
        .replaceAll(`$${p.name}`, '${…}');
    }
    return out;
  };
  const at = placeholders.find((p) => p.span.start < diagnostic.span.end && diagnostic.span.start < p.span.end);
  const syntax = diagnostic.code === 'UNEXPECTED_TOKEN' || diagnostic.code === 'UNEXPECTED_END_OF_INPUT';
  const extra = at !== undefined && syntax
    ? `this is the value interpolated as \${…} number ${at.position}; an interpolated value is always a value, so field names and keywords must be written in the template text`
    : undefined;
  const hint = [diagnostic.hint === undefined ? undefined : rename(diagnostic.hint), extra].filter((part) => part !== undefined).join('; ');
  return { message: rename(diagnostic.message), ...(hint === '' ? {} : { hint }) };
}

/** Maps a span of a query to the file. */
export function fileSpan(query: EmbeddedQuery, span: Span): Span {
  const at = (offset: number): number => query.offsets[Math.min(Math.max(0, offset), query.offsets.length - 1)]!;
  const start = at(span.start);
  // The end of a non-empty span is just past its last character.
  const end = span.end > span.start ? at(span.end - 1) + 1 : start;
  return { start, end: Math.max(start, end) };
}

/** The query offset at a file offset, when the file offset lies in the query. */
export function queryOffset(query: EmbeddedQuery, fileOffset: number): number | undefined {
  const offsets = query.offsets;
  if (offsets.length === 0 || fileOffset < offsets[0]! || fileOffset > offsets[offsets.length - 1]!) return undefined;
  let best = 0;
  for (let i = 0; i < offsets.length; i++) if (offsets[i]! <= fileOffset) best = i;
  return best;
}

function identity(length: number): number[] {
  return Array.from({ length: length + 1 }, (_, i) => i);
}

// ---------------------------------------------------------------------------
// Aligning a value with the source text it was read from

/** What an escape at `at` (a backslash) stands for, and how long it is; for JSON, YAML, TOML and JS strings. */
function escapeAt(source: string, at: number): { readonly text: string; readonly length: number } | undefined {
  const next = source.charAt(at + 1);
  const simple: Record<string, string> = { n: '\n', t: '\t', r: '\r', b: '\b', f: '\f', v: '\v', '0': '\0', e: '\x1b', a: '\x07', _: '\u00a0', N: '\u0085' };
  if (next in simple) return { text: simple[next]!, length: 2 };
  const hex = (digits: number): { text: string; length: number } | undefined => {
    const code = source.slice(at + 2, at + 2 + digits);
    return /^[0-9a-fA-F]+$/.test(code) && code.length === digits ? { text: String.fromCodePoint(Number.parseInt(code, 16)), length: 2 + digits } : undefined;
  };
  if (next === 'x') return hex(2);
  if (next === 'u') {
    const braced = /^\{([0-9a-fA-F]{1,6})\}/.exec(source.slice(at + 2));
    if (braced !== null) return { text: String.fromCodePoint(Number.parseInt(braced[1]!, 16)), length: 3 + braced[1]!.length + 1 };
    return hex(4);
  }
  if (next === 'U') return hex(8);
  if (next === '') return undefined;
  return { text: next, length: 2 };
}

/**
 * The source offset of each character of `value`, read from `source`
 * starting at `from` (a string as written: quotes, escapes, indentation,
 * folded lines). Each character is found at the next place the source
 * gives it, as itself, as an escape, or as a line break folded to a space;
 * what the source has in between (indentation, quotes) is skipped.
 */
export function align(value: string, source: string, from: number, to: number = source.length): number[] {
  const offsets: number[] = [];
  let j = from;
  for (let i = 0; i < value.length; ) {
    const code = value.codePointAt(i)!;
    const char = String.fromCodePoint(code);
    let k = j;
    let found: { at: number; next: number } | undefined;
    while (k < to && found === undefined) {
      if (source.startsWith(char, k)) found = { at: k, next: k + char.length };
      else if (source.charAt(k) === '\\') {
        const escape = escapeAt(source, k);
        if (escape !== undefined && escape.text === char) found = { at: k, next: k + escape.length };
        else k += escape?.length ?? 1;
      } else if ((char === ' ' || char === '\n') && (source.charAt(k) === '\n' || source.charAt(k) === '\r')) {
        found = { at: k, next: k + 1 };
      } else k++;
    }
    const at = found?.at ?? Math.min(j, to);
    for (let n = 0; n < char.length; n++) offsets.push(at);
    j = found?.next ?? j;
    i += char.length;
  }
  offsets.push(Math.min(j, to));
  return offsets;
}

// ---------------------------------------------------------------------------
// Config files

function configQueries(file: string, text: string): DocumentQueries {
  let config: Config;
  try {
    config = configFromText(file, text);
  } catch (error) {
    if (!(error instanceof ToolError)) throw error;
    return {
      queries: [],
      problem: {
        code: error.code,
        message: error.message,
        ...(error.line === undefined ? {} : { line: error.line }),
        ...(error.hint === undefined ? {} : { hint: error.hint }),
      },
    };
  }
  const format = formatOf(file);
  const queries: EmbeddedQuery[] = [];
  const yamlOffsets = format === 'toml' ? undefined : yamlOffsetsOf(text);
  const lines = lineStartsOf(text);
  for (const [name, named] of config.queries) {
    const params: Record<string, ParamValue | undefined> = {};
    for (const [key, value] of Object.entries(named.params)) params[key] = value as ParamValue;
    const offsets = yamlOffsets === undefined ? tomlOffsets(text, lines, name, named.query) : yamlOffsets(name, named.query);
    queries.push({
      label: `queries.${name}`,
      text: named.query,
      offsets: offsets ?? fallbackOffsets(text, lines, format, name, named.query.length),
      params,
      ...(named.profile === undefined ? {} : { profile: named.profile }),
    });
  }
  return { queries, config };
}

/**
 * YAML (and JSON, which YAML reads): each query's scalar node, aligned with
 * its source. The file is parsed once for all its queries (once per query
 * made 1,000 queries quadratic).
 */
function yamlOffsetsOf(text: string): (name: string, query: string) => number[] | undefined {
  const document = parseDocument(text, { lineCounter: new LineCounter() });
  const queries = isMap(document.contents) ? document.contents.get('queries', true) : undefined;
  const entries = new Map<string, unknown>();
  if (isMap(queries)) for (const item of queries.items) if (isScalar(item.key) && !entries.has(String(item.key.value))) entries.set(String(item.key.value), item.value);
  return (name, query) => yamlOffsets(text, entries.get(name), query);
}

function yamlOffsets(text: string, entry: unknown, query: string): number[] | undefined {
  let node: unknown = entry;
  if (isMap(node)) node = node.get('query', true);
  if (!isScalar(node)) return undefined;
  const range = (node as YamlNode).range;
  if (range === undefined || range === null) return undefined;
  return align(query, text, range[0], range[1]);
}

/** TOML: the string after `query =` (or `name =` under `[queries]`), aligned with its source. */
function tomlOffsets(text: string, lines: readonly number[], name: string, query: string): number[] | undefined {
  const line = lineOfPath(text, 'toml', ['queries', name, 'query']) ?? lineOfPath(text, 'toml', ['queries', name]);
  if (line === undefined) return undefined;
  const start = lines[line - 1] ?? lines[lines.length - 1]!;
  const equals = text.indexOf('=', start);
  if (equals < 0) return undefined;
  const open = /["']{1,3}/.exec(text.slice(equals));
  if (open === null) return undefined;
  const from = equals + open.index + (open[0].length === 3 ? 3 : 1);
  return align(query, text, from);
}

/** When the text cannot be found: every offset at the line of the query's key. */
function fallbackOffsets(text: string, lines: readonly number[], format: 'yaml' | 'json' | 'toml', name: string, length: number): number[] {
  const line = lineOfPath(text, format, ['queries', name, 'query']) ?? lineOfPath(text, format, ['queries', name]) ?? 1;
  const start = lines[line - 1] ?? lines[lines.length - 1]!;
  return new Array<number>(length + 1).fill(start);
}

// ---------------------------------------------------------------------------
// Code: ckql`…` tagged templates

/**
 * Every `ckql\`…\`` template in JavaScript or TypeScript source. A small
 * scanner, not a parser: it skips comments, strings and other templates
 * (with their `${…}`), and reads a template whose tag is the name `ckql`.
 * Each `${…}` becomes a parameter `$__p0`, `$__p1`, … as the tag itself
 * does (in parentheses after `in`), standing where the `${…}` stands.
 */
export function templateQueries(source: string): EmbeddedQuery[] {
  // One loop over an explicit stack of what is open (a template, the code of a `${…}` inside it), not recursion:
  // a file of templates nested thousands deep is read like any other, where a call per level overflowed the stack.
  type Template = { readonly kind: 'template'; chunkStart: number; readonly chunks?: Span[]; readonly holes?: Span[] };
  type Hole = { readonly kind: 'hole'; readonly start: number; depth: number };
  const out: EmbeddedQuery[] = [];
  const open: (Template | Hole)[] = [];
  const end = source.length;
  const lineEnd = (at: number): number => {
    const found = source.indexOf('\n', at);
    return found < 0 ? end : found;
  };
  const blockEnd = (at: number): number => {
    const found = source.indexOf('*/', at + 2);
    return found < 0 ? end : found + 2;
  };
  const skipString = (at: number): number => {
    const quote = source[at];
    let k = at + 1;
    while (k < end && source[k] !== quote && source[k] !== '\n') k += source[k] === '\\' ? 2 : 1;
    return k + 1;
  };
  /** A template closed (at its backtick, or at the end of the file): a `ckql` one is a query. */
  const closeTemplate = (template: Template, at: number): void => {
    template.chunks?.push({ start: template.chunkStart, end: at });
    if (template.chunks !== undefined) out.push(templateQuery(source, template.chunks, template.holes!, lineAndColumn(source, template.chunks[0]!.start).line));
  };
  /** A `${…}` closed: the template around it goes on after it. */
  const closeHole = (hole: Hole, at: number): void => {
    const template = open[open.length - 1] as Template;
    template.holes?.push({ start: hole.start, end: at });
    template.chunkStart = at;
  };

  let i = 0;
  while (i < end) {
    const top = open[open.length - 1];
    const char = source[i]!;
    if (top?.kind === 'template') {
      if (char === '\\') i += 2;
      else if (char === '`') {
        open.pop();
        closeTemplate(top, i);
        i++;
      } else if (char === '$' && source[i + 1] === '{') {
        top.chunks?.push({ start: top.chunkStart, end: i });
        open.push({ kind: 'hole', start: i, depth: 0 });
        i += 2;
      } else i++;
      continue;
    }
    // Code: the file's own, or inside a `${…}`.
    if (char === '/' && source[i + 1] === '/') i = lineEnd(i);
    else if (char === '/' && source[i + 1] === '*') i = blockEnd(i);
    else if (char === '"' || char === "'") i = skipString(i);
    else if (char === '`') {
      // Only a template in the file's own code may be a query; one inside a `${…}` is skipped with its holes.
      const tagged = top === undefined && /(?:^|[^A-Za-z0-9_$])ckql\s*$/.test(source.slice(Math.max(0, i - 40), i));
      open.push(tagged ? { kind: 'template', chunkStart: i + 1, chunks: [], holes: [] } : { kind: 'template', chunkStart: i + 1 });
      i++;
    } else if (top !== undefined && char === '{') {
      top.depth++;
      i++;
    } else if (top !== undefined && char === '}') {
      i++;
      if (top.depth > 0) top.depth--;
      else {
        open.pop();
        closeHole(top, i);
      }
    } else i++;
  }
  // A file that ends inside templates: each still open ends at the end of the file.
  for (let top = open.pop(); top !== undefined; top = open.pop()) {
    if (top.kind === 'hole') closeHole(top, end);
    else closeTemplate(top, end);
  }
  return out;
}

function templateQuery(source: string, chunks: readonly Span[], holes: readonly Span[], line: number): EmbeddedQuery {
  const raw = chunks.map((chunk) => source.slice(chunk.start, chunk.end));
  let prefix = '__p';
  while (raw.some((text) => text.includes(`$${prefix}`))) prefix = `_${prefix}`;
  let text = '';
  const offsets: number[] = [];
  const placeholders: { name: string; span: Span; position: number }[] = [];
  chunks.forEach((chunk, index) => {
    const cooked = cook(raw[index]!);
    const mapped = align(cooked, source, chunk.start, chunk.end);
    text += cooked;
    offsets.push(...mapped.slice(0, -1));
    const hole = holes[index];
    if (hole === undefined) return;
    const name = `${prefix}${index}`;
    const list = /(?:^|[^A-Za-z0-9_.:$`-])in\s*$/i.test(text);
    const next = raw[index + 1] ?? '';
    const start = text.length + (list ? 1 : 0);
    placeholders.push({ name, span: { start, end: start + name.length + 1 }, position: index + 1 });
    const placeholder = (list ? `($${name})` : `$${name}`) + (/^[A-Za-z0-9_.:-]/.test(next) ? ' ' : '');
    text += placeholder;
    for (let n = 0; n < placeholder.length; n++) offsets.push(n === 0 ? hole.start : hole.end - 1);
  });
  offsets.push(chunks.length > 0 ? chunks[chunks.length - 1]!.end : 0);
  return { label: `ckql template at line ${line}`, text, offsets, placeholders };
}

/** A template chunk as the tag receives it (`strings[i]`): escapes read, raw where one is invalid. */
function cook(raw: string): string {
  let out = '';
  for (let i = 0; i < raw.length; i++) {
    if (raw[i] !== '\\') {
      out += raw[i];
      continue;
    }
    const next = raw[i + 1] ?? '';
    if (next === '\n') {
      i++; // a line continuation
      continue;
    }
    const escape = escapeAt(raw, i);
    if (escape === undefined) return raw;
    out += escape.text;
    i += escape.length - 1;
  }
  return out;
}

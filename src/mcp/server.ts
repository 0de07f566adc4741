/**
 * `ckql mcp` (docs/mcp.md): ckql for AI assistants, as a Model Context
 * Protocol server on the official SDK. Its tools ask a portal whole
 * questions (joins, groups, expressions, unions, across sources) and
 * never hide a cut: every answer says how many records matched (or at
 * least how many), whether it is complete, and the requests it took.
 * Errors come back as tool errors an assistant can act on (the code, the
 * message, the caret line and the hint); tokens stay in the server.
 */
import { mkdirSync, readFileSync } from 'node:fs';
import { dirname, isAbsolute, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { McpServer, ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { queryResources } from '../ast.js';
import { datastoreTables, searchDatasets } from '../client/discovery.js';
import { readDictionary } from '../client/dictionary.js';
import type { DatastoreClient } from '../client/types.js';
import type { Config } from '../config/types.js';
import type { JsonValue, Row } from '../datastore/types.js';
import { renderError } from '../diagnostics.js';
import { DatastoreError, QueryError, ToolError, toolError } from '../errors.js';
import { diagnose } from '../language-service/diagnose.js';
import { lineAndColumn } from '../diagnostics.js';
import { explainText } from '../repl/explain.js';
import { parse } from '../syntax/parse.js';
import { splitSource } from '../compile/plan.js';
import { exportRecords } from '../session/export.js';
import { loadSchema, refusalInQuery } from '../session/schema.js';
import type { Source, SourceSpec } from '../session/source.js';
import { namesSources, otherSources } from '../session/sources.js';
import { withDeadline } from '../session/source.js';

/** What `ckql mcp` serves. */
export interface McpOptions {
  /** the source a resource written without `name:` is read from */
  readonly source: Source;
  /** the config's profiles: each is a source a query may name (`portal:resource`) and `find_datasets` may search */
  readonly config: Config;
  /** the profile `source` was opened from, if any */
  readonly profile?: string | undefined;
  /** opens a profile's source when a query first names it */
  readonly openSource: (spec: SourceSpec) => Promise<Source>;
  /** the only folder `export` writes into; without it `export` is refused */
  readonly exportDir?: string | undefined;
  /** the longest a tool may take, in ms; default 120 000 */
  readonly timeoutMs?: number | undefined;
  /** the most bytes of records a `query` answer holds (its JSON); default 200 000 */
  readonly maxBytes?: number | undefined;
  /** the version the server says it is */
  readonly version: string;
}

const DEFAULT_TIMEOUT_MS = 120_000;
const DEFAULT_MAX_BYTES = 200_000;
const DEFAULT_MAX_ROWS = 100;
const MOST_ROWS = 1_000;
const READ_ONLY = { readOnlyHint: true, openWorldHint: true } as const;

/** The language reference an assistant reads before writing a query (grammar/README.md, in the package). */
function languageReference(): string {
  for (const up of ['../../grammar/README.md', '../../../grammar/README.md']) {
    try {
      return readFileSync(fileURLToPath(new URL(up, import.meta.url)), 'utf8');
    } catch {
      // the next place: src/mcp/ and dist/lib/ sit at different depths
    }
  }
  return 'The ckql language reference (grammar/README.md) is not in this installation.';
}

/** A tool's answer: its text (what a model reads) and its structured content. */
function answer(text: string, structured: Record<string, unknown>): { content: { type: 'text'; text: string }[]; structuredContent: Record<string, unknown> } {
  return { content: [{ type: 'text', text }], structuredContent: structured };
}

/**
 * A failure as a tool error: the code, the message, the caret line under
 * the query and the hint, as the CLI prints them (renderError), never a
 * stack and never a token (errors hold none: docs/semantics.md).
 */
export function toolFailure(error: unknown, text?: string): { isError: true; content: { type: 'text'; text: string }[] } {
  const shown = error instanceof QueryError && error.source === undefined && text !== undefined
    ? new QueryError(error.code, error.message, error.span, {
      expected: error.expected,
      source: text,
      ...(error.found === undefined ? {} : { found: error.found }),
      ...(error.hint === undefined ? {} : { hint: error.hint }),
    })
    : error;
  const known = error instanceof QueryError || error instanceof DatastoreError || error instanceof ToolError;
  const rendered = known ? renderError(shown, { color: false }).trimEnd() : `error[INTERNAL]: ${error instanceof Error ? error.message : String(error)}`;
  return { isError: true, content: [{ type: 'text', text: rendered }] };
}

/**
 * The MCP server over `options.source` and the config's profiles. Connect
 * it to a transport (stdio, Streamable HTTP, or the SDK's in-memory pair).
 * @example
 * const server = createMcpServer({ source, config, openSource, version: '0.1.0' });
 * await server.connect(new StdioServerTransport());
 */
export function createMcpServer(options: McpOptions): McpServer {
  const server = new McpServer({ name: 'ckql', version: options.version }, { capabilities: { logging: {} } });
  const others = otherSources({ config: options.config, current: options.source, profile: options.profile, open: options.openSource });
  const timeout = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const clientFor = (text: string): DatastoreClient => (namesSources(parse(text)) ? others.client : options.source.client);
  /** The client a resource written `profile:resource` (or bare, the current source's) is read from, and its name there. */
  const readerOf = async (written: string): Promise<{ client: DatastoreClient; resource: string }> => {
    const { source, resource } = splitSource(written);
    if (source === undefined || source === others.current) return { client: options.source.client, resource };
    return { client: (await others.source(source)).client, resource };
  };
  /** Runs a tool's work under the client's cancel and the server's timeout; every failure is a tool error. */
  const guarded = async <T>(signal: AbortSignal, text: string | undefined, work: (signal: AbortSignal | undefined) => Promise<T>) => {
    try {
      return await withDeadline(timeout, signal, work);
    } catch (raw) {
      const error = (raw as { code?: unknown }).code === 'CKQL_BODY_DEADLINE'
        ? new DatastoreError('TIMEOUT', `the tool took longer than the server's timeout (${timeout / 1000} s; ckql mcp --timeout S)`)
        : raw;
      if (text !== undefined) {
        const told = await refusalInQuery(error, text, options.source).catch(() => undefined);
        if (told !== undefined) return toolFailure(told, text);
      }
      return toolFailure(error, text);
    }
  };

  server.registerTool(
    'find_datasets',
    {
      title: 'Find datasets',
      description:
        'Search the catalogue (CKAN package_search) of the current portal, or of one configured portal by name, or of every one ("*"). ' +
        'Each hit lists its DataStore resources with the "dataset/resource" name a query can read them by (from "dataset/resource").',
      inputSchema: {
        text: z.string().optional().describe('words to search for; leave out for the newest datasets'),
        portal: z.string().optional().describe('a configured portal\'s name, or "*" for every one; default the current source'),
        rows: z.number().int().min(1).max(100).optional().describe('how many datasets per portal (default 10)'),
      },
      outputSchema: {
        datasets: z.array(z.object({
          portal: z.string(),
          dataset: z.string(),
          title: z.string(),
          resources: z.array(z.object({ name: z.string(), query_name: z.string(), id: z.string(), datastore: z.boolean() })),
        })),
        count: z.number().describe('datasets found over the portals searched'),
      },
      annotations: { ...READ_ONLY, title: 'Find datasets' },
    },
    async ({ text, portal, rows }, extra) =>
      guarded(extra.signal, undefined, async (signal) => {
        const names = portal === undefined ? [others.current ?? 'current'] : portal === '*' ? others.names : [portal];
        const datasets: { portal: string; dataset: string; title: string; resources: { name: string; query_name: string; id: string; datastore: boolean }[] }[] = [];
        let count = 0;
        for (const name of names) {
          const source = portal === undefined || name === others.current ? options.source : await others.source(name);
          // Local data read lazily lists the files read so far: its catalogue is every file's.
          if (source.spec.kind === 'data') await source.listResources({ totals: true });
          const page = await searchDatasets(source.client, { ...(text === undefined ? {} : { text }), rows: rows ?? 10, ...(signal === undefined ? {} : { signal }) });
          count += page.count;
          const prefix = portal === undefined || name === others.current ? '' : `${name}:`;
          for (const found of page.datasets) {
            datasets.push({
              portal: name,
              dataset: found.name,
              title: found.title,
              resources: found.resources.map((r) => ({ name: r.name, query_name: `${prefix}${found.name}/${r.name}`, id: r.id, datastore: r.datastoreActive })),
            });
          }
        }
        const lines = datasets.map((d) => `${d.portal}: ${d.dataset} (${d.title})\n${d.resources.map((r) => `  ${r.datastore ? `from "${r.query_name}"` : `${r.name} (a file, not in the DataStore)`}`).join('\n')}`);
        return answer(`${count} datasets; ${datasets.length} shown\n${lines.join('\n')}`, { datasets, count });
      }),
  );

  server.registerTool(
    'describe_resource',
    {
      title: 'Describe a resource',
      description: 'The fields of a DataStore resource (types, the data dictionary\'s labels and notes), its record count, and a few sample values per field.',
      inputSchema: { resource: z.string().describe('an id, an alias, a "dataset/resource" name, or portal:resource') },
      outputSchema: {
        resource: z.string(),
        total: z.number().nullable(),
        fields: z.array(z.object({ id: z.string(), type: z.string(), label: z.string().optional(), notes: z.string().optional(), samples: z.array(z.unknown()) })),
      },
      annotations: { ...READ_ONLY, title: 'Describe a resource' },
    },
    async ({ resource }, extra) =>
      guarded(extra.signal, undefined, async (signal) => {
        const reader = await readerOf(resource);
        const dictionary = await readDictionary(reader.client, reader.resource, signal);
        const sample = await reader.client.search({ resource_id: dictionary.id, limit: 50 }, signal === undefined ? {} : { signal });
        const fields = dictionary.fields.map((f) => ({
          id: f.id,
          type: f.typeOverride ?? f.type,
          ...(f.label === undefined ? {} : { label: f.label }),
          ...(f.notes === undefined ? {} : { notes: f.notes }),
          samples: distinct(sample.records, f.id, 5),
        }));
        const lines = fields.map((f) => `  ${f.id} ${f.type}${f.label === undefined ? '' : ` "${f.label}"`}: ${f.samples.map((v) => JSON.stringify(v)).join(', ')}`);
        return answer(`${resource}: ${dictionary.total ?? 'an unknown number of'} records\n${lines.join('\n')}`, { resource, total: dictionary.total ?? null, fields });
      }),
  );

  server.registerTool(
    'query',
    {
      title: 'Run a ckql query',
      description:
        'Run a ckql query (see the ckql://language resource: from, where, select, group by, having, order by, limit, joins, expressions, windows, unions, portal:resource across portals). ' +
        'The answer holds at most max_rows records and says how many matched, whether it is complete, and the requests it took. Run check first when unsure of a query.',
      inputSchema: {
        query: z.string().describe('the ckql query, e.g. from courses group by subject select subject, count(*) as n order by n desc'),
        params: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])).optional().describe('values of $parameters'),
        max_rows: z.number().int().min(1).max(MOST_ROWS).optional().describe(`the most records to return (default ${DEFAULT_MAX_ROWS})`),
      },
      outputSchema: {
        records: z.array(z.record(z.string(), z.unknown())),
        returned: z.number(),
        matched: z.number().nullable().describe('records the query matches; null when not known'),
        at_least: z.number().describe('records known to match (the matched count when it is known)'),
        complete: z.boolean().describe('true when records holds every record the query gives'),
        cut: z.string().nullable().describe('why records stops short, if it does'),
        requests: z.number(),
      },
      annotations: { ...READ_ONLY, title: 'Run a ckql query' },
    },
    async ({ query, params, max_rows }, extra) =>
      guarded(extra.signal, query, async (signal) => {
        const client = clientFor(query);
        const maxRows = max_rows ?? DEFAULT_MAX_ROWS;
        const stream = await client.stream(query, { total: true, ...(params === undefined ? {} : { params }), ...(signal === undefined ? {} : { signal }) });
        const records: Row[] = [];
        let bytes = 2;
        let cut: string | null = null;
        let more = false;
        for await (const record of stream.records) {
          if (records.length >= maxRows) {
            more = true;
            cut = `max_rows (${maxRows})`;
            break;
          }
          const size = JSON.stringify(record).length + 1;
          if (bytes + size > (options.maxBytes ?? DEFAULT_MAX_BYTES)) {
            more = true;
            cut = `the byte budget (${options.maxBytes ?? DEFAULT_MAX_BYTES} bytes of JSON)`;
            break;
          }
          bytes += size;
          records.push(record);
        }
        const total = stream.total();
        const read = stream.read();
        const matched = total ?? null;
        const complete = !more && (matched === null ? read.more === false : records.length >= matched);
        const atLeast = matched ?? records.length + (more || read.more === true ? 1 : 0);
        const said = matched === null ? `at least ${atLeast} records match` : `${matched} records match`;
        const cutText = cut === null ? (complete ? '' : '; the query\'s own limit stops the answer before every match') : `; cut at ${cut}: ${matched === null ? 'more' : matched - records.length} not shown`;
        const header = `${said}; ${records.length} returned${cutText}; ${read.requests} requests`;
        return answer(`${header}\n${records.map((r) => JSON.stringify(r)).join('\n')}`, {
          records, returned: records.length, matched, at_least: atLeast, complete, cut, requests: read.requests,
        });
      }),
  );

  server.registerTool(
    'explain',
    {
      title: 'Explain a query',
      description: 'The plan of a query: what each portal is asked (pushed down) and what ckql finishes locally (joins, groups, expressions, windows, unions), without running it.',
      inputSchema: { query: z.string(), params: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])).optional() },
      outputSchema: { plan: z.string() },
      annotations: { ...READ_ONLY, title: 'Explain a query' },
    },
    async ({ query, params }, extra) =>
      guarded(extra.signal, query, async (signal) => {
        const explained = await clientFor(query).explain(query, { ...(params === undefined ? {} : { params }), ...(signal === undefined ? {} : { signal }) });
        // `undefined`: the curl lines name no token variable, and no token is in them
        const plan = explainText(explained, undefined);
        return answer(plan, { plan });
      }),
  );

  server.registerTool(
    'check',
    {
      title: 'Check a query',
      description: 'Diagnostics of a query before it runs: each with its code, line and column, the text it covers, a hint and did-you-mean fixes (unknown fields and resources are looked up in the source).',
      inputSchema: { query: z.string() },
      outputSchema: {
        ok: z.boolean(),
        diagnostics: z.array(z.object({
          code: z.string(), severity: z.string(), message: z.string(), line: z.number(), column: z.number(), text: z.string(), hint: z.string().optional(), fixes: z.array(z.string()),
        })),
      },
      annotations: { ...READ_ONLY, title: 'Check a query' },
    },
    async ({ query }, extra) =>
      guarded(extra.signal, undefined, async (signal) => {
        let names: string[] = [];
        try {
          names = queryResources(parse(query));
        } catch {
          // a syntax error: diagnose says where
        }
        const schema = await loadSchema(options.source, names.filter((name) => !name.includes(':')), signal);
        const diagnostics = diagnose(query, { resources: schema.resources, allResources: schema.allResources }).map((d) => {
          const at = lineAndColumn(query, d.span.start);
          return {
            code: d.code,
            severity: d.severity,
            message: d.message,
            line: at.line,
            column: at.column,
            text: query.slice(d.span.start, d.span.end),
            ...(d.hint === undefined ? {} : { hint: d.hint }),
            fixes: d.fixes.flatMap((fix) => fix.edits.map((edit) => edit.text)),
          };
        });
        const ok = !diagnostics.some((d) => d.severity === 'error');
        const lines = diagnostics.map((d) => `${d.severity}[${d.code}] ${d.line}:${d.column} ${JSON.stringify(d.text)}: ${d.message}${d.hint === undefined ? '' : ` (hint: ${d.hint})`}`);
        return answer(ok && lines.length === 0 ? 'no problems found' : lines.join('\n'), { ok, diagnostics });
      }),
  );

  server.registerTool(
    'export',
    {
      title: 'Export a result to a file',
      description: 'Write every record of a resource or a query into a file under the export folder the user gave the server (--export-dir), as csv or ndjson.',
      inputSchema: {
        query: z.string().describe('a resource, or a ckql query'),
        file: z.string().describe('a file name inside the export folder, e.g. math.csv'),
        format: z.enum(['csv', 'ndjson']).optional(),
      },
      outputSchema: { file: z.string(), records: z.number(), requests: z.number() },
      annotations: { readOnlyHint: false, destructiveHint: false, openWorldHint: true, title: 'Export a result to a file' },
    },
    async ({ query, file, format }, extra) =>
      guarded(extra.signal, query.trimStart().startsWith('from') ? query : undefined, async (signal) => {
        const target = insideExportDir(options.exportDir, file);
        mkdirSync(dirname(target), { recursive: true });
        const summary = await exportRecords({
          client: clientFor(query.trimStart().startsWith('from') ? query : `from ${JSON.stringify(query)}`),
          input: query,
          file: target,
          ...(format === undefined ? {} : { format }),
          fieldsFile: false,
          ...(signal === undefined ? {} : { signal }),
        });
        const shown = relative(options.exportDir!, summary.file);
        return answer(`wrote ${summary.records} records to ${shown} (${summary.requests} requests)`, { file: shown, records: summary.records, requests: summary.requests });
      }),
  );

  server.registerResource('language', 'ckql://language', { title: 'The ckql language', description: 'The grammar and examples of ckql queries', mimeType: 'text/markdown' }, (uri) => ({
    contents: [{ uri: uri.href, mimeType: 'text/markdown', text: languageReference() }],
  }));

  // Each resource of the current source, and each profile's (as `profile:resource`): its dictionary and count, read when asked.
  const resourceNames = async (): Promise<string[]> => {
    const names: string[] = [];
    for (const name of others.names) {
      try {
        const source = name === others.current ? options.source : await others.source(name);
        const prefix = name === others.current ? '' : `${name}:`;
        // A portal lists what its `_table_metadata` holds (an alias where a table has one); local data, its files.
        const tables = source.spec.kind === 'data' ? undefined : await datastoreTables(source.client);
        const listed = tables === undefined ? (await source.listResources()).map((r) => r.alias ?? r.id) : tables.map((t) => t.aliases[0] ?? t.id);
        for (const resource of listed) names.push(`${prefix}${resource}`);
      } catch {
        // a profile that cannot be opened (an unset token, a portal down) lists nothing; describe_resource says why
      }
    }
    if (others.current === undefined) for (const resource of await options.source.listResources()) names.push(resource.alias ?? resource.id);
    return names;
  };
  server.registerResource(
    'resource',
    new ResourceTemplate('ckql://resources/{resource}', {
      list: async () => ({ resources: (await resourceNames()).map((name) => ({ uri: `ckql://resources/${encodeURIComponent(name)}`, name, mimeType: 'application/json' })) }),
    }),
    { title: 'A DataStore resource', description: 'A resource\'s fields (types, labels, notes) and record count, as describe_resource gives them', mimeType: 'application/json' },
    async (uri, variables) => {
      const name = decodeURIComponent(String(variables.resource));
      const reader = await readerOf(name);
      const dictionary = await readDictionary(reader.client, reader.resource);
      const text = JSON.stringify({ resource: name, id: dictionary.id, total: dictionary.total ?? null, fields: dictionary.fields.map((f) => ({ id: f.id, type: f.typeOverride ?? f.type, ...(f.label === undefined ? {} : { label: f.label }), ...(f.notes === undefined ? {} : { notes: f.notes }) })) }, null, 2);
      return { contents: [{ uri: uri.href, mimeType: 'application/json', text }] };
    },
  );

  server.registerPrompt(
    'answer_from_portal',
    { title: 'Answer a question from a portal', description: 'Find the data, check the query, run it, and say how complete the answer is', argsSchema: { question: z.string() } },
    ({ question }) => ({
      messages: [{
        role: 'user',
        content: {
          type: 'text',
          text: [
            `Answer this question from the open-data portal: ${question}`,
            'Steps: call find_datasets to find the data; describe_resource on the resources that look right; write a ckql query (the ckql://language resource has the grammar);',
            'call check on it and correct what it reports; run it with query; say how many records matched and whether the answer was complete (a cut answer says so).',
          ].join('\n'),
        },
      }],
    }),
  );

  server.server.onclose = () => void others.close().catch(() => undefined);
  return server;
}

/** A file inside the export folder, or USAGE saying why not (none given, or outside it). */
function insideExportDir(exportDir: string | undefined, file: string): string {
  if (exportDir === undefined) {
    throw toolError('USAGE', ['export writes only into a folder the user names when starting the server, and none was given'], { hint: 'start it with ckql mcp --export-dir DIR' });
  }
  const target = resolve(exportDir, file);
  const inside = relative(exportDir, target);
  if (inside === '' || inside.startsWith('..') || isAbsolute(inside)) {
    throw toolError('USAGE', [`${JSON.stringify(file)} is outside the export folder`], { hint: 'give a file name inside it, e.g. result.csv' });
  }
  return target;
}

/** Up to `most` distinct values of a field among records, nulls left out. */
function distinct(records: readonly Row[], field: string, most: number): JsonValue[] {
  const seen = new Map<string, JsonValue>();
  for (const record of records) {
    const value = record[field];
    if (value === null || value === undefined) continue;
    const key = JSON.stringify(value);
    if (!seen.has(key)) seen.set(key, value as JsonValue);
    if (seen.size >= most) break;
  }
  return [...seen.values()];
}

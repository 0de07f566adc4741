/**
 * The dot commands: one table of name, usage, help line, the words its
 * argument may be (for completion) and what it does. Each returns the text
 * to print; errors are thrown and rendered by the caller like any other.
 */
import { parseTarget } from '../compile/plan.js';
import { isAbsolute, resolve } from 'node:path';
import { withDatastoreTables, type SourceSpec } from '../session/source.js';
import { didYouMean } from '../session/nearest.js';
import { readListedValue, refuseUnknownParams } from '../session/params.js';
import type { Params } from '../compile/bind.js';
import { DatastoreError, ToolError, isUnknownResource, toolError } from '../errors.js';
import { outputFormats, parseOutputFormat } from '../output/format-records.js';
import { truncate } from '../output/table/layout.js';
import { countText } from '../output/count-text.js';
import type { Session } from './session.js';
import type { DatastoreClient } from '../client/types.js';
import { readDictionary } from '../client/dictionary.js';
import { allDatasets, datastoreTables, searchDatasets } from '../client/discovery.js';
import type { DatasetSummary } from '../client/discovery.js';
import { resourceName } from '../client/resource-names.js';
import { datasetsText } from '../output/datasets.js';
import { valueText } from './complete.js';
import { lexAll } from '../language-service/lex.js';
import { shortNotes } from '../output/dictionary.js';
import type { renderInfoTable as RenderInfoTableFunction } from '../output/table/render.js';

type RenderInfoTable = typeof RenderInfoTableFunction;

/** The info table, with ink loaded on first use. */
async function renderInfoTable(...args: Parameters<RenderInfoTable>): Promise<string> {
  const render = await import('../output/table/render.js');
  return render.renderInfoTable(...args);
}

export interface CommandIo {
  /** aborted by Ctrl-C while the command runs */
  readonly signal: AbortSignal;
}

export interface DotCommand {
  readonly name: string;
  /** argument syntax shown by `.help`, e.g. `on|off` */
  readonly usage: string;
  readonly help: string;
  /** what the argument may be, for Tab; undefined for free text */
  words?(session: Session): Promise<readonly string[]>;
  run(session: Session, argument: string, io: CommandIo): Promise<string | undefined>;
}

const onOff = async (): Promise<readonly string[]> => ['on', 'off'];

/** `on`/`off` (also `true`/`false`, `1`/`0`); empty shows the current state. */
function readSwitch(command: string, argument: string): boolean | undefined {
  const word = argument.trim().toLowerCase();
  if (word === '') return undefined;
  if (['on', 'true', '1', 'yes'].includes(word)) return true;
  if (['off', 'false', '0', 'no'].includes(word)) return false;
  throw toolError('USAGE', [`.${command} takes on or off, found ${JSON.stringify(argument.trim())}`]);
}

/**
 * `.max-scan N|default`, `.max-join-rows N|default`: a whole number of 1 or
 * more, or `default` (undefined); nothing given changes nothing. The
 * source's client and a language client beside it read the same setting.
 */
function setBound(session: Session, argument: string, command: string, unit: string, set: (client: DatastoreClient, max: number | undefined) => void): void {
  const text = argument.trim();
  if (text === '') return;
  const max = Number(text);
  if (text !== 'default' && (!/^\d+$/.test(text) || !Number.isSafeInteger(max) || max < 1)) {
    throw toolError('USAGE', [`.${command} takes a whole number of ${unit}, 1 or more, or default; found ${JSON.stringify(text)}`]);
  }
  set(session.source.client, text === 'default' ? undefined : max);
  if (session.client !== session.source.client) set(session.client, text === 'default' ? undefined : max);
}

function state(on: boolean): string {
  return on ? 'on' : 'off';
}

/**
 * `.connect` argument: a URL (http or https; the token, as for `--url`,
 * from `CKQL_TOKEN`) or a local path.
 * @example sourceSpecFor('examples/data') // { kind: 'data', paths: ['/…/examples/data'] }
 */
export function sourceSpecFor(argument: string, cwd: string = process.cwd(), env: NodeJS.ProcessEnv = process.env): SourceSpec {
  const text = argument.trim();
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):\/\//.exec(text)?.[1];
  if (scheme !== undefined && !/^https?$/i.test(scheme)) {
    throw toolError('USAGE', [`.connect takes an http(s) URL or a local path, found a ${scheme}: URL`], {
      hint: 'for example .connect https://data.example.org or .connect ./data',
    });
  }
  if (/^https?:\/\//i.test(text)) {
    const token = env.CKQL_TOKEN;
    return { kind: 'url', url: text, ...(token === undefined || token === '' ? {} : { token }) };
  }
  return { kind: 'data', paths: [isAbsolute(text) ? text : resolve(cwd, text)] };
}

/**
 * `k=v` words after `.run NAME`; values read like query literals (`5`,
 * `true`, `"text"`, or text as typed).
 */
export function readRunParams(words: readonly string[]): Params {
  const params = Object.create(null) as Record<string, Params[string]>;
  for (const word of words) {
    const equals = word.indexOf('=');
    const name = (equals < 0 ? word : word.slice(0, equals)).replace(/^\$/, '');
    if (equals < 0 || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) {
      throw toolError('USAGE', [`.run expects name=value after the query name, found ${JSON.stringify(word)}`], {
        hint: 'for example .run active-by-subject subject=math',
      });
    }
    if (Object.hasOwn(params, name)) throw toolError('USAGE', [`.run: ${name} is given twice; give each parameter once`]);
    params[name] = readListedValue(word.slice(equals + 1), `.run: ${name}`);
  }
  return params;
}

/** A resource typed with or without quotes: `.fields "air-quality/measurements 2023"`. */
function unquoted(text: string): string {
  return /^"(?:[^"\\]|\\.)*"$/.test(text) ? (JSON.parse(text) as string) : text;
}

/**
 * Splits `a b="x y" c='z w' d=(1, 2)` into words: quotes (double or single,
 * as in a query) and a parenthesised list keep their spaces and stay part of
 * the word, so `.run` takes every value `--param` takes.
 */
function words(text: string): string[] {
  return [...text.matchAll(WORD)].map((match) => match[0]);
}

const QUOTED = String.raw`"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'`;
// a quote with no closing one is a character of its word (`name=O'Brien`)
const WORD = new RegExp(String.raw`(?:[^\s"'(]+|${QUOTED}|\((?:[^)"']|${QUOTED})*\)?|["'])+`, 'g');

export const dotCommands: readonly DotCommand[] = [
  {
    name: 'help',
    usage: '',
    help: 'show this help',
    run: async (session) => helpText(session),
  },
  {
    name: 'resources',
    usage: '',
    help: 'list the resources (aliases, ids, record counts)',
    run: async (session, _, io) => {
      const known = await session.resources(true);
      // A portal: also every table its _table_metadata lists, where anyone may read it.
      const resources = session.source.spec.kind === 'url' ? withDatastoreTables(known, await datastoreTables(session.client, io.signal)) : known;
      if (resources.length === 0) return 'no resources known yet: a portal lists the ones you have queried';
      const table = await renderInfoTable(
        ['alias', 'id', 'records'],
        resources.map((r) => [r.alias ?? '', r.id, r.unreadable !== undefined ? 'unreadable' : r.total === undefined ? '' : String(r.total)]),
        { width: session.width(), color: session.color, numeric: [2] },
      );
      // Why a file could not be read, under the table: the others are listed and served all the same.
      const problems = resources.flatMap((r) => (r.unreadable === undefined ? [] : [session.renderFailure(r.unreadable)]));
      return [table, ...problems].join('\n');
    },
  },
  {
    name: 'fields',
    usage: '[resource]',
    help: 'the fields of a resource: types, label, notes, type_override; the record count (default: the last queried)',
    words: async (session) => (await session.resources().catch(() => [])).map((r) => r.alias ?? r.id),
    run: async (session, argument, io) => {
      const resource = argument.trim() === '' ? session.lastResource : unquoted(argument.trim());
      if (resource === undefined) {
        throw toolError('USAGE', ['.fields needs a resource until a query has run'], { hint: 'for example .fields courses' });
      }
      let dictionary;
      try {
        dictionary = await readDictionary(session.client, resource, io.signal);
      } catch (error) {
        if (!(error instanceof DatastoreError && isUnknownResource(error))) throw error;
        return session.renderFailure(error, io.signal, await session.resourceHint(resource));
      }
      const described = dictionary.fields.some((f) => f.label !== undefined || f.notes !== undefined || f.typeOverride !== undefined);
      const count = dictionary.total === undefined ? '' : `, ${countText(dictionary.total, 'record')}`;
      return renderInfoTable(
        described ? ['field', 'type', 'label', 'notes', 'type_override'] : ['field', 'type'],
        dictionary.fields.map((field) =>
          described ? [field.id, field.type, field.label ?? '', field.notes === undefined ? '' : shortNotes(field.notes), field.typeOverride ?? ''] : [field.id, field.type],
        ),
        { width: session.width(), color: session.color, note: `${countText(dictionary.fields.length, 'field')} of ${resource}${count}` },
      );
    },
  },
  {
    name: 'datasets',
    usage: '[words] [org:NAME] [--all]',
    help: "search the portal's catalogue; resources complete as \"dataset/resource\" afterwards",
    run: async (session, argument, io) => {
      const words: string[] = [];
      let organization: string | undefined;
      let all = false;
      for (const word of argument.trim().split(/\s+/).filter((each) => each !== '')) {
        if (word === '--all') all = true;
        else if (word.startsWith('--')) {
          // an option mistyped would be searched for as a word, and find nothing
          throw toolError('USAGE', [`.datasets takes words, org:NAME and --all, found ${JSON.stringify(word)}`], { hint: didYouMean(word, ['--all']) ?? 'for example .datasets air quality org:city --all' });
        } else if (/^(org|organization):/.test(word)) {
          organization = word.slice(word.indexOf(':') + 1);
          if (organization === '') throw toolError('USAGE', ['.datasets org: needs the name of an organization'], { hint: 'for example .datasets org:city' });
        } else words.push(word);
      }
      const text = words.join(' ');
      const query = { ...(text === '' ? {} : { text }), ...(organization === undefined ? {} : { organization }), signal: io.signal };
      // Local data read as it is asked for: the catalogue needs every file read first.
      if (session.source.spec.kind === 'data') await session.source.listResources({ totals: true });
      let datasets: DatasetSummary[];
      let count: number;
      if (all) {
        datasets = [];
        for await (const dataset of allDatasets(session.client, query)) datasets.push(dataset);
        count = datasets.length;
      } else {
        const page = await searchDatasets(session.client, query);
        datasets = [...page.datasets];
        count = page.count;
      }
      session.rememberDatasets(datasets);
      const body = await datasetsText(datasets, session.settings.format, { color: session.color, width: session.width(), pretty: true });
      const example = datasets.flatMap((dataset) => dataset.resources.filter((r) => r.datastoreActive).map((r) => resourceName(dataset.name, r.name)))[0];
      const footer = `${datasets.length} of ${count} datasets${datasets.length < count ? ' (.datasets … --all for every one)' : ''}${example === undefined ? '' : ` — query one: from ${valueText(example) ?? example}`}`;
      return `${body.replace(/\n$/, '')}\n${session.color ? `\x1b[2m${footer}\x1b[22m` : footer}`;
    },
  },
  {
    name: 'format',
    usage: 'FORMAT',
    help: 'table, json, ndjson, csv or markdown',
    words: async () => outputFormats,
    run: async (session, argument) => {
      if (argument.trim() !== '') session.settings.format = parseOutputFormat(argument.trim());
      return `format ${session.settings.format}`;
    },
  },
  {
    name: 'limit',
    usage: 'N',
    help: 'records fetched when a query has no limit',
    run: async (session, argument) => {
      const text = argument.trim();
      if (text !== '') {
        const limit = Number(text);
        if (!/^\d+$/.test(text) || !Number.isSafeInteger(limit)) {
          throw toolError('USAGE', [`.limit takes a whole number of 0 or more, found ${JSON.stringify(text)}`]);
        }
        session.settings.limit = limit;
      }
      return `limit ${session.settings.limit} (a query's own limit wins)`;
    },
  },
  {
    name: 'max-scan',
    usage: 'N|default',
    help: 'the most records a plan may read to finish a query itself (default 100000)',
    words: async () => ['default'],
    run: async (session, argument) => {
      setBound(session, argument, 'max-scan', 'records', (client, max) => client.setMaxScan(max));
      return `max-scan ${session.client.maxScan} (records a plan may read)`;
    },
  },
  {
    name: 'max-join-rows',
    usage: 'N|default',
    help: 'the most rows a join may give; one past it is refused before it runs (default 10000000)',
    words: async () => ['default'],
    run: async (session, argument) => {
      setBound(session, argument, 'max-join-rows', 'rows', (client, max) => client.setMaxJoinRows(max));
      return `max-join-rows ${session.client.maxJoinRows} (rows a join may give)`;
    },
  },
  {
    name: 'timing',
    usage: 'on|off',
    help: 'show how long each query took',
    words: onOff,
    run: async (session, argument) => {
      session.settings.timing = readSwitch('timing', argument) ?? session.settings.timing;
      return `timing ${state(session.settings.timing)}`;
    },
  },
  {
    name: 'explain',
    usage: 'on|off',
    help: 'show request JSON, GET URL and curl',
    words: onOff,
    run: async (session, argument) => {
      session.settings.explain = readSwitch('explain', argument) ?? session.settings.explain;
      return `explain ${state(session.settings.explain)}`;
    },
  },
  {
    name: 'target',
    usage: 'ckan-2.11|ckan-2.12|sql|auto',
    help: "the portal's dialect; local data answers as that CKAN",
    words: async () => ['ckan-2.11', 'ckan-2.12', 'sql', 'auto'],
    run: async (session, argument) => {
      const word = argument.trim();
      if (word !== '') {
        const target = word === 'auto' ? undefined : parseTarget(word);
        if (word !== 'auto' && target === undefined) {
          throw toolError('USAGE', [`.target takes ckan-2.11, ckan-2.12, sql or auto, not ${JSON.stringify(word)}`]);
        }
        // Local data is answered as that CKAN from now on; sql is refused where the engine runs no SQL.
        try {
          await session.source.setTarget(target);
        } catch (error) {
          throw target === 'sql' ? sqlNeedsAnEngine(session, error) : error;
        }
        if (session.client !== session.source.client) session.client.setTarget(target);
      }
      const target = session.client.target;
      if (target !== undefined) return `target ${target}`;
      // Local data with no target: its engine answers each query whole, with nothing paged or sent.
      if (session.source.spec.kind === 'data') return 'target auto (local data: its engine answers whole queries; a target answers them as that CKAN would)';
      return 'target auto (not yet asked)';
    },
  },
  {
    name: 'lang',
    usage: 'LANG|none',
    help: 'language segment of the portal URL (/de/api/…)',
    words: async () => ['en', 'de', 'none'],
    run: async (session, argument) => {
      const word = argument.trim();
      if (word !== '') {
        if (word !== 'none' && !/^[A-Za-z][A-Za-z0-9_-]*$/.test(word)) {
          throw toolError('USAGE', [`.lang takes a language segment such as en or de, or none, found ${JSON.stringify(word)}`]);
        }
        // Local data is answered by the server API in the process, under /en and /de only; a portal knows its own.
        if (session.source.spec.kind === 'data' && !['en', 'de', 'none'].includes(word)) {
          throw toolError('USAGE', [`.lang ${word}: local data is served under /en and /de only`], { hint: '.lang en, .lang de or .lang none' });
        }
        session.setLanguage(word === 'none' ? undefined : word);
      }
      const url = session.client.prepare({ resource_id: '…' }).url.split('?')[0] ?? '';
      // Local data has no address: the path is the one its server API answers under, in this process.
      const where = session.source.spec.kind === 'data' ? `${new URL(url).pathname} (local data, answered in this process)` : url;
      return `language ${session.settings.language ?? 'none'}: ${where}`;
    },
  },
  {
    name: 'engine',
    usage: '',
    help: 'which engine answers: memory, pglite or postgres (or a portal)',
    run: async (session) => {
      const spec = session.source.spec;
      if (spec.kind === 'url') return `a portal answers: ${session.source.label}`;
      return `engine ${spec.engine ?? 'memory'}: ${session.source.label}`;
    },
  },
  {
    name: 'connect',
    usage: 'URL|DIR',
    help: 'query a portal (token from CKQL_TOKEN), or local files',
    run: async (session, argument, io) => {
      if (argument.trim() === '') {
        // Nothing is reconnected: say where queries go, and how to change that.
        return `queries go to ${session.source.label}; .connect URL or .connect DIR changes that (a portal's token from CKQL_TOKEN)`;
      }
      const source = await session.connectTo(sourceSpecFor(argument), io.signal);
      const names = (await session.resources().catch(() => [])).map((r) => r.alias ?? r.id);
      return `connected to ${source.label}${names.length === 0 ? '' : `: ${names.join(', ')}`}`;
    },
  },
  {
    name: 'queries',
    usage: '',
    help: 'list the named queries of the config file',
    run: async (session) => {
      const queries = [...session.config.queries.values()];
      if (queries.length === 0) {
        return session.config.file === undefined
          ? 'no config file found; named queries live under `queries:` in ckql.config.yaml'
          : `no queries in ${session.config.file}`;
      }
      const described = queries.some((q) => q.description !== undefined);
      return renderInfoTable(
        ['name', 'params', ...(described ? ['description'] : []), 'query'],
        queries.map((q) => [
          q.name,
          Object.entries(q.params).map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(' '),
          ...(described ? [q.description ?? ''] : []),
          oneLine(q.query),
        ]),
        { width: session.width(), color: session.color, note: session.config.file },
      );
    },
  },
  {
    name: 'run',
    usage: 'NAME [k=v…]',
    help: 'run a named query with parameters',
    words: async (session) => [...session.config.queries.keys()],
    run: async (session, argument, io) => {
      const [name, ...rest] = words(argument.trim());
      if (name === undefined) throw toolError('USAGE', ['.run needs the name of a query'], { hint: '.queries lists them' });
      const query = session.config.queries.get(name);
      if (query === undefined) {
        throw toolError('UNKNOWN_QUERY', [name], {
          hint: didYouMean(name, session.config.queries.keys()) ?? '.queries lists them',
        });
      }
      const given = readRunParams(rest);
      refuseUnknownParams(query.query, Object.keys(given), `.run ${name}`);
      const params = { ...query.params, ...given };
      const unboundHint = (param: string): string => `give it a value: .run ${name} ${param}=…`;
      if (query.profile === undefined) return session.run(query.query, { signal: io.signal, params, unboundHint });
      // The query's own profile, as `ckql run` uses it: opened for this run and closed after it.
      return session.runOn(query.profile, query.query, { signal: io.signal, params, unboundHint });
    },
  },
];

/**
 * `.target sql` on an engine that runs no SQL: the source's message, with
 * advice a person at the prompt can follow (the engine is chosen when ckql
 * starts; the REPL can change the target, not the engine).
 */
function sqlNeedsAnEngine(session: Session, error: unknown): unknown {
  if (!(error instanceof ToolError) || error.code !== 'USAGE') return error;
  const engine = session.source.spec.kind === 'data' ? (session.source.spec.engine ?? 'memory') : undefined;
  return toolError('USAGE', [error.message], {
    hint: `the ${engine ?? 'current'} engine answers datastore_search only: start ckql with --engine pglite for sql, or stay here with .target ckan-2.12 (operators and $or) or .target ckan-2.11`,
  });
}

function helpText(session: Session): string {
  const settings = session.settings;
  const now: Partial<Record<string, string>> = {
    target: session.client.target ?? 'auto (not yet asked)',
    format: settings.format,
    limit: String(settings.limit),
    timing: state(settings.timing),
    explain: state(settings.explain),
    lang: settings.language ?? 'none',
  };
  const rows = [
    ...dotCommands.map((c) => {
      const current = now[c.name];
      return [`.${c.name}${c.usage === '' ? '' : ` ${c.usage}`}`, `${c.help}${current === undefined ? '' : ` (now ${current})`}`] as const;
    }),
    ['.break', 'discard a statement being continued'] as const,
    ['.exit', 'leave (also Ctrl-D)'] as const,
  ];
  const width = session.width();
  const usageWidth = Math.max(...rows.map(([usage]) => usage.length)) + 2;
  const bold = (text: string): string => (session.color ? `\x1b[1m${text}\x1b[22m` : text);
  const lines = rows.map(([usage, help]) => bold(usage.padEnd(usageWidth)) + truncate(help, width - usageWidth - 1));
  return [
    'Type a query and press Enter:  from courses where subject = math limit 5',
    'A query that is not finished continues on the next line (`;` ends it).',
    'Tab completes keywords, resources, fields and values; Ctrl-C cancels.',
    '',
    ...lines,
    '',
    `Source: ${session.source.label}, target ${now.target ?? ''}`,
  ].map((line) => truncate(line, width - 1)).join('\n');
}

/**
 * A query on one line for a listing: its `--` comments left out (joined onto one line, a comment would
 * seem to comment out the rest) and each gap between tokens one space; strings keep their own spaces.
 * @example oneLine('from courses -- the catalogue\nwhere subject = $s') // 'from courses where subject = $s'
 */
export function oneLine(text: string): string {
  let out = '';
  let end = -1;
  for (const token of lexAll(text)) {
    if (token.type === 'Comment') continue;
    if (end >= 0) out += token.start > end ? ' ' : '';
    out += text.slice(token.start, token.end);
    end = token.end;
  }
  return out;
}

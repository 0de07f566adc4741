/**
 * The playground page: a query editor, its results, explain, share links,
 * history and saved queries. It talks only to the server that served it
 * (`/-/…`); a token never reaches it.
 */
import type { EditorView } from '@codemirror/view';
import type {
  DownloadFormat, ExplainAnswer, FacetAnswer, QueryAnswer, SourceEntry, SourcesAnswer, TargetChoice,
} from '../../src/server/play-protocol.js';
import { PlayError, call, download } from './api.js';
import { byId, fill, h } from './dom.js';
import { createEditor, errorRange, setText } from './editor.js';
import { renderExplain } from './explain.js';
import type { Lookup } from '../../src/language-service/complete.js';
import type { LanguageContext, ResourceSchema } from '../../src/language-service/context.js';
import type { Diagnostic } from '../../src/language-service/diagnose.js';
import { format } from '../../src/language-service/format.js';
import type { Target } from '../../src/compile/plan.js';
import type { FieldsAnswer, ResourcesAnswer, ValuesAnswer } from '../../src/server/play-protocol.js';
import { languageExtensions, parameterNames, recheck } from './language.js';
import { barColumns, facetView, resultBars, resultTable, rowsText } from './results.js';
import { readFragment, shareFragment } from './share.js';
import type { ShareState } from './share.js';
import { addHistory, clearHistory, deleteSaved, readHistory, readSaved, saveQuery } from './storage.js';
import type { HistoryEntry, SavedEntry } from './storage.js';

const DEFAULT_QUERY = 'from courses\nwhere stage in (active, survey)\norder by credits desc\nlimit 20';

/** What the page has learned of the chosen source, for the language service. */
interface Schema {
  resources: ResourceSchema[] | undefined;
  readonly samples: Map<string, readonly unknown[]>;
  /** lookups asked (or asking) already, so each is asked once */
  readonly asked: Map<string, Promise<boolean>>;
}

interface Page {
  schema: Schema;
  /** an error the server found at a span of the text it ran */
  serverProblem: { readonly text: string; readonly from: number; readonly to: number; readonly message: string } | undefined;
  sources: readonly SourceEntry[];
  source: SourceEntry | undefined;
  params: Record<string, string>;
  page: number;
  last: { answer: QueryAnswer; query: string; state: ShareState } | undefined;
  running: AbortController | undefined;
  view: EditorView;
}

const status = byId('status');
const sourceSelect = byId<HTMLSelectElement>('source');
const targetSelect = byId<HTMLSelectElement>('target');
const pageSizeSelect = byId<HTMLSelectElement>('page-size');
const tableRegion = byId('table-region');
const explainPanel = byId('explain-panel');
const explainButton = byId<HTMLButtonElement>('explain');

function say(text: string, kind: 'info' | 'error' = 'info'): void {
  status.textContent = text;
  status.classList.toggle('error', kind === 'error');
}

function nonce(): string {
  return document.querySelector('meta[name="ckql-style-nonce"]')?.getAttribute('content') ?? '';
}

/** The state that decides the result: what a share link and the history hold. */
function currentState(page: Page): ShareState {
  const query = page.view.state.doc.toString();
  const names = parameterNames(query);
  const params: Record<string, string> = {};
  for (const name of names) params[name] = page.params[name] ?? '';
  return {
    query,
    params,
    ...(page.source === undefined ? {} : { source: page.source.name }),
    target: targetSelect.value,
    pageSize: Number(pageSizeSelect.value),
    page: page.page,
  };
}

function queryInput(page: Page, state: ShareState): Record<string, unknown> {
  return {
    source: state.source,
    query: state.query,
    params: state.params,
    target: state.target as TargetChoice,
    pageSize: state.pageSize,
    page: state.page ?? 0,
  };
}

function showError(page: Page, error: unknown): void {
  if (error instanceof DOMException && error.name === 'AbortError') return;
  if (error instanceof PlayError) {
    const text = `${error.message}${error.hint === undefined ? '' : ` (${error.hint})`}`;
    say(text, 'error');
    if (error.span !== undefined) {
      page.serverProblem = { text: page.view.state.doc.toString(), ...errorRange(page.view, error.span), message: text };
      recheck(page.view);
    }
    return;
  }
  say(`the request failed: ${error instanceof Error ? error.message : String(error)}`, 'error');
}

function fillSources(page: Page): void {
  fill(sourceSelect, ...page.sources.map((source) => h('option', { value: source.name }, `${source.name} — ${source.label}${source.hasToken ? ' (with token)' : ''}`)));
}

function fillTargets(page: Page, chosen?: string): void {
  const targets = page.source?.targets ?? ['auto'];
  const automatic = page.source?.kind === 'data' ? 'none (the engine answers)' : 'auto (as the portal says)';
  fill(targetSelect, ...targets.map((target) => h('option', { value: target }, target === 'auto' ? automatic : target)));
  targetSelect.value = chosen !== undefined && targets.includes(chosen as TargetChoice) ? chosen : (page.source?.defaultTarget ?? targets[0] ?? 'auto');
}

function chooseSource(page: Page, name: string | undefined, target?: string): void {
  const before = page.source?.name;
  page.source = page.sources.find((source) => source.name === name) ?? page.source ?? page.sources[0];
  if (page.source !== undefined) sourceSelect.value = page.source.name;
  fillTargets(page, target);
  if (page.source?.name !== before) page.schema = emptySchema();
}

function emptySchema(): Schema {
  return { resources: undefined, samples: new Map(), asked: new Map() };
}

/** The language service's context: the chosen target and what is known of the source. */
function languageContext(page: Page): LanguageContext {
  const target = targetSelect.value;
  const { schema } = page;
  return {
    ...(target === 'ckan-2.11' || target === 'ckan-2.12' || target === 'sql' ? { target: target as Target } : {}),
    ...(schema.resources === undefined ? {} : { resources: schema.resources }),
    // A data source lists every resource it has; a portal only those configured or seen.
    allResources: page.source?.kind === 'data' && schema.resources !== undefined,
    samples: (resource, field) => schema.samples.get(JSON.stringify([resource, field])) as ReturnType<NonNullable<LanguageContext['samples']>>,
  };
}

/** Asks the server what the service lacked; each lookup once per source. */
async function learn(page: Page, lookups: readonly Lookup[]): Promise<boolean> {
  const source = page.source?.name;
  if (source === undefined) return false;
  const schema = page.schema;
  // Ask only about names the source has (when it says what it has): a name being typed is not a question.
  const resourceOf = (name: string): ResourceSchema | undefined => schema.resources?.find((r) => r.id === name || r.alias === name);
  const sensible = (lookup: Lookup): boolean => {
    if (lookup.kind === 'resources') return true;
    const resource = resourceOf(lookup.resource);
    if (resource === undefined) return page.source?.kind !== 'data' || schema.resources === undefined;
    if (lookup.kind === 'fields') return true;
    return resource.fields !== undefined && resource.fields.some((field) => field.id === lookup.field);
  };
  // Values of a field of a resource whose fields are not known yet: its fields first (a name being
  // typed may be no field, which the server would refuse); the next completion asks the values.
  const asked = lookups.map((lookup): Lookup => (lookup.kind === 'values' && resourceOf(lookup.resource)?.fields === undefined ? { kind: 'fields', resource: lookup.resource } : lookup));
  const results = await Promise.all(
    asked.filter(sensible).map((lookup) => {
      const key = JSON.stringify(lookup);
      let asked = schema.asked.get(key);
      if (asked === undefined) {
        asked = ask(schema, source, lookup).catch(() => false);
        schema.asked.set(key, asked);
      }
      return asked;
    }),
  );
  // A source changed meanwhile: what was learned belongs to the old one.
  return page.schema === schema && results.some((learned) => learned);
}

async function ask(schema: Schema, source: string, lookup: Lookup): Promise<boolean> {
  switch (lookup.kind) {
    case 'resources': {
      const answer = await call<ResourcesAnswer>('resources', { source });
      const known = schema.resources ?? [];
      schema.resources = [
        ...answer.resources.map((each): ResourceSchema => ({ ...(known.find((r) => r.id === each.id) ?? {}), ...each })),
        ...known.filter((r) => !answer.resources.some((each) => each.id === r.id)),
      ];
      return true;
    }
    case 'fields': {
      const answer = await call<FieldsAnswer>('fields', { source, resource: lookup.resource });
      const resources = schema.resources ?? [];
      const found = resources.find((r) => r.id === lookup.resource || r.alias === lookup.resource);
      const learned: ResourceSchema = { ...(found ?? { id: lookup.resource }), fields: answer.fields, ...(answer.total === undefined ? {} : { total: answer.total }) };
      schema.resources = found === undefined ? [...resources, learned] : resources.map((r) => (r === found ? learned : r));
      return true;
    }
    case 'values': {
      const answer = await call<ValuesAnswer>('values', { source, resource: lookup.resource, field: lookup.field });
      schema.samples.set(JSON.stringify([lookup.resource, lookup.field]), answer.values);
      return true;
    }
  }
}

/** The first problem the service sees, in words, beside the editor (the marks show where). */
function showProblems(text: string, diagnostics: readonly Diagnostic[]): void {
  const first = diagnostics.find((each) => each.severity === 'error' && each.incomplete !== true) ?? diagnostics.find((each) => each.severity === 'warning');
  const line = byId('problems');
  if (first === undefined) {
    line.textContent = '';
    return;
  }
  const before = text.slice(0, first.span.start).split('\n');
  const where = `line ${before.length}, column ${(before[before.length - 1] ?? '').length + 1}`;
  line.textContent = `${first.severity === 'error' ? 'Error' : 'Note'} at ${where}: ${first.message}${first.hint === undefined ? '' : ` (${first.hint})`}`;
}

/** The parameter inputs for the query's `$names`, keeping values typed before. */
function renderParams(page: Page): void {
  const names = parameterNames(page.view.state.doc.toString());
  const fieldset = byId('params');
  const list = byId('param-list');
  const focused = document.activeElement instanceof HTMLInputElement ? document.activeElement.dataset.param : undefined;
  fill(
    list,
    ...names.map((name) => {
      const input = h('input', { type: 'text', id: `param-${name}`, autocomplete: 'off', spellcheck: 'false' });
      input.dataset.param = name;
      input.value = page.params[name] ?? '';
      input.addEventListener('input', () => {
        page.params[name] = input.value;
      });
      input.addEventListener('keydown', (event) => {
        if (event.key === 'Enter') void run(page, 0);
      });
      return h('label', { class: 'param' }, h('code', {}, `$${name}`), input);
    }),
  );
  fieldset.hidden = names.length === 0;
  if (focused !== undefined) document.getElementById(`param-${focused}`)?.focus();
}

function updateFragment(state: ShareState): void {
  history.replaceState(null, '', `#${shareFragment(state)}`);
}

async function run(page: Page, pageNumber: number): Promise<void> {
  page.running?.abort();
  const controller = new AbortController();
  page.running = controller;
  page.page = pageNumber;
  const state = currentState(page);
  if (state.query.trim() === '') {
    say('Write a query first, e.g. from courses limit 10.', 'error');
    return;
  }
  say('Running…');
  try {
    const answer = await call<QueryAnswer>('query', queryInput(page, state), controller.signal);
    // The text ran: an error the server found in it before (say, a parameter then without a value) is gone.
    if (page.serverProblem !== undefined) {
      page.serverProblem = undefined;
      recheck(page.view);
    }
    page.last = { answer, query: state.query, state };
    renderResults(page);
    updateFragment(state);
    renderHistory(page, addHistory(state));
    say(`${rowsText(answer)} in ${answer.elapsedMs} ms.`);
    if (!explainPanel.hidden) void explain(page);
  } catch (error) {
    showError(page, error);
  } finally {
    if (page.running === controller) page.running = undefined;
  }
}

function renderResults(page: Page): void {
  const last = page.last;
  if (last === undefined) return;
  const { answer, query } = last;
  byId('result-tools').hidden = false;
  const bars = barColumns(answer.fields) !== undefined;
  byId('view-choice').hidden = !bars;
  const view = bars ? (document.querySelector<HTMLInputElement>('input[name="view"]:checked')?.value ?? 'table') : 'table';
  const shown = view === 'bars' ? resultBars(answer, query) : undefined;
  fill(tableRegion, shown ?? resultTable(answer, { query, ...(answer.order === undefined ? {} : { order: answer.order }), onFacet: (field) => void facet(page, field) }));
  const pageSize = last.state.pageSize ?? 100;
  const pages = answer.size === undefined ? undefined : Math.max(1, Math.ceil(answer.size / pageSize));
  byId('page-info').textContent = `Page ${page.page + 1}${pages === undefined ? '' : ` of ${pages}`} (${rowsText(answer)})`;
  byId<HTMLButtonElement>('prev').disabled = page.page === 0;
  byId<HTMLButtonElement>('next').disabled = pages === undefined ? answer.records.length < pageSize : page.page + 1 >= pages;
}

async function explain(page: Page): Promise<void> {
  const state = currentState(page);
  explainPanel.hidden = false;
  explainButton.setAttribute('aria-expanded', 'true');
  say('Explaining…');
  try {
    const answer = await call<ExplainAnswer>('explain', queryInput(page, state));
    renderExplain(byId('explain-body'), answer, copy);
    say(answer.portal === undefined ? 'Explained: the engine answers the whole query; nothing is sent.' : `Explained: target ${answer.target}${answer.local.length === 0 ? ', the portal answers the whole query' : ', part of it runs locally'}.`);
  } catch (error) {
    showError(page, error);
  }
}

async function facet(page: Page, field: string): Promise<void> {
  const state = page.last?.state ?? currentState(page);
  say(`Counting the values of ${field}…`);
  try {
    const answer = await call<FacetAnswer>('facet', { ...queryInput(page, state), field });
    const target = byId('facet');
    facetView(target, answer, () => {
      target.hidden = true;
      tableRegion.focus();
    });
    say(`Counted ${answer.values.length} values of ${field}.`);
  } catch (error) {
    showError(page, error);
  }
}

function copy(text: string, what: string, block: HTMLElement): void {
  const selectIt = (): void => {
    const range = document.createRange();
    range.selectNodeContents(block);
    const selection = getSelection();
    selection?.removeAllRanges();
    selection?.addRange(range);
    block.focus();
    say(`The ${what} is selected: press Ctrl+C to copy it.`);
  };
  if (navigator.clipboard === undefined) {
    selectIt();
    return;
  }
  navigator.clipboard.writeText(text).then(() => say(`Copied the ${what}.`), selectIt);
}

/** Shows a page size, adding it to the choices when a link asks for one they lack. */
function choosePageSize(size: number | undefined): void {
  if (size === undefined || !Number.isSafeInteger(size) || size < 1 || size > 1000) return;
  const value = String(size);
  if (![...pageSizeSelect.options].some((option) => option.value === value)) pageSizeSelect.append(h('option', { value }, value));
  pageSizeSelect.value = value;
}

function openState(page: Page, state: ShareState): void {
  page.params = { ...state.params };
  chooseSource(page, state.source, state.target);
  choosePageSize(state.pageSize);
  setText(page.view, state.query);
  renderParams(page);
}

function entryButton(label: string, onClick: () => void, description?: string): HTMLButtonElement {
  const button = h('button', { type: 'button', class: 'entry-open', ...(description === undefined ? {} : { 'aria-label': description }) }, label);
  button.addEventListener('click', onClick);
  return button;
}

function renderHistory(page: Page, list: readonly HistoryEntry[]): void {
  fill(
    byId('history'),
    ...list.map((entry) =>
      h(
        'li',
        {},
        entryButton(oneLine(entry.query), () => {
          openState(page, entry);
          void run(page, entry.page ?? 0);
        }, `Run again: ${oneLine(entry.query)}`),
        h('span', { class: 'entry-meta' }, `${entry.source ?? ''} · ${new Date(entry.at).toLocaleTimeString()}`),
      ),
    ),
  );
}

function renderSaved(page: Page, list: readonly SavedEntry[]): void {
  fill(
    byId('saved'),
    ...list.map((entry) =>
      h(
        'li',
        {},
        entryButton(entry.name, () => openState(page, entry), `Open ${entry.name}`),
        h('code', { class: 'entry-meta' }, oneLine(entry.query)),
        entryButton('Delete', () => renderSaved(page, deleteSaved(entry.name)), `Delete ${entry.name}`),
      ),
    ),
  );
}

function oneLine(text: string): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > 90 ? `${line.slice(0, 89)}…` : line;
}

async function start(): Promise<void> {
  const fragment = readFragment(location.hash);
  const shared = 'state' in fragment ? fragment.state : undefined;
  const page: Page = {
    schema: emptySchema(),
    serverProblem: undefined,
    sources: [],
    source: undefined,
    params: { ...(shared?.params ?? {}) },
    page: shared?.page ?? 0,
    last: undefined,
    running: undefined,
    view: undefined as unknown as EditorView,
  };
  page.view = createEditor({
    parent: byId('editor'),
    doc: shared?.query ?? DEFAULT_QUERY,
    nonce: nonce(),
    onRun: () => void run(page, 0),
    onChange: () => renderParams(page),
    language: languageExtensions({
      context: () => languageContext(page),
      learn: (lookups) => learn(page, lookups),
      checked: (diagnostics) => showProblems(page.view.state.doc.toString(), diagnostics),
      serverProblem: (text) => (page.serverProblem?.text === text ? page.serverProblem : undefined),
    }),
  });
  renderParams(page);
  choosePageSize(shared?.pageSize);
  renderHistory(page, readHistory());
  renderSaved(page, readSaved());
  if ('error' in fragment) say(fragment.error, 'error');

  byId('run').addEventListener('click', () => void run(page, 0));
  explainButton.addEventListener('click', () => {
    if (!explainPanel.hidden) {
      explainPanel.hidden = true;
      explainButton.setAttribute('aria-expanded', 'false');
      return;
    }
    void explain(page);
  });
  byId('format').addEventListener('click', () => formatQuery(page));
  byId('share').addEventListener('click', () => {
    const state = currentState(page);
    updateFragment(state);
    copy(location.href, 'share link', byId('status'));
  });
  byId('prev').addEventListener('click', () => void run(page, Math.max(0, page.page - 1)));
  byId('next').addEventListener('click', () => void run(page, page.page + 1));
  for (const radio of document.querySelectorAll<HTMLInputElement>('input[name="view"]')) radio.addEventListener('change', () => renderResults(page));
  sourceSelect.addEventListener('change', () => chooseSource(page, sourceSelect.value));
  byId('download').addEventListener('click', () => void save(page));
  byId('save-form').addEventListener('submit', (event) => {
    event.preventDefault();
    const input = byId<HTMLInputElement>('save-name');
    const name = input.value.trim();
    if (name === '') return;
    renderSaved(page, saveQuery({ ...currentState(page), name }));
    say(`Saved as ${name}.`);
    input.value = '';
  });
  byId('clear-history').addEventListener('click', () => {
    clearHistory();
    renderHistory(page, []);
  });

  try {
    const answer = await call<SourcesAnswer>('sources', {});
    page.sources = answer.sources;
    fillSources(page);
    chooseSource(page, shared?.source ?? answer.defaultSource, shared?.target);
    byId('version').textContent = `ckql ${answer.version}`;
  } catch (error) {
    showError(page, error);
    return;
  }
  if (shared === undefined) return;
  // What of the link this server cannot give, said after the run (whose own status would hide it).
  const notes: string[] = [];
  if (shared.source !== undefined && page.source?.name !== shared.source) notes.push(`This link names the source ${shared.source}, which this server does not offer; using ${page.source?.name ?? 'none'}.`);
  if (shared.target !== undefined && targetSelect.value !== shared.target) notes.push(`This link names the target ${shared.target}, which ${page.source?.name ?? 'this source'} does not offer; using ${targetSelect.value}.`);
  await run(page, shared.page ?? 0);
  if (notes.length > 0) say(`${notes.join(' ')} ${status.textContent ?? ''}`.trim(), 'error');
}

function formatQuery(page: Page): void {
  const formatted = format(page.view.state.doc.toString());
  setText(page.view, formatted.text);
  const left = formatted.unchanged.length;
  say(left === 0 ? 'Formatted.' : `Formatted; ${left} statement${left === 1 ? '' : 's'} left as written (${formatted.unchanged.map((each) => each.reason).join(', ')}).`);
}

async function save(page: Page): Promise<void> {
  const state = page.last?.state ?? currentState(page);
  const format = byId<HTMLSelectElement>('download-format').value as DownloadFormat;
  say('Preparing the download…');
  try {
    const file = await download({ ...queryInput(page, state), format });
    const url = URL.createObjectURL(file.blob);
    const link = h('a', { href: url, download: file.filename });
    document.body.append(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(url), 10_000);
    say(`Downloaded ${file.filename}.`);
  } catch (error) {
    showError(page, error);
  }
}

void start();

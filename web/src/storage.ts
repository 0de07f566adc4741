/**
 * History and saved queries, in the browser's `localStorage` (this page's
 * origin only). An entry is a share state: the query, its source, target,
 * page size and parameter values; never a token (the page has none).
 */
import type { ShareState } from './share.js';

export interface HistoryEntry extends ShareState {
  /** ms since 1970 */
  readonly at: number;
}

export interface SavedEntry extends ShareState {
  readonly name: string;
}

const HISTORY_KEY = 'ckql.playground.history.v1';
const SAVED_KEY = 'ckql.playground.saved.v1';
/** History keeps the last queries run, newest first. */
export const HISTORY_SIZE = 50;

function readList<T>(key: string): T[] {
  try {
    const value: unknown = JSON.parse(localStorage.getItem(key) ?? '[]');
    return Array.isArray(value) ? (value as T[]) : [];
  } catch {
    return [];
  }
}

function writeList(key: string, list: readonly unknown[]): void {
  try {
    localStorage.setItem(key, JSON.stringify(list));
  } catch {
    // Storage full or refused (a private window): history is a convenience, the page goes on without it.
  }
}

export function readHistory(): HistoryEntry[] {
  return readList<HistoryEntry>(HISTORY_KEY).filter((entry) => typeof entry?.query === 'string');
}

/** Adds a run to the history; the same query and state again moves to the top instead of repeating. */
export function addHistory(state: ShareState): HistoryEntry[] {
  const same = (entry: ShareState): boolean =>
    entry.query === state.query && entry.source === state.source && entry.target === state.target && JSON.stringify(entry.params) === JSON.stringify(state.params);
  const list = [{ ...state, at: Date.now() }, ...readHistory().filter((entry) => !same(entry))].slice(0, HISTORY_SIZE);
  writeList(HISTORY_KEY, list);
  return list;
}

export function clearHistory(): void {
  writeList(HISTORY_KEY, []);
}

export function readSaved(): SavedEntry[] {
  return readList<SavedEntry>(SAVED_KEY).filter((entry) => typeof entry?.query === 'string' && typeof entry.name === 'string');
}

/** Saves under `name`, replacing a query saved under the same name. */
export function saveQuery(entry: SavedEntry): SavedEntry[] {
  const list = [entry, ...readSaved().filter((each) => each.name !== entry.name)];
  writeList(SAVED_KEY, list);
  return list;
}

export function deleteSaved(name: string): SavedEntry[] {
  const list = readSaved().filter((each) => each.name !== name);
  writeList(SAVED_KEY, list);
  return list;
}

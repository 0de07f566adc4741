/**
 * Share links: the state that decides a result, in the URL fragment, so it
 * never reaches a server's log and the link works wherever the page is
 * served. Versioned (`v=1`); a token is never part of the state.
 *
 * `#v=1&source=demo&target=auto&size=100&page=0&q=from%20courses&p.subject=math`
 */

export interface ShareState {
  readonly query: string;
  /** the source's name on the server (a profile, `local`) */
  readonly source?: string;
  readonly target?: string;
  readonly pageSize?: number;
  /** the page shown, from 0 */
  readonly page?: number;
  /** each parameter's value as typed */
  readonly params: Readonly<Record<string, string>>;
}

export const SHARE_VERSION = '1';

/**
 * The fragment for a state (without `#`).
 * @example shareFragment({ query: 'from courses', params: { s: 'math' } }) // 'v=1&q=from+courses&p.s=math'
 */
export function shareFragment(state: ShareState): string {
  const out = new URLSearchParams();
  out.set('v', SHARE_VERSION);
  if (state.source !== undefined) out.set('source', state.source);
  if (state.target !== undefined) out.set('target', state.target);
  if (state.pageSize !== undefined) out.set('size', String(state.pageSize));
  if (state.page !== undefined && state.page > 0) out.set('page', String(state.page));
  out.set('q', state.query);
  for (const [name, value] of Object.entries(state.params)) out.set(`p.${name}`, value);
  return out.toString();
}

/** What a fragment says: a state, nothing (no share link), or why it cannot be read. */
export type ReadFragment = { readonly state: ShareState } | { readonly none: true } | { readonly error: string };

/**
 * Reads a fragment (with or without `#`).
 * @example readFragment('#v=1&q=from+courses') // { state: { query: 'from courses', params: {} } }
 */
export function readFragment(fragment: string): ReadFragment {
  const text = fragment.startsWith('#') ? fragment.slice(1) : fragment;
  if (text === '') return { none: true };
  const values = new URLSearchParams(text);
  const version = values.get('v');
  if (version === null || !values.has('q')) return { none: true };
  if (version !== SHARE_VERSION) return { error: `this link was made by another version of the playground (link version ${version}; this page reads ${SHARE_VERSION})` };
  const params: Record<string, string> = {};
  let source: string | undefined;
  let target: string | undefined;
  let pageSize: number | undefined;
  let page: number | undefined;
  for (const [key, value] of values) {
    // defined, not assigned: a parameter named __proto__ is a parameter, not the object's prototype
    if (key.startsWith('p.')) Object.defineProperty(params, key.slice(2), { value, enumerable: true, writable: true, configurable: true });
    else if (key === 'source') source = value;
    else if (key === 'target') target = value;
    else if (key === 'size') pageSize = wholeNumber(value);
    else if (key === 'page') page = wholeNumber(value);
  }
  return {
    state: {
      query: values.get('q') ?? '',
      params,
      ...(source === undefined ? {} : { source }),
      ...(target === undefined ? {} : { target }),
      ...(pageSize === undefined ? {} : { pageSize }),
      ...(page === undefined ? {} : { page }),
    },
  };
}

function wholeNumber(text: string): number | undefined {
  return /^\d{1,9}$/.test(text) ? Number(text) : undefined;
}

/**
 * The explain panel: the target and why, the request the portal answers (as
 * JSON, a GET URL, a curl command that reads the token from the shell), what
 * ckql finishes locally, and the query as a config entry and as TypeScript,
 * each with a copy button.
 */
import type { ExplainAnswer } from '../../src/server/play-protocol.js';
import { fill, h } from './dom.js';

/** Copies text; says so in the status line (or, where the clipboard is refused, selects it for Ctrl+C). */
export type Copier = (text: string, what: string, block: HTMLElement) => void;

function block(title: string, text: string, copy: Copier, language: string, where?: string): HTMLElement {
  const pre = h('pre', { class: `code ${language}`, tabindex: '0', 'aria-label': title }, text);
  const button = h('button', { type: 'button', class: 'copy' }, `Copy ${title}`);
  button.addEventListener('click', () => copy(text, title, pre));
  return h('div', { class: 'block' }, h('div', { class: 'block-head' }, h('h4', {}, title), button), where === undefined ? undefined : h('p', { class: 'block-url' }, h('code', {}, where)), pre);
}

export function renderExplain(target: HTMLElement, answer: ExplainAnswer, copy: Copier): void {
  const portal = answer.portal;
  const portalBlocks =
    portal === undefined
      ? [h('p', {}, 'Nothing is sent: the engine answers the whole query in the server. Choose a target above to see the requests a portal would get.')]
      : portal.kind === 'sql'
      ? [block('SQL', portal.sql, copy, 'sql', `POST ${portal.url}`), block('GET URL', portal.getUrl, copy, 'url'), block('curl command', portal.curl, copy, 'shell')]
      : [
          block('request JSON', portal.json, copy, 'json', `${portal.method} ${portal.url}`),
          block('GET URL', portal.getUrl, copy, 'url'),
          block('curl command', portal.curl, copy, 'shell'),
        ];
  const local =
    portal === undefined
      ? h('p', {}, 'All of it, in the engine, as the operators below say.')
      : answer.local.length === 0
      ? h('p', {}, 'Nothing: the portal answers the whole query.')
      : h('div', {}, h('ul', {}, ...answer.local.map((step) => h('li', {}, step))), answer.residual === undefined ? undefined : block('residual query', answer.residual, copy, 'ckql'));
  const steps = answer.steps === undefined || answer.steps.length === 0 ? undefined : block('operators that run', answer.steps.join('\n'), copy, 'steps');
  fill(
    target,
    h('p', { class: 'target' }, h('strong', {}, 'Target: '), h('code', {}, answer.target), ` (${answer.chosen})`),
    answer.note === undefined ? undefined : h('p', { class: 'note' }, answer.note),
    h('section', { 'aria-labelledby': 'explain-portal' }, h('h3', { id: 'explain-portal' }, 'What the portal answers'), ...portalBlocks),
    h('section', { 'aria-labelledby': 'explain-local' }, h('h3', { id: 'explain-local' }, 'What ckql finishes locally'), local, steps),
    h(
      'section',
      { 'aria-labelledby': 'explain-reuse' },
      h('h3', { id: 'explain-reuse' }, 'Use it elsewhere'),
      block('config entry', answer.configEntry, copy, 'yaml'),
      block('TypeScript', answer.taggedTemplate, copy, 'ts'),
    ),
  );
}

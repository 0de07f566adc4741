/**
 * Building the page's elements. Text always goes in as text (`textContent`,
 * attributes set one by one): nothing the server or a share link sends is
 * ever read as markup.
 */

type Child = Node | string | undefined | false;

/**
 * An element with attributes and children.
 * @example h('th', { scope: 'col' }, 'subject')
 */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attributes: Readonly<Record<string, string | boolean | undefined>> = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === false) continue;
    element.setAttribute(name, value === true ? '' : value);
  }
  for (const child of children) {
    if (child === undefined || child === false) continue;
    element.append(typeof child === 'string' ? document.createTextNode(child) : child);
  }
  return element;
}

/** The element with this id; the page's shell has every one the script uses. */
export function byId<T extends HTMLElement = HTMLElement>(id: string): T {
  const found = document.getElementById(id);
  if (found === null) throw new Error(`the page has no #${id}`);
  return found as T;
}

/** Replaces an element's children. */
export function fill(element: Element, ...children: Child[]): void {
  element.replaceChildren(...children.filter((child): child is Node | string => child !== undefined && child !== false));
}

/**
 * Finding the line of a key in a config file, so a schema error can say
 * `line 7` rather than only `profiles.prod.method`. YAML (and JSON, which
 * the YAML parser reads too) map exactly through the document's node ranges;
 * TOML is located line by line, which covers tables and `key = value` lines
 * but not keys inside inline tables (those report their table's line).
 */
import { LineCounter, isMap, isSeq, isScalar, parseDocument } from 'yaml';
import type { Node as YamlNode } from 'yaml';

export type ConfigFormat = 'yaml' | 'json' | 'toml';
export type KeyPath = readonly (string | number)[];

/**
 * The 1-based line of the deepest part of `path` that exists in `text`: the
 * key itself, or for a missing key, its parent's key.
 * @example lineOfPath('profiles:\n  prod:\n    method: PUT\n', 'yaml', ['profiles', 'prod', 'method']) // 3
 */
export function lineOfPath(text: string, format: ConfigFormat, path: KeyPath): number | undefined {
  return locatorOf(text, format)(path);
}

/**
 * One text's locator, made once: a config's checks ask the line of each of
 * its named queries, and parsing the file again for each made 1,000 queries
 * take minutes. The last text's locator is kept.
 */
function locatorOf(text: string, format: ConfigFormat): (path: KeyPath) => number | undefined {
  if (last !== undefined && last.text === text && last.format === format) return last.locate;
  const locate = format === 'toml' ? tomlLocator(text) : yamlLocator(text);
  last = { text, format, locate };
  return locate;
}

let last: { readonly text: string; readonly format: ConfigFormat; readonly locate: (path: KeyPath) => number | undefined } | undefined;

function yamlLocator(text: string): (path: KeyPath) => number | undefined {
  const lineCounter = new LineCounter();
  const document = parseDocument(text, { lineCounter });
  const keyed = new WeakMap<object, Map<string, unknown>>();
  /** A map's pairs by key, indexed once per map (a find per query was quadratic in the queries too). */
  const pairsOf = (map: object & { items: unknown[] }): Map<string, unknown> => {
    let pairs = keyed.get(map);
    if (pairs === undefined) {
      pairs = new Map();
      for (const item of map.items as { key: unknown }[]) if (isScalar(item.key) && !pairs.has(String(item.key.value))) pairs.set(String(item.key.value), item);
      keyed.set(map, pairs);
    }
    return pairs;
  };
  return (path) => lineOfYamlPath(document, lineCounter, path, pairsOf);
}

function lineOfYamlPath(
  document: ReturnType<typeof parseDocument>,
  lineCounter: LineCounter,
  path: KeyPath,
  pairsOf: (map: object & { items: unknown[] }) => Map<string, unknown>,
): number | undefined {
  let node: unknown = document.contents;
  let offset = rangeStart(node);
  for (const segment of path) {
    if (isMap(node)) {
      const pair = pairsOf(node).get(String(segment)) as { key: unknown; value: unknown } | undefined;
      if (pair === undefined) break;
      offset = rangeStart(pair.key) ?? offset;
      node = pair.value;
    } else if (isSeq(node) && typeof segment === 'number') {
      const item: unknown = node.items[segment];
      if (item === undefined) break;
      offset = rangeStart(item) ?? offset;
      node = item;
    } else {
      break;
    }
  }
  return offset === undefined ? undefined : lineCounter.linePos(offset).line;
}

function rangeStart(node: unknown): number | undefined {
  const range = (node as YamlNode | null | undefined)?.range;
  return range?.[0];
}

/**
 * Records the line of every `[table]` header and every `key = value` line
 * under its table's path, then answers with the longest recorded prefix of
 * `path`.
 */
function tomlLocator(text: string): (path: KeyPath) => number | undefined {
  const lines = new Map<string, number>();
  let table: string[] = [];
  text.split(/\r?\n/).forEach((raw, index) => {
    const line = raw.trim();
    const header = /^\[\[?\s*([^\]]+?)\s*\]\]?\s*(#.*)?$/.exec(line);
    if (header?.[1] !== undefined) {
      table = splitTomlKey(header[1]);
      remember(lines, table, index + 1);
      return;
    }
    const assignment = /^((?:"[^"]*"|'[^']*'|[A-Za-z0-9_.\s-])+?)\s*=/.exec(line);
    if (assignment?.[1] !== undefined) remember(lines, [...table, ...splitTomlKey(assignment[1])], index + 1);
  });
  return (path) => {
    for (let length = path.length; length > 0; length -= 1) {
      const found = lines.get(pathKey(path.slice(0, length)));
      if (found !== undefined) return found;
    }
    return undefined;
  };
}

/** Every prefix too: `[a.b]` is where `a` first appears when nothing came before it. */
function remember(lines: Map<string, number>, path: KeyPath, line: number): void {
  for (let length = 1; length <= path.length; length += 1) {
    const key = pathKey(path.slice(0, length));
    if (!lines.has(key)) lines.set(key, line);
  }
}

/** `a."b.c".d` → `['a', 'b.c', 'd']` */
function splitTomlKey(key: string): string[] {
  const parts: string[] = [];
  const pattern = /\s*(?:"((?:[^"\\]|\\.)*)"|'([^']*)'|([A-Za-z0-9_-]+))\s*(?:\.|$)/gy;
  let match: RegExpExecArray | null;
  while ((match = pattern.exec(key)) !== null && match[0] !== '') parts.push(match[1] ?? match[2] ?? match[3] ?? '');
  return parts;
}

function pathKey(path: KeyPath): string {
  return JSON.stringify(path.map(String));
}

/** `profiles.prod.method`, with `["odd key"]` for keys that are not plain names. */
export function formatKeyPath(path: KeyPath): string {
  return path
    .map((segment, index) => {
      if (typeof segment === 'number') return `[${segment}]`;
      if (/^[A-Za-z_][A-Za-z0-9_-]*$/.test(segment)) return index === 0 ? segment : `.${segment}`;
      return `[${JSON.stringify(segment)}]`;
    })
    .join('');
}

/**
 * Folders import one way (docs/architecture.md):
 *   core (ast, span, errors, text) → datastore → syntax → language (format, diagnostics) → compile
 *   → language-service → engine → execute → server | client | config → session → output → lsp | cli | repl
 * A folder may import its own layer's files and any layer to its left, never one to its right;
 * module-level cycles are refused everywhere.
 */
const layers = [
  ['core', '^src/(ast|span|errors|text)\\.ts$'],
  ['datastore', '^src/datastore/'],
  ['syntax', '^src/syntax/'],
  ['language', '^src/(format|diagnostics)\\.ts$'],
  ['compile', '^src/compile/'],
  ['language-service', '^src/language-service/'],
  ['engine', '^src/engine/'],
  ['execute', '^src/execute/'],
  ['server', '^src/server/'],
  ['client', '^src/client/'],
  ['config', '^src/config/'],
  ['session', '^src/session/'],
  ['output', '^src/output/'],
  ['repl', '^src/repl/'],
  ['lsp', '^src/lsp/'],
  ['cli', '^src/cli/'],
];
// Layers of the same rank may not import each other (server, client and config are siblings).
const rank = {
  core: 0, datastore: 1, syntax: 2, language: 2.5, compile: 3, 'language-service': 3.5, engine: 4, execute: 4.5,
  server: 5, client: 5, config: 5, session: 6, output: 7, repl: 8, lsp: 8, cli: 9,
};

const forbidden = [
  {
    name: 'no-circular',
    severity: 'error',
    comment: 'A module cycle: move the shared code down a layer.',
    from: {},
    to: { circular: true },
  },
];
for (const [name, path] of layers) {
  const above = layers.filter(([other]) => other !== name && rank[other] >= rank[name]).map(([, p]) => p);
  if (above.length === 0) continue;
  forbidden.push({
    name: `layer-${name}`,
    severity: 'error',
    comment: `${name} imports only from the layers below it (docs/architecture.md).`,
    from: { path },
    to: { path: above.join('|') },
  });
}
// The playground page runs in a browser: the language and the language service, the service's pure
// rules and values, and the types of its own endpoints; never Node, an engine, the client or the CLI.
forbidden.push({
  name: 'web-browser-only',
  severity: 'error',
  comment: 'web/ runs in a browser: it imports the language service and the layers below it, and the playground protocol (docs/architecture.md).',
  from: { path: '^web/' },
  to: { path: '^src/(engine|execute|client|config|session|output|repl|lsp|cli)/|^src/server/(?!play-protocol\\.ts$)|^src/index\\.ts$' },
});
forbidden.push({
  name: 'web-no-node',
  severity: 'error',
  comment: 'web/ runs in a browser: no Node built-ins.',
  from: { path: '^web/' },
  to: { dependencyTypes: ['core'] },
});
// The language service bundles for a browser, and so does everything below it that it imports.
forbidden.push({
  name: 'browser-safe-no-node',
  severity: 'error',
  comment: 'The language service and the layers under it bundle for a browser: no Node built-in (docs/architecture.md).',
  from: { path: '^src/(ast|span|errors|text)\\.ts$|^src/(datastore|syntax|compile|language-service)/|^src/(format|diagnostics)\\.ts$' },
  to: { dependencyTypes: ['core'] },
});
// The memory engine's core (docs/engines.md, "The memory engine's core and its Node edges") bundles for
// a browser worker: src/engine/memory/ and the engine's files it shares (types, pace, stream, declared).
// Files, folders and streams are its Node edges in src/engine/node/, which the core never imports.
const memoryCore = '^src/engine/memory/|^src/engine/(types|pace|stream|declared)\\.ts$';
forbidden.push({
  name: 'memory-core-no-node',
  severity: 'error',
  comment: 'The memory engine\'s core runs in a browser worker: no Node built-in; a file or a stream belongs to its Node edge in src/engine/node/ (docs/engines.md).',
  from: { path: memoryCore },
  to: { dependencyTypes: ['core'] },
});
forbidden.push({
  name: 'memory-core-no-edges',
  severity: 'error',
  comment: 'The memory engine\'s core imports only the core and the layers below the engine: never its Node edges (src/engine/node/), another engine or the engine chooser (docs/engines.md).',
  from: { path: memoryCore },
  to: { path: '^src/engine/', pathNot: memoryCore },
});
forbidden.push({
  name: 'no-index-inside',
  severity: 'error',
  comment: 'src/index.ts is the public surface; nothing inside imports it.',
  from: { path: '^src/', pathNot: '^src/index\\.ts$' },
  to: { path: '^src/index\\.ts$' },
});

module.exports = {
  forbidden,
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.tsx', '.js'] },
  },
};

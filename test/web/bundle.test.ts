/**
 * The playground's script, built as it ships (scripts/bundle-web.ts's
 * options, in memory): at most 200 KB gzipped, made only of the page, its
 * CodeMirror packages and the browser-safe layers of ckql (no Node built-in,
 * no engine, client or CLI), and loading nothing from another origin.
 */
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { webBuildOptions } from '../../scripts/bundle-web.js';

const BUDGET = 200 * 1024;

describe('the playground bundle', () => {
  it(`is at most ${BUDGET / 1024} KB gzipped and holds only browser code`, async () => {
    const result = await build({ ...webBuildOptions(), write: false, outdir: 'out' });
    const script = result.outputFiles.find((file) => file.path.endsWith('play.js'));
    expect(script).toBeDefined();
    const gzipped = gzipSync(script!.contents, { level: 9 }).length;
    expect(gzipped).toBeLessThanOrEqual(BUDGET);
    const inputs = Object.keys(result.metafile!.inputs);
    // what the metafile says went in: the page, CodeMirror (and its Lezer and style parts), Chevrotain, ckql's own browser-safe layers
    const outside = inputs.filter(
      (input) =>
        !/^web\/src\//.test(input) &&
        !/^src\/(ast|span|errors|text|format|diagnostics)\.ts$/.test(input) &&
        !/^src\/(datastore|syntax|compile|language-service)\//.test(input) &&
        input !== 'src/server/play-protocol.ts' &&
        !/^node_modules\/(@codemirror|@lezer|style-mod|w3c-keyname|crelt|@marijn|chevrotain|@chevrotain|es-toolkit|regexp-to-ast)\//.test(input),
    );
    expect(outside).toEqual([]);
    expect(inputs.some((input) => input.startsWith('node_modules/@codemirror/view/'))).toBe(true);
    const text = script!.text;
    // no import of anything but itself, and no URL it would fetch from elsewhere
    expect(text).not.toMatch(/\bimport\s*\(\s*["'`]https?:/);
    expect(text).not.toMatch(/from\s*["'](https?:|node:)/);
    console.log(`playground script: ${script!.contents.length} bytes, ${gzipped} gzipped (budget ${BUDGET})`);
  });
});

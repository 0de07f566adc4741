/**
 * Section 1: parse + compile a corpus of realistic queries, against
 * `liqe.parse` on the nearest Lucene-style queries and against `JSON.parse`
 * of each compiled request's JSON text (the floor: reading that much text).
 */
import { parse as liqeParse } from 'liqe';
import type { RunConfig } from './lib/config.js';
import { ckqlModules } from './lib/ckql.js';
import { CORPUS } from './lib/corpus.js';
import { runChild } from './lib/child.js';
import { formatRatio, formatTime, measureSync } from './lib/harness.js';
import type { Measured, MeasureOptions } from './lib/harness.js';
import type { SectionResult, Target } from './lib/report.js';

/** Corpus passes per timed operation, so one sample is tens of µs, well above the timer's resolution. */
const PASSES = 20;

export async function benchParse(config: RunConfig, log: (line: string) => void): Promise<SectionResult> {
  const [{ parse }, { compile }] = await Promise.all([ckqlModules.parse(), ckqlModules.compile()]);
  const sources = CORPUS.map((c) => c.ckql);
  const liqeSources = CORPUS.map((c) => c.liqe);
  // every query must parse and compile, and liqe must accept its side, before anything is timed
  const asts = sources.map((s) => parse(s));
  const jsonTexts = sources.map((s) => JSON.stringify(compile(s)));
  for (const l of liqeSources) liqeParse(l);
  const n = sources.length * PASSES;

  log(`parse: ${sources.length} queries × ${PASSES} passes per sample`);
  // Eight short rounds rather than three long ones: a minute of heavier load meets every contender.
  const options: MeasureOptions = config.quick
    ? { timeMs: 300, minSamples: 10, rounds: 1, clock: 'cpu' }
    : { timeMs: 2400, minSamples: 50, rounds: 8, warmupMs: 300, clock: 'cpu' };
  const m = measureSync(
    [
      { name: 'compile(text)', fn: () => { let last; for (let p = 0; p < PASSES; p++) for (const s of sources) last = compile(s); return last; } },
      { name: 'parse(text)', fn: () => { let last; for (let p = 0; p < PASSES; p++) for (const s of sources) last = parse(s); return last; } },
      { name: 'compile(ast)', fn: () => { let last; for (let p = 0; p < PASSES; p++) for (const a of asts) last = compile(a); return last; } },
      { name: 'liqe.parse', fn: () => { let last; for (let p = 0; p < PASSES; p++) for (const s of liqeSources) last = liqeParse(s); return last; } },
      { name: 'JSON.parse', fn: () => { let last; for (let p = 0; p < PASSES; p++) for (const s of jsonTexts) last = JSON.parse(s) as unknown; return last; } },
    ],
    // CPU time, not wall time: see the note below
    options,
  );
  // The same source through tsx (esbuild, keepNames), what `npm run dev` and vitest run, for comparison
  // only: in a process of its own, as a second copy of the parser here would slow the first (the child's comment).
  log('parse: compile(text) via tsx, in a child process');
  const viaTsx = await runChild<{ perQueryMs: number }>('parse-tsx.ts', [String(PASSES), JSON.stringify(options)]);
  const per = (name: string) => (name === 'compile(text) via tsx' ? viaTsx.perQueryMs : (m.get(name) as Measured).median / n);
  const ours = per('compile(text)');
  const liqe = per('liqe.parse');
  const floor = per('JSON.parse');
  const chars = (list: readonly string[]) => Math.round(list.reduce((a, s) => a + s.length, 0) / list.length);
  const targets: Target[] = [
    { section: 'parse', what: 'parse + compile vs liqe.parse', goal: '≥ 20× faster', measured: formatRatio(liqe / ours), met: liqe / ours >= 20 },
    { section: 'parse', what: 'parse + compile vs JSON.parse of the request', goal: '≤ 10× the floor', measured: formatRatio(ours / floor), met: ours / floor <= 10 },
  ];

  // One search word of 25k to 200k characters (a paste, or an editor compiling on every keystroke):
  // compiling it must grow with its length, not its square.
  const wordSizes = [25_000, 100_000, 200_000, 400_000];
  const wordQuery = (size: number) => `from t search "${'a'.repeat(size - 1)}*"`;
  log(`parse: search words of ${wordSizes.join(', ')} characters`);
  const words = measureSync(
    wordSizes.map((size) => {
      const text = wordQuery(size);
      return { name: `word ${size}`, fn: () => compile(text) };
    }),
    config.quick ? { timeMs: 100, minSamples: 3, rounds: 1, clock: 'cpu' } : { timeMs: 600, minSamples: 10, rounds: 2, clock: 'cpu' },
  );
  const wordTime = (size: number) => (words.get(`word ${size}`) as Measured).median;
  // twice the text: linear work takes twice the time, quadratic four times (V8 takes one step between
  // 100k and 200k characters, where its strings move to another space: not a rate, so the target doubles past it)
  const growth = wordTime(400_000) / wordTime(200_000);
  targets.push({ section: 'parse', what: 'compile a 400k-character search word vs a 200k one (twice the text)', goal: '≤ 3× the time (linear: 2×, quadratic: 4×)', measured: `${formatRatio(growth)} (${formatTime(wordTime(200_000))} → ${formatTime(wordTime(400_000))})`, met: growth <= 3 });

  const row = (name: string, what: string, text: string, vsOurs: string) =>
    [name, what, text, formatTime(per(name)), vsOurs];
  return {
    id: 'parse',
    title: '1. Parse + compile',
    tables: [
      {
        title: `Parse + compile: median µs per query over a ${sources.length}-query corpus`,
        textColumns: 2,
        headers: ['contender', 'work', 'avg chars', 'per query', 'ratio'],
        rows: [
          row('compile(text)', 'ckql: lex + parse + AST + compile to a frozen request', String(chars(sources)), '1 (ours)'),
          row('parse(text)', 'ckql: lex + parse + AST only', String(chars(sources)), `${formatRatio(per('parse(text)') / ours)} of ours`),
          row('compile(ast)', 'ckql: compile an AST parsed beforehand', '—', `${formatRatio(per('compile(ast)') / ours)} of ours`),
          row('compile(text) via tsx', 'the same src/ run through tsx (esbuild keepNames), info only', String(chars(sources)), `${formatRatio(per('compile(text) via tsx') / ours)} of ours`),
          row('liqe.parse', 'liqe 3.8: nearley parse of the Lucene-style filter', String(chars(liqeSources)), `ours ${formatRatio(liqe / ours)} faster`),
          row('JSON.parse', 'floor: JSON.parse of the compiled request text', String(chars(jsonTexts)), `ours ${formatRatio(ours / floor)} slower`),
        ],
      },
      {
        title: 'Parse + compile: one long search word (`from t search "aaa…a*"`), median per compile',
        textColumns: 1,
        headers: ['characters', 'compile', 'per 1k characters'],
        rows: wordSizes.map((size) => [size.toLocaleString('en-US'), formatTime(wordTime(size)), formatTime((wordTime(size) / size) * 1000)]),
      },
    ],
    targets,
    notes: [
      `Corpus: \`bench/lib/corpus.ts\`, ${sources.length} queries (one-liners to a commented multi-line query, UUID and alias resources, backtick fields, \`in\` lists, same-field \`or\`, search, order, select, limit/offset). liqe gets the nearest query it can express: only the filter and the text term (no from/select/order/limit/offset; \`in\` becomes an OR group), so it reads less text than ckql. JSON.parse reads the compiled request's JSON text. Each sample runs the corpus ${PASSES} times (JSON.parse's are batched to at least 1 ms). Times are CPU time of the process (\`process.cpuUsage()\`, GC threads included), not wall time: on the shared machine a wall-clock sample is stretched whenever the scheduler runs another process, and a 2 ms sample of ckql was stretched far more often than a 0.2 ms one of JSON.parse, so the ratio grew with the load (11.9× to 30× in one day) rather than with the code; on an idle machine the two clocks agree. ckql is measured as built by tsc (bench/.cache/dist, the \`npm run build\` settings), which is what the package ships; the "via tsx" row runs the same source through tsx, as \`npm run dev\` and the tests do, in a child process of its own (beside the tsc build it made that build's Chevrotain calls meet two parser classes: ≈ 3–5 % slower).`,
    ],
  };
}

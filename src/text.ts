/**
 * Small text helpers that every layer may use: how far apart two words are
 * and the nearest of some names (for "did you mean"), and a long text cut
 * down for a message.
 */

/**
 * Edit distance over UTF-16 code units, where swapping two neighbours counts
 * as one edit (optimal string alignment), since `qurey` is one slip from
 * `query`, not two. With `max`, words whose lengths differ by more than that
 * are `Infinity` apart at once (a megabyte of text is never compared letter
 * by letter with a keyword).
 * @example editDistance('qurey', 'query') // 1
 * @example editDistance('a', 'abcdef', 2) // Infinity
 */
export function editDistance(a: string, b: string, max: number = Infinity): number {
  if (Math.abs(a.length - b.length) > max) return Infinity;
  let previous: number[] = [];
  let row: number[] = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const beforePrevious = previous;
    previous = row;
    row = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(previous[j]! + 1, row[j - 1]! + 1, previous[j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, beforePrevious[j - 2]! + 1);
      row.push(best);
    }
  }
  return row[b.length]!;
}

/**
 * A text cut down to `max` characters (and `…`) before it goes into a message.
 * @example excerpt('x'.repeat(500)).length // → 121
 */
export function excerpt(text: string, max = 120): string {
  return text.length <= max ? text : `${text.slice(0, max)}…`;
}

/**
 * The candidate closest to `name`, if one is close enough.
 * @example nearestName('subjet', ['_id', 'subject', 'stage']) // 'subject'
 */
export function nearestName(name: string, candidates: Iterable<string>): string | undefined {
  const wanted = name.toLowerCase();
  const limit = Math.max(1, Math.min(3, Math.floor(name.length / 3)));
  let best: { name: string; distance: number } | undefined;
  for (const candidate of candidates) {
    if (candidate === name) continue;
    const distance = candidate.toLowerCase() === wanted ? 0 : editDistance(wanted, candidate.toLowerCase());
    if (distance <= limit && (best === undefined || distance < best.distance)) best = { name: candidate, distance };
  }
  return best?.name;
}

/**
 * Up to `max` candidates close to `name`, nearest first (the cut-off of `nearestName`).
 * @example nearestNames('stge', ['stage', 'state', 'title']) // ['stage', 'state']
 */
export function nearestNames(name: string, candidates: Iterable<string>, max = 3): string[] {
  const wanted = name.toLowerCase();
  const limit = Math.max(1, Math.min(3, Math.floor(name.length / 3)));
  const close: { name: string; distance: number }[] = [];
  for (const candidate of candidates) {
    if (candidate === name || close.some((c) => c.name === candidate)) continue;
    const distance = candidate.toLowerCase() === wanted ? 0 : editDistance(wanted, candidate.toLowerCase());
    if (distance <= limit) close.push({ name: candidate, distance });
  }
  return close.sort((a, b) => a.distance - b.distance).slice(0, max).map((c) => c.name);
}

/** `did you mean "subject"?`, or undefined when nothing is close. */
export function didYouMean(name: string, candidates: Iterable<string>): string | undefined {
  const nearest = nearestName(name, candidates);
  return nearest === undefined ? undefined : `did you mean ${JSON.stringify(nearest)}?`;
}

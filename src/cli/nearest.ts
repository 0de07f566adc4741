/**
 * "Did you mean …?" for names a person typed: fields, commands, profiles,
 * named queries. Levenshtein distance, compared without case, with a cut-off
 * that grows with the name so `subjet` finds `subject` but `x` finds nothing.
 */

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
    const distance = candidate.toLowerCase() === wanted ? 0 : levenshtein(wanted, candidate.toLowerCase());
    if (distance <= limit && (best === undefined || distance < best.distance)) best = { name: candidate, distance };
  }
  return best?.name;
}

/** `did you mean "subject"?`, or undefined when nothing is close. */
export function didYouMean(name: string, candidates: Iterable<string>): string | undefined {
  const nearest = nearestName(name, candidates);
  return nearest === undefined ? undefined : `did you mean ${JSON.stringify(nearest)}?`;
}

/** Edit distance over UTF-16 code units, two rows of memory. */
export function levenshtein(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, index) => index);
  for (let i = 1; i <= a.length; i += 1) {
    const current = [i];
    for (let j = 1; j <= b.length; j += 1) {
      const substitution = (previous[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1);
      current.push(Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, substitution));
    }
    previous = current;
  }
  return previous[b.length] ?? 0;
}

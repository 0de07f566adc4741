/**
 * "Did you mean …?" for names a person typed: fields, commands, profiles,
 * named queries. Edit distance (Levenshtein with transpositions), compared without case, with a cut-off
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
    const distance = candidate.toLowerCase() === wanted ? 0 : editDistance(wanted, candidate.toLowerCase());
    if (distance <= limit && (best === undefined || distance < best.distance)) best = { name: candidate, distance };
  }
  return best?.name;
}

/** `did you mean "subject"?`, or undefined when nothing is close. */
export function didYouMean(name: string, candidates: Iterable<string>): string | undefined {
  const nearest = nearestName(name, candidates);
  return nearest === undefined ? undefined : `did you mean ${JSON.stringify(nearest)}?`;
}

/**
 * Edit distance over UTF-16 code units, where swapping two neighbours counts
 * as one edit (optimal string alignment), since `qurey` is one slip from
 * `query`, not two.
 * @example editDistance('qurey', 'query') // 1
 */
export function editDistance(a: string, b: string): number {
  const rows: number[][] = [Array.from({ length: b.length + 1 }, (_, index) => index)];
  for (let i = 1; i <= a.length; i += 1) {
    const row = [i];
    for (let j = 1; j <= b.length; j += 1) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min((rows[i - 1]?.[j] ?? 0) + 1, (row[j - 1] ?? 0) + 1, (rows[i - 1]?.[j - 1] ?? 0) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, (rows[i - 2]?.[j - 2] ?? 0) + 1);
      row.push(best);
    }
    rows.push(row);
  }
  return rows[a.length]?.[b.length] ?? 0;
}

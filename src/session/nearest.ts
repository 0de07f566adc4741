/**
 * "Did you mean …?" for names a person typed: fields, commands, profiles,
 * named queries. Edit distance (Levenshtein with transpositions), compared without case, with a cut-off
 * that grows with the name so `subjet` finds `subject` but `x` finds nothing.
 */
import { editDistance } from '../text.js';

/** `editDistance` lives with the other text helpers; re-exported for the callers that found it here. */
export { editDistance };

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

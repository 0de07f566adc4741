/**
 * "Did you mean …?" for names a person typed: fields, commands, profiles,
 * named queries. The helpers live with the other text helpers (`text.ts`),
 * where the language service can reach them too.
 */
export { didYouMean, editDistance, nearestName } from '../text.js';

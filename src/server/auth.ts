/**
 * API tokens for private resources. The header holds the raw token, with no
 * scheme word (docs/semantics.md, HTTP). Tokens are kept only as SHA-256 digests,
 * and a presented token is compared with every one of them in constant time:
 * hashing first makes both sides the same length, so `timingSafeEqual`
 * applies and the comparison time says nothing about the tokens.
 */
import { createHash, timingSafeEqual } from 'node:crypto';

export type TokenCheck = (header: string | undefined) => boolean;

function digest(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

/**
 * Returns a check that is true when `header` is one of `tokens`. Empty tokens
 * are dropped, so an empty header never opens anything.
 *
 * @example
 * const check = tokenCheck(['s3cret']);
 * check('s3cret'); // → true
 * check('Bearer s3cret'); // → false
 */
export function tokenCheck(tokens: readonly string[]): TokenCheck {
  const digests = tokens.filter((token) => token.length > 0).map(digest);
  if (digests.length === 0) return () => false;
  return (header) => {
    if (header === undefined || header.length === 0) return false;
    const presented = digest(header);
    let match = false;
    // No early exit: every digest is compared, whichever matches.
    for (const known of digests) match = timingSafeEqual(presented, known) || match;
    return match;
  };
}

/**
 * AST comparisons "modulo spans" and span sanity checks, shared by the case
 * suite and the properties.
 */
import type { Span } from '../../src/span.js';

/** A deep copy of an AST (or any JSON-like value) without its `span` keys. */
export function stripSpans(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(stripSpans);
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [key, inner] of Object.entries(value)) {
      if (key !== 'span' && inner !== undefined) out[key] = stripSpans(inner);
    }
    return out;
  }
  return value;
}

function isSpan(value: unknown): value is Span {
  return (
    value !== null && typeof value === 'object' &&
    typeof (value as Span).start === 'number' && typeof (value as Span).end === 'number'
  );
}

/**
 * Every problem with the spans of a parsed AST: each node must have a span
 * with `0 <= start <= end <= source.length`, and lie inside its parent's span.
 * Returns human-readable lines; empty when all is well.
 */
export function spanProblems(root: unknown, source: string): string[] {
  const problems: string[] = [];
  const visit = (node: unknown, path: string, parent: Span | undefined): void => {
    if (Array.isArray(node)) {
      node.forEach((item, i) => visit(item, `${path}[${i}]`, parent));
      return;
    }
    if (node === null || typeof node !== 'object') return;
    let own = parent;
    if ('kind' in node) {
      const span = (node as { span?: unknown }).span;
      if (!isSpan(span)) {
        problems.push(`${path}: no span`);
      } else {
        if (!(Number.isInteger(span.start) && Number.isInteger(span.end) && 0 <= span.start && span.start <= span.end && span.end <= source.length)) {
          problems.push(`${path}: span ${span.start}..${span.end} is not inside 0..${source.length}`);
        }
        if (parent && (span.start < parent.start || span.end > parent.end)) {
          problems.push(`${path}: span ${span.start}..${span.end} is outside its parent's ${parent.start}..${parent.end}`);
        }
        own = span;
      }
    }
    for (const [key, inner] of Object.entries(node)) {
      if (key !== 'span') visit(inner, `${path}.${key}`, own);
    }
  };
  visit(root, 'query', undefined);
  return problems;
}

/** Whether `span` lies inside a text of `length` UTF-16 units: `0 <= start <= end <= length`. */
export function spanInside(span: Span, length: number): boolean {
  return Number.isInteger(span.start) && Number.isInteger(span.end) && 0 <= span.start && span.start <= span.end && span.end <= length;
}

/** Deep-freeze check: the value and everything reachable from it is frozen. */
export function isDeepFrozen(value: unknown): boolean {
  if (value === null || typeof value !== 'object') return true;
  if (!Object.isFrozen(value)) return false;
  return Object.values(value).every(isDeepFrozen);
}

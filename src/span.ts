/**
 * A half-open range `[start, end)` of UTF-16 offsets into the query source.
 * Chevrotain reports inclusive end offsets; `syntax/to-ast.ts` is the only
 * place that converts them.
 */
export interface Span {
  readonly start: number;
  readonly end: number;
}

/** The span that covers both `a` and `b`. */
export function joinSpans(a: Span, b: Span): Span {
  return { start: Math.min(a.start, b.start), end: Math.max(a.end, b.end) };
}

/** An empty span at `offset`, for errors about something missing (end of input). */
export function pointSpan(offset: number): Span {
  return { start: offset, end: offset };
}

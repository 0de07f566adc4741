/** The AST without its spans, for comparing what a query means rather than where it was written. */
export function withoutSpans(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutSpans);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value)
        .filter(([key]) => key !== 'span')
        .map(([key, v]) => [key, withoutSpans(v)]),
    );
  }
  return value;
}

/** Collects every node's span, with the node's kind, for checking spans lie inside the source. */
export function allSpans(value: unknown, out: { kind: string; start: number; end: number }[] = []) {
  if (Array.isArray(value)) for (const v of value) allSpans(v, out);
  else if (value !== null && typeof value === 'object') {
    const node = value as { kind?: string; span?: { start: number; end: number } };
    if (node.span) out.push({ kind: String(node.kind), ...node.span });
    for (const [key, v] of Object.entries(value)) if (key !== 'span') allSpans(v, out);
  }
  return out;
}

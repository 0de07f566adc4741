/** Internal helpers of the compile stage: describing values in messages. */

/** A short description of a wrong value for a message: the value itself when it is small. */
export function describeValue(value: unknown): string {
  if (value === undefined) return 'undefined';
  if (Array.isArray(value)) return `a list (${abbreviate(safeJson(value))})`;
  switch (typeof value) {
    case 'string':
      return `the text ${abbreviate(JSON.stringify(value))}`;
    case 'number':
      return `the number ${String(value)}`;
    case 'boolean':
      return String(value);
    case 'object':
      return value === null ? 'null' : 'an object';
    default:
      return `a ${typeof value}`;
  }
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return '…';
  }
}

function abbreviate(text: string, max = 40): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

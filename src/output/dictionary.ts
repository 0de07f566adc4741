/** A data dictionary's notes (markdown) as a table cell shows them. */

/**
 * Notes as a table cell shows them: the first paragraph, markdown marks
 * dropped, white space folded, cut at 80 characters.
 * @example shortNotes('**PM10**, daily mean.\n\nMeasured at …') // → 'PM10, daily mean.'
 */
export function shortNotes(notes: string): string {
  const first = notes.trim().split(/\n\s*\n/)[0] ?? '';
  const plain = first.replace(/\[([^\]]*)\]\([^)]*\)/g, '$1').replace(/[*_`#>]+/g, '').replace(/\s+/g, ' ').trim();
  return plain.length > 80 ? `${plain.slice(0, 79)}…` : plain;
}


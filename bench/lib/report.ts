/** What each section hands back, and how it is printed and written into BENCHMARKS.md. */

export interface Table {
  readonly title: string;
  /** how many leading columns hold text (left-aligned); the rest are figures; default 1 */
  readonly textColumns?: number;
  readonly headers: readonly string[];
  readonly rows: readonly (readonly string[])[];
}

export interface Target {
  readonly section: string;
  readonly what: string;
  readonly goal: string;
  readonly measured: string;
  /** null when the figure could not be taken (the part under test is missing or failed) */
  readonly met: boolean | null;
}

export interface SectionResult {
  readonly id: string;
  readonly title: string;
  readonly tables: readonly Table[];
  readonly targets: readonly Target[];
  /** method and semantic notes, one paragraph each (markdown) */
  readonly notes: readonly string[];
  /** set when the section could not run at all */
  readonly error?: string;
}

function widths(table: Table): number[] {
  return table.headers.map((h, i) => Math.max(h.length, ...table.rows.map((r) => (r[i] ?? '').length)));
}

/** Inline code for text that may itself hold backticks (field names do). */
export function code(text: string): string {
  return text.includes('`') ? `\`\` ${text} \`\`` : `\`${text}\``;
}

/** Aligned plain text for the terminal. */
export function renderText(table: Table): string {
  const w = widths(table);
  const text = table.textColumns ?? 1;
  const line = (cells: readonly string[]) =>
    cells.map((c, i) => (i < text ? c.padEnd(w[i] ?? 0) : c.padStart(w[i] ?? 0))).join('  ');
  const out = [table.title, line(table.headers), w.map((n) => '─'.repeat(n)).join('  ')];
  for (const row of table.rows) out.push(line(row));
  return out.join('\n');
}

function escapeCell(text: string): string {
  return text.replace(/\|/g, '\\|');
}

/** A GitHub pipe table: text columns left-aligned, figures right-aligned. */
export function renderMarkdown(table: Table): string {
  const out = [`**${table.title}**`, ''];
  out.push(`| ${table.headers.map(escapeCell).join(' | ')} |`);
  const text = table.textColumns ?? 1;
  out.push(`|${table.headers.map((_, i) => (i < text ? ' --- ' : ' ---: ')).join('|')}|`);
  for (const row of table.rows) out.push(`| ${row.map(escapeCell).join(' | ')} |`);
  return out.join('\n');
}

export function metMark(met: boolean | null): string {
  return met === null ? 'reported' : met ? 'met' : 'MISSED';
}

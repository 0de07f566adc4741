/**
 * Records as aligned columns (psql style): a header, a rule, one line per
 * record. Widths and cut text come from `layout.ts`; each line is one
 * `<Text>` (see `paint.ts` for why).
 */
import { Box, Text } from 'ink';
import type { ReactElement } from 'react';
import { fit, truncate, type Cell, type Column } from '../layout.js';
import { paintFor } from '../paint.js';

export interface ResultTableProps {
  readonly columns: readonly Column[];
  readonly rows: readonly (readonly Cell[])[];
  readonly color: boolean;
}

export function ResultTable({ columns, rows, color }: ResultTableProps): ReactElement {
  const paint = paintFor(color);
  const gap = paint.dim(' │ ');
  const header = ' ' + columns.map((column) => paint.bold(fit(column.id, column.width, 'left'))).join(gap);
  const rule = paint.dim('─' + columns.map((column) => '─'.repeat(column.width)).join('─┼─'));
  const last = columns.length - 1;
  const line = (row: readonly Cell[]): string =>
    ' ' +
    columns
      .map((column, i) => {
        const cell = row[i] ?? { text: '', kind: 'text' };
        // No padding after the last value: trailing blanks inside an escape code would survive ink's trimming.
        const text = i === last && column.align === 'left' ? truncate(cell.text, column.width) : fit(cell.text, column.width, column.align);
        return cell.kind === 'null' ? paint.nullValue(text) : text;
      })
      .join(gap);
  return (
    <Box flexDirection="column">
      <Text>{header}</Text>
      <Text>{rule}</Text>
      {rows.map((row, r) => (
        <Text key={r}>{line(row)}</Text>
      ))}
    </Box>
  );
}

/**
 * Records as aligned columns (psql style): a header, a rule, one line per
 * record. Widths and cut text come from `layout.ts`; this only draws.
 */
import { Box, Text } from 'ink';
import { fit, type Cell, type Column } from '../layout.js';
import { Styled } from './Styled.js';

export interface ResultTableProps {
  readonly columns: readonly Column[];
  readonly rows: readonly (readonly Cell[])[];
  readonly color: boolean;
}

export function ResultTable({ columns, rows, color }: ResultTableProps) {
  const gap = (key: string) => (
    <Styled key={key} tone="dim" color={color}>
      {' │ '}
    </Styled>
  );
  return (
    <Box flexDirection="column">
      <Text>
        {' '}
        {columns.flatMap((column, i) => [
          ...(i > 0 ? [gap(`g${i}`)] : []),
          <Styled key={column.id} tone="bold" color={color}>
            {fit(column.id, column.width, 'left')}
          </Styled>,
        ])}
      </Text>
      <Styled tone="dim" color={color}>
        {'─' + columns.map((column) => '─'.repeat(column.width)).join('─┼─')}
      </Styled>
      {rows.map((row, r) => (
        <Text key={r}>
          {' '}
          {columns.flatMap((column, i) => {
            const cell = row[i] ?? { text: '', kind: 'text' };
            return [
              ...(i > 0 ? [gap(`g${i}`)] : []),
              <Styled key={column.id} tone={cell.kind === 'null' ? 'null' : 'plain'} color={color}>
                {fit(cell.text, column.width, column.align)}
              </Styled>,
            ];
          })}
        </Text>
      ))}
    </Box>
  );
}

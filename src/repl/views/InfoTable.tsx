/**
 * A small table of text for the REPL's own listings (`.fields`,
 * `.resources`, `.queries`, `.help`) with an optional note under it.
 */
import { Box } from 'ink';
import type { Cell, Layout } from '../layout.js';
import { ResultTable } from './ResultTable.js';
import { Styled } from './Styled.js';

export interface InfoTableProps {
  readonly layout: Extract<Layout, { kind: 'table' }>;
  readonly rows: readonly (readonly Cell[])[];
  readonly note: string;
  readonly color: boolean;
}

export function InfoTable({ layout, rows, note, color }: InfoTableProps) {
  return (
    <Box flexDirection="column">
      <ResultTable columns={layout.columns} rows={rows} color={color} />
      {note === '' ? null : (
        <Styled tone="dim" color={color}>
          {note}
        </Styled>
      )}
    </Box>
  );
}

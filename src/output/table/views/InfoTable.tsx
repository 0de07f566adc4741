/**
 * A small table of text for the REPL's own listings (`.fields`,
 * `.resources`, `.queries`) with an optional note under it.
 */
import { Box, Text } from 'ink';
import type { ReactElement } from 'react';
import type { Cell, Layout } from '../layout.js';
import { paintFor } from '../paint.js';
import { ResultTable } from './ResultTable.js';

export interface InfoTableProps {
  readonly layout: Extract<Layout, { kind: 'table' }>;
  readonly rows: readonly (readonly Cell[])[];
  readonly note: string;
  readonly color: boolean;
}

export function InfoTable({ layout, rows, note, color }: InfoTableProps): ReactElement {
  return (
    <Box flexDirection="column">
      <ResultTable columns={layout.columns} rows={rows} color={color} />
      {note === '' ? null : <Text>{paintFor(color).dim(note)}</Text>}
    </Box>
  );
}

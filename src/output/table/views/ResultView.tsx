/**
 * A whole result: the records as a table or, when too wide, one record at a
 * time; a line for rows left out by `maxRows`; and the footer.
 */
import { Box, Text } from 'ink';
import type { ReactElement } from 'react';
import type { Cell, Layout } from '../layout.js';
import type { FieldInfo } from '../../../datastore/types.js';
import { paintFor } from '../paint.js';
import { RecordList } from './RecordList.js';
import { ResultTable } from './ResultTable.js';

export interface ResultViewProps {
  readonly fields: readonly FieldInfo[];
  readonly rows: readonly (readonly Cell[])[];
  readonly layout: Layout;
  /** records returned but not drawn (over `maxRows`) */
  readonly hidden: number;
  readonly firstNumber: number;
  readonly footer: string;
  readonly color: boolean;
}

export function ResultView({ fields, rows, layout, hidden, firstNumber, footer, color }: ResultViewProps): ReactElement {
  const paint = paintFor(color);
  return (
    <Box flexDirection="column">
      {fields.length === 0 ? null : layout.kind === 'table' ? (
        <ResultTable columns={layout.columns} rows={rows} color={color} />
      ) : (
        <RecordList
          fields={fields}
          rows={rows}
          firstNumber={firstNumber}
          labelWidth={layout.labelWidth}
          valueWidth={layout.valueWidth}
          color={color}
        />
      )}
      {hidden > 0 ? <Text>{paint.dim(` … ${hidden} more ${hidden === 1 ? 'record' : 'records'} not shown`)}</Text> : null}
      <Text>{paint.dim(footer)}</Text>
    </Box>
  );
}

/**
 * One record at a time, a field per line (psql's expanded view): used when
 * the rows are too wide for the terminal even with every column cut.
 */
import { Box, Text } from 'ink';
import type { ReactElement } from 'react';
import { fit, truncate, type Cell } from '../layout.js';
import type { FieldInfo } from '../../../datastore/types.js';
import { paintFor } from '../paint.js';

export interface RecordListProps {
  readonly fields: readonly FieldInfo[];
  readonly rows: readonly (readonly Cell[])[];
  /** number of the first record shown, for the `─[ 3 ]─` headings */
  readonly firstNumber: number;
  readonly labelWidth: number;
  readonly valueWidth: number;
  readonly color: boolean;
}

export function RecordList({ fields, rows, firstNumber, labelWidth, valueWidth, color }: RecordListProps): ReactElement {
  const paint = paintFor(color);
  const ruleWidth = labelWidth + 3 + valueWidth;
  const gap = paint.dim(' │ ');
  return (
    <Box flexDirection="column">
      {rows.map((row, r) => {
        const heading = `─[ ${firstNumber + r} ]`;
        return (
          <Box key={r} flexDirection="column">
            <Text>{paint.dim(heading + '─'.repeat(Math.max(0, ruleWidth - heading.length)))}</Text>
            {fields.map((field, i) => {
              const cell = row[i] ?? { text: '', kind: 'text' };
              const value = truncate(cell.text, valueWidth);
              return (
                <Text key={field.id}>
                  {paint.bold(fit(field.id, labelWidth, 'left')) + gap + (cell.kind === 'null' ? paint.nullValue(value) : value)}
                </Text>
              );
            })}
          </Box>
        );
      })}
    </Box>
  );
}

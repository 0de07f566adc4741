/**
 * One record at a time, a field per line (psql's expanded view): used when
 * the rows are too wide for the terminal even with every column cut.
 */
import { Box, Text } from 'ink';
import { fit, truncate, type Cell } from '../layout.js';
import type { FieldInfo } from '../../datastore/types.js';
import { Styled } from './Styled.js';

export interface RecordListProps {
  readonly fields: readonly FieldInfo[];
  readonly rows: readonly (readonly Cell[])[];
  /** number of the first record shown, for the `─[ 3 ]─` headings */
  readonly firstNumber: number;
  readonly labelWidth: number;
  readonly valueWidth: number;
  readonly color: boolean;
}

export function RecordList({ fields, rows, firstNumber, labelWidth, valueWidth, color }: RecordListProps) {
  const ruleWidth = labelWidth + 3 + valueWidth;
  return (
    <Box flexDirection="column">
      {rows.map((row, r) => {
        const heading = `─[ ${firstNumber + r} ]`;
        return (
          <Box key={r} flexDirection="column">
            <Styled tone="dim" color={color}>
              {heading + '─'.repeat(Math.max(0, ruleWidth - heading.length))}
            </Styled>
            {fields.map((field, i) => {
              const cell = row[i] ?? { text: '', kind: 'text' };
              return (
                <Text key={field.id}>
                  <Styled tone="bold" color={color}>
                    {fit(field.id, labelWidth, 'left')}
                  </Styled>
                  <Styled tone="dim" color={color}>
                    {' │ '}
                  </Styled>
                  <Styled tone={cell.kind === 'null' ? 'null' : 'plain'} color={color}>
                    {truncate(cell.text, valueWidth)}
                  </Styled>
                </Text>
              );
            })}
          </Box>
        );
      })}
    </Box>
  );
}

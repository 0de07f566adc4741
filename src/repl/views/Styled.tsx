/**
 * A piece of text that is dimmed or bold only when colour is on, so plain
 * output (pipes, `NO_COLOR`) carries no escape codes at all.
 */
import { Text } from 'ink';

export type Tone = 'plain' | 'dim' | 'bold' | 'null';

export function Styled({ tone, color, children }: { tone: Tone; color: boolean; children: string }) {
  if (!color || tone === 'plain') return <Text>{children}</Text>;
  if (tone === 'bold') return <Text bold>{children}</Text>;
  if (tone === 'null') return <Text dimColor italic>{children}</Text>;
  return <Text dimColor>{children}</Text>;
}

/**
 * A count with its noun, singular for one: `1 row`, `2 rows`, `1,234 records`.
 * @example countText(1, 'row') // '1 row'
 * @example countText(20000, 'record') // '20,000 records'
 */
export function countText(count: number, noun: string, plural = `${noun}s`): string {
  return `${count.toLocaleString('en-US')} ${count === 1 ? noun : plural}`;
}

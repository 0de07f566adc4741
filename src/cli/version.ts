/** The package's version, read from its package.json (found from this file in `src/` and in `dist/`). */
import { readFileSync } from 'node:fs';

export function packageVersion(): string {
  try {
    const text = readFileSync(new URL('../../package.json', import.meta.url), 'utf8');
    return (JSON.parse(text) as { version?: string }).version ?? '0.0.0';
  } catch {
    return '0.0.0';
  }
}

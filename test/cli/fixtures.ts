/** Small data folders and config files in temp directories, made by each test file for itself. */
import { chmod, mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const coursesCsv = [
  'code,title,subject,stage,credits',
  'C1,Linear Algebra,math,active,5',
  'C2,=SUM(A1:A2),art,survey,-3',
  'C3,pipes | here,math,archived,2.5',
  'C4,-2+3,math,active,',
  'C5,@mention,history,survey,4',
].join('\n');

/** A temp folder with `data/courses.csv` and `data/numbers.json` (25 rows); returns the folder. */
export async function makeWorkspace(): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), 'ckql-cli-'));
  await mkdir(join(root, 'data'));
  await writeFile(join(root, 'data', 'courses.csv'), `${coursesCsv}\n`);
  const numbers = Array.from({ length: 25 }, (_, index) => ({ n: index + 1, even: index % 2 === 1 }));
  await writeFile(join(root, 'data', 'numbers.json'), JSON.stringify(numbers));
  return root;
}

export async function writeFileMode(path: string, text: string, mode = 0o600): Promise<string> {
  await writeFile(path, text, { mode });
  await chmod(path, mode);
  return path;
}

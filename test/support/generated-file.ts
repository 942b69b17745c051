/** Committed files printed from the code (schema.graphql, openapi.json): stale means the test fails. */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';

/**
 * Compares `file` with `printed`; with `${updateVar}=1` rewrites it instead. On a difference it
 * throws with the first differing line and how to regenerate the file.
 */
export function expectFileCurrent(file: string, printed: string, updateVar: string, howToRegenerate: string): void {
  if (process.env[updateVar] === '1') {
    writeFileSync(file, printed);
    return;
  }
  const current = existsSync(file) ? readFileSync(file, 'utf8') : '';
  if (current === printed) return;
  const a = current.split('\n');
  const b = printed.split('\n');
  let i = 0;
  while (i < Math.max(a.length, b.length) && a[i] === b[i]) i++;
  throw new Error(
    `${file} is out of date. Regenerate it with:\n  ${howToRegenerate}\nand commit the file.\n` +
      `First difference at line ${i + 1}:\n  file: ${a[i] ?? '<end of file>'}\n  code: ${b[i] ?? '<end>'}`,
  );
}

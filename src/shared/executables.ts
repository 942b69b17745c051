/** Where a program is, as a process spawned with `pathVar` as its PATH would find it. */
import { accessSync, constants as fsConstants, statSync } from 'node:fs';
import path from 'node:path';

/** The executable file `cmd` names (a path, or a name looked up on `pathVar`), or null. */
export function findExecutable(cmd: string, pathVar: string): string | null {
  const candidates = cmd.includes('/') ? [cmd] : pathVar.split(':').filter(Boolean).map((d) => path.join(d, cmd));
  return candidates.find(isExecutableFile) ?? null;
}

function isExecutableFile(file: string): boolean {
  try {
    accessSync(file, fsConstants.X_OK);
    return statSync(file).isFile();
  } catch {
    return false;
  }
}

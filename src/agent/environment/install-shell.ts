/**
 * The argv of an install script: its interpreter (the blueprint's `installShell`, an egg's entrypoint)
 * runs the script's text as is with `-c`. bash runs where the node lacks ash (Alpine's shell, which
 * egg scripts name but Debian nodes rarely have): ash scripts are POSIX shell, which bash runs too.
 * Without an interpreter of that family the script runs with /bin/sh, and the console says so.
 */
import type { InstallShell } from '../../shared/node-protocol';
import { findExecutable } from '../../shared/executables';

export interface InstallCommand {
  argv: string[];
  /** a line for the console when the script runs with another interpreter than it asks for */
  notice: string | null;
}

const PREFERENCE: Record<InstallShell, string[]> = { sh: ['/bin/sh'], bash: ['bash'], ash: ['ash', 'bash'] };

export function installCommand(script: string, shell: InstallShell | null | undefined, pathVar: string): InstallCommand {
  const wanted = shell ?? 'sh';
  const found = PREFERENCE[wanted].map((name) => findExecutable(name, pathVar)).find((p): p is string => p !== null);
  const interpreter = found ?? '/bin/sh';
  const notice = found ? null : `${wanted} is not installed on this node: the install script runs with /bin/sh and may fail; install ${wanted} on the node`;
  return { argv: [interpreter, '-c', script, 'install'], notice };
}

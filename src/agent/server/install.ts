import { createWriteStream, promises as fsp, type WriteStream } from 'node:fs';
import path from 'node:path';
import type { ExitInfo, ManagedProcess, OutputStream } from '../environment/process';

export interface InstallHooks {
  line(line: string, stream: OutputStream): void;
  /** a line of the panel's own about the install */
  notice(text: string): void;
  /** the script ended (called from the process's exit event, after the log is closed) */
  exit(info: ExitInfo): void;
}

/**
 * Opens `<installLogs>/<id>.log` (the directory 0700, the file 0600: a server must not read another's
 * log). Resolves once the file exists, so that a removal after it (a delete of the server) finds it.
 */
export async function openInstallLog(installLogs: string, serverId: string): Promise<WriteStream> {
  await fsp.mkdir(installLogs, { recursive: true, mode: 0o700 });
  await fsp.chmod(installLogs, 0o700);
  const file = await fsp.open(path.join(installLogs, `${serverId}.log`), 'w', 0o600);
  const log = createWriteStream('', { fd: file });
  log.on('error', () => {});
  return log;
}

export function removeInstallLog(installLogs: string, serverId: string): Promise<void> {
  return fsp.rm(path.join(installLogs, `${serverId}.log`), { force: true });
}

/**
 * One run of an install script: its output to the console and the install log, killed after
 * `timeoutMs`.
 */
export class InstallRun {
  private timer: NodeJS.Timeout | null;

  constructor(
    readonly proc: ManagedProcess,
    log: WriteStream,
    timeoutMs: number,
    hooks: InstallHooks,
  ) {
    proc.on('line', (l: string, s: OutputStream) => {
      log.write(l + '\n');
      hooks.line(l, s);
    });
    this.timer = setTimeout(() => {
      hooks.notice(`Install script did not finish within ${Math.round(timeoutMs / 1000)} s; killing it`);
      proc.kill();
    }, timeoutMs);
    proc.once('exit', (info: ExitInfo) => {
      if (this.timer) clearTimeout(this.timer);
      this.timer = null;
      log.end();
      hooks.exit(info);
    });
  }

  /** Kills the script; resolves once it is gone (5 s at most). */
  async kill(): Promise<void> {
    this.proc.kill();
    await Promise.race([this.proc.done, new Promise((r) => setTimeout(r, 5000).unref())]);
  }
}

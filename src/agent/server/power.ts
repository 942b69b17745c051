import { constants as osConstants } from 'node:os';
import type { ManagedProcess } from '../environment/process';

export type StopMethod = { kind: 'stdin'; line: string } | { kind: 'signal'; signal: NodeJS.Signals } | { kind: 'eof' };

/** `stop` of a blueprint: `SIGTERM`/`SIGINT`/…, `^C` (SIGINT), `^\` (SIGQUIT), `^D` (close stdin), else a stdin line. */
export function parseStop(stop: string | null | undefined): StopMethod {
  const s = (stop ?? '').trim();
  if (!s) return { kind: 'signal', signal: 'SIGTERM' };
  const caret: Record<string, StopMethod> = {
    '^C': { kind: 'signal', signal: 'SIGINT' },
    '^\\': { kind: 'signal', signal: 'SIGQUIT' },
    '^D': { kind: 'eof' },
    '^Z': { kind: 'signal', signal: 'SIGTSTP' },
  };
  if (caret[s.toUpperCase()]) return caret[s.toUpperCase()]!;
  const sig = s.toUpperCase();
  if (/^SIG[A-Z0-9]+$/.test(sig) && sig in osConstants.signals) return { kind: 'signal', signal: sig as NodeJS.Signals };
  return { kind: 'stdin', line: s };
}

/** Asks a process to stop the way its blueprint says (a stop line it cannot take falls back to SIGTERM). */
export function requestStop(proc: ManagedProcess, stop: string | null | undefined): void {
  const method = parseStop(stop);
  if (method.kind === 'stdin') {
    if (proc.write(method.line) !== 'ok') proc.signal('SIGTERM');
  } else if (method.kind === 'eof') proc.closeStdin();
  else proc.signal(method.signal);
}

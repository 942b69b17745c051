/**
 * What one SSH connection may hold at once, shared by its SFTP channels: open files and folders (each
 * holds a connection to the server's file worker, an upload also its temporary file) and the bytes of
 * writes that came ahead of their place (held in memory until the bytes before them come). Counted
 * when asked for, before any work, so requests sent at once cannot all pass.
 */
export class Allowance {
  private used = 0;

  constructor(readonly max: number) {}

  /** Takes `n` when they fit; false when they do not. */
  take(n = 1): boolean {
    if (this.used + n > this.max) return false;
    this.used += n;
    return true;
  }

  give(n = 1): void {
    this.used = Math.max(0, this.used - n);
  }
}

/** The limits of one connection. */
export interface ConnectionAllowances {
  handles: Allowance;
  aheadBytes: Allowance;
}

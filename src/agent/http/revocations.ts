/**
 * Console rights the panel took back: for a (server, user) pair, the time of the last change that
 * removed rights. Console sockets of that user to that server are closed when it is recorded, and a
 * token issued before it is refused (the panel mints a new one with the keys the user still holds).
 * An entry is kept as long as a token issued before it can live (the panel's tokens last at most
 * 10 minutes); it is kept in memory only, since an agent restart closes every socket anyway and
 * the panel is asked again at the next change.
 */
const KEEP_MS = 11 * 60_000;

export class Revocations {
  private readonly since = new Map<string, number>();

  record(serverId: string, userId: string, at = Date.now()): void {
    this.prune(at);
    this.since.set(`${serverId}\u0000${userId}`, at);
  }

  /** Whether a token for this pair issued at `issuedAtMs` predates a revocation. */
  revoked(serverId: string, userId: string, issuedAtMs: number): boolean {
    const at = this.since.get(`${serverId}\u0000${userId}`);
    return at !== undefined && issuedAtMs <= at;
  }

  private prune(now: number): void {
    for (const [k, at] of this.since) if (now - at > KEEP_MS) this.since.delete(k);
  }
}

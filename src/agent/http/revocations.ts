/**
 * Console rights the panel took back: for a (server, user) pair, or for a user on every server of the
 * node (an administrator deleted their account, set its password or took its administrator role), the
 * time of the last change that removed rights. Console sockets of that user to that server are closed when it is recorded, and a
 * token issued before it is refused (the panel mints a new one with the keys the user still holds).
 * An entry is kept as long as a token issued before it can live (the panel's tokens last at most
 * 10 minutes). They are kept in a file of the agent's too: a token issued before a revocation
 * outlives an agent restart, and must stay refused after it.
 */
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { childLogger } from '../../logger';

const KEEP_MS = 11 * 60_000;
/** The key part that stands for every server of the node (server ids are UUIDs). */
const EVERY_SERVER = '*';
const log = childLogger('agent');

export class Revocations {
  private readonly since = new Map<string, number>();

  /** `file`: where they are kept across restarts (none: in memory only). */
  constructor(private readonly file: string | null = null) {
    if (file) this.load(file);
  }

  /**
   * `serverId` null: the user's rights on every server of the node. Changes may reach the node out of
   * order (a demotion's after the deletion that followed it): the latest time stands.
   */
  record(serverId: string | null, userId: string, at = Date.now()): void {
    this.prune(at);
    const key = `${serverId ?? EVERY_SERVER}\u0000${userId}`;
    this.since.set(key, Math.max(at, this.since.get(key) ?? at));
    this.save();
  }

  /** Whether a token for this pair issued at `issuedAtMs` predates a revocation of the pair or of the user. */
  revoked(serverId: string, userId: string, issuedAtMs: number): boolean {
    return [serverId, EVERY_SERVER].some((srv) => {
      const at = this.since.get(`${srv}\u0000${userId}`);
      return at !== undefined && issuedAtMs <= at;
    });
  }

  private prune(now: number): void {
    for (const [k, at] of this.since) if (now - at > KEEP_MS) this.since.delete(k);
  }

  private load(file: string): void {
    let saved: unknown;
    try {
      saved = JSON.parse(readFileSync(file, 'utf8'));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') log.warn({ file, err: (err as Error).message }, 'the saved console revocations could not be read: tokens issued before them are accepted until they expire');
      return;
    }
    if (!saved || typeof saved !== 'object') return;
    for (const [k, at] of Object.entries(saved)) if (typeof at === 'number' && Number.isFinite(at)) this.since.set(k, at);
    this.prune(Date.now());
  }

  /** Written whole and renamed into place: a crash leaves the old list or the new one. */
  private save(): void {
    if (!this.file) return;
    try {
      writeFileSync(`${this.file}.tmp`, JSON.stringify(Object.fromEntries(this.since)), { mode: 0o600 });
      renameSync(`${this.file}.tmp`, this.file);
    } catch (err) {
      log.warn({ file: this.file, err: (err as Error).message }, 'the console revocations could not be saved: an agent restart would forget them');
    }
  }
}
